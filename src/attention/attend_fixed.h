// attention/attend_fixed.h: the integer forward, one template for s8 and s16.
//
// forward_s8 / forward_s16 (attn/attention_fixed.h) and decode_s8 /
// decode_s16 (attn/decode.h) run the same two stages, so that a decode step
// runs exactly the forward's arithmetic: project K and V rows, then attend
// query rows to K and V that are already projected. The stages are written
// once over the activation type T (int8_t or int16_t); FixedOps<Act> holds what
// differs between the dtypes: the weight and I/O structs, the zero points
// (s16 is symmetric: all 0) and the call into the dtype's row of the kernel
// table (kernels/kernel_table.h). No checks in the stages: callers validate
// first (check_weights).
#pragma once

#include <cstdint>

#include "attention/tile_scratch.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/kernels_fixed.h"
#include "kernels/arch.h"
#include "kernels/kernel_table.h"
#include "kernels/linear_split.h"

namespace attn {
namespace detail {

// Zero points of Q, K, V, the context and the output ([-128, 127]; s16: 0).
struct ZeroPoints {
  int32_t q, k, v, context, output;
};

template <typename Act>
struct FixedOps;

// The public types of one fixed-point dtype.
template <typename W, typename I, typename C>
struct FixedTypes {
  using Weights = W;
  using Io = I;
  using Cache = C;
};

#if ATTN_WITH_S8
template <>
struct FixedOps<int8_t> : FixedTypes<WeightsS8, IoS8, KvCacheS8> {
  static constexpr DType kDType = DType::kS8;
  // V kept transposed [Dkv, S] in the forward's arena (the kernel table's choice).
  static constexpr bool kValuesTransposed = kValuesTransposedS8;

  static ZeroPoints zero_points(const WeightsS8& w) {
    return {w.q_zero_point, w.k_zero_point, w.v_zero_point, w.context_zero_point, w.output_zero_point};
  }
  // The projection's per-channel requantization; the input zero point is folded into the bias.
  static LinearS8Params linear_params(const ProjectionS8& p, int32_t output_zero_point) {
    LinearS8Params lp;
    lp.input_zero_point = 0;
    lp.output_zero_point = output_zero_point;
    lp.multiplier = p.multiplier;
    lp.shift = p.shift;
    return lp;
  }
  // y [M, N] = x [M, K] W^T + b, requantized to zero point zp, split over
  // par. Out of line: one copy of the parameters' set-up for the four
  // projections (flash; a few instructions per call, two calls per query tile).
  ATTN_NOINLINE static void project(const AttentionConfig&, const ParallelFor& par, ConstMatS8 x,
                                    const ProjectionS8& p, int32_t zp, MatS8 y) {
    project_split(par, x, p, linear_params(p, zp), y);
  }
  // s = round((q - zq)(k - zk)^T / 2^score_shift), int32
  static void scores(ConstMatS8 q, ConstMatS8 k, const WeightsS8& w, MatS32 s) {
    best(kScoresS8)(q, w.q_zero_point, k, w.k_zero_point, w.softmax.score_shift, s);
  }
  // The context's requantization: P V into the context's scale and zero point.
  static Requant context_requant(const WeightsS8& w) {
    return Requant{w.context_multiplier, w.context_shift, w.context_zero_point};
  }
  // o = requant(p (v - zv)) into the context's zero point
  static void weighted_sum(ConstMatS16 p, ConstMatS8 v, const WeightsS8& w, MatS8 o) {
    best(kWeightedSumS8)(p, v, w.v_zero_point, context_requant(w), o);
  }
  static void rope(MatS8 x, int32_t head_dim, int32_t zp, int32_t pos0, const RopeTable& t) {
    rope_s8_ref(x, head_dim, zp, pos0, t);
  }

  // The V^T layout's ops (kValuesTransposed):
  // yt [N, M] = (x [M, K] W^T + b)^T for the leading channels the kernel takes; returns how many.
  static int32_t project_t(ConstMatS8 x, const ProjectionS8& p, int32_t zp, MatS8 yt) {
    if (p.weight_s4 != nullptr) return 0;  // int4 weights: the caller's plain projection takes them all
    return best(kLinearTS8)(x, matrix(p.weight, yt.rows, x.cols), p.bias, linear_params(p, zp), yt);
  }
  // The fused softmax's exps over row[begin, end) (0 elsewhere in [0, n)); returns the row's normalizer.
  static uint32_t softmax_exps(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
    return best(kSoftmaxExps)(row, begin, end, n, sm);
  }
  // o = requant(p (v - zv)) with p = fused_prob(e, recip) and V given as vt [d, S]
  static void weighted_sum_vt(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, const WeightsS8& w,
                              MatS8 o) {
    best(kWeightedSumVtS8)(e, recip, vt, w.v_zero_point, context_requant(w), o);
  }
};
#endif

#if ATTN_WITH_S16
template <>
struct FixedOps<int16_t> : FixedTypes<WeightsS16, IoS16, KvCacheS16> {
  static constexpr DType kDType = DType::kS16;
  static constexpr bool kValuesTransposed = false;

