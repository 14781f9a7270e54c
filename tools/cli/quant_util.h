// quant_util.h: host-side helpers of `attn quantize` and `attn run` on
// quantized files (and the tests): a float64 reference forward that keeps
// every stage, SQNR, and float <-> int conversion with a block's I/O params.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/attention.h"
#include "attn/kernels_fixed.h"
#include "attn/quantize.h"

namespace attn {
namespace tools {

// Every stage of one float forward, float64, row-major.
struct Stages {
  std::vector<double> q;    // [L, D]
  std::vector<double> k;    // [S, Dkv]
  std::vector<double> v;    // [S, Dkv]
  std::vector<double> ctx;  // [L, D]
  std::vector<double> y;    // [L, E]
};

// attn's semantics (include/attn/attention.h) in float64 for one example:
// causal / causal_offset / window / key_length masks, no additive mask,
// grouped-query K/V, RoPE (HF Llama half split, queries at positions 0 .. L-1,
// keys at 0 .. S-1; q and k are the rotated stages). Fully masked rows give a zero context.
inline Stages reference_forward(const AttentionConfig& c, const WeightsF32& w, const Mask& mask,
                                const float* x, const float* key, const float* value, int32_t L, int32_t S) {
  const int32_t E = c.embed_dim, H = c.num_heads, hd = c.resolved_head_dim(), D = H * hd;
  const int32_t kvh = c.num_kv_heads > 0 ? c.num_kv_heads : H, Dkv = kvh * hd;
  const int32_t kd = c.resolved_kdim(), vd = c.resolved_vdim();
  const auto linear = [](const float* in, int32_t rows, int32_t n_in, const float* W, const float* b,
                         int32_t n_out, std::vector<double>* out) {
    out->assign(static_cast<size_t>(rows) * static_cast<size_t>(n_out), 0.0);
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t o = 0; o < n_out; ++o) {
        double acc = b != nullptr ? static_cast<double>(b[o]) : 0.0;
        for (int32_t i = 0; i < n_in; ++i)
          acc += static_cast<double>(in[static_cast<size_t>(r) * n_in + i]) *
                 static_cast<double>(W[static_cast<size_t>(o) * n_in + i]);
        (*out)[static_cast<size_t>(r) * n_out + o] = acc;
      }
    }
  };
  Stages st;
  linear(x, L, E, w.wq, c.bias ? w.bq : nullptr, D, &st.q);
  linear(key, S, kd, w.wk, c.bias ? w.bk : nullptr, Dkv, &st.k);
  linear(value, S, vd, w.wv, c.bias ? w.bv : nullptr, Dkv, &st.v);
  if (c.rope_base != 0.0f) {
    const auto rope = [&](std::vector<double>& m, int32_t rows, int32_t width) {
      const int32_t half = hd / 2;
      for (int32_t r = 0; r < rows; ++r) {
        for (int32_t i = 0; i < half; ++i) {
          const double angle = r * std::pow(static_cast<double>(c.rope_base), -2.0 * i / hd);
          const double cs = std::cos(angle), sn = std::sin(angle);
          for (int32_t h0 = 0; h0 < width; h0 += hd) {
            double& a = m[static_cast<size_t>(r) * width + h0 + i];
            double& b = m[static_cast<size_t>(r) * width + h0 + i + half];
            const double a0 = a, b0 = b;
            a = a0 * cs - b0 * sn;
            b = b0 * cs + a0 * sn;
          }
        }
      }
    };
    rope(st.q, L, D);
    rope(st.k, S, Dkv);
  }
  st.ctx.assign(static_cast<size_t>(L) * D, 0.0);
  const int32_t klen = mask.key_length >= 0 ? mask.key_length : S;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  std::vector<double> s(static_cast<size_t>(S));
  for (int32_t i = 0; i < L; ++i) {
    for (int32_t h = 0; h < H; ++h) {
      const int32_t g = h / (H / kvh);
      double mx = -std::numeric_limits<double>::infinity();
      std::vector<bool> ok(static_cast<size_t>(S));
      for (int32_t j = 0; j < S; ++j) {
        bool allowed = j < klen;
        if (mask.causal) allowed = allowed && j <= i + mask.causal_offset;
        if (mask.causal && mask.window > 0) allowed = allowed && j > i + mask.causal_offset - mask.window;
        ok[static_cast<size_t>(j)] = allowed;
        if (!allowed) continue;
        double acc = 0.0;
        for (int32_t e = 0; e < hd; ++e)
          acc +=
              st.q[static_cast<size_t>(i) * D + h * hd + e] * st.k[static_cast<size_t>(j) * Dkv + g * hd + e];
        s[static_cast<size_t>(j)] = acc * scale;
        mx = std::fmax(mx, acc * scale);
      }
      if (std::isinf(mx)) continue;  // fully masked row
      double sum = 0.0;
      for (int32_t j = 0; j < S; ++j) {
        s[static_cast<size_t>(j)] =
            ok[static_cast<size_t>(j)] ? std::exp(s[static_cast<size_t>(j)] - mx) : 0.0;
        sum += s[static_cast<size_t>(j)];
      }
      for (int32_t e = 0; e < hd; ++e) {
        double acc = 0.0;
        for (int32_t j = 0; j < S; ++j)
          acc += s[static_cast<size_t>(j)] * st.v[static_cast<size_t>(j) * Dkv + g * hd + e];
        st.ctx[static_cast<size_t>(i) * D + h * hd + e] = acc / sum;
      }
    }
  }
  // The output projection in float64 on the float64 context.
  st.y.assign(static_cast<size_t>(L) * E, 0.0);
  for (int32_t r = 0; r < L; ++r) {
    for (int32_t o = 0; o < E; ++o) {
      double acc = c.bias ? static_cast<double>(w.bo[o]) : 0.0;
      for (int32_t i = 0; i < D; ++i)
        acc += st.ctx[static_cast<size_t>(r) * D + i] *
               static_cast<double>(w.wo[static_cast<size_t>(o) * D + i]);
      st.y[static_cast<size_t>(r) * E + o] = acc;
    }
  }
  return st;
}

