// attention_fixed.cpp: the integer multi-head attention forwards, s8 and s16,
// integers only.
//
// The row-tiled schedule of forward_f32: K and V are projected once into the
// arena (K rotated to positions 0 .. S-1 with rotary embedding); then, per
// tile of T query rows, Q is projected (and rotated) and every head computes
// int32 scores, the fused softmax (Q0.15 probabilities written over the
// scores), P.V with exact integer sums and its requantization into the head's
// columns of the context tile; the tile's context goes through the output
// projection straight into the caller's output. Arena use: 2*S*Dkv + 2*T*D
// activations plus T*S int32, independent of H and L.
//
// s8 and s16 differ only in types, zero points and kernels (FixedOps in
// attention/attend_fixed.h). V is stored [S, Dkv], or transposed [Dkv, S]
// where the kernel table says so (kValuesTransposedS8: the DSP targets, whose
// P.V then streams each value column as one contiguous row). The two stages
// (project_kv, attend) are the decodes' too (decode_fixed.cpp); decode keeps V
// untransposed in its cache.
#include "attn/attention_fixed.h"
#include "attention/attend_fixed.h"
#include "attention/attention_fixed_common.h"

#if ATTN_WITH_S8 || ATTN_WITH_S16  // an f32-only build (ATTN_DTYPES=f32) compiles this file empty

