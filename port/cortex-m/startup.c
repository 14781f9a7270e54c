/* startup.c: vector table, reset and fault handlers for QEMU's MPS2/MPS3
 * Cortex-M boards. Compiled as C with arm-none-eabi-gcc (g++ would mangle
 * the libc hooks). Linker symbols come from sections.ld. */
#include <stdint.h>
#include <stdlib.h>

#include "port/port.h"

/* ---- linker-script symbols ---------------------------------------------- */
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_top[], __stack_limit[];

extern int main(void);
extern void __libc_init_array(void);
extern void initialise_monitor_handles(void);

/* -nostartfiles drops crti/crtbegin, which define these. */
void* __dso_handle = 0;
void _init(void) {}
void _fini(void) {}

/* ---- fault reporting ------------------------------------------------------ */
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t*)0xE000ED38u)

static void put_hex(const char* label, uint32_t v) {
  char buf[24];
  int n = 0;
  while (label[n] != 0 && n < 10) {
    buf[n] = label[n];
    ++n;
  }
  buf[n++] = '0';
  buf[n++] = 'x';
  for (int shift = 28; shift >= 0; shift -= 4) buf[n++] = "0123456789abcdef"[(v >> shift) & 0xFu];
  buf[n++] = ' ';
  buf[n] = 0;
  port_write0(buf);
}

/* Called from the naked handlers with the stacked exception frame
 * (r0 r1 r2 r3 r12 lr pc xpsr). Prints where and why, then ends the run. */
void port_fault_report(const uint32_t* frame, int code, const char* name) __attribute__((used, noreturn));
void port_fault_report(const uint32_t* frame, int code, const char* name) {
  port_write0("\n*** ");
  port_write0(port_board_name());
  port_write0(": ");
  port_write0(name);
  port_write0(": ");
  put_hex("pc=", frame[6]);
  put_hex("lr=", frame[5]);
  put_hex("cfsr=", SCB_CFSR);
  put_hex("hfsr=", SCB_HFSR);
  put_hex("mmfar=", SCB_MMFAR);
  put_hex("bfar=", SCB_BFAR);
  port_write0("\n");
  port_exit(code);
}

/* Pick the stack the fault frame went to (MSP or PSP, from EXC_RETURN bit 2)
 * and hand it to port_fault_report(code, name). */
#define PORT_FAULT_HANDLER(fn, code, name) \
  static const char fn##_name[] = name;    \
  void fn(void) __attribute__((naked));    \
  void fn(void) {                          \
    __asm volatile(                        \
        "tst lr, #4\n"                     \
        "ite eq\n"                         \
        "mrseq r0, msp\n"                  \
        "mrsne r0, psp\n"                  \
        "movs r1, %0\n"                    \
        "ldr r2, =%c1\n"                   \
        "b port_fault_report\n"            \
        ".ltorg\n" ::"i"(code),            \
        "i"(fn##_name));                   \
  }

PORT_FAULT_HANDLER(NMI_Handler, PORT_EXIT_NMI, "NMI")
PORT_FAULT_HANDLER(HardFault_Handler, PORT_EXIT_HARDFAULT, "HardFault")
PORT_FAULT_HANDLER(MemManage_Handler, PORT_EXIT_MEMMANAGE, "MemManage")
PORT_FAULT_HANDLER(BusFault_Handler, PORT_EXIT_BUSFAULT, "BusFault")
PORT_FAULT_HANDLER(UsageFault_Handler, PORT_EXIT_USAGEFAULT, "UsageFault")
PORT_FAULT_HANDLER(SecureFault_Handler, PORT_EXIT_SECUREFAULT, "SecureFault")
PORT_FAULT_HANDLER(Default_Handler, PORT_EXIT_UNEXPECTED_IRQ, "unexpected interrupt")

void SysTick_Handler(void); /* counter.c */

/* ---- reset ---------------------------------------------------------------- */
/* Everything after the FPU is on; kept out of line so that no FP or MVE
 * instruction the compiler might emit (vectorized copy loops) runs before
 * CPACR grants access. */
static void __attribute__((noinline, used, noreturn)) reset_continue(void) {
  /* Trap division by zero and unaligned multi-word accesses as UsageFaults
   * instead of silently continuing. */
  *(volatile uint32_t*)0xE000ED14u |= (1u << 4); /* CCR.DIV_0_TRP */
  /* Enable MemManage, BusFault, UsageFault (and SecureFault) as their own
   * exceptions so the report names them. */
  *(volatile uint32_t*)0xE000ED24u |= (0xFu << 16);

  uint32_t* src = __data_load;
  for (uint32_t* dst = __data_start; dst < __data_end;) *dst++ = *src++;
  for (uint32_t* dst = __bss_start; dst < __bss_end;) *dst++ = 0;

  initialise_monitor_handles(); /* semihosting stdin/stdout/stderr */
  port_counter_init();
  __libc_init_array();
  exit(main());
}

void Reset_Handler(void) __attribute__((naked, noreturn));
void Reset_Handler(void) {
  __asm volatile(
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      /* Armv8-M: a stack overflow faults instead of corrupting the heap. */
      "ldr r0, =__stack_limit\n"
      "msr msplim, r0\n"
#endif
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
      /* CPACR |= CP10, CP11 full access: required before any FP or MVE
       * instruction, integer MVE included. */
      "ldr r0, =0xE000ED88\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
#endif
      "b reset_continue\n"
      ".ltorg\n");
}

/* ---- vector table ----------------------------------------------------------
 * 16 system exceptions and 48 external interrupts (none enabled by attn; any
 * that fires lands in Default_Handler). 256-byte aligned for VTOR. */
typedef void (*port_vector)(void);

__attribute__((section(".vectors"), used, aligned(256))) const port_vector port_vector_table[64] = {
    (port_vector)(uintptr_t)__stack_top,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
    [16 ... 63] = Default_Handler,
};
