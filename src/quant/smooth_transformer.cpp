// smooth_transformer: per-channel smoothing of activation outliers moved
// into the weights (quant/smooth_transformer.h). Offline code in double.
#include "quant/smooth_transformer.h"

#include <cmath>

#include "quant/calibrate_transformer.h"

namespace attn {
namespace detail {
namespace {

size_t floats(size_t n) { return arena_round_up(n * sizeof(float)); }

bool norm_has_bias(const TransformerConfig& c) { return c.norm == NormKind::kLayerNorm && c.norm_bias; }

// dst [n] = src [n] in `arena`.
Status copy(const float* src, size_t n, Arena& arena, float** dst) {
  if (src == nullptr) return Status::kNullArgument;
  ATTN_TRY(arena.alloc_array(n, dst));
  for (size_t i = 0; i < n; ++i) (*dst)[i] = src[i];
  return Status::kOk;
}

// max |w[r][j]| over the rows of w [rows, cols], into m[j] (widening).
void column_max(const float* w, int32_t rows, int32_t cols, double* m) {
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t j = 0; j < cols; ++j)
      m[j] = std::fmax(m[j], std::fabs(static_cast<double>(w[static_cast<ptrdiff_t>(r) * cols + j])));
}

// s = x^a / w^(1 - a), 1 where either is 0, held within [2^-20, 2^20].
double factor(double x, double wmax, double a) {
  if (!(x > 0.0) || !(wmax > 0.0)) return 1.0;
  const double s = std::pow(x, a) / std::pow(wmax, 1.0 - a);
  return std::fmin(std::fmax(s, 1.0 / 1048576.0), 1048576.0);
}

// Columns j of w [rows, cols] times s[j].
void scale_columns(float* w, int32_t rows, int32_t cols, const double* s) {
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t j = 0; j < cols; ++j) {
      const ptrdiff_t at = static_cast<ptrdiff_t>(r) * cols + j;
      w[at] = static_cast<float>(static_cast<double>(w[at]) * s[j]);
    }
}

// Row r of w [rows, cols] (and b[r], b may be null) divided by s.
void divide_row(float* w, float* b, int32_t r, int32_t cols, double s) {
  for (int32_t j = 0; j < cols; ++j) {
    const ptrdiff_t at = static_cast<ptrdiff_t>(r) * cols + j;
    w[at] = static_cast<float>(static_cast<double>(w[at]) / s);
  }
  if (b != nullptr) b[r] = static_cast<float>(static_cast<double>(b[r]) / s);
}

}  // namespace

size_t smooth_weights_bytes(const TransformerConfig& c) {
  const AttentionConfig ac = c.attention();
  const size_t E = static_cast<size_t>(c.embed_dim), F = static_cast<size_t>(c.ffn_dim);
  const size_t D = static_cast<size_t>(ac.inner_dim()), Dkv = static_cast<size_t>(ac.kv_dim());
  const size_t kd = static_cast<size_t>(ac.resolved_kdim()), vd = static_cast<size_t>(ac.resolved_vdim());
  const size_t norm = floats(E) + (norm_has_bias(c) ? floats(E) : 0);
  size_t layer = 2 * norm + floats(D * E) + floats(Dkv * kd) + floats(Dkv * vd) + floats(E * D) +
                 (ac.bias ? floats(Dkv) : 0) + floats(F * E) + floats(E * F);
  if (c.gated_ffn) layer += floats(F * E) + (c.ffn_bias ? floats(F) : 0);
  const size_t widest = F > E ? (F > D ? F : D) : (E > D ? E : D);
  return arena_round_up(sizeof(LayerWeightsF32) * static_cast<size_t>(c.num_layers)) +
         layer * static_cast<size_t>(c.num_layers) + 3 * arena_round_up(widest * sizeof(double));
}

