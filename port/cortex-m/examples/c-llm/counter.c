/* counter.c: see counter.h. */
#include "counter.h"

#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)
#define SYST_RELOAD 0x00FFFFFFu /* 24 bits: the interrupt counts each 2^24 ticks */

static volatile uint32_t g_wraps;
static uint64_t g_num = 1, g_den = 1; /* instructions per tick, reduced: no 64-bit overflow */

void counter_systick_handler(void) { g_wraps = g_wraps + 1u; }

void counter_init(uint32_t cpu_hz) {
  /* instructions = ticks * 1e9 / (1024 * cpu_hz): reduce the fraction once
   * (5/128 at 25 MHz), as ticks * 1e9 would pass 2^64 after ~7e8 instructions. */
  uint64_t a = 1000000000ull, b = 1024ull * cpu_hz;
  while (b != 0u) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  g_num = 1000000000ull / a;
  g_den = 1024ull * cpu_hz / a;
  SYST_CSR = 0;
  g_wraps = 0;
  SYST_RVR = SYST_RELOAD;
  SYST_CVR = 0;
  SYST_CSR = 7u; /* CPU clock, interrupt on wrap, enabled */
}

uint64_t counter_cycles(void) {
  uint32_t wraps, cvr;
  do { /* reread if the wrap interrupt ran in between */
    wraps = g_wraps;
    cvr = SYST_CVR;
  } while (wraps != g_wraps);
  return ((uint64_t)wraps << 24) + (uint64_t)(SYST_RELOAD - cvr);
}

uint64_t counter_instructions(void) { return (counter_cycles() * g_num + g_den / 2u) / g_den; }
