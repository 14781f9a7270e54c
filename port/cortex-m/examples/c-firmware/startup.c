/* startup.c: the least a bare-metal Cortex-M image needs to run main() on QEMU's
 * mps2-an386 (Cortex-M4F) and mps3-an547 (Cortex-M55): a vector table, a
 * Reset_Handler, and semihosting output (to the host's stdout) and exit. On a real board replace
 * board_write() with your UART and board_exit() with a reset or a halt.
 * Linker symbols come from link.ld. */
#include <stdint.h>

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_limit[], __stack_top[];

int main(void);
void board_write(const char* s);
void board_exit(int code) __attribute__((noreturn));

/* ---- semihosting: the debugger (here QEMU) does the I/O ---------------- */
static uint32_t semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm("r0") = op;
  register const void* r1 __asm("r1") = arg;
  __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* SYS_WRITE to the handle SYS_OPEN gives ":tt" opened for writing ("w",
 * mode 4): the host's stdout (SYS_WRITE0 would go to its stderr). */
void board_write(const char* s) {
  static uint32_t handle = 0xFFFFFFFFu;
  uint32_t len = 0;
  while (s[len] != '\0') ++len;
  if (handle == 0xFFFFFFFFu) {
    const uint32_t open_args[3] = {(uint32_t)(uintptr_t) ":tt", 4u, 3u};
    handle = semihost(0x01u, open_args); /* SYS_OPEN */
  }
  {
    const uint32_t write_args[3] = {handle, (uint32_t)(uintptr_t)s, len};
    (void)semihost(0x05u, write_args); /* SYS_WRITE */
  }
}

void board_exit(int code) {
  /* SYS_EXIT_EXTENDED {ADP_Stopped_ApplicationExit, code}: QEMU exits with code. */
  const uint32_t block[2] = {0x20026u, (uint32_t)code};
  (void)semihost(0x20u, block);
  for (;;) {
  }
}

/* ---- reset ------------------------------------------------------------- */
/* Runs after CP10/CP11 are on: the compiler may use FP or MVE registers here
 * (a vectorized copy loop). */
static void __attribute__((noinline, used, noreturn)) reset_continue(void) {
  uint32_t* src = __data_load;
  for (uint32_t* dst = __data_start; dst < __data_end;) *dst++ = *src++;
  for (uint32_t* dst = __bss_start; dst < __bss_end;) *dst++ = 0;
  board_exit(main());
}

void Reset_Handler(void) __attribute__((naked, noreturn));
void Reset_Handler(void) {
  __asm volatile(
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      /* Armv8-M: a stack overflow faults instead of overwriting .bss. */
      "ldr r0, =__stack_limit\n"
      "msr msplim, r0\n"
#endif
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
      /* CPACR |= CP10, CP11 full access, before any FP or MVE instruction
       * (integer MVE too). */
      "ldr r0, =0xE000ED88\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #0xF00000\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
#endif
      /* Paint the whole stack with 0xC0DEC0DE, in registers (nothing is on
       * it yet): main.c's stack_used() finds the deepest word that changed. */
      "ldr r0, =__stack_limit\n"
      "ldr r1, =__stack_top\n"
      "ldr r2, =0xC0DEC0DE\n"
      "1: str r2, [r0], #4\n"
      "cmp r0, r1\n"
      "blo 1b\n"
      "b reset_continue\n"
      ".ltorg\n");
}

/* ---- vector table -------------------------------------------------------- */
/* Any fault or interrupt stops the run with exit code 3. */
static void fault(void) {
  board_write("fault\n");
  board_exit(3);
}

typedef void (*vector)(void);
__attribute__((section(".vectors"), used)) const vector vector_table[16] = {
    (vector)(uintptr_t)__stack_top, /* initial SP */
    Reset_Handler,
    fault, /* NMI */
    fault, /* HardFault */
    fault, /* MemManage */
    fault, /* BusFault */
    fault, /* UsageFault */
    fault, /* SecureFault (Armv8-M) */
    0,
    0,
    0,
    fault, /* SVCall */
    fault, /* DebugMonitor */
    0,
    fault, /* PendSV */
    fault, /* SysTick */
};
