// attention_f32.cpp: the float32 multi-head attention forward.
//
// Row-tiled: K and V are projected once into the arena; then attend_f32()
// walks the query rows T at a time with one [T, S] score scratch reused by
// every head. Arena use is 2*S*Dkv + 2*T*D + T*S floats, independent of H
// and of L.
#include "attention/attend_f32.h"
#include "attention/packed_f32.h"
#include "attn/attention.h"
#include "kernels/kernel_table.h"
#include "kernels/linear_split.h"

namespace attn {
namespace {

Status check_args(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io) {
  ATTN_TRY(detail::check_forward_plan(plan, DType::kF32));
  ATTN_TRY(detail::check_weights_f32(plan.config, w));
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr || io.output == nullptr) {
    return Status::kNullArgument;
  }
  if (io.query_position < 0) return Status::kBadPosition;
  return detail::check_mask(mask, plan.key_len);
}

}  // namespace

Status forward_f32(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io, Arena& arena) {
  ATTN_TRY(check_args(plan, w, mask, io));
  const AttentionConfig& c = plan.config;
  const int32_t D = c.num_heads * c.head_dim;       // width of Q and O
  const int32_t Dkv = c.num_kv_heads * c.head_dim;  // width of K and V
  const int32_t S = plan.key_len;
  const size_t T = static_cast<size_t>(plan.tile_rows);

  // Carve every buffer before writing anything: a short arena fails cleanly.
  const size_t mark = arena.mark();
  float* k_buf = nullptr;              // K  [S, Dkv]
  float* v_buf = nullptr;              // V  [S, Dkv]
  detail::AttendScratchF32 scratch{};  // Q tile [T, D], scores [T, S], O tile [T, D]
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(S) * static_cast<size_t>(Dkv), &k_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(S) * static_cast<size_t>(Dkv), &v_buf));
    return detail::carve_tile_scratch(arena, T, static_cast<size_t>(D), static_cast<size_t>(S), &scratch);
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  const MatF32 K = matrix(k_buf, S, Dkv);
  const MatF32 V = matrix(v_buf, S, Dkv);

  // K = Xk Wk^T + bk (key j rotated to position j), V = Xv Wv^T + bv: once for all query tiles.
  const detail::PanelsF32 panels = detail::packed_panels_f32(c, w);  // nulls unless w.packed
  detail::linear_packed_f32(plan.parallel, matrix(io.key, S, c.kdim), matrix(w.wk, Dkv, c.kdim), panels.k,
                            c.bias ? w.bk : nullptr, K);
  detail::linear_packed_f32(plan.parallel, matrix(io.value, S, c.vdim), matrix(w.wv, Dkv, c.vdim), panels.v,
                            c.bias ? w.bv : nullptr, V);
  if (c.rope_base != 0.0f) detail::rope_f32_ref(K, c.head_dim, 0, c.rope_base);

  detail::attend_f32(c, plan.parallel, plan.tile_rows, w, mask, io.query, plan.query_len, io.query_position,
                     K, V, io.output, io.attn_weights, scratch);
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
