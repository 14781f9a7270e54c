// calibrate_transformer: the float forward of a whole model (attn/transformer.h
// semantics: scalar, norms and activations in double), kept stage by stage
// for the converter (quantize_transformer.cpp): the min/max of every tensor
// the integer model quantizes, the residual snapshots and the output of the
// report. Offline code; the integer run-time path never calls it.
//
// The forward is model/model_forward.h's (the same one as the f32 and the
// integer forwards) over CalibrationSteps, scalar in double; it records
// through the forward's observer hooks (Recorder).
#include <cmath>

#include "attn/quantize.h"
#include "model/model_forward.h"
#include "model/transformer_fixed_common.h"
#include "quant/calibrate_transformer.h"

namespace attn {
namespace detail {
namespace {

double max_abs(Range r) {
  return std::fmax(std::fabs(static_cast<double>(r.min)), std::fabs(static_cast<double>(r.max)));
}

// y [rows, out] = x [rows, in] W^T + b (b null: none), W [out, in].
void linear(ConstMatF32 x, const float* w, const float* b, MatF32 y) {
  linear_double(x, ConstMatF32{w, y.cols, x.cols, x.cols}, b, y);
}

// y = x, row by row.
void copy_rows(ConstMatF32 x, MatF32 y) {
  for (int32_t i = 0; i < x.rows; ++i)
    for (int32_t e = 0; e < x.cols; ++e) y.row(i)[e] = x.row(i)[e];
}

// The converter's observer (model/model_forward.h's hooks): the min/max of
// every tensor the integer model quantizes, max |x| of the residual stream,
// the residual snapshots of each stage; false finite: a value was not.
struct Recorder : NoObserver {
  const TransformerConfig& c;
  ModelRanges& r;
  float* snapshots;   // [2 L + 1, n, E], or null
  Collect collect;    // histograms and channel maxima, each or both null
  int32_t layer = 0;  // the layer whose attention runs (sink)
  bool finite = true;

  Recorder(const TransformerConfig& config, ModelRanges& ranges, float* snaps, const Collect* more)
      : c(config), r(ranges), snapshots(snaps), collect(more != nullptr ? *more : Collect()) {}
  void widen_into(Range& range, ConstMatF32 v) {  // v dense
    finite = finite && widen(range, v.data, n_of(v.rows, v.cols));
  }
  // Tensor `kind` of layer l, dense [rows, cols]: into its histogram, and
  // the maxima per channel of the smoothed kinds.
  void collect_tensor(int32_t l, int32_t kind, const float* x, int32_t rows, int32_t cols) {
    if (collect.hist != nullptr) histogram_add(collect.hist[l * kKinds + kind], x, n_of(rows, cols));
    if (collect.chan == nullptr) return;
    const int32_t E = c.embed_dim;
    const int32_t offset = kind == kAttnIn ? 0 : kind == kFfnIn ? E : kind == kG ? 2 * E : 2 * E + c.ffn_dim;
    if (kind != kAttnIn && kind != kFfnIn && kind != kG && kind != kContext) return;
    double* m = collect.chan + static_cast<ptrdiff_t>(l) * chan_stride(c) + offset;
    for (int32_t i = 0; i < rows; ++i) {
      for (int32_t j = 0; j < cols; ++j) {
        m[j] = std::fmax(m[j], std::fabs(static_cast<double>(x[static_cast<ptrdiff_t>(i) * cols + j])));
      }
    }
  }
  void collect_tensor(int32_t l, int32_t kind, ConstMatF32 v) {
    collect_tensor(l, kind, v.data, v.rows, v.cols);
  }
  static void sink(void* context, int32_t kind, const float* x, int32_t rows, int32_t cols) {
    auto* self = static_cast<Recorder*>(context);
    self->collect_tensor(self->layer, kind, x, rows, cols);
  }
  void residual(ConstMatF32 x) {
    Range t;
    widen_into(t, x);
    r.residual_max = std::fmax(r.residual_max, max_abs(t));
  }
  void stage(int32_t s, ConstMatF32 x) {
    residual(x);
    if (snapshots == nullptr) return;
    float* dst = snapshots + static_cast<ptrdiff_t>(s) * x.rows * x.cols;
    for (size_t i = 0; i < n_of(x.rows, x.cols); ++i) dst[i] = x.data[i];
  }
  void ffn_in(int32_t l, ConstMatF32 h) {
    widen_into(r.layers[l].ffn_in, h);
    collect_tensor(l, kFfnIn, h);
  }
  void ffn_up(int32_t l, ConstMatF32 u, ConstMatF32 g) {
    widen_into(r.layers[l].h1, u);
    collect_tensor(l, kH1, u);
    if (c.gated_ffn) {
      widen_into(r.layers[l].h3, g);
      collect_tensor(l, kH3, g);
    }
  }
  void ffn_act(int32_t l, ConstMatF32 u) {
    widen_into(r.layers[l].g, u);
    collect_tensor(l, kG, u);
  }
  void ffn_down(int32_t l, ConstMatF32 y) { widen_into(r.layers[l].ffn_out, y); }
  void final_norm(ConstMatF32 h) {
    widen_into(c.head == LmHead::kNone ? r.hidden : r.head_in, h);
    if (collect.hist != nullptr)
      histogram_add(collect.hist[c.num_layers * kKinds], h.data, n_of(h.rows, h.cols));
  }
  bool every_row() const { return true; }
  void logit(double v) {  // each logit, in double
    finite = finite && std::isfinite(v);
    r.logit_max = std::fmax(r.logit_max, std::fabs(v));
  }
};

// x += y.
void add_rows(MatF32 x, ConstMatF32 y) {
  for (int32_t i = 0; i < x.rows; ++i)
    for (int32_t e = 0; e < x.cols; ++e) x.row(i)[e] += y.row(i)[e];
}

// The steps of detail::forward() (model/model_forward.h), scalar in double:
// norms, activations, projections and logits summed in double, each value
// stored as float. block: the attention block's plan (a forward, causal if
// the config says so), widening rec's ranges; rec also sees every logit.
struct CalibrationSteps {
  using Res = float;  // the residual stream
  using Act = float;  // a sub-layer's input and output
  using Layer = LayerWeightsF32;
  static constexpr bool kAttendInPlace = false;          // y has its own rows (the FFN's y_t too)
  static constexpr bool kLastFfnOutputRowsOnly = false;  // the ranges are over every row

