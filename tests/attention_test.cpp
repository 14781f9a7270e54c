// forward_f32 and plan_attention: against a naive double-precision
// multi-head attention, arena behaviour, and one Status per bad argument.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/mask.h"
#include "attn/attention.h"
#include "attn/kernel_set.h"
#include "host_helpers.h"
#include "kernels/arch.h"

namespace {

using attn::Status;

// The arena size is a constant expression: firmware sizes static buffers with it.
constexpr attn::AttentionConfig kStaticCfg{64, 4};
static_assert(attn::attention_arena_bytes(kStaticCfg, attn::DType::kF32, 64, 64, 4) ==
                  2 * 64 * 64 * 4 + 2 * 4 * 64 * 4 + 4 * 64 * 4,
              "f32 arena: K, V [S,D] + Q, O tiles [T,D] + scores [T,S]");

struct Case {
  attn::AttentionConfig cfg;
  int L, S;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo, x, xk, xv;
  attn::WeightsF32 weights() const {
    attn::WeightsF32 w{wq.data(), wk.data(), wv.data(), wo.data()};
    if (cfg.bias) {
      w.bq = bq.data(), w.bk = bk.data(), w.bv = bv.data(), w.bo = bo.data();
    }
    return w;
  }
};

Case make_case(attn::AttentionConfig cfg, int L, int S, uint32_t seed) {
  std::mt19937 rng(seed);
  Case c{cfg, L, S, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  const size_t E = size_t(cfg.embed_dim), D = size_t(cfg.inner_dim()), Dkv = size_t(cfg.kv_dim());
  const size_t kd = size_t(cfg.resolved_kdim()), vd = size_t(cfg.resolved_vdim());
  const float ws = 1.0f / std::sqrt(float(E));
  c.wq = random_normal(D * E, rng, ws), c.wk = random_normal(Dkv * kd, rng, ws),
  c.wv = random_normal(Dkv * vd, rng, ws);
  c.wo = random_normal(E * D, rng, ws);
  c.bq = random_normal(D, rng, 0.1f), c.bk = random_normal(Dkv, rng, 0.1f),
  c.bv = random_normal(Dkv, rng, 0.1f);
  c.bo = random_normal(E, rng, 0.1f);
  c.x = random_normal(size_t(L) * E, rng), c.xk = random_normal(size_t(S) * kd, rng),
  c.xv = random_normal(size_t(S) * vd, rng);
  return c;
}

// Naive multi-head attention in double, written from the formula.
std::vector<double> reference(const Case& c, const attn::Mask& m, std::vector<double>* probs,
                              int q_pos0 = 0) {
  const int E = c.cfg.embed_dim, H = c.cfg.num_heads, hd = c.cfg.resolved_head_dim(), D = H * hd;
  const int Hkv = c.cfg.resolved_kv_heads(), Dkv = Hkv * hd, group = H / Hkv;
  const int kd = c.cfg.resolved_kdim(), vd = c.cfg.resolved_vdim();
  auto proj = [&](const std::vector<float>& x, int rows, int in, const std::vector<float>& w,
                  const std::vector<float>& b, int out) {
    std::vector<double> y(size_t(rows) * out);
    for (int r = 0; r < rows; ++r)
      for (int o = 0; o < out; ++o) {
        double acc = c.cfg.bias ? b[o] : 0.0;
        for (int i = 0; i < in; ++i) acc += double(x[r * in + i]) * w[o * in + i];
        y[size_t(r) * out + o] = acc;
      }
    return y;
  };
  auto Q = proj(c.x, c.L, E, c.wq, c.bq, D), K = proj(c.xk, c.S, kd, c.wk, c.bk, Dkv);
  auto V = proj(c.xv, c.S, vd, c.wv, c.bv, Dkv);
  // Rotary embedding, HF Llama half-split: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin).
  auto rope = [&](std::vector<double>& X, int rows, int width, int pos0) {
    if (c.cfg.rope_base == 0.0f) return;
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < width / hd; ++h)
        for (int i = 0; i < hd / 2; ++i) {
          const double th = (pos0 + r) / std::pow(double(c.cfg.rope_base), 2.0 * i / hd);
          double& a = X[size_t(r) * width + h * hd + i];
          double& b = X[size_t(r) * width + h * hd + i + hd / 2];
          const double a0 = a, b0 = b;
          a = a0 * std::cos(th) - b0 * std::sin(th);
          b = b0 * std::cos(th) + a0 * std::sin(th);
        }
  };
  rope(Q, c.L, D, q_pos0);
  rope(K, c.S, Dkv, 0);
  std::vector<double> O(size_t(c.L) * D, 0.0);
  if (probs) probs->assign(size_t(H) * c.L * c.S, 0.0);
  const int kl = m.key_length == attn::Mask::kAllKeys ? c.S : m.key_length;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < c.L; ++i) {
      std::vector<double> s(size_t(c.S), -INFINITY);
      double mx = -INFINITY;
      for (int j = 0; j < c.S; ++j) {
        if (j >= kl || (m.causal && j > i + m.causal_offset)) continue;
        if (m.causal && m.window > 0 && j <= i + m.causal_offset - m.window) continue;
        double acc = 0;
        for (int d = 0; d < hd; ++d)
          acc += Q[size_t(i) * D + h * hd + d] * K[size_t(j) * Dkv + (h / group) * hd + d];
        s[j] = acc / std::sqrt(double(hd)) + (m.additive ? m.additive[i * c.S + j] : 0.0);
        mx = std::fmax(mx, s[j]);
      }
      if (mx == -INFINITY) continue;  // fully masked: zero weights
      double sum = 0;
      for (int j = 0; j < c.S; ++j) sum += s[j] == -INFINITY ? 0.0 : std::exp(s[j] - mx);
      for (int j = 0; j < c.S; ++j) {
        const double p = s[j] == -INFINITY ? 0.0 : std::exp(s[j] - mx) / sum;
        if (probs) (*probs)[(size_t(h) * c.L + i) * c.S + j] = p;
        for (int d = 0; d < hd; ++d)
          O[size_t(i) * D + h * hd + d] += p * V[size_t(j) * Dkv + (h / group) * hd + d];
      }
    }
  std::vector<double> y(size_t(c.L) * E);
  for (int i = 0; i < c.L; ++i)
    for (int e = 0; e < E; ++e) {
      double acc = c.cfg.bias ? c.bo[e] : 0.0;
      for (int d = 0; d < D; ++d) acc += O[size_t(i) * D + d] * c.wo[size_t(e) * D + d];
      y[size_t(i) * E + e] = acc;
    }
  return y;
}

