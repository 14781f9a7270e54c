// Every kernel variant this build compiles (every row of every table in
// src/kernels/kernel_table.h) against its table's ref row, through the
// variant tester the board images share (tests/variant_tester.h).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "variant_tester.h"

namespace vt = attn::variant_tester;

namespace {
std::string g_failures;
}

TEST_CASE("every kernel variant matches its table's ref row", "[variants]") {
  static vt::Report report;
  report = vt::Report{};
  g_failures.clear();
  report.log = [](const char* line) {
    if (g_failures.size() < 20000) g_failures += std::string(line) + "\n";
  };
  vt::run_all(report);
  for (int i = 0; i < report.count; ++i) {
    const vt::Stat& s = report.stats[i];
    char line[160];
    const int n =
        std::snprintf(line, sizeof line, "%s/%s: checks=%d failed=%d", s.op, s.isa, s.checks, s.failed);
    if (std::string(s.op).find("f32") != std::string::npos && n > 0 && s.checks > 0)
      std::snprintf(line + n, sizeof line - size_t(n), ", error/bound %s %.3g",
                    std::string(s.isa) == "control" ? "min" : "max", s.worst);
    if (s.cpu_skipped > 0)  // x86-64: a row whose ISA this CPU lacks (CPUID) is not run
      std::printf("%s, SKIPPED %d cases: this CPU lacks %s\n", line, s.cpu_skipped, s.isa);
    else
      std::printf("%s\n", line);
  }
  std::printf("variants: checks=%d failed=%d skipped cases=%d, row runs skipped for the CPU=%d\n",
              report.checks, report.failed, report.skipped, report.cpu_skipped);
  INFO(g_failures);
  REQUIRE(report.failed == 0);
  REQUIRE(report.skipped == 0);  // the host's buffers take every case
  REQUIRE(report.checks > 0);
}
