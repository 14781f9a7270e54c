// cost_f32.cpp: instructions per f32 forward on this board, for the MCU
// shapes of the cost report (tools/bench/mcu-cost), self-attention with bias, random
// weights and inputs. Prints one line per shape for tools/bench/mcu-cost:
//
//   measure board=mps2-an386 dtype=f32 L=64 S=64 E=64 H=4 insns=N arena=N opbyop=N kernels=ref
//
// insns:  guest instructions of one forward_f32() call, counted with the
//         port's SysTick counter under QEMU -icount shift=10 (port/port.h);
// arena:  plan.arena_bytes, the library's whole scratch for the forward;
// opbyop: what an op-by-op execution would hold at its peak: full Q [L, D],
//         K and V [S, D] and the scores of all heads [H, L, S], in f32.
// compiler: the compiler that built the image (last field, may hold spaces).
// Then, in a second pass, one line per shape with the forward's whole-call
// stack peak (stack painting, cost_common.h):
//
//   measure-stack board=mps2-an386 dtype=f32 L=64 S=64 E=64 H=4 stack=N
//
// Exits non-zero if a forward fails or the output is not finite.
#include <cstdint>
#include <cstdio>

#include "attn/attention.h"
#include "cost_common.h"
#include "kernels/kernels_f32.h"
#include "port/kernel_tag.h"
#include "port/port.h"
#include "port/self_io.h"

namespace {

using cost::config_of;
using cost::io_of;
using cost::max_of;
using cost::Shape;

constexpr size_t weights_of(const Shape& s) {  // wq wk wv [D, E], wo [E, D], biases
  const size_t d = cost::dim_of(s);
  const size_t e = static_cast<size_t>(s.E);
  return 4 * d * e + 3 * d + e;
}
constexpr size_t arena_of(const Shape& s) {
  return attn::attention_arena_bytes(config_of(s), attn::DType::kF32, s.L, s.L);
}

float g_weights[max_of(weights_of)];
float g_input[max_of(io_of)];   // [L, E]
float g_output[max_of(io_of)];  // [L, E]
alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[max_of(arena_of)];

// Uniform in [-scale, scale), from a fixed LCG: the same data on every board.
void fill(float* p, size_t n, uint32_t seed, float scale) {
  cost::Rng rng{seed};
  for (size_t i = 0; i < n; ++i) {
    p[i] = (static_cast<float>(rng.next() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;
  }
}

// kStackPass false: count the forward's instructions; true: its stack peak.
template <bool kStackPass>
bool measure(const Shape& s) {
  const attn::AttentionConfig cfg = config_of(s);
  attn::Plan plan;
  attn::Status st = attn::plan_attention(cfg, attn::DType::kF32, s.L, s.L, &plan);
  attn::Arena arena;
  if (st == attn::Status::kOk) st = arena.init(g_arena, sizeof g_arena);
  if (st != attn::Status::kOk) {
    std::printf("cost: L=%ld E=%ld H=%ld: %s\n", static_cast<long>(s.L), static_cast<long>(s.E),
                static_cast<long>(s.H), attn::status_name(st));
    return false;
  }
  const size_t d = static_cast<size_t>(cfg.inner_dim());
  const size_t e = static_cast<size_t>(s.E);
  fill(g_weights, weights_of(s), 12345u, 0.125f);
  fill(g_input, io_of(s), 777u, 1.0f);
  attn::WeightsF32 w;
  w.wq = g_weights;
  w.wk = w.wq + d * e;
  w.wv = w.wk + d * e;
  w.wo = w.wv + d * e;
  w.bq = w.wo + e * d;
  w.bk = w.bq + d;
  w.bv = w.bk + d;
  w.bo = w.bv + d;
  const attn::IoF32 io = port_self_io<attn::IoF32>(g_input, g_output);

  uint64_t insns = 0;
  size_t stack = 0;
  if (kStackPass) {
    stack = cost::stack_peak([&] { return attn::forward_f32(plan, w, attn::Mask{}, io, arena); }, &st);
  } else {
    port_counter_start();
    st = attn::forward_f32(plan, w, attn::Mask{}, io, arena);
    insns = port_counter_stop();
  }
  bool finite = true;
  for (size_t i = 0; i < io_of(s); ++i) finite = finite && __builtin_isfinite(g_output[i]);
  if (st != attn::Status::kOk || !finite) {
    std::printf("cost: forward_f32 failed: %s%s\n", attn::status_name(st),
                finite ? "" : " (non-finite output)");
    return false;
  }
  if (kStackPass) {
    cost::print_stack("f32", s, stack);
    return true;
  }
  const size_t L = static_cast<size_t>(s.L);
  const size_t S = L;
  // Q [L, D] + K, V [S, D] + scores of every head [H, L, S], f32.
  const size_t opbyop = (L * d + 2 * S * d + static_cast<size_t>(s.H) * L * S) * sizeof(float);
  cost::print_measure(attn::DType::kF32, "f32", s, d, insns, plan.arena_bytes, opbyop);
  return true;
}

}  // namespace

int main() { return cost::measure_all(measure<false>, measure<true>); }
