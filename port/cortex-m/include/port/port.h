/* port/port.h: what the Cortex-M port gives a firmware image running on one
 * of QEMU's MPS2/MPS3 boards: semihosting output and exit, and a
 * deterministic instruction counter. Nothing here allocates from the heap.
 *
 * The startup code (startup.c) enables the FPU/MVE where the core has one,
 * copies .data, zeroes .bss, runs static constructors and calls
 * exit(main()): main's return value becomes QEMU's exit status. A fault
 * exits QEMU with one of the PORT_EXIT_* codes below instead of hanging. */
#ifndef ATTN_PORT_PORT_H
#define ATTN_PORT_PORT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes a fault handler ends the run with (distinct from main's 0/1). */
enum {
  PORT_EXIT_UNEXPECTED_IRQ = 0xF1, /* an interrupt with no handler */
  PORT_EXIT_NMI = 0xF2,
  PORT_EXIT_HARDFAULT = 0xF3,
  PORT_EXIT_MEMMANAGE = 0xF4,
  PORT_EXIT_BUSFAULT = 0xF5,
  PORT_EXIT_USAGEFAULT = 0xF6,
  PORT_EXIT_SECUREFAULT = 0xF7
};

/* The QEMU board this image was linked for, e.g. "mps2-an386". */
const char* port_board_name(void);

/* Write a NUL-terminated string to the host's stderr (semihosting
 * SYS_WRITE0); usable from fault handlers, needs no libc. */
void port_write0(const char* s);

/* End the emulation now with `code` as QEMU's exit status (semihosting
 * SYS_EXIT_EXTENDED). Does not run atexit handlers or flush stdio. */
void port_exit(int code) __attribute__((noreturn));

/* ---- instruction counter ------------------------------------------------
 * Counts guest instructions between port_counter_start() and
 * port_counter_stop(), deterministically, when QEMU runs with
 * `-icount shift=10` (run-qemu.sh always passes it): virtual time then
 * advances 2^10 ns per instruction and SysTick, clocked from the CPU clock,
 * advances 1024 * f_cpu / 1e9 ticks per instruction. The 24-bit SysTick is
 * extended to 64 bits by its wrap interrupt (5-6 instructions per 2^24
 * ticks, i.e. per ~0.5-0.65M instructions, included in the counts). Both
 * ends of a region convert absolute ticks to absolute instructions, which is
 * exact (images/selftest.c checks a loop of known length to the
 * instruction); the cost of an empty start/stop region is measured once and
 * subtracted, so an empty region counts 0.
 * These are instruction counts, not cycles: QEMU has no timing model. */

/* Start SysTick and measure the empty-region cost. Called by the startup
 * code before main(); calling it again restarts the counter. */
void port_counter_init(void);
/* Instructions per SysTick tick are 1e9 / (1024 * f_cpu): f_cpu in Hz. */
uint32_t port_counter_cpu_hz(void);
/* Begin a region. Regions do not nest. */
void port_counter_start(void);
/* Instructions executed since port_counter_start(), empty-region cost
 * subtracted (never negative). */
uint64_t port_counter_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_PORT_PORT_H */
