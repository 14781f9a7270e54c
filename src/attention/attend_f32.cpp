// attend_f32.cpp: for each tile of T query rows, project Q, then per head
// score, mask, softmax and weight V on a [T, S] scratch reused by every head,
// and send the tile's context through the output projection.
#include "attention/attend_f32.h"

#include <cmath>

#include "attention/packed_f32.h"
#include "kernels/kernel_table.h"
#include "kernels/linear_split.h"

namespace attn {
namespace detail {

void attend_f32(const AttentionConfig& c, const ParallelFor& par, int32_t tile_rows, const WeightsF32& w,
                const Mask& mask, const float* query, int32_t L, int32_t q_pos, ConstMatF32 K, ConstMatF32 V,
                float* output, float* attn_weights, const AttendScratchF32& scratch) {
  const int32_t E = c.embed_dim;
  const int32_t H = c.num_heads;
  const int32_t hd = c.head_dim;
  const int32_t D = H * hd;                  // width of Q and O
  const int32_t group = H / c.num_kv_heads;  // query heads per K/V head
  const int32_t S = K.rows;
  const int32_t mask_stride = mask.additive_stride != 0 ? mask.additive_stride : S;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const PanelsF32 panels = packed_panels_f32(c, w);  // W^T panels, or nulls: read w as stored

  for (int32_t t0 = 0; t0 < L; t0 += tile_rows) {
    const int32_t rows = tile_rows < L - t0 ? tile_rows : L - t0;
    const MatF32 Q = matrix(scratch.q, rows, D);  // [rows, D]
    const MatF32 O = matrix(scratch.o, rows, D);  // [rows, D]
    // Keys any row of this tile may see: from the first row's begin to the last row's end.
    const int32_t k0 = visible_keys(mask, t0, S).begin;
    const int32_t n = visible_keys(mask, t0 + rows - 1, S).end - k0;
    const MatF32 P = MatF32{scratch.s, rows, n, S};  // [rows, n] of the [T, S] scratch
    const ConstMatF32 Kt = K.rows_slice(k0, n);      // [n, Dkv]
    const ConstMatF32 Vt = V.rows_slice(k0, n);      // [n, Dkv]

    // Q_t = X_t Wq^T + bq, rotated to positions q_pos + t0 ...
    linear_packed_f32(par, matrix(query + static_cast<ptrdiff_t>(t0) * E, rows, E), matrix(w.wq, D, E),
                      panels.q, c.bias ? w.bq : nullptr, Q);
    if (c.rope_base != 0.0f) rope_f32_ref(Q, hd, q_pos + t0, c.rope_base);

    for (int32_t h = 0; h < H; ++h) {
      const int32_t c0 = h * hd;            // head h owns columns [c0, c0 + hd) of Q and O
      const int32_t g0 = (h / group) * hd;  // and reads columns [g0, g0 + hd) of K and V
      // s = Q_h K_g^T / sqrt(hd) over the tile's keys
      best(kScoresF32)(Q.cols_slice(c0, hd), Kt.cols_slice(g0, hd), scale, P);
      for (int32_t r = 0; r < rows; ++r) {
        float* p = P.row(r);  // [n]: key k0 + j
        if (mask.additive != nullptr) {
          const float* m = mask.additive + static_cast<ptrdiff_t>(t0 + r) * mask_stride + k0;  // [n]
          for (int32_t j = 0; j < n; ++j) p[j] += m[j];
        }
        const KeyRange own = visible_keys(mask, t0 + r, S);
        for (int32_t j = 0; j < own.begin - k0; ++j) p[j] = -INFINITY;
        for (int32_t j = own.end - k0; j < n; ++j) p[j] = -INFINITY;
        best(kSoftmaxRowF32)(p, n);
      }
      // O_h = P V_g, written into head h's columns of the concatenated context
      best(kWeightedSumF32)(P, Vt.cols_slice(g0, hd), O.cols_slice(c0, hd));

      if (attn_weights != nullptr) {  // [H, L, S]
        for (int32_t r = 0; r < rows; ++r) {
          float* dst = attn_weights + (static_cast<ptrdiff_t>(h) * L + t0 + r) * S;  // [S]
          for (int32_t j = 0; j < S; ++j) dst[j] = 0.0f;
          for (int32_t j = 0; j < n; ++j) dst[k0 + j] = P.row(r)[j];
        }
      }
    }
    // Y_t = O_t Wo^T + bo, straight into the caller's output
    linear_packed_f32(par, O, matrix(w.wo, E, D), panels.o, c.bias ? w.bo : nullptr,
                      matrix(output + static_cast<ptrdiff_t>(t0) * E, rows, E));
  }
}

}  // namespace detail
}  // namespace attn
