// forward_s8 / forward_s16 and quantize_attention_*: the integer forward on
// random cases against (a) the float64 forward and (b) a float64 "ideal
// fake-quant" simulation of the same scheme written here (same calibration,
// per-channel int8 weights, per-tensor activations, exact probabilities).
// The integer forward must come within 1 dB of the ideal, and meet the
// issue's absolute targets on unit-scale data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"

namespace {

using attn::DType;
using attn::Status;
using Vec = std::vector<double>;

constexpr attn::AttentionConfig kStaticCfg{64, 4};
static_assert(attn::attention_arena_bytes(kStaticCfg, DType::kS8, 64, 128) ==
                  2 * 128 * 64 + 4 * 64 + 4 * 128 * 4 + 4 * 64,
              "s8 arena: K, V [S,D] int8 + Q, O tiles [T,D] int8 + scores [T,S] int32");
static_assert(attn::attention_arena_bytes(kStaticCfg, DType::kS16, 64, 128) ==
                  2 * 128 * 64 * 2 + 4 * 64 * 2 + 4 * 128 * 4 + 4 * 64 * 2,
              "s16 arena: the same buffers with int16 activations");

struct AlignedBuffer {
  explicit AlignedBuffer(size_t n)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64))) {}
  ~AlignedBuffer() { std::free(data); }
  uint8_t* data;
};

std::vector<float> randn(size_t n, std::mt19937& rng, double scale) {
  std::normal_distribution<double> d(0.0, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(rng));
  return v;
}

struct Model {
  attn::AttentionConfig cfg;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  attn::WeightsF32 weights() const {
    attn::WeightsF32 w{wq.data(), wk.data(), wv.data(), wo.data()};
    if (cfg.bias) w.bq = bq.data(), w.bk = bk.data(), w.bv = bv.data(), w.bo = bo.data();
    return w;
  }
};

Model make_model(attn::AttentionConfig cfg, std::mt19937& rng) {
  Model m{cfg, {}, {}, {}, {}, {}, {}, {}, {}};
  const size_t E = size_t(cfg.embed_dim), D = size_t(cfg.inner_dim());
  const size_t kd = size_t(cfg.resolved_kdim()), vd = size_t(cfg.resolved_vdim());
  m.wq = randn(D * E, rng, 1.0 / std::sqrt(double(E)));
  m.wk = randn(D * kd, rng, 1.0 / std::sqrt(double(kd)));
  m.wv = randn(D * vd, rng, 1.0 / std::sqrt(double(vd)));
  m.wo = randn(E * D, rng, 1.0 / std::sqrt(double(D)));
  m.bq = randn(D, rng, 0.1), m.bk = randn(D, rng, 0.1), m.bv = randn(D, rng, 0.1), m.bo = randn(E, rng, 0.1);
  return m;
}

struct Inputs {
  int L, S;
  std::vector<float> x, xk, xv;
};

Inputs make_inputs(const attn::AttentionConfig& cfg, int L, int S, bool self, double scale,
                   std::mt19937& rng) {
  Inputs in{L, S, randn(size_t(L) * cfg.embed_dim, rng, scale), {}, {}};
  REQUIRE((!self || L == S));
  if (self) {
    in.xk = in.x, in.xv = in.x;
  } else {
    in.xk = randn(size_t(S) * cfg.resolved_kdim(), rng, scale);
    in.xv = randn(size_t(S) * cfg.resolved_vdim(), rng, scale);
  }
  return in;
}

// Every stage of a double forward.
struct Stages {
  Vec x, xk, xv, q, k, v, ctx, y;
};

