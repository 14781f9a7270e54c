/* fault.c: executes an undefined instruction. The port must report a
 * UsageFault (CFSR.UNDEFINSTR) and exit with PORT_EXIT_USAGEFAULT, not hang. */
#include <stdio.h>

int main(void) {
  printf("executing udf: expect a UsageFault report and exit code 0xF6\n");
  __asm volatile("udf #0");
  printf("still running after udf\n");
  return 0;
}
