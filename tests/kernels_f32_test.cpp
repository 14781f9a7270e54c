// Every public f32 kernel against a naive double-precision loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "attn/kernels.h"

namespace {

std::vector<float> random_vec(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Largest |a - b| relative to max|b|, plus an absolute floor.
void require_close(const std::vector<float>& got, const std::vector<double>& want, double rel = 1e-5) {
  REQUIRE(got.size() == want.size());
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_ref = std::fmax(max_ref, std::fabs(want[i]));
    max_err = std::fmax(max_err, std::fabs(got[i] - want[i]));
  }
  INFO("max err " << max_err << " max ref " << max_ref);
  REQUIRE(max_err <= rel * max_ref + 1e-6);
}

// scale * a b in double: a [rows, inner] row-major, b's element (column n,
// inner i) at b[n * col_stride + i * inner_stride]; [rows, cols] row-major.
std::vector<double> product_ref(const std::vector<float>& a, int rows, int inner, const std::vector<float>& b,
                                int cols, int col_stride, int inner_stride, float scale = 1.0f) {
  std::vector<double> out;
  for (int t = 0; t < rows; ++t)
    for (int n = 0; n < cols; ++n) {
      double acc = 0;
      for (int i = 0; i < inner; ++i) acc += double(a[t * inner + i]) * b[n * col_stride + i * inner_stride];
      out.push_back(acc * scale);
    }
  return out;
}

}  // namespace

TEST_CASE("linear_f32 matches a double loop over odd shapes and strides", "[kernels][f32]") {
  for (int M : {1, 3, 8, 17}) {
    for (int K : {1, 5, 16, 33}) {
      for (int N : {1, 7, 64}) {
        for (bool with_bias : {false, true}) {
          const int ldx = K + 3, ldy = N + 1;
          auto x = random_vec(static_cast<size_t>(M * ldx), 1);
          auto w = random_vec(static_cast<size_t>(N * K), 2);
          auto b = random_vec(static_cast<size_t>(N), 3);
          std::vector<float> y(static_cast<size_t>(M * ldy), 123.0f);
          REQUIRE(attn::linear_f32({x.data(), M, K, ldx}, {w.data(), N, K, K}, with_bias ? b.data() : nullptr,
                                   {y.data(), M, N, ldy}) == attn::Status::kOk);
          std::vector<float> got;
          std::vector<double> want;
          for (int m = 0; m < M; ++m) {
            for (int n = 0; n < N; ++n) {
              double acc = with_bias ? b[n] : 0.0;
              for (int k = 0; k < K; ++k) acc += double(x[m * ldx + k]) * w[n * K + k];
              got.push_back(y[m * ldy + n]);
              want.push_back(acc);
            }
            for (int n = N; n < ldy; ++n) REQUIRE(y[m * ldy + n] == 123.0f);  // padding untouched
          }
          require_close(got, want);
        }
      }
    }
  }
}

TEST_CASE("scores_f32 and weighted_sum_f32 match double loops", "[kernels][f32]") {
  for (int T : {1, 4, 9}) {
    for (int S : {1, 6, 31}) {
      for (int d : {1, 4, 13}) {
        auto q = random_vec(static_cast<size_t>(T * d), 4);
        auto k = random_vec(static_cast<size_t>(S * d), 5);
        std::vector<float> s(static_cast<size_t>(T * S));
        const float scale = 0.37f;
        REQUIRE(attn::scores_f32(attn::matrix<const float>(q.data(), T, d),
                                 attn::matrix<const float>(k.data(), S, d), scale,
                                 attn::matrix(s.data(), T, S)) == attn::Status::kOk);
        require_close(s, product_ref(q, T, d, k, S, d, 1, scale));  // q k^T

        auto v = random_vec(static_cast<size_t>(S * d), 6);
        std::vector<float> o(static_cast<size_t>(T * d));
        REQUIRE(attn::weighted_sum_f32(attn::matrix<const float>(s.data(), T, S),
                                       attn::matrix<const float>(v.data(), S, d),
                                       attn::matrix(o.data(), T, d)) == attn::Status::kOk);
        require_close(o, product_ref(s, T, S, v, d, 1, d));  // s v
      }
    }
  }
}

