// minimal_fixed.cpp: the integer runtime linked into a minimal image: plan +
// forward_s8 (ATTN_MINIMAL_BITS=8, attn_minimal_s8) or forward_s16 (16,
// attn_minimal_s16) on a tiny self-attention, no stdio. Its flash minus
// attn_empty's is the flash cost of that runtime (planner, arena, checks,
// kernels, softmax table). Exits with the forward's Status code (0 = kOk).
#include <cstdint>

#include "attn/attention_fixed.h"

#ifndef ATTN_MINIMAL_BITS
#define ATTN_MINIMAL_BITS 8
#endif

namespace {

#if ATTN_MINIMAL_BITS == 8
using Act = int8_t;
using Bias = int32_t;
using Weights = attn::WeightsS8;
using Io = attn::IoS8;
constexpr attn::DType kDType = attn::DType::kS8;
#else
using Act = int16_t;
using Bias = int64_t;
using Weights = attn::WeightsS16;
using Io = attn::IoS16;
constexpr attn::DType kDType = attn::DType::kS16;
#endif

constexpr int32_t kE = 8;
constexpr int32_t kL = 4;
constexpr attn::AttentionConfig make_config() {
  attn::AttentionConfig c;
  c.embed_dim = kE;
  c.num_heads = 2;
  return c;
}
constexpr attn::AttentionConfig kConfig = make_config();

int8_t weights[4 * kE * kE];  // wq wk wv wo [E, E]
Bias bias[4 * kE];            // bq bk bv bo [E]
int32_t multiplier[4 * kE];
int32_t shift[4 * kE];
Act input[kL * kE];   // [L, E]
Act output[kL * kE];  // [L, E]
alignas(ATTN_ARENA_ALIGN) uint8_t arena_buf[attn::attention_arena_bytes(kConfig, kDType, kL, kL)];

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
  for (int32_t i = 0; i < kL * kE; ++i) input[i] = static_cast<Act>(i % 5);

  attn::Plan plan;
  attn::Status s = attn::plan_attention(kConfig, kDType, kL, kL, &plan);
  if (s != attn::Status::kOk) return static_cast<int>(s);
  attn::Arena arena;
  s = arena.init(arena_buf, sizeof arena_buf);
  if (s != attn::Status::kOk) return static_cast<int>(s);

  Weights w;
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
  Io io;
  io.query = input;
  io.key = input;
  io.value = input;
  io.output = output;
#if ATTN_MINIMAL_BITS == 8
  s = attn::forward_s8(plan, w, attn::Mask{}, io, arena);
#else
  s = attn::forward_s16(plan, w, attn::Mask{}, io, arena);
#endif
  return static_cast<int>(s);
}
