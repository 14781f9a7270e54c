// quantize_attention_s8 / _s16: the converter's side of the integer forwards.
// Offline code in double; the run-time path never calls it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "attention/attention_fixed_common.h"
#include "attn/quantize.h"
#include "kernels/exp2_table.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "quant/int4_weights.h"

namespace attn {
namespace {

constexpr double kLog2e = 1.4426950408889634074;
constexpr double kTinyScale = 1.0 / 1048576.0;  // 2^-20, for all-zero ranges and channels

bool finite_range(Range r) { return std::isfinite(r.min) && std::isfinite(r.max) && r.min <= r.max; }

double round_away(double x) { return std::round(x); }  // std::round: half away from zero

// max |row| of `rows` rows of `in` weights; false on a non-finite weight.
bool abs_max(const float* w, int32_t rows, int32_t in, double* amax) {
  *amax = 0.0;
  for (ptrdiff_t k = 0; k < static_cast<ptrdiff_t>(rows) * in; ++k) {
    if (!std::isfinite(w[k])) return false;
    *amax = std::fmax(*amax, std::fabs(static_cast<double>(w[k])));
  }
  return true;
}

// One projection's weights: int8 [out, in] and per-channel scales (all equal
// with per_tensor); int4 (int4 true): values in [-8, 7], each channel's scale
// chosen by error (quant/int4_weights.h), still one int8 each (packed later).
Status quantize_weight(const float* w, int32_t out, int32_t in, bool per_tensor, bool int4, Arena& st,
                       int8_t** wq, float** scale) {
  if (w == nullptr) return Status::kNullArgument;
  ATTN_TRY(st.alloc_array(static_cast<size_t>(out) * static_cast<size_t>(in), wq));
  ATTN_TRY(st.alloc_array(static_cast<size_t>(out), scale));
  double tensor_max = 0.0;
  if (!abs_max(w, out, in, &tensor_max)) return Status::kBadQuantParams;
  for (int32_t c = 0; c < out; ++c) {
    const float* row = w + static_cast<ptrdiff_t>(c) * in;  // [in]
    double amax = tensor_max;
    if (!per_tensor && !abs_max(row, 1, in, &amax)) return Status::kBadQuantParams;
    const double chosen = !int4        ? amax / 127.0
                          : per_tensor ? amax / detail::kInt4Max
                                       : detail::int4_row_scale(row, in, amax);
    const float s = amax > 0.0 ? static_cast<float>(chosen) : static_cast<float>(kTinyScale);
    (*scale)[c] = s;
    for (int32_t k = 0; k < in; ++k) {
      const double q = round_away(static_cast<double>(row[k]) / static_cast<double>(s));
      const double lo = int4 ? detail::kInt4Min : -127.0, hi = int4 ? detail::kInt4Max : 127.0;
      (*wq)[static_cast<ptrdiff_t>(c) * in + k] = static_cast<int8_t>(q > hi ? hi : q < lo ? lo : q);
    }
  }
  return Status::kOk;
}

// Per-channel multipliers and shifts of s_in * s_w[c] / s_out.
Status requant_arrays(double s_in, const float* s_w, double s_out, int32_t out, int32_t max_shift, Arena& st,
                      int32_t** mult, int32_t** shift) {
  ATTN_TRY(st.alloc_array(static_cast<size_t>(out), mult));
  ATTN_TRY(st.alloc_array(static_cast<size_t>(out), shift));
  for (int32_t c = 0; c < out; ++c) {
    ATTN_TRY(quantize_multiplier(s_in * static_cast<double>(s_w[c]) / s_out, &(*mult)[c], &(*shift)[c]));
    if ((*shift)[c] > max_shift) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

// round(b[c] / (s_in * s_w[c])) (b null: 0), minus zp_in * sum_k wq[c][k].
Status bias_s32(const float* b, const int8_t* wq, int32_t out, int32_t in, double s_in, const float* s_w,
                int32_t zp_in, Arena& st, int32_t** bias) {
  ATTN_TRY(st.alloc_array(static_cast<size_t>(out), bias));
  for (int32_t c = 0; c < out; ++c) {
    double q = 0.0;
    if (b != nullptr) {
      if (!std::isfinite(b[c])) return Status::kBadQuantParams;
      q = round_away(static_cast<double>(b[c]) / (s_in * static_cast<double>(s_w[c])));
    }
    int64_t wsum = 0;
    for (int32_t k = 0; k < in; ++k) wsum += wq[static_cast<ptrdiff_t>(c) * in + k];
    const double folded = q - static_cast<double>(zp_in) * static_cast<double>(wsum);
    // Never write a bias the loader and the forward reject (the accumulator bound).
    if (folded > 2147483647.0 || folded < -2147483648.0) return Status::kBiasOutOfRange;
    (*bias)[c] = static_cast<int32_t>(folded);
    if (!detail::bias_in_range((*bias)[c], in)) return Status::kBiasOutOfRange;
  }
  return Status::kOk;
}

Status bias_s64(const float* b, int32_t out, int32_t in, double s_in, const float* s_w, Arena& st,
                int64_t** bias) {
  ATTN_TRY(st.alloc_array(static_cast<size_t>(out), bias));
  for (int32_t c = 0; c < out; ++c) {
    if (!std::isfinite(b[c])) return Status::kBadQuantParams;
    const double q = round_away(static_cast<double>(b[c]) / (s_in * static_cast<double>(s_w[c])));
    if (std::fabs(q) > 9.0e18) return Status::kBiasOutOfRange;
    (*bias)[c] = static_cast<int64_t>(q);
    if (!detail::bias_in_range((*bias)[c], in)) return Status::kBiasOutOfRange;
  }
  return Status::kOk;
}

// Softmax constants for `score_unit`, the real score of one integer step of
// the accumulator before score_shift; min_score_shift keeps int16 scores in
// int32. The shift grows until a score step is at least 2^-17 in log2 units,
// so that the multiplier needs no right shift.
Status fused_softmax(double score_unit, int32_t min_score_shift, FusedSoftmaxParams* sm) {
  *sm = FusedSoftmaxParams();
  const double log2_units = score_unit * kLog2e * 65536.0;  // t per unit of u, at score_shift 0
  if (!(log2_units > 0.0) || !std::isfinite(log2_units)) return Status::kBadQuantParams;
  int32_t score_shift = min_score_shift;
  while (std::ldexp(log2_units, score_shift) < 0.5 && score_shift < 40) ++score_shift;
  // The one QuantizeMultiplier: real = q31 * 2^(shift - 31) = (2 q31) * 2^shift / 2^32.
  int32_t q31 = 0;
  int32_t shift = 0;
  ATTN_TRY(quantize_multiplier(std::ldexp(log2_units, score_shift), &q31, &shift));
  if (q31 < (int32_t{1} << 30) || shift < 0 || shift > 31) return Status::kBadQuantParams;
  sm->exp_multiplier = 2u * static_cast<uint32_t>(q31);
  sm->exp_shift = shift;
  sm->score_shift = score_shift;
  // diff_limit: the largest u whose t stays below 16 octaves (e = 0 beyond),
  // found with the run-time arithmetic itself, so both sides agree exactly.
  const uint64_t t_end = uint64_t{16} << detail::kExp2FracBits;
  const detail::FusedSoftmax rt{sm->exp_multiplier, sm->exp_shift, 0};
  const auto t_of = [&](uint64_t u) { return detail::fused_exp_argument(static_cast<uint32_t>(u), rt); };
  uint64_t lo = 0;                                                            // t_of(lo) < t_end
  uint64_t hi = std::min<uint64_t>(0xFFFFFFFFu >> sm->exp_shift, INT32_MAX);  // largest u allowed
  if (t_of(hi) < t_end) {
    lo = hi;
  } else {
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      (t_of(mid) < t_end ? lo : hi) = mid;
    }
  }
  sm->diff_limit = static_cast<int32_t>(lo);
  return Status::kOk;
}

Status check_inputs(const AttentionConfig& config, const WeightsF32& w, const CalibrationRanges& r,
                    DType dtype) {
  Plan plan;
  ATTN_TRY(plan_attention(config, dtype, 1, 1, &plan));
  if (w.wq == nullptr || w.wk == nullptr || w.wv == nullptr || w.wo == nullptr) return Status::kNullArgument;
  if (config.bias && (w.bq == nullptr || w.bk == nullptr || w.bv == nullptr || w.bo == nullptr)) {
    return Status::kNullArgument;
  }
  const Range all[] = {r.query, r.key, r.value, r.q, r.k, r.v, r.context, r.output};
  for (const Range& x : all) {
    if (!finite_range(x)) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

ActivationQuant choose_all(const CalibrationRanges& r, DType dtype) {
  ActivationQuant a;
  a.query = choose_activation_quant(r.query, dtype);
  a.key = choose_activation_quant(r.key, dtype);
  a.value = choose_activation_quant(r.value, dtype);
  a.q = choose_activation_quant(r.q, dtype);
  a.k = choose_activation_quant(r.k, dtype);
  a.v = choose_activation_quant(r.v, dtype);
  a.context = choose_activation_quant(r.context, dtype);
  a.output = choose_activation_quant(r.output, dtype);
  return a;
}

bool rope_on(const AttentionConfig& c) { return c.rope_base != 0.0f; }

// The two Q1.14 tables [positions, head_dim / 2] of rope_table().
size_t rope_bytes(const AttentionConfig& c, const QuantizeOptions& o) {
  if (!rope_on(c) || o.max_positions < 1) return 0;
  const size_t half = static_cast<size_t>(c.resolved_head_dim() / 2);
  return 2 * arena_round_up(static_cast<size_t>(o.max_positions) * half * sizeof(int16_t));
}

size_t projection_bytes(size_t out, size_t in, size_t bias_bytes) {
  // weight [out, in] int8, scales [out] f32, multipliers and shifts [out] int32, bias [out]
  return arena_round_up(out * in) + arena_round_up(out * sizeof(float)) + 2 * arena_round_up(out * 4) +
         (bias_bytes != 0 ? arena_round_up(out * bias_bytes) : 0);
}

}  // namespace

QuantParams choose_activation_quant(Range r, DType dtype) {
  QuantParams p;
  if (dtype == DType::kS16) {
    const double amax =
        std::fmax(std::fabs(static_cast<double>(r.min)), std::fabs(static_cast<double>(r.max)));
    p.scale = amax > 0.0 ? static_cast<float>(amax / 32767.0) : static_cast<float>(kTinyScale);
    p.zero_point = 0;
    return p;
  }
  const double lo = std::fmin(static_cast<double>(r.min), 0.0);
  const double hi = std::fmax(static_cast<double>(r.max), 0.0);
  if (!(hi - lo > 0.0)) {
    p.scale = static_cast<float>(kTinyScale);
    p.zero_point = 0;
    return p;
  }
  p.scale = static_cast<float>((hi - lo) / 255.0);
  const double zp = round_away(-128.0 - lo / static_cast<double>(p.scale));
  p.zero_point = static_cast<int32_t>(zp < -128.0 ? -128.0 : zp > 127.0 ? 127.0 : zp);
  return p;
}

int32_t quantize_value(float x, QuantParams p, DType dtype) {
  const double lo = dtype == DType::kS16 ? -32768.0 : -128.0;
  const double hi = dtype == DType::kS16 ? 32767.0 : 127.0;
  double q = round_away(static_cast<double>(x) / static_cast<double>(p.scale)) + p.zero_point;
  q = q < lo ? lo : q > hi ? hi : q;
  return static_cast<int32_t>(q);
}

size_t quantize_attention_storage_bytes(const AttentionConfig& c, DType dtype,
                                        const QuantizeOptions& options) {
  const size_t E = static_cast<size_t>(c.embed_dim), D = static_cast<size_t>(c.inner_dim());
  const size_t kd = static_cast<size_t>(c.resolved_kdim()), vd = static_cast<size_t>(c.resolved_vdim());
  // int8: int32 biases, always present (they carry the zero-point fold); int16: int64, only with config.bias.
  const size_t bb = dtype == DType::kS16 ? (c.bias ? 8 : 0) : 4;
  const size_t Dkv = static_cast<size_t>(c.kv_dim());
  return projection_bytes(D, E, bb) + projection_bytes(Dkv, kd, bb) + projection_bytes(Dkv, vd, bb) +
         projection_bytes(E, D, bb) + rope_bytes(c, options);
}

namespace {

// What quantize_attention_s8 and _s16 share: the four projections, the
// softmax constants and the context's requantization. s8 folds the input
// zero point into an int32 bias (always present) and keeps the activations'
// zero points; s16 has int64 biases (where the config has biases), symmetric
// activations, and scores narrowed by score_shift.
template <typename Weights>
Status quantize_fixed(const AttentionConfig& config, const WeightsF32& w, const CalibrationRanges& r,
                      Arena& st, Weights* out, ActivationQuant* act, WeightScales* scales,
                      const QuantizeOptions& options) {
  constexpr bool kS8 = std::is_same_v<Weights, WeightsS8>;
  constexpr DType kDType = kS8 ? DType::kS8 : DType::kS16;
  constexpr int32_t kMaxShift = kS8 ? 30 : 14;  // the projections' and the context's shift bound
  using Projection = decltype(Weights::q);
  using Bias = std::remove_const_t<std::remove_pointer_t<decltype(Projection::bias)>>;
  if (out == nullptr || act == nullptr) return Status::kNullArgument;
  *out = Weights();
  ATTN_TRY(check_inputs(config, w, r, kDType));
  // The masks the ranges hold for: one coverage, or refuse (CalibrationRanges).
  if (r.mixed_masks) return Status::kMaskNotCalibrated;
  ATTN_TRY(detail::check_mask_coverage(r.mask_coverage, r.mask_key_length));
  const int32_t E = config.embed_dim, D = config.inner_dim(), hd = config.resolved_head_dim();
  const int32_t kd = config.resolved_kdim(), vd = config.resolved_vdim(), Dkv = config.kv_dim();
  const ActivationQuant a = choose_all(r, kDType);
  *act = a;
  struct Spec {
    const float* w;
    const float* b;
    int32_t out, in;
    QuantParams x, y;
    Projection* p;
    const float** scale;
  };
  WeightScales ws;
  const Spec specs[4] = {{w.wq, w.bq, D, E, a.query, a.q, &out->q, &ws.q},
                         {w.wk, w.bk, Dkv, kd, a.key, a.k, &out->k, &ws.k},
                         {w.wv, w.bv, Dkv, vd, a.value, a.v, &out->v, &ws.v},
                         {w.wo, w.bo, E, D, a.context, a.output, &out->o, &ws.o}};
  for (const Spec& s : specs) {
    int8_t* wq = nullptr;
    float* sw = nullptr;
    Bias* bias = nullptr;
    int32_t *mult = nullptr, *shift = nullptr;
    const double s_in = static_cast<double>(s.x.scale);
    const bool int4 = options.int4_weights;
    if (int4 && s.in % 2 != 0) return Status::kBadShape;  // two int4 per byte: an even input width
    ATTN_TRY(quantize_weight(s.w, s.out, s.in, options.per_tensor_weights, int4, st, &wq, &sw));
    if constexpr (kS8) {
      ATTN_TRY(bias_s32(config.bias ? s.b : nullptr, wq, s.out, s.in, s_in, sw, s.x.zero_point, st, &bias));
    } else if (config.bias) {
      ATTN_TRY(bias_s64(s.b, s.out, s.in, s_in, sw, st, &bias));
    }
    ATTN_TRY(requant_arrays(s_in, sw, static_cast<double>(s.y.scale), s.out, kMaxShift, st, &mult, &shift));
    *s.p = Projection{wq, bias, mult, shift};
    if (int4) {  // the bias fold above read the int8 copy; packed in place, half its bytes
      s.p->weight_s4 = detail::pack_int4_in_place(wq, static_cast<size_t>(s.out) * static_cast<size_t>(s.in));
      s.p->weight = nullptr;
    }
    *s.scale = sw;
  }
  int32_t score_shift = 0;
  if constexpr (kS8) {
    out->q_zero_point = a.q.zero_point;
    out->k_zero_point = a.k.zero_point;
    out->v_zero_point = a.v.zero_point;
    out->context_zero_point = a.context.zero_point;
    out->output_zero_point = a.output.zero_point;
  } else {
    while ((int64_t{1} << score_shift) <= hd) ++score_shift;  // head_dim < 2^score_shift: scores below 2^30
  }
  const double score_unit =
      static_cast<double>(a.q.scale) * static_cast<double>(a.k.scale) / std::sqrt(static_cast<double>(hd));
  ATTN_TRY(fused_softmax(score_unit, score_shift, &out->softmax));
  ATTN_TRY(quantize_multiplier(static_cast<double>(a.v.scale) / (static_cast<double>(1 << detail::kProbBits) *
                                                                 static_cast<double>(a.context.scale)),
                               &out->context_multiplier, &out->context_shift));
  if (out->context_shift > kMaxShift) return Status::kBadQuantParams;
  if (rope_on(config)) ATTN_TRY(rope_table(config.rope_base, hd, options.max_positions, st, &out->rope));
  out->mask_coverage = r.mask_coverage;
  out->mask_key_length = r.mask_key_length;
  if (scales != nullptr) *scales = ws;
  return Status::kOk;
}

}  // namespace

Status quantize_attention_s8(const AttentionConfig& config, const WeightsF32& w, const CalibrationRanges& r,
                             Arena& st, WeightsS8* out, ActivationQuant* act, WeightScales* scales,
                             const QuantizeOptions& options) {
  return quantize_fixed(config, w, r, st, out, act, scales, options);
}

Status quantize_attention_s16(const AttentionConfig& config, const WeightsF32& w, const CalibrationRanges& r,
                              Arena& st, WeightsS16* out, ActivationQuant* act, WeightScales* scales,
                              const QuantizeOptions& options) {
  return quantize_fixed(config, w, r, st, out, act, scales, options);
}

}  // namespace attn
