// cost_fixed.cpp: instructions per integer forward on this board, for the MCU
// shapes of the cost report (tools/mcu-cost), self-attention with bias, random int8
// weights and inputs, constants chosen so that every stage holds a realistic
// spread (projections ~ +-40 of 127, softmax exponents over a few octaves).
// Built twice: ATTN_COST_BITS=8 (attn_cost_s8, forward_s8) and 16
// (attn_cost_s16, forward_s16). Prints one line per shape for tools/mcu-cost:
//
//   measure board=mps2-an386 dtype=s8 L=64 S=64 E=64 H=4 D=64 insns=N arena=N opbyop=N kernels=dsp
//   compiler=...
//
// insns:  guest instructions of one forward call (port/port.h counter);
// arena:  plan.arena_bytes;
// opbyop: an op-by-op execution's peak: full Q [L, D], K and V [S, D] in the
//         dtype and the int8 (s8) / int16 (s16) probabilities of all heads
//         [H, L, S], the way a TFLM graph of the block holds them.
// Exits non-zero if a forward fails or its output is constant (saturated).
#include <cstdint>
#include <cstdio>

#include "attn/attention_fixed.h"
#include "internal/arch.h"
#include "internal/kernels_fixed.h"
#include "port/kernel_tag.h"
#include "port/port.h"

#ifndef ATTN_COST_BITS
#define ATTN_COST_BITS 8
#endif

