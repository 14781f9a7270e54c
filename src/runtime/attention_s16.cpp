// attention_s16.cpp: the int16 x int8 (CMSIS-NN 16x8 style) multi-head
// attention forward, integers only. The schedule of forward_s8, with int16
// symmetric activations, 64-bit projection and P.V accumulators, and scores
// narrowed to int32 by the converter's score_shift before the fused softmax.
#include "attn/attention_fixed.h"
#include "internal/attention_fixed_common.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace {

Status check_projection(const ProjectionS16& p, int32_t out) {
  if (p.weight == nullptr) return Status::kNullArgument;
  return detail::check_requant(p.multiplier, p.shift, out, 14);
}

Status check_args(const Plan& plan, const WeightsS16& w, const Mask& mask, const IoS16& io) {
  ATTN_TRY(detail::check_plan_and_mask(plan, DType::kS16, mask));
  const AttentionConfig& c = plan.config;
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr || io.output == nullptr) {
    return Status::kNullArgument;
  }
  const int32_t D = c.num_heads * c.head_dim;
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  ATTN_TRY(check_projection(w.q, D));
  ATTN_TRY(check_projection(w.k, Dkv));
  ATTN_TRY(check_projection(w.v, Dkv));
  ATTN_TRY(check_projection(w.o, c.embed_dim));
  if (c.bias && (w.q.bias == nullptr || w.k.bias == nullptr || w.v.bias == nullptr || w.o.bias == nullptr)) {
    return Status::kNullArgument;
  }
  ATTN_TRY(detail::check_softmax(w.softmax));
  // |sum q k| <= head_dim * 2^30: head_dim < 2^score_shift keeps |score| < 2^30.
  if (w.softmax.score_shift > 40 || (int64_t{1} << w.softmax.score_shift) <= c.head_dim) {
    return Status::kBadQuantParams;
  }
  if (w.context_multiplier < 0 || !detail::shift_ok(w.context_shift, 14)) return Status::kBadQuantParams;
  return detail::check_forward_rope(plan, w.rope, io.query_position);
}

LinearS16Params linear_params(const ProjectionS16& p) {
  LinearS16Params lp;
  lp.multiplier = p.multiplier;
  lp.shift = p.shift;
  return lp;
}

}  // namespace

Status forward_s16(const Plan& plan, const WeightsS16& w, const Mask& mask, const IoS16& io, Arena& arena) {
  ATTN_TRY(check_args(plan, w, mask, io));
  const AttentionConfig& c = plan.config;
  const int32_t E = c.embed_dim;
  const int32_t H = c.num_heads;
  const int32_t hd = c.head_dim;
  const int32_t D = H * hd;                 // width of Q and O
  const int32_t Dkv = c.num_kv_heads * hd;  // width of K and V
  const bool rope = detail::rope_enabled(c);
  const int32_t L = plan.query_len;
  const int32_t S = plan.key_len;
  const int32_t T = plan.tile_rows;
  const bool bias = c.bias;

  const size_t mark = arena.mark();
  int16_t* k_buf = nullptr;  // K  [S, Dkv]
  int16_t* v_buf = nullptr;  // V  [S, Dkv]
  int16_t* q_buf = nullptr;  // Q tile  [T, D]
  int32_t* s_buf = nullptr;  // scores [T, S] int32, then probabilities [T, S] int16 (row stride 2S) in place
  int16_t* o_buf = nullptr;  // context tile, heads concatenated  [T, D]
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(S) * static_cast<size_t>(Dkv), &k_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(S) * static_cast<size_t>(Dkv), &v_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(D), &q_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(S), &s_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(D), &o_buf));
    return Status::kOk;
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  const MatS16 K = matrix(k_buf, S, Dkv);
  const MatS16 V = matrix(v_buf, S, Dkv);
  const detail::FusedSoftmax sm{w.softmax.exp_multiplier, w.softmax.exp_shift, w.softmax.diff_limit};

  // K = Xk Wk^T + bk (rotated), V = Xv Wv^T + bv, once for all query tiles.
  detail::linear_s16(matrix(io.key, S, c.kdim), matrix(w.k.weight, Dkv, c.kdim), bias ? w.k.bias : nullptr,
                     linear_params(w.k), K);
  detail::linear_s16(matrix(io.value, S, c.vdim), matrix(w.v.weight, Dkv, c.vdim), bias ? w.v.bias : nullptr,
                     linear_params(w.v), V);
  if (rope) detail::rope_s16(K, hd, 0, w.rope);  // key j at position j

  for (int32_t t0 = 0; t0 < L; t0 += T) {
    const int32_t rows = T < L - t0 ? T : L - t0;
    const MatS16 Q = matrix(q_buf, rows, D);  // [rows, D]
    const MatS16 O = matrix(o_buf, rows, D);  // [rows, D]
    // Keys any row of this tile may see: from the first row's begin to the last row's end.
    const int32_t k0 = detail::visible_keys(mask, t0, S).begin;
    const int32_t n = detail::visible_keys(mask, t0 + rows - 1, S).end - k0;
    const MatS32 scores = MatS32{s_buf, rows, n, S};  // [rows, n] of the [T, S] scratch
    const ConstMatS16 P = ConstMatS16{reinterpret_cast<const int16_t*>(s_buf), rows, n, 2 * S};

    // Q_t = X_t Wq^T + bq (rotated)
    detail::linear_s16(matrix(io.query + static_cast<ptrdiff_t>(t0) * E, rows, E), matrix(w.q.weight, D, E),
                       bias ? w.q.bias : nullptr, linear_params(w.q), Q);
    if (rope) detail::rope_s16(Q, hd, io.query_position + t0, w.rope);  // rows at their positions

    for (int32_t h = 0; h < H; ++h) {
      const int32_t c0 = h * hd;                      // head h owns columns [c0, c0 + hd) of Q and O
      const int32_t g0 = detail::kv_head(c, h) * hd;  // and reads columns [g0, g0 + hd) of K and V
      // s = round(Q_h K_h^T / 2^score_shift), int64 sums narrowed to int32
      detail::scores_s16(Q.cols_slice(c0, hd), K.rows_slice(k0, n).cols_slice(g0, hd), w.softmax.score_shift,
                         scores);
      for (int32_t r = 0; r < rows; ++r) {
        const detail::KeyRange own = detail::visible_keys(mask, t0 + r, S);
        detail::softmax_fused_row(scores.row(r), own.begin - k0, own.end - k0, n, sm);
      }
      // O_h = P V_h, int64 sums, requantized into head h's columns
      detail::weighted_sum_s16(P, V.rows_slice(k0, n).cols_slice(g0, hd), w.context_multiplier,
                               w.context_shift, O.cols_slice(c0, hd));
    }
    // Y_t = O_t Wo^T + bo
    detail::linear_s16(O, matrix(w.o.weight, E, D), bias ? w.o.bias : nullptr, linear_params(w.o),
                       matrix(io.output + static_cast<ptrdiff_t>(t0) * E, rows, E));
  }
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
