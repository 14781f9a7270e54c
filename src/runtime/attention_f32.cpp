// attention_f32.cpp: the float32 multi-head attention forward.
//
// Row-tiled: K and V are projected once (K transposed, so that each head's
// scores are a plain product with keys along the vector lanes); then, for each tile of T query rows,
// Q is projected, every head's scores, softmax and weighted sum run on a
// [T, S] scratch reused by all heads, and the tile's context goes straight
// through the output projection into the caller's output. Arena use is
// 2*S*D + 2*T*D + T*S floats, independent of H and of L.
#include <cmath>

#include "attn/attention.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace {

// Number of keys query row i may attend, before the additive mask: keys
// [0, n) take part, keys [n, S) are masked. Non-decreasing in i.
int32_t visible_keys(const Mask& mask, int32_t i, int32_t S) {
  int32_t n = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  if (mask.causal) {
    const int64_t last = static_cast<int64_t>(i) + mask.causal_offset + 1;
    if (last < n) n = static_cast<int32_t>(last);
  }
  return n;
}

Status check_args(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io) {
  if (plan.dtype != DType::kF32) return Status::kBadDtype;
  Plan fresh;  // a Plan edited by hand, or zero-initialized, is caught here
  if (plan_attention(plan.config, plan.dtype, plan.query_len, plan.key_len, &fresh, plan.tile_rows) !=
          Status::kOk ||
      fresh.arena_bytes != plan.arena_bytes || fresh.tile_rows != plan.tile_rows) {
    return Status::kPlanMismatch;
  }
  if (w.wq == nullptr || w.wk == nullptr || w.wv == nullptr || w.wo == nullptr) return Status::kNullArgument;
  if (plan.config.bias && (w.bq == nullptr || w.bk == nullptr || w.bv == nullptr || w.bo == nullptr)) {
    return Status::kNullArgument;
  }
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr || io.output == nullptr) {
    return Status::kNullArgument;
  }
  if (mask.key_length != Mask::kAllKeys && (mask.key_length < 0 || mask.key_length > plan.key_len)) {
    return Status::kBadKeyPadding;
  }
  if (mask.causal_offset < 0) return Status::kBadCausalOffset;
  if (mask.additive != nullptr && mask.additive_stride != 0 && mask.additive_stride < plan.key_len) {
    return Status::kBadShape;
  }
  return Status::kOk;
}

}  // namespace

Status forward_f32(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io, Arena& arena) {
  ATTN_TRY(check_args(plan, w, mask, io));
  const AttentionConfig& c = plan.config;
  const int32_t E = c.embed_dim;
  const int32_t H = c.num_heads;
  const int32_t hd = c.head_dim;
  const int32_t D = H * hd;
  const int32_t L = plan.query_len;
  const int32_t S = plan.key_len;
  const int32_t T = plan.tile_rows;
  const bool bias = c.bias;
  const int32_t mask_stride = mask.additive_stride != 0 ? mask.additive_stride : S;
  const int32_t kt_stride = S + ATTN_KT_ROW_PAD;  // padded rows of K^T: see config.h

  // Carve every buffer before writing anything: a short arena fails cleanly.
  const size_t mark = arena.mark();
  float* kt_buf = nullptr;  // K^T  [D, S], row stride kt_stride
  float* v_buf = nullptr;   // V  [S, D]
  float* q_buf = nullptr;   // Q tile  [T, D]
  float* s_buf = nullptr;   // scores / probabilities  [T, S]
  float* o_buf = nullptr;   // context tile, heads concatenated  [T, D]
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(D) * static_cast<size_t>(kt_stride), &kt_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(S) * static_cast<size_t>(D), &v_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(D), &q_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(S), &s_buf));
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(D), &o_buf));
    return Status::kOk;
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  const MatF32 Kt = MatF32{kt_buf, D, S, kt_stride};
  const MatF32 V = matrix(v_buf, S, D);

  // K^T = (Xk Wk^T + bk)^T, V = Xv Wv^T + bv, once for all query tiles.
  detail::linear_t_f32(matrix(io.key, S, c.kdim), matrix(w.wk, D, c.kdim), bias ? w.bk : nullptr, Kt);
  detail::linear_f32(matrix(io.value, S, c.vdim), matrix(w.wv, D, c.vdim), bias ? w.bv : nullptr, V);

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int32_t t0 = 0; t0 < L; t0 += T) {
    const int32_t rows = T < L - t0 ? T : L - t0;
    const MatF32 Q = matrix(q_buf, rows, D);  // [rows, D]
    const MatF32 O = matrix(o_buf, rows, D);  // [rows, D]
    // Keys any row of this tile may see: the last row sees the most.
    const int32_t n = visible_keys(mask, t0 + rows - 1, S);
    const MatF32 P = MatF32{s_buf, rows, n, S};  // [rows, n] of the [T, S] scratch

    // Q_t = X_t Wq^T + bq
    detail::linear_f32(matrix(io.query + static_cast<ptrdiff_t>(t0) * E, rows, E), matrix(w.wq, D, E),
                       bias ? w.bq : nullptr, Q);

    for (int32_t h = 0; h < H; ++h) {
      const int32_t c0 = h * hd;  // head h owns columns [c0, c0 + hd) of Q, V and O, rows of K^T
      // s = Q_h K_h^T / sqrt(hd) over the visible keys
      detail::scores_f32(Q.cols_slice(c0, hd), Kt.rows_slice(c0, hd).cols_slice(0, n), scale, P);
      for (int32_t r = 0; r < rows; ++r) {
        float* p = P.row(r);  // [n]
        if (mask.additive != nullptr) {
          const float* m = mask.additive + static_cast<ptrdiff_t>(t0 + r) * mask_stride;  // [S]
          for (int32_t j = 0; j < n; ++j) p[j] += m[j];
        }
        for (int32_t j = visible_keys(mask, t0 + r, S); j < n; ++j) p[j] = -INFINITY;
        detail::softmax_row_f32(p, n);
      }
      // O_h = P V_h, written into head h's columns of the concatenated context
      detail::weighted_sum_f32(P, V.rows_slice(0, n).cols_slice(c0, hd), O.cols_slice(c0, hd));

      if (io.attn_weights != nullptr) {  // [H, L, S]
        for (int32_t r = 0; r < rows; ++r) {
          float* dst = io.attn_weights + (static_cast<ptrdiff_t>(h) * L + t0 + r) * S;  // [S]
          for (int32_t j = 0; j < n; ++j) dst[j] = P.row(r)[j];
          for (int32_t j = n; j < S; ++j) dst[j] = 0.0f;
        }
      }
    }
    // Y_t = O_t Wo^T + bo, straight into the caller's output
    detail::linear_f32(O, matrix(w.wo, E, D), bias ? w.bo : nullptr,
                       matrix(io.output + static_cast<ptrdiff_t>(t0) * E, rows, E));
  }
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
