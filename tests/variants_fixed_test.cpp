// Every fixed-point kernel variant compiled for this target against the
// portable `ref` variant, bit-exact: tails of the vector width (16) and of the
// register blocks (2 x 4, 4 rows), odd sizes, row strides (padding must stay
// untouched), zero points, per-channel requantization, biases, extreme
// operands (all -128 / -32768, the one case where a pair of int16 products
// leaves int32), and probabilities that are (softmax-like) and are not
// (arbitrary int16, which takes weighted_sum_s16's int64 fallback).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "internal/arch.h"
#include "internal/kernel_table.h"

namespace {

using namespace attn;
namespace d = attn::detail;

struct FixedSet {
  const char* name;
  decltype(&d::linear_s8_ref) linear_s8;
  decltype(&d::linear_s16_ref) linear_s16;
  decltype(&d::scores_s8_ref) scores_s8;
  decltype(&d::scores_s16_ref) scores_s16;
  decltype(&d::weighted_sum_s8_ref) weighted_sum_s8;
  decltype(&d::weighted_sum_s16_ref) weighted_sum_s16;
};

// The SIMD variant sets compiled for this target (none under -DATTN_KERNELS=ref),
// plus the dispatched set (what the forwards call).
std::vector<FixedSet> sets_under_test() {
  std::vector<FixedSet> sets;
#define ATTN_SET(isa)                                                                                     \
  sets.push_back({#isa, d::linear_s8_##isa, d::linear_s16_##isa, d::scores_s8_##isa, d::scores_s16_##isa, \
                  d::weighted_sum_s8_##isa, d::weighted_sum_s16_##isa})
#if ATTN_HAVE_AVX2
  ATTN_SET(avx2);
#endif
#if ATTN_WITH_AVX512VNNI  // int8 kernels; its s16 slots are the AVX2 ones
  sets.push_back({"avx512vnni", d::linear_s8_avx512vnni, d::linear_s16_avx2, d::scores_s8_avx512vnni,
                  d::scores_s16_avx2, d::weighted_sum_s8_avx512vnni, d::weighted_sum_s16_avx2});
#endif
#if ATTN_HAVE_NEON
  ATTN_SET(neon);
#endif
#undef ATTN_SET
  sets.push_back({"dispatched", d::best(d::kLinearS8), d::best(d::kLinearS16), d::best(d::kScoresS8),
                  d::best(d::kScoresS16), d::best(d::kWeightedSumS8), d::best(d::kWeightedSumS16)});
  return sets;
}

// A row-major buffer with `pad` extra columns per row, filled with a sentinel.
template <class T>
struct Buf {
  std::vector<T> data;
  int32_t rows, cols, stride;
  Buf(int32_t r, int32_t c, int32_t pad, T fill)
      : data(size_t(r) * size_t(c + pad) + 1, fill), rows(r), cols(c), stride(c + pad) {}
  Matrix<T> mat() { return Matrix<T>{data.data(), rows, cols, stride}; }
  Matrix<const T> cmat() const { return Matrix<const T>{data.data(), rows, cols, stride}; }
};

// Random fill; with `extreme`, every value is the type's minimum.
template <class T>
void fill(Buf<T>& b, std::mt19937& rng, int lo, int hi, bool extreme) {
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int32_t r = 0; r < b.rows; ++r)
    for (int32_t c = 0; c < b.cols; ++c)
      b.data[size_t(r) * size_t(b.stride) + size_t(c)] = T(extreme ? lo : dist(rng));
}

std::string shape_name(const char* set, int M, int N, int K, int pad) {
  return std::string(set) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
         " K=" + std::to_string(K) + " pad=" + std::to_string(pad);
}

// Sizes: every tail of 16 and of the 2 x 4 / 4-row blocks, plus a few larger.
const int kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65};
// (rows, columns, depth) of the first iterations: rows past one chunk of a
// blocked product (AVX2 gemm_s8 widens 24 rows at depth 1024, 384 at 64) with
// a tail, the deepest packed depth, and a depth past it (the unpacked paths).
// Weighted sums take them as (T, head_dim, S).
const int kLongShapes[][3] = {{100, 33, 1000}, {400, 17, 64}, {61, 16, 1024}, {9, 40, 1501}};
constexpr int kNumLong = 4;

}  // namespace