// Accumulates signal and noise energy; db() = 10 log10(signal / noise).
struct Sqnr {
  double signal = 0.0, noise = 0.0;
  template <class A, class B>
  void add(const A& ref, const B& got) {
    for (size_t i = 0; i < ref.size(); ++i) {
      const double r = static_cast<double>(ref[i]), d = static_cast<double>(got[i]) - r;
      signal += r * r;
      noise += d * d;
    }
  }
  double db() const {
    if (noise == 0.0) return signal == 0.0 ? 0.0 : 300.0;
    return 10.0 * std::log10(signal / noise);
  }
};

inline double dequantize_value(int32_t q, float scale, int32_t zero_point) {
  return static_cast<double>(scale) * static_cast<double>(q - zero_point);
}

// The float rows x[0 .. n) on the (scale, zero point) grid of T (int8_t or
// int16_t), and back: the library's conversions (attn/kernels_fixed.h, the
// same integers as quantize_value, run-time-dispatched SIMD on x86-64 whatever
// this program's flags). The parameters are a loaded file's, so valid.
inline void quantize_values(const float* x, size_t n, QuantParams p, int8_t* out) {
  (void)quantize_s8(x, n, p.scale, p.zero_point, out);
}
inline void quantize_values(const float* x, size_t n, QuantParams p, int16_t* out) {
  (void)quantize_s16(x, n, p.scale, p.zero_point, out);
}
inline void dequantize_values(const int8_t* q, size_t n, QuantParams p, float* y) {
  (void)dequantize_s8(q, n, p.scale, p.zero_point, y);
}
inline void dequantize_values(const int16_t* q, size_t n, QuantParams p, float* y) {
  (void)dequantize_s16(q, n, p.scale, p.zero_point, y);
}

// The values rounded to the (scale, zero point) grid of `dtype` and back.
template <class A>
std::vector<double> fake_quantize(const A& x, QuantParams p, DType dtype) {
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    out[i] = dequantize_value(quantize_value(static_cast<float>(x[i]), p, dtype), p.scale, p.zero_point);
  return out;
}

}  // namespace tools
}  // namespace attn
