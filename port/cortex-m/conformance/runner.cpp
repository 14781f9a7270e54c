// runner.cpp: the conformance runner image. Replays the golden vectors
// embedded by tools/fixtures/golden_to_c.py through the runtime compiled for this
// board, checks every output against the float64 PyTorch values, and exits
// non-zero on any mismatch. The fixed-point golden cases (fixed_cases.cpp,
// bit-exact against the host) and the dispatched-vs-ref kernel checks
// (kernel_equiv.cpp) run on every board, the M3 included, and so do the
// whole integer models of tests/data/int_models (int_models.cpp). No heap: every buffer is static and sized
// at compile time from the cases' shapes.
//
// Checks per case (the golden bound of tests/golden_test.cpp):
//   max|y - y_ref| <= 1e-5 * max|y_ref| + 1e-6, and the same for the
//   attention weights [H, L, S];
//   forward succeeds in an arena of exactly plan.arena_bytes, and the guard
//   bytes around the arena and the outputs stay untouched.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/attention.h"
#include "conformance.h"
#include "kernels/kernel_table.h"
#include "port/kernel_tag.h"
#include "port/port.h"

#if ATTN_GOLDEN_F32
#include "golden_f32_cases.h"
#endif

namespace {

constexpr int kExitSkip = 77;  // ctest SKIP_RETURN_CODE: nothing for this board

#if ATTN_GOLDEN_F32
constexpr size_t kGuard = 64;  // guard bytes on each side of every buffer
constexpr uint8_t kGuardByte = 0xA5;

constexpr size_t arena_of(const GoldenShape& s) {
  return attn::attention_arena_bytes(s.config(), attn::DType::kF32, s.L, s.S);
}
constexpr size_t output_of(const GoldenShape& s) {
  return static_cast<size_t>(s.L) * static_cast<size_t>(s.E);
}
constexpr size_t weights_of(const GoldenShape& s) {
  return static_cast<size_t>(s.H) * static_cast<size_t>(s.L) * static_cast<size_t>(s.S);
}
constexpr size_t max_over_cases(size_t (*f)(const GoldenShape&)) {
  size_t m = 0;
  for (const GoldenShape& s : kGoldenShapes) m = f(s) > m ? f(s) : m;
  return m;
}

constexpr size_t kMaxArena = max_over_cases(arena_of);
constexpr size_t kMaxOutput = max_over_cases(output_of);    // floats
constexpr size_t kMaxWeights = max_over_cases(weights_of);  // floats

alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[kGuard + kMaxArena + kGuard];
alignas(16) float g_output[kMaxOutput + 2 * kGuard / sizeof(float)];
alignas(16) float g_weights[kMaxWeights + 2 * kGuard / sizeof(float)];

void fill_guards(void* buf, size_t body_bytes) {
  auto* p = static_cast<uint8_t*>(buf);
  std::memset(p, kGuardByte, kGuard);
  std::memset(p + kGuard + body_bytes, kGuardByte, kGuard);
}
bool guards_intact(const void* buf, size_t body_bytes) {
  const auto* p = static_cast<const uint8_t*>(buf);
  for (size_t i = 0; i < kGuard; ++i) {
    if (p[i] != kGuardByte || p[kGuard + body_bytes + i] != kGuardByte) return false;
  }
  return true;
}

double absd(double x) { return x < 0 ? -x : x; }

// max|got - want| against the bound 1e-5 * max|want| + 1e-6.
bool within_bound(const float* got, const double* want, size_t n, double* err, double* bound) {
  double max_ref = 0;
  double max_err = 0;
  for (size_t i = 0; i < n; ++i) {
    max_ref = absd(want[i]) > max_ref ? absd(want[i]) : max_ref;
    const double e = absd(static_cast<double>(got[i]) - want[i]);
    max_err = e > max_err ? e : max_err;
  }
  *err = max_err;
  *bound = 1e-5 * max_ref + 1e-6;
  return max_err <= *bound;
}

bool run_case(const GoldenCaseF32& c) {
  const GoldenShape& s = c.shape;
  attn::Plan plan;
  attn::Status st = attn::plan_attention(s.config(), attn::DType::kF32, s.L, s.S, &plan);
  if (st != attn::Status::kOk) {
    std::printf("FAIL %s: plan_attention: %s\n", c.name, attn::status_name(st));
    return false;
  }
  if (plan.arena_bytes != arena_of(s)) {
    std::printf("FAIL %s: plan says %u arena bytes, attention_arena_bytes %u\n", c.name,
                static_cast<unsigned>(plan.arena_bytes), static_cast<unsigned>(arena_of(s)));
    return false;
  }

  // Exactly the planned bytes, guarded on both sides.
  fill_guards(g_arena, plan.arena_bytes);
  attn::Arena arena;
  st = arena.init(g_arena + kGuard, plan.arena_bytes);
  if (st != attn::Status::kOk) {
    std::printf("FAIL %s: arena.init: %s\n", c.name, attn::status_name(st));
    return false;
  }
  const size_t n_out = output_of(s);
  const size_t n_w = weights_of(s);
  float* out = g_output + kGuard / sizeof(float);
  float* weights = g_weights + kGuard / sizeof(float);
  fill_guards(g_output, n_out * sizeof(float));
  fill_guards(g_weights, n_w * sizeof(float));
  std::memset(out, 0xFF, n_out * sizeof(float));  // NaN: catches rows never written
  std::memset(weights, 0xFF, n_w * sizeof(float));

  attn::WeightsF32 w;
  w.wq = c.wq;
  w.wk = c.wk;
  w.wv = c.wv;
  w.wo = c.wo;
  w.bq = c.bq;
  w.bk = c.bk;
  w.bv = c.bv;
  w.bo = c.bo;
  attn::Mask mask;
  mask.causal = c.causal;
  mask.causal_offset = c.causal_offset;
  mask.key_length = c.key_length;
  mask.additive = c.additive;
  attn::IoF32 io;
  io.query = c.query;
  io.key = c.key;
  io.value = c.value;
  io.output = out;
  io.attn_weights = weights;

  port_counter_start();
  st = attn::forward_f32(plan, w, mask, io, arena);
  const uint64_t insns = port_counter_stop();
  if (st != attn::Status::kOk) {
    std::printf("FAIL %s: forward_f32: %s\n", c.name, attn::status_name(st));
    return false;
  }
  bool ok = true;
  double err_y = 0, bound_y = 0, err_p = 0, bound_p = 0;
  if (!within_bound(out, c.y, n_out, &err_y, &bound_y)) ok = false;
  if (!within_bound(weights, c.attn, n_w, &err_p, &bound_p)) ok = false;
  const bool guards = guards_intact(g_arena, plan.arena_bytes) &&
                      guards_intact(g_output, n_out * sizeof(float)) &&
                      guards_intact(g_weights, n_w * sizeof(float));
  if (!guards) ok = false;
  std::printf("%s %s: y err %.3e (bound %.3e), weights err %.3e (bound %.3e)%s, arena %u B, %lu insns\n",
              ok ? "ok  " : "FAIL", c.name, err_y, bound_y, err_p, bound_p,
              guards ? "" : ", GUARD BYTES OVERWRITTEN", static_cast<unsigned>(plan.arena_bytes),
              static_cast<unsigned long>(insns));
  return ok;
}
#endif

}  // namespace

