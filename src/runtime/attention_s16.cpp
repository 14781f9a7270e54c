// attention_s16.cpp: the int16 x int8 (CMSIS-NN 16x8 style) multi-head
// attention forward, integers only. The schedule of forward_s8, with int16
// symmetric activations, 64-bit projection and P.V accumulators, and scores
// narrowed to int32 by the converter's score_shift before the fused softmax.
// The two stages (project_kv_s16, attend_s16) are decode_s16's too
// (internal/attend_fixed.h).
#include "attn/attention_fixed.h"
#include "internal/attend_fixed.h"
#include "internal/attention_fixed_common.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace {

constexpr int32_t kSoftmaxRows = 16;  // rows per softmax_fused_rows call

Status check_projection(const ProjectionS16& p, int32_t out) {
  if (p.weight == nullptr) return Status::kNullArgument;
  return detail::check_requant(p.multiplier, p.shift, out, 14);
}

Status check_args(const Plan& plan, const WeightsS16& w, const Mask& mask, const IoS16& io) {
  ATTN_TRY(detail::check_plan_and_mask(plan, DType::kS16, mask));
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr || io.output == nullptr) {
    return Status::kNullArgument;
  }
  ATTN_TRY(detail::check_weights_s16(plan.config, w));
  return detail::check_forward_rope(plan, w.rope, io.query_position);
}

LinearS16Params linear_params(const ProjectionS16& p) {
  LinearS16Params lp;
  lp.multiplier = p.multiplier;
  lp.shift = p.shift;
  return lp;
}

}  // namespace

namespace detail {

Status check_weights_s16(const AttentionConfig& c, const WeightsS16& w) {
  const int32_t D = c.num_heads * c.head_dim;
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  ATTN_TRY(check_projection(w.q, D));
  ATTN_TRY(check_projection(w.k, Dkv));
  ATTN_TRY(check_projection(w.v, Dkv));
  ATTN_TRY(check_projection(w.o, c.embed_dim));
  if (c.bias && (w.q.bias == nullptr || w.k.bias == nullptr || w.v.bias == nullptr || w.o.bias == nullptr)) {
    return Status::kNullArgument;
  }
  ATTN_TRY(check_softmax(w.softmax));
  // |sum q k| <= head_dim * 2^30: head_dim < 2^score_shift keeps |score| < 2^30.
  if (w.softmax.score_shift > 40 || (int64_t{1} << w.softmax.score_shift) <= c.head_dim) {
    return Status::kBadQuantParams;
  }
  if (w.context_multiplier < 0 || !shift_ok(w.context_shift, 14)) return Status::kBadQuantParams;
  return Status::kOk;
}

void project_kv_s16(const AttentionConfig& c, const WeightsS16& w, const int16_t* key, const int16_t* value,
                    int32_t rows, int32_t k_pos, MatS16 K, MatS16 V) {
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  // K = Xk Wk^T + bk (rotated to positions k_pos ..), V = Xv Wv^T + bv
  detail::linear_s16(matrix(key, rows, c.kdim), matrix(w.k.weight, Dkv, c.kdim), c.bias ? w.k.bias : nullptr,
                     linear_params(w.k), K);
  detail::linear_s16(matrix(value, rows, c.vdim), matrix(w.v.weight, Dkv, c.vdim),
                     c.bias ? w.v.bias : nullptr, linear_params(w.v), V);
  if (rope_enabled(c)) detail::rope_s16(K, c.head_dim, k_pos, w.rope);  // K rows at their positions
}

void attend_s16(const AttentionConfig& c, int32_t tile_rows, const WeightsS16& w, const Mask& mask,
                const int16_t* query, int32_t L, int32_t q_pos, ConstMatS16 K, ConstMatS16 V, int16_t* output,
                const AttendScratchS16& scratch) {
  const int32_t E = c.embed_dim;
  const int32_t H = c.num_heads;
  const int32_t hd = c.head_dim;
  const int32_t D = H * hd;  // width of Q and O
  const int32_t S = K.rows;
  const int32_t T = tile_rows;
  const bool bias = c.bias;
  const FusedSoftmax sm{w.softmax.exp_multiplier, w.softmax.exp_shift, w.softmax.diff_limit};
  const bool rope = rope_enabled(c);

  for (int32_t t0 = 0; t0 < L; t0 += T) {
    const int32_t rows = T < L - t0 ? T : L - t0;
    const MatS16 Q = matrix(scratch.q, rows, D);  // [rows, D]
    const MatS16 O = matrix(scratch.o, rows, D);  // [rows, D]
    // Keys any row of this tile may see: from the first row's begin to the last row's end.
    const int32_t k0 = detail::visible_keys(mask, t0, S).begin;
    const int32_t n = detail::visible_keys(mask, t0 + rows - 1, S).end - k0;
    const MatS32 scores = MatS32{scratch.s, rows, n, S};  // [rows, n] of the [T, S] scratch
    const ConstMatS16 P = ConstMatS16{reinterpret_cast<const int16_t*>(scratch.s), rows, n, 2 * S};

    // Q_t = X_t Wq^T + bq (rotated to positions q_pos + t0 ..)
    detail::linear_s16(matrix(query + static_cast<ptrdiff_t>(t0) * E, rows, E), matrix(w.q.weight, D, E),
                       bias ? w.q.bias : nullptr, linear_params(w.q), Q);
    if (rope) detail::rope_s16(Q, hd, q_pos + t0, w.rope);

    for (int32_t h = 0; h < H; ++h) {
      const int32_t c0 = h * hd;              // head h owns columns [c0, c0 + hd) of Q and O
      const int32_t g0 = kv_head(c, h) * hd;  // and reads columns [g0, g0 + hd) of K and V
      // s = round(Q_h K_h^T / 2^score_shift), int64 sums narrowed to int32
      detail::scores_s16(Q.cols_slice(c0, hd), K.rows_slice(k0, n).cols_slice(g0, hd), w.softmax.score_shift,
                         scores);
      for (int32_t r0 = 0; r0 < rows; r0 += kSoftmaxRows) {
        const int32_t rr = rows - r0 < kSoftmaxRows ? rows - r0 : kSoftmaxRows;
        int32_t begin[kSoftmaxRows], end[kSoftmaxRows];  // [rr] each row's keys, from k0
        for (int32_t r = 0; r < rr; ++r) {
          const KeyRange own = detail::visible_keys(mask, t0 + r0 + r, S);
          begin[r] = own.begin - k0;
          end[r] = own.end - k0;
        }
        detail::softmax_fused_rows(scores.row(r0), S, rr, begin, end, n, sm);
      }
      // O_h = P V_h, int64 sums, requantized into head h's columns
      detail::weighted_sum_s16(P, V.rows_slice(k0, n).cols_slice(g0, hd), w.context_multiplier,
                               w.context_shift, O.cols_slice(c0, hd));
    }
    // Y_t = O_t Wo^T + bo
    detail::linear_s16(O, matrix(w.o.weight, E, D), bias ? w.o.bias : nullptr, linear_params(w.o),
                       matrix(output + static_cast<ptrdiff_t>(t0) * E, rows, E));
  }
}

}  // namespace detail

