// forward_s8 / forward_s16 and quantize_attention_*: the integer forward on
// random cases against (a) the float64 forward and (b) a float64 "ideal
// fake-quant" simulation of the same scheme written here (same calibration,
// per-channel int8 weights, per-tensor activations, exact probabilities).
// The integer forward must come within 1 dB of the ideal, and meet the
// median SQNR floors of the test cases below on unit-scale data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "fixed_dtypes.h"

namespace {

using attn::DType;
using attn::Status;
using Vec = std::vector<double>;

constexpr attn::AttentionConfig kStaticCfg{64, 4};
static_assert(attn::attention_arena_bytes(kStaticCfg, DType::kS8, 64, 128, 4) ==
                  2 * 128 * 64 + 4 * 64 + 4 * 128 * 4 + 4 * 64,
              "s8 arena: K, V [S,D] int8 + Q, O tiles [T,D] int8 + scores [T,S] int32");
static_assert(attn::attention_arena_bytes(kStaticCfg, DType::kS16, 64, 128, 4) ==
                  2 * 128 * 64 * 2 + 4 * 64 * 2 + 4 * 128 * 4 + 4 * 64 * 2,
              "s16 arena: the same buffers with int16 activations");

struct AlignedBuffer {
  explicit AlignedBuffer(size_t n)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64))) {}
  ~AlignedBuffer() { std::free(data); }
  uint8_t* data;
};