// The conformance bound: max|got - want| <= 1e-5 * max|want| + 1e-6.
bool within_bound(const std::vector<float>& got, const std::vector<double>& want) {
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_ref = std::fmax(max_ref, std::fabs(want[i]));
    max_err = std::fmax(max_err, std::fabs(got[i] - want[i]));
  }
  INFO("max err " << max_err << ", max |want| " << max_ref);
  return max_err <= 1e-5 * max_ref + 1e-6;
}

void run_and_check(const Case& c, const attn::Mask& mask, int tile_rows, int q_pos0 = 0) {
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.cfg, attn::DType::kF32, c.L, c.S, &plan, tile_rows) == Status::kOk);
  REQUIRE(plan.arena_bytes == attn::attention_arena_bytes(c.cfg, attn::DType::kF32, c.L, c.S, tile_rows));
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<float> y(size_t(c.L) * c.cfg.embed_dim, NAN);
  std::vector<float> p(size_t(c.cfg.num_heads) * c.L * c.S, NAN);
  attn::IoF32 io{c.x.data(), c.xk.data(), c.xv.data(), y.data(), p.data(), q_pos0};
  REQUIRE(attn::forward_f32(plan, c.weights(), mask, io, arena) == Status::kOk);
  REQUIRE(arena.used() == 0);
  REQUIRE(arena.high_water() == plan.arena_bytes);
  std::vector<double> want_p;
  const auto want = reference(c, mask, &want_p, q_pos0);
  REQUIRE(within_bound(y, want));
  REQUIRE(within_bound(p, want_p));

  // The same forward on weights packed once gives the same bits: packing
  // changes where W^T comes from, not the arithmetic (dims here <= 256).
  size_t packed_bytes = 0;
  REQUIRE(attn::pack_weights_f32_storage_bytes(plan, &packed_bytes) == Status::kOk);
  const size_t guard = 64;
  AlignedBuffer packed(packed_bytes + guard);
  std::memset(packed.data, 0xA5, packed_bytes + guard);
  attn::WeightsF32 wp;
  REQUIRE(attn::pack_weights_f32(plan, c.weights(), packed.data, packed_bytes, &wp) == Status::kOk);
  REQUIRE((wp.packed != nullptr) == (packed_bytes > 0));
  REQUIRE(wp.wq == c.weights().wq);
  for (size_t i = 0; i < guard; ++i) REQUIRE(packed.data[packed_bytes + i] == 0xA5);
  std::vector<float> y2(y.size(), NAN), p2(p.size(), NAN);
  attn::IoF32 io2{c.x.data(), c.xk.data(), c.xv.data(), y2.data(), p2.data(), q_pos0};
  REQUIRE(attn::forward_f32(plan, wp, mask, io2, arena) == Status::kOk);
  REQUIRE(std::memcmp(y2.data(), y.data(), y.size() * sizeof(float)) == 0);
  REQUIRE(std::memcmp(p2.data(), p.data(), p.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("forward_f32 matches a double-precision reference", "[attention][f32]") {
  struct Shape {
    attn::AttentionConfig cfg;
    int L, S;
  };
  const Shape shapes[] = {
      {{8, 2}, 5, 5},                   // self
      {{13, 1}, 7, 3},                  // E odd, one head, S < L
      {{16, 4, 0, 0, 0, false}, 1, 9},  // L = 1, no bias
      {{12, 3, 0, 7, 5}, 6, 11},        // cross, kdim != vdim != E
      {{10, 4, 3}, 9, 9},               // head_dim 3: H * hd = 12 != E
      {{32, 16}, 17, 17},
      {{16, 4, 0, 0, 0, true, 2}, 7, 9},            // grouped-query: 2 K/V heads
      {{16, 4, 0, 0, 0, false, 1}, 5, 5},           // multi-query, no bias
      {{16, 2, 0, 0, 0, true, 0, 10000.0f}, 9, 9},  // rotary
      {{24, 6, 4, 0, 0, false, 2, 500.0f},
       8,
       8},  // rotary + GQA, head_dim 4               // head_dim 2, many heads
  };
  for (const auto& s : shapes) {
    const Case c = make_case(s.cfg, s.L, s.S, 42);
    for (int tile : {1, 4, 64}) {
      attn::Mask none;
      run_and_check(c, none, tile);
      attn::Mask causal;
      causal.causal = true;
      run_and_check(c, causal, tile);
      attn::Mask windowed;
      windowed.causal = true;
      windowed.window = 3;
      run_and_check(c, windowed, tile);
      attn::Mask padded;
      padded.key_length = (s.S + 1) / 2;
      padded.causal = s.L > 2;
      run_and_check(c, padded, tile);
      std::vector<float> add(size_t(s.L) * s.S);
      std::mt19937 rng(3);
      for (auto& v : add) v = (rng() % 5 == 0) ? -INFINITY : float(int(rng() % 7) - 3) * 0.5f;
      attn::Mask additive;
      additive.additive = add.data();
      run_and_check(c, additive, tile);
    }
  }
}

TEST_CASE("forward_f32 rotates queries from io.query_position, as when decoding at an offset",
          "[attention][f32]") {
  const Case c = make_case({16, 4, 0, 0, 0, true, 2, 10000.0f}, 3, 40, 5);
  attn::Mask m;
  m.causal = true;
  m.causal_offset = 37;  // the 3 queries are the last 3 of 40 positions
  run_and_check(c, m, 2, 37);
  run_and_check(c, attn::Mask(), 4, 1000);
}

TEST_CASE("fully masked query rows give all-zero weights and output bo", "[attention][f32]") {
  const Case c = make_case({8, 2}, 4, 6, 7);
  attn::Mask m;
  m.key_length = 0;
  run_and_check(c, m, 4);
}

namespace {

// forward_f32 of c (query c.x, key c.xk, value c.xv; self-attention when `self`)
// with weights w; y [L, E] and the probabilities [H, L, S].
void forward_nan_case(const Case& c, const attn::WeightsF32& w, const attn::Mask& mask, bool self,
                      std::vector<float>* y, std::vector<float>* p) {
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.cfg, attn::DType::kF32, c.L, c.S, &plan, 2) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  y->assign(size_t(c.L) * c.cfg.embed_dim, 0.0f);
  p->assign(size_t(c.cfg.num_heads) * c.L * c.S, 0.0f);
  const float* k = self ? c.x.data() : c.xk.data();
  const float* v = self ? c.x.data() : c.xv.data();
  attn::IoF32 io{c.x.data(), k, v, y->data(), p->data()};
  REQUIRE(attn::forward_f32(plan, w, mask, io, arena) == Status::kOk);
}

size_t count_nan(const float* x, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) k += std::isnan(x[i]) ? 1 : 0;
  return k;
}

}  // namespace