  static ZeroPoints zero_points(const WeightsS16&) { return {0, 0, 0, 0, 0}; }
  static void project(const AttentionConfig& c, const ParallelFor& par, ConstMatS16 x, const ProjectionS16& p,
                      int32_t, MatS16 y) {
    LinearS16Params lp;
    lp.multiplier = p.multiplier;
    lp.shift = p.shift;
    project_split(par, x, p, c.bias ? p.bias : nullptr, lp, y);
  }
  // s = round(q k^T / 2^score_shift), int64 sums narrowed to int32
  static void scores(ConstMatS16 q, ConstMatS16 k, const WeightsS16& w, MatS32 s) {
    best(kScoresS16)(q, k, w.softmax.score_shift, s);
  }
  // o = requant(p v), int64 sums
  static void weighted_sum(ConstMatS16 p, ConstMatS16 v, const WeightsS16& w, MatS16 o) {
    best(kWeightedSumS16)(p, v, Requant{w.context_multiplier, w.context_shift, 0}, o);
  }
  static void rope(MatS16 x, int32_t head_dim, int32_t, int32_t pos0, const RopeTable& t) {
    rope_s16_ref(x, head_dim, pos0, t);
  }
};
#endif

// Scratch carved by the caller from its arena (S: rows of K and V or more):
// int32 scores, then Q0.15 probabilities in place (row stride 2S int16).
// With saturation counters (attn/attention_fixed.h) it also carries the
// forward's counts (null: none; the decodes).
template <typename Act>
struct AttendScratch : TileScratch<Act, int32_t> {
#if ATTN_SATURATION_COUNTERS
  SaturationCounts* saturation = nullptr;
#endif
};

#if ATTN_SATURATION_COUNTERS
// Elements of m at the limits of Act, added to *count (count null: nothing).
template <typename Act>
void count_saturated(Matrix<const Act> m, uint64_t* count) {
  constexpr Act lo = Act(-(1 << (8 * sizeof(Act) - 1))), hi = Act((1 << (8 * sizeof(Act) - 1)) - 1);
  uint64_t n = 0;
  for (int32_t i = 0; i < m.rows; ++i)
    for (int32_t j = 0; j < m.cols; ++j) n += (m.row(i)[j] == lo || m.row(i)[j] == hi) ? 1u : 0u;
  *count += n;
}
#endif

// The weights' checks of the integer forwards for a resolved config:
// kNullArgument, kBadQuantParams, kBadHeadDim (s8: head_dim >= 2^14).
Status check_weights(const AttentionConfig& c, const WeightsS8& w);
Status check_weights(const AttentionConfig& c, const WeightsS16& w);

// K [rows, Dkv] = key [rows, kdim] Wk^T + bk and V [rows, Dkv] = value
// [rows, vdim] Wv^T + bv, the K rows at positions k_pos .. k_pos + rows - 1.
// With kVt (values transposed, FixedOps<Act>::kValuesTransposed) V is V^T
// [Dkv, rows]. A template, not a flag, so that an image links only the
// layouts it uses (flash). The projections split over par (Plan::parallel).
template <typename Act, bool kVt>
void project_kv(const AttentionConfig& c, const ParallelFor& par, const typename FixedOps<Act>::Weights& w,
                const Act* key, const Act* value, int32_t rows, int32_t k_pos, Matrix<Act> K, Matrix<Act> V);

// output [L, E] = attention of query [L, E] (row i at position q_pos + i)
// over K, V [S, Dkv] with `mask`; tile_rows rows at a time. With kVt, V is
// V^T [Dkv, S], and the scores scratch holds int32 exps until P.V normalizes
// them (weighted_sum_vt_s8).
template <typename Act, bool kVt>
void attend(const AttentionConfig& c, const ParallelFor& par, int32_t tile_rows,
            const typename FixedOps<Act>::Weights& w, const Mask& mask, const Act* query, int32_t L,
            int32_t q_pos, Matrix<const Act> K, Matrix<const Act> V, Act* output,
            const AttendScratch<Act>& scratch);

}  // namespace detail
}  // namespace attn