// Matrix x [rows, in] (double) times w [out, in]^T plus b.
Vec project(const Vec& x, int rows, int in, const Vec& w, const Vec& b, int out) {
  Vec y(size_t(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[o];
      for (int i = 0; i < in; ++i) acc += x[size_t(r) * in + i] * w[size_t(o) * in + i];
      y[size_t(r) * out + o] = acc;
    }
  return y;
}

Vec to_d(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

// The double forward with an optional fake-quantizer applied after each stage.
template <class Fq>
Stages run_double(const attn::AttentionConfig& cfg, const Vec& wq, const Vec& wk, const Vec& wv,
                  const Vec& wo, const Model& m, const Inputs& in, const attn::Mask& mask, Fq fq) {
  const int E = cfg.embed_dim, H = cfg.num_heads, hd = cfg.resolved_head_dim(), D = H * hd;
  const int kd = cfg.resolved_kdim(), vd = cfg.resolved_vdim(), L = in.L, S = in.S;
  const Vec bq = cfg.bias ? to_d(m.bq) : Vec(), bk = cfg.bias ? to_d(m.bk) : Vec();
  const Vec bv = cfg.bias ? to_d(m.bv) : Vec(), bo = cfg.bias ? to_d(m.bo) : Vec();
  Stages st;
  st.x = fq(0, to_d(in.x)), st.xk = fq(1, to_d(in.xk)), st.xv = fq(2, to_d(in.xv));
  st.q = fq(3, project(st.x, L, E, wq, bq, D));
  st.k = fq(4, project(st.xk, S, kd, wk, bk, D));
  st.v = fq(5, project(st.xv, S, vd, wv, bv, D));
  Vec ctx(size_t(L) * D, 0.0);
  const int kl = mask.key_length == attn::Mask::kAllKeys ? S : mask.key_length;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < L; ++i) {
      const int n = std::min(kl, mask.causal ? i + mask.causal_offset + 1 : S);
      if (n <= 0) continue;
      Vec s(static_cast<size_t>(n));
      double mx = -1e300;
      for (int j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int c = 0; c < hd; ++c)
          acc += st.q[size_t(i) * D + h * hd + c] * st.k[size_t(j) * D + h * hd + c];
        s[j] = acc / std::sqrt(double(hd));
        mx = std::max(mx, s[j]);
      }
      double sum = 0.0;
      for (double& v : s) sum += (v = std::exp(v - mx));
      for (int j = 0; j < n; ++j)
        for (int c = 0; c < hd; ++c)
          ctx[size_t(i) * D + h * hd + c] += s[j] / sum * st.v[size_t(j) * D + h * hd + c];
    }
  st.ctx = fq(6, ctx);
  st.y = fq(7, project(st.ctx, L, D, wo, bo, E));
  return st;
}

Stages float_forward(const Model& m, const Inputs& in, const attn::Mask& mask) {
  return run_double(m.cfg, to_d(m.wq), to_d(m.wk), to_d(m.wv), to_d(m.wo), m, in, mask,
                    [](int, const Vec& v) { return v; });
}

void widen(attn::Range& r, const Vec& v) {
  for (double x : v) r.min = std::min(r.min, float(x)), r.max = std::max(r.max, float(x));
}

double sqnr_db(const Vec& ref, const Vec& got) {
  double s = 0.0, n = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) s += ref[i] * ref[i], n += (ref[i] - got[i]) * (ref[i] - got[i]);
  return 10.0 * std::log10(s / std::max(n, 1e-300));
}

// Per-channel symmetric int8 weights, written independently of the library.
Vec fake_quant_weight(const std::vector<float>& w, int out, int in) {
  Vec r(w.size());
  for (int c = 0; c < out; ++c) {
    double amax = 0.0;
    for (int k = 0; k < in; ++k) amax = std::max(amax, std::fabs(double(w[size_t(c) * in + k])));
    const double s = float(amax / 127.0);
    for (int k = 0; k < in; ++k)
      r[size_t(c) * in + k] = s * std::max(-127.0, std::min(127.0, std::round(w[size_t(c) * in + k] / s)));
  }
  return r;
}