// The NaN policy (attn/attention.h): as PyTorch, a softmax row whose visible
// scores hold a NaN gives NaN probabilities, so NaN reaches the output; a
// fully masked row still gives zero probabilities. The same in every softmax
// variant (this runs the dispatched one; the variant tester compares each row
// with ref, NaN-ness per element).
TEST_CASE("forward_f32: NaN in the input or the weights gives NaN, as PyTorch", "[attention][f32][nan]") {
  std::vector<float> y, p, y0, p0;
  SECTION("all-NaN input: every output NaN") {
    Case c = make_case({8, 2}, 4, 4, 11);
    std::fill(c.x.begin(), c.x.end(), NAN);
    forward_nan_case(c, c.weights(), {}, true, &y, &p);
    CHECK(count_nan(y.data(), y.size()) == y.size());
    CHECK(count_nan(p.data(), p.size()) == p.size());
  }
  SECTION("one NaN in one query row: that row NaN, the others as without it") {
    Case c = make_case({8, 2}, 4, 5, 12);
    forward_nan_case(c, c.weights(), {}, false, &y0, &p0);
    REQUIRE(count_nan(y0.data(), y0.size()) == 0);
    c.x[1 * 8 + 3] = NAN;  // query row 1
    forward_nan_case(c, c.weights(), {}, false, &y, &p);
    for (int i = 0; i < c.L; ++i) {
      INFO("row " << i);
      const float* yr = y.data() + i * 8;
      if (i == 1) {
        CHECK(count_nan(yr, 8) == 8);
      } else {
        CHECK(std::memcmp(yr, y0.data() + i * 8, 8 * sizeof(float)) == 0);
      }
      for (int h = 0; h < 2; ++h) CHECK(count_nan(p.data() + (h * c.L + i) * c.S, 5) == (i == 1 ? 5u : 0u));
    }
  }
  SECTION("one NaN in one row of a self-attention input: every row sees that key, all NaN") {
    Case c = make_case({8, 2}, 4, 4, 13);
    c.x[2 * 8 + 5] = NAN;
    forward_nan_case(c, c.weights(), {}, true, &y, &p);
    CHECK(count_nan(y.data(), y.size()) == y.size());
  }
  SECTION("a NaN key row that the mask hides does not reach the output") {
    Case c = make_case({8, 2}, 4, 5, 14);
    attn::Mask m;
    m.key_length = 4;  // key 4 is padding
    forward_nan_case(c, c.weights(), m, false, &y0, &p0);
    c.xk[4 * 8 + 0] = NAN;
    forward_nan_case(c, c.weights(), m, false, &y, &p);
    CHECK(count_nan(y.data(), y.size()) == 0);
    CHECK(std::memcmp(y.data(), y0.data(), y.size() * sizeof(float)) == 0);
  }
  SECTION("a NaN in Wq: every output NaN") {
    Case c = make_case({8, 2}, 3, 4, 15);
    c.wq[0] = NAN;  // channel 0 of Q: head 0's scores, then every output through Wo
    forward_nan_case(c, c.weights(), {}, false, &y, &p);
    CHECK(count_nan(y.data(), y.size()) == y.size());
    CHECK(count_nan(p.data(), size_t(c.L) * c.S) == size_t(c.L) * c.S);  // head 0
    CHECK(count_nan(p.data() + c.L * c.S, size_t(c.L) * c.S) == 0);      // head 1
  }
  SECTION("fully masked rows still give zero probabilities and bo") {
    Case c = make_case({8, 2}, 3, 4, 16);
    attn::Mask m;
    m.key_length = 0;
    forward_nan_case(c, c.weights(), m, false, &y, &p);
    for (float v : p) CHECK(v == 0.0f);
    for (int i = 0; i < c.L; ++i)
      for (int e = 0; e < 8; ++e) CHECK(y[size_t(i) * 8 + e] == c.bo[size_t(e)]);
  }
}