TEST_CASE("fixed variants: linear_s8 / linear_s16 bit-exact with ref", "[variants_fixed]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> zp(-128, 127), mult(1 << 30, 0x7FFFFFFF), sh8(-31, 6), sh16(-20, 0);
  for (const FixedSet& set : sets_under_test()) {
    for (int iter = 0; iter < 120; ++iter) {
      int M = kSizes[rng() % 17], N = kSizes[rng() % 17];
      int K = iter % 5 == 4 ? 300 + int(rng() % 300) : kSizes[rng() % 17];
      if (iter < kNumLong) M = kLongShapes[iter][0], N = kLongShapes[iter][1], K = kLongShapes[iter][2];
      const int pad = int(rng() % 3) * 5;
      const bool extreme = iter % 9 == 0;
      const bool with_bias = iter % 3 != 0;
      INFO(shape_name(set.name, M, N, K, pad) << " extreme=" << extreme << " bias=" << with_bias);
      std::vector<int32_t> m(static_cast<size_t>(N)), s8(static_cast<size_t>(N)), s16(static_cast<size_t>(N));
      for (int n = 0; n < N; ++n)
        m[size_t(n)] = mult(rng), s8[size_t(n)] = sh8(rng), s16[size_t(n)] = sh16(rng);
      Buf<int8_t> w(N, K, pad, int8_t(77));
      fill(w, rng, -128, 127, extreme);

      std::vector<int32_t> b32(static_cast<size_t>(N));
      std::vector<int64_t> b64(static_cast<size_t>(N));
      for (int n = 0; n < N; ++n)
        b32[size_t(n)] = int32_t(rng() % (1u << 21)) - (1 << 20),
        b64[size_t(n)] = int64_t(b32[size_t(n)]) * 64;

      // s8
      Buf<int8_t> x8(M, K, pad, int8_t(77));
      fill(x8, rng, -128, 127, extreme);
      LinearS8Params p8;
      p8.input_zero_point = extreme ? 127 : zp(rng);
      p8.output_zero_point = zp(rng);
      p8.act_min = iter % 4 == 1 ? -100 : -128;
      p8.act_max = iter % 4 == 1 ? 90 : 127;
      p8.multiplier = m.data();
      p8.shift = s8.data();
      Buf<int8_t> y8a(M, N, pad, int8_t(55)), y8b(M, N, pad, int8_t(55));
      d::linear_s8_ref(x8.cmat(), w.cmat(), with_bias ? b32.data() : nullptr, p8, y8a.mat());
      set.linear_s8(x8.cmat(), w.cmat(), with_bias ? b32.data() : nullptr, p8, y8b.mat());
      CHECK(y8a.data == y8b.data);

      // s16
      Buf<int16_t> x16(M, K, pad, int16_t(777));
      fill(x16, rng, -32768, 32767, extreme);
      LinearS16Params p16;
      p16.multiplier = m.data();
      p16.shift = s16.data();
      Buf<int16_t> y16a(M, N, pad, int16_t(555)), y16b(M, N, pad, int16_t(555));
      d::linear_s16_ref(x16.cmat(), w.cmat(), with_bias ? b64.data() : nullptr, p16, y16a.mat());
      set.linear_s16(x16.cmat(), w.cmat(), with_bias ? b64.data() : nullptr, p16, y16b.mat());
      CHECK(y16a.data == y16b.data);
    }
  }
}

TEST_CASE("fixed variants: scores_s8 / scores_s16 bit-exact with ref", "[variants_fixed]") {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> zp(-128, 127);
  for (const FixedSet& set : sets_under_test()) {
    for (int iter = 0; iter < 150; ++iter) {
      int T = kSizes[rng() % 17], S = kSizes[rng() % 17], hd = kSizes[rng() % 17];
      if (iter < kNumLong) T = kLongShapes[iter][0], S = kLongShapes[iter][1], hd = kLongShapes[iter][2];
      const int pad = int(rng() % 3) * 3;
      const bool extreme = iter % 7 == 0;
      const int shift = iter % 4 == 0 ? 0 : int(rng() % 20);
      INFO(shape_name(set.name, T, S, hd, pad) << " extreme=" << extreme << " shift=" << shift);

      Buf<int8_t> q8(T, hd, pad, int8_t(99)), k8(S, hd, pad, int8_t(99));
      fill(q8, rng, -128, 127, extreme);
      fill(k8, rng, -128, 127, extreme);
      const int zq = extreme ? 127 : zp(rng), zk = extreme ? 127 : zp(rng);
      Buf<int32_t> sa(T, S, pad, 12345), sb(T, S, pad, 12345);
      d::scores_s8_ref(q8.cmat(), zq, k8.cmat(), zk, shift, sa.mat());
      set.scores_s8(q8.cmat(), zq, k8.cmat(), zk, shift, sb.mat());
      CHECK(sa.data == sb.data);

      Buf<int16_t> q16(T, hd, pad, int16_t(999)), k16(S, hd, pad, int16_t(999));
      fill(q16, rng, -32768, 32767, extreme);
      fill(k16, rng, -32768, 32767, extreme);
      const int shift16 = shift + 12;  // the int64 sum must round into int32
      Buf<int32_t> ta(T, S, pad, 12345), tb(T, S, pad, 12345);
      d::scores_s16_ref(q16.cmat(), k16.cmat(), shift16, ta.mat());
      set.scores_s16(q16.cmat(), k16.cmat(), shift16, tb.mat());
      CHECK(ta.data == tb.data);
    }
  }
}