namespace attn {
namespace detail {
namespace {

constexpr int32_t kRowsPerSoftmax = 16;  // rows per softmax call

// The four projections: weights and requantization present and in range
// (shifts up to max_shift), biases where required, and the biases the
// forward reads within the accumulator bound (check_requant: bias_in_range).
template <typename Weights>
ATTN_COLD_CODE Status check_projections(const AttentionConfig& c, const Weights& w, int32_t max_shift,
                                        bool bias_required, bool bias_used) {
  const int32_t D = c.num_heads * c.head_dim;
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  const struct {
    const decltype(w.q)& p;
    int32_t out, in;
  } projections[] = {{w.q, D, c.embed_dim}, {w.k, Dkv, c.kdim}, {w.v, Dkv, c.vdim}, {w.o, c.embed_dim, D}};
  for (const auto& pr : projections) {
    ATTN_TRY(check_projection_weights(pr.p, pr.in));
    if (bias_required && pr.p.bias == nullptr) return Status::kNullArgument;
    ATTN_TRY(check_requant(pr.p.multiplier, pr.p.shift, pr.out, max_shift, bias_used ? pr.p.bias : nullptr,
                           pr.in));
  }
  ATTN_TRY(check_softmax(w.softmax));
  if (w.context_multiplier < 0 || !shift_ok(w.context_shift, max_shift)) return Status::kBadQuantParams;
  return check_mask_coverage(w.mask_coverage, w.mask_key_length);
}

template <typename Act>
ATTN_COLD_FLAT Status check_args(const Plan& plan, const typename FixedOps<Act>::Weights& w, const Mask& mask,
                                 const typename FixedOps<Act>::Io& io) {
  ATTN_TRY(check_plan_and_mask(plan, FixedOps<Act>::kDType, mask));
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr || io.output == nullptr) {
    return Status::kNullArgument;
  }
  ATTN_TRY(check_weights(plan.config, w));
  ATTN_TRY(check_mask_covered(w.mask_coverage, w.mask_key_length, mask, plan.key_len));
  return check_forward_rope(plan, w.rope, io.query_position);
}

}  // namespace

#if ATTN_WITH_S8
ATTN_COLD_FLAT ATTN_NOINLINE Status check_weights(const AttentionConfig& c, const WeightsS8& w) {
  // |score| <= head_dim * 255^2 must stay below 2^30 (the max - score difference fits int32).
  if (c.head_dim >= (1 << 14)) return Status::kBadHeadDim;
  ATTN_TRY(check_projections(c, w, 30, true, true));  // the bias carries the folded input zero point
  const auto zp_ok = [](int32_t zp) { return zp >= -128 && zp <= 127; };
  if (!zp_ok(w.q_zero_point) || !zp_ok(w.k_zero_point) || !zp_ok(w.v_zero_point) ||
      !zp_ok(w.context_zero_point) || !zp_ok(w.output_zero_point)) {
    return Status::kBadQuantParams;
  }
  return w.softmax.score_shift > 30 ? Status::kBadQuantParams : Status::kOk;
}
#endif

#if ATTN_WITH_S16
ATTN_COLD_FLAT ATTN_NOINLINE Status check_weights(const AttentionConfig& c, const WeightsS16& w) {
  ATTN_TRY(check_projections(c, w, 14, c.bias, c.bias));
  // |sum q k| <= head_dim * 2^30: head_dim < 2^score_shift keeps |score| < 2^30.
  if (w.softmax.score_shift > 40 || (int64_t{1} << w.softmax.score_shift) <= c.head_dim) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}
#endif

template <typename Act, bool kVt>
void project_kv(const AttentionConfig& c, const ParallelFor& par, const typename FixedOps<Act>::Weights& w,
                const Act* key, const Act* value, int32_t rows, int32_t k_pos, Matrix<Act> K, Matrix<Act> V) {
  using Ops = FixedOps<Act>;
  const ZeroPoints zp = Ops::zero_points(w);
  const Matrix<const Act> xk = matrix(key, rows, c.kdim);    // [rows, kdim]
  const Matrix<const Act> xv = matrix(value, rows, c.vdim);  // [rows, vdim]
  // V^T = (Xv Wv^T + bv)^T straight from the kernel for the channels it
  // takes, else V through K's buffer (free until K is projected below) and
  // copied transposed.
  if constexpr (kVt) {
    if (Ops::project_t(xv, w.v, zp.v, V) < V.rows) {
      Ops::project(c, par, xv, w.v, zp.v, K);  // [rows, Dkv]
      for (int32_t j = 0; j < rows; ++j) {
        for (int32_t d = 0; d < V.rows; ++d) V.row(d)[j] = K.row(j)[d];
      }
    }
  }
  // K = Xk Wk^T + bk (rotated to positions k_pos ..), V = Xv Wv^T + bv
  Ops::project(c, par, xk, w.k, zp.k, K);
  if constexpr (!kVt) Ops::project(c, par, xv, w.v, zp.v, V);
  if (rope_enabled(c)) Ops::rope(K, c.head_dim, zp.k, k_pos, w.rope);  // K rows at their positions
}

template <typename Act, bool kVt>
void attend(const AttentionConfig& c, const ParallelFor& par, int32_t tile_rows,
            const typename FixedOps<Act>::Weights& w, const Mask& mask, const Act* query, int32_t L,
            int32_t q_pos, Matrix<const Act> K, Matrix<const Act> V, Act* output,
            const AttendScratch<Act>& scratch) {
  using Ops = FixedOps<Act>;
  const int32_t E = c.embed_dim;
  const int32_t H = c.num_heads;
  const int32_t hd = c.head_dim;
  const int32_t D = H * hd;  // width of Q and O
  const int32_t S = K.rows;

  const ZeroPoints zp = Ops::zero_points(w);
  const FusedSoftmax sm{w.softmax.exp_multiplier, w.softmax.exp_shift, w.softmax.diff_limit};
  const bool rope = rope_enabled(c);
  const int32_t G = H / c.num_kv_heads;  // query heads per K/V head
  // Query heads scored together in a one-row tile: up to the scratch's rows of scores.
  int32_t group_rows = G < scratch.score_rows ? G : scratch.score_rows;
  if (group_rows > kRowsPerSoftmax) group_rows = kRowsPerSoftmax;

  for (int32_t t0 = 0; t0 < L; t0 += tile_rows) {
    const int32_t rows = tile_rows < L - t0 ? tile_rows : L - t0;
    const Matrix<Act> Q = matrix(scratch.q, rows, D);  // [rows, D]
    const Matrix<Act> O = matrix(scratch.o, rows, D);  // [rows, D]
    // Keys any row of this tile may see: from the first row's begin to the last row's end.
    const int32_t k0 = visible_keys(mask, t0, S).begin;
    const int32_t n = visible_keys(mask, t0 + rows - 1, S).end - k0;
    const MatS32 scores = MatS32{scratch.s, rows, n, S};  // [rows, n] of the [T, S] scratch
    // The same memory as int16 probabilities: row r starts at byte 4*S*r.
    const ConstMatS16 P = ConstMatS16{reinterpret_cast<const int16_t*>(scratch.s), rows, n, 2 * S};

    // Q_t = X_t Wq^T + bq (rotated to positions q_pos + t0 ..)
    Ops::project(c, par, matrix(query + static_cast<ptrdiff_t>(t0) * E, rows, E), w.q, zp.q, Q);
    if (rope) Ops::rope(Q, hd, zp.q, q_pos + t0, w.rope);
#if ATTN_SATURATION_COUNTERS
    if (scratch.saturation != nullptr) count_saturated<Act>(Q, &scratch.saturation->q);
#endif

    const bool grouped = !kVt && rows == 1 && group_rows > 1;
    if (grouped) {
      // One query row (a decode step): the query heads of a K/V head are
      // consecutive hd-wide slices of Q's row, i.e. the rows of a [G, hd]
      // matrix of stride hd, and so are their outputs in O. Each kernel runs
      // once per group of up to group_rows heads over that K/V head's keys,
      // instead of once per head with one row: the same sums per head.
      int32_t begin[kRowsPerSoftmax], end[kRowsPerSoftmax];  // every head sees the row's keys
      for (int32_t r = 0; r < group_rows; ++r) begin[r] = 0, end[r] = n;
      for (int32_t h0 = 0; h0 < H;) {
        const int32_t kvh = kv_head(c, h0);
        const int32_t left = (kvh + 1) * G - h0;  // heads of this K/V head from h0
        const int32_t rg = left < group_rows ? left : group_rows;
        const int32_t g0 = kvh * hd;
        const MatS32 sg = MatS32{scratch.s, rg, n, S};  // [rg, n]
        Ops::scores(Matrix<const Act>{Q.data + static_cast<ptrdiff_t>(h0) * hd, rg, hd, hd},
                    K.rows_slice(k0, n).cols_slice(g0, hd), w, sg);
        best(kSoftmaxRows)(scratch.s, S, rg, begin, end, n, sm);
        Ops::weighted_sum(ConstMatS16{reinterpret_cast<const int16_t*>(scratch.s), rg, n, 2 * S},
                          V.rows_slice(k0, n).cols_slice(g0, hd), w,
                          Matrix<Act>{O.data + static_cast<ptrdiff_t>(h0) * hd, rg, hd, hd});
        h0 += rg;
      }
    }
    for (int32_t h = 0; h < H && !grouped; ++h) {  // else the tile's heads, one at a time
      const int32_t c0 = h * hd;                   // head h owns columns [c0, c0 + hd) of Q and O
      const int32_t g0 = kv_head(c, h) * hd;       // and reads columns [g0, g0 + hd) of K and V
      // s = (Q_h - zq)(K_h - zk)^T over the visible keys, int32
      Ops::scores(Q.cols_slice(c0, hd), K.rows_slice(k0, n).cols_slice(g0, hd), w, scores);
      if constexpr (kVt) {
        // Four rows at a time: the softmax's exps and normalizers over each
        // row's own visible keys, then O_h = P (V_h - zv) with P normalized
        // on the fly (p = fused_prob(e, recip), the same Q0.15 probabilities).
        for (int32_t r0 = 0; r0 < rows; r0 += 4) {
          const int32_t rr = rows - r0 < 4 ? rows - r0 : 4;
          uint32_t recip[4];  // [rr]
          for (int32_t r = 0; r < rr; ++r) {
            const KeyRange own = visible_keys(mask, t0 + r0 + r, S);
            recip[r] = Ops::softmax_exps(scores.row(r0 + r), own.begin - k0, own.end - k0, n, sm);
          }
          const ConstMatS32 exps{scratch.s + static_cast<ptrdiff_t>(r0) * S, rr, n, S};  // [rr, n]
          Ops::weighted_sum_vt(exps, recip, V.rows_slice(g0, hd).cols_slice(k0, n), w,
                               O.rows_slice(r0, rr).cols_slice(c0, hd));
        }
      } else {
        // p = softmax(s * score_scale), Q0.15, over each row's own visible keys
        for (int32_t r0 = 0; r0 < rows; r0 += kRowsPerSoftmax) {
          const int32_t rr = rows - r0 < kRowsPerSoftmax ? rows - r0 : kRowsPerSoftmax;
          int32_t begin[kRowsPerSoftmax], end[kRowsPerSoftmax];  // [rr] each row's keys, from k0
          for (int32_t r = 0; r < rr; ++r) {
            const KeyRange own = visible_keys(mask, t0 + r0 + r, S);
            begin[r] = own.begin - k0;
            end[r] = own.end - k0;
          }
          best(kSoftmaxRows)(scores.row(r0), S, rr, begin, end, n, sm);
        }
        // O_h = P (V_h - zv), requantized into head h's columns of the context
        Ops::weighted_sum(P, V.rows_slice(k0, n).cols_slice(g0, hd), w, O.cols_slice(c0, hd));
      }
    }
    // Y_t = O_t Wo^T + bo, straight into the caller's output
    const Matrix<Act> Y = matrix(output + static_cast<ptrdiff_t>(t0) * E, rows, E);
    Ops::project(c, par, O, w.o, zp.output, Y);
#if ATTN_SATURATION_COUNTERS
    if (scratch.saturation != nullptr) {
      count_saturated<Act>(O, &scratch.saturation->context);
      count_saturated<Act>(Y, &scratch.saturation->output);
    }
#endif
  }
}

namespace {

template <typename Act>
Status forward_fixed(const Plan& plan, const typename FixedOps<Act>::Weights& w, const Mask& mask,
                     const typename FixedOps<Act>::Io& io, Arena& arena) {
  ATTN_TRY(check_args<Act>(plan, w, mask, io));
  const AttentionConfig& c = plan.config;
  const int32_t D = c.num_heads * c.head_dim;       // width of Q and O
  const int32_t Dkv = c.num_kv_heads * c.head_dim;  // width of K and V
  const size_t S = static_cast<size_t>(plan.key_len);
  const size_t T = static_cast<size_t>(plan.tile_rows);

  // Carve every buffer before writing anything: a short arena fails cleanly.
  const size_t mark = arena.mark();
  Act* k_buf = nullptr;          // K  [S, Dkv]
  Act* v_buf = nullptr;          // V  [S, Dkv], or V^T [Dkv, S] (kValuesTransposed)
  AttendScratch<Act> scratch{};  // Q tile [T, D], scores [T, S] int32, context tile [T, D]
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(S * static_cast<size_t>(Dkv), &k_buf));
    ATTN_TRY(arena.alloc_array(S * static_cast<size_t>(Dkv), &v_buf));
    return carve_tile_scratch(arena, T, static_cast<size_t>(D), S, &scratch);
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  constexpr bool vt = FixedOps<Act>::kValuesTransposed;
  const Matrix<Act> K = matrix(k_buf, plan.key_len, Dkv);
  const Matrix<Act> V = vt ? matrix(v_buf, Dkv, plan.key_len) : matrix(v_buf, plan.key_len, Dkv);