TEST_CASE("softmax_f32 matches a double softmax, masked entries are exactly 0", "[kernels][f32]") {
  for (int S : {1, 2, 7, 64, 129}) {
    auto s = random_vec(static_cast<size_t>(3 * S), 7, 4.0f);
    for (int j = 1; j < S; j += 3) s[static_cast<size_t>(S + j)] = -INFINITY;  // row 1 partly masked
    std::vector<float> p = s;
    REQUIRE(attn::softmax_f32(attn::matrix(p.data(), 3, S)) == attn::Status::kOk);
    std::vector<double> want;
    for (int t = 0; t < 3; ++t) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < S; ++j) mx = std::fmax(mx, s[t * S + j]);
      for (int j = 0; j < S; ++j) sum += std::exp(double(s[t * S + j]) - mx);
      for (int j = 0; j < S; ++j) want.push_back(std::exp(double(s[t * S + j]) - mx) / sum);
    }
    require_close(p, want);
    for (int j = 1; j < S; j += 3) REQUIRE(p[static_cast<size_t>(S + j)] == 0.0f);
  }
}

TEST_CASE("softmax_f32 gives an all-zero row when every entry is masked", "[kernels][f32]") {
  std::vector<float> p(5, -INFINITY);
  REQUIRE(attn::softmax_f32(attn::matrix(p.data(), 1, 5)) == attn::Status::kOk);
  for (float v : p) REQUIRE(v == 0.0f);
}

TEST_CASE("head split and concat are inverse copies", "[kernels][f32]") {
  const int T = 3, H = 4, d = 5;
  auto x = random_vec(static_cast<size_t>(T * H * d), 8);
  std::vector<float> heads(x.size()), back(x.size());
  REQUIRE(attn::head_split_f32(attn::matrix<const float>(x.data(), T, H * d), H, heads.data()) ==
          attn::Status::kOk);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < d; ++c) REQUIRE(heads[(h * T + t) * d + c] == x[t * H * d + h * d + c]);
  REQUIRE(attn::head_concat_f32(heads.data(), H, attn::matrix(back.data(), T, H * d)) == attn::Status::kOk);
  REQUIRE(back == x);
  REQUIRE(attn::head_split_f32(attn::matrix<const float>(x.data(), T, H * d), 7, heads.data()) ==
          attn::Status::kBadShape);
}

TEST_CASE("kernels reject null data and mismatched shapes", "[kernels][f32]") {
  float a[16] = {}, b[16] = {}, c[16] = {};
  using attn::Status;
  REQUIRE(attn::linear_f32({nullptr, 2, 2, 2}, {b, 2, 2, 2}, nullptr, {c, 2, 2, 2}) == Status::kNullArgument);
  REQUIRE(attn::linear_f32({a, 2, 3, 3}, {b, 2, 2, 2}, nullptr, {c, 2, 2, 2}) == Status::kBadShape);
  REQUIRE(attn::linear_f32({a, 2, 2, 1}, {b, 2, 2, 2}, nullptr, {c, 2, 2, 2}) == Status::kBadShape);
  REQUIRE(attn::linear_f32({a, 0, 2, 2}, {b, 2, 2, 2}, nullptr, {c, 0, 2, 2}) == Status::kBadShape);
  REQUIRE(attn::scores_f32({a, 2, 2, 2}, {b, 3, 2, 2}, 1.0f, {c, 2, 2, 2}) == Status::kBadShape);
  REQUIRE(attn::weighted_sum_f32({a, 2, 3, 3}, {b, 2, 2, 2}, {c, 2, 2, 2}) == Status::kBadShape);
  REQUIRE(attn::softmax_f32({nullptr, 1, 1, 1}) == Status::kNullArgument);
}

TEST_CASE("rope_f32 rotates half-split pairs by pos * base^(-2i/d) and checks its arguments",
          "[kernels][f32]") {
  const int n = 3, heads = 2, d = 6;
  auto x = random_vec(static_cast<size_t>(n * heads * d), 9);
  auto y = x;
  REQUIRE(attn::rope_f32(attn::matrix(y.data(), n, heads * d), d, 5, 100.0f) == attn::Status::kOk);
  std::vector<double> want;
  for (int r = 0; r < n; ++r)
    for (int h = 0; h < heads; ++h)
      for (int c = 0; c < d; ++c) {
        const int i = c % (d / 2);
        const double th = (5 + r) * std::pow(100.0, -2.0 * i / d);
        const double a = x[r * heads * d + h * d + i], b = x[r * heads * d + h * d + i + d / 2];
        want.push_back(c < d / 2 ? a * std::cos(th) - b * std::sin(th) : b * std::cos(th) + a * std::sin(th));
      }
  require_close(y, want);
  using attn::Status;
  REQUIRE(attn::rope_f32(attn::matrix(y.data(), n, heads * d), 5, 0, 100.0f) == Status::kBadShape);
  REQUIRE(attn::rope_f32(attn::matrix(y.data(), n, heads * d), d, 0, -1.0f) == Status::kBadRope);
  REQUIRE(attn::rope_f32(attn::matrix(y.data(), n, heads * d), d, -3, 100.0f) == Status::kBadPosition);
}
