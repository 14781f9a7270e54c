// The converter's int4 FFN weights by error feedback (GPTQ): each weight
// column is rounded in turn and the rounding error, weighted by the inverse
// of the calibration inputs' second moments H = sum x x^T, is moved onto the
// columns not yet rounded, so the layer's output on inputs like the
// calibration's moves less than with round-to-nearest. Offline code in
// double (quant/int4_weights.h declares it).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "quant/calibrate_transformer.h"
#include "quant/int4_weights.h"

namespace attn {
namespace detail {
namespace {

// In place: the lower Cholesky factor of the symmetric positive definite a
// [n, n] (upper triangle left as is); false if a is not positive definite.
bool cholesky_lower(double* a, int32_t n) {
  for (int32_t j = 0; j < n; ++j) {
    double d = a[static_cast<ptrdiff_t>(j) * n + j];
    for (int32_t k = 0; k < j; ++k)
      d -= a[static_cast<ptrdiff_t>(j) * n + k] * a[static_cast<ptrdiff_t>(j) * n + k];
    if (!(d > 0.0)) return false;
    const double l = std::sqrt(d);
    a[static_cast<ptrdiff_t>(j) * n + j] = l;
    for (int32_t i = j + 1; i < n; ++i) {
      double v = a[static_cast<ptrdiff_t>(i) * n + j];
      for (int32_t k = 0; k < j; ++k)
        v -= a[static_cast<ptrdiff_t>(i) * n + k] * a[static_cast<ptrdiff_t>(j) * n + k];
      a[static_cast<ptrdiff_t>(i) * n + j] = v / l;
    }
  }
  return true;
}

// u [n, n] = the upper factor U of H^-1 = U^T U, from h = H [n, n] (destroyed): L = chol(H),
// H^-1 = L^-T L^-1, then its lower factor M (H^-1 = M M^T), U = M^T.
bool inverse_upper_factor(double* h, double* u, int32_t n) {
  if (!cholesky_lower(h, n)) return false;
  // u = L^-1 (lower), column by column of the identity.
  std::fill(u, u + static_cast<ptrdiff_t>(n) * n, 0.0);
  for (int32_t c = 0; c < n; ++c) {
    for (int32_t i = c; i < n; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (int32_t k = c; k < i; ++k)
        v -= h[static_cast<ptrdiff_t>(i) * n + k] * u[static_cast<ptrdiff_t>(k) * n + c];
      u[static_cast<ptrdiff_t>(i) * n + c] = v / h[static_cast<ptrdiff_t>(i) * n + i];
    }
  }
  // h = H^-1 = u^T u (symmetric, full).
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j <= i; ++j) {
      double v = 0.0;
      for (int32_t k = i; k < n; ++k)
        v += u[static_cast<ptrdiff_t>(k) * n + i] * u[static_cast<ptrdiff_t>(k) * n + j];
      h[static_cast<ptrdiff_t>(i) * n + j] = h[static_cast<ptrdiff_t>(j) * n + i] = v;
    }
  }
  if (!cholesky_lower(h, n)) return false;
  for (int32_t i = 0; i < n; ++i)
    for (int32_t j = 0; j < n; ++j)
      u[static_cast<ptrdiff_t>(i) * n + j] = j >= i ? h[static_cast<ptrdiff_t>(j) * n + i] : 0.0;
  return true;
}

}  // namespace

size_t gptq_scratch_bytes(int32_t in) {
  const size_t n = static_cast<size_t>(in);
  return 2 * arena_round_up(n * n * sizeof(double)) + arena_round_up(n * sizeof(double));
}

void accumulate_second_moments(const float* x, int32_t in, double* h) {
  for (int32_t i = 0; i < in; ++i) {
    const double xi = static_cast<double>(x[i]);
    if (xi == 0.0) continue;
    double* row = h + static_cast<ptrdiff_t>(i) * in;
    for (int32_t j = 0; j < in; ++j) row[j] += xi * static_cast<double>(x[j]);
  }
}