  const TransformerConfig& c;
  const TransformerWeightsF32& w;
  const Plan& block;
  Recorder& rec;

  // y = N(x) row by row (y may be x).
  void norm_rows(const NormWeightsF32& p, ConstMatF32 x, MatF32 y) const {
    const int32_t E = x.cols;
    for (int32_t i = 0; i < x.rows; ++i) {
      const float* xr = x.row(i);
      float* yr = y.row(i);
      double mean = 0.0;
      if (c.norm == NormKind::kLayerNorm) {
        for (int32_t e = 0; e < E; ++e) mean += static_cast<double>(xr[e]);
        mean /= E;
      }
      double var = 0.0;
      for (int32_t e = 0; e < E; ++e)
        var += (static_cast<double>(xr[e]) - mean) * (static_cast<double>(xr[e]) - mean);
      var /= E;
      const double inv = 1.0 / std::sqrt(var + static_cast<double>(c.norm_eps));
      const bool bias = c.norm == NormKind::kLayerNorm && c.norm_bias && p.bias != nullptr;
      for (int32_t e = 0; e < E; ++e) {
        const double v = (static_cast<double>(xr[e]) - mean) * inv * static_cast<double>(p.weight[e]) +
                         (bias ? static_cast<double>(p.bias[e]) : 0.0);
        yr[e] = static_cast<float>(v);
      }
    }
  }

  // x [n, E] = token embedding (+ learned positions pos0 ..) (+ type row 0), summed in double.
  void embed(const int32_t* tokens, int32_t pos0, MatF32 x) const {
    const int32_t E = c.embed_dim;
    for (int32_t i = 0; i < x.rows; ++i) {
      for (int32_t e = 0; e < E; ++e) {
        double v = static_cast<double>(w.token_embedding[static_cast<ptrdiff_t>(tokens[i]) * E + e]);
        if (c.learned_positions)
          v += static_cast<double>(w.position_embedding[static_cast<ptrdiff_t>(pos0 + i) * E + e]);
        if (c.type_vocab_size > 0) v += static_cast<double>(w.type_embedding[e]);
        x.row(i)[e] = static_cast<float>(v);
      }
    }
  }

  // h = N_k(x) (pre-norm), or x (post-norm): sub-layer k's input (1: attention, 2: FFN).
  void sublayer_in(const LayerWeightsF32& lw, int32_t k, ConstMatF32 x, MatF32 h) const {
    if (c.pre_norm) return norm_rows(k == 1 ? lw.norm1 : lw.norm2, x, h);
    copy_rows(x, h);
  }

