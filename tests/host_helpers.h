// host_helpers.h: helpers of the host tests and of the benchmark programs
// (tools/ programs have tests/ on their include path): aligned arena
// buffers, normal random vectors, f32 weights over vectors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "attn/arena.h"
#include "attn/attention.h"

// `bytes` usable bytes at an ATTN_ARENA_ALIGN-aligned address.
struct AlignedBuffer {
  std::vector<unsigned char> raw;
  unsigned char* data = nullptr;
  size_t size = 0;  // bytes
  explicit AlignedBuffer(size_t bytes) : raw(bytes + ATTN_ARENA_ALIGN), size(bytes) {
    const auto mis = reinterpret_cast<uintptr_t>(raw.data()) % ATTN_ARENA_ALIGN;
    data = raw.data() + (ATTN_ARENA_ALIGN - mis) % ATTN_ARENA_ALIGN;
  }
};

// The median of v.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// n values uniform in [-1, 1), from the generator seeded with `seed`.
inline std::vector<float> uniform_values(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

// n values from N(0, scale^2).
inline std::vector<float> random_normal(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// WeightsF32 over the four weight matrices (no biases).
inline attn::WeightsF32 weights_f32(const std::vector<float>& wq, const std::vector<float>& wk,
                                    const std::vector<float>& wv, const std::vector<float>& wo) {
  attn::WeightsF32 w;
  w.wq = wq.data();
  w.wk = wk.data();
  w.wv = wv.data();
  w.wo = wo.data();
  return w;
}