TEST_CASE("fixed variants: weighted_sum_s8 / weighted_sum_s16 bit-exact with ref", "[variants_fixed]") {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> zp(-128, 127), mult(1 << 30, 0x7FFFFFFF);
  for (const FixedSet& set : sets_under_test()) {
    for (int iter = 0; iter < 150; ++iter) {
      int T = kSizes[rng() % 17], S = kSizes[rng() % 17], hd = kSizes[rng() % 17];
      if (iter < kNumLong) T = kLongShapes[iter][0], hd = kLongShapes[iter][1], S = kLongShapes[iter][2];
      const int pad = int(rng() % 3) * 3;
      const bool extreme = iter % 7 == 0;
      // Arbitrary probabilities only where weighted_sum_s8_ref's int32 sum cannot
      // overflow (S * 32768 * 255 < 2^31: S <= 256), as the ref's contract asks.
      const bool softmax_like = iter % 3 != 0 || S > 256;
      INFO(shape_name(set.name, T, hd, S, pad) << " extreme=" << extreme << " softmax_like=" << softmax_like);

      // Probabilities [T, S]: softmax-like rows sum to <= 32767 (non-negative),
      // others are arbitrary int16 (extreme: all -32768).
      Buf<int16_t> p(T, S, pad, int16_t(4321));
      if (softmax_like) {
        for (int t = 0; t < T; ++t) {
          int left = 32767;
          for (int j = 0; j < S; ++j) {
            const int v = j + 1 == S ? left : int(rng() % unsigned(left + 1));
            p.data[size_t(t) * size_t(p.stride) + size_t(j)] = int16_t(v);
            left -= v;
          }
        }
      } else {
        fill(p, rng, -32768, 32767, extreme);
      }
      const int32_t m = mult(rng);

      Buf<int8_t> v8(S, hd, pad, int8_t(66));
      fill(v8, rng, -128, 127, extreme);
      const int zv = extreme ? 127 : zp(rng), zo = zp(rng);
      const int sh8 = iter % 5 == 0  ? int(rng() % 4)
                      : softmax_like ? -int(rng() % 8) - 8
                                     : -int(rng() % 8) - 16;
      Buf<int8_t> oa(T, hd, pad, int8_t(44)), ob(T, hd, pad, int8_t(44));
      d::weighted_sum_s8_ref(p.cmat(), v8.cmat(), zv, m, sh8, zo, oa.mat());
      set.weighted_sum_s8(p.cmat(), v8.cmat(), zv, m, sh8, zo, ob.mat());
      CHECK(oa.data == ob.data);

      Buf<int16_t> v16(S, hd, pad, int16_t(666));
      fill(v16, rng, -32768, 32767, extreme);
      const int sh16 = -int(rng() % 10) - 14;
      Buf<int16_t> qa(T, hd, pad, int16_t(444)), qb(T, hd, pad, int16_t(444));
      d::weighted_sum_s16_ref(p.cmat(), v16.cmat(), m, sh16, qa.mat());
      set.weighted_sum_s16(p.cmat(), v16.cmat(), m, sh16, qb.mat());
      CHECK(qa.data == qb.data);
    }
  }
}

