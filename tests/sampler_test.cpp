// The token sampler (attn/sampler.h): greedy, tempered draws, top-k, seeds, errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/sampler.h"

using attn::Rng;
using attn::Sampler;
using attn::Status;

TEST_CASE("sampler: greedy takes the first maximum and skips NaN and -inf", "[sampler]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float logits[] = {nan, 1.0f, 3.0f, -inf, 3.0f, 2.0f};
  int32_t token = -1;
  REQUIRE(attn::sample(logits, 6, Sampler{}, nullptr, &token) == Status::kOk);
  CHECK(token == 2);
  const int32_t ints[] = {-5, 7, 7, 6};
  REQUIRE(attn::sample_s32(ints, 4, 0.5f, Sampler{}, nullptr, &token) == Status::kOk);
  CHECK(token == 1);
}

TEST_CASE("sampler: a tempered draw follows softmax(logits / T)", "[sampler]") {
  const float logits[] = {0.0f, 1.0f, 2.0f, -1.0f};
  const float t = 1.5f;
  double expect[4];
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) sum += expect[i] = std::exp(logits[i] / t);
  Rng rng;
  REQUIRE(attn::rng_seed(7, &rng) == Status::kOk);
  const int draws = 40000;
  int count[4] = {0, 0, 0, 0};
  for (int d = 0; d < draws; ++d) {
    int32_t token = -1;
    REQUIRE(attn::sample(logits, 4, Sampler{t, 0}, &rng, &token) == Status::kOk);
    REQUIRE(token >= 0);
    REQUIRE(token < 4);
    ++count[token];
  }
  for (int i = 0; i < 4; ++i) {
    // Binomial standard deviation is below 0.0025 at 40000 draws: 0.01 is four of them.
    CHECK(std::fabs(count[i] / static_cast<double>(draws) - expect[i] / sum) < 0.01);
  }
}

TEST_CASE("sampler: top_k keeps the k largest, ties at the k-th included", "[sampler]") {
  const float logits[] = {5.0f, 1.0f, 4.0f, 4.0f, 0.0f, 3.0f};
  Rng rng;
  REQUIRE(attn::rng_seed(1, &rng) == Status::kOk);
  bool seen[6] = {};
  for (int d = 0; d < 4000; ++d) {
    int32_t token = -1;
    REQUIRE(attn::sample(logits, 6, Sampler{4.0f, 2}, &rng, &token) == Status::kOk);
    seen[token] = true;
  }
  CHECK(seen[0]);
  CHECK(seen[2]);
  CHECK(seen[3]);  // tied with token 2 at the second-largest value
  CHECK_FALSE(seen[1]);
  CHECK_FALSE(seen[4]);
  CHECK_FALSE(seen[5]);
  // top_k 1 is greedy whatever the temperature.
  int32_t token = -1;
  REQUIRE(attn::sample(logits, 6, Sampler{100.0f, 1}, &rng, &token) == Status::kOk);
  CHECK(token == 0);
}

TEST_CASE("sampler: the same seed gives the same tokens, another seed others", "[sampler]") {
  std::vector<float> logits(64);
  for (int i = 0; i < 64; ++i) logits[i] = static_cast<float>((i * 37) % 11) * 0.1f;
  const auto run = [&](uint64_t seed) {
    Rng rng;
    REQUIRE(attn::rng_seed(seed, &rng) == Status::kOk);
    std::vector<int32_t> tokens;
    for (int d = 0; d < 32; ++d) {
      int32_t token = -1;
      REQUIRE(attn::sample(logits.data(), 64, Sampler{1.0f, 0}, &rng, &token) == Status::kOk);
      tokens.push_back(token);
    }
    return tokens;
  };
  CHECK(run(42) == run(42));
  CHECK(run(42) != run(43));
  // Integer logits at a scale draw what their real values draw.
  std::vector<int32_t> ints(64);
  for (int i = 0; i < 64; ++i) ints[i] = (i * 37) % 11;
  Rng a, b;
  REQUIRE(attn::rng_seed(5, &a) == Status::kOk);
  REQUIRE(attn::rng_seed(5, &b) == Status::kOk);
  for (int d = 0; d < 32; ++d) {
    int32_t x = -1, y = -2;
    REQUIRE(attn::sample(logits.data(), 64, Sampler{0.7f, 10}, &a, &x) == Status::kOk);
    REQUIRE(attn::sample_s32(ints.data(), 64, 0.1f, Sampler{0.7f, 10}, &b, &y) == Status::kOk);
    CHECK(x == y);
  }
}

