// Whole integer models (attn/transformer_fixed.h): random HF-style models
// quantized by quantize_transformer_s8 / _s16, run by the integer forwards,
// measured against this file's own float64 forward and its own ideal
// fake-quantized forward (per-channel int8 weights, min/max per-tensor
// activations at every matmul input, Q0.15 probabilities, float
// residual / norms / activations). Decoding is checked bit-exact against the
// full forward.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "attn/transformer_fixed.h"
#include "catch_helpers.h"
#include "kernels/kernels_model_fixed.h"
#include "quant/calibrate_transformer.h"
#include "quant/choose_range.h"
#include "quant/smooth_transformer.h"
#include "random_model.h"

namespace {

using attn::Activation;
using attn::DType;
using attn::LmHead;
using attn::NormKind;
using attn::Status;
using attn::TransformerConfig;
using random_model::sequences;

// ---- random models -------------------------------------------------------------

struct HostLayer {
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo, n1w, n1b, n2w, n2b, w1, b1, w2, b2, w3, b3;
};

struct HostModel {
  TransformerConfig c;
  std::vector<float> tok, pos, type, enw, enb, fnw, fnb, head;
  std::vector<HostLayer> layers;
  std::vector<attn::LayerWeightsF32> lw;
  attn::TransformerWeightsF32 w;

  int hd() const { return c.head_dim != 0 ? c.head_dim : c.embed_dim / c.num_heads; }
  int kvh() const { return c.num_kv_heads != 0 ? c.num_kv_heads : c.num_heads; }
};

std::vector<float> normal(size_t n, std::mt19937& rng, float scale, float mean = 0.0f) {
  std::vector<float> v = random_normal(n, rng, scale);
  for (float& x : v) x += mean;
  return v;
}

HostModel make_model(const TransformerConfig& c, uint32_t seed) {
  std::mt19937 rng(seed);
  HostModel m;
  m.c = c;
  const size_t E = static_cast<size_t>(c.embed_dim), F = static_cast<size_t>(c.ffn_dim);
  const size_t D = static_cast<size_t>(c.num_heads) * static_cast<size_t>(m.hd());
  const size_t Dkv = static_cast<size_t>(m.kvh()) * static_cast<size_t>(m.hd());
  const size_t V = static_cast<size_t>(c.vocab_size), P = static_cast<size_t>(c.max_positions);
  const auto proj = [&](size_t out, size_t in) { return normal(out * in, rng, 1.0f / std::sqrt(float(in))); };
  m.tok = normal(V * E, rng, 1.0f);
  if (c.learned_positions) m.pos = normal(P * E, rng, 0.5f);
  if (c.type_vocab_size > 0) m.type = normal(static_cast<size_t>(c.type_vocab_size) * E, rng, 0.5f);
  const bool nb = c.norm == NormKind::kLayerNorm && c.norm_bias;
  m.enw = normal(E, rng, 0.1f, 1.0f);
  m.enb = normal(E, rng, 0.1f);
  m.fnw = normal(E, rng, 0.1f, 1.0f);
  m.fnb = normal(E, rng, 0.1f);
  if (c.head == LmHead::kUntied) m.head = proj(V, E);
  m.layers.resize(static_cast<size_t>(c.num_layers));
  for (HostLayer& l : m.layers) {
    l.wq = proj(D, E);
    l.wk = proj(Dkv, E);
    l.wv = proj(Dkv, E);
    l.wo = proj(E, D);
    l.bq = normal(D, rng, 0.1f);
    l.bk = normal(Dkv, rng, 0.1f);
    l.bv = normal(Dkv, rng, 0.1f);
    l.bo = normal(E, rng, 0.1f);
    l.n1w = normal(E, rng, 0.1f, 1.0f);
    l.n1b = normal(E, rng, 0.1f);
    l.n2w = normal(E, rng, 0.1f, 1.0f);
    l.n2b = normal(E, rng, 0.1f);
    l.w1 = proj(F, E);
    l.b1 = normal(F, rng, 0.1f);
    l.w2 = proj(E, F);
    l.b2 = normal(E, rng, 0.1f);
    l.w3 = proj(F, E);
    l.b3 = normal(F, rng, 0.1f);
  }
  for (HostLayer& l : m.layers) {
    attn::LayerWeightsF32 x;
    x.attention.wq = l.wq.data();
    x.attention.wk = l.wk.data();
    x.attention.wv = l.wv.data();
    x.attention.wo = l.wo.data();
    if (c.attention_bias) {
      x.attention.bq = l.bq.data();
      x.attention.bk = l.bk.data();
      x.attention.bv = l.bv.data();
      x.attention.bo = l.bo.data();
    }
    x.norm1.weight = l.n1w.data();
    x.norm2.weight = l.n2w.data();
    if (nb) {
      x.norm1.bias = l.n1b.data();
      x.norm2.bias = l.n2b.data();
    }
    x.ffn.w1 = l.w1.data();
    x.ffn.w2 = l.w2.data();
    if (c.gated_ffn) x.ffn.w3 = l.w3.data();
    if (c.ffn_bias) {
      x.ffn.b1 = l.b1.data();
      x.ffn.b2 = l.b2.data();
      if (c.gated_ffn) x.ffn.b3 = l.b3.data();
    }
    m.lw.push_back(x);
  }
  m.w.token_embedding = m.tok.data();
  if (c.learned_positions) m.w.position_embedding = m.pos.data();
  if (c.type_vocab_size > 0) m.w.type_embedding = m.type.data();
  m.w.embedding_norm = {m.enw.data(), nb ? m.enb.data() : nullptr};
  m.w.final_norm = {m.fnw.data(), nb ? m.fnb.data() : nullptr};
  if (c.head == LmHead::kUntied) m.w.lm_head = m.head.data();
  m.w.layers = m.lw.data();
  return m;
}

// ---- the float64 forward, exact or fake-quantized ----------------------------------

using Vec = std::vector<double>;

// Min/max of every matmul input, per layer and for the head.
struct SimRange {
  double lo = 0.0, hi = 0.0;
  void widen(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};
struct SimLayerRanges {
  SimRange attn_in, q, k, v, ctx, ffn_in, g;
};
struct SimRanges {
  std::vector<SimLayerRanges> layers;
  SimRange head_in;
};

// The scheme's activation fake-quantization of one value.
double fake(double x, const SimRange& r, DType dt) {
  if (dt == DType::kS16) {
    const double amax = std::max(std::fabs(r.lo), std::fabs(r.hi));
    const double s = amax > 0 ? double(float(amax / 32767.0)) : 1.0 / 1048576.0;
    return std::clamp(std::round(x / s), -32768.0, 32767.0) * s;
  }
  const double lo = std::min(r.lo, 0.0), hi = std::max(r.hi, 0.0);
  if (!(hi - lo > 0)) return 0.0;
  const double s = double(float((hi - lo) / 255.0));
  const double zp = std::clamp(std::round(-128.0 - lo / s), -128.0, 127.0);
  return (std::clamp(std::round(x / s) + zp, -128.0, 127.0) - zp) * s;
}

// Weights [rows, in] fake-quantized per row (int8 symmetric), or as they are.
Vec weights(const std::vector<float>& w, int rows, int in, bool quant) {
  Vec out(w.begin(), w.end());
  if (!quant) return out;
  for (int r = 0; r < rows; ++r) {
    double amax = 0;
    for (int k = 0; k < in; ++k) amax = std::max(amax, std::fabs(out[size_t(r) * in + k]));
    const double s = amax > 0 ? double(float(amax / 127.0)) : 1.0 / 1048576.0;
    for (int k = 0; k < in; ++k) {
      double& v = out[size_t(r) * in + k];
      v = std::clamp(std::round(v / s), -127.0, 127.0) * s;
    }
  }
  return out;
}

double act_fn(Activation a, double x) {
  switch (a) {
    case Activation::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::kRelu:
      return x > 0 ? x : 0;
    case Activation::kSilu:
      return x / (1.0 + std::exp(-x));
  }
  return x;
}

// Mode: exact (ranges == null, record == null), calibrating (record) or fake-quantized (ranges, dt).
struct Sim {
  const HostModel& m;
  const SimRanges* ranges = nullptr;
  SimRanges* record = nullptr;
  DType dt = DType::kS8;