// ---- whole forwards: the dispatched build against the ref kernels ----------
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
  ArenaBuf a(calibrate_attention_bytes(b.cfg, b.L, b.L));
  CalibrationRanges r;
  std::vector<float> y(b.x.size());
  REQUIRE(calibrate_attention(plan, b.weights(), Mask(), {b.x.data(), b.x.data(), b.x.data(), y.data()},
                              a.arena, &r) == Status::kOk);
  return r;
}

// forward_s8's arithmetic (self-attention, no mask; grouped K/V heads and
// RoPE with positions 0 .. L-1) from the ref kernels alone.
std::vector<int8_t> ref_forward_s8(const AttentionConfig& cfg, const WeightsS8& w, int L,
                                   const std::vector<int8_t>& x) {
  const int E = cfg.embed_dim, H = cfg.num_heads, hd = E / H, S = L, Dkv = cfg.kv_dim();
  const int group = H / cfg.resolved_kv_heads();
  auto params = [](const ProjectionS8& p, int32_t zp) {
    LinearS8Params lp;
    lp.output_zero_point = zp;
    lp.multiplier = p.multiplier;
    lp.shift = p.shift;
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
                           ConstMatS8{v.data() + g0, S, hd, Dkv}, w.v_zero_point, w.context_multiplier,
                           w.context_shift, w.context_zero_point, MatS8{o.data() + h * hd, L, hd, E});
  }
  d::linear_s8_ref(ConstMatS8{o.data(), L, E, E}, ConstMatS8{w.o.weight, E, E, E}, w.o.bias,
                   params(w.o, w.output_zero_point), MatS8{y.data(), L, E, E});
  return y;
}

std::vector<int16_t> ref_forward_s16(const AttentionConfig& cfg, const WeightsS16& w, int L,
                                     const std::vector<int16_t>& x) {
  const int E = cfg.embed_dim, H = cfg.num_heads, hd = E / H, S = L, Dkv = cfg.kv_dim();
  const int group = H / cfg.resolved_kv_heads();
  auto params = [](const ProjectionS16& p) {
    LinearS16Params lp;
    lp.multiplier = p.multiplier;
    lp.shift = p.shift;
    return lp;
  };
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
                            ConstMatS16{v.data() + g0, S, hd, Dkv}, w.context_multiplier, w.context_shift,
                            MatS16{o.data() + h * hd, L, hd, E});
  }
  d::linear_s16_ref(ConstMatS16{o.data(), L, E, E}, ConstMatS8{w.o.weight, E, E, E}, w.o.bias, params(w.o),
                    MatS16{y.data(), L, E, E});
  return y;
}

}  // namespace