TEST_CASE("forward_f32 arena: exact plan bytes fit, one byte less fails and writes nothing",
          "[attention][arena]") {
  const Case c = make_case({24, 3, 0, 10, 10}, 11, 7, 9);
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.cfg, attn::DType::kF32, c.L, c.S, &plan) == Status::kOk);
  const size_t guard = 64;
  for (size_t bytes : {plan.arena_bytes, plan.arena_bytes - 1}) {
    AlignedBuffer buf(bytes + 2 * guard);
    std::memset(buf.data, 0xA5, bytes + 2 * guard);
    attn::Arena arena;
    REQUIRE(arena.init(buf.data + guard, bytes) == Status::kOk);
    std::vector<float> y(size_t(c.L) * c.cfg.embed_dim, 7.0f);
    attn::IoF32 io{c.x.data(), c.xk.data(), c.xv.data(), y.data()};
    const Status st = attn::forward_f32(plan, c.weights(), attn::Mask(), io, arena);
    if (bytes == plan.arena_bytes) {
      REQUIRE(st == Status::kOk);
    } else {
      REQUIRE(st == Status::kArenaTooSmall);
      for (float v : y) REQUIRE(v == 7.0f);                                     // output untouched
      for (size_t i = 0; i < bytes; ++i) REQUIRE(buf.data[guard + i] == 0xA5);  // arena untouched
    }
    for (size_t i = 0; i < guard; ++i) {
      REQUIRE(buf.data[i] == 0xA5);
      REQUIRE(buf.data[guard + bytes + i] == 0xA5);
    }
  }
}