Status smooth_weights(const TransformerConfig& c, const TransformerWeightsF32& w, const double* chan,
                      double a, Arena& arena, TransformerWeightsF32* out) {
  if (chan == nullptr || out == nullptr || w.layers == nullptr) return Status::kNullArgument;
  const AttentionConfig ac = c.attention();
  const int32_t E = c.embed_dim, F = c.ffn_dim, L = c.num_layers, D = ac.inner_dim(), Dkv = ac.kv_dim();
  const int32_t kd = ac.resolved_kdim(), vd = ac.resolved_vdim(), hd = ac.resolved_head_dim();
  const int32_t group = ac.num_heads / ac.resolved_kv_heads();
  const bool nb = norm_has_bias(c);
  LayerWeightsF32* layers = nullptr;
  ATTN_TRY(arena.alloc_array(static_cast<size_t>(L), &layers));
  for (int32_t l = 0; l < L; ++l) {
    const LayerWeightsF32& src = w.layers[l];
    LayerWeightsF32& ly = layers[l];
    ly = src;
    ly.attention.packed = nullptr;
    ly.ffn.packed = nullptr;
    float *n1w = nullptr, *n1b = nullptr, *n2w = nullptr, *n2b = nullptr, *wq = nullptr, *wk = nullptr;
    float *wv = nullptr, *bv = nullptr, *wo = nullptr, *w1 = nullptr, *w3 = nullptr, *b3 = nullptr;
    float* w2 = nullptr;
    ATTN_TRY(copy(src.norm1.weight, static_cast<size_t>(E), arena, &n1w));
    if (nb) ATTN_TRY(copy(src.norm1.bias, static_cast<size_t>(E), arena, &n1b));
    ATTN_TRY(copy(src.norm2.weight, static_cast<size_t>(E), arena, &n2w));
    if (nb) ATTN_TRY(copy(src.norm2.bias, static_cast<size_t>(E), arena, &n2b));
    ATTN_TRY(copy(src.attention.wq, n_of(D, E), arena, &wq));
    ATTN_TRY(copy(src.attention.wk, n_of(Dkv, kd), arena, &wk));
    ATTN_TRY(copy(src.attention.wv, n_of(Dkv, vd), arena, &wv));
    if (ac.bias) ATTN_TRY(copy(src.attention.bv, static_cast<size_t>(Dkv), arena, &bv));
    ATTN_TRY(copy(src.attention.wo, n_of(E, D), arena, &wo));
    ATTN_TRY(copy(src.ffn.w1, n_of(F, E), arena, &w1));
    ATTN_TRY(copy(src.ffn.w2, n_of(E, F), arena, &w2));
    if (c.gated_ffn) {
      ATTN_TRY(copy(src.ffn.w3, n_of(F, E), arena, &w3));
      if (c.ffn_bias) ATTN_TRY(copy(src.ffn.b3, static_cast<size_t>(F), arena, &b3));
    }
    const double* xm =
        chan + static_cast<ptrdiff_t>(l) * chan_stride(c);  // attention input, FFN input, g, context

    // One smoothing: n channels, x: their activation maxima, wm: their weights' (filled by the caller),
    // apply(j, s): the move.
    const auto smooth = [&](int32_t n, const double* x, double* wm, auto apply) {
      for (int32_t j = 0; j < n; ++j) apply(j, factor(x[j], wm[j], a));
    };
    // The column maxima and factors, in the arena's free bytes above the copy (given back below).
    const size_t mark = arena.mark();
    const int32_t widest = F > E ? (F > D ? F : D) : (E > D ? E : D);
    double *wm = nullptr, *s = nullptr, *x = nullptr;
    Status st = arena.alloc_array(static_cast<size_t>(widest), &wm);
    if (st == Status::kOk) st = arena.alloc_array(static_cast<size_t>(widest), &s);
    if (st == Status::kOk) st = arena.alloc_array(static_cast<size_t>(widest), &x);
    if (st != Status::kOk) {
      arena.release(mark);
      return st;
    }
    const auto zero = [&](double* p, int32_t n) {
      for (int32_t j = 0; j < n; ++j) p[j] = 0.0;
    };
    if (c.pre_norm && kd == E && vd == E) {
      // Attention input: N1 -> Wq, Wk, Wv columns.
      zero(wm, E);
      column_max(wq, D, E, wm);
      column_max(wk, Dkv, E, wm);
      column_max(wv, Dkv, E, wm);
      smooth(E, xm, wm, [&](int32_t j, double f) { s[j] = f; });
      for (int32_t j = 0; j < E; ++j) {
        n1w[j] = static_cast<float>(static_cast<double>(n1w[j]) / s[j]);
        if (nb) n1b[j] = static_cast<float>(static_cast<double>(n1b[j]) / s[j]);
      }
      scale_columns(wq, D, E, s);
      scale_columns(wk, Dkv, E, s);
      scale_columns(wv, Dkv, E, s);
      // FFN input: N2 -> W1, W3 columns.
      zero(wm, E);
      column_max(w1, F, E, wm);
      if (c.gated_ffn) column_max(w3, F, E, wm);
      smooth(E, xm + E, wm, [&](int32_t j, double f) { s[j] = f; });
      for (int32_t j = 0; j < E; ++j) {
        n2w[j] = static_cast<float>(static_cast<double>(n2w[j]) / s[j]);
        if (nb) n2b[j] = static_cast<float>(static_cast<double>(n2b[j]) / s[j]);
      }
      scale_columns(w1, F, E, s);
      if (c.gated_ffn) scale_columns(w3, F, E, s);
    }
    if (c.gated_ffn) {  // g = act(h1) h3: W3 rows -> W2 columns
      zero(wm, F);
      column_max(w2, E, F, wm);
      smooth(F, xm + 2 * E, wm, [&](int32_t j, double f) {
        s[j] = f;
        divide_row(w3, b3, j, E, f);
      });
      scale_columns(w2, E, F, s);
    }
    // Context: V channel d (KV head d / hd) feeds the context of every head of its group.
    zero(wm, D);
    column_max(wo, E, D, wm);
    zero(x, Dkv);
    for (int32_t d = 0; d < Dkv; ++d) {
      double xd = 0.0, wd = 0.0;
      for (int32_t h = (d / hd) * group; h < (d / hd + 1) * group; ++h) {
        xd = std::fmax(xd, xm[2 * E + F + h * hd + d % hd]);
        wd = std::fmax(wd, wm[h * hd + d % hd]);
      }
      x[d] = factor(xd, wd, a);
    }
    for (int32_t h = 0; h < ac.num_heads; ++h)
      for (int32_t e = 0; e < hd; ++e) s[h * hd + e] = x[(h / group) * hd + e];
    for (int32_t d = 0; d < Dkv; ++d) divide_row(wv, bv, d, vd, x[d]);
    scale_columns(wo, E, D, s);
    arena.release(mark);

    ly.norm1.weight = n1w;
    ly.norm1.bias = nb ? n1b : src.norm1.bias;
    ly.norm2.weight = n2w;
    ly.norm2.bias = nb ? n2b : src.norm2.bias;
    ly.attention.wq = wq;
    ly.attention.wk = wk;
    ly.attention.wv = wv;
    if (ac.bias) ly.attention.bv = bv;
    ly.attention.wo = wo;
    ly.ffn.w1 = w1;
    ly.ffn.w2 = w2;
    if (c.gated_ffn) {
      ly.ffn.w3 = w3;
      if (c.ffn_bias) ly.ffn.b3 = b3;
    }
  }
  *out = w;
  out->layers = layers;
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