namespace {

#if defined(__clang__)
constexpr const char* kCompiler = "clang-" __clang_version__;
#else
constexpr const char* kCompiler = "gcc-" __VERSION__;
#endif

#if ATTN_COST_BITS == 8
using Act = int8_t;    // activations
using Bias = int32_t;  // biases
using Weights = attn::WeightsS8;
using Io = attn::IoS8;
constexpr attn::DType kDType = attn::DType::kS8;
constexpr const char* kName = "s8";
constexpr int32_t kInputSpread = 40;  // |x| <= 40
constexpr int32_t kProjShift = -9;    // acc ~ sqrt(E) 40 * 64 -> ~ +-30
constexpr int32_t kScoreShift = 0;
constexpr uint32_t kExpMultiplier = 3150000000u;  // t = u * 47 / 2^16 per score step
constexpr int32_t kExpShift = 6;
constexpr int32_t kDiffLimit = 22000;  // t < 2^20
#else
using Act = int16_t;
using Bias = int64_t;
using Weights = attn::WeightsS16;
using Io = attn::IoS16;
constexpr attn::DType kDType = attn::DType::kS16;
constexpr const char* kName = "s16";
constexpr int32_t kInputSpread = 10000;
constexpr int32_t kProjShift = -9;
constexpr int32_t kScoreShift = 10;               // head_dim < 2^10
constexpr uint32_t kExpMultiplier = 3400000000u;  // t ~ 0.8 u
constexpr int32_t kExpShift = 0;
constexpr int32_t kDiffLimit = 1300000;  // t < 2^20
#endif

struct Shape {
  int32_t L, E, H, head_dim;  // S == L (self-attention)
};
constexpr Shape kShapes[] = {{64, 64, 4, 0}, {81, 32, 8, 4}, {128, 64, 4, 0}};

constexpr attn::AttentionConfig config_of(const Shape& s) {
  attn::AttentionConfig c;
  c.embed_dim = s.E;
  c.num_heads = s.H;
  c.head_dim = s.head_dim;
  return c;
}
constexpr size_t dim_of(const Shape& s) { return static_cast<size_t>(config_of(s).inner_dim()); }
constexpr size_t weights_of(const Shape& s) { return 4 * dim_of(s) * static_cast<size_t>(s.E); }
constexpr size_t channels_of(const Shape& s) { return 3 * dim_of(s) + static_cast<size_t>(s.E); }
constexpr size_t io_of(const Shape& s) { return static_cast<size_t>(s.L) * static_cast<size_t>(s.E); }
constexpr size_t arena_of(const Shape& s) {
  return attn::attention_arena_bytes(config_of(s), kDType, s.L, s.L);
}
constexpr size_t max_of(size_t (*f)(const Shape&)) {
  size_t m = 0;
  for (const Shape& s : kShapes) m = f(s) > m ? f(s) : m;
  return m;
}

int8_t g_weights[max_of(weights_of)];  // wq wk wv [D, E], wo [E, D]
Bias g_bias[max_of(channels_of)];      // bq bk bv [D], bo [E]
int32_t g_multiplier[max_of(channels_of)];
int32_t g_shift[max_of(channels_of)];
Act g_input[max_of(io_of)];   // [L, E]
Act g_output[max_of(io_of)];  // [L, E]
alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[max_of(arena_of)];

uint32_t g_rng = 12345u;
int32_t uniform(int32_t spread) {  // [-spread, spread]
  g_rng = g_rng * 1664525u + 1013904223u;
  return static_cast<int32_t>((g_rng >> 8) % static_cast<uint32_t>(2 * spread + 1)) - spread;
}

template <typename P>
P projection(size_t w0, size_t c0) {
  P p;
  p.weight = g_weights + w0;
  p.bias = g_bias + c0;
  p.multiplier = g_multiplier + c0;
  p.shift = g_shift + c0;
  return p;
}

const char* kernels() { return port_kernel_tag(kDType); }

bool measure(const Shape& s) {
  const attn::AttentionConfig cfg = config_of(s);
  attn::Plan plan;
  attn::Status st = attn::plan_attention(cfg, kDType, s.L, s.L, &plan);
  attn::Arena arena;
  if (st == attn::Status::kOk) st = arena.init(g_arena, sizeof g_arena);
  const size_t d = dim_of(s), e = static_cast<size_t>(s.E);
  for (size_t i = 0; i < weights_of(s); ++i) g_weights[i] = static_cast<int8_t>(uniform(127));
  for (size_t i = 0; i < channels_of(s); ++i) {
    g_bias[i] = uniform(2000);
    g_multiplier[i] = 0x40000000 + uniform(0x3FFFFFFF / 2) + 0x1FFFFFFF;
    g_shift[i] = kProjShift;
  }
  for (size_t i = 0; i < io_of(s); ++i) g_input[i] = static_cast<Act>(uniform(kInputSpread));

  Weights w;
  using Proj = decltype(w.q);
  w.q = projection<Proj>(0, 0);
  w.k = projection<Proj>(d * e, d);
  w.v = projection<Proj>(2 * d * e, 2 * d);
  w.o = projection<Proj>(3 * d * e, 3 * d);
#if ATTN_COST_BITS == 8
  w.q_zero_point = 3;
  w.k_zero_point = -2;
  w.v_zero_point = 1;
  w.context_zero_point = -1;
  w.output_zero_point = 2;
#endif
  w.softmax.exp_multiplier = kExpMultiplier;
  w.softmax.exp_shift = kExpShift;
  w.softmax.diff_limit = kDiffLimit;
  w.softmax.score_shift = kScoreShift;
  w.context_multiplier = 0x50000000;
  w.context_shift = ATTN_COST_BITS == 8 ? -14 : -15;
  Io io;
  io.query = g_input;
  io.key = g_input;
  io.value = g_input;
  io.output = g_output;

  uint64_t insns = 0;
  if (st == attn::Status::kOk) {
    port_counter_start();
#if ATTN_COST_BITS == 8
    st = attn::forward_s8(plan, w, attn::Mask{}, io, arena);
#else
    st = attn::forward_s16(plan, w, attn::Mask{}, io, arena);
#endif
    insns = port_counter_stop();
  }
  bool varied = false;
  for (size_t i = 1; i < io_of(s); ++i) varied = varied || g_output[i] != g_output[0];
  if (st != attn::Status::kOk || !varied) {
    std::printf("cost %s: L=%ld E=%ld H=%ld failed: %s%s\n", kName, static_cast<long>(s.L),
                static_cast<long>(s.E), static_cast<long>(s.H), attn::status_name(st),
                varied ? "" : " (constant output)");
    return false;
  }
  const size_t L = static_cast<size_t>(s.L), S = L, bytes = sizeof(Act);
  const size_t opbyop = (L * d + 2 * S * d) * bytes + static_cast<size_t>(s.H) * L * S * bytes;
  std::printf(
      "measure board=%s dtype=%s L=%ld S=%ld E=%ld H=%ld D=%ld insns=%lu arena=%lu opbyop=%lu kernels=%s "
      "compiler=%s\n",
      port_board_name(), kName, static_cast<long>(s.L), static_cast<long>(s.L), static_cast<long>(s.E),
      static_cast<long>(s.H), static_cast<long>(d), static_cast<unsigned long>(insns),
      static_cast<unsigned long>(plan.arena_bytes), static_cast<unsigned long>(opbyop), kernels(), kCompiler);
  return true;
}

}  // namespace

int main() {
  bool ok = true;
  for (const Shape& s : kShapes) ok = measure(s) && ok;
  return ok ? 0 : 1;
}