TEST_CASE("Arena alignment, exhaustion and high-water mark", "[arena]") {
  alignas(16) static unsigned char buf[64];
  attn::Arena a;
  REQUIRE(a.init(nullptr, 64) == Status::kNullArgument);
  REQUIRE(a.init(buf + 1, 63) == Status::kArenaMisaligned);
  REQUIRE(a.init(buf, 64) == Status::kOk);
  void* p = nullptr;
  REQUIRE(a.alloc(1, &p) == Status::kOk);
  REQUIRE(p == buf);
  REQUIRE(a.used() == 16);
  const size_t m = a.mark();
  REQUIRE(a.alloc(48, &p) == Status::kOk);
  REQUIRE(a.alloc(1, &p) == Status::kArenaTooSmall);
  REQUIRE(p == nullptr);
  a.release(m);
  REQUIRE(a.used() == 16);
  REQUIRE(a.high_water() == 64);
  float* f = nullptr;
  REQUIRE(a.alloc_array(SIZE_MAX / 2, &f) == Status::kArenaTooSmall);
  REQUIRE(a.alloc(SIZE_MAX, &p) == Status::kArenaTooSmall);
}

TEST_CASE("plan_attention gives one Status per bad configuration or shape", "[attention][errors]") {
  using attn::AttentionConfig;
  using attn::DType;
  attn::Plan p;
  auto plan = [&](AttentionConfig c, int L = 4, int S = 4, int tile = ATTN_TILE_ROWS,
                  DType dt = DType::kF32) { return attn::plan_attention(c, dt, L, S, &p, tile); };
  CHECK(plan({8, 2}) == Status::kOk);
  CHECK(attn::plan_attention({8, 2}, DType::kF32, 4, 4, nullptr) == Status::kNullArgument);
  CHECK(plan({0, 2}) == Status::kBadEmbedDim);
  CHECK(plan({ATTN_MAX_DIM + 1, 1}) == Status::kBadEmbedDim);
  CHECK(plan({8, 0}) == Status::kBadNumHeads);
  CHECK(plan({8, ATTN_MAX_HEADS + 1}) == Status::kBadNumHeads);
  CHECK(plan({8, 3}) == Status::kBadHeadDim);  // 3 does not divide 8
  CHECK(plan({8, 3, 3}) == Status::kOk);       // unless head_dim is given
  CHECK(plan({8, 2, -1}) == Status::kBadHeadDim);
  CHECK(plan({8, 2, 0, -4}) == Status::kBadKeyDim);
  CHECK(plan({8, 2, 0, 0, ATTN_MAX_DIM + 1}) == Status::kBadValueDim);
  CHECK(plan({8, 4, 0, 0, 0, true, 3}) == Status::kBadKvHeads);  // 3 does not divide 4
  CHECK(plan({8, 4, 0, 0, 0, true, -1}) == Status::kBadKvHeads);
  CHECK(plan({8, 2, 0, 0, 0, true, 8}) == Status::kBadKvHeads);  // more K/V heads than heads
  CHECK(plan({8, 2, 0, 0, 0, true, 0, -1.0f}) == Status::kBadRope);
  CHECK(plan({8, 2, 0, 0, 0, true, 0, NAN}) == Status::kBadRope);
  CHECK(plan({6, 2, 0, 0, 0, true, 0, 100.0f}) == Status::kBadRope);  // odd head_dim 3
  CHECK(plan({8, 2}, 0) == Status::kBadQueryLength);
  CHECK(plan({8, 2}, ATTN_MAX_SEQ + 1) == Status::kBadQueryLength);
  CHECK(plan({8, 2}, 4, -1) == Status::kBadKeyLength);
  CHECK(plan({8, 2}, 4, 4, 0) == Status::kBadTileRows);
  CHECK(plan({8, 2}, 4, 4, 4, DType::kS64) == Status::kBadDtype);
}