  bool quant() const { return ranges != nullptr; }
  // A matmul input: recorded, fake-quantized, or left.
  void at(Vec& x, SimRange* rec, const SimRange* q) const {
    for (double& v : x) {
      if (rec != nullptr) rec->widen(v);
      if (q != nullptr) v = fake(v, *q, dt);
    }
  }

  Vec linear(const Vec& x, int n, int in, const Vec& w, const std::vector<float>* b, int out) const {
    Vec y(size_t(n) * out);
    for (int i = 0; i < n; ++i)
      for (int o = 0; o < out; ++o) {
        double acc = b != nullptr ? double((*b)[o]) : 0.0;
        for (int k = 0; k < in; ++k) acc += x[size_t(i) * in + k] * w[size_t(o) * in + k];
        y[size_t(i) * out + o] = acc;
      }
    return y;
  }
  void norm(Vec& x, int n, const std::vector<float>& w, const std::vector<float>& b) const {
    const int E = m.c.embed_dim;
    const bool ln = m.c.norm == NormKind::kLayerNorm;
    for (int i = 0; i < n; ++i) {
      double* r = &x[size_t(i) * E];
      double mean = 0, var = 0;
      if (ln) {
        for (int e = 0; e < E; ++e) mean += r[e];
        mean /= E;
      }
      for (int e = 0; e < E; ++e) var += (r[e] - mean) * (r[e] - mean);
      var /= E;
      const double inv = 1.0 / std::sqrt(var + double(m.c.norm_eps));
      for (int e = 0; e < E; ++e) r[e] = (r[e] - mean) * inv * w[e] + (ln && m.c.norm_bias ? b[e] : 0.0);
    }
  }
  void rope(Vec& x, int n, int heads) const {
    const int hd = m.hd(), half = hd / 2, W = heads * hd;
    for (int p = 0; p < n; ++p)
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < half; ++i) {
          const double f = std::pow(double(m.c.rope_base), -2.0 * i / hd), a = p * f;
          double& x1 = x[size_t(p) * W + h * hd + i];
          double& x2 = x[size_t(p) * W + h * hd + i + half];
          const double u = x1 * std::cos(a) - x2 * std::sin(a), v = x2 * std::cos(a) + x1 * std::sin(a);
          x1 = u;
          x2 = v;
        }
  }
  SimRange* rec(SimLayerRanges* l, SimRange SimLayerRanges::*f) const {
    return l != nullptr ? &(l->*f) : nullptr;
  }
  const SimRange* use(const SimLayerRanges* l, SimRange SimLayerRanges::*f) const {
    return l != nullptr ? &(l->*f) : nullptr;
  }

  Vec attention(const Vec& xin, int n, const HostLayer& L, SimLayerRanges* rl,
                const SimLayerRanges* ql) const {
    const int E = m.c.embed_dim, H = m.c.num_heads, hd = m.hd(), G = m.kvh(), D = H * hd, Dkv = G * hd;
    const bool q8 = quant();
    Vec x = xin;
    at(x, rec(rl, &SimLayerRanges::attn_in), use(ql, &SimLayerRanges::attn_in));
    const bool b = m.c.attention_bias;
    Vec Q = linear(x, n, E, weights(L.wq, D, E, q8), b ? &L.bq : nullptr, D);
    Vec K = linear(x, n, E, weights(L.wk, Dkv, E, q8), b ? &L.bk : nullptr, Dkv);
    Vec Vv = linear(x, n, E, weights(L.wv, Dkv, E, q8), b ? &L.bv : nullptr, Dkv);
    if (m.c.rope_base != 0.0f) {
      at(Q, rec(rl, &SimLayerRanges::q), use(ql, &SimLayerRanges::q));
      at(K, rec(rl, &SimLayerRanges::k), use(ql, &SimLayerRanges::k));
      rope(Q, n, H);
      rope(K, n, G);
    }
    at(Q, rec(rl, &SimLayerRanges::q), use(ql, &SimLayerRanges::q));
    at(K, rec(rl, &SimLayerRanges::k), use(ql, &SimLayerRanges::k));
    at(Vv, rec(rl, &SimLayerRanges::v), use(ql, &SimLayerRanges::v));
    Vec ctx(size_t(n) * D, 0.0);
    std::vector<double> s(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int h = 0; h < H; ++h) {
        const int g = h / (H / G);
        const int keys = m.c.causal ? i + 1 : n;
        double mx = -1e300;
        for (int j = 0; j < keys; ++j) {
          double acc = 0;
          for (int d = 0; d < hd; ++d) acc += Q[size_t(i) * D + h * hd + d] * K[size_t(j) * Dkv + g * hd + d];
          s[j] = acc / std::sqrt(double(hd));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int j = 0; j < keys; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int j = 0; j < keys; ++j) {
          double p = s[j] / sum;
          if (q8) p = std::min(std::round(p * 32768.0), 32767.0) / 32768.0;
          for (int d = 0; d < hd; ++d)
            ctx[size_t(i) * D + h * hd + d] += p * Vv[size_t(j) * Dkv + g * hd + d];
        }
      }
    at(ctx, rec(rl, &SimLayerRanges::ctx), use(ql, &SimLayerRanges::ctx));
    return linear(ctx, n, D, weights(L.wo, E, D, q8), b ? &L.bo : nullptr, E);
  }

