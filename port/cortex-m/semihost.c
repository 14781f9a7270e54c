/* semihost.c: the two semihosting calls the port needs directly. printf and
 * friends go through newlib's rdimon, which uses the same mechanism. */
#include <stdint.h>

#include "port/port.h"

#define SYS_WRITE0 0x04u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static uint32_t semihost_call(uint32_t op, const void* arg) {
  register uint32_t r0 __asm("r0") = op;
  register const void* r1 __asm("r1") = arg;
  __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

const char* port_board_name(void) { return PORT_BOARD_NAME; }

void port_write0(const char* s) { (void)semihost_call(SYS_WRITE0, s); }

void port_exit(int code) {
  /* SYS_EXIT_EXTENDED takes {reason, subcode}; QEMU exits with subcode. */
  const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
  (void)semihost_call(SYS_EXIT_EXTENDED, block);
  for (;;) {
  }
}