TEST_CASE("forward_f32 gives one Status per bad argument", "[attention][errors]") {
  const Case c = make_case({8, 2}, 3, 5, 11);
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.cfg, attn::DType::kF32, c.L, c.S, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<float> y(size_t(c.L) * c.cfg.embed_dim);
  const attn::IoF32 io{c.x.data(), c.xk.data(), c.xv.data(), y.data()};
  const attn::WeightsF32 w = c.weights();

  attn::IoF32 no_out = io;
  no_out.output = nullptr;
  CHECK(attn::forward_f32(plan, w, {}, no_out, arena) == Status::kNullArgument);
  attn::WeightsF32 no_bias = w;
  no_bias.bk = nullptr;
  CHECK(attn::forward_f32(plan, no_bias, {}, io, arena) == Status::kNullArgument);
  attn::Mask m;
  m.key_length = c.S + 1;
  CHECK(attn::forward_f32(plan, w, m, io, arena) == Status::kBadKeyPadding);
  m = attn::Mask();
  m.key_length = -2;
  CHECK(attn::forward_f32(plan, w, m, io, arena) == Status::kBadKeyPadding);
  m = attn::Mask();
  m.window = 2;  // a window needs causal
  CHECK(attn::forward_f32(plan, w, m, io, arena) == Status::kBadWindow);
  m.causal = true;
  m.window = -1;
  CHECK(attn::forward_f32(plan, w, m, io, arena) == Status::kBadWindow);
  m = attn::Mask();
  m.causal = true;
  m.causal_offset = -1;
  CHECK(attn::forward_f32(plan, w, m, io, arena) == Status::kBadCausalOffset);
  attn::IoF32 bad_pos = io;
  bad_pos.query_position = -1;
  CHECK(attn::forward_f32(plan, w, {}, bad_pos, arena) == Status::kBadPosition);
  attn::Plan forged = plan;
  forged.arena_bytes -= 16;
  CHECK(attn::forward_f32(forged, w, {}, io, arena) == Status::kPlanMismatch);
  CHECK(attn::forward_f32(attn::Plan(), w, {}, io, arena) == Status::kPlanMismatch);
  forged = plan;
  forged.dtype = attn::DType::kS8;
  CHECK(attn::forward_f32(forged, w, {}, io, arena) == Status::kBadDtype);
  attn::Arena empty;
  CHECK(attn::forward_f32(plan, w, {}, io, empty) == Status::kArenaTooSmall);
  CHECK(attn::forward_f32(plan, w, {}, io, arena) == Status::kOk);
}