TEST_CASE("forward_s8 / forward_s16 (dispatched kernels) give the ref kernels' bytes", "[variants_fixed]") {
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
    ArenaBuf st8(quantized_attention_bytes(b.cfg, DType::kS8)),
        st16(quantized_attention_bytes(b.cfg, DType::kS16));
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

#if ATTN_HAVE_AVX2 || ATTN_HAVE_NEON64 || ATTN_HAVE_NEON32
TEST_CASE("fixed variants: softmax_fused_row avx2 / neon (and avx512) bit-exact with ref",
          "[variants_fixed]") {
#if ATTN_HAVE_AVX2
  const auto variant = d::softmax_fused_row_avx2;
#else
  const auto variant = d::softmax_fused_row_neon;
#endif
  std::mt19937 rng(14);
  for (int iter = 0; iter < 600; ++iter) {
    d::FusedSoftmax sm{};
    sm.exp_shift = int32_t(rng() % 24);
    sm.exp_multiplier = 0x80000000u | uint32_t(rng());
    // The largest diff_limit with t(diff_limit) < 2^20 (the converter's rule).
    uint32_t lo = 0, hi = uint32_t(0xFFFFFFFFu >> sm.exp_shift);
    while (lo < hi) {
      const uint32_t mid = uint32_t((uint64_t(lo) + uint64_t(hi) + 1) / 2);
      if (d::fused_exp_argument(mid, sm) < (1u << 20))
        lo = mid;
      else
        hi = mid - 1;
    }
    sm.diff_limit = int32_t(lo > 0x7FFFFFFFu ? 0x7FFFFFFFu : lo);
    const int n = 1 + int(rng() % 70);
    const int begin = iter % 4 == 0 ? int(rng() % unsigned(n)) : 0;
    const int end = iter % 5 == 0 ? begin + int(rng() % unsigned(n - begin + 1)) : n;
    // Scores spread over about 2 diff_limits, so some keys fall past the limit.
    const int32_t spread = int32_t(std::min<uint32_t>(uint32_t(sm.diff_limit) * 2u + 1u, 1u << 29));
    const int32_t base = int32_t(rng() % (1u << 28)) - (1 << 27);
    std::vector<int32_t> a(size_t(n) + 3), b;
    for (int32_t& s : a) s = base + int32_t(rng() % uint32_t(spread));
    if (iter % 7 == 0) std::fill(a.begin(), a.end(), base);  // ties
    b = a;
    INFO("n=" << n << " begin=" << begin << " end=" << end << " exp_shift=" << sm.exp_shift);
    d::softmax_fused_row_ref(a.data(), begin, end, n, sm);
    std::vector<int32_t> c = b;
    variant(b.data(), begin, end, n, sm);
    // The probabilities (first 2n bytes) and the rest of the row.
    CHECK(std::memcmp(a.data(), b.data(), 2 * size_t(n)) == 0);
    CHECK(std::equal(a.begin() + (n + 1) / 2 + 1, a.end(), b.begin() + (n + 1) / 2 + 1));
#if ATTN_HAVE_AVX512VNNI
    d::softmax_fused_row_avx512vnni(c.data(), begin, end, n, sm);
    CHECK(std::memcmp(a.data(), c.data(), 2 * size_t(n)) == 0);
    CHECK(std::equal(a.begin() + (n + 1) / 2 + 1, a.end(), c.begin() + (n + 1) / 2 + 1));
#endif
  }
}
#endif

TEST_CASE("fixed variants: softmax_fused_rows (dispatched) gives softmax_fused_row_ref's rows",
          "[variants_fixed]") {
  // Groups of rows with their own key ranges (empty ones too) and partial
  // last groups: the AVX-512 and AVX2 variants run each phase across a group
  // of 8 rows (AVX-512: the reciprocals on vector lanes).
  std::mt19937 rng(15);
  for (int iter = 0; iter < 300; ++iter) {
    d::FusedSoftmax sm{};
    sm.exp_shift = int32_t(rng() % 24);
    sm.exp_multiplier = 0x80000000u | uint32_t(rng());
    uint32_t lo = 0, hi = uint32_t(0xFFFFFFFFu >> sm.exp_shift);  // as the test above
    while (lo < hi) {
      const uint32_t mid = uint32_t((uint64_t(lo) + uint64_t(hi) + 1) / 2);
      if (d::fused_exp_argument(mid, sm) < (1u << 20))
        lo = mid;
      else
        hi = mid - 1;
    }
    sm.diff_limit = int32_t(lo > 0x7FFFFFFFu ? 0x7FFFFFFFu : lo);
    const int n = 1 + int(rng() % 90), rows = 1 + int(rng() % 21), stride = n + int(rng() % 4);
    std::vector<int32_t> begin(size_t(rows), 0), end(size_t(rows), n);
    for (int r = 0; r < rows; ++r) {
      if (rng() % 3 == 0) begin[size_t(r)] = int(rng() % unsigned(n));
      if (rng() % 3 == 0) end[size_t(r)] = begin[size_t(r)] + int(rng() % unsigned(n - begin[size_t(r)] + 1));
    }
    const int32_t spread = int32_t(std::min<uint32_t>(uint32_t(sm.diff_limit) * 2u + 1u, 1u << 29));
    const int32_t base = int32_t(rng() % (1u << 28)) - (1 << 27);
    std::vector<int32_t> a(size_t(rows) * size_t(stride));  // [rows, stride]
    for (int32_t& s : a) s = base + int32_t(rng() % uint32_t(spread));
    std::vector<int32_t> b = a;
    for (int r = 0; r < rows; ++r)
      d::softmax_fused_row_ref(a.data() + size_t(r) * size_t(stride), begin[size_t(r)], end[size_t(r)], n,
                               sm);
    d::best(d::kSoftmaxRows)(b.data(), stride, rows, begin.data(), end.data(), n, sm);
    for (int r = 0; r < rows; ++r) {
      INFO("n=" << n << " rows=" << rows << " row " << r << " begin=" << begin[size_t(r)]
                << " end=" << end[size_t(r)]);
      CHECK(std::memcmp(a.data() + size_t(r) * size_t(stride), b.data() + size_t(r) * size_t(stride),
                        2 * size_t(n)) == 0);
    }
  }
}