TEST_CASE("sampler: bad settings and arguments get their status", "[sampler]") {
  const float logits[] = {1.0f, 2.0f};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float none[] = {nan, -std::numeric_limits<float>::infinity()};
  Rng rng;
  int32_t token = -1;
  CHECK(attn::sample(nullptr, 2, Sampler{}, &rng, &token) == Status::kNullArgument);
  CHECK(attn::sample(logits, 2, Sampler{}, &rng, nullptr) == Status::kNullArgument);
  CHECK(attn::sample(logits, 2, Sampler{1.0f, 0}, nullptr, &token) == Status::kNullArgument);
  CHECK(attn::sample(logits, 0, Sampler{}, &rng, &token) == Status::kBadShape);
  CHECK(attn::sample(logits, 2, Sampler{-1.0f, 0}, &rng, &token) == Status::kBadSampler);
  CHECK(attn::sample(logits, 2, Sampler{nan, 0}, &rng, &token) == Status::kBadSampler);
  CHECK(attn::sample(logits, 2, Sampler{std::numeric_limits<float>::infinity(), 0}, &rng, &token) ==
        Status::kBadSampler);
  CHECK(attn::sample(logits, 2, Sampler{1.0f, -1}, &rng, &token) == Status::kBadSampler);
  CHECK(attn::sample(logits, 2, Sampler{1.0f, 3}, &rng, &token) == Status::kBadSampler);
  CHECK(attn::sample(none, 2, Sampler{}, &rng, &token) == Status::kBadSampler);
  const int32_t ints[] = {1, 2};
  CHECK(attn::sample_s32(ints, 2, 0.0f, Sampler{}, &rng, &token) == Status::kBadQuantParams);
  CHECK(attn::sample_s32(ints, 2, nan, Sampler{}, &rng, &token) == Status::kBadQuantParams);
  CHECK(attn::rng_seed(0, nullptr) == Status::kNullArgument);
  uint32_t bits = 0;
  CHECK(attn::rng_next(nullptr, &bits) == Status::kNullArgument);
}

namespace {

// The tokens a tempered top-k draw reaches in 3000 draws (temperature 3e38:
// every candidate about equally likely).
template <class T, class Sample>
std::vector<bool> reached(const std::vector<T>& logits, int32_t k, Sample sample) {
  Rng rng;
  REQUIRE(attn::rng_seed(3, &rng) == Status::kOk);
  std::vector<bool> seen(logits.size(), false);
  for (int d = 0; d < 3000; ++d) {
    int32_t token = -1;
    REQUIRE(sample(logits.data(), static_cast<int32_t>(logits.size()), Sampler{3e38f, k}, &rng, &token) ==
            Status::kOk);
    seen[static_cast<size_t>(token)] = true;
  }
  return seen;
}

}  // namespace

TEST_CASE("sampler: top_k at every k keeps the k largest, with signed zeros, extremes and ties",
          "[sampler]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::vector<float> f = {0.0f, -0.0f, 1e38f, -1e38f, nan, 1.5f, ninf, -1e-45f, 1e-45f, 1.5f};
  // Drawable values in descending order, ties together: 1e38 | 1.5 x2 | 1e-45 | 0, -0 | -1e-45 | -1e38.
  const std::vector<std::vector<int>> top = {{2},
                                             {2, 5, 9},
                                             {2, 5, 9},
                                             {2, 5, 9, 8},
                                             {2, 5, 9, 8, 0, 1},
                                             {2, 5, 9, 8, 0, 1},
                                             {2, 5, 9, 8, 0, 1, 7},
                                             {2, 5, 9, 8, 0, 1, 7, 3},
                                             {2, 5, 9, 8, 0, 1, 7, 3}};
  for (int32_t k = 1; k <= 9; ++k) {
    INFO("k = " << k);
    const std::vector<bool> seen =
        reached(f, k, [](const float* l, int32_t n, const Sampler& s, Rng* r, int32_t* t) {
          return attn::sample(l, n, s, r, t);
        });
    for (size_t i = 0; i < f.size(); ++i) {
      INFO("token " << i);
      const auto& want = top[static_cast<size_t>(k - 1)];
      CHECK(seen[i] == (std::find(want.begin(), want.end(), static_cast<int>(i)) != want.end()));
    }
  }
  const std::vector<int32_t> ints = {INT32_MIN, 7, INT32_MAX, -1, 7, 0};
  const std::vector<std::vector<int>> itop = {{2}, {2, 1, 4}, {2, 1, 4}, {2, 1, 4, 5}, {2, 1, 4, 5, 3}};
  for (int32_t k = 1; k <= 5; ++k) {
    INFO("s32 k = " << k);
    const std::vector<bool> seen =
        reached(ints, k, [](const int32_t* l, int32_t n, const Sampler& s, Rng* r, int32_t* t) {
          return attn::sample_s32(l, n, 1e-30f, s, r, t);
        });
    for (size_t i = 0; i < ints.size(); ++i) {
      const auto& want = itop[static_cast<size_t>(k - 1)];
      CHECK(seen[i] == (std::find(want.begin(), want.end(), static_cast<int>(i)) != want.end()));
    }
  }
}

