// minimal_fixed.cpp: the integer runtime linked into a minimal image: plan +
// forward_s8 (ATTN_MINIMAL_BITS=8, attn_minimal_s8) or forward_s16 (16,
// attn_minimal_s16) on a tiny self-attention, no stdio. Its flash minus
// attn_empty's is the flash cost of that runtime (planner, arena, checks,
// kernels, softmax table). Exits with the forward's Status code (0 = kOk).
#include <cstdint>

#include "port/fixed_dtype.h"
#include "port/self_io.h"

#ifndef ATTN_MINIMAL_BITS
#define ATTN_MINIMAL_BITS 8
#endif

namespace {

using DT = FixedDType<ATTN_MINIMAL_BITS>;

constexpr int32_t kE = 8;
constexpr int32_t kL = 4;
constexpr attn::AttentionConfig kConfig{kE, 2};  // embed_dim, num_heads

int8_t weights[4 * kE * kE];  // wq wk wv wo [E, E]
DT::Bias bias[4 * kE];        // bq bk bv bo [E]
int32_t multiplier[4 * kE];
int32_t shift[4 * kE];
DT::Act input[kL * kE];   // [L, E]
DT::Act output[kL * kE];  // [L, E]
alignas(ATTN_ARENA_ALIGN) uint8_t arena_buf[attn::attention_arena_bytes(kConfig, DT::kDType, kL, kL)];

template <typename P>
P projection(int32_t i) {
  P p;
  p.weight = weights + i * kE * kE;
  p.bias = bias + i * kE;
  p.multiplier = multiplier + i * kE;
  p.shift = shift + i * kE;
  return p;
}

}  // namespace

int main() {
  // Something the optimizer cannot fold away.
  for (int32_t i = 0; i < 4 * kE * kE; ++i) weights[i] = static_cast<int8_t>(i % 7 - 3);
  for (int32_t i = 0; i < 4 * kE; ++i) {
    bias[i] = i % 5;
    multiplier[i] = 0x40000000 + i;
    shift[i] = -2;
  }
  for (int32_t i = 0; i < kL * kE; ++i) input[i] = static_cast<DT::Act>(i % 5);

  attn::Plan plan;
  attn::Status s = attn::plan_attention(kConfig, DT::kDType, kL, kL, &plan);
  if (s != attn::Status::kOk) return static_cast<int>(s);
  attn::Arena arena;
  s = arena.init(arena_buf, sizeof arena_buf);
  if (s != attn::Status::kOk) return static_cast<int>(s);

  DT::Weights w;
  using Proj = decltype(w.q);
  w.q = projection<Proj>(0);
  w.k = projection<Proj>(1);
  w.v = projection<Proj>(2);
  w.o = projection<Proj>(3);
  w.softmax.exp_multiplier = 0x90000000u;
  w.softmax.exp_shift = 8;
  w.softmax.diff_limit = 1000;
  w.softmax.score_shift = ATTN_MINIMAL_BITS == 8 ? 0 : 8;  // s16: head_dim < 2^score_shift
  w.context_multiplier = 0x40000000;
  w.context_shift = -10;
  const DT::Io io = port_self_io<DT::Io>(input, output);
  s = DT::kForward(plan, w, attn::Mask{}, io, arena);
  return static_cast<int>(s);
}