  // y [n, E] = layer l's attention block over h [n, E], widening its ranges.
  Status attend(int32_t l, ConstMatF32 h, MatF32 y, Arena& arena) const {
    Mask mask;
    mask.causal = c.causal;
    IoF32 io;
    io.query = io.key = io.value = h.data;
    io.output = y.data;
    rec.layer = l;
    TensorSink sink;
    if (rec.collect.hist != nullptr || rec.collect.chan != nullptr) {
      sink.fn = Recorder::sink;
      sink.context = &rec;
    }
    return calibrate_attention_observed(block, w.layers[l].attention, mask, io, arena,
                                        &rec.r.layers[l].attention, sink);
  }

  // x += y.
  void add_residual(const LayerWeightsF32&, MatF32 x, ConstMatF32 y) const { add_rows(x, y); }

  // u [rows, F] = h W1^T + b1; gated: g [rows, F] = h W3^T + b3.
  void ffn_up(const FfnWeightsF32& f, ConstMatF32 h, MatF32 u, MatF32 g) const {
    linear(h, f.w1, c.ffn_bias ? f.b1 : nullptr, u);
    if (c.gated_ffn) linear(h, f.w3, c.ffn_bias ? f.b3 : nullptr, g);
  }

  // u = act(u) (in double); gated: act(u) * g (no weights in float).
  void ffn_act(const FfnWeightsF32&, MatF32 u, ConstMatF32 g) const {
    for (int32_t i = 0; i < u.rows; ++i) {
      for (int32_t k = 0; k < u.cols; ++k) {
        float& v = u.row(i)[k];
        v = static_cast<float>(activation(c.activation, static_cast<double>(v)));
        if (c.gated_ffn) v *= g.row(i)[k];
      }
    }
  }

  // x += y, y [rows, E] = u W2^T + b2.
  void ffn_down(const FfnWeightsF32& f, ConstMatF32 u, MatF32 y, MatF32 x) const {
    linear(u, f.w2, c.ffn_bias ? f.b2 : nullptr, y);
    add_rows(x, y);
  }

  // h = N(x) with the final norm, or x.
  void final_norm(ConstMatF32 x, MatF32 h) const {
    if (c.final_norm) return norm_rows(w.final_norm, x, h);
    copy_rows(x, h);
  }

  // out [m, vocab] = h W^T in double (W: the token embedding when tied), each logit seen by rec.
  void lm_head(ConstMatF32 h, MatF32 out) const {
    const float* table = c.head == LmHead::kTied ? w.token_embedding : w.lm_head;  // [vocab, E]
    linear_double_each(h, ConstMatF32{table, c.vocab_size, h.cols, h.cols}, nullptr,
                       [&](int32_t i, int32_t v, double logit) {
                         rec.logit(logit);
                         out.row(i)[v] = static_cast<float>(logit);
                       });
  }
};

}  // namespace

double activation(Activation a, double x) {
  switch (a) {
    case Activation::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::kGeluTanh: {
      const double k = std::sqrt(2.0 / 3.14159265358979323846);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case Activation::kRelu:
      return x > 0.0 ? x : 0.0;
    case Activation::kSilu:
      return x / (1.0 + std::exp(-x));
  }
  return x;
}

size_t float_forward_bytes(const TransformerConfig& c, int32_t n) {
  const AttentionConfig ac = c.attention();
  return 3 * arena_round_up(n_of(n, c.embed_dim) * 4) + 2 * arena_round_up(n_of(n, c.ffn_dim) * 4) +
         calibrate_attention_arena_bytes(ac, n, n);
}

Status float_forward(const TransformerConfig& c, const TransformerWeightsF32& w, const int32_t* tokens,
                     int32_t n, Arena& scratch, ModelRanges* ranges, float* snapshots, float* out,
                     const Collect* collect) {
  Plan block;
  ATTN_TRY(plan_attention(c.attention(), DType::kF32, n, n, &block));
  ModelRanges local;
  Recorder rec(c, ranges != nullptr ? *ranges : local, snapshots, collect);
  const CalibrationSteps steps{c, w, block, rec};
  const size_t mark = scratch.mark();
  // Positions 0 .. n - 1, every output row, one FFN tile of n rows.
  const Status s = forward(steps, rec, tokens, n, 0, output_range(OutputRows::kAll, n), n, out, scratch);
  scratch.release(mark);
  if (s != Status::kOk) return s;
  return rec.finite ? Status::kOk : Status::kBadQuantParams;
}

}  // namespace detail
}  // namespace attn