Vec fake_quant(const Vec& v, attn::QuantParams p, DType dt) {
  const double lo = dt == DType::kS8 ? -128 : -32768, hi = dt == DType::kS8 ? 127 : 32767;
  Vec r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = double(p.scale) *
           (std::max(lo, std::min(hi, std::round(v[i] / double(p.scale)) + p.zero_point)) - p.zero_point);
  return r;
}

struct Result {
  double ideal_db, int_db;
};

// Calibrate on `calib`, quantize, run the integer forward on `test`, and
// measure both SQNRs against the float64 forward.
Result evaluate(const Model& m, const std::vector<Inputs>& calib, const Inputs& test, const attn::Mask& mask,
                DType dt) {
  attn::CalibrationRanges r;
  for (const Inputs& c : calib) {
    const Stages s = float_forward(m, c, mask);
    widen(r.query, s.x), widen(r.key, s.xk), widen(r.value, s.xv), widen(r.q, s.q), widen(r.k, s.k);
    widen(r.v, s.v), widen(r.context, s.ctx), widen(r.output, s.y);
  }
  const attn::AttentionConfig& cfg = m.cfg;
  AlignedBuffer store(attn::quantized_attention_bytes(cfg, dt));
  attn::Arena st;
  REQUIRE(st.init(store.data, attn::quantized_attention_bytes(cfg, dt)) == Status::kOk);
  attn::ActivationQuant act;
  attn::WeightsS8 w8;
  attn::WeightsS16 w16;
  if (dt == DType::kS8) {
    REQUIRE(attn::quantize_attention_s8(cfg, m.weights(), r, st, &w8, &act) == Status::kOk);
  } else {
    REQUIRE(attn::quantize_attention_s16(cfg, m.weights(), r, st, &w16, &act) == Status::kOk);
  }
  REQUIRE(st.used() == attn::quantized_attention_bytes(cfg, dt));

  // Integer forward.
  const int E = cfg.embed_dim;
  attn::Plan plan;
  REQUIRE(attn::plan_attention(cfg, dt, test.L, test.S, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  Vec y(size_t(test.L) * E);
  auto quant = [&](const std::vector<float>& v, attn::QuantParams p, auto* out) {
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(attn::quantize_value(v[i], p, dt));
  };
  if (dt == DType::kS8) {
    std::vector<int8_t> x(test.x.size()), xk(test.xk.size()), xv(test.xv.size()), yq(y.size());
    quant(test.x, act.query, x.data()), quant(test.xk, act.key, xk.data()),
        quant(test.xv, act.value, xv.data());
    REQUIRE(attn::forward_s8(plan, w8, mask, {x.data(), xk.data(), xv.data(), yq.data()}, arena) ==
            Status::kOk);
    for (size_t i = 0; i < y.size(); ++i) y[i] = double(act.output.scale) * (yq[i] - act.output.zero_point);
  } else {
    std::vector<int16_t> x(test.x.size()), xk(test.xk.size()), xv(test.xv.size()), yq(y.size());
    quant(test.x, act.query, x.data()), quant(test.xk, act.key, xk.data()),
        quant(test.xv, act.value, xv.data());
    REQUIRE(attn::forward_s16(plan, w16, mask, {x.data(), xk.data(), xv.data(), yq.data()}, arena) ==
            Status::kOk);
    for (size_t i = 0; i < y.size(); ++i) y[i] = double(act.output.scale) * yq[i];
  }
  REQUIRE(arena.used() == 0);
  REQUIRE(arena.high_water() == plan.arena_bytes);

  // Ideal fake-quant simulation of the same scheme.
  const attn::QuantParams qp[8] = {act.query, act.key, act.value,   act.q,
                                   act.k,     act.v,   act.context, act.output};
  const int D = cfg.inner_dim();
  const Stages ideal =
      run_double(cfg, fake_quant_weight(m.wq, D, E), fake_quant_weight(m.wk, D, cfg.resolved_kdim()),
                 fake_quant_weight(m.wv, D, cfg.resolved_vdim()), fake_quant_weight(m.wo, E, D), m, test,
                 mask, [&](int stage, const Vec& v) { return fake_quant(v, qp[stage], dt); });
  const Stages ref = float_forward(m, test, mask);
  return {sqnr_db(ref.y, ideal.y), sqnr_db(ref.y, y)};
}

struct Spec {
  attn::AttentionConfig cfg;
  int L, S;
  bool self;
  attn::Mask mask;
};

attn::Mask causal() {
  attn::Mask m;
  m.causal = true;
  return m;
}
attn::Mask padded(int kl) {
  attn::Mask m;
  m.key_length = kl;
  return m;
}

const Spec kSpecs[] = {
    {{64, 4}, 16, 16, true, {}},
    {{64, 8}, 32, 128, false, {}},
    {{32, 2}, 8, 64, false, {}},
    {{128, 8}, 24, 24, true, {}},
    {{64, 4}, 32, 32, true, causal()},
    {{64, 4}, 12, 40, false, padded(29)},
    {{48, 3, 0, 40, 24}, 10, 50, false, {}},      // kdim, vdim != E
    {{64, 4, 0, 0, 0, false}, 16, 16, true, {}},  // no biases
    {{64, 2, 24}, 16, 24, false, {}},             // head_dim given, D != E
};

void run_accuracy(DType dt, double median_min, double floor_db) {
  std::vector<double> got;
  int idx = 0;
  for (const Spec& sp : kSpecs) {
    std::mt19937 rng(100 + idx++);
    const Model m = make_model(sp.cfg, rng);
    std::vector<Inputs> calib;
    for (int i = 0; i < 16; ++i) calib.push_back(make_inputs(sp.cfg, sp.L, sp.S, sp.self, 1.0, rng));
    const Inputs test = make_inputs(sp.cfg, sp.L, sp.S, sp.self, 1.0, rng);
    const Result r = evaluate(m, calib, test, sp.mask, dt);
    std::printf("%s case %d: ideal %.2f dB, integer %.2f dB\n", dt == DType::kS8 ? "s8 " : "s16", idx,
                r.ideal_db, r.int_db);
    CHECK(r.int_db >= r.ideal_db - 1.0);
    CHECK(r.int_db >= floor_db);
    got.push_back(r.int_db);
  }
  std::sort(got.begin(), got.end());
  const double median = got[got.size() / 2];
  std::printf("%s median %.2f dB, min %.2f dB\n", dt == DType::kS8 ? "s8 " : "s16", median, got.front());
  CHECK(median >= median_min);
}

TEST_CASE("forward_s8: within 1 dB of the ideal fake-quant scheme, >= 28 dB median", "[attention_fixed]") {
  run_accuracy(DType::kS8, 28.0, 19.0);
}

TEST_CASE("forward_s16: within 1 dB of the ideal fake-quant scheme, >= 37 dB median", "[attention_fixed]") {
  run_accuracy(DType::kS16, 37.0, 26.0);
}

TEST_CASE("peaky softmax (inputs x6): still within 1 dB of the ideal", "[attention_fixed]") {
  for (DType dt : {DType::kS8, DType::kS16}) {
    std::mt19937 rng(77);
    const attn::AttentionConfig cfg{64, 4};
    const Model m = make_model(cfg, rng);
    std::vector<Inputs> calib;
    for (int i = 0; i < 4; ++i) calib.push_back(make_inputs(cfg, 32, 64, false, 6.0, rng));
    const Inputs test = make_inputs(cfg, 32, 64, false, 6.0, rng);
    const Result r = evaluate(m, calib, test, {}, dt);
    std::printf("%s scale 6: ideal %.2f dB, integer %.2f dB\n", dt == DType::kS8 ? "s8 " : "s16", r.ideal_db,
                r.int_db);
    CHECK(r.int_db >= r.ideal_db - 1.0);
  }
}

}  // namespace
