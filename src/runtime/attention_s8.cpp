// attention_s8.cpp: the int8 multi-head attention forward, integers only.
//
// Same row-tiled schedule as forward_f32: K and V are projected once into
// the arena (K rotated to positions 0 .. S-1 with rotary embedding); then, per
// tile of T query rows, Q is projected (and rotated) and every head
// computes int32 scores, the fused softmax (Q0.15 probabilities written over
// the scores), P.V with int32 accumulation and its requantization into the
// head's columns of the context tile; the tile's context goes through the
// output projection straight into the caller's output. Arena use:
// 2*S*Dkv + 2*T*D bytes of int8 plus T*S int32, independent of H and L.
// V is stored [S, Dkv], or transposed [Dkv, S] where the kernels want it so
// (detail::kValuesTransposedS8: the DSP targets, whose P.V then streams each
// value column as one contiguous row). The two stages (project_kv_s8,
// attend_s8) are decode_s8's too (internal/attend_fixed.h); decode keeps V
// untransposed in its cache.
#include "attn/attention_fixed.h"
#include "internal/attend_fixed.h"
#include "internal/attention_fixed_common.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace {

constexpr int32_t kSoftmaxRows = 16;  // rows per softmax_fused_rows call

bool zp_ok(int32_t zp) { return zp >= -128 && zp <= 127; }

Status check_projection(const ProjectionS8& p, int32_t out) {
  if (p.weight == nullptr || p.bias == nullptr) return Status::kNullArgument;
  return detail::check_requant(p.multiplier, p.shift, out, 30);
}

ATTN_COLD_CODE Status check_args(const Plan& plan, const WeightsS8& w, const Mask& mask, const IoS8& io) {
  ATTN_TRY(detail::check_plan_and_mask(plan, DType::kS8, mask));
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr || io.output == nullptr) {
    return Status::kNullArgument;
  }
  ATTN_TRY(detail::check_weights_s8(plan.config, w));
  return detail::check_forward_rope(plan, w.rope, io.query_position);
}

// The projection's per-channel requantization; the input zero point is folded into the bias.
LinearS8Params linear_params(const ProjectionS8& p, int32_t output_zero_point) {
  LinearS8Params lp;
  lp.input_zero_point = 0;
  lp.output_zero_point = output_zero_point;
  lp.multiplier = p.multiplier;
  lp.shift = p.shift;
  return lp;
}

}  // namespace