TEST_CASE("pack_weights_f32 gives one Status per bad argument", "[attention][errors]") {
  const Case c = make_case({24, 3, 0, 10, 12}, 5, 7, 21);  // cross: kdim 10, vdim 12
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.cfg, attn::DType::kF32, c.L, c.S, &plan) == Status::kOk);
  size_t bytes = 0;
  REQUIRE(attn::pack_weights_f32_storage_bytes(plan, nullptr) == Status::kNullArgument);
  REQUIRE(attn::pack_weights_f32_storage_bytes(plan, &bytes) == Status::kOk);
  attn::KernelSet kernels;
  REQUIRE(attn::kernel_set(attn::DType::kF32, &kernels) == Status::kOk);
  const std::string linear = kernels.linear;
  if (linear == "avx2" || linear == "avx512vnni") {  // x86-64: chosen at run time where compiled in
    // Four projections of 16-column panels, each 16-byte aligned: Wq^T [2, 24, 16],
    // Wk^T [2, 10, 16], Wv^T [2, 12, 16], Wo^T [2, 24, 16] (24 outputs -> 2 panels).
    REQUIRE(bytes == size_t(2 * 16 * (24 + 10 + 12 + 24)) * sizeof(float));
  } else {
    REQUIRE(bytes == 0);  // these kernels read W as stored
  }
  AlignedBuffer buf(bytes + ATTN_ARENA_ALIGN);
  const attn::WeightsF32 w = c.weights();
  attn::WeightsF32 out;
  const float sentinel = 1.0f;
  out.packed = &sentinel;  // left unchanged on every error

  attn::Plan s8 = plan;
  s8.dtype = attn::DType::kS8;
  REQUIRE(attn::pack_weights_f32(s8, w, buf.data, bytes, &out) == Status::kBadDtype);
  REQUIRE(attn::pack_weights_f32_storage_bytes(s8, &bytes) == Status::kBadDtype);
  attn::Plan edited = plan;
  edited.config.num_heads = 5;  // its 3 K/V heads do not divide 5 heads
  REQUIRE(attn::pack_weights_f32(edited, w, buf.data, bytes, &out) == Status::kPlanMismatch);
  REQUIRE(attn::pack_weights_f32(plan, w, buf.data, bytes, nullptr) == Status::kNullArgument);
  attn::WeightsF32 no_wo = w;
  no_wo.wo = nullptr;
  REQUIRE(attn::pack_weights_f32(plan, no_wo, buf.data, bytes, &out) == Status::kNullArgument);
  attn::WeightsF32 no_bk = w;
  no_bk.bk = nullptr;
  REQUIRE(attn::pack_weights_f32(plan, no_bk, buf.data, bytes, &out) == Status::kNullArgument);
  if (bytes > 0) {
    REQUIRE(attn::pack_weights_f32(plan, w, nullptr, bytes, &out) == Status::kNullArgument);
    REQUIRE(attn::pack_weights_f32(plan, w, buf.data + 4, bytes, &out) == Status::kArenaMisaligned);
    REQUIRE(attn::pack_weights_f32(plan, w, buf.data, bytes - 1, &out) == Status::kBufferTooSmall);
  }
  REQUIRE(out.packed == &sentinel);

  // In place: weights and *packed the same object.
  attn::WeightsF32 in_place = w;
  REQUIRE(attn::pack_weights_f32(plan, in_place, buf.data, bytes, &in_place) == Status::kOk);
  REQUIRE((in_place.packed != nullptr) == (bytes > 0));
  REQUIRE(in_place.wv == w.wv);
  REQUIRE(in_place.bo == w.bo);
}