Status forward_s16(const Plan& plan, const WeightsS16& w, const Mask& mask, const IoS16& io, Arena& arena) {
  ATTN_TRY(check_args(plan, w, mask, io));
  const AttentionConfig& c = plan.config;
  const int32_t D = c.num_heads * c.head_dim;       // width of Q and O
  const int32_t Dkv = c.num_kv_heads * c.head_dim;  // width of K and V
  const size_t S = static_cast<size_t>(plan.key_len);
  const size_t T = static_cast<size_t>(plan.tile_rows);

  const size_t mark = arena.mark();
  int16_t* k_buf = nullptr;            // K  [S, Dkv]
  int16_t* v_buf = nullptr;            // V  [S, Dkv]
  detail::AttendScratchS16 scratch{};  // Q tile [T, D], scores [T, S] int32, context tile [T, D]
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(S * static_cast<size_t>(Dkv), &k_buf));
    ATTN_TRY(arena.alloc_array(S * static_cast<size_t>(Dkv), &v_buf));
    ATTN_TRY(arena.alloc_array(T * static_cast<size_t>(D), &scratch.q));
    ATTN_TRY(arena.alloc_array(T * S, &scratch.s));
    ATTN_TRY(arena.alloc_array(T * static_cast<size_t>(D), &scratch.o));
    return Status::kOk;
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  const MatS16 K = matrix(k_buf, plan.key_len, Dkv);
  const MatS16 V = matrix(v_buf, plan.key_len, Dkv);

  // K, V once for all query tiles (key j at position j).
  detail::project_kv_s16(c, w, io.key, io.value, plan.key_len, 0, K, V);
  detail::attend_s16(c, plan.tile_rows, w, mask, io.query, plan.query_len, io.query_position, K, V, io.output,
                     scratch);
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