namespace detail {

ATTN_COLD_CODE Status check_weights_s8(const AttentionConfig& c, const WeightsS8& w) {
  // |score| <= head_dim * 255^2 must stay below 2^30 (the max - score difference fits int32).
  if (c.head_dim >= (1 << 14)) return Status::kBadHeadDim;
  const int32_t D = c.num_heads * c.head_dim;
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  ATTN_TRY(check_projection(w.q, D));
  ATTN_TRY(check_projection(w.k, Dkv));
  ATTN_TRY(check_projection(w.v, Dkv));
  ATTN_TRY(check_projection(w.o, c.embed_dim));
  if (!zp_ok(w.q_zero_point) || !zp_ok(w.k_zero_point) || !zp_ok(w.v_zero_point) ||
      !zp_ok(w.context_zero_point) || !zp_ok(w.output_zero_point)) {
    return Status::kBadQuantParams;
  }
  ATTN_TRY(check_softmax(w.softmax));
  if (w.softmax.score_shift > 30) return Status::kBadQuantParams;
  if (w.context_multiplier < 0 || !shift_ok(w.context_shift, 30)) return Status::kBadQuantParams;
  return Status::kOk;
}

template <bool kVt>
void project_kv_s8(const AttentionConfig& c, const WeightsS8& w, const int8_t* key, const int8_t* value,
                   int32_t rows, int32_t k_pos, MatS8 K, MatS8 V) {
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  // V^T = (Xv Wv^T + bv)^T straight from the DSP kernel (the forward's
  // projections: every channel), else V through K's buffer (free until K is
  // projected below) and copied transposed.
  if constexpr (kVt) {
    const ConstMatS8 xv = matrix(value, rows, c.vdim), wv = matrix(w.v.weight, Dkv, c.vdim);
    const LinearS8Params pv = linear_params(w.v, w.v_zero_point);
    if (detail::linear_s8_t_dsp(xv, wv, w.v.bias, pv, V) < Dkv) {
      detail::linear_s8(xv, wv, w.v.bias, pv, K);  // [rows, Dkv]
      for (int32_t j = 0; j < rows; ++j) {
        for (int32_t d = 0; d < Dkv; ++d) V.row(d)[j] = K.row(j)[d];
      }
    }
  }
  // K = Xk Wk^T + bk (rotated to positions k_pos ..), V = Xv Wv^T + bv
  detail::linear_s8(matrix(key, rows, c.kdim), matrix(w.k.weight, Dkv, c.kdim), w.k.bias,
                    linear_params(w.k, w.k_zero_point), K);
  if constexpr (!kVt) {
    detail::linear_s8(matrix(value, rows, c.vdim), matrix(w.v.weight, Dkv, c.vdim), w.v.bias,
                      linear_params(w.v, w.v_zero_point), V);
  }
  if (rope_enabled(c))
    detail::rope_s8(K, c.head_dim, w.k_zero_point, k_pos, w.rope);  // K rows at their positions
}

template <bool kVt>
void attend_s8(const AttentionConfig& c, int32_t tile_rows, const WeightsS8& w, const Mask& mask,
               const int8_t* query, int32_t L, int32_t q_pos, ConstMatS8 K, ConstMatS8 V, int8_t* output,
               const AttendScratchS8& scratch) {
  const int32_t E = c.embed_dim;
  const int32_t H = c.num_heads;
  const int32_t hd = c.head_dim;
  const int32_t D = H * hd;  // width of Q and O
  const int32_t S = K.rows;
  const int32_t T = tile_rows;
  const FusedSoftmax sm{w.softmax.exp_multiplier, w.softmax.exp_shift, w.softmax.diff_limit};
  const bool rope = rope_enabled(c);

  for (int32_t t0 = 0; t0 < L; t0 += T) {
    const int32_t rows = T < L - t0 ? T : L - t0;
    const MatS8 Q = matrix(scratch.q, rows, D);  // [rows, D]
    const MatS8 O = matrix(scratch.o, rows, D);  // [rows, D]
    // Keys any row of this tile may see: from the first row's begin to the last row's end.
    const int32_t k0 = detail::visible_keys(mask, t0, S).begin;
    const int32_t n = detail::visible_keys(mask, t0 + rows - 1, S).end - k0;
    const MatS32 scores = MatS32{scratch.s, rows, n, S};  // [rows, n] of the [T, S] scratch
    // The same memory as int16 probabilities: row r starts at byte 4*S*r.
    const ConstMatS16 P = ConstMatS16{reinterpret_cast<const int16_t*>(scratch.s), rows, n, 2 * S};

    // Q_t = X_t Wq^T + bq (rotated to positions q_pos + t0 ..)
    detail::linear_s8(matrix(query + static_cast<ptrdiff_t>(t0) * E, rows, E), matrix(w.q.weight, D, E),
                      w.q.bias, linear_params(w.q, w.q_zero_point), Q);
    if (rope) detail::rope_s8(Q, hd, w.q_zero_point, q_pos + t0, w.rope);

    for (int32_t h = 0; h < H; ++h) {
      const int32_t c0 = h * hd;              // head h owns columns [c0, c0 + hd) of Q and O
      const int32_t g0 = kv_head(c, h) * hd;  // and reads columns [g0, g0 + hd) of K and V
      // s = (Q_h - zq)(K_h - zk)^T over the visible keys, int32
      detail::scores_s8(Q.cols_slice(c0, hd), w.q_zero_point, K.rows_slice(k0, n).cols_slice(g0, hd),
                        w.k_zero_point, w.softmax.score_shift, scores);
      if constexpr (kVt) {
        // Four rows at a time: the softmax's exps and normalizers over each
        // row's own visible keys, then O_h = P (V_h - zv) with P normalized
        // on the fly (p = fused_prob(e, recip), the same Q0.15 probabilities).
        for (int32_t r0 = 0; r0 < rows; r0 += 4) {
          const int32_t rr = rows - r0 < 4 ? rows - r0 : 4;
          uint32_t recip[4];  // [rr]
          for (int32_t r = 0; r < rr; ++r) {
            const KeyRange own = detail::visible_keys(mask, t0 + r0 + r, S);
            recip[r] = detail::softmax_exps_row(scores.row(r0 + r), own.begin - k0, own.end - k0, n, sm);
          }
          const ConstMatS32 exps{scratch.s + static_cast<ptrdiff_t>(r0) * S, rr, n, S};  // [rr, n]
          detail::weighted_sum_vt_s8(exps, recip, V.rows_slice(g0, hd).cols_slice(k0, n), w.v_zero_point,
                                     w.context_multiplier, w.context_shift, w.context_zero_point,
                                     O.rows_slice(r0, rr).cols_slice(c0, hd));
        }
        continue;
      }
      // p = softmax(s * score_scale), Q0.15, over each row's own visible keys
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
      // O_h = P (V_h - zv), requantized into head h's columns of the context
      detail::weighted_sum_s8(P, V.rows_slice(k0, n).cols_slice(g0, hd), w.v_zero_point, w.context_multiplier,
                              w.context_shift, w.context_zero_point, O.cols_slice(c0, hd));
    }
    // Y_t = O_t Wo^T + bo, straight into the caller's output
    detail::linear_s8(O, matrix(w.o.weight, E, D), w.o.bias, linear_params(w.o, w.output_zero_point),
                      matrix(output + static_cast<ptrdiff_t>(t0) * E, rows, E));
  }
}

// decode_s8 keeps V untransposed on every target; forward_s8 instantiates
// the layout of its target (kValuesTransposedS8) itself.
template void project_kv_s8<false>(const AttentionConfig&, const WeightsS8&, const int8_t*, const int8_t*,
                                   int32_t, int32_t, MatS8, MatS8);
template void attend_s8<false>(const AttentionConfig&, int32_t, const WeightsS8&, const Mask&, const int8_t*,
                               int32_t, int32_t, ConstMatS8, ConstMatS8, int8_t*, const AttendScratchS8&);

}  // namespace detail