  Vec ffn(const Vec& xin, int n, const HostLayer& L, SimLayerRanges* rl, const SimLayerRanges* ql) const {
    const int E = m.c.embed_dim, F = m.c.ffn_dim;
    const bool q8 = quant(), fb = m.c.ffn_bias;
    Vec x = xin;
    at(x, rec(rl, &SimLayerRanges::ffn_in), use(ql, &SimLayerRanges::ffn_in));
    Vec h = linear(x, n, E, weights(L.w1, F, E, q8), fb ? &L.b1 : nullptr, F);
    for (double& v : h) v = act_fn(m.c.activation, v);
    if (m.c.gated_ffn) {
      const Vec u = linear(x, n, E, weights(L.w3, F, E, q8), fb ? &L.b3 : nullptr, F);
      for (size_t i = 0; i < h.size(); ++i) h[i] *= u[i];
    }
    at(h, rec(rl, &SimLayerRanges::g), use(ql, &SimLayerRanges::g));
    return linear(h, n, F, weights(L.w2, E, F, q8), fb ? &L.b2 : nullptr, E);
  }

  // The model's output [n, output_dim].
  Vec forward(const std::vector<int32_t>& tokens) const {
    const TransformerConfig& c = m.c;
    const int n = int(tokens.size()), E = c.embed_dim;
    const bool q8 = quant();
    if (record != nullptr) record->layers.resize(size_t(c.num_layers));
    const Vec tok = weights(m.tok, c.vocab_size, E, q8);
    const Vec pos = c.learned_positions ? weights(m.pos, c.max_positions, E, q8) : Vec();
    Vec x(size_t(n) * E);
    for (int i = 0; i < n; ++i)
      for (int e = 0; e < E; ++e) {
        double v = tok[size_t(tokens[i]) * E + e];
        if (c.learned_positions) v += pos[size_t(i) * E + e];
        if (c.type_vocab_size > 0) v += m.type[e];
        x[size_t(i) * E + e] = v;
      }
    if (c.embedding_norm) norm(x, n, m.enw, m.enb);
    for (int l = 0; l < c.num_layers; ++l) {
      const HostLayer& L = m.layers[size_t(l)];
      SimLayerRanges* rl = record != nullptr ? &record->layers[size_t(l)] : nullptr;
      const SimLayerRanges* ql = ranges != nullptr ? &ranges->layers[size_t(l)] : nullptr;
      if (c.pre_norm) {
        Vec t = x;
        norm(t, n, L.n1w, L.n1b);
        const Vec y = attention(t, n, L, rl, ql);
        for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
        t = x;
        norm(t, n, L.n2w, L.n2b);
        const Vec f = ffn(t, n, L, rl, ql);
        for (size_t i = 0; i < x.size(); ++i) x[i] += f[i];
      } else {
        const Vec y = attention(x, n, L, rl, ql);
        for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
        norm(x, n, L.n1w, L.n1b);
        const Vec f = ffn(x, n, L, rl, ql);
        for (size_t i = 0; i < x.size(); ++i) x[i] += f[i];
        norm(x, n, L.n2w, L.n2b);
      }
    }
    if (c.final_norm) norm(x, n, m.fnw, m.fnb);
    if (c.head == LmHead::kNone) return x;
    at(x, record != nullptr ? &record->head_in : nullptr, ranges != nullptr ? &ranges->head_in : nullptr);
    const Vec hw = weights(c.head == LmHead::kTied ? m.tok : m.head, c.vocab_size, E, q8);
    return linear(x, n, E, hw, nullptr, c.vocab_size);
  }
};

double sqnr_db(const Vec& ref, const Vec& got) {
  double s = 0, e = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    s += ref[i] * ref[i];
    e += (ref[i] - got[i]) * (ref[i] - got[i]);
  }
  return 10.0 * std::log10(s / e);
}

// ---- the integer model ------------------------------------------------------------

template <typename Weights>
struct Quantized {
  AlignedBuffer storage_buf{0}, scratch_buf{0};
  attn::Arena storage, scratch;
  Weights w;
  attn::TransformerQuantReport report;
};

struct Calib {
  std::vector<int32_t> tokens, lengths;
  attn::TransformerCalibration view() const {
    attn::TransformerCalibration c;
    c.tokens = tokens.data();
    c.lengths = lengths.data();
    c.count = int32_t(lengths.size());
    return c;
  }
};

Calib calibration(const std::vector<std::vector<int32_t>>& seqs) {
  Calib c;
  for (const auto& s : seqs) {
    c.tokens.insert(c.tokens.end(), s.begin(), s.end());
    c.lengths.push_back(int32_t(s.size()));
  }
  return c;
}

template <typename Weights>
void quantize(const HostModel& m, const Calib& cal, DType dt, Quantized<Weights>* q,
              const attn::TransformerQuantOptions& o = attn::TransformerQuantOptions()) {
  size_t sb = 0, xb = 0;
  REQUIRE(attn::quantize_transformer_storage_bytes(m.c, dt, &sb) == Status::kOk);
  int32_t max_len = *std::max_element(cal.lengths.begin(), cal.lengths.end());
  REQUIRE(attn::quantize_transformer_scratch_bytes(m.c, dt, max_len, &xb, o) == Status::kOk);
  q->storage_buf = AlignedBuffer(sb);
  q->scratch_buf = AlignedBuffer(xb);
  REQUIRE(q->storage.init(q->storage_buf.data, sb) == Status::kOk);
  REQUIRE(q->scratch.init(q->scratch_buf.data, xb) == Status::kOk);
  Status s;
  if constexpr (std::is_same_v<Weights, attn::TransformerWeightsS8>) {
    s = attn::quantize_transformer_s8(m.c, m.w, cal.view(), q->storage, q->scratch, &q->w, &q->report, o);
  } else {
    s = attn::quantize_transformer_s16(m.c, m.w, cal.view(), q->storage, q->scratch, &q->w, &q->report, o);
  }
  REQUIRE(s == Status::kOk);
  // The size queries are exact: the converter used all of storage.
  CHECK(q->storage.used() == sb);
}

Status forward(const attn::TransformerPlan& p, const attn::TransformerWeightsS8& w, const int32_t* t,
               int32_t n, attn::OutputRows r, int32_t* out, attn::Arena& a) {
  return attn::transformer_forward_s8(p, w, t, n, r, out, a);
}
Status forward(const attn::TransformerPlan& p, const attn::TransformerWeightsS16& w, const int32_t* t,
               int32_t n, attn::OutputRows r, int32_t* out, attn::Arena& a) {
  return attn::transformer_forward_s16(p, w, t, n, r, out, a);
}

