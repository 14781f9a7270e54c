// Every float32 kernel variant compiled for this target against the portable
// `ref` variant: tails of the vector width and of the register blocks, odd
// sizes, row strides (padding must stay untouched), biases, masks.
//
// Tolerance. Variants differ from ref only in the order of additions and in
// fused multiply-adds, so for a dot product of length K both results lie
// within gamma_K * sum_k |a_k b_k| of the exact value, gamma_K ~ K u with
// u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1):
//   |variant - ref| <= 2 (K + 2) u * (sum_k |a_k b_k| + |bias|)   per element
// (+2 for the bias add and the scale). It is a worst-case bound, not a fit;
// a dropped, doubled or misplaced term breaks it by orders of magnitude.
// Softmax: each probability is exp(x - max) / sum. Our vector exp is within
// 1.26 ulp of exact (checked on every float in [-87.33, 0]), std::exp within
// 0.5 ulp; a sum of n positive terms is within n u relative in either order;
// one rounding for the division and one for the subtraction of the max (which
// is exact unless it rounds, then relative u * |x| in the exponent: the test
// keeps |x - max| < 64, i.e. up to 64 u). So
//   |variant - ref| <= (2 n + 140) u * ref + 1e-37   per entry,
// the absolute floor covering entries std::exp leaves as subnormals (below
// 1.2e-38) that the vector exp flushes to 0. Masked (-INFINITY) entries must be
// exactly 0, and a fully masked row exactly all 0, in every variant.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "internal/arch.h"
#include "internal/kernel_table.h"

namespace {

using attn::ConstMatF32;
using attn::MatF32;
namespace d = attn::detail;

constexpr double kU = 5.9604644775390625e-8;  // 2^-24, unit roundoff of float
constexpr float kPad = 1234.5f;               // fills row padding; must survive

struct VariantSet {
  const char* name;
  void (*linear)(ConstMatF32, ConstMatF32, const float*, MatF32);
  void (*scores)(ConstMatF32, ConstMatF32, float, MatF32);
  void (*softmax_row)(float*, int32_t);
  void (*weighted_sum)(ConstMatF32, ConstMatF32, MatF32);
};

// The SIMD variant sets compiled for this target (none under -DATTN_KERNELS=ref).
std::vector<VariantSet> simd_sets() {
  std::vector<VariantSet> sets;
#if ATTN_HAVE_AVX2
  sets.push_back(
      {"avx2", d::linear_f32_avx2, d::scores_f32_avx2, d::softmax_row_f32_avx2, d::weighted_sum_f32_avx2});
#endif
#if ATTN_HAVE_NEON
  sets.push_back(
      {"neon", d::linear_f32_neon, d::scores_f32_neon, d::softmax_row_f32_neon, d::weighted_sum_f32_neon});
#endif
// The M55 boards do not build this test; port/cortex-m/conformance/kernel_equiv.cpp checks mve there.
#if ATTN_HAVE_MVE_FP
  sets.push_back(
      {"mve", d::linear_f32_mve, d::scores_f32_mve, d::softmax_row_f32_mve, d::weighted_sum_f32_mve});
#endif
  return sets;
}

std::vector<float> random_vec(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A [rows, cols] matrix with row stride cols + pad, padding filled with kPad.
struct Buf {
  int rows, cols, stride;
  std::vector<float> v;
  Buf(int r, int c, int pad) : rows(r), cols(c), stride(c + pad), v(size_t(r) * size_t(c + pad), kPad) {}
  float& at(int r, int c) { return v[size_t(r) * size_t(stride) + size_t(c)]; }
  float at(int r, int c) const { return v[size_t(r) * size_t(stride) + size_t(c)]; }
  MatF32 mat() { return MatF32{v.data(), rows, cols, stride}; }
  ConstMatF32 cmat() const { return ConstMatF32{v.data(), rows, cols, stride}; }
  void fill(std::mt19937& rng) {
    auto r = random_vec(size_t(rows) * size_t(cols), rng);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) at(i, j) = r[size_t(i) * size_t(cols) + size_t(j)];
  }
  bool padding_intact() const {
    for (int i = 0; i < rows; ++i)
      for (int j = cols; j < stride; ++j)
        if (at(i, j) != kPad) return false;
    return true;
  }
};

// got vs want element by element, against bound(r, c).
template <class Bound>
void require_within(const Buf& got, const Buf& want, Bound bound, const std::string& what) {
  double worst = 0;  // largest |got - want| / bound
  int wr = 0, wc = 0;
  for (int r = 0; r < want.rows; ++r)
    for (int c = 0; c < want.cols; ++c) {
      const double err = std::fabs(double(got.at(r, c)) - double(want.at(r, c)));
      const double ratio = err / bound(r, c);
      if (!(ratio <= worst)) worst = ratio, wr = r, wc = c;  // NaN-safe: a NaN becomes worst
    }
  INFO(what << ": worst error/bound " << worst << " at (" << wr << ", " << wc << "): got " << got.at(wr, wc)
            << ", ref " << want.at(wr, wc));
  REQUIRE(worst <= 1.0);
  REQUIRE(got.padding_intact());
}

}  // namespace

