// cost_fixed.cpp: instructions per integer forward on this board, for the MCU
// shapes of the cost report (tools/bench/mcu-cost), self-attention with bias, random int8
// weights and inputs, constants chosen so that every stage holds a realistic
// spread (projections ~ +-40 of 127, softmax exponents over a few octaves).
// Built twice: ATTN_COST_BITS=8 (attn_cost_s8, forward_s8) and 16
// (attn_cost_s16, forward_s16). Prints one line per shape for tools/bench/mcu-cost:
//
//   measure board=mps2-an386 dtype=s8 L=64 S=64 E=64 H=4 D=64 insns=N arena=N opbyop=N kernels=dsp
//   compiler=...
//
// insns:  guest instructions of one forward call (port/port.h counter);
// arena:  plan.arena_bytes;
// opbyop: an op-by-op execution's peak: full Q [L, D], K and V [S, D] in the
//         dtype and the int8 (s8) / int16 (s16) probabilities of all heads
//         [H, L, S], the way a TFLM graph of the block holds them.
// Then, in a second pass, one line per shape with the forward's whole-call
// stack peak (stack painting, cost_common.h):
//
//   measure-stack board=mps2-an386 dtype=s8 L=64 S=64 E=64 H=4 stack=N
//
// Exits non-zero if a forward fails or its output is constant (saturated).
#include <cstdint>
#include <cstdio>

#include "attn/attention_fixed.h"
#include "cost_common.h"
#include "kernels/arch.h"
#include "kernels/kernels_fixed.h"
#include "port/fixed_dtype.h"
#include "port/kernel_tag.h"
#include "port/port.h"
#include "port/self_io.h"

#ifndef ATTN_COST_BITS
#define ATTN_COST_BITS 8
#endif

