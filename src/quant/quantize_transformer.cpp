// quantize_transformer_s8 / _s16: the converter of whole integer models
// (attn/transformer_fixed.h). Offline code in double: calibrates the float
// model (calibrate_transformer.cpp) and writes every table and constant of
// the integer forward into the caller's storage; optionally runs the integer
// forward on the calibration set and reports the SQNR per stage.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "attention/attention_fixed_common.h"
#include "attn/quantize.h"
#include "attn/transformer_fixed.h"
#include "kernels/kernels_fixed.h"
#include "model/transformer_fixed_common.h"
#include "quant/calibrate_transformer.h"
#include "quant/choose_range.h"
#include "quant/int4_weights.h"
#include "quant/smooth_transformer.h"

namespace attn {
namespace {

constexpr double kTinyScale = 1.0 / 1048576.0;  // 2^-20: all-zero ranges and rows
constexpr int32_t kS16TableBits = 20;           // |s16 activation table entries| <= 2^20

using detail::LayerRanges;
using detail::ModelRanges;

template <typename A, typename B>
size_t n_of(A a, B b) {
  return static_cast<size_t>(a) * static_cast<size_t>(b);
}
template <typename N>
size_t rounded(N count, size_t elem) {
  return arena_round_up(static_cast<size_t>(count) * elem);
}

// ---- weights -------------------------------------------------------------------------

// Rows of w [rows, in] as int8, symmetric per row: q = clamp(round(w / s), -127, 127), s = max|row| / 127;
// int4 (int4 true): q in [-8, 7], s chosen by error (quant/int4_weights.h), one int8 each (packed later).
// h (int4 only, else null): the inputs' second moments [in, in]: the values by error feedback
// (quant/int4_weights.h, scratch for it), not rounded to nearest.
Status quantize_rows(const float* w, int32_t rows, int32_t in, bool int4, Arena& st, int8_t** q,
                     double* scales, const double* h = nullptr, Arena* scratch = nullptr) {
  if (w == nullptr) return Status::kNullArgument;
  ATTN_TRY(st.alloc_array(n_of(rows, in), q));
  for (int32_t r = 0; r < rows; ++r) {
    const float* row = w + static_cast<ptrdiff_t>(r) * in;
    double amax = 0.0;
    for (int32_t k = 0; k < in; ++k) {
      if (!std::isfinite(row[k])) return Status::kBadQuantParams;
      amax = std::fmax(amax, std::fabs(static_cast<double>(row[k])));
    }
    // The scale as a float, as quantize_attention stores its scales.
    const double chosen = int4 ? detail::int4_row_scale(row, in, amax) : amax / 127.0;
    const double s = amax > 0.0 ? static_cast<double>(static_cast<float>(chosen)) : kTinyScale;
    scales[r] = s;
    const double lo = int4 ? detail::kInt4Min : -127.0, hi = int4 ? detail::kInt4Max : 127.0;
    for (int32_t k = 0; k < in; ++k) {
      const double v = std::round(static_cast<double>(row[k]) / s);
      (*q)[static_cast<ptrdiff_t>(r) * in + k] = static_cast<int8_t>(std::fmax(lo, std::fmin(hi, v)));
    }
  }
  if (int4 && h != nullptr && scratch != nullptr)
    return detail::gptq_int4_rows(w, rows, in, scales, h, *scratch, *q);
  return Status::kOk;
}

// Per-row multipliers and shifts of ratio[r] = num * scales[r] / den, shifts <= max_shift.
Status multipliers(const double* scales, int32_t rows, double num, double den, int32_t max_shift, Arena& st,
                   int32_t** mult, int32_t** shift) {
  ATTN_TRY(st.alloc_array(static_cast<size_t>(rows), mult));
  ATTN_TRY(st.alloc_array(static_cast<size_t>(rows), shift));
  for (int32_t r = 0; r < rows; ++r) {
    ATTN_TRY(quantize_multiplier(num * scales[r] / den, &(*mult)[r], &(*shift)[r]));
    if ((*shift)[r] > max_shift || (*shift)[r] < -31) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

Status rescale(double ratio, int32_t zero_point, RescaleFixed* out) {
  *out = RescaleFixed();
  ATTN_TRY(quantize_multiplier(ratio, &out->multiplier, &out->shift));
  if (out->shift > 30 || out->shift < -31) return Status::kBadQuantParams;
  out->zero_point = zero_point;
  return Status::kOk;
}

double scale_of(double max_abs, int32_t bits) {
  return max_abs > 0.0 ? max_abs / std::ldexp(1.0, bits) : kTinyScale;
}

// A projection y = x W^T + b: int8 W per channel; s8: int32 bias with the
// input zero point folded in (always present); s16: int64 bias (or none).
// int4: int4 weights (weight_s4), packed in place after the bias fold.
template <typename Projection>
Status projection(const float* w, const float* b, int32_t out, int32_t in, QuantParams x, QuantParams y,
                  int32_t max_shift, bool int4, Arena& st, Arena& scratch, Projection* p,
                  const double* h = nullptr) {
  constexpr bool kS8 = std::is_same_v<Projection, ProjectionS8>;
  const size_t mark = scratch.mark();
  double* scales = nullptr;
  Status s = scratch.alloc_array(static_cast<size_t>(out), &scales);
  const auto done = [&](Status r) {
    scratch.release(mark);
    return r;
  };
  if (s != Status::kOk) return done(s);
  int8_t* wq = nullptr;
  int32_t *mult = nullptr, *shift = nullptr;
  if (int4 && in % 2 != 0) return done(Status::kBadShape);  // two int4 per byte
  ATTN_TRY(done(quantize_rows(w, out, in, int4, st, &wq, scales, h, &scratch)));
  ATTN_TRY(done(multipliers(scales, out, static_cast<double>(x.scale), static_cast<double>(y.scale),
                            max_shift, st, &mult, &shift)));
  using Bias = std::remove_const_t<std::remove_pointer_t<decltype(Projection::bias)>>;
  Bias* bias = nullptr;
  if (kS8 || b != nullptr) {
    ATTN_TRY(done(st.alloc_array(static_cast<size_t>(out), &bias)));
    for (int32_t c = 0; c < out; ++c) {
      double q = 0.0;
      if (b != nullptr) {
        if (!std::isfinite(b[c])) return done(Status::kBadQuantParams);
        q = std::round(static_cast<double>(b[c]) / (static_cast<double>(x.scale) * scales[c]));
      }
      int64_t wsum = 0;
      for (int32_t k = 0; k < in; ++k) wsum += wq[static_cast<ptrdiff_t>(c) * in + k];
      const double folded = q - static_cast<double>(x.zero_point) * static_cast<double>(wsum);
      if (std::fabs(folded) > (kS8 ? 2147483647.0 : 9.0e18)) return done(Status::kBiasOutOfRange);
      bias[c] = static_cast<Bias>(folded);
      if (!detail::bias_in_range(bias[c], in)) return done(Status::kBiasOutOfRange);
    }
  }
  *p = Projection{wq, bias, mult, shift};
  if (int4) {
    p->weight_s4 = detail::pack_int4_in_place(wq, n_of(out, in));
    p->weight = nullptr;
  }
  return done(Status::kOk);
}

// NormFixed from float weights: input grid s_in, output grid s_out (zero point zp).
Status make_norm(const TransformerConfig& c, const NormWeightsF32& nw, double s_in, double s_out, int32_t zp,
                 Arena& st, NormFixed* out) {
  *out = NormFixed();
  const int32_t E = c.embed_dim;
  if (nw.weight == nullptr) return Status::kNullArgument;
  const bool has_bias = c.norm == NormKind::kLayerNorm && c.norm_bias;
  if (has_bias && nw.bias == nullptr) return Status::kNullArgument;
  double wmax = 0.0, bmax = 0.0;
  for (int32_t i = 0; i < E; ++i) {
    if (!std::isfinite(nw.weight[i]) || (has_bias && !std::isfinite(nw.bias[i])))
      return Status::kBadQuantParams;
    wmax = std::fmax(wmax, std::fabs(static_cast<double>(nw.weight[i])) / s_out);
    if (has_bias) bmax = std::fmax(bmax, std::fabs(static_cast<double>(nw.bias[i])) / s_out);
  }
  // weight_i = round(w_i / s_out 2^cw) at most 2^30, bias_i = round(b_i / s_out 2^shift) below
  // 2^29, shift = F + cw - 31 in [-31, 30] (NormFixed).
  const int32_t F = norm_frac_bits(E);
  int32_t cw = 61 - F;  // shift 30
  if (wmax > 0.0) cw = std::min(cw, static_cast<int32_t>(std::floor(31.0 - std::log2(wmax))) - 1);
  if (bmax > 0.0) cw = std::min(cw, static_cast<int32_t>(std::floor(29.0 - std::log2(bmax))) - 1 + 31 - F);
  const int32_t shift = F + cw - 31;
  if (shift < -31 || shift > 30) return Status::kBadQuantParams;
  int32_t* weight = nullptr;
  ATTN_TRY(st.alloc_array(static_cast<size_t>(E), &weight));
  for (int32_t i = 0; i < E; ++i) {
    weight[i] = static_cast<int32_t>(std::round(std::ldexp(static_cast<double>(nw.weight[i]) / s_out, cw)));
  }
  int32_t* bias = nullptr;
  if (has_bias) {
    ATTN_TRY(st.alloc_array(static_cast<size_t>(E), &bias));
    for (int32_t i = 0; i < E; ++i) {
      bias[i] = static_cast<int32_t>(std::round(std::ldexp(static_cast<double>(nw.bias[i]) / s_out, shift)));
    }
  }
  const double eps = std::round(static_cast<double>(c.norm_eps) / (s_in * s_in));
  if (!(eps >= 0.0) || eps >= std::ldexp(1.0, 62)) return Status::kBadQuantParams;
  out->weight = weight;
  out->bias = bias;
  out->eps = static_cast<int64_t>(eps);
  out->shift = shift;
  out->output_zero_point = zp;
  return Status::kOk;
}

// A per-row embedding table going to the residual grid s_r.
Status embedding(const float* w, int32_t rows, int32_t E, double s_r, Arena& st, Arena& scratch,
                 EmbeddingFixed* out, double* keep_scales = nullptr) {
  const size_t mark = scratch.mark();
  double* scales = keep_scales;
  if (scales == nullptr) ATTN_TRY(scratch.alloc_array(static_cast<size_t>(rows), &scales));
  int8_t* q = nullptr;
  int32_t *mult = nullptr, *shift = nullptr;
  Status s = quantize_rows(w, rows, E, false, st, &q, scales);
  if (s == Status::kOk) s = multipliers(scales, rows, 1.0, s_r, 30, st, &mult, &shift);
  scratch.release(mark);
  ATTN_TRY(s);
  *out = EmbeddingFixed{q, mult, shift};
  return Status::kOk;
}

// ---- the FFN's activation tables ----------------------------------------------------

Status ffn_tables(const TransformerConfig& c, const LayerRanges& r, QuantParams h1, QuantParams h3,
                  QuantParams g, Arena& st, FfnS8* f) {
  (void)r;
  if (!c.gated_ffn) {
    int8_t* t = nullptr;
    ATTN_TRY(st.alloc_array(256, &t));
    for (int32_t i = 0; i < 256; ++i) {
      const double x = static_cast<double>(h1.scale) * (i - 128 - h1.zero_point);
      t[i] = static_cast<int8_t>(
          quantize_value(static_cast<float>(detail::activation(c.activation, x)), g, DType::kS8));
    }
    f->act_table = t;
    return Status::kOk;
  }
  double a[256];
  double amax = 0.0;
  for (int32_t i = 0; i < 256; ++i) {
    a[i] = detail::activation(c.activation, static_cast<double>(h1.scale) * (i - 128 - h1.zero_point));
    amax = std::fmax(amax, std::fabs(a[i]));
  }
  const double st_scale = amax > 0.0 ? amax / 32767.0 : kTinyScale;
  int16_t* t = nullptr;
  ATTN_TRY(st.alloc_array(256, &t));
  for (int32_t i = 0; i < 256; ++i) t[i] = static_cast<int16_t>(std::round(a[i] / st_scale));
  f->gate_table = t;
  ATTN_TRY(quantize_multiplier(st_scale * static_cast<double>(h3.scale) / static_cast<double>(g.scale),
                               &f->gate_multiplier, &f->gate_shift));
  return f->gate_shift > 30 ? Status::kBadQuantParams : Status::kOk;
}

Status ffn_tables(const TransformerConfig& c, const LayerRanges& r, QuantParams h1, QuantParams h3,
                  QuantParams g, Arena& st, FfnS16* f) {
  (void)r;
  double amax = 0.0;
  const auto x_of = [&](int32_t k) { return static_cast<double>(h1.scale) * (k * kActTableS16Step - 32768); };
  for (int32_t k = 0; k < kActTableS16Entries; ++k) {
    amax = std::fmax(amax, std::fabs(detail::activation(c.activation, x_of(k))));
  }
  const double st_scale = amax > 0.0 ? amax / std::ldexp(1.0, kS16TableBits) : kTinyScale;
  int32_t* t = nullptr;
  ATTN_TRY(st.alloc_array(static_cast<size_t>(kActTableS16Entries), &t));
  for (int32_t k = 0; k < kActTableS16Entries; ++k) {
    t[k] = static_cast<int32_t>(std::round(detail::activation(c.activation, x_of(k)) / st_scale));
  }
  f->act_table = t;
  const double unit = st_scale / kActTableS16Step;  // the interpolated value's unit
  const double ratio = c.gated_ffn ? unit * static_cast<double>(h3.scale) / static_cast<double>(g.scale)
                                   : unit / static_cast<double>(g.scale);
  ATTN_TRY(quantize_multiplier(ratio, &f->act_multiplier, &f->act_shift));
  return f->act_shift > (c.gated_ffn ? 14 : 30) || f->act_shift < -31 ? Status::kBadQuantParams : Status::kOk;
}

// ---- the whole model --------------------------------------------------------------

// What differs between s8 and s16: the types, the projections' largest shift.
template <typename W, typename L, DType D, int32_t S>
struct TypesOf {
  using Weights = W;
  using Layer = L;
  static constexpr DType kDType = D;
  static constexpr int32_t kMaxShift = S;
};
template <typename Act>
struct Types;
template <>
struct Types<int8_t> : TypesOf<TransformerWeightsS8, LayerWeightsS8, DType::kS8, 30> {};
template <>
struct Types<int16_t> : TypesOf<TransformerWeightsS16, LayerWeightsS16, DType::kS16, 14> {};

Status check_weights_f32(const TransformerConfig& c, const TransformerWeightsF32& w) {
  if (w.token_embedding == nullptr || w.layers == nullptr) return Status::kNullArgument;
  if (c.learned_positions && w.position_embedding == nullptr) return Status::kNullArgument;
  if (c.type_vocab_size > 0 && w.type_embedding == nullptr) return Status::kNullArgument;
  if (c.head == LmHead::kUntied && w.lm_head == nullptr) return Status::kNullArgument;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const FfnWeightsF32& f = w.layers[l].ffn;
    if (f.w1 == nullptr || f.w2 == nullptr || (c.gated_ffn && f.w3 == nullptr)) return Status::kNullArgument;
    if (c.ffn_bias && (f.b1 == nullptr || f.b2 == nullptr || (c.gated_ffn && f.b3 == nullptr))) {
      return Status::kNullArgument;
    }
  }
  return Status::kOk;
}

Status check_calibration(const TransformerConfig& c, const TransformerCalibration& cal, int32_t* max_len) {
  if (cal.tokens == nullptr || cal.lengths == nullptr || cal.count < 1) return Status::kNullArgument;
  *max_len = 0;
  int64_t at = 0;
  for (int32_t s = 0; s < cal.count; ++s) {
    const int32_t n = cal.lengths[s];
    if (n < 1) return Status::kBadQueryLength;
    if (n > c.max_positions) return Status::kSequenceTooLong;
    for (int32_t i = 0; i < n; ++i) {
      if (cal.tokens[at + i] < 0 || cal.tokens[at + i] >= c.vocab_size) return Status::kTokenOutOfRange;
    }
    at += n;
    *max_len = std::max(*max_len, n);
  }
  return Status::kOk;
}

// SQNR accumulators of the report.
struct Sqnr {
  double signal = 0.0, noise = 0.0;
  void add(double ref, double got) {
    signal += ref * ref;
    noise += (ref - got) * (ref - got);
  }
  double db() const { return noise > 0.0 ? 10.0 * std::log10(signal / noise) : 200.0; }
};

struct ReportContext {
  const float* snapshots = nullptr;  // [2 L + 1, n, E]: embeddings, then per layer after attention, after FFN
  double residual_scale = 0.0;
  Sqnr* stages = nullptr;  // [2 L + 1]
};

void observe(void* context, int32_t stage, const int32_t* residual, int32_t n, int32_t E) {
  auto* r = static_cast<ReportContext*>(context);
  const float* ref = r->snapshots + static_cast<ptrdiff_t>(stage) * n * E;
  for (size_t i = 0; i < n_of(n, E); ++i) {
    r->stages[stage].add(static_cast<double>(ref[i]), static_cast<double>(residual[i]) * r->residual_scale);
  }
}

// KL(softmax(f) || softmax(scale q)) of one row of n logits, nats.
double row_kl(const float* f, const int32_t* q, int32_t n, double scale) {
  double fm = -HUGE_VAL, qm = -HUGE_VAL;
  for (int32_t v = 0; v < n; ++v) {
    fm = std::fmax(fm, static_cast<double>(f[v]));
    qm = std::fmax(qm, scale * q[v]);
  }
  double fs = 0.0, qs = 0.0;
  for (int32_t v = 0; v < n; ++v) {
    fs += std::exp(static_cast<double>(f[v]) - fm);
    qs += std::exp(scale * q[v] - qm);
  }
  double kl = 0.0;
  for (int32_t v = 0; v < n; ++v) {
    const double lp = static_cast<double>(f[v]) - fm - std::log(fs), lq = scale * q[v] - qm - std::log(qs);
    kl += std::exp(lp) * (lp - lq);
  }
  return kl;
}

size_t report_bytes(const TransformerConfig& c, DType dtype, int32_t max_len) {
  TransformerPlan plan;
  if (plan_transformer_fixed(c, dtype, max_len, 0, &plan) != Status::kOk) return 0;
  const int32_t od = c.output_dim();
  return rounded(n_of(2 * c.num_layers + 1, n_of(max_len, c.embed_dim)), 4) +
         2 * rounded(n_of(max_len, od), 4) + plan.arena_bytes +
         arena_round_up(sizeof(Sqnr) * static_cast<size_t>(2 * c.num_layers + 1));
}

template <typename Act>
Status report(const TransformerConfig& c, const TransformerWeightsF32& wf, const TransformerCalibration& cal,
              int32_t max_len, const typename Types<Act>::Weights& wq, Arena& scratch,
              TransformerQuantReport* rep) {
  const int32_t E = c.embed_dim, L = c.num_layers, od = c.output_dim();
  TransformerPlan plan;
  ATTN_TRY(plan_transformer_fixed(c, Types<Act>::kDType, max_len, 0, &plan));
  const size_t mark = scratch.mark();
  float *snap = nullptr, *fout = nullptr;
  int32_t* qout = nullptr;
  Sqnr* stages = nullptr;
  Status s = [&] {
    ATTN_TRY(scratch.alloc_array(n_of(2 * L + 1, n_of(max_len, E)), &snap));
    ATTN_TRY(scratch.alloc_array(n_of(max_len, od), &fout));
    ATTN_TRY(scratch.alloc_array(n_of(max_len, od), &qout));
    return scratch.alloc_array(2 * static_cast<size_t>(L) + 1, &stages);
  }();
  Sqnr output;
  double kl = 0.0;
  int64_t rows = 0;
  if (s == Status::kOk) {
    for (int32_t i = 0; i <= 2 * L; ++i) stages[i] = Sqnr();
    ReportContext ctx{snap, static_cast<double>(wq.residual_scale), stages};
    detail::ForwardObserver obs;
    obs.fn = observe;
    obs.context = &ctx;
    int64_t at = 0;
    for (int32_t q = 0; q < cal.count && s == Status::kOk; ++q) {
      const int32_t n = cal.lengths[q];
      s = detail::float_forward(c, wf, cal.tokens + at, n, scratch, nullptr, snap, fout);
      if (s == Status::kOk) {
        s = detail::transformer_forward_observed(plan, wq, cal.tokens + at, n, OutputRows::kAll, qout,
                                                 scratch, obs);
      }
      if (s == Status::kOk) {
        for (size_t i = 0; i < n_of(n, od); ++i) {
          output.add(static_cast<double>(fout[i]),
                     static_cast<double>(qout[i]) * static_cast<double>(wq.output_scale));
        }
        if (c.head != LmHead::kNone) {
          for (int32_t i = 0; i < n; ++i) {
            kl += row_kl(fout + static_cast<ptrdiff_t>(i) * od, qout + static_cast<ptrdiff_t>(i) * od, od,
                         static_cast<double>(wq.output_scale));
          }
          rows += n;
        }
      }
      at += n;
    }
    if (s == Status::kOk) {
      rep->embedding_sqnr_db = stages[0].db();
      for (int32_t l = 0; l < L; ++l) {
        rep->attention_sqnr_db[l] = stages[2 * l + 1].db();
        rep->layer_sqnr_db[l] = stages[2 * l + 2].db();
      }
      rep->output_sqnr_db = output.db();
      rep->output_kl = rows > 0 ? kl / static_cast<double>(rows) : 0.0;
    }
  }
  scratch.release(mark);
  return s;
}

// The ranges of the float model w on the calibration: min/max of every
// tensor; then, for the kinds in mse (TransformerRangeKind bits), a second
// forward into one histogram per tensor and the range of least error.
Status calibrate_ranges(const TransformerConfig& c, const TransformerWeightsF32& w,
                        const TransformerCalibration& cal, int32_t max_len, DType dtype, uint32_t mse,
                        Arena& scratch, ModelRanges* ranges) {
  *ranges = ModelRanges();
  const size_t mark = scratch.mark();
  const int32_t L = c.num_layers, count = L * detail::kKinds + 1;
  // The output [max_len, output_dim] fits: the scratch holds the report's beside the forward's.
  float* fout = nullptr;
  detail::Histogram* hist = nullptr;
  uint32_t* counts = nullptr;
  Status s = scratch.alloc_array(n_of(max_len, c.output_dim()), &fout);
  if (s == Status::kOk && mse != 0) s = scratch.alloc_array(static_cast<size_t>(count), &hist);
  if (s == Status::kOk && mse != 0) s = scratch.alloc_array(n_of(count, detail::kRangeBins), &counts);
  const auto all = [&](const detail::Collect* collect, ModelRanges* r) {
    int64_t at = 0;
    Status st = Status::kOk;
    for (int32_t q = 0; q < cal.count && st == Status::kOk; ++q) {
      st = detail::float_forward(c, w, cal.tokens + at, cal.lengths[q], scratch, r, nullptr, fout, collect);
      at += cal.lengths[q];
    }
    return st;
  };
  if (s == Status::kOk) s = all(nullptr, ranges);
  if (s == Status::kOk && mse != 0) {
    // Each tensor's histogram over its min/max range, by kind (attn/transformer_fixed.h's bits).
    const auto range_of = [&](int32_t l, int32_t k) -> Range* {
      if (l == L) return c.head == LmHead::kNone ? &ranges->hidden : &ranges->head_in;
      LayerRanges& r = ranges->layers[l];
      Range* const kinds[detail::kKinds] = {
          &r.attention.query,  &r.attention.q, &r.attention.k, &r.attention.v, &r.attention.context,
          &r.attention.output, &r.ffn_in,      &r.h1,          &r.h3,          &r.g};
      return kinds[k];
    };
    for (int32_t i = 0; i < count; ++i) {
      hist[i] = detail::Histogram();
      hist[i].domain = *range_of(i / detail::kKinds, i % detail::kKinds);
      hist[i].counts = counts + static_cast<ptrdiff_t>(i) * detail::kRangeBins;
      for (int32_t b = 0; b < detail::kRangeBins; ++b) hist[i].counts[b] = 0;
    }
    detail::Collect collect;
    collect.hist = hist;
    ModelRanges again;
    s = all(&collect, &again);
    for (int32_t i = 0; i < count && s == Status::kOk; ++i) {
      const int32_t l = i / detail::kKinds, k = i % detail::kKinds;
      const bool head = l == L;
      if (head && c.head == LmHead::kNone) continue;  // the int32 hidden output never clips
      if ((mse & (head ? kRangeHeadInput : 1u << k)) == 0) continue;
      *range_of(l, k) = detail::choose_range_mse(hist[i], dtype);
      if (!head && k == detail::kAttnIn)
        ranges->layers[l].attention.key = ranges->layers[l].attention.value =
            ranges->layers[l].attention.query;
    }
  }
  scratch.release(mark);
  return s;
}

size_t calibrate_ranges_bytes(const TransformerConfig& c, int32_t max_len, uint32_t mse) {
  const size_t count = n_of(c.num_layers, detail::kKinds) + 1;
  return rounded(n_of(max_len, c.output_dim()), 4) + detail::float_forward_bytes(c, max_len) +
         (mse != 0 ? arena_round_up(count * sizeof(detail::Histogram)) +
                         rounded(count * detail::kRangeBins, sizeof(uint32_t))
                   : 0);
}

// max |x| per channel of the smoothed kinds (detail::Collect::chan) over the calibration, into chan.
Status channel_maxima(const TransformerConfig& c, const TransformerWeightsF32& w,
                      const TransformerCalibration& cal, int32_t max_len, Arena& scratch, double* chan) {
  for (size_t i = 0; i < n_of(c.num_layers, detail::chan_stride(c)); ++i) chan[i] = 0.0;
  const size_t mark = scratch.mark();
  float* fout = nullptr;
  Status s = scratch.alloc_array(n_of(max_len, c.output_dim()), &fout);
  detail::Collect collect;
  collect.chan = chan;
  int64_t at = 0;
  for (int32_t q = 0; q < cal.count && s == Status::kOk; ++q) {
    s = detail::float_forward(c, w, cal.tokens + at, cal.lengths[q], scratch, nullptr, nullptr, fout,
                              &collect);
    at += cal.lengths[q];
  }
  scratch.release(mark);
  return s;
}

// The integer model of w with the activation ranges `ranges`, into `st`.
template <typename Act>
// cal, max_len: the calibration, for int4 FFN weights by error feedback (options.int4).
Status build_model(const TransformerConfig& c, const TransformerWeightsF32& w, const ModelRanges& ranges,
                   const TransformerQuantOptions& options, const TransformerCalibration& cal, int32_t max_len,
                   Arena& st, Arena& scratch, typename Types<Act>::Weights* out) {
  const int32_t bits = options.residual_bits;
  using Ty = Types<Act>;
  constexpr DType kDType = Ty::kDType;
  constexpr bool kS8 = kDType == DType::kS8;
  *out = typename Ty::Weights();
  const int32_t E = c.embed_dim, F = c.ffn_dim, L = c.num_layers, V = c.vocab_size;
  const AttentionConfig ac = c.attention();
  const double s_r = scale_of(ranges.residual_max, bits);
  out->residual_scale = static_cast<float>(s_r);

  typename Ty::Layer* layers = nullptr;
  ATTN_TRY(st.alloc_array(static_cast<size_t>(L), &layers));
  for (int32_t l = 0; l < L; ++l) layers[l] = typename Ty::Layer();

  // Embeddings (the token rows' scales kept for a tied head).
  const size_t mark = scratch.mark();
  double* token_scales = nullptr;
  ATTN_TRY(scratch.alloc_array(static_cast<size_t>(V), &token_scales));
  const auto done = [&](Status s) {  // on failure, the scratch back (the token scales live on)
    if (s != Status::kOk) scratch.release(mark);
    return s;
  };
  ATTN_TRY(done(embedding(w.token_embedding, V, E, s_r, st, scratch, &out->token_embedding, token_scales)));
  if (c.learned_positions) {
    ATTN_TRY(done(
        embedding(w.position_embedding, c.max_positions, E, s_r, st, scratch, &out->position_embedding)));
  }
  if (c.type_vocab_size > 0) {
    int32_t* t = nullptr;
    ATTN_TRY(done(st.alloc_array(static_cast<size_t>(E), &t)));
    for (int32_t e = 0; e < E; ++e) {
      const double v = std::round(static_cast<double>(w.type_embedding[e]) / s_r);
      if (!(std::fabs(v) < 2147483647.0)) return done(Status::kBadQuantParams);
      t[e] = static_cast<int32_t>(v);
    }
    out->type_embedding = t;
  }
  if (c.embedding_norm) ATTN_TRY(done(make_norm(c, w.embedding_norm, s_r, s_r, 0, st, &out->embedding_norm)));

  QuantizeOptions qo;
  qo.max_positions = c.max_positions;
  const bool ffn4 = options.int4 != Int4Weights::kNone, all4 = options.int4 == Int4Weights::kAll;
  qo.int4_weights = all4;
  for (int32_t l = 0; l < L; ++l) {
    const LayerWeightsF32& lw = w.layers[l];
    const LayerRanges& r = ranges.layers[l];
    typename Ty::Layer& ly = layers[l];
    ActivationQuant act;
    // The model's forward fixes each block's mask and its layers were
    // calibrated with it: whole models record "any mask" (attn/FORMAT.md).
    CalibrationRanges ar = r.attention;
    ar.mask_coverage = MaskCoverage::kAnyMask;
    ar.mask_key_length = 0;
    ar.mixed_masks = false;
    if constexpr (kS8) {
      ATTN_TRY(done(quantize_attention_s8(ac, lw.attention, ar, st, &ly.attention, &act, nullptr, qo)));
    } else {
      ATTN_TRY(done(quantize_attention_s16(ac, lw.attention, ar, st, &ly.attention, &act, nullptr, qo)));
    }
    const double s_ai = static_cast<double>(act.query.scale);
    ly.attention_input_scale = act.query.scale;
    ly.attention_output_scale = act.output.scale;
    if (c.pre_norm) {
      ATTN_TRY(done(make_norm(c, lw.norm1, s_r, s_ai, act.query.zero_point, st, &ly.norm1)));
    } else {
      ATTN_TRY(done(rescale(s_r / s_ai, act.query.zero_point, &ly.attn_in)));
      ATTN_TRY(done(make_norm(c, lw.norm1, s_r, s_r, 0, st, &ly.norm1)));
    }
    ATTN_TRY(done(rescale(static_cast<double>(act.output.scale) / s_r, act.output.zero_point, &ly.attn_out)));
    const QuantParams q_in = choose_activation_quant(r.ffn_in, kDType);
    const QuantParams q_h1 = choose_activation_quant(r.h1, kDType);
    const QuantParams q_h3 = choose_activation_quant(r.h3, kDType);
    const QuantParams q_g = choose_activation_quant(r.g, kDType);
    if (c.pre_norm) {
      ATTN_TRY(
          done(make_norm(c, lw.norm2, s_r, static_cast<double>(q_in.scale), q_in.zero_point, st, &ly.norm2)));
    } else {
      ATTN_TRY(done(rescale(s_r / static_cast<double>(q_in.scale), q_in.zero_point, &ly.ffn_in)));
      ATTN_TRY(done(make_norm(c, lw.norm2, s_r, s_r, 0, st, &ly.norm2)));
    }
    const FfnWeightsF32& fw = lw.ffn;
    auto& f = ly.ffn;
    const float* b1 = c.ffn_bias ? fw.b1 : nullptr;
    const float* b2 = c.ffn_bias ? fw.b2 : nullptr;
    const float* b3 = c.ffn_bias ? fw.b3 : nullptr;
    // Int4 FFN weights by error feedback: the second moments of their inputs on the calibration set.
    const size_t moments_mark = scratch.mark();
    double *hh = nullptr, *hg = nullptr;
    if (ffn4 && options.int4_error_feedback && E <= detail::kGptqMaxIn && F <= detail::kGptqMaxIn) {
      ATTN_TRY(done(scratch.alloc_array(n_of(E, E), &hh)));
      ATTN_TRY(done(scratch.alloc_array(n_of(F, F), &hg)));
      ATTN_TRY(done(detail::ffn_second_moments(c, w, cal, max_len, l, scratch, hh, hg)));
    }
    ATTN_TRY(done(projection(fw.w1, b1, F, E, q_in, q_h1, Ty::kMaxShift, ffn4, st, scratch, &f.w1, hh)));
    if (c.gated_ffn)
      ATTN_TRY(done(projection(fw.w3, b3, F, E, q_in, q_h3, Ty::kMaxShift, ffn4, st, scratch, &f.w3, hh)));
    // W2 onto the residual grid: its "output scale" is s_r.
    QuantParams q_res;
    q_res.scale = static_cast<float>(s_r);
    ATTN_TRY(done(projection(fw.w2, b2, E, F, q_g, q_res, Ty::kMaxShift, ffn4, st, scratch, &f.w2, hg)));
    scratch.release(moments_mark);
    if constexpr (kS8) {
      f.h1_zero_point = q_h1.zero_point;
      f.h3_zero_point = c.gated_ffn ? q_h3.zero_point : 0;
      f.g_zero_point = q_g.zero_point;
    }
    ATTN_TRY(done(ffn_tables(c, r, q_h1, q_h3, q_g, st, &f)));
  }

  // Output.
  if (c.head == LmHead::kNone) {
    double s_out = s_r;
    if (c.final_norm) {
      const Range h = ranges.hidden;
      s_out = scale_of(
          std::fmax(std::fabs(static_cast<double>(h.min)), std::fabs(static_cast<double>(h.max))), bits);
      ATTN_TRY(done(make_norm(c, w.final_norm, s_r, s_out, 0, st, &out->final_norm)));
    }
    out->output_scale = static_cast<float>(s_out);
  } else {
    const QuantParams q_hi = choose_activation_quant(ranges.head_in, kDType);
    if (c.final_norm) {
      ATTN_TRY(done(make_norm(c, w.final_norm, s_r, static_cast<double>(q_hi.scale), q_hi.zero_point, st,
                              &out->final_norm)));
    } else {
      ATTN_TRY(done(rescale(s_r / static_cast<double>(q_hi.scale), q_hi.zero_point, &out->head_in)));
    }
    const double s_logit = scale_of(ranges.logit_max, bits);
    out->output_scale = static_cast<float>(s_logit);
    const int8_t* hw = out->token_embedding.table;
    double* hs = token_scales;
    double* untied_scales = nullptr;
    if (c.head == LmHead::kUntied) {
      ATTN_TRY(done(scratch.alloc_array(static_cast<size_t>(V), &untied_scales)));
      int8_t* q = nullptr;
      if (all4 && E % 2 != 0) return done(Status::kBadShape);
      ATTN_TRY(done(quantize_rows(w.lm_head, V, E, all4, st, &q, untied_scales)));
      hw = q;
      hs = untied_scales;
    }
    int32_t *mult = nullptr, *shift = nullptr;
    ATTN_TRY(
        done(multipliers(hs, V, static_cast<double>(q_hi.scale), s_logit, Ty::kMaxShift, st, &mult, &shift)));
    auto& h = out->head;
    h.weight = hw;
    h.multiplier = mult;
    h.shift = shift;
    if constexpr (kS8) {
      int32_t* bias = nullptr;
      ATTN_TRY(done(st.alloc_array(static_cast<size_t>(V), &bias)));
      for (int32_t v = 0; v < V; ++v) {
        int32_t wsum = 0;
        for (int32_t e = 0; e < E; ++e) wsum += hw[static_cast<ptrdiff_t>(v) * E + e];
        bias[v] = -q_hi.zero_point * wsum;
      }
      h.bias = bias;
    }
    if (c.head == LmHead::kUntied && all4) {  // the bias above read the int8 copy
      h.weight_s4 = detail::pack_int4_in_place(const_cast<int8_t*>(hw), n_of(V, E));
      h.weight = nullptr;
    }
  }
  out->layers = layers;
  scratch.release(mark);
  return Status::kOk;
}

template <typename Act>
Status quantize_model(const TransformerConfig& c, const TransformerWeightsF32& w,
                      const TransformerCalibration& cal, Arena& st, Arena& scratch,
                      typename Types<Act>::Weights* out, TransformerQuantReport* rep,
                      const TransformerQuantOptions& options) {
  using Ty = Types<Act>;
  if (out == nullptr) return Status::kNullArgument;
  *out = typename Ty::Weights();
  ATTN_TRY(detail::check_model_config(c));
  ATTN_TRY(check_weights_f32(c, w));
  if (options.residual_bits < 8 || options.residual_bits > 28) return Status::kBadQuantParams;
  if (!(options.smooth <= 1.0f) || (options.mse_ranges & ~kRangeAll) != 0) return Status::kBadQuantParams;
  int32_t max_len = 0;
  ATTN_TRY(check_calibration(c, cal, &max_len));
  const uint32_t mse = options.mse_ranges;
  static_assert(sizeof(ModelRanges) < 65536, "ranges on the stack");

  // Smoothing: the calibration's max |x| per channel, once, for every strength tried.
  const size_t chan_mark = scratch.mark();
  double* chan = nullptr;
  if (options.smooth != 0.0f) {
    ATTN_TRY(scratch.alloc_array(n_of(c.num_layers, detail::chan_stride(c)), &chan));
    const Status s = channel_maxima(c, w, cal, max_len, scratch, chan);
    if (s != Status::kOk) scratch.release(chan_mark);
    ATTN_TRY(s);
  }
  // One model: w smoothed with strength a (0: none) by the maxima chan, ranges
  // by `kinds` from the sequences fit, into st; measured against the float
  // model w on the sequences eval when r is not null.
  const auto run = [&](double a, uint32_t kinds, const TransformerCalibration& fit,
                       const TransformerCalibration& eval, typename Ty::Weights* o, TransformerQuantReport* r,
                       double* residual_max) {
    const size_t mark = scratch.mark();
    TransformerWeightsF32 ws = w;
    ModelRanges ranges;
    Status s = a > 0.0 ? detail::smooth_weights(c, w, chan, a, scratch, &ws) : Status::kOk;
    if (s == Status::kOk) s = calibrate_ranges(c, ws, fit, max_len, Ty::kDType, kinds, scratch, &ranges);
    if (s == Status::kOk) s = build_model<Act>(c, ws, ranges, options, fit, max_len, st, scratch, o);
    if (s == Status::kOk && r != nullptr) s = report<Act>(c, w, eval, max_len, *o, scratch, r);
    *residual_max = ranges.residual_max;
    scratch.release(mark);
    return s;
  };
  // A trial: its output SQNR and KL, the storage given back.
  const size_t st_mark = st.mark();
  const auto trial = [&](double a, uint32_t kinds, const TransformerCalibration& fit,
                         const TransformerCalibration& eval, double* db, double* kl) {
    typename Ty::Weights tmp;
    TransformerQuantReport r;
    double unused = 0.0;
    const Status s = run(a, kinds, fit, eval, &tmp, &r, &unused);
    st.release(st_mark);
    *db = r.output_sqnr_db;
    *kl = r.output_kl;
    return s;
  };
  // Better: with a head, the lower KL of the next-token distributions; else the higher SQNR.
  const bool by_kl = c.head != LmHead::kNone;
  const auto better = [&](double db, double kl, double best_db, double best_kl) {
    return by_kl ? kl < best_kl : db > best_db;
  };
  TransformerQuantReport stages;
  double a = static_cast<double>(options.smooth);
  Status s = Status::kOk;
  if (options.compare) {
    s = trial(0.0, 0, cal, cal, &stages.minmax_output_sqnr_db, &stages.minmax_output_kl);
    if (s == Status::kOk) s = trial(0.0, mse, cal, cal, &stages.mse_output_sqnr_db, &stages.mse_output_kl);
  }
  if (s == Status::kOk && a < 0.0) {
    // The strength of the best output, none included, measured on sequences
    // the maxima and ranges did not see: the last 10% (at least one) held out
    // of them (with one sequence, that one). The model then takes every sequence.
    TransformerCalibration fit = cal, held = cal;
    if (cal.count >= 2) {
      const int32_t kept = cal.count - std::max(1, cal.count / 10);
      fit.count = kept;
      int64_t at = 0;
      for (int32_t q = 0; q < kept; ++q) at += cal.lengths[q];
      held.tokens = cal.tokens + at;
      held.lengths = cal.lengths + kept;
      held.count = cal.count - kept;
      s = channel_maxima(c, w, fit, max_len, scratch, chan);
    }
    double best_db = 0.0, best_kl = 0.0;
    if (s == Status::kOk) s = trial(0.0, mse, fit, held, &best_db, &best_kl);
    stages.smooth_none_sqnr_db = best_db;
    stages.smooth_none_kl = best_kl;
    a = 0.0;
    for (int32_t k = 0; k < kSmoothGridSize && s == Status::kOk; ++k) {
      double db = 0.0, kl = 0.0;
      s = trial(static_cast<double>(kSmoothGrid[k]), mse, fit, held, &db, &kl);
      stages.smooth_strength[k] = kSmoothGrid[k];
      stages.smooth_sqnr_db[k] = db;
      stages.smooth_kl[k] = kl;
      stages.smooth_tried = k + 1;
      if (s == Status::kOk && better(db, kl, best_db, best_kl)) {
        best_db = db;
        best_kl = kl;
        a = static_cast<double>(kSmoothGrid[k]);
      }
    }
    if (s == Status::kOk && cal.count >= 2 && a > 0.0) s = channel_maxima(c, w, cal, max_len, scratch, chan);
  }
  double residual_max = 0.0;
  TransformerQuantReport measured;
  const bool measure = rep != nullptr && options.report;
  if (s == Status::kOk) s = run(a, mse, cal, cal, out, measure ? &measured : nullptr, &residual_max);
  scratch.release(chan_mark);
  if (s != Status::kOk) {
    st.release(st_mark);
    *out = typename Ty::Weights();
    return s;
  }
  if (rep != nullptr) {
    *rep = stages;
    if (measure) {
      rep->embedding_sqnr_db = measured.embedding_sqnr_db;
      for (int32_t l = 0; l < c.num_layers; ++l) {
        rep->attention_sqnr_db[l] = measured.attention_sqnr_db[l];
        rep->layer_sqnr_db[l] = measured.layer_sqnr_db[l];
      }
      rep->output_sqnr_db = measured.output_sqnr_db;
      rep->output_kl = measured.output_kl;
    }
    rep->num_layers = c.num_layers;
    rep->residual_max = static_cast<float>(residual_max);
    rep->smooth_used = static_cast<float>(a);
  }
  return Status::kOk;
}

size_t projection_bytes(int32_t out, int32_t in, size_t bias_bytes) {
  return rounded(n_of(out, in), 1) + 2 * rounded(out, 4) + (bias_bytes != 0 ? rounded(out, bias_bytes) : 0);
}

}  // namespace

Status quantize_transformer_storage_bytes(const TransformerConfig& c, DType dtype, size_t* bytes) {
  if (bytes == nullptr) return Status::kNullArgument;
  *bytes = 0;
  ATTN_TRY(detail::check_model_config(c));
  if (dtype != DType::kS8 && dtype != DType::kS16) return Status::kBadDtype;
  const bool s8 = dtype == DType::kS8;
  const int32_t E = c.embed_dim, F = c.ffn_dim, L = c.num_layers, V = c.vocab_size, P = c.max_positions;
  const size_t layer_struct = s8 ? sizeof(LayerWeightsS8) : sizeof(LayerWeightsS16);
  const bool norm_bias = c.norm == NormKind::kLayerNorm && c.norm_bias;
  const size_t norm = rounded(E, 4) + (norm_bias ? rounded(E, 4) : 0);
  QuantizeOptions qo;
  qo.max_positions = P;
  const AttentionConfig ac = c.attention();
  size_t b = arena_round_up(layer_struct * static_cast<size_t>(L));
  b += rounded(n_of(V, E), 1) + 2 * rounded(V, 4);                           // token embedding
  if (c.learned_positions) b += rounded(n_of(P, E), 1) + 2 * rounded(P, 4);  // positions
  if (c.type_vocab_size > 0) b += rounded(E, 4);
  if (c.embedding_norm) b += norm;
  const size_t bb = s8 ? 4 : (c.ffn_bias ? 8 : 0);
  size_t layer = quantize_attention_storage_bytes(ac, dtype, qo) + 2 * norm + projection_bytes(F, E, bb) +
                 projection_bytes(E, F, bb) + (c.gated_ffn ? projection_bytes(F, E, bb) : 0);
  if (s8) {
    layer += c.gated_ffn ? rounded(256, 2) : rounded(256, 1);
  } else {
    layer += rounded(kActTableS16Entries, 4);
  }
  b += layer * static_cast<size_t>(L);
  if (c.final_norm) b += norm;
  if (c.head != LmHead::kNone) {
    if (c.head == LmHead::kUntied) b += rounded(n_of(V, E), 1);
    b += 2 * rounded(V, 4) + (s8 ? rounded(V, 4) : 0);
  }
  *bytes = b;
  return Status::kOk;
}

Status quantize_transformer_scratch_bytes(const TransformerConfig& c, DType dtype, int32_t max_len,
                                          size_t* scratch_bytes, const TransformerQuantOptions& options) {
  if (scratch_bytes == nullptr) return Status::kNullArgument;
  *scratch_bytes = 0;
  ATTN_TRY(detail::check_model_config(c));
  if (dtype != DType::kS8 && dtype != DType::kS16) return Status::kBadDtype;
  if (max_len < 1) return Status::kBadQueryLength;
  if (max_len > c.max_positions) return Status::kSequenceTooLong;
  const int32_t V = c.vocab_size;
  const int32_t rows = std::max({V, c.ffn_dim, c.embed_dim, c.max_positions});
  // Quantizing: the token scales, and (untied head) the head's, plus one row-scale array.
  const size_t quantizing = 3 * rounded(rows, 8);
  const size_t forward = detail::float_forward_bytes(c, max_len);
  const size_t rep = report_bytes(c, dtype, max_len);
  // Smoothing: the channel maxima throughout, and a smoothed copy of the layers per model built.
  const size_t smooth = options.smooth != 0.0f ? rounded(n_of(c.num_layers, detail::chan_stride(c)), 8) +
                                                     detail::smooth_weights_bytes(c)
                                               : 0;
  size_t int4 = 0;
  const int32_t E = c.embed_dim, F = c.ffn_dim;
  if (options.int4 != Int4Weights::kNone && options.int4_error_feedback && E <= detail::kGptqMaxIn &&
      F <= detail::kGptqMaxIn) {
    // Int4 FFN by error feedback, beside the token scales: the second moments
    // [E, E] and [F, F], then either their calibration forwards or a
    // projection's row scales and the error feedback's own.
    const size_t moments = rounded(n_of(E, E), 8) + rounded(n_of(F, F), 8);
    const size_t during = std::max(detail::ffn_second_moments_bytes(c, max_len),
                                   rounded(std::max(E, F), 8) + detail::gptq_scratch_bytes(std::max(E, F)));
    int4 = rounded(V, 8) + moments + during;
  }
  *scratch_bytes = smooth + std::max({quantizing, forward + rep,
                                      calibrate_ranges_bytes(c, max_len, options.mse_ranges), int4});
  return Status::kOk;
}

Status quantize_transformer_s8(const TransformerConfig& config, const TransformerWeightsF32& weights,
                               const TransformerCalibration& calibration, Arena& storage, Arena& scratch,
                               TransformerWeightsS8* out, TransformerQuantReport* report,
                               const TransformerQuantOptions& options) {
  return quantize_model<int8_t>(config, weights, calibration, storage, scratch, out, report, options);
}

Status quantize_transformer_s16(const TransformerConfig& config, const TransformerWeightsF32& weights,
                                const TransformerCalibration& calibration, Arena& storage, Arena& scratch,
                                TransformerWeightsS16* out, TransformerQuantReport* report,
                                const TransformerQuantOptions& options) {
  return quantize_model<int16_t>(config, weights, calibration, storage, scratch, out, report, options);
}

}  // namespace attn