template <typename Weights>
Vec run_fixed(const HostModel& m, DType dt, const Weights& w, const std::vector<int32_t>& tokens) {
  attn::TransformerPlan plan;
  const int32_t n = int32_t(tokens.size());
  REQUIRE(attn::plan_transformer_fixed(m.c, dt, n, 0, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<int32_t> out(size_t(n) * size_t(m.c.output_dim()));
  REQUIRE(forward(plan, w, tokens.data(), n, attn::OutputRows::kAll, out.data(), arena) == Status::kOk);
  // The plan's arena is exact: one byte less fails before writing.
  attn::Arena small;
  REQUIRE(small.init(buf.data, plan.arena_bytes - 1) == Status::kOk);
  std::vector<int32_t> out2(out.size(), 0x5A5A5A5A);
  CHECK(forward(plan, w, tokens.data(), n, attn::OutputRows::kAll, out2.data(), small) ==
        Status::kArenaTooSmall);
  CHECK(out2[0] == 0x5A5A5A5A);
  Vec y(out.size());
  for (size_t i = 0; i < out.size(); ++i) y[i] = double(out[i]) * double(w.output_scale);
  return y;
}

struct Case {
  const char* name;
  TransformerConfig c;
};

// The sizes every case has, in one of TransformerConfig's presets.
TransformerConfig base_config(TransformerConfig (*family)(int32_t, int32_t, int32_t, int32_t, int32_t,
                                                          int32_t) = TransformerConfig::sized) {
  return family(/*vocab_size=*/64, /*embed_dim=*/32, /*num_layers=*/2, /*num_heads=*/4, /*ffn_dim=*/64,
                /*max_positions=*/32);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  {  // BERT: post-norm LayerNorm, GELU, learned positions, token types, embedding norm
    out.push_back({"bert_postnorm_gelu", base_config(TransformerConfig::encoder)});
  }
  {  // nn.TransformerEncoder(norm_first=True), ReLU, final norm
    TransformerConfig c = base_config();
    c.pre_norm = true;
    c.activation = Activation::kRelu;
    c.learned_positions = true;
    c.final_norm = true;
    out.push_back({"prenorm_relu", c});
  }
  {  // pre-norm, gelu_tanh, untied head, final norm (GPT-2 like)
    TransformerConfig c = random_model::gpt_like(base_config());
    c.final_norm = true;
    out.push_back({"gpt_gelu_tanh_untied", c});
  }
  // Llama: RMSNorm, SiLU gate, GQA, RoPE, no biases, tied head
  out.push_back({"llama_gqa_rope_tied",
                 random_model::llama_like(base_config(TransformerConfig::decoder), LmHead::kTied)});
  {  // Llama, multi-query, untied head, 3 layers
    TransformerConfig c = out.back().c;
    c.num_kv_heads = 1;
    c.num_layers = 3;
    c.head = LmHead::kUntied;
    out.push_back({"llama_mqa_untied", c});
  }
  return out;
}

}  // namespace

TEST_CASE("isqrt_u64 is the exact floor square root", "[transformer_fixed]") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    const uint64_t r = attn::detail::isqrt_u64(v);
    // r < 2^32, so r^2 fits in 64 bits; (r + 1)^2 does unless r = 2^32 - 1
    // (then (r + 1)^2 = 2^64 > v). No __int128: 32-bit targets run this too.
    REQUIRE(r <= UINT32_MAX);
    REQUIRE(r * r <= v);
    REQUIRE((r == UINT32_MAX || (r + 1) * (r + 1) > v));
  }
}

TEST_CASE("Integer norm kernels match a long double LayerNorm / RMSNorm", "[transformer_fixed]") {
  std::mt19937 rng(3);
  const int E = 48;
  for (NormKind kind : {NormKind::kLayerNorm, NormKind::kRmsNorm}) {
    for (double mag : {1e5, 1e7, 1e8, 2e9}) {  // residual rows: ~2^24 steps per calibrated max
      std::vector<int32_t> x(E);
      std::normal_distribution<double> d(0.3 * mag, mag / 4);
      for (auto& v : x) v = int32_t(std::clamp(d(rng), -2.1e9, 2.1e9));
      // weight 1.0: y = round(round(n 2^30 / 2^31) / 2^(F - 13)) = n 2^(13 - F): the normalized value
      // in units of 2^-12.
      const int32_t F = attn::norm_frac_bits(E);
      std::vector<int32_t> w(E, 1 << 30);
      const int64_t eps = 7;
      attn::NormFixed p;
      p.weight = w.data();
      p.eps = eps;
      p.shift = F - 13;
      std::vector<int32_t> y(E);
      attn::detail::NormRows<attn::detail::Isa::kRef>::s32(attn::matrix<const int32_t>(x.data(), 1, E), kind,
                                                           p, attn::matrix(y.data(), 1, E));
      long double mean = 0, var = 0;
      if (kind == NormKind::kLayerNorm) {
        for (int32_t v : x) mean += v;
        mean /= E;
      }
      for (int32_t v : x) var += (v - mean) * (v - mean);
      var /= E;
      for (int i = 0; i < E; ++i) {
        const long double want = (x[i] - mean) / std::sqrt(var + eps) * 4096.0L;
        INFO("kind " << int(kind) << " mag " << mag << " i " << i);
        CHECK(std::fabs(double(want - y[i])) <= 1.0);
      }
    }
  }
}

// The converter's range and smoothing choices attn quantize makes by default
// (tools/cli/cmd_quantize.cpp; measured in src/FIXED_POINT.md).
attn::TransformerQuantOptions chosen_options() {
  attn::TransformerQuantOptions o;
  o.mse_ranges = attn::kQuantizeMseRanges;
  o.smooth = attn::kQuantizeSmooth;
  o.compare = true;
  return o;
}

