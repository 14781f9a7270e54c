// minimal_f32.cpp: the f32 runtime linked into a minimal image: plan +
// forward on a tiny self-attention, no stdio. Its flash minus attn_empty's is
// the flash cost of the f32 runtime (planner, arena, kernels, libm's expf).
// Exits with the forward's Status code (0 = kOk).
#include <cstdint>

#include "attn/attention.h"
#include "port/self_io.h"

namespace {

constexpr int32_t kE = 8;
constexpr int32_t kL = 4;
constexpr attn::AttentionConfig kConfig{kE, 2};  // embed_dim, num_heads

float weights[4 * kE * kE + 4 * kE];  // wq wk wv wo [E, E], then bq bk bv bo [E]
float input[kL * kE];                 // [L, E]
float output[kL * kE];                // [L, E]
alignas(ATTN_ARENA_ALIGN) uint8_t arena_buf[attn::attention_arena_bytes(kConfig, attn::DType::kF32, kL, kL)];

}  // namespace

int main() {
  // Something the optimizer cannot fold away.
  for (int32_t i = 0; i < static_cast<int32_t>(sizeof weights / sizeof weights[0]); ++i) {
    weights[i] = static_cast<float>(i % 7) * 0.125f;
  }
  for (int32_t i = 0; i < kL * kE; ++i) input[i] = static_cast<float>(i % 5) * 0.25f;

  attn::Plan plan;
  attn::Status s = attn::plan_attention(kConfig, attn::DType::kF32, kL, kL, &plan);
  if (s != attn::Status::kOk) return static_cast<int>(s);
  attn::Arena arena;
  s = arena.init(arena_buf, sizeof arena_buf);
  if (s != attn::Status::kOk) return static_cast<int>(s);

  const float* w = weights;
  attn::WeightsF32 wt;
  wt.wq = w;
  wt.wk = w + kE * kE;
  wt.wv = w + 2 * kE * kE;
  wt.wo = w + 3 * kE * kE;
  wt.bq = w + 4 * kE * kE;
  wt.bk = wt.bq + kE;
  wt.bv = wt.bk + kE;
  wt.bo = wt.bv + kE;
  const attn::IoF32 io = port_self_io<attn::IoF32>(input, output);
  s = attn::forward_f32(plan, wt, attn::Mask{}, io, arena);
  return static_cast<int>(s);
}