Status gptq_int4_rows(const float* w, int32_t out, int32_t in, const double* scales, const double* h_in,
                      Arena& scratch, int8_t* q) {
  const size_t mark = scratch.mark();
  const size_t nn = static_cast<size_t>(in) * static_cast<size_t>(in);
  double *hw = nullptr, *u = nullptr, *row = nullptr;
  Status s = scratch.alloc_array(nn, &hw);
  if (s == Status::kOk) s = scratch.alloc_array(nn, &u);
  if (s == Status::kOk) s = scratch.alloc_array(static_cast<size_t>(in), &row);
  if (s != Status::kOk) {
    scratch.release(mark);
    return s;
  }
  std::copy(h_in, h_in + nn, hw);  // h_in stays: W1 and W3 share theirs
  double* h = hw;
  // Damping (1% of the mean diagonal) keeps H invertible; inputs never seen weigh nothing.
  double mean = 0.0;
  for (int32_t i = 0; i < in; ++i) mean += h[static_cast<ptrdiff_t>(i) * in + i];
  mean = mean > 0.0 ? mean / in : 1.0;
  for (int32_t i = 0; i < in; ++i) h[static_cast<ptrdiff_t>(i) * in + i] += 0.01 * mean;
  const bool ok = inverse_upper_factor(h, u, in);
  for (int32_t r = 0; r < out; ++r) {
    const float* wr = w + static_cast<ptrdiff_t>(r) * in;
    int8_t* qr = q + static_cast<ptrdiff_t>(r) * in;
    const double sc = scales[r];
    for (int32_t k = 0; k < in; ++k) row[k] = static_cast<double>(wr[k]);
    for (int32_t k = 0; k < in; ++k) {
      const double v = int4_value(row[k], sc);
      qr[k] = static_cast<int8_t>(v);
      if (!ok) continue;  // round to nearest
      const double* uk = u + static_cast<ptrdiff_t>(k) * in;
      const double err = (row[k] - sc * v) / uk[k];
      for (int32_t j = k + 1; j < in; ++j) row[j] -= err * uk[j];
    }
  }
  scratch.release(mark);
  return Status::kOk;
}

size_t ffn_second_moments_bytes(const TransformerConfig& c, int32_t max_len) {
  const size_t n = static_cast<size_t>(max_len), E = static_cast<size_t>(c.embed_dim),
               F = static_cast<size_t>(c.ffn_dim);
  const size_t snaps = arena_round_up((2 * static_cast<size_t>(c.num_layers) + 1) * n * E * sizeof(float));
  const size_t out = arena_round_up(n * static_cast<size_t>(c.output_dim()) * sizeof(float));
  const size_t rows = arena_round_up(E * sizeof(float)) + arena_round_up(F * sizeof(float)) +
                      2 * arena_round_up(F * sizeof(double));
  return snaps + out + rows + float_forward_bytes(c, max_len);
}

