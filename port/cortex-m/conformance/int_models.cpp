// int_models.cpp: whole integer models on the board. Each fixture of
// tests/data/int_models (embedded by embed-int-models.cmake) is loaded from
// its .attn bytes and run through tests/int_model_fixture.h's check(), the
// same code the host test runs: the forward must give every int32 output the
// host's ref build gave, a decoder's decode over its KV caches (prefill, then
// 1 and 2 tokens per call) the same rows, and its greedy generation the same
// tokens. Every call gets exactly its planned arena bytes; guard bytes after
// them must stay untouched.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "conformance.h"
#include "int_model_fixture.h"
#include "int_model_fixtures.h"
#include "port/port.h"

namespace {

constexpr size_t kMemBytes = 32 * 1024;
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;
constexpr size_t kOutWords = 2048;

alignas(ATTN_ARENA_ALIGN) uint8_t g_mem[kMemBytes + kGuard];
int32_t g_out[kOutWords];
int_fixture::Model g_model;

bool guards_intact(size_t used) {
  for (size_t i = used; i < used + kGuard; ++i) {
    if (g_mem[i] != kGuardByte) return false;
  }
  return true;
}

}  // namespace

int run_int_model_fixtures(int* fixtures, int* checks) {
  int failed = 0;
  *fixtures = 0;
  *checks = 0;
  for (int i = 0; i < kIntModelFixtureCount; ++i) {
    const IntModelFixture& f = kIntModelFixtures[i];
    ++*fixtures;
    int_fixture::Report r;
    int_fixture::Expect e;
    const attn::Status st = int_fixture::load(f.model, f.model_size, &g_model);
    if (st != attn::Status::kOk) {
      std::printf("FAIL int model %s: load: %s\n", f.name, attn::status_name(st));
      ++failed;
      continue;
    }
    if (!int_fixture::parse_expect(f.expect, f.expect_size, &e)) {
      std::printf("FAIL int model %s: bad expected file\n", f.name);
      ++failed;
      continue;
    }
    std::memset(g_mem, kGuardByte, sizeof g_mem);
    int_fixture::Memory mem;
    mem.data = g_mem;
    mem.size = kMemBytes;
    port_counter_start();
    int_fixture::check(g_model, e, g_out, kOutWords, mem, &r);
    const uint64_t insns = port_counter_stop();
    const bool guards = guards_intact(mem.used);
    *checks += r.checks;
    const bool ok = r.failures == 0 && guards && r.checks > 0;
    if (!ok) ++failed;
    std::printf(
        "%s int model %s: %s layers=%d vocab=%d tokens=%d generated=%d checks=%d arena %u B, %lu insns",
        ok ? "ok  " : "FAIL", f.name, g_model.dtype == attn::DType::kS8 ? "s8" : "s16",
        static_cast<int>(g_model.config.num_layers), static_cast<int>(g_model.config.vocab_size),
        static_cast<int>(e.n), static_cast<int>(e.steps), r.checks, static_cast<unsigned>(mem.used),
        static_cast<unsigned long>(insns));
    if (r.failures > 0) {
      std::printf(", %d failed, first: %s status %s", r.failures, r.what, attn::status_name(r.status));
      if (r.index >= 0) {
        std::printf(" element %ld: got %ld, want %ld", r.index, static_cast<long>(r.got),
                    static_cast<long>(r.want));
      }
    }
    std::printf("%s\n", guards ? "" : ", GUARD BYTES OVERWRITTEN");
  }
  return failed;
}
