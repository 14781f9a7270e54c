/* selftest.c: checks the port on this board: the instruction counter counts
 * a loop of known length exactly (which also checks the board's clock in
 * toolchain/<board>.cmake), across SysTick wraps, and runs repeat the same. */
#include <stdint.h>
#include <stdio.h>

#include "port/port.h"

/* Exactly 2 instructions per iteration (subs, bne), plus a fixed few. */
static __attribute__((noinline)) uint64_t count_loop(uint32_t n) {
  port_counter_start();
  __asm volatile(
      "1: subs %0, %0, #1\n"
      "   bne 1b\n"
      : "+r"(n)
      :
      : "cc");
  return port_counter_stop();
}

static int check(const char* what, uint64_t got, uint64_t want, uint64_t slack) {
  const uint64_t diff = got > want ? got - want : want - got;
  const int ok = diff <= slack;
  printf("%s: %s got %lu want %lu (+-%lu)\n", ok ? "ok" : "FAIL", what, (unsigned long)got,
         (unsigned long)want, (unsigned long)slack);
  return ok;
}

int main(void) {
  int ok = 1;
  printf("port selftest on %s, SysTick at %lu Hz\n", port_board_name(), (unsigned long)port_counter_cpu_hz());

  port_counter_start();
  ok &= check("empty region", port_counter_stop(), 0, 0);

  /* The fixed cost cancels in a difference: 2 instructions per iteration. */
  const uint64_t a = count_loop(1000);
  const uint64_t b = count_loop(3000);
  ok &= check("loop 3000 - loop 1000", b - a, 4000, 0);
  ok &= check("loop 1000 repeated", count_loop(1000), a, 0);

  /* 4M instructions: six SysTick wraps, each adding its interrupt (<= 20). */
  const uint64_t c = count_loop(2000000);
  ok &= check("loop 2000000 (across wraps)", c, 4000000 + (a - 2000), 6 * 20 + 1);

  printf("port selftest: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
