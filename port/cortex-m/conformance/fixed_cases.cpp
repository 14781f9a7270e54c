// fixed_cases.cpp: replays the fixed-point golden cases (golden_fixed_case.h)
// through forward_s8 / forward_s16 as compiled for this board and requires
// the host's output byte for byte. Every buffer is static, sized at compile
// time from the cases' shapes; the arena is exactly the planned bytes, with
// guard bytes around it and the output.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/attention_fixed.h"
#include "conformance.h"
#include "port/port.h"

#if ATTN_GOLDEN_FIXED
#include "golden_fixed_cases.h"

namespace {

constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0x5A;

constexpr size_t arena_of(const FixedShape& s) {
  return attn::attention_arena_bytes(s.config(), s.dtype(), s.L, s.S);
}
constexpr size_t output_of(const FixedShape& s) {  // bytes
  return static_cast<size_t>(s.L) * static_cast<size_t>(s.E) * static_cast<size_t>(s.bits / 8);
}
constexpr size_t max_over_cases(size_t (*f)(const FixedShape&)) {
  size_t m = 0;
  for (const FixedShape& s : kFixedShapes) m = f(s) > m ? f(s) : m;
  return m;
}
constexpr size_t kMaxArena = max_over_cases(arena_of);
constexpr size_t kMaxOutput = max_over_cases(output_of);

alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[kGuard + kMaxArena + kGuard];
alignas(16) uint8_t g_output[kGuard + kMaxOutput + kGuard];

void fill_guards(uint8_t* p, size_t body) {
  std::memset(p, kGuardByte, kGuard);
  std::memset(p + kGuard + body, kGuardByte, kGuard);
}
bool guards_intact(const uint8_t* p, size_t body) {
  for (size_t i = 0; i < kGuard; ++i) {
    if (p[i] != kGuardByte || p[kGuard + body + i] != kGuardByte) return false;
  }
  return true;
}

template <typename Proj, typename Bias>
Proj projection(const FixedProjection& f) {
  Proj p;
  p.weight = f.weight;
  p.bias = static_cast<const Bias*>(f.bias);
  p.multiplier = f.multiplier;
  p.shift = f.shift;
  return p;
}

template <typename W>
void common_constants(const GoldenCaseFixed& c, W* w) {
  w->softmax.exp_multiplier = c.exp_multiplier;
  w->softmax.exp_shift = c.exp_shift;
  w->softmax.diff_limit = c.diff_limit;
  w->softmax.score_shift = c.score_shift;
  w->context_multiplier = c.context_multiplier;
  w->context_shift = c.context_shift;
  w->rope = attn::RopeTable{c.rope_cos, c.rope_sin, c.rope_positions};
}

attn::Status forward(const GoldenCaseFixed& c, const attn::Plan& plan, const attn::Mask& mask, uint8_t* out,
                     attn::Arena& arena) {
  if (c.shape.bits == 8) {
    attn::WeightsS8 w;
    w.q = projection<attn::ProjectionS8, int32_t>(c.q);
    w.k = projection<attn::ProjectionS8, int32_t>(c.k);
    w.v = projection<attn::ProjectionS8, int32_t>(c.v);
    w.o = projection<attn::ProjectionS8, int32_t>(c.o);
    w.q_zero_point = c.q_zero_point;
    w.k_zero_point = c.k_zero_point;
    w.v_zero_point = c.v_zero_point;
    w.context_zero_point = c.context_zero_point;
    w.output_zero_point = c.output_zero_point;
    common_constants(c, &w);
    attn::IoS8 io;
    io.query = static_cast<const int8_t*>(c.query);
    io.key = static_cast<const int8_t*>(c.key);
    io.value = static_cast<const int8_t*>(c.value);
    io.output = reinterpret_cast<int8_t*>(out);
    return attn::forward_s8(plan, w, mask, io, arena);
  }
  attn::WeightsS16 w;
  w.q = projection<attn::ProjectionS16, int64_t>(c.q);
  w.k = projection<attn::ProjectionS16, int64_t>(c.k);
  w.v = projection<attn::ProjectionS16, int64_t>(c.v);
  w.o = projection<attn::ProjectionS16, int64_t>(c.o);
  common_constants(c, &w);
  attn::IoS16 io;
  io.query = static_cast<const int16_t*>(c.query);
  io.key = static_cast<const int16_t*>(c.key);
  io.value = static_cast<const int16_t*>(c.value);
  io.output = reinterpret_cast<int16_t*>(out);
  return attn::forward_s16(plan, w, mask, io, arena);
}

bool run_case(const GoldenCaseFixed& c) {
  const FixedShape& s = c.shape;
  const char* dt = s.bits == 8 ? "s8 " : "s16";
  attn::Plan plan;
  attn::Status st = attn::plan_attention(s.config(), s.dtype(), s.L, s.S, &plan);
  if (st == attn::Status::kOk && plan.arena_bytes != arena_of(s)) st = attn::Status::kPlanMismatch;
  attn::Arena arena;
  if (st == attn::Status::kOk) st = arena.init(g_arena + kGuard, plan.arena_bytes);
  if (st != attn::Status::kOk) {
    std::printf("FAIL %s %s: plan/arena: %s\n", dt, c.name, attn::status_name(st));
    return false;
  }
  const size_t n_out = output_of(s);
  uint8_t* out = g_output + kGuard;
  fill_guards(g_arena, plan.arena_bytes);
  fill_guards(g_output, n_out);
  std::memset(out, 0xA7, n_out);  // a row never written shows up as a mismatch
  attn::Mask mask;
  mask.causal = c.causal;
  mask.causal_offset = c.causal_offset;
  mask.window = c.window;
  mask.key_length = c.key_length;

  port_counter_start();
  st = forward(c, plan, mask, out, arena);
  const uint64_t insns = port_counter_stop();
  if (st != attn::Status::kOk) {
    std::printf("FAIL %s %s: forward: %s\n", dt, c.name, attn::status_name(st));
    return false;
  }
  const auto* want = static_cast<const uint8_t*>(c.expected);
  size_t diff = 0;
  size_t first = n_out;
  for (size_t i = 0; i < n_out; ++i) {
    if (out[i] != want[i]) {
      first = diff == 0 ? i : first;
      ++diff;
    }
  }
  const bool guards = guards_intact(g_arena, plan.arena_bytes) && guards_intact(g_output, n_out);
  const bool ok = diff == 0 && guards;
  std::printf("%s %s %s: %lu of %lu bytes differ", ok ? "ok  " : "FAIL", dt, c.name,
              static_cast<unsigned long>(diff), static_cast<unsigned long>(n_out));
  if (diff) std::printf(" (first at byte %lu)", static_cast<unsigned long>(first));
  std::printf("%s, arena %u B, %lu insns\n", guards ? "" : ", GUARD BYTES OVERWRITTEN",
              static_cast<unsigned>(plan.arena_bytes), static_cast<unsigned long>(insns));
  return ok;
}

}  // namespace

int run_fixed_golden_cases(int* cases) {
  int failed = 0;
  for (const GoldenCaseFixed& c : kFixedCases) failed += run_case(c) ? 0 : 1;
  *cases = kFixedCaseCount;
  return failed;
}
#else
int run_fixed_golden_cases(int* cases) {
  *cases = 0;
  return 0;
}
#endif