TEST_CASE("Whole s8/s16 models within 2 dB of the ideal fake-quantized forward", "[transformer_fixed]") {
  std::printf("%-24s %10s %8s %10s %8s %8s %8s %8s\n", "case", "ideal s8", "s8", "ideal s16", "s16", "rep s8",
              "chosen", "ch. s16");
  for (const Case& k : cases()) {
    INFO(k.name);
    const HostModel m = make_model(k.c, 11);
    const auto cal_seqs = sequences(8, 24, k.c.vocab_size, 101);
    const auto test_seqs = sequences(4, 24, k.c.vocab_size, 202);
    const Calib cal = calibration(cal_seqs);
    SimRanges ranges;
    {
      Sim rec{m};
      rec.record = &ranges;
      for (const auto& s : cal_seqs) rec.forward(s);
    }
    Quantized<attn::TransformerWeightsS8> q8;
    Quantized<attn::TransformerWeightsS16> q16;
    quantize(m, cal, DType::kS8, &q8);
    quantize(m, cal, DType::kS16, &q16);
    Quantized<attn::TransformerWeightsS8> c8;
    Quantized<attn::TransformerWeightsS16> c16;
    quantize(m, cal, DType::kS8, &c8, chosen_options());
    quantize(m, cal, DType::kS16, &c16, chosen_options());
    Vec ref, ideal8, ideal16, got8, got16, chosen8, chosen16;
    for (const auto& s : test_seqs) {
      const Vec r = Sim{m}.forward(s);
      Sim f8{m};
      f8.ranges = &ranges;
      f8.dt = DType::kS8;
      Sim f16 = f8;
      f16.dt = DType::kS16;
      const Vec i8 = f8.forward(s), i16 = f16.forward(s);
      const Vec g8 = run_fixed(m, DType::kS8, q8.w, s), g16 = run_fixed(m, DType::kS16, q16.w, s);
      ref.insert(ref.end(), r.begin(), r.end());
      ideal8.insert(ideal8.end(), i8.begin(), i8.end());
      ideal16.insert(ideal16.end(), i16.begin(), i16.end());
      got8.insert(got8.end(), g8.begin(), g8.end());
      got16.insert(got16.end(), g16.begin(), g16.end());
      const Vec h8 = run_fixed(m, DType::kS8, c8.w, s), h16 = run_fixed(m, DType::kS16, c16.w, s);
      chosen8.insert(chosen8.end(), h8.begin(), h8.end());
      chosen16.insert(chosen16.end(), h16.begin(), h16.end());
    }
    const double si8 = sqnr_db(ref, ideal8), s8 = sqnr_db(ref, got8);
    const double si16 = sqnr_db(ref, ideal16), s16 = sqnr_db(ref, got16);
    const double sc8 = sqnr_db(ref, chosen8), sc16 = sqnr_db(ref, chosen16);
    std::printf("%-24s %8.2f dB %5.2f dB %8.2f dB %5.2f dB %5.2f dB %5.2f dB %5.2f dB (smooth %.1f)\n",
                k.name, si8, s8, si16, s16, q8.report.output_sqnr_db, sc8, sc16,
                double(c8.report.smooth_used));
    for (const auto* rep : {&q8.report, &q16.report}) {
      std::printf("   report: emb %.2f", rep->embedding_sqnr_db);
      for (int l = 0; l < rep->num_layers; ++l) {
        std::printf(" L%d attn %.2f ffn %.2f", l, rep->attention_sqnr_db[l], rep->layer_sqnr_db[l]);
      }
      std::printf(" out %.2f\n", rep->output_sqnr_db);
      // Every stage is measured (the report sits below the embeddings' and above noise).
      for (int l = 0; l < rep->num_layers; ++l) {
        CHECK(rep->attention_sqnr_db[l] > 15.0);
        CHECK(rep->attention_sqnr_db[l] < 150.0);
        CHECK(rep->layer_sqnr_db[l] > 15.0);
        CHECK(rep->layer_sqnr_db[l] < 150.0);
      }
    }
    CHECK(s8 >= si8 - 2.0);
    CHECK(s16 >= si16 - 2.0);
    // attn quantize's range choice and smoothing: within the same 2 dB of the ideal min/max simulation.
    CHECK(sc8 >= si8 - 2.0);
    CHECK(sc16 >= si16 - 2.0);
    // int16 activations never lose to int8 ones (both have int8 weights, which limit s16).
    CHECK(s16 >= s8);
  }
}

template <typename Weights, typename State>
void check_decode(const HostModel& m, DType dt, const Weights& w,
                  Status (*init)(const attn::TransformerPlan&, int32_t, attn::Arena&, State*),
                  Status (*decode)(const attn::TransformerPlan&, const Weights&, State*, const int32_t*,
                                   int32_t, attn::OutputRows, int32_t*, attn::Arena&)) {
  const int32_t n = 14, V = m.c.vocab_size;
  const auto toks = sequences(1, n, V, 909)[0];
  attn::TransformerPlan full;
  REQUIRE(attn::plan_transformer_fixed(m.c, dt, n, 0, &full) == Status::kOk);
  AlignedBuffer fb(full.arena_bytes);
  attn::Arena fa;
  REQUIRE(fa.init(fb.data, full.arena_bytes) == Status::kOk);
  std::vector<int32_t> want(size_t(n) * size_t(V));
  REQUIRE(forward(full, w, toks.data(), n, attn::OutputRows::kAll, want.data(), fa) == Status::kOk);
  // kLast of the full forward is its last row.
  std::vector<int32_t> last(static_cast<size_t>(V));
  REQUIRE(forward(full, w, toks.data(), n, attn::OutputRows::kLast, last.data(), fa) == Status::kOk);
  CHECK(std::equal(last.begin(), last.end(), want.end() - V));

  attn::TransformerPlan plan;  // prefill of up to 6 tokens, then single steps
  REQUIRE(attn::plan_transformer_fixed(m.c, dt, 6, n, &plan) == Status::kOk);
  AlignedBuffer sb(plan.state_bytes), ab(plan.arena_bytes);
  attn::Arena sa, aa;
  REQUIRE(sa.init(sb.data, plan.state_bytes) == Status::kOk);
  REQUIRE(aa.init(ab.data, plan.arena_bytes) == Status::kOk);
  State st;
  REQUIRE(init(plan, 0, sa, &st) == Status::kOk);
  std::vector<int32_t> got(want.size());
  REQUIRE(decode(plan, w, &st, toks.data(), 5, attn::OutputRows::kAll, got.data(), aa) == Status::kOk);
  for (int32_t i = 5; i < n; ++i) {
    // The state lives in its own arena; the call's keeps nothing between calls.
    std::memset(ab.data, 0xA5 ^ i, plan.arena_bytes);
    REQUIRE(decode(plan, w, &st, toks.data() + i, 1, attn::OutputRows::kLast, got.data() + size_t(i) * V,
                   aa) == Status::kOk);
  }
  CHECK(got == want);
  // Full: nothing changes.
  CHECK(decode(plan, w, &st, toks.data(), 1, attn::OutputRows::kLast, got.data(), aa) == Status::kCacheFull);
  CHECK(st.length == n);
}

