// fixed_cases.cpp: replays the fixed-point golden cases (golden_fixed_case.h)
// through forward_s8 / forward_s16 as compiled for this board and requires
// the host's output byte for byte. Every buffer is static, sized at compile
// time from the cases' shapes; the arena is exactly the planned bytes, with
// guard bytes around it and the output.
//
// Decode equivalence: every case of self-attention shape (kdim = vdim = E)
// also runs its L query rows through a KV cache (decode_s8 / decode_s16) in
// several splits -- one row per call, a prefill then two rows per call, and a
// windowed cache -- and requires exactly the bytes of one causal (windowed)
// forward over the same rows on this board.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "attn/attention_fixed.h"
#include "attn/decode.h"
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

template <typename Proj>
Proj projection(const FixedProjection& f) {
  using Bias =
      std::remove_const_t<std::remove_pointer_t<decltype(Proj::bias)>>;  // int32_t (s8), int64_t (s16)
  Proj p;
  p.weight = f.weight;
  p.bias = static_cast<const Bias*>(f.bias);
  p.multiplier = f.multiplier;
  p.shift = f.shift;
  return p;
}

// What a case's WeightsS8 and WeightsS16 share: the four projections, the
// softmax and context constants, the rope tables.
template <typename W>
W fixed_weights(const GoldenCaseFixed& c) {
  using Proj = decltype(W::q);
  W w;
  w.q = projection<Proj>(c.q);
  w.k = projection<Proj>(c.k);
  w.v = projection<Proj>(c.v);
  w.o = projection<Proj>(c.o);
  w.softmax.exp_multiplier = c.exp_multiplier;
  w.softmax.exp_shift = c.exp_shift;
  w.softmax.diff_limit = c.diff_limit;
  w.softmax.score_shift = c.score_shift;
  w.context_multiplier = c.context_multiplier;
  w.context_shift = c.context_shift;
  w.rope = attn::RopeTable{c.rope_cos, c.rope_sin, c.rope_positions};
  return w;
}

attn::WeightsS8 weights_s8(const GoldenCaseFixed& c) {
  attn::WeightsS8 w = fixed_weights<attn::WeightsS8>(c);
  w.q_zero_point = c.q_zero_point;
  w.k_zero_point = c.k_zero_point;
  w.v_zero_point = c.v_zero_point;
  w.context_zero_point = c.context_zero_point;
  w.output_zero_point = c.output_zero_point;
  return w;
}

attn::WeightsS16 weights_s16(const GoldenCaseFixed& c) { return fixed_weights<attn::WeightsS16>(c); }