Status forward_s8(const Plan& plan, const WeightsS8& w, const Mask& mask, const IoS8& io, Arena& arena) {
  ATTN_TRY(check_args(plan, w, mask, io));
  const AttentionConfig& c = plan.config;
  const int32_t D = c.num_heads * c.head_dim;       // width of Q and O
  const int32_t Dkv = c.num_kv_heads * c.head_dim;  // width of K and V
  const size_t S = static_cast<size_t>(plan.key_len);
  const size_t T = static_cast<size_t>(plan.tile_rows);

  // Carve every buffer before writing anything: a short arena fails cleanly.
  const size_t mark = arena.mark();
  int8_t* k_buf = nullptr;            // K  [S, Dkv]
  int8_t* v_buf = nullptr;            // V  [S, Dkv], or V^T [Dkv, S] (kValuesTransposedS8)
  detail::AttendScratchS8 scratch{};  // Q tile [T, D], scores [T, S] int32, context tile [T, D]
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
  const MatS8 K = matrix(k_buf, plan.key_len, Dkv);
  constexpr bool vt = detail::kValuesTransposedS8;
  const MatS8 V = vt ? matrix(v_buf, Dkv, plan.key_len) : matrix(v_buf, plan.key_len, Dkv);

  // K, V once for all query tiles (key j at position j).
  detail::project_kv_s8<vt>(c, w, io.key, io.value, plan.key_len, 0, K, V);
  detail::attend_s8<vt>(c, plan.tile_rows, w, mask, io.query, plan.query_len, io.query_position, K, V,
                        io.output, scratch);
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