TEST_CASE("sampler: top_k near a large vocabulary's size takes a few passes, not one per value",
          "[sampler]") {
  // 2^20 distinct logits and top_k = n - 1: one pass per distinct value down
  // to the k-th (O(k n)) would be 10^12 steps; the bisection takes 32 passes.
  const int32_t n = 1 << 20;
  std::vector<float> logits(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    logits[static_cast<size_t>(i)] = -static_cast<float>(i);  // token 0 the largest
  Rng rng;
  REQUIRE(attn::rng_seed(5, &rng) == Status::kOk);
  const auto start = std::chrono::steady_clock::now();
  for (int32_t k : {n - 1, n / 2, 1000}) {
    int32_t token = -1;
    REQUIRE(attn::sample(logits.data(), n, Sampler{1.0f, k}, &rng, &token) == Status::kOk);
    CHECK(token >= 0);
    CHECK(token < k);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("seconds: " << seconds);
  CHECK(seconds < 60.0);  // about 0.1 s (ASan: 1 s); before, hours
}

TEST_CASE("sampler: no NaN weight: a subnormal temperature, a +inf logit, scale * logit past float",
          "[sampler]") {
  // Each case's scaled difference was NaN for the maximum itself, the draw's
  // sum NaN (or 0), and the last candidate came out: here the least likely.
  const float inf = std::numeric_limits<float>::infinity();
  Rng rng;
  REQUIRE(attn::rng_seed(3, &rng) == Status::kOk);
  const float logits[] = {2.0f, 5.0f, 1.0f, 0.5f};
  const float with_inf[] = {2.0f, inf, 1.0f, 0.5f};
  const int32_t big[] = {1002, 1001, 1000};  // real = 1e37 * logit: past float's range
  for (int d = 0; d < 200; ++d) {
    int32_t token = -1;
    // T -> 0 is greedy.
    REQUIRE(attn::sample(logits, 4, Sampler{1e-39f, 0}, &rng, &token) == Status::kOk);
    CHECK(token == 1);
    REQUIRE(attn::sample(logits, 4, Sampler{std::numeric_limits<float>::denorm_min(), 0}, &rng, &token) ==
            Status::kOk);
    CHECK(token == 1);
    // A +inf logit is the argmax at every temperature.
    REQUIRE(attn::sample(with_inf, 4, Sampler{1.0f, 0}, &rng, &token) == Status::kOk);
    CHECK(token == 1);
    REQUIRE(attn::sample(with_inf, 4, Sampler{1e30f, 3}, &rng, &token) == Status::kOk);
    CHECK(token == 1);
    // Integer logits whose real values overflow float, at T = 1: the largest.
    REQUIRE(attn::sample_s32(big, 3, 1e37f, Sampler{1.0f, 0}, &rng, &token) == Status::kOk);
    CHECK(token == 0);
  }
  // The same integer logits at T = scale draw softmax(0, -1, -2).
  const int draws = 40000;
  int count[3] = {0, 0, 0};
  for (int d = 0; d < draws; ++d) {
    int32_t token = -1;
    REQUIRE(attn::sample_s32(big, 3, 1e37f, Sampler{1e37f, 0}, &rng, &token) == Status::kOk);
    ++count[token];
  }
  const double z = 1.0 + std::exp(-1.0) + std::exp(-2.0);
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(count[i] / double(draws) - std::exp(-double(i)) / z) < 0.01);
}