TEST_CASE("Integer decode (prefill + steps) is bit-exact with the full forward", "[transformer_fixed]") {
  for (const Case& k : cases()) {
    if (!k.c.causal) continue;
    INFO(k.name);
    const HostModel m = make_model(k.c, 5);
    const Calib cal = calibration(sequences(4, 16, k.c.vocab_size, 77));
    Quantized<attn::TransformerWeightsS8> q8;
    Quantized<attn::TransformerWeightsS16> q16;
    quantize(m, cal, DType::kS8, &q8);
    quantize(m, cal, DType::kS16, &q16);
    check_decode(m, DType::kS8, q8.w, attn::transformer_state_init_s8, attn::transformer_decode_s8);
    check_decode(m, DType::kS16, q16.w, attn::transformer_state_init_s16, attn::transformer_decode_s16);
  }
}

// kFirst writes one row, row 0 of the kAll forward byte for byte, at every
// tile size (the last layer's FFN runs on that row alone); a decoder's
// prefill too. An out-of-range OutputRows is refused.
template <typename Weights, typename State>
void check_first_row(const HostModel& m, DType dt, const Weights& w,
                     Status (*init)(const attn::TransformerPlan&, int32_t, attn::Arena&, State*),
                     Status (*decode)(const attn::TransformerPlan&, const Weights&, State*, const int32_t*,
                                      int32_t, attn::OutputRows, int32_t*, attn::Arena&)) {
  const int32_t n = 9;
  const size_t V = size_t(m.c.output_dim());
  const auto toks = sequences(1, n, m.c.vocab_size, 404)[0];
  for (const int32_t tile : {ATTN_TILE_ROWS, 1, 4}) {
    INFO("tile_rows " << tile);
    attn::TransformerPlan plan;
    REQUIRE(attn::plan_transformer_fixed(m.c, dt, n, m.c.causal ? n : 0, &plan, tile) == Status::kOk);
    AlignedBuffer ab(plan.arena_bytes), sb(plan.state_bytes + 16);
    attn::Arena a, sa;
    REQUIRE(a.init(ab.data, plan.arena_bytes) == Status::kOk);
    REQUIRE(sa.init(sb.data, plan.state_bytes + 16) == Status::kOk);
    std::vector<int32_t> all(size_t(n) * V), first(V + 1, 0x5A5A5A5A);
    REQUIRE(forward(plan, w, toks.data(), n, attn::OutputRows::kAll, all.data(), a) == Status::kOk);
    REQUIRE(forward(plan, w, toks.data(), n, attn::OutputRows::kFirst, first.data(), a) == Status::kOk);
    CHECK(std::equal(all.begin(), all.begin() + std::ptrdiff_t(V), first.begin()));
    CHECK(first[V] == 0x5A5A5A5A);  // one row only
    CHECK(forward(plan, w, toks.data(), n, static_cast<attn::OutputRows>(3), first.data(), a) ==
          Status::kBadQueryLength);
    if (!m.c.causal) continue;
    State st;
    REQUIRE(init(plan, 0, sa, &st) == Status::kOk);
    std::fill(first.begin(), first.end(), 0x5A5A5A5A);
    REQUIRE(decode(plan, w, &st, toks.data(), n, attn::OutputRows::kFirst, first.data(), a) == Status::kOk);
    CHECK(std::equal(all.begin(), all.begin() + std::ptrdiff_t(V), first.begin()));
    CHECK(first[V] == 0x5A5A5A5A);
  }
}

TEST_CASE("Integer kFirst is row 0 of the whole forward, bit for bit (an encoder's [CLS])",
          "[transformer_fixed]") {
  for (const Case& k : cases()) {
    INFO(k.name);
    const HostModel m = make_model(k.c, 6);
    const Calib cal = calibration(sequences(4, 16, k.c.vocab_size, 79));
    Quantized<attn::TransformerWeightsS8> q8;
    Quantized<attn::TransformerWeightsS16> q16;
    quantize(m, cal, DType::kS8, &q8);
    quantize(m, cal, DType::kS16, &q16);
    check_first_row(m, DType::kS8, q8.w, attn::transformer_state_init_s8, attn::transformer_decode_s8);
    check_first_row(m, DType::kS16, q16.w, attn::transformer_state_init_s16, attn::transformer_decode_s16);
  }
}