TEST_CASE("f32 variants: this target's SIMD sets are listed", "[variants][f32]") {
  const auto sets = simd_sets();
  INFO("dispatched set: " << d::kLinearF32[0].isa);
  if (std::string(d::kLinearF32[0].isa) == "ref") {
    REQUIRE(sets.empty());
  } else {
    REQUIRE(!sets.empty());  // the dispatched set is one the tests below cover
    bool found = false;
    for (const auto& s : sets) found |= std::string(s.name) == d::kLinearF32[0].isa;
    REQUIRE(found);
  }
}

TEST_CASE("f32 variants: linear matches ref", "[variants][f32]") {
  std::mt19937 rng(11);
  for (const VariantSet& v : simd_sets()) {
    for (int M : {1, 2, 3, 4, 5, 7, 8, 9, 13}) {
      for (int N : {1, 2, 3, 4, 5, 6, 7, 12, 13, 16, 17, 40}) {
        for (int K : {1, 3, 7, 8, 9, 15, 16, 17, 33, 64, 67, 260}) {
          const bool with_bias = (M + N + K) % 2 == 0;
          Buf x(M, K, 3), w(N, K, 1);
          x.fill(rng), w.fill(rng);
          auto b = random_vec(size_t(N), rng);
          const float* bias = with_bias ? b.data() : nullptr;
          // bound(m, n) = 2 (K + 2) u (sum_k |x w| + |b|)
          auto bound = [&](int m, int n) {
            double s = with_bias ? std::fabs(b[size_t(n)]) : 0.0;
            for (int k = 0; k < K; ++k) s += std::fabs(double(x.at(m, k)) * w.at(n, k));
            return 2.0 * (K + 2) * kU * s + 1e-30;
          };
          const std::string what = std::string(v.name) + " M=" + std::to_string(M) +
                                   " N=" + std::to_string(N) + " K=" + std::to_string(K) +
                                   (with_bias ? " bias" : "");
          Buf y_ref(M, N, 2), y(M, N, 2);
          d::linear_f32_ref(x.cmat(), w.cmat(), bias, y_ref.mat());
          v.linear(x.cmat(), w.cmat(), bias, y.mat());
          require_within(y, y_ref, bound, "linear " + what);
        }
      }
    }
  }
}

