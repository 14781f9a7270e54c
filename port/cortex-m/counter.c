/* counter.c: the deterministic instruction counter of port/port.h, built on
 * SysTick under QEMU's -icount shift=10 (see port.h for the method). */
#include <stdint.h>

#include "port/port.h"

#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE_CPU (1u << 2)
#define SYST_RELOAD 0x00FFFFFFu /* 24 bits: one wrap every 2^24 ticks */

static volatile uint32_t g_wraps; /* SysTick wraps since port_counter_init() */
static uint64_t g_start_insns;    /* instructions at port_counter_start() */
static uint64_t g_empty_insns;    /* cost of an empty start/stop region */

void SysTick_Handler(void) { g_wraps = g_wraps + 1u; }

uint32_t port_counter_cpu_hz(void) { return PORT_CPU_HZ; }

/* Ticks since init: wraps * 2^24 + ticks into the current period. Rereads if
 * the wrap interrupt ran in between. */
static uint64_t ticks_now(void) {
  uint32_t wraps;
  uint32_t cvr;
  do {
    wraps = g_wraps;
    cvr = SYST_CVR;
  } while (wraps != g_wraps);
  return ((uint64_t)wraps << 24) + (uint64_t)(SYST_RELOAD - cvr);
}

/* instructions = ticks * 1e9 / (1024 * f_cpu), rounded to nearest. The
 * fraction is reduced once in port_counter_init() (to 5/128 at 25 MHz,
 * 125/4096 at 32 MHz): ticks * 1e9 itself would overflow 64 bits after
 * about 7e8 instructions. */
static uint64_t g_num = 1;
static uint64_t g_den = 1;

static uint64_t ticks_to_insns(uint64_t ticks) { return (ticks * g_num + g_den / 2u) / g_den; }

static void reduce_ratio(void) {
  uint64_t a = 1000000000ull;
  uint64_t b = 1024ull * (uint64_t)PORT_CPU_HZ;
  while (b != 0u) { /* gcd */
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  g_num = 1000000000ull / a;
  g_den = 1024ull * (uint64_t)PORT_CPU_HZ / a;
}

void port_counter_init(void) {
  reduce_ratio();
  SYST_CSR = 0;
  g_wraps = 0;
  SYST_RVR = SYST_RELOAD;
  SYST_CVR = 0; /* any write clears the count */
  SYST_CSR = SYST_CSR_CLKSOURCE_CPU | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
  g_empty_insns = 0;
  port_counter_start();
  g_empty_insns = port_counter_stop();
}

/* Both ends convert absolute ticks to absolute instructions before taking
 * the difference: the count started on an instruction boundary, so each
 * conversion is exact, where a difference of ticks could be off by one
 * instruction depending on the phase (32.768 ticks per instruction on the
 * M55, 25.6 on the MPS2 boards). */
__attribute__((noinline)) void port_counter_start(void) { g_start_insns = ticks_to_insns(ticks_now()); }

__attribute__((noinline)) uint64_t port_counter_stop(void) {
  const uint64_t insns = ticks_to_insns(ticks_now()) - g_start_insns;
  return insns > g_empty_insns ? insns - g_empty_insns : 0;
}