const char* f32_kernels() { return port_kernel_tag(attn::DType::kF32); }
const char* s8_kernels() { return port_kernel_tag(attn::DType::kS8); }

int main() {
  std::printf("conformance runner: board=%s emulator=qemu-system-arm f32 kernels=%s s8 kernels=%s\n",
              port_board_name(), f32_kernels(), s8_kernels());
  int failed = 0;
  int total = 0;
#if ATTN_GOLDEN_F32
  int failed_f32 = 0;
  for (const GoldenCaseF32& c : kGoldenCases) failed_f32 += run_case(c) ? 0 : 1;
  std::printf("conformance board=%s dtype=f32 kernels=%s cases=%d failed=%d: %s\n", port_board_name(),
              f32_kernels(), static_cast<int>(kGoldenCaseCount), failed_f32, failed_f32 ? "FAIL" : "PASS");
  failed += failed_f32;
  total += kGoldenCaseCount;
#endif
  int fixed_cases = 0;
  const int failed_fixed = run_fixed_golden_cases(&fixed_cases);
  if (fixed_cases > 0) {
    std::printf("conformance board=%s dtype=s8+s16 kernels=%s cases=%d failed=%d (bit-exact vs host): %s\n",
                port_board_name(), s8_kernels(), fixed_cases, failed_fixed, failed_fixed ? "FAIL" : "PASS");
  }
  int decode_checks = 0;
  const int failed_decode = run_decode_equivalence(&decode_checks);
  if (decode_checks > 0) {
    std::printf(
        "decode board=%s dtype=s8+s16 kernels=%s checks=%d failed=%d (decode == causal forward): %s\n",
        port_board_name(), s8_kernels(), decode_checks, failed_decode, failed_decode ? "FAIL" : "PASS");
  }
  failed += failed_decode;
  total += decode_checks;
#if ATTN_INT_MODELS
  int int_fixtures = 0;
  int int_checks = 0;
  const int failed_int = run_int_model_fixtures(&int_fixtures, &int_checks);
  std::printf("int models board=%s kernels=%s fixtures=%d checks=%d failed=%d (bit-exact vs host ref): %s\n",
              port_board_name(), s8_kernels(), int_fixtures, int_checks, failed_int,
              failed_int ? "FAIL" : "PASS");
  failed += failed_int;
  total += int_fixtures;
#endif
  int checks = 0;
  const int failed_kernels = run_kernel_equivalence(&checks);
  if (checks > 0) {
    std::printf("kernels board=%s f32 kernels=%s s8 kernels=%s vs ref: checks=%d failed=%d: %s\n",
                port_board_name(), f32_kernels(), s8_kernels(), checks, failed_kernels,
                failed_kernels ? "FAIL" : "PASS");
  }
  failed += failed_fixed + failed_kernels;
  total += fixed_cases + checks;
  if (total == 0) {
    std::printf("conformance: no cases for %s: SKIP\n", port_board_name());
    return kExitSkip;
  }
  std::printf("conformance board=%s: %s\n", port_board_name(), failed ? "FAIL" : "PASS");
  return failed == 0 ? 0 : 1;
}