// A plan for cfg at dtype dt over L query and S key rows (tile_rows query
// rows a tile) and an arena of exactly its size.
struct PlannedArena {
  PlannedArena(const attn::AttentionConfig& cfg, DType dt, int L, int S, int tile_rows = ATTN_TILE_ROWS)
      : status(attn::plan_attention(cfg, dt, L, S, &plan, tile_rows)), buf(plan.arena_bytes) {
    REQUIRE(status == Status::kOk);
    REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  }
  attn::Plan plan;
  Status status;
  AlignedBuffer buf;
  attn::Arena arena;
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
  const size_t Dkv = size_t(cfg.kv_dim());
  m.wk = randn(Dkv * kd, rng, 1.0 / std::sqrt(double(kd)));
  m.wv = randn(Dkv * vd, rng, 1.0 / std::sqrt(double(vd)));
  m.wo = randn(E * D, rng, 1.0 / std::sqrt(double(D)));
  m.bq = randn(D, rng, 0.1), m.bk = randn(Dkv, rng, 0.1), m.bv = randn(Dkv, rng, 0.1),
  m.bo = randn(E, rng, 0.1);
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
  const int Dkv = cfg.kv_dim(), group = H / cfg.resolved_kv_heads();
  const int kd = cfg.resolved_kdim(), vd = cfg.resolved_vdim(), L = in.L, S = in.S;
  const Vec bq = cfg.bias ? to_d(m.bq) : Vec(), bk = cfg.bias ? to_d(m.bk) : Vec();
  const Vec bv = cfg.bias ? to_d(m.bv) : Vec(), bo = cfg.bias ? to_d(m.bo) : Vec();
  Stages st;
  st.x = fq(0, to_d(in.x)), st.xk = fq(1, to_d(in.xk)), st.xv = fq(2, to_d(in.xv));
  st.q = fq(3, project(st.x, L, E, wq, bq, D));
  st.k = fq(4, project(st.xk, S, kd, wk, bk, Dkv));
  st.v = fq(5, project(st.xv, S, vd, wv, bv, Dkv));
  Vec ctx(size_t(L) * D, 0.0);
  const int kl = mask.key_length == attn::Mask::kAllKeys ? S : mask.key_length;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < L; ++i) {
      // Key j takes part if j < key_length and, when causal, j <= i + offset and j > i + offset - window.
      int lo = 0, hi = kl;
      if (mask.causal) {
        hi = std::min(hi, i + mask.causal_offset + 1);
        if (mask.window > 0) lo = std::max(0, i + mask.causal_offset + 1 - mask.window);
      }
      if (lo >= hi) continue;
      const int g = (h / group) * hd;  // K/V columns of head h's group
      Vec s(static_cast<size_t>(hi - lo));
      double mx = -1e300;
      for (int j = lo; j < hi; ++j) {
        double acc = 0.0;
        for (int c = 0; c < hd; ++c) acc += st.q[size_t(i) * D + h * hd + c] * st.k[size_t(j) * Dkv + g + c];
        s[j - lo] = acc / std::sqrt(double(hd));
        mx = std::max(mx, s[j - lo]);
      }
      double sum = 0.0;
      for (double& v : s) sum += (v = std::exp(v - mx));
      for (int j = lo; j < hi; ++j)
        for (int c = 0; c < hd; ++c)
          ctx[size_t(i) * D + h * hd + c] += s[j - lo] / sum * st.v[size_t(j) * Dkv + g + c];
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

// Under every mask, the forward FWD(plan, mask, y, arena) planned at each
// tile size gives the same [L, 32] output of T (the first tile size's).
template <typename T, typename Fwd>
void check_tile_invariance(const attn::AttentionConfig& cfg, DType dt, int L, int S,
                           std::initializer_list<attn::Mask> masks, std::initializer_list<int> tiles,
                           Fwd fwd) {
  for (const attn::Mask& mask : masks) {
    std::vector<T> first;
    for (int tile : tiles) {
      PlannedArena pa(cfg, dt, L, S, tile);
      const attn::Plan& plan = pa.plan;
      attn::Arena& arena = pa.arena;
      std::vector<T> y(size_t(L) * 32);
      REQUIRE(fwd(plan, mask, y.data(), arena) == Status::kOk);
      if (first.empty()) first = y;
      REQUIRE(y == first);
    }
  }
}

// Every stage's range widened by one float forward's stages.
void widen_all(attn::CalibrationRanges& r, const Stages& s) {
  widen(r.query, s.x), widen(r.key, s.xk), widen(r.value, s.xv), widen(r.q, s.q), widen(r.k, s.k);
  widen(r.v, s.v), widen(r.context, s.ctx), widen(r.output, s.y);
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
// m's weights through the converter for dt with ranges r: w8 or w16 set, and
// the constants in a store of their own (`used` of its bytes).
struct Converted {
  Converted(const Model& m, const attn::CalibrationRanges& r, DType dt)
      : store(attn::quantize_attention_storage_bytes(m.cfg, dt)) {
    attn::Arena st;
    REQUIRE(st.init(store.data, attn::quantize_attention_storage_bytes(m.cfg, dt)) == Status::kOk);
    if (dt == DType::kS8) {
      REQUIRE(attn::quantize_attention_s8(m.cfg, m.weights(), r, st, &w8, &act) == Status::kOk);
    } else {
      REQUIRE(attn::quantize_attention_s16(m.cfg, m.weights(), r, st, &w16, &act) == Status::kOk);
    }
    used = st.used();
  }
  AlignedBuffer store;
  attn::ActivationQuant act;
  attn::WeightsS8 w8;
  attn::WeightsS16 w16;
  size_t used = 0;
};

struct Result {
  double ideal_db, int_db;
};

// Calibrate on `calib`, quantize, run the integer forward on `test`, and
// measure both SQNRs against the float64 forward.
Result evaluate(const Model& m, const std::vector<Inputs>& calib, const Inputs& test, const attn::Mask& mask,
                DType dt) {
  attn::CalibrationRanges r;
  for (const Inputs& c : calib) {
    widen_all(r, float_forward(m, c, mask));
  }
  const attn::AttentionConfig& cfg = m.cfg;
  const Converted qw(m, r, dt);
  REQUIRE(qw.used == attn::quantize_attention_storage_bytes(cfg, dt));
  const attn::ActivationQuant& act = qw.act;
  const attn::WeightsS8& w8 = qw.w8;
  const attn::WeightsS16& w16 = qw.w16;

  // Integer forward.
  const int E = cfg.embed_dim;
  PlannedArena pa(cfg, dt, test.L, test.S);
  const attn::Plan& plan = pa.plan;
  attn::Arena& arena = pa.arena;
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
  const int D = cfg.inner_dim(), Dkv = cfg.kv_dim();
  const Stages ideal =
      run_double(cfg, fake_quant_weight(m.wq, D, E), fake_quant_weight(m.wk, Dkv, cfg.resolved_kdim()),
                 fake_quant_weight(m.wv, Dkv, cfg.resolved_vdim()), fake_quant_weight(m.wo, E, D), m, test,
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
attn::Mask windowed(int w) {
  attn::Mask m;
  m.causal = true;
  m.window = w;
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
    {{48, 3, 0, 40, 24}, 10, 50, false, {}},         // kdim, vdim != E
    {{64, 4, 0, 0, 0, false}, 16, 16, true, {}},     // no biases
    {{64, 2, 24}, 16, 24, false, {}},                // head_dim given, D != E
    {{64, 8, 0, 0, 0, true, 2}, 20, 48, false, {}},  // grouped-query: 8 query heads, 2 K/V heads
    {{64, 4}, 40, 40, true, windowed(7)},            // causal sliding window
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

// A quantized model ready to run, for the behaviour and error tests.
struct Quantized {
  Model m;
  std::vector<uint8_t> storage;
  attn::WeightsS8 w;
  attn::ActivationQuant act;
};

std::unique_ptr<Quantized> quantize_s8(attn::AttentionConfig cfg, int L, int S, uint32_t seed) {
  auto q = std::make_unique<Quantized>();
  std::mt19937 rng(seed);
  q->m = make_model(cfg, rng);
  attn::CalibrationRanges r;
  for (int i = 0; i < 4; ++i) {
    widen_all(r, float_forward(q->m, make_inputs(cfg, L, S, false, 1.0, rng), {}));
  }
  q->storage.resize(attn::quantize_attention_storage_bytes(cfg, DType::kS8) + 64);
  const size_t skip = (64 - reinterpret_cast<uintptr_t>(q->storage.data()) % 64) % 64;
  attn::Arena st;
  REQUIRE(st.init(q->storage.data() + skip, q->storage.size() - 64) == Status::kOk);
  REQUIRE(attn::quantize_attention_s8(cfg, q->m.weights(), r, st, &q->w, &q->act) == Status::kOk);
  return q;
}

std::vector<int8_t> random_s8(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

TEST_CASE("forward_s8: the tile size does not change a single output byte", "[attention_fixed]") {
  const attn::AttentionConfig cfg{32, 4, 0, 0, 0, true, 2};
  const int L = 13, S = 21;
  const auto q = quantize_s8(cfg, L, S, 5);
  std::mt19937 rng(6);
  const auto x = random_s8(size_t(L) * 32, rng), xk = random_s8(size_t(S) * 32, rng),
             xv = random_s8(size_t(S) * 32, rng);
  check_tile_invariance<int8_t>(
      cfg, DType::kS8, L, S, {attn::Mask(), causal(), windowed(4), padded(9)}, {1, 3, 4, L},
      [&](const attn::Plan& plan, const attn::Mask& mask, int8_t* y, attn::Arena& arena) {
        return attn::forward_s8(plan, q->w, mask, {x.data(), xk.data(), xv.data(), y}, arena);
      });
}

// transformer_fixed.cpp runs self-attention with the output written over the
// input (one activation buffer less in the model's arena): the forward must
// read each query tile before it writes that tile's output rows.
TEST_CASE("The integer block may write its output over its input", "[attention_fixed]") {
  const attn::AttentionConfig cfg{32, 4, 0, 0, 0, true, 2};
  const int L = 13;
  const auto q = quantize_s8(cfg, L, L, 7);
  std::mt19937 rng(8);
  const auto x = random_s8(size_t(L) * 32, rng);
  for (const attn::Mask& mask : {attn::Mask(), causal(), windowed(4)}) {
    for (int tile : {1, 3, L}) {
      PlannedArena pa(cfg, DType::kS8, L, L, tile);
      std::vector<int8_t> want(size_t(L) * 32), y = x;
      REQUIRE(attn::forward_s8(pa.plan, q->w, mask, {x.data(), x.data(), x.data(), want.data()}, pa.arena) ==
              Status::kOk);
      REQUIRE(attn::forward_s8(pa.plan, q->w, mask, {y.data(), y.data(), y.data(), y.data()}, pa.arena) ==
              Status::kOk);
      CHECK(y == want);
    }
  }
}

TEST_CASE("forward_s8: fully masked rows give the output bias", "[attention_fixed]") {
  const attn::AttentionConfig cfg{32, 2};
  const int L = 5, S = 7;
  const auto q = quantize_s8(cfg, L, S, 8);
  std::mt19937 rng(9);
  const auto x = random_s8(size_t(L) * 32, rng), kv = random_s8(size_t(S) * 32, rng);
  PlannedArena pa(cfg, DType::kS8, L, S);
  const attn::Plan& plan = pa.plan;
  attn::Arena& arena = pa.arena;
  std::vector<int8_t> y(size_t(L) * 32);
  REQUIRE(attn::forward_s8(plan, q->w, padded(0), {x.data(), kv.data(), kv.data(), y.data()}, arena) ==
          Status::kOk);
  for (int i = 0; i < L; ++i) {
    for (int e = 0; e < 32; ++e) {
      REQUIRE(y[size_t(i) * 32 + e] == y[size_t(e)]);  // every row the same
      const double got = q->act.output.scale * (y[size_t(e)] - q->act.output.zero_point);
      CHECK(std::fabs(got - q->m.bo[size_t(e)]) <= 1.5 * q->act.output.scale);  // bo, up to rounding
    }
  }
}

TEST_CASE("forward_s8 / forward_s16 give one Status per bad argument", "[attention_fixed][errors]") {
  const attn::AttentionConfig cfg{16, 2};
  const int L = 3, S = 4;
  auto q = quantize_s8(cfg, L, S, 12);
  PlannedArena pa(cfg, DType::kS8, L, S);
  const attn::Plan& plan = pa.plan;
  attn::Arena& arena = pa.arena;
  std::vector<int8_t> x(size_t(L) * 16), kv(size_t(S) * 16), y(size_t(L) * 16);
  const attn::IoS8 io{x.data(), kv.data(), kv.data(), y.data()};
  CHECK(attn::forward_s8(plan, q->w, {}, io, arena) == Status::kOk);

  attn::IoS8 bad_io = io;
  bad_io.output = nullptr;
  CHECK(attn::forward_s8(plan, q->w, {}, bad_io, arena) == Status::kNullArgument);
  attn::WeightsS8 w = q->w;
  w.k.bias = nullptr;  // the int8 forward always needs the folded biases
  CHECK(attn::forward_s8(plan, w, {}, io, arena) == Status::kNullArgument);
  w = q->w;
  w.q_zero_point = 128;
  CHECK(attn::forward_s8(plan, w, {}, io, arena) == Status::kBadQuantParams);
  w = q->w;
  w.context_shift = 31;
  CHECK(attn::forward_s8(plan, w, {}, io, arena) == Status::kBadQuantParams);
  w = q->w;
  w.softmax.exp_multiplier = 0;
  CHECK(attn::forward_s8(plan, w, {}, io, arena) == Status::kBadQuantParams);
  std::vector<int32_t> shifts(q->w.o.shift, q->w.o.shift + 16);
  shifts[15] = -32;
  w = q->w;
  w.o.shift = shifts.data();
  CHECK(attn::forward_s8(plan, w, {}, io, arena) == Status::kBadQuantParams);

  const float additive[3 * 4] = {};
  attn::Mask m;
  m.additive = additive;
  CHECK(attn::forward_s8(plan, q->w, m, io, arena) == Status::kUnsupportedMask);
  m = attn::Mask();
  m.key_length = S + 1;
  CHECK(attn::forward_s8(plan, q->w, m, io, arena) == Status::kBadKeyPadding);
  m = attn::Mask();
  m.window = 2;  // a window without causal
  CHECK(attn::forward_s8(plan, q->w, m, io, arena) == Status::kBadWindow);
  m = causal();
  m.causal_offset = -1;
  CHECK(attn::forward_s8(plan, q->w, m, io, arena) == Status::kBadCausalOffset);

  attn::Plan forged = plan;
  forged.arena_bytes -= 16;
  CHECK(attn::forward_s8(forged, q->w, {}, io, arena) == Status::kPlanMismatch);
  forged = plan;
  forged.dtype = DType::kS16;
  CHECK(attn::forward_s8(forged, q->w, {}, io, arena) == Status::kBadDtype);
  CHECK(attn::forward_s16(plan, attn::WeightsS16(), {}, attn::IoS16(), arena) == Status::kBadDtype);
  attn::Arena empty;
  CHECK(attn::forward_s8(plan, q->w, {}, io, empty) == Status::kArenaTooSmall);
  attn::Arena small;
  REQUIRE(small.init(pa.buf.data, plan.arena_bytes - 16) == Status::kOk);
  CHECK(attn::forward_s8(plan, q->w, {}, io, small) == Status::kArenaTooSmall);
  CHECK(small.used() == 0);

  // Rotary embedding: the weights' tables must cover every position.
  attn::AttentionConfig rope = cfg;
  rope.rope_base = 10000.0f;
  attn::Plan rplan;
  REQUIRE(attn::plan_attention(rope, DType::kS8, L, S, &rplan) == Status::kOk);
  REQUIRE(rplan.arena_bytes == plan.arena_bytes);                               // rotation is in place
  const std::vector<int16_t> cos(size_t(6) * 4, 16384), sin(size_t(6) * 4, 0);  // [6, hd/2]: identity
  w = q->w;
  CHECK(attn::forward_s8(rplan, w, {}, io, arena) == Status::kNullArgument);  // no tables
  w.rope = attn::RopeTable{cos.data(), sin.data(), 0};
  CHECK(attn::forward_s8(rplan, w, {}, io, arena) == Status::kBadQuantParams);
  w.rope.positions = S - 1;  // keys 0 .. S-1 need S rows
  CHECK(attn::forward_s8(rplan, w, {}, io, arena) == Status::kRopePositionOutOfRange);
  w.rope.positions = 6;
  std::vector<int8_t> y_rope(y.size());
  attn::IoS8 rio{x.data(), kv.data(), kv.data(), y_rope.data()};
  REQUIRE(attn::forward_s8(plan, q->w, {}, io, arena) == Status::kOk);
  CHECK(attn::forward_s8(rplan, w, {}, rio, arena) == Status::kOk);
  CHECK(y_rope == y);          // the identity rotation changes nothing
  rio.query_position = 6 - L;  // rows at 3 .. 5
  CHECK(attn::forward_s8(rplan, w, {}, rio, arena) == Status::kOk);
  rio.query_position = 6 - L + 1;
  CHECK(attn::forward_s8(rplan, w, {}, rio, arena) == Status::kRopePositionOutOfRange);
  rio.query_position = -1;
  CHECK(attn::forward_s8(rplan, w, {}, rio, arena) == Status::kBadPosition);
  CHECK(std::string(attn::status_name(Status::kRopePositionOutOfRange)) == "kRopePositionOutOfRange");
  CHECK(std::string(attn::status_name(Status::kUnsupportedMask)) == "kUnsupportedMask");
}

TEST_CASE("quantize_attention rejects bad calibration and weights", "[attention_fixed][errors]") {
  std::mt19937 rng(1);
  const attn::AttentionConfig cfg{16, 2};
  Model m = make_model(cfg, rng);
  attn::CalibrationRanges r;
  r.query = r.key = r.value = r.q = r.k = r.v = r.context = r.output = attn::Range{-1.0f, 1.0f};
  std::vector<uint8_t> store(attn::quantize_attention_storage_bytes(cfg, DType::kS8) + 64);
  const size_t skip = (64 - reinterpret_cast<uintptr_t>(store.data()) % 64) % 64;
  attn::Arena st;
  attn::WeightsS8 w;
  attn::ActivationQuant act;
  REQUIRE(st.init(store.data() + skip, store.size() - 64) == Status::kOk);
  CHECK(attn::quantize_attention_s8(cfg, m.weights(), r, st, &w, &act) == Status::kOk);
  attn::CalibrationRanges bad = r;
  bad.context.max = NAN;
  st.reset();
  CHECK(attn::quantize_attention_s8(cfg, m.weights(), bad, st, &w, &act) == Status::kBadQuantParams);
  bad = r;
  bad.q = attn::Range{1.0f, -1.0f};
  st.reset();
  CHECK(attn::quantize_attention_s8(cfg, m.weights(), bad, st, &w, &act) == Status::kBadQuantParams);
  m.wv[3] = INFINITY;
  st.reset();
  CHECK(attn::quantize_attention_s8(cfg, m.weights(), r, st, &w, &act) == Status::kBadQuantParams);
  attn::Arena tiny;
  REQUIRE(tiny.init(store.data() + skip, 64) == Status::kOk);
  m = make_model(cfg, rng);
  CHECK(attn::quantize_attention_s8(cfg, m.weights(), r, tiny, &w, &act) == Status::kArenaTooSmall);
}

TEST_CASE("choose_activation_quant: int8 asymmetric with 0 exact, int16 symmetric", "[attention_fixed]") {
  const attn::QuantParams a = attn::choose_activation_quant({-1.0f, 3.0f}, DType::kS8);
  CHECK(a.scale == Approx(4.0 / 255));
  CHECK(a.zero_point == -64);  // round(-128 + 1 / (4/255)) = round(-64.25)
  CHECK(attn::quantize_value(0.0f, a, DType::kS8) == a.zero_point);
  CHECK(attn::quantize_value(100.0f, a, DType::kS8) == 127);
  const attn::QuantParams b = attn::choose_activation_quant({0.5f, 2.0f}, DType::kS8);  // widened to 0
  CHECK(b.zero_point == -128);
  const attn::QuantParams c = attn::choose_activation_quant({-3.0f, 2.0f}, DType::kS16);
  CHECK(c.scale == Approx(3.0 / 32767));
  CHECK(c.zero_point == 0);
  CHECK(attn::quantize_value(-3.0f, c, DType::kS16) == -32767);
}

TEST_CASE("calibrate_attention records every stage's range of the float forward", "[attention_fixed]") {
  std::mt19937 rng(31);
  const attn::AttentionConfig cfg{32, 4, 0, 24, 0, true, 2};
  const Model m = make_model(cfg, rng);
  const int L = 9, S = 13;
  attn::Plan plan;
  REQUIRE(attn::plan_attention(cfg, DType::kF32, L, S, &plan) == Status::kOk);
  AlignedBuffer buf(attn::calibrate_attention_arena_bytes(cfg, L, S));
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, attn::calibrate_attention_arena_bytes(cfg, L, S)) == Status::kOk);
  attn::CalibrationRanges got, want;
  for (const attn::Mask& mask : {attn::Mask(), causal(), padded(7)}) {
    const Inputs in = make_inputs(cfg, L, S, false, 1.5, rng);
    std::vector<float> y(size_t(L) * cfg.embed_dim);
    REQUIRE(attn::calibrate_attention(plan, m.weights(), mask,
                                      {in.x.data(), in.xk.data(), in.xv.data(), y.data()}, arena,
                                      &got) == Status::kOk);
    REQUIRE(arena.used() == 0);
    REQUIRE(arena.high_water() == attn::calibrate_attention_arena_bytes(cfg, L, S));
    const Stages s = float_forward(m, in, mask);
    widen_all(want, s);
    for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(s.y[i]).margin(1e-5));
  }
  const attn::Range g[8] = {got.query, got.key, got.value, got.q, got.k, got.v, got.context, got.output};
  const attn::Range w[8] = {want.query, want.key, want.value,   want.q,
                            want.k,     want.v,   want.context, want.output};
  for (int i = 0; i < 8; ++i) {
    CHECK(g[i].min == Approx(w[i].min).margin(1e-5));
    CHECK(g[i].max == Approx(w[i].max).margin(1e-5));
    CHECK(g[i].min < g[i].max);
  }
  // Rotary embedding: the q and k ranges cover Q and K before (what the plain
  // config records) and after the rotation (which widens them here).
  attn::AttentionConfig rope = cfg;
  rope.rope_base = 10000.0f;
  attn::Plan rplan;
  REQUIRE(attn::plan_attention(rope, DType::kF32, L, S, &rplan) == Status::kOk);
  const Inputs in = make_inputs(cfg, L, S, false, 1.0, rng);
  attn::CalibrationRanges plain, rotated;
  const attn::IoF32 cio{in.x.data(), in.xk.data(), in.xv.data()};
  REQUIRE(attn::calibrate_attention(plan, m.weights(), {}, cio, arena, &plain) == Status::kOk);
  REQUIRE(attn::calibrate_attention(rplan, m.weights(), {}, cio, arena, &rotated) == Status::kOk);
  CHECK(rotated.q.min <= plain.q.min);
  CHECK(rotated.q.max >= plain.q.max);
  CHECK(rotated.k.min <= plain.k.min);
  CHECK(rotated.k.max >= plain.k.max);
  CHECK((rotated.q.min < plain.q.min || rotated.q.max > plain.q.max));
  CHECK(rotated.v.min == plain.v.min);
  CHECK(rotated.v.max == plain.v.max);
  attn::IoF32 neg = cio;
  neg.query_position = -1;
  CHECK(attn::calibrate_attention(rplan, m.weights(), {}, neg, arena, &rotated) == Status::kBadPosition);
}

TEST_CASE("calibrate_any_mask: the context covers V, the output every single-key row", "[attention_fixed]") {
  std::mt19937 rng(37);
  for (const attn::AttentionConfig& cfg :
       {attn::AttentionConfig{32, 4, 0, 24, 0, true, 2}, attn::AttentionConfig{24, 4, 0, 0, 0, false, 0}}) {
    const Model m = make_model(cfg, rng);
    const int L = 5, S = 13;  // S > L: the single-key rows go through the L-row buffers in three rounds
    attn::Plan plan;
    REQUIRE(attn::plan_attention(cfg, DType::kF32, L, S, &plan) == Status::kOk);
    AlignedBuffer buf(attn::calibrate_attention_arena_bytes(cfg, L, S));
    attn::Arena arena;
    REQUIRE(arena.init(buf.data, attn::calibrate_attention_arena_bytes(cfg, L, S)) == Status::kOk);
    const Inputs in = make_inputs(cfg, L, S, false, 1.5, rng);
    attn::CalibrationRanges got;
    REQUIRE(attn::calibrate_any_mask(plan, m.weights(), {in.x.data(), in.xk.data(), in.xv.data(), nullptr},
                                     arena, &got) == Status::kOk);
    REQUIRE(arena.used() == 0);
    // The double forward's V, then bo + Wo [V_j of each head's group] for every key j.
    const Stages s = float_forward(m, in, attn::Mask());
    attn::Range v, y;
    widen(v, s.v);
    const int D = cfg.inner_dim(), Dkv = cfg.kv_dim(), hd = cfg.resolved_head_dim();
    const int group = cfg.num_heads / cfg.resolved_kv_heads();
    Vec one(size_t(S) * D);
    for (int j = 0; j < S; ++j)
      for (int h = 0; h < cfg.num_heads; ++h)
        for (int c = 0; c < hd; ++c)
          one[size_t(j) * D + h * hd + c] = s.v[size_t(j) * Dkv + (h / group) * hd + c];
    widen(y, project(one, S, D, to_d(m.wo), cfg.bias ? to_d(m.bo) : Vec(), cfg.embed_dim));
    CHECK(got.context.min == Approx(v.min).margin(1e-5));
    CHECK(got.context.max == Approx(v.max).margin(1e-5));
    CHECK(got.output.min == Approx(y.min).margin(1e-5));
    CHECK(got.output.max == Approx(y.max).margin(1e-5));
    // The other stages are calibrate_attention's business: untouched.
    CHECK(got.q.min == 0.0f);
    CHECK(got.q.max == 0.0f);
    CHECK(got.v.max == 0.0f);
  }
  attn::CalibrationRanges r;
  attn::Plan plan;
  const attn::AttentionConfig cfg{8, 2, 0, 0, 0, false, 0};
  REQUIRE(attn::plan_attention(cfg, DType::kF32, 2, 2, &plan) == Status::kOk);
  attn::Arena arena;
  CHECK(attn::calibrate_any_mask(plan, attn::WeightsF32{}, {}, arena, &r) == Status::kNullArgument);
}

TEST_CASE("forward_s16: tile size invariance, masks, errors", "[attention_fixed]") {
  const int L = 11, S = 17;
  const attn::AttentionConfig cfg{32, 4, 0, 0, 0, true, 2};
  std::mt19937 rng(41);
  const Model m = make_model(cfg, rng);
  attn::CalibrationRanges r;
  for (int i = 0; i < 4; ++i) {
    widen_all(r, float_forward(m, make_inputs(cfg, L, S, false, 1.0, rng), {}));
  }
  AlignedBuffer store(attn::quantize_attention_storage_bytes(cfg, DType::kS16));
  attn::Arena st;
  REQUIRE(st.init(store.data, attn::quantize_attention_storage_bytes(cfg, DType::kS16)) == Status::kOk);
  attn::WeightsS16 w;
  attn::ActivationQuant act;
  REQUIRE(attn::quantize_attention_s16(cfg, m.weights(), r, st, &w, &act) == Status::kOk);
  CHECK(w.softmax.score_shift >= 4);  // head_dim 8 < 2^4 (more when a score step is finer than 2^-17 log2)
  CHECK(w.softmax.exp_multiplier >= 0x80000000u);
  std::uniform_int_distribution<int> d(-32768, 32767);
  std::vector<int16_t> x(size_t(L) * 32), kv(size_t(S) * 32);
  for (auto& v : x) v = int16_t(d(rng));
  for (auto& v : kv) v = int16_t(d(rng));
  check_tile_invariance<int16_t>(
      cfg, DType::kS16, L, S, {attn::Mask(), causal(), windowed(3), padded(5)}, {1, 4, L},
      [&](const attn::Plan& plan, const attn::Mask& mask, int16_t* y, attn::Arena& arena) {
        return attn::forward_s16(plan, w, mask, {x.data(), kv.data(), kv.data(), y}, arena);
      });
  PlannedArena pa(cfg, DType::kS16, L, S);
  const attn::Plan& plan = pa.plan;
  attn::Arena& arena = pa.arena;
  std::vector<int16_t> y(size_t(L) * 32);
  const attn::IoS16 io{x.data(), kv.data(), kv.data(), y.data()};
  attn::WeightsS16 bad = w;
  bad.softmax.score_shift = 3;  // head_dim 8 is not below 2^3: scores could leave int32
  CHECK(attn::forward_s16(plan, bad, {}, io, arena) == Status::kBadQuantParams);
  bad = w;
  bad.context_shift = 15;  // the 16x8 requantization allows at most 14
  CHECK(attn::forward_s16(plan, bad, {}, io, arena) == Status::kBadQuantParams);
  bad = w;
  bad.o.bias = nullptr;
  CHECK(attn::forward_s16(plan, bad, {}, io, arena) == Status::kNullArgument);
  bad = w;
  bad.softmax.exp_multiplier = 0x7FFFFFFFu;
  CHECK(attn::forward_s16(plan, bad, {}, io, arena) == Status::kBadQuantParams);
  const float additive[11 * 17] = {};
  attn::Mask m2;
  m2.additive = additive;
  CHECK(attn::forward_s16(plan, w, m2, io, arena) == Status::kUnsupportedMask);
  CHECK(attn::forward_s16(plan, w, {}, io, arena) == Status::kOk);
  CHECK(arena.used() == 0);
}

}  // namespace

#if ATTN_SATURATION_COUNTERS
namespace {

// One forward of quantized inputs with and without counting into *c: the
// same bytes, and the output count is the number of outputs at the limits.
template <class D>
void counted_forward(const attn::Plan& plan, const typename D::Weights& w, const std::vector<int32_t>& x,
                     const std::vector<int32_t>& xk, const std::vector<int32_t>& xv, attn::Arena& arena,
                     attn::SaturationCounts* c) {
  using T = typename D::T;
  std::vector<T> a(x.begin(), x.end()), b(xk.begin(), xk.end()), v(xv.begin(), xv.end());
  std::vector<T> y0(size_t(plan.query_len) * size_t(plan.config.embed_dim)), y1(y0.size());
  typename D::Io io{a.data(), b.data(), v.data(), y0.data()};
  REQUIRE(D::forward(plan, w, {}, io, arena) == Status::kOk);
  io.output = y1.data();
  io.saturation = c;
  REQUIRE(D::forward(plan, w, {}, io, arena) == Status::kOk);
  CHECK(y0 == y1);
  uint64_t at_limits = 0;
  for (T e : y1)
    at_limits += (e == std::numeric_limits<T>::min() || e == std::numeric_limits<T>::max()) ? 1 : 0;
  CHECK(c->output == at_limits);
}

// Saturation counters (attn/attention_fixed.h; the host-ref preset builds with
// them on). Stage ranges calibrated and widened 2x: the calibration inputs keep
// every stage within half its range (no value at a limit), inputs 10x beyond
// calibration clip (nonzero counts). Counting never changes the output.
TEST_CASE("saturation counters: zero in range, nonzero 10x beyond, outputs unchanged",
          "[attention_fixed][sat]") {
  std::mt19937 rng(77);
  const attn::AttentionConfig cfg{16, 2};
  const Model m = make_model(cfg, rng);
  const int L = 6, S = 6;
  const Inputs calib = make_inputs(cfg, L, S, false, 1.0, rng);
  attn::CalibrationRanges r;
  const Stages s = float_forward(m, calib, {});
  widen_all(r, s);
  for (attn::Range* x : {&r.q, &r.k, &r.v, &r.context, &r.output}) *x = {2.0f * x->min, 2.0f * x->max};
  for (DType dt : {DType::kS8, DType::kS16}) {
    INFO((dt == DType::kS8 ? "s8" : "s16"));
    const Converted qw(m, r, dt);
    const attn::ActivationQuant& act = qw.act;
    const attn::WeightsS8& w8 = qw.w8;
    const attn::WeightsS16& w16 = qw.w16;
    attn::Plan plan;
    REQUIRE(attn::plan_attention(cfg, dt, L, S, &plan) == Status::kOk);
    AlignedBuffer buf(plan.arena_bytes);
    attn::Arena arena;
    REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
    // Counts of one forward on the calibration inputs times `scale`; y with and without counting agree.
    auto run = [&](float scale, attn::SaturationCounts* c) {
      auto q = [&](const std::vector<float>& v, attn::QuantParams p) {
        std::vector<int32_t> out(v.size());
        for (size_t i = 0; i < v.size(); ++i) out[i] = attn::quantize_value(scale * v[i], p, dt);
        return out;
      };
      const auto x = q(calib.x, act.query), xk = q(calib.xk, act.key), xv = q(calib.xv, act.value);
      if (dt == DType::kS8) {
        counted_forward<dtypes::S8>(plan, w8, x, xk, xv, arena, c);
      } else {
        counted_forward<dtypes::S16>(plan, w16, x, xk, xv, arena, c);
      }
    };
    attn::SaturationCounts in_range, beyond;
    run(1.0f, &in_range);
    CHECK((in_range.q == 0 && in_range.k == 0 && in_range.v == 0 && in_range.context == 0 &&
           in_range.output == 0));
    run(10.0f, &beyond);
    INFO("q " << beyond.q << " k " << beyond.k << " v " << beyond.v << " context " << beyond.context
              << " output " << beyond.output);
    CHECK(beyond.q + beyond.k + beyond.v + beyond.context + beyond.output > 0);
    CHECK(beyond.q > 0);
  }
}

}  // namespace
#endif  // ATTN_SATURATION_COUNTERS
