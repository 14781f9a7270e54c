// calibrate_transformer: the float forward of a whole model (attn/transformer.h
// semantics: scalar, norms and activations in double), kept stage by stage
// for the converter (quantize_transformer.cpp): the min/max of every tensor
// the integer model quantizes, the residual snapshots and the output of the
// report. Offline code; the integer run-time path never calls it.
#include <cmath>

#include "attn/quantize.h"
#include "model/transformer_fixed_common.h"
#include "quant/calibrate_transformer.h"

namespace attn {
namespace detail {
namespace {

double max_abs(Range r) {
  return std::fmax(std::fabs(static_cast<double>(r.min)), std::fabs(static_cast<double>(r.max)));
}

// y [n, out] = x [n, in] W^T + b (b null: none), double sums.
void linear(const float* x, int32_t n, int32_t in, const float* w, const float* b, int32_t out, float* y) {
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t o = 0; o < out; ++o) {
      double acc = b != nullptr ? static_cast<double>(b[o]) : 0.0;
      const float* wr = w + static_cast<ptrdiff_t>(o) * in;
      const float* xr = x + static_cast<ptrdiff_t>(i) * in;
      for (int32_t k = 0; k < in; ++k) acc += static_cast<double>(xr[k]) * static_cast<double>(wr[k]);
      y[static_cast<ptrdiff_t>(i) * out + o] = static_cast<float>(acc);
    }
  }
}

// y = norm(x) row by row (y may be x).
void norm(const TransformerConfig& c, const NormWeightsF32& p, const float* x, int32_t n, float* y) {
  const int32_t E = c.embed_dim;
  for (int32_t i = 0; i < n; ++i) {
    const float* xr = x + static_cast<ptrdiff_t>(i) * E;
    float* yr = y + static_cast<ptrdiff_t>(i) * E;
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
                     int32_t n, Arena& scratch, ModelRanges* ranges, float* snapshots, float* out) {
  const int32_t E = c.embed_dim, F = c.ffn_dim, L = c.num_layers;
  const AttentionConfig ac = c.attention();
  Plan plan;
  ATTN_TRY(plan_attention(ac, DType::kF32, n, n, &plan));
  const size_t mark = scratch.mark();
  float *x = nullptr, *nin = nullptr, *y = nullptr, *h1 = nullptr, *h3 = nullptr;
  const Status carved = [&] {
    ATTN_TRY(scratch.alloc_array(n_of(n, E), &x));
    ATTN_TRY(scratch.alloc_array(n_of(n, E), &nin));
    ATTN_TRY(scratch.alloc_array(n_of(n, E), &y));
    ATTN_TRY(scratch.alloc_array(n_of(n, F), &h1));
    return scratch.alloc_array(n_of(n, F), &h3);
  }();
  if (carved != Status::kOk) {
    scratch.release(mark);
    return carved;
  }
  ModelRanges local;
  ModelRanges& r = ranges != nullptr ? *ranges : local;
  bool finite = true;
  const auto residual = [&](const float* p) {
    Range t;
    finite = finite && widen(t, p, n_of(n, E));
    r.residual_max = std::fmax(r.residual_max, max_abs(t));
  };
  const auto snapshot = [&](int32_t stage) {
    if (snapshots == nullptr) return;
    float* dst = snapshots + static_cast<ptrdiff_t>(stage) * n * E;
    for (size_t i = 0; i < n_of(n, E); ++i) dst[i] = x[i];
  };

  for (int32_t i = 0; i < n; ++i) {
    for (int32_t e = 0; e < E; ++e) {
      double v = static_cast<double>(w.token_embedding[static_cast<ptrdiff_t>(tokens[i]) * E + e]);
      if (c.learned_positions)
        v += static_cast<double>(w.position_embedding[static_cast<ptrdiff_t>(i) * E + e]);
      if (c.type_vocab_size > 0) v += static_cast<double>(w.type_embedding[e]);
      x[static_cast<ptrdiff_t>(i) * E + e] = static_cast<float>(v);
    }
  }
  residual(x);
  if (c.embedding_norm) {
    norm(c, w.embedding_norm, x, n, x);
    residual(x);
  }
  snapshot(0);
  Mask mask;
  mask.causal = c.causal;
  Status s = Status::kOk;
  for (int32_t l = 0; l < L && s == Status::kOk; ++l) {
    const LayerWeightsF32& lw = w.layers[l];
    LayerRanges& lr = r.layers[l];
    const float* ain = x;
    if (c.pre_norm) {
      norm(c, lw.norm1, x, n, nin);
      ain = nin;
    }
    IoF32 io;
    io.query = ain;
    io.key = ain;
    io.value = ain;
    io.output = y;
    s = calibrate_attention(plan, lw.attention, mask, io, scratch, &lr.attention);
    if (s != Status::kOk) break;
    for (size_t i = 0; i < n_of(n, E); ++i) x[i] += y[i];
    residual(x);
    if (!c.pre_norm) {
      norm(c, lw.norm1, x, n, x);
      residual(x);
    }
    snapshot(2 * l + 1);
    const float* fin = x;
    if (c.pre_norm) {
      norm(c, lw.norm2, x, n, nin);
      fin = nin;
    }
    finite = finite && widen(lr.ffn_in, fin, n_of(n, E));
    linear(fin, n, E, lw.ffn.w1, c.ffn_bias ? lw.ffn.b1 : nullptr, F, h1);
    finite = finite && widen(lr.h1, h1, n_of(n, F));
    for (size_t i = 0; i < n_of(n, F); ++i)
      h1[i] = static_cast<float>(activation(c.activation, static_cast<double>(h1[i])));
    finite = finite && widen(lr.act, h1, n_of(n, F));
    if (c.gated_ffn) {
      linear(fin, n, E, lw.ffn.w3, c.ffn_bias ? lw.ffn.b3 : nullptr, F, h3);
      finite = finite && widen(lr.h3, h3, n_of(n, F));
      for (size_t i = 0; i < n_of(n, F); ++i) h1[i] *= h3[i];
    }
    finite = finite && widen(lr.g, h1, n_of(n, F));
    linear(h1, n, F, lw.ffn.w2, c.ffn_bias ? lw.ffn.b2 : nullptr, E, y);
    finite = finite && widen(lr.ffn_out, y, n_of(n, E));
    for (size_t i = 0; i < n_of(n, E); ++i) x[i] += y[i];
    residual(x);
    if (!c.pre_norm) {
      norm(c, lw.norm2, x, n, x);
      residual(x);
    }
    snapshot(2 * l + 2);
  }
  if (s == Status::kOk) {
    const float* h = x;
    if (c.final_norm) {
      norm(c, w.final_norm, x, n, nin);
      h = nin;
    }
    if (c.head == LmHead::kNone) {
      finite = finite && widen(r.hidden, h, n_of(n, E));
      if (out != nullptr)
        for (size_t i = 0; i < n_of(n, E); ++i) out[i] = h[i];
    } else {
      finite = finite && widen(r.head_in, h, n_of(n, E));
      const float* hw = c.head == LmHead::kTied ? w.token_embedding : w.lm_head;
      for (int32_t i = 0; i < n; ++i) {
        for (int32_t v = 0; v < c.vocab_size; ++v) {
          double acc = 0.0;
          for (int32_t e = 0; e < E; ++e) {
            acc += static_cast<double>(h[static_cast<ptrdiff_t>(i) * E + e]) *
                   static_cast<double>(hw[static_cast<ptrdiff_t>(v) * E + e]);
          }
          finite = finite && std::isfinite(acc);
          r.logit_max = std::fmax(r.logit_max, std::fabs(acc));
          if (out != nullptr) out[static_cast<ptrdiff_t>(i) * c.vocab_size + v] = static_cast<float>(acc);
        }
      }
    }
  }
  scratch.release(mark);
  if (s != Status::kOk) return s;
  return finite ? Status::kOk : Status::kBadQuantParams;
}

}  // namespace detail
}  // namespace attn