attn::Status forward(const GoldenCaseFixed& c, const attn::Plan& plan, const attn::Mask& mask, uint8_t* out,
                     attn::Arena& arena) {
  if (c.shape.bits == 8) {
    attn::IoS8 io;
    io.query = static_cast<const int8_t*>(c.query);
    io.key = static_cast<const int8_t*>(c.key);
    io.value = static_cast<const int8_t*>(c.value);
    io.output = reinterpret_cast<int8_t*>(out);
    return attn::forward_s8(plan, weights_s8(c), mask, io, arena);
  }
  attn::IoS16 io;
  io.query = static_cast<const int16_t*>(c.query);
  io.key = static_cast<const int16_t*>(c.key);
  io.value = static_cast<const int16_t*>(c.value);
  io.output = reinterpret_cast<int16_t*>(out);
  return attn::forward_s16(plan, weights_s16(c), mask, io, arena);
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

// ---- decode equivalence --------------------------------------------------

constexpr bool self_shape(const FixedShape& s) { return s.kdim == s.E && s.vdim == s.E; }
// Self-attention over the case's L query rows: forward [L, L] and a cache of L positions.
constexpr size_t self_arena_of(const FixedShape& s) {
  return self_shape(s) ? attn::attention_arena_bytes(s.config(), s.dtype(), s.L, s.L) : 0;
}
constexpr size_t decode_bytes_of(const FixedShape& s) {
  return self_shape(s) ? attn::kv_cache_arena_bytes(s.config(), s.dtype(), s.L) +
                             attn::decode_arena_bytes(s.config(), s.dtype(), s.L, s.L)
                       : 0;
}
constexpr size_t kMaxSelfArena = max_over_cases(self_arena_of);
constexpr size_t kMaxDecode = max_over_cases(decode_bytes_of);

alignas(ATTN_ARENA_ALIGN) uint8_t g_self_arena[kMaxSelfArena > 0 ? kMaxSelfArena : 1];
alignas(ATTN_ARENA_ALIGN) uint8_t g_decode_arena[kGuard + (kMaxDecode > 0 ? kMaxDecode : 1) + kGuard];
alignas(16) uint8_t g_decoded[kGuard + kMaxOutput + kGuard];

// The case's query rows as query, key and value of one causal forward (with `window`).
attn::Status causal_forward(const GoldenCaseFixed& c, int32_t window, uint8_t* out) {
  const FixedShape& s = c.shape;
  attn::Plan plan;
  ATTN_TRY(attn::plan_attention(s.config(), s.dtype(), s.L, s.L, &plan));
  attn::Arena arena;
  ATTN_TRY(arena.init(g_self_arena, plan.arena_bytes));
  attn::Mask mask;
  mask.causal = true;
  mask.window = window;
  if (s.bits == 8) {
    const auto* x = static_cast<const int8_t*>(c.query);
    return attn::forward_s8(plan, weights_s8(c), mask, attn::IoS8{x, x, x, reinterpret_cast<int8_t*>(out)},
                            arena);
  }
  const auto* x = static_cast<const int16_t*>(c.query);
  return attn::forward_s16(plan, weights_s16(c), mask, attn::IoS16{x, x, x, reinterpret_cast<int16_t*>(out)},
                           arena);
}

// The rows through a cache of `capacity` positions: `prefill` rows in one
// call (0: none), then `step` rows per call. The arena is exactly the cache
// plus the planned step bytes, guarded.
template <class T, class Cache, class W, class Init, class Decode>
attn::Status decode_rows(const GoldenCaseFixed& c, const W& w, int32_t capacity, int32_t window,
                         int32_t prefill, int32_t step, Init init, Decode decode, T* out,
                         uint64_t* insns_per_row) {
  const FixedShape& s = c.shape;
  const int32_t L = s.L;
  const int32_t max_rows = prefill > step ? prefill : step;
  attn::Plan plan;
  ATTN_TRY(attn::plan_decode(s.config(), s.dtype(), max_rows, capacity, &plan));
  const size_t cache_bytes = attn::kv_cache_arena_bytes(s.config(), s.dtype(), capacity);
  const size_t bytes = cache_bytes + plan.arena_bytes;
  fill_guards(g_decode_arena, bytes);
  attn::Arena arena;
  ATTN_TRY(arena.init(g_decode_arena + kGuard, bytes));
  Cache cache;
  ATTN_TRY(init(plan, window, arena, &cache));
  const auto* x = static_cast<const T*>(c.query);
  uint64_t insns = 0;
  for (int32_t r = 0; r < L;) {
    int32_t n = r == 0 && prefill > 0 ? prefill : step;
    n = n < L - r ? n : L - r;
    port_counter_start();
    const attn::Status st = decode(plan, w, &cache, x + static_cast<ptrdiff_t>(r) * s.E, n,
                                   out + static_cast<ptrdiff_t>(r) * s.E, arena);
    insns += port_counter_stop();
    ATTN_TRY(st);
    r += n;
    if (cache.next_position() != r) return attn::Status::kPlanMismatch;
  }
  *insns_per_row = insns / static_cast<uint64_t>(L);
  if (!guards_intact(g_decode_arena, bytes)) return attn::Status::kArenaTooSmall;
  return attn::Status::kOk;
}

struct Split {
  const char* name;
  int32_t window;   // 0: none
  int32_t prefill;  // rows of the first call, 0: none
  int32_t step;     // rows per later call
};

bool run_decode_case(const GoldenCaseFixed& c, const Split& sp) {
  const FixedShape& s = c.shape;
  const char* dt = s.bits == 8 ? "s8 " : "s16";
  const size_t n_out = output_of(s);
  uint8_t* want = g_output + kGuard;
  uint8_t* got = g_decoded + kGuard;
  std::memset(want, 0xA7, n_out);
  std::memset(got, 0x3C, n_out);  // differs from the forward's fill: a row never written shows
  fill_guards(g_decoded, n_out);
  const int32_t window = sp.window < s.L ? sp.window : 0;
  const int32_t capacity = window > 0 ? window + 1 : s.L;
  const int32_t prefill = sp.prefill < s.L ? sp.prefill : s.L;
  uint64_t insns = 0;
  attn::Status st = causal_forward(c, window, want);
  if (st == attn::Status::kOk && s.bits == 8) {
    st = decode_rows<int8_t, attn::KvCacheS8>(c, weights_s8(c), capacity, window, prefill, sp.step,
                                              attn::kv_cache_init_s8, attn::decode_s8,
                                              reinterpret_cast<int8_t*>(got), &insns);
  } else if (st == attn::Status::kOk) {
    st = decode_rows<int16_t, attn::KvCacheS16>(c, weights_s16(c), capacity, window, prefill, sp.step,
                                                attn::kv_cache_init_s16, attn::decode_s16,
                                                reinterpret_cast<int16_t*>(got), &insns);
  }
  if (st != attn::Status::kOk) {
    std::printf("FAIL decode %s %s %s: %s\n", dt, c.name, sp.name, attn::status_name(st));
    return false;
  }
  size_t diff = 0;
  for (size_t i = 0; i < n_out; ++i) diff += got[i] != want[i] ? 1 : 0;
  const bool guards = guards_intact(g_decoded, n_out);
  const bool ok = diff == 0 && guards;
  std::printf("%s decode %s %s %s: %lu of %lu bytes differ from the causal forward%s, %lu insns/row\n",
              ok ? "ok  " : "FAIL", dt, c.name, sp.name, static_cast<unsigned long>(diff),
              static_cast<unsigned long>(n_out), guards ? "" : ", GUARD BYTES OVERWRITTEN",
              static_cast<unsigned long>(insns));
  return ok;
}

}  // namespace

int run_fixed_golden_cases(int* cases) {
  int failed = 0;
  for (const GoldenCaseFixed& c : kFixedCases) failed += run_case(c) ? 0 : 1;
  *cases = kFixedCaseCount;
  return failed;
}

int run_decode_equivalence(int* checks) {
  const Split splits[] = {
      {"one-by-one", 0, 0, 1},
      {"prefill3+2", 0, 3, 2},
      {"window3", 3, 0, 1},
      {"window3-prefill4", 3, 4, 1},
  };
  int failed = 0;
  int n = 0;
  for (const GoldenCaseFixed& c : kFixedCases) {
    if (!self_shape(c.shape)) continue;
    for (const Split& sp : splits) {
      failed += run_decode_case(c, sp) ? 0 : 1;
      ++n;
    }
  }
  *checks = n;
  return failed;
}
#else
int run_fixed_golden_cases(int* cases) {
  *cases = 0;
  return 0;
}
int run_decode_equivalence(int* checks) {
  *checks = 0;
  return 0;
}
#endif