// Weights packed once (pack_weights_f32): where this build's linear takes W^T
// panels, the dispatched linear on them matches ref, and gives the same bits
// as the per-call panels up to the stack panel's depth (256).
TEST_CASE("f32 variants: linear on packed panels matches ref and the unpacked linear", "[variants][f32]") {
  std::mt19937 rng(13);
  const bool packs = d::linear_panels_floats_f32(16, 8) > 0;
  INFO("dispatched set: " << d::kLinearF32[0].isa);
  REQUIRE(packs == (std::string(d::kLinearF32[0].isa) == "avx2"));
  for (int M : {1, 3, 4, 5, 7, 8, 13}) {
    for (int N : {1, 7, 15, 16, 17, 40}) {
      for (int K : {1, 7, 8, 9, 33, 64, 256, 260, 300}) {
        const bool with_bias = (M + N + K) % 2 == 1;
        Buf x(M, K, 3), w(N, K, 1);
        x.fill(rng), w.fill(rng);
        auto b = random_vec(size_t(N), rng);
        const float* bias = with_bias ? b.data() : nullptr;
        const size_t floats = size_t(d::linear_panels_floats_f32(N, K));
        REQUIRE(floats == (packs ? size_t((N + 15) / 16) * 16 * size_t(K) : 0));
        std::vector<float> panels(floats + 1, kPad);  // one guard float past the end
        if (packs) d::best(d::kPackedLinearF32).pack(w.cmat(), panels.data());
        REQUIRE(panels[floats] == kPad);
        auto bound = [&](int m, int n) {
          double s = with_bias ? std::fabs(b[size_t(n)]) : 0.0;
          for (int k = 0; k < K; ++k) s += std::fabs(double(x.at(m, k)) * w.at(n, k));
          return 2.0 * (K + 2) * kU * s + 1e-30;
        };
        const std::string what =
            "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
        Buf y_ref(M, N, 2), y(M, N, 2), y_plain(M, N, 2);
        d::linear_f32_ref(x.cmat(), w.cmat(), bias, y_ref.mat());
        d::linear_packed_f32(x.cmat(), w.cmat(), packs ? panels.data() : nullptr, bias, y.mat());
        require_within(y, y_ref, bound, "packed linear " + what);
        if (K <= 256) {
          d::best(d::kLinearF32)(x.cmat(), w.cmat(), bias, y_plain.mat());
          INFO(what);
          REQUIRE(std::memcmp(y.v.data(), y_plain.v.data(), y.v.size() * sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE("f32 variants: scores and weighted_sum match ref", "[variants][f32]") {
  std::mt19937 rng(12);
  for (const VariantSet& v : simd_sets()) {
    // T from 1 (decoding) past the 4 rows where the SIMD scores switch to K^T
    // panels; S past the 16-key panel; d past the 8-wide transposes and the
    // 256-deep panel.
    for (int T : {1, 2, 3, 4, 5, 6, 7, 12, 13}) {
      for (int S : {1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 33, 100}) {
        for (int hd : {1, 2, 3, 4, 8, 9, 16, 17, 32, 257}) {
          if (hd == 257 && S > 17) continue;  // the deep case needs few keys
          const std::string what = std::string(v.name) + " T=" + std::to_string(T) +
                                   " S=" + std::to_string(S) + " d=" + std::to_string(hd);
          // scores: s[T,S] = q[T,d] k[S,d]^T * scale, q and k with padded rows
          const float scale = 1.0f / std::sqrt(float(hd));
          Buf q(T, hd, 4), k(S, hd, 3);
          q.fill(rng), k.fill(rng);
          Buf s_ref(T, S, 1), s(T, S, 1);
          d::scores_f32_ref(q.cmat(), k.cmat(), scale, s_ref.mat());
          v.scores(q.cmat(), k.cmat(), scale, s.mat());
          require_within(
              s, s_ref,
              [&](int t, int j) {
                double a = 0;
                for (int c = 0; c < hd; ++c) a += std::fabs(double(q.at(t, c)) * k.at(j, c));
                return 2.0 * (hd + 2) * kU * a * scale + 1e-30;
              },
              "scores " + what);

          // weighted sum: o[T,d] = p[T,S] v[S,d]; p with exact zeros (masked keys)
          Buf p(T, S, 2), val(S, hd, 5);
          p.fill(rng), val.fill(rng);
          for (int t = 0; t < T; ++t)
            for (int j = 0; j < S; ++j) p.at(t, j) = (j + t) % 3 == 0 ? 0.0f : std::fabs(p.at(t, j));
          Buf o_ref(T, hd, 3), o(T, hd, 3);
          d::weighted_sum_f32_ref(p.cmat(), val.cmat(), o_ref.mat());
          v.weighted_sum(p.cmat(), val.cmat(), o.mat());
          require_within(
              o, o_ref,
              [&](int t, int c) {
                double a = 0;
                for (int j = 0; j < S; ++j) a += std::fabs(double(p.at(t, j)) * val.at(j, c));
                return 2.0 * (S + 2) * kU * a + 1e-30;
              },
              "weighted_sum " + what);
        }
      }
    }
  }
}

TEST_CASE("f32 variants: softmax matches ref, masked entries exactly 0", "[variants][f32]") {
  std::mt19937 rng(13);
  std::vector<int> lengths;
  for (int n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int n : {63, 64, 65, 100, 255, 256, 257, 1000}) lengths.push_back(n);
  for (const VariantSet& v : simd_sets()) {
    for (int n : lengths) {
      for (int kind = 0; kind < 4; ++kind) {
        // kind 0: plain; 1: some -INFINITY; 2: wide range (tiny and underflowing
        // exps); 3: all -INFINITY but one
        std::uniform_real_distribution<float> wide(-63.0f, 0.0f);
        auto row = random_vec(size_t(n), rng);
        for (int j = 0; j < n; ++j) {
          if (kind == 1 && (rng() % 3 == 0)) row[size_t(j)] = -INFINITY;
          if (kind == 2) row[size_t(j)] = wide(rng) + (j % 5 == 0 ? 40.0f : 0.0f);
          if (kind == 3 && j != n / 2) row[size_t(j)] = -INFINITY;
        }
        std::vector<float> want(row), got(row);
        got.push_back(kPad);  // one past the row: must survive
        d::softmax_row_f32_ref(want.data(), n);
        v.softmax_row(got.data(), n);
        INFO(v.name << " n=" << n << " kind=" << kind);
        REQUIRE(got[size_t(n)] == kPad);
        double worst = 0;
        for (int j = 0; j < n; ++j) {
          if (row[size_t(j)] == -INFINITY) REQUIRE(got[size_t(j)] == 0.0f);
          const double bound = (2.0 * n + 140.0) * kU * want[size_t(j)] + 1e-37;
          worst = std::fmax(worst, std::fabs(double(got[size_t(j)]) - want[size_t(j)]) / bound);
          REQUIRE(std::isfinite(got[size_t(j)]));
        }
        INFO("worst error/bound " << worst);
        REQUIRE(worst <= 1.0);
      }
      // Fully masked row: all 0, nothing written past it.
      std::vector<float> masked(size_t(n) + 1, -INFINITY);
      masked[size_t(n)] = kPad;
      v.softmax_row(masked.data(), n);
      for (int j = 0; j < n; ++j) REQUIRE(masked[size_t(j)] == 0.0f);
      REQUIRE(masked[size_t(n)] == kPad);
    }
  }
}