  // K, V once for all query tiles (key j at position j).
  project_kv<Act, vt>(c, plan.parallel, w, io.key, io.value, plan.key_len, 0, K, V);
#if ATTN_SATURATION_COUNTERS
  scratch.saturation = io.saturation;
  if (io.saturation != nullptr) {
    count_saturated<Act>(K, &io.saturation->k);
    count_saturated<Act>(V, &io.saturation->v);  // V or V^T: the same elements
  }
#endif
  attend<Act, vt>(c, plan.parallel, plan.tile_rows, w, mask, io.query, plan.query_len, io.query_position, K,
                  V, io.output, scratch);
  arena.release(mark);
  return Status::kOk;
}

}  // namespace

// The decodes keep V untransposed on every target (decode_fixed.cpp).
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_INSTANTIATE_UNTRANSPOSED_STAGES(Act)                                                            \
  template void project_kv<Act, false>(const AttentionConfig&, const ParallelFor&,                           \
                                       const FixedOps<Act>::Weights&, const Act*, const Act*, int32_t,       \
                                       int32_t, Matrix<Act>, Matrix<Act>);                                   \
  template void attend<Act, false>(const AttentionConfig&, const ParallelFor&, int32_t,                      \
                                   const FixedOps<Act>::Weights&, const Mask&, const Act*, int32_t, int32_t, \
                                   Matrix<const Act>, Matrix<const Act>, Act*, const AttendScratch<Act>&);
// NOLINTEND(bugprone-macro-parentheses)
#if ATTN_WITH_S8
ATTN_INSTANTIATE_UNTRANSPOSED_STAGES(int8_t)
#endif
#if ATTN_WITH_S16
ATTN_INSTANTIATE_UNTRANSPOSED_STAGES(int16_t)
#endif
#undef ATTN_INSTANTIATE_UNTRANSPOSED_STAGES

}  // namespace detail

#if ATTN_WITH_S8
Status forward_s8(const Plan& plan, const WeightsS8& w, const Mask& mask, const IoS8& io, Arena& arena) {
  return detail::forward_fixed<int8_t>(plan, w, mask, io, arena);
}
#endif
#if ATTN_WITH_S16
Status forward_s16(const Plan& plan, const WeightsS16& w, const Mask& mask, const IoS16& io, Arena& arena) {
  return detail::forward_fixed<int16_t>(plan, w, mask, io, arena);
}
#endif

}  // namespace attn
#endif  // ATTN_WITH_S8 || ATTN_WITH_S16