Status ffn_second_moments(const TransformerConfig& c, const TransformerWeightsF32& w,
                          const TransformerCalibration& cal, int32_t max_len, int32_t layer, Arena& scratch,
                          double* hh, double* hg) {
  const int32_t E = c.embed_dim, F = c.ffn_dim;
  const size_t mark = scratch.mark();
  const auto done = [&](Status r) {  // the scratch back on failure (and at the end)
    if (r != Status::kOk) scratch.release(mark);
    return r;
  };
  float *snaps = nullptr, *out = nullptr, *h = nullptr, *g = nullptr;
  double *h1 = nullptr, *h3 = nullptr;
  const size_t n = static_cast<size_t>(max_len);
  ATTN_TRY(done(
      scratch.alloc_array((2 * static_cast<size_t>(c.num_layers) + 1) * n * static_cast<size_t>(E), &snaps)));
  ATTN_TRY(done(scratch.alloc_array(n * static_cast<size_t>(c.output_dim()), &out)));
  ATTN_TRY(done(scratch.alloc_array(static_cast<size_t>(E), &h)));
  ATTN_TRY(done(scratch.alloc_array(static_cast<size_t>(F), &g)));
  ATTN_TRY(done(scratch.alloc_array(static_cast<size_t>(F), &h1)));
  ATTN_TRY(done(scratch.alloc_array(static_cast<size_t>(F), &h3)));
  std::fill(hh, hh + static_cast<ptrdiff_t>(E) * E, 0.0);
  std::fill(hg, hg + static_cast<ptrdiff_t>(F) * F, 0.0);
  const LayerWeightsF32& L = w.layers[layer];
  const FfnWeightsF32& f = L.ffn;
  int64_t at = 0;
  for (int32_t q = 0; q < cal.count; ++q) {
    const int32_t len = cal.lengths[q];
    ATTN_TRY(done(float_forward(c, w, cal.tokens + at, len, scratch, nullptr, snaps, out)));
    at += len;
    // The residual after this layer's attention (and its post-norm): [len, E].
    const float* x = snaps + static_cast<ptrdiff_t>(2 * layer + 1) * len * E;
    for (int32_t t = 0; t < len; ++t) {
      const float* xr = x + static_cast<ptrdiff_t>(t) * E;
      // The FFN input: norm2 of it (pre-norm) or it (post-norm), as the float forward.
      if (c.pre_norm) {
        double mean = 0.0, var = 0.0;
        if (c.norm == NormKind::kLayerNorm) {
          for (int32_t e = 0; e < E; ++e) mean += static_cast<double>(xr[e]);
          mean /= E;
        }
        for (int32_t e = 0; e < E; ++e)
          var += (static_cast<double>(xr[e]) - mean) * (static_cast<double>(xr[e]) - mean);
        const double inv = 1.0 / std::sqrt(var / E + static_cast<double>(c.norm_eps));
        const bool bias = c.norm == NormKind::kLayerNorm && c.norm_bias && L.norm2.bias != nullptr;
        for (int32_t e = 0; e < E; ++e)
          h[e] = static_cast<float>((static_cast<double>(xr[e]) - mean) * inv *
                                        static_cast<double>(L.norm2.weight[e]) +
                                    (bias ? static_cast<double>(L.norm2.bias[e]) : 0.0));
      } else {
        std::copy(xr, xr + E, h);
      }
      accumulate_second_moments(h, E, hh);
      // W2's input: act(h W1^T + b1) (gated: times h W3^T + b3), as the float forward.
      for (int32_t o = 0; o < F; ++o) {
        double a1 = c.ffn_bias ? static_cast<double>(f.b1[o]) : 0.0, a3 = 0.0;
        const float* w1 = f.w1 + static_cast<ptrdiff_t>(o) * E;
        for (int32_t e = 0; e < E; ++e) a1 += static_cast<double>(h[e]) * static_cast<double>(w1[e]);
        if (c.gated_ffn) {
          a3 = c.ffn_bias ? static_cast<double>(f.b3[o]) : 0.0;
          const float* w3 = f.w3 + static_cast<ptrdiff_t>(o) * E;
          for (int32_t e = 0; e < E; ++e) a3 += static_cast<double>(h[e]) * static_cast<double>(w3[e]);
        }
        h1[o] = a1, h3[o] = a3;
      }
      for (int32_t o = 0; o < F; ++o) {
        double v = activation(c.activation, static_cast<double>(static_cast<float>(h1[o])));
        if (c.gated_ffn)
          v = static_cast<double>(static_cast<float>(v)) * static_cast<double>(static_cast<float>(h3[o]));
        g[o] = static_cast<float>(v);
      }
      accumulate_second_moments(g, F, hg);
    }
  }
  scratch.release(mark);
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