TEST_CASE("status_name names every code", "[status]") {
  CHECK(std::string(attn::status_name(Status::kArenaTooSmall)) == "kArenaTooSmall");
  CHECK(std::string(attn::status_name(Status::kCrcMismatch)) == "kCrcMismatch");
  CHECK(std::string(attn::status_name(static_cast<Status>(9999))) == "kUnknownStatus");
}

TEST_CASE("visible_keys: the clamps of the causal, windowed and padded mask, up to the int32 limits",
          "[attention][mask]") {
  // The spec in int64: keys [begin, end) with end = min(key_length, i + offset + 1)
  // (causal) and begin = i + offset + 1 - window clamped to [0, end] (window > 0),
  // for every checked mask (offset >= 0, window >= 0 and only with causal).
  const auto spec = [](const attn::Mask& m, int64_t i, int64_t S) {
    int64_t end = m.key_length == attn::Mask::kAllKeys ? S : m.key_length;
    int64_t begin = 0;
    if (m.causal) {
      end = std::min(end, i + m.causal_offset + 1);
      if (m.window > 0) begin = std::clamp<int64_t>(i + m.causal_offset + 1 - m.window, 0, end);
    }
    return std::make_pair(begin, end);
  };
  constexpr int32_t kMax = INT32_MAX;
  const int32_t sizes[] = {1, 8, 65536};
  const int32_t offsets[] = {0, 1, 3, 7, 8, 65535, 65536, kMax - 1, kMax};
  const int32_t windows[] = {0, 1, 2, 5, 8, 65536, kMax - 1, kMax};
  const int32_t rows[] = {0, 1, 2, 3, 6, 7, 8, 9, 65534, 65535};
  int64_t checked = 0;
  for (int32_t S : sizes) {
    for (int32_t len : {attn::Mask::kAllKeys, 0, 1, 5, S}) {
      for (bool causal : {false, true}) {
        for (int32_t off : offsets) {
          for (int32_t window : windows) {
            if (len > S || (!causal && (window > 0 || off > 0))) continue;
            attn::Mask m;
            m.causal = causal;
            m.causal_offset = off;
            m.window = window;
            m.key_length = len;
            REQUIRE(attn::detail::check_mask(m, S) == Status::kOk);
            for (int32_t i : rows) {
              const attn::detail::KeyRange got = attn::detail::visible_keys(m, i, S);
              const auto want = spec(m, i, S);
              INFO("S " << S << " len " << len << " causal " << causal << " off " << off << " window "
                        << window << " i " << i);
              REQUIRE(got.begin == want.first);
              REQUIRE(got.end == want.second);
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK(checked > 1000);
}
