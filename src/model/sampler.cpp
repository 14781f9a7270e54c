// The token sampler: greedy argmax or a seeded draw from the tempered,
// top-k-restricted softmax (attn/sampler.h). Both dtypes run one template
// over the logit type; the draw converts to float per candidate.
#include "attn/sampler.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attn {
namespace {

uint32_t next_bits(Rng* rng) {
  uint64_t x = rng->state;  // xorshift64* (Vigna 2016)
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng->state = x;
  return static_cast<uint32_t>((x * 0x2545F4914F6CDD1Dull) >> 32);
}

bool drawable(float v) { return !std::isnan(v) && v != -std::numeric_limits<float>::infinity(); }
bool drawable(int32_t) { return true; }

// real(v) - real(max) for a logit v below the maximum: negative, or -inf
// when it overflows. Integer logits subtract before they scale, so that
// neither scale * v overflowing float nor a contracted multiply-add (which
// would not cancel the maximum's own rounding) can make it NaN or positive.
float below(float v, float max, float) { return v - max; }
float below(int32_t v, int32_t max, float scale) {
  return scale * static_cast<float>(static_cast<int64_t>(v) - static_cast<int64_t>(max));
}

// A logit as an unsigned key in the logits' order: key(a) < key(b) iff a < b
// (floats: -0 and +0 one key, as they compare equal; NaN is never asked).
uint32_t order_key(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  if (bits == 0x80000000u) bits = 0;  // -0: +0's key
  return (bits >> 31) != 0 ? ~bits : bits | 0x80000000u;
}
uint32_t order_key(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }

// The key of the smallest logit among the k largest drawable ones (ties
// counted together): every logit whose key is >= it is a candidate; 0 (every
// drawable logit) when fewer than k are drawable. The largest key t with at
// least k drawable keys >= t, by bisection over the 32-bit keys: 32 passes
// over the logits whatever k (O(32 n), no scratch; one pass per distinct
// value down to the k-th would be O(k n), hours for k near a large n).
template <class T>
uint32_t top_k_threshold(const T* logits, int32_t n, int32_t k) {
  uint64_t lo = 0, hi = uint64_t{1} << 32;  // count(lo) >= k (or lo = 0), count(hi) < k
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    int32_t count = 0;
    for (int32_t i = 0; i < n; ++i) count += drawable(logits[i]) && order_key(logits[i]) >= mid ? 1 : 0;
    if (count >= k) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return static_cast<uint32_t>(lo);
}

template <class T>
Status sample_impl(const T* logits, int32_t n, float scale, const Sampler& s, Rng* rng, int32_t* token) {
  if (logits == nullptr || token == nullptr) return Status::kNullArgument;
  if (n <= 0) return Status::kBadShape;
  if (!(s.temperature >= 0.0f) || !std::isfinite(s.temperature) || s.top_k < 0 || s.top_k > n) {
    return Status::kBadSampler;
  }
  // Greedy, and the max for the draw: the first drawable maximum.
  int32_t arg = -1;
  for (int32_t i = 0; i < n; ++i) {
    if (drawable(logits[i]) && (arg < 0 || logits[i] > logits[arg])) arg = i;
  }
  if (arg < 0) return Status::kBadSampler;
  if (s.temperature == 0.0f) {
    *token = arg;
    return Status::kOk;
  }
  if (rng == nullptr) return Status::kNullArgument;
  const bool restrict = s.top_k > 0 && s.top_k < n;
  const uint32_t threshold = restrict ? top_k_threshold(logits, n, s.top_k) : 0;
  const auto candidate = [&](int32_t i) {
    return drawable(logits[i]) && (!restrict || order_key(logits[i]) >= threshold);
  };
  // exp((real_i - real_max) / T), never NaN: a logit equal to the maximum
  // weighs exactly 1 (also a +inf one, and whatever T), every other one
  // exp(a non-positive exponent or -inf). 1/T may be +inf (T subnormal): only
  // the maxima are then drawn, the T -> 0 limit.
  const T max = logits[arg];
  const float inv_t = 1.0f / s.temperature;
  const auto weight = [&](int32_t i) {
    return logits[i] == max ? 1.0f : std::exp(below(logits[i], max, scale) * inv_t);
  };
  float sum = 0.0f;
  for (int32_t i = 0; i < n; ++i) {
    if (candidate(i)) sum += weight(i);
  }
  // u in [0, 1) on a 24-bit grid, then the first candidate whose running sum passes u * sum.
  const float u = static_cast<float>(next_bits(rng) >> 8) * (1.0f / 16777216.0f);
  const float target = u * sum;
  float acc = 0.0f;
  int32_t last = arg;
  for (int32_t i = 0; i < n; ++i) {
    if (!candidate(i)) continue;
    acc += weight(i);
    last = i;
    if (acc > target) break;
  }
  *token = last;
  return Status::kOk;
}

}  // namespace

Status rng_seed(uint64_t seed, Rng* rng) {
  if (rng == nullptr) return Status::kNullArgument;
  // splitmix64 of the seed: nearby seeds give unrelated streams, and the state is never 0.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  rng->state = z != 0 ? z : 0x9E3779B97F4A7C15ull;
  return Status::kOk;
}

Status rng_next(Rng* rng, uint32_t* out) {
  if (rng == nullptr || out == nullptr) return Status::kNullArgument;
  *out = next_bits(rng);
  return Status::kOk;
}

Status sample(const float* logits, int32_t n, const Sampler& sampler, Rng* rng, int32_t* token) {
  return sample_impl(logits, n, 1.0f, sampler, rng, token);
}

Status sample_s32(const int32_t* logits, int32_t n, float scale, const Sampler& sampler, Rng* rng,
                  int32_t* token) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) return Status::kBadQuantParams;
  return sample_impl(logits, n, scale, sampler, rng, token);
}

}  // namespace attn
