/* counter.h: an instruction counter for QEMU's Cortex-M boards that cannot
 * overflow: SysTick, clocked from the CPU, extended to 64 bits by its wrap
 * interrupt. Under `qemu-system-arm -icount shift=10` (the Makefile's `run`)
 * every instruction advances virtual time 1024 ns, so ticks convert to
 * instructions exactly; on real silicon the same code counts cycles
 * (counter_cycles). */
#ifndef C_LLM_COUNTER_H
#define C_LLM_COUNTER_H

#include <stdint.h>

/* Start SysTick from 0 (cpu_hz: the core clock, 25 MHz on mps2-an386, 32 MHz
 * on mps3-an547). */
void counter_init(uint32_t cpu_hz);
/* Ticks (CPU cycles) since counter_init: 64 bits, wraps never. */
uint64_t counter_cycles(void);
/* Instructions since counter_init under -icount shift=10. */
uint64_t counter_instructions(void);
/* The SysTick interrupt (the vector table's entry 15). */
void counter_systick_handler(void);

#endif
