// forward_s8 / forward_s16 as this build runs them (row 0 of every kernel
// table) give the bytes of the same arithmetic written out with the ref
// kernels alone: grouped-query heads, RoPE, block sizes with tails. The
// kernels one by one are tested against ref in tests/variants_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "kernels/kernel_table.h"

using namespace attn;
namespace d = attn::detail;

namespace {

struct Block {
  AttentionConfig cfg;
  int L;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo, x;
  WeightsF32 weights() const {
    return {wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
  }
};

std::vector<float> normal(size_t n, float sd, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

// kv_heads: grouped-query K/V heads (0: H); rope: rotary base (0: none).
Block make_block(int E, int H, int L, std::mt19937& rng, int kv_heads = 0, float rope = 0.0f) {
  Block b{AttentionConfig{E, H}, L, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  b.cfg.num_kv_heads = kv_heads;
  b.cfg.rope_base = rope;
  const size_t e = size_t(E), dkv = size_t(b.cfg.kv_dim());
  const float ws = 1.5f / std::sqrt(float(E));
  b.wq = normal(e * e, ws, rng), b.wk = normal(dkv * e, ws, rng), b.wv = normal(dkv * e, ws, rng),
  b.wo = normal(e * e, ws, rng);
  b.bq = normal(e, 0.1f, rng), b.bk = normal(dkv, 0.1f, rng), b.bv = normal(dkv, 0.1f, rng),
  b.bo = normal(e, 0.1f, rng);
  b.x = normal(size_t(L) * e, 1.0f, rng);
  return b;
}

// 64-byte aligned arena over a vector.
struct ArenaBuf {
  std::vector<unsigned char> mem;
  Arena arena;
  explicit ArenaBuf(size_t n) : mem(n + 64) {
    const size_t skip = (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
    REQUIRE(arena.init(mem.data() + skip, n) == Status::kOk);
  }
};

CalibrationRanges calibrate(const Block& b) {
  Plan plan;
  REQUIRE(plan_attention(b.cfg, DType::kF32, b.L, b.L, &plan) == Status::kOk);
  ArenaBuf a(calibrate_attention_arena_bytes(b.cfg, b.L, b.L));
  CalibrationRanges r;
  std::vector<float> y(b.x.size());
  REQUIRE(calibrate_attention(plan, b.weights(), Mask(), {b.x.data(), b.x.data(), b.x.data(), y.data()},
                              a.arena, &r) == Status::kOk);
  return r;
}

// The linear kernel parameters of a projection: its per-channel requantization.
template <class Params, class Projection>
Params linear_params(const Projection& p) {
  Params lp;
  lp.multiplier = p.multiplier;
  lp.shift = p.shift;
  return lp;
}

// forward_s8's arithmetic (self-attention, no mask; grouped K/V heads and
// RoPE with positions 0 .. L-1) from the ref kernels alone.
std::vector<int8_t> ref_forward_s8(const AttentionConfig& cfg, const WeightsS8& w, int L,
                                   const std::vector<int8_t>& x) {
  const int E = cfg.embed_dim, H = cfg.num_heads, hd = E / H, S = L, Dkv = cfg.kv_dim();
  const int group = H / cfg.resolved_kv_heads();
  auto params = [](const ProjectionS8& p, int32_t zp) {
    LinearS8Params lp = linear_params<LinearS8Params>(p);
    lp.output_zero_point = zp;
    return lp;
  };
  std::vector<int8_t> q(size_t(L) * E), o(q.size()), y(q.size());  // [L, E]
  std::vector<int8_t> k(size_t(L) * Dkv), v(k.size());             // [L, Dkv]
  const ConstMatS8 X{x.data(), L, E, E};
  d::linear_s8_ref(X, ConstMatS8{w.q.weight, E, E, E}, w.q.bias, params(w.q, w.q_zero_point),
                   MatS8{q.data(), L, E, E});
  d::linear_s8_ref(X, ConstMatS8{w.k.weight, Dkv, E, E}, w.k.bias, params(w.k, w.k_zero_point),
                   MatS8{k.data(), L, Dkv, Dkv});
  d::linear_s8_ref(X, ConstMatS8{w.v.weight, Dkv, E, E}, w.v.bias, params(w.v, w.v_zero_point),
                   MatS8{v.data(), L, Dkv, Dkv});
  if (cfg.rope_base != 0.0f) {
    d::rope_s8_ref(MatS8{q.data(), L, E, E}, hd, w.q_zero_point, 0, w.rope);
    d::rope_s8_ref(MatS8{k.data(), L, Dkv, Dkv}, hd, w.k_zero_point, 0, w.rope);
  }
  const d::FusedSoftmax sm{w.softmax.exp_multiplier, w.softmax.exp_shift, w.softmax.diff_limit};
  std::vector<int32_t> s(size_t(L) * S);  // [L, S] scores, then int16 probabilities in place
  for (int h = 0; h < H; ++h) {
    const int g0 = (h / group) * hd;
    d::scores_s8_ref(ConstMatS8{q.data() + h * hd, L, hd, E}, w.q_zero_point,
                     ConstMatS8{k.data() + g0, S, hd, Dkv}, w.k_zero_point, w.softmax.score_shift,
                     MatS32{s.data(), L, S, S});
    for (int r = 0; r < L; ++r) d::softmax_fused_row_ref(s.data() + size_t(r) * S, 0, S, S, sm);
    d::weighted_sum_s8_ref(ConstMatS16{reinterpret_cast<const int16_t*>(s.data()), L, S, 2 * S},
                           ConstMatS8{v.data() + g0, S, hd, Dkv}, w.v_zero_point,
                           d::Requant{w.context_multiplier, w.context_shift, w.context_zero_point},
                           MatS8{o.data() + h * hd, L, hd, E});
  }
  d::linear_s8_ref(ConstMatS8{o.data(), L, E, E}, ConstMatS8{w.o.weight, E, E, E}, w.o.bias,
                   params(w.o, w.output_zero_point), MatS8{y.data(), L, E, E});
  return y;
}

std::vector<int16_t> ref_forward_s16(const AttentionConfig& cfg, const WeightsS16& w, int L,
                                     const std::vector<int16_t>& x) {
  const int E = cfg.embed_dim, H = cfg.num_heads, hd = E / H, S = L, Dkv = cfg.kv_dim();
  const int group = H / cfg.resolved_kv_heads();
  auto params = [](const ProjectionS16& p) { return linear_params<LinearS16Params>(p); };
  std::vector<int16_t> q(size_t(L) * E), o(q.size()), y(q.size());  // [L, E]
  std::vector<int16_t> k(size_t(L) * Dkv), v(k.size());             // [L, Dkv]
  const ConstMatS16 X{x.data(), L, E, E};
  d::linear_s16_ref(X, ConstMatS8{w.q.weight, E, E, E}, w.q.bias, params(w.q), MatS16{q.data(), L, E, E});
  d::linear_s16_ref(X, ConstMatS8{w.k.weight, Dkv, E, E}, w.k.bias, params(w.k),
                    MatS16{k.data(), L, Dkv, Dkv});
  d::linear_s16_ref(X, ConstMatS8{w.v.weight, Dkv, E, E}, w.v.bias, params(w.v),
                    MatS16{v.data(), L, Dkv, Dkv});
  if (cfg.rope_base != 0.0f) {
    d::rope_s16_ref(MatS16{q.data(), L, E, E}, hd, 0, w.rope);
    d::rope_s16_ref(MatS16{k.data(), L, Dkv, Dkv}, hd, 0, w.rope);
  }
  const d::FusedSoftmax sm{w.softmax.exp_multiplier, w.softmax.exp_shift, w.softmax.diff_limit};
  std::vector<int32_t> s(size_t(L) * S);  // [L, S]
  for (int h = 0; h < H; ++h) {
    const int g0 = (h / group) * hd;
    d::scores_s16_ref(ConstMatS16{q.data() + h * hd, L, hd, E}, ConstMatS16{k.data() + g0, S, hd, Dkv},
                      w.softmax.score_shift, MatS32{s.data(), L, S, S});
    for (int r = 0; r < L; ++r) d::softmax_fused_row_ref(s.data() + size_t(r) * S, 0, S, S, sm);
    d::weighted_sum_s16_ref(ConstMatS16{reinterpret_cast<const int16_t*>(s.data()), L, S, 2 * S},
                            ConstMatS16{v.data() + g0, S, hd, Dkv},
                            d::Requant{w.context_multiplier, w.context_shift, 0},
                            MatS16{o.data() + h * hd, L, hd, E});
  }
  d::linear_s16_ref(ConstMatS16{o.data(), L, E, E}, ConstMatS8{w.o.weight, E, E, E}, w.o.bias, params(w.o),
                    MatS16{y.data(), L, E, E});
  return y;
}

}  // namespace

TEST_CASE("forward_s8 / forward_s16 (dispatched kernels) give the ref kernels' bytes", "[forward_fixed]") {
  std::mt19937 rng(21);
  // (E, H, L, kv_heads, rope base): head_dim 8 / 16 / 24 / 32, L with tails of
  // every block; grouped-query (GQA, MQA) and RoPE blocks (stories260K-like:
  // E 64, 8 heads, 4 K/V heads).
  const int shapes[][5] = {{32, 4, 5, 0, 0},       {64, 4, 17, 0, 0},    {48, 2, 33, 0, 0},
                           {64, 2, 70, 0, 0},      {32, 4, 9, 2, 0},     {64, 8, 33, 4, 10000},
                           {48, 4, 17, 1, 500000}, {32, 2, 70, 2, 10000}};
  for (const auto& sh : shapes) {
    const Block b = make_block(sh[0], sh[1], sh[2], rng, sh[3], float(sh[4]));
    INFO("E=" << sh[0] << " H=" << sh[1] << " L=" << sh[2] << " kv_heads=" << sh[3] << " rope=" << sh[4]);
    const CalibrationRanges r = calibrate(b);
    Plan p8, p16;
    REQUIRE(plan_attention(b.cfg, DType::kS8, b.L, b.L, &p8) == Status::kOk);
    REQUIRE(plan_attention(b.cfg, DType::kS16, b.L, b.L, &p16) == Status::kOk);
    ArenaBuf st8(quantize_attention_storage_bytes(b.cfg, DType::kS8)),
        st16(quantize_attention_storage_bytes(b.cfg, DType::kS16));
    ArenaBuf a8(p8.arena_bytes), a16(p16.arena_bytes);
    WeightsS8 w8;
    WeightsS16 w16;
    ActivationQuant q8, q16;
    REQUIRE(quantize_attention_s8(b.cfg, b.weights(), r, st8.arena, &w8, &q8) == Status::kOk);
    REQUIRE(quantize_attention_s16(b.cfg, b.weights(), r, st16.arena, &w16, &q16) == Status::kOk);
    std::vector<int8_t> x8(b.x.size()), y8(b.x.size());
    std::vector<int16_t> x16(b.x.size()), y16(b.x.size());
    for (size_t i = 0; i < b.x.size(); ++i) {
      x8[i] = int8_t(quantize_value(b.x[i], q8.query, DType::kS8));
      x16[i] = int16_t(quantize_value(b.x[i], q16.query, DType::kS16));
    }
    REQUIRE(forward_s8(p8, w8, Mask(), {x8.data(), x8.data(), x8.data(), y8.data()}, a8.arena) ==
            Status::kOk);
    REQUIRE(forward_s16(p16, w16, Mask(), {x16.data(), x16.data(), x16.data(), y16.data()}, a16.arena) ==
            Status::kOk);
    const std::vector<int8_t> want8 = ref_forward_s8(b.cfg, w8, b.L, x8);
    const std::vector<int16_t> want16 = ref_forward_s16(b.cfg, w16, b.L, x16);
    CHECK(y8 == want8);
    CHECK(y16 == want16);
    // Not a vacuous comparison: the outputs vary.
    CHECK(*std::max_element(y8.begin(), y8.end()) - *std::min_element(y8.begin(), y8.end()) > 20);
    CHECK(*std::max_element(y16.begin(), y16.end()) - *std::min_element(y16.begin(), y16.end()) > 2000);
  }
}