TEST_CASE("Integer model forwards reject bad arguments before writing", "[transformer_fixed]") {
  const Case k = cases()[3];  // Llama
  const HostModel m = make_model(k.c, 5);
  const Calib cal = calibration(sequences(2, 8, k.c.vocab_size, 78));
  Quantized<attn::TransformerWeightsS8> q;
  quantize(m, cal, DType::kS8, &q);
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer_fixed(m.c, DType::kS8, 8, 0, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena a;
  REQUIRE(a.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<int32_t> toks = {1, 2, 3, 4}, out(4 * size_t(m.c.vocab_size), 0x5A5A5A5A);
  const auto fwd = [&](const attn::TransformerWeightsS8& w, const std::vector<int32_t>& t, int32_t n) {
    return attn::transformer_forward_s8(plan, w, t.data(), n, attn::OutputRows::kAll, out.data(), a);
  };
  CHECK(fwd(q.w, {1, 2, -1, 4}, 4) == Status::kTokenOutOfRange);
  CHECK(fwd(q.w, {1, 2, 64, 4}, 4) == Status::kTokenOutOfRange);
  CHECK(fwd(q.w, toks, 0) == Status::kBadQueryLength);
  CHECK(fwd(q.w, std::vector<int32_t>(9, 1), 9) == Status::kSequenceTooLong);
  CHECK(attn::transformer_forward_s8(plan, q.w, nullptr, 4, attn::OutputRows::kAll, out.data(), a) ==
        Status::kNullArgument);
  attn::TransformerPlan p16;
  REQUIRE(attn::plan_transformer_fixed(m.c, DType::kS16, 8, 0, &p16) == Status::kOk);
  CHECK(attn::transformer_forward_s8(p16, q.w, toks.data(), 4, attn::OutputRows::kAll, out.data(), a) ==
        Status::kBadDtype);
  // Bad constants: a norm shift, a zero point, a rescale shift, a missing table.
  std::vector<attn::LayerWeightsS8> layers(q.w.layers, q.w.layers + m.c.num_layers);
  attn::TransformerWeightsS8 bad = q.w;
  bad.layers = layers.data();
  layers[1].norm2.shift = 31;
  CHECK(fwd(bad, toks, 4) == Status::kBadQuantParams);
  layers[1] = q.w.layers[1];
  layers[1].norm1.output_zero_point = 128;
  CHECK(fwd(bad, toks, 4) == Status::kBadQuantParams);
  layers[1] = q.w.layers[1];
  layers[1].attn_out.shift = 31;
  CHECK(fwd(bad, toks, 4) == Status::kBadQuantParams);
  layers[1] = q.w.layers[1];
  layers[1].ffn.gate_table = nullptr;
  CHECK(fwd(bad, toks, 4) == Status::kNullArgument);
  layers[1] = q.w.layers[1];
  bad.final_norm.eps = -1;
  CHECK(fwd(bad, toks, 4) == Status::kBadQuantParams);
  CHECK(out[0] == 0x5A5A5A5A);
  // And the untouched weights run.
  CHECK(fwd(q.w, toks, 4) == Status::kOk);
}

TEST_CASE("Integer model plans size the arena and state in 64 bits: past SIZE_MAX is kSizeOverflow",
          "[transformer_fixed]") {
  // 64 layers of 64 x 64 heads over 65536 positions: K and V caches of 2^29
  // (s8) or 2^30 (s16) bytes per layer, 2^35 / 2^36 in all. A 32-bit size_t
  // wrapped the state to a few KiB (an arena too small for the plan's own
  // caches); the plan must say so instead. On 64 bits: the exact numbers.
  TransformerConfig c = TransformerConfig::sized(/*vocab_size=*/256, /*embed_dim=*/4096, /*num_layers=*/64,
                                                 /*num_heads=*/64, /*ffn_dim=*/4096, /*max_positions=*/65536);
  c.head_dim = 64;
  c.norm = NormKind::kRmsNorm;
  c.activation = Activation::kSilu;
  c.pre_norm = c.causal = true;
  for (DType dt : {DType::kS8, DType::kS16}) {
    for (int32_t tokens : {1, 65536}) {
      INFO("dtype " << static_cast<int>(dt) << ", max_tokens " << tokens);
      const uint64_t e = dt == DType::kS8 ? 1 : 2;
      const uint64_t cache_struct = dt == DType::kS8 ? sizeof(attn::KvCacheS8) : sizeof(attn::KvCacheS16);
      const uint64_t want_state = (cache_struct * 64 + 15) / 16 * 16 + 64 * (2 * 65536 * 4096 * e);
      attn::TransformerPlan p;
      const Status s = attn::plan_transformer(c, dt, tokens, 65536, &p);
      if (want_state > SIZE_MAX) {
        CHECK(s == Status::kSizeOverflow);
      } else {
        REQUIRE(s == Status::kOk);
        CHECK(p.state_bytes == want_state);
        CHECK(p.arena_bytes >= uint64_t{65536} * 4096 * (tokens == 1 ? 0 : 4 + e));  // x and a_in [n, E]
      }
    }
  }
}

TEST_CASE("Integer model sizes are constant expressions, the numbers plan_transformer_fixed reports",
          "[transformer_fixed]") {
  static constexpr TransformerConfig kCfg = [] {
    TransformerConfig c = TransformerConfig::decoder(/*vocab_size=*/64, /*embed_dim=*/32, /*num_layers=*/2,
                                                     /*num_heads=*/4, /*ffn_dim=*/96, /*max_positions=*/64);
    c.num_kv_heads = 2;
    c.gated_ffn = true;
    return c;
  }();
  // Firmware sizes its static buffers with them.
  alignas(
      ATTN_ARENA_ALIGN) static uint8_t scratch[attn::transformer_fixed_arena_bytes(kCfg, DType::kS8, 8, 32)];
  alignas(
      ATTN_ARENA_ALIGN) static uint8_t state_buf[attn::transformer_fixed_state_bytes(kCfg, DType::kS8, 32)];
  static_assert(attn::transformer_fixed_state_bytes(kCfg, DType::kS8, 0) == 0, "no state without capacity");
  static_assert(attn::transformer_fixed_arena_bytes(kCfg, DType::kF32, 8, 32) == 0, "integer dtypes only");
  for (const DType dtype : {DType::kS8, DType::kS16}) {
    for (const int32_t tile : {1, 4, 48}) {
      for (const int32_t cap : {0, 12, 64}) {
        attn::TransformerPlan plan;
        REQUIRE(attn::plan_transformer_fixed(kCfg, dtype, 8, cap, &plan, tile) == Status::kOk);
        CHECK(plan.arena_bytes == attn::transformer_fixed_arena_bytes(kCfg, dtype, 8, cap, tile));
        CHECK(plan.state_bytes == attn::transformer_fixed_state_bytes(kCfg, dtype, cap));
      }
    }
  }
  // The state takes exactly its bytes from the static buffer; one fewer is refused.
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer_fixed(kCfg, DType::kS8, 8, 32, &plan) == Status::kOk);
  CHECK(plan.arena_bytes == sizeof scratch);
  attn::Arena arena;
  REQUIRE(arena.init(state_buf, sizeof state_buf) == Status::kOk);
  attn::TransformerStateS8 state;
  REQUIRE(attn::transformer_state_init_s8(plan, 0, arena, &state) == Status::kOk);
  CHECK(arena.used() == sizeof state_buf);
  attn::Arena short_arena;
  REQUIRE(short_arena.init(state_buf, sizeof state_buf - 1) == Status::kOk);
  CHECK(attn::transformer_state_init_s8(plan, 0, short_arena, &state) == Status::kArenaTooSmall);
}

// ---- the converter's range choice and smoothing ---------------------------------------------

namespace {

// Exact mean squared error of quantizing xs with p.
double grid_mse(const std::vector<float>& xs, attn::QuantParams p, DType dt) {
  double e = 0.0;
  for (float x : xs) {
    const double q = double(attn::quantize_value(x, p, dt) - p.zero_point) * double(p.scale);
    e += (q - double(x)) * (q - double(x));
  }
  return e / double(xs.size());
}

// The error-chosen and the min/max range of xs: their exact MSEs.
std::pair<double, double> chosen_vs_minmax(const std::vector<float>& xs, DType dt) {
  attn::Range r;
  for (float x : xs) {
    r.min = std::min(r.min, x);
    r.max = std::max(r.max, x);
  }
  std::vector<uint32_t> counts(attn::detail::kRangeBins, 0);
  attn::detail::Histogram h;
  h.domain = r;
  h.counts = counts.data();
  attn::detail::histogram_add(h, xs.data(), xs.size());
  const attn::Range c = attn::detail::choose_range_mse(h, dt);
  return {grid_mse(xs, attn::choose_activation_quant(c, dt), dt),
          grid_mse(xs, attn::choose_activation_quant(r, dt), dt)};
}

std::vector<float> forward_f32(const TransformerConfig& c, const attn::TransformerWeightsF32& w,
                               const std::vector<int32_t>& tokens) {
  attn::TransformerPlan plan;
  const int32_t n = int32_t(tokens.size());
  REQUIRE(attn::plan_transformer(c, DType::kF32, n, 0, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<float> out(size_t(n) * size_t(c.output_dim()));
  REQUIRE(attn::transformer_forward_f32(plan, w, tokens.data(), n, attn::OutputRows::kAll, out.data(),
                                        arena) == Status::kOk);
  return out;
}

// Channels 3 and 17 of every norm's weight 25x larger: outlier channels in the
// attention and FFN inputs, as trained LLMs have.
void plant_outliers(HostModel& m) {
  for (HostLayer& l : m.layers) {
    for (int j : {3, 17}) {
      l.n1w[size_t(j)] *= 25.0f;
      l.n2w[size_t(j)] *= 25.0f;
    }
  }
}

}  // namespace

TEST_CASE("Error-chosen ranges: less calibration MSE than min/max on a tensor with outliers",
          "[transformer_fixed]") {
  // Laplace tails (as trained models' activations have): the few values far out set the min/max grid.
  std::mt19937 rng(17);
  std::exponential_distribution<float> ed(1.0f);
  std::vector<float> xs(20000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = (i % 3 == 0 ? -0.5f : 1.0f) * ed(rng);  // asymmetric
  for (DType dt : {DType::kS8, DType::kS16}) {
    const auto [chosen, minmax] = chosen_vs_minmax(xs, dt);
    INFO("dtype " << int(dt) << " chosen " << chosen << " min/max " << minmax);
    CHECK(chosen <= minmax);
    // The clip pays, if little at 8 bits (4% here): a finer grid for nearly every value.
    if (dt == DType::kS8) CHECK(chosen < 0.98 * minmax);
  }
  // Point outliers far out: their clipping error would outweigh a finer grid, so the range keeps them.
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& x : xs) x = nd(rng);
  for (int i = 0; i < 8; ++i) xs[size_t(i) * 997] = i % 2 == 0 ? 60.0f : -45.0f;
  auto [chosen, minmax] = chosen_vs_minmax(xs, DType::kS8);
  CHECK(chosen <= minmax);
  // A uniform tensor: clipping would only cost.
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  for (float& x : xs) x = ud(rng);
  std::tie(chosen, minmax) = chosen_vs_minmax(xs, DType::kS8);
  CHECK(chosen <= minmax * 1.01);
}

TEST_CASE("Smoothing keeps the float model's function", "[transformer_fixed]") {
  for (const Case& k : cases()) {
    INFO(k.name);
    const HostModel m = make_model(k.c, 23);
    // Any positive maxima: the transformation is exact in real arithmetic for every s_j.
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> ud(0.01, 40.0);
    std::vector<double> chan(size_t(m.c.num_layers) * size_t(attn::detail::chan_stride(m.c)));
    for (double& x : chan) x = ud(rng);
    const size_t bytes = attn::detail::smooth_weights_bytes(m.c) + 64;
    AlignedBuffer buf(bytes);  // 16-byte aligned: the arena refuses less
    attn::Arena arena;
    REQUIRE(arena.init(buf.data, bytes) == Status::kOk);
    attn::TransformerWeightsF32 ws;
    REQUIRE(attn::detail::smooth_weights(m.c, m.w, chan.data(), 0.5, arena, &ws) == Status::kOk);
    CHECK(arena.used() <= attn::detail::smooth_weights_bytes(m.c));
    // The weights moved (pre-norm: N1 too; everywhere: Wo's columns).
    CHECK(!std::equal(m.layers[0].wo.begin(), m.layers[0].wo.end(), ws.layers[0].attention.wo));
    if (m.c.pre_norm)
      CHECK(!std::equal(m.layers[0].n1w.begin(), m.layers[0].n1w.end(), ws.layers[0].norm1.weight));
    const auto toks = sequences(1, 20, m.c.vocab_size, 31)[0];
    const std::vector<float> a = forward_f32(m.c, m.w, toks), b = forward_f32(m.c, ws, toks);
    double amax = 0.0, dmax = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      amax = std::max(amax, std::fabs(double(a[i])));
      dmax = std::max(dmax, std::fabs(double(a[i]) - double(b[i])));
    }
    CHECK(dmax <= 1e-4 * amax);
  }
}

TEST_CASE("Smoothing and error-chosen ranges raise the s8 SQNR of a model with outlier channels",
          "[transformer_fixed]") {
  TransformerConfig c = random_model::llama_like(base_config(TransformerConfig::decoder), LmHead::kUntied);
  HostModel m = make_model(c, 41);
  plant_outliers(m);
  const Calib cal = calibration(sequences(8, 24, c.vocab_size, 101));
  const auto test_seqs = sequences(4, 24, c.vocab_size, 202);
  const auto measure = [&](const attn::TransformerQuantOptions& o, attn::TransformerQuantReport* rep) {
    Quantized<attn::TransformerWeightsS8> q;
    quantize(m, cal, DType::kS8, &q, o);
    *rep = q.report;
    Vec ref, got;
    for (const auto& s : test_seqs) {
      const Vec r = Sim{m}.forward(s), g = run_fixed(m, DType::kS8, q.w, s);
      ref.insert(ref.end(), r.begin(), r.end());
      got.insert(got.end(), g.begin(), g.end());
    }
    return sqnr_db(ref, got);
  };
  attn::TransformerQuantOptions plain, fixed, smooth, both;
  fixed.smooth = 0.5f;
  smooth.smooth = -1.0f;
  smooth.compare = true;
  both = smooth;
  both.mse_ranges = attn::kRangeAll;
  attn::TransformerQuantReport rp, rf, rs, rb;
  const double db_plain = measure(plain, &rp), db_fixed = measure(fixed, &rf);
  const double db_smooth = measure(smooth, &rs), db_both = measure(both, &rb);
  std::printf(
      "outlier channels, s8 on held-out sequences: min/max %.2f dB, smoothed 0.5 %.2f dB, searched (%.1f) "
      "%.2f dB, "
      "with error-chosen ranges %.2f dB; calibration: min/max %.2f, mse %.2f dB\n",
      db_plain, db_fixed, double(rs.smooth_used), db_smooth, db_both, rb.minmax_output_sqnr_db,
      rb.mse_output_sqnr_db);
  // The search picked a strength, it measured every one, and the model got better.
  CHECK(rs.smooth_used > 0.0f);
  CHECK(rs.smooth_tried == attn::kSmoothGridSize);
  CHECK(rf.smooth_used == 0.5f);
  CHECK(rs.output_sqnr_db > rs.minmax_output_sqnr_db + 1.0);
  CHECK(db_fixed > db_plain + 1.0);
  CHECK(db_smooth > db_plain + 1.0);
  // Report figures are the same measure: the plain run's output SQNR is the compare run's min/max one.
  CHECK(std::fabs(rs.minmax_output_sqnr_db - rp.output_sqnr_db) < 1e-9);
}