namespace {

using cost::config_of;
using cost::dim_of;
using cost::io_of;
using cost::max_of;
using cost::Shape;

using DT = FixedDType<ATTN_COST_BITS>;

#if ATTN_COST_BITS == 8
constexpr int32_t kInputSpread = 40;  // |x| <= 40
constexpr int32_t kProjShift = -9;    // acc ~ sqrt(E) 40 * 64 -> ~ +-30
constexpr int32_t kScoreShift = 0;
constexpr uint32_t kExpMultiplier = 3150000000u;  // t = u * 47 / 2^16 per score step
constexpr int32_t kExpShift = 6;
constexpr int32_t kDiffLimit = 22000;  // t < 2^20
#else
constexpr int32_t kInputSpread = 10000;
constexpr int32_t kProjShift = -9;
constexpr int32_t kScoreShift = 10;               // head_dim < 2^10
constexpr uint32_t kExpMultiplier = 3400000000u;  // t ~ 0.8 u
constexpr int32_t kExpShift = 0;
constexpr int32_t kDiffLimit = 1300000;  // t < 2^20
#endif

constexpr size_t weights_of(const Shape& s) { return 4 * dim_of(s) * static_cast<size_t>(s.E); }
constexpr size_t channels_of(const Shape& s) { return 3 * dim_of(s) + static_cast<size_t>(s.E); }
constexpr size_t arena_of(const Shape& s) {
  return attn::attention_arena_bytes(config_of(s), DT::kDType, s.L, s.L);
}

// wq wk wv [D, E], wo [E, D]; channels bq bk bv [D], bo [E].
cost::Projections<DT::Bias, max_of(weights_of), max_of(channels_of)> g_proj;
DT::Act g_input[max_of(io_of)];   // [L, E]
DT::Act g_output[max_of(io_of)];  // [L, E]
alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[max_of(arena_of)];

cost::Rng g_rng{12345u};

// kStackPass false: count the forward's instructions; true: its stack peak.
template <bool kStackPass>
bool measure(const Shape& s) {
  const attn::AttentionConfig cfg = config_of(s);
  attn::Plan plan;
  attn::Status st = attn::plan_attention(cfg, DT::kDType, s.L, s.L, &plan);
  attn::Arena arena;
  if (st == attn::Status::kOk) st = arena.init(g_arena, sizeof g_arena);
  const size_t d = dim_of(s), e = static_cast<size_t>(s.E);
  g_proj.fill(g_rng, weights_of(s), channels_of(s), kProjShift);
  for (size_t i = 0; i < io_of(s); ++i) g_input[i] = static_cast<DT::Act>(g_rng.uniform(kInputSpread));

  DT::Weights w;
  using Proj = decltype(w.q);
  w.q = g_proj.at<Proj>(0, 0);
  w.k = g_proj.at<Proj>(d * e, d);
  w.v = g_proj.at<Proj>(2 * d * e, 2 * d);
  w.o = g_proj.at<Proj>(3 * d * e, 3 * d);
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
  const DT::Io io = port_self_io<DT::Io>(g_input, g_output);

  uint64_t insns = 0;
  size_t stack = 0;
  if (st == attn::Status::kOk && kStackPass) {
    stack = cost::stack_peak([&] { return DT::kForward(plan, w, attn::Mask{}, io, arena); }, &st);
  } else if (st == attn::Status::kOk) {
    port_counter_start();
    st = DT::kForward(plan, w, attn::Mask{}, io, arena);
    insns = port_counter_stop();
  }
  bool varied = false;
  for (size_t i = 1; i < io_of(s); ++i) varied = varied || g_output[i] != g_output[0];
  if (st != attn::Status::kOk || !varied) {
    std::printf("cost %s: L=%ld E=%ld H=%ld failed: %s%s\n", DT::kName, static_cast<long>(s.L),
                static_cast<long>(s.E), static_cast<long>(s.H), attn::status_name(st),
                varied ? "" : " (constant output)");
    return false;
  }
  if (kStackPass) {
    cost::print_stack(DT::kName, s, stack);
    return true;
  }
  const size_t L = static_cast<size_t>(s.L), S = L, bytes = sizeof(DT::Act);
  const size_t opbyop = (L * d + 2 * S * d) * bytes + static_cast<size_t>(s.H) * L * S * bytes;
  cost::print_measure(DT::kDType, DT::kName, s, d, insns, plan.arena_bytes, opbyop);
  return true;
}

#if ATTN_COST_SWEEP
// The data a probe runs on. kRandom is the cost report's (random inputs and
// weights); the others keep its weights and change the inputs, and
// kSaturate also the requantization constants (see fill_data).
enum class Data { kRandom, kZeros, kMax, kAlternating, kOneHot, kSaturate };
constexpr Data kSweep[] = {Data::kRandom,      Data::kZeros,  Data::kMax,
                           Data::kAlternating, Data::kOneHot, Data::kSaturate};
constexpr const char* data_name(Data k) {
  return k == Data::kRandom        ? "random"
         : k == Data::kZeros       ? "zeros"
         : k == Data::kMax         ? "max"
         : k == Data::kAlternating ? "alternating"
         : k == Data::kOneHot      ? "onehot"
                                   : "saturate";
}

// The weights, constants and inputs of shape s for data `kind` into g_proj,
// g_input and *w (the random numbers drawn from g_rng).
void fill_data(const Shape& s, Data kind, DT::Weights* w) {
  const size_t d = dim_of(s), e = static_cast<size_t>(s.E);
  g_proj.fill(g_rng, weights_of(s), channels_of(s), kProjShift);
  constexpr int32_t lo = ATTN_COST_BITS == 8 ? -128 : -32768, hi = -lo - 1;  // the dtype's limits
  for (size_t i = 0; i < io_of(s); ++i) {
    int32_t x = 0;
    switch (kind) {
      case Data::kRandom:
        x = g_rng.uniform(kInputSpread);
        break;
      case Data::kZeros:
        break;
      case Data::kMax:
        x = hi;
        break;
      case Data::kAlternating:
      case Data::kSaturate:
        x = ((i % e + i / e) & 1) != 0 ? lo : hi;  // a checkerboard: rows alternate too
        break;
      case Data::kOneHot:
        x = i % e == (i / e) % e ? hi : 0;
        break;  // row r: one peak, at column r mod E
    }
    g_input[i] = static_cast<DT::Act>(x);
  }
  using Proj = decltype(w->q);
  w->q = g_proj.at<Proj>(0, 0);
  w->k = g_proj.at<Proj>(d * e, d);
  w->v = g_proj.at<Proj>(2 * d * e, 2 * d);
  w->o = g_proj.at<Proj>(3 * d * e, 3 * d);
#if ATTN_COST_BITS == 8
  w->q_zero_point = 3;
  w->k_zero_point = -2;
  w->v_zero_point = 1;
  w->context_zero_point = -1;
  w->output_zero_point = 2;
#endif
  w->softmax.exp_multiplier = kExpMultiplier;
  w->softmax.exp_shift = kExpShift;
  w->softmax.diff_limit = kDiffLimit;
  w->softmax.score_shift = kScoreShift;
  w->context_multiplier = 0x50000000;
  w->context_shift = ATTN_COST_BITS == 8 ? -14 : -15;
  if (kind == Data::kSaturate) {
    // The largest multiplier with shift -2 (the right-shift path, as the
    // report's constants): on inputs at the limits every projection, the
    // context and the output requantize far past the dtype's range (but
    // for the rare sum within 2^-2 of 0), and the scores spread far past
    // diff_limit.
    for (size_t i = 0; i < channels_of(s); ++i) {
      g_proj.multiplier[i] = 0x7FFFFFFF;
      g_proj.shift[i] = -2;
    }
    w->context_multiplier = 0x7FFFFFFF;
    w->context_shift = -2;
  }
}

// The instructions of one forward of shape s on data `kind` into *insns.
// The counter restarts before the forward, so that every forward starts at
// the same SysTick phase and the wrap interrupts (~5 instructions each,
// counted) land alike: equal work, equal counts.
attn::Status run(const Shape& s, Data kind, uint64_t* insns) {
  attn::Plan plan;
  attn::Status st = attn::plan_attention(config_of(s), DT::kDType, s.L, s.L, &plan);
  attn::Arena arena;
  if (st == attn::Status::kOk) st = arena.init(g_arena, sizeof g_arena);
  DT::Weights w;
  fill_data(s, kind, &w);
  const DT::Io io = port_self_io<DT::Io>(g_input, g_output);
  if (st == attn::Status::kOk) {
    port_counter_init();
    port_counter_start();
    st = DT::kForward(plan, w, attn::Mask{}, io, arena);
    *insns = port_counter_stop();
  }
  return st;
}

// The data sweep (attn_cost_sweep_<dtype>): the first shape's forward on
// every kind of data, with the same weights (the random generator restarts
// for each), one line per kind:
//
//   measure-sweep board=mps2-an386 dtype=s8 L=64 S=64 E=64 H=4 data=zeros insns=N kernels=dsp compiler=...
//
// then the spread (largest minus smallest count); exits 1 if it is above
// ATTN_COST_SWEEP_SPREAD (the spread this board is documented to have).
#ifndef ATTN_COST_SWEEP_SPREAD
#define ATTN_COST_SWEEP_SPREAD 0
#endif
int sweep() {
  const Shape& s = cost::kShapes[0];
  uint64_t lo = UINT64_MAX, hi = 0;
  for (Data kind : kSweep) {
    g_rng = cost::Rng{12345u};
    uint64_t insns = 0;
    const attn::Status st = run(s, kind, &insns);
    if (st != attn::Status::kOk) {
      std::printf("sweep %s data=%s failed: %s\n", DT::kName, data_name(kind), attn::status_name(st));
      return 1;
    }
    std::printf(
        "measure-sweep board=%s dtype=%s L=%ld S=%ld E=%ld H=%ld data=%s insns=%lu kernels=%s compiler=%s\n",
        port_board_name(), DT::kName, static_cast<long>(s.L), static_cast<long>(s.L), static_cast<long>(s.E),
        static_cast<long>(s.H), data_name(kind), static_cast<unsigned long>(insns),
        port_kernel_tag(DT::kDType), cost::kCompiler);
    lo = insns < lo ? insns : lo;
    hi = insns > hi ? insns : hi;
  }
  const bool ok = hi - lo <= ATTN_COST_SWEEP_SPREAD;
  std::printf(
      "sweep board=%s dtype=%s spread=%lu allowed=%lu (instructions, largest - smallest over %u data kinds): "
      "%s\n",
      port_board_name(), DT::kName, static_cast<unsigned long>(hi - lo),
      static_cast<unsigned long>(ATTN_COST_SWEEP_SPREAD),
      static_cast<unsigned>(sizeof kSweep / sizeof kSweep[0]), ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
#endif

}  // namespace

#if ATTN_COST_SWEEP
int main() { return sweep(); }
#else
int main() { return cost::measure_all(measure<false>, measure<true>); }
#endif
