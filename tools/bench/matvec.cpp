// attn_bench_matvec: the one-row products of decoding a token (M = 1) at the
// stories15M matrices (dim 288, FFN 768, vocab 32000), float32 and int8,
// against the machine's measured single-core read bandwidth.
//
//   attn_bench_matvec [--samples N] [--pool-mib N]   (defaults 15, 256)
//
// For each kernel variant this CPU runs (the kernel table's rows) and each
// weight matrix [N, K]:
//   hot   the same matrix every call (cache-resident when it fits): the
//         kernel's arithmetic speed.
//   cold  each call on the next of copies of the matrix filling a pool of
//         --pool-mib MiB, far past the last-level cache: the weights come
//         from memory, as in a decode step, where the model's other matrices
//         (61 MB in f32) pass between two reads of one of them.
// µs: median over samples of thread CPU time (cold: one sample is a pass over
// the whole pool). GB/s: weight bytes (N K times the element size) per
// second. bw%: cold GB/s over the read bandwidth, measured first as a plain
// sum of 64-bit words over a pool of the same size.
// The ops: linear_f32 (attention projections, FFN, the f32 head),
// linear_s8 (the s8 attention projections and the FFN's W1 / W3),
// logits_s8 (the s8 LM head; the FFN's W2 into the residual runs the same
// rows, kLinearResidualS8).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench/cpu_time.h"
#include "kernels/kernel_table.h"

namespace {

int g_samples = 15;
size_t g_pool_bytes = size_t{256} << 20;

struct Shape {
  const char* name;
  int32_t N, K;
};
constexpr Shape kShapes[] = {
    {"wq/wk/wv/wo", 288, 288}, {"w1/w3", 768, 288}, {"w2", 288, 768}, {"head", 32000, 288}};

// Median of samples of f's thread CPU time, in µs.
template <class F>
double median_samples_us(const F& f) {
  std::vector<double> s;
  f();
  for (int i = 0; i < g_samples; ++i) {
    const double t0 = attn_bench::cpu_us();
    f();
    s.push_back(attn_bench::cpu_us() - t0);
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// GB/s of a plain read: the sum of the pool's 64-bit words (8 independent
// sums, which the compiler vectorizes), median of the samples.
double read_bandwidth_gbs() {
  const size_t n = g_pool_bytes / sizeof(uint64_t);
  std::vector<uint64_t> buf(n);
  for (size_t i = 0; i < n; ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;
  volatile uint64_t sink = 0;
  const double us = median_samples_us([&] {
    uint64_t s[8] = {};
    for (size_t i = 0; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) s[j] += buf[i + static_cast<size_t>(j)];
    sink = sink + (s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4] ^ s[5] ^ s[6] ^ s[7]);
  });
  return static_cast<double>(n * sizeof(uint64_t)) / us * 1e-3;
}

// One matrix of `bytes` as `copies` copies in a pool (one copy: hot).
template <typename T>
std::vector<T> pool_of(const std::vector<T>& one, size_t copies) {
  std::vector<T> p(one.size() * copies);
  for (size_t c = 0; c < copies; ++c)
    std::memcpy(p.data() + c * one.size(), one.data(), one.size() * sizeof(T));
  return p;
}

void row(const char* op, const char* isa, const Shape& s, size_t elem, double hot, double cold, double bw) {
  const double bytes = static_cast<double>(s.N) * s.K * static_cast<double>(elem);
  std::printf("%-10s %-11s %-12s %6d %4d %9.2f %8.1f %9.2f %8.1f %6.0f%%\n", op, isa, s.name, s.N, s.K, hot,
              bytes / hot * 1e-3, cold, bytes / cold * 1e-3, bytes / cold * 1e-3 / bw * 100.0);
}

// hot and cold µs of call(w) on one matrix of n elements of T.
template <typename T, class Call>
void time_both(const std::vector<T>& w, const Call& call, double* hot, double* cold) {
  *hot = attn_bench::median_cpu_us([&] { call(w.data()); }, g_samples);
  const size_t copies = (g_pool_bytes + w.size() * sizeof(T) - 1) / (w.size() * sizeof(T));
  const std::vector<T> pool = pool_of(w, copies);
  *cold = median_samples_us([&] {
            for (size_t c = 0; c < copies; ++c) call(pool.data() + c * w.size());
          }) /
          static_cast<double>(copies);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
      g_samples = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--pool-mib") == 0 && i + 1 < argc) {
      g_pool_bytes = static_cast<size_t>(std::atoi(argv[++i])) << 20;
    } else {
      std::fprintf(stderr, "usage: %s [--samples N] [--pool-mib N]\n", argv[0]);
      return 2;
    }
  }
  if (g_samples < 1 || g_pool_bytes == 0) return 2;
  using namespace attn;
  using namespace attn::detail;
  const double bw = read_bandwidth_gbs();
  std::printf("# single-core read bandwidth: %.1f GB/s (sum of 64-bit words over %zu MiB, median of %d)\n",
              bw, g_pool_bytes >> 20, g_samples);
  std::printf("# M = 1; hot: one matrix, cold: copies over %zu MiB; thread CPU time, median of %d\n",
              g_pool_bytes >> 20, g_samples);
  std::printf("%-10s %-11s %-12s %6s %4s %9s %8s %9s %8s %7s\n", "op", "isa", "matrix", "N", "K", "hot_us",
              "hot_GB/s", "cold_us", "cold_GB/s", "bw%");
  std::mt19937 rng(1);
  for (const Shape& s : kShapes) {
    const size_t n = static_cast<size_t>(s.N) * static_cast<size_t>(s.K);
#if ATTN_WITH_F32
    {
      std::normal_distribution<float> dist(0.0f, 1.0f);
      std::vector<float> w(n), x(static_cast<size_t>(s.K)), b(static_cast<size_t>(s.N)), y(b.size());
      for (auto& v : w) v = dist(rng);
      for (auto& v : x) v = dist(rng);
      for (auto& v : b) v = dist(rng);
      for (const auto& k : kLinearF32) {
        if (!row_runs(k)) continue;
        double hot = 0, cold = 0;
        time_both(
            w,
            [&](const float* wp) {
              k.fn(matrix(x.data(), 1, s.K), matrix(wp, s.N, s.K), b.data(), matrix(y.data(), 1, s.N));
            },
            &hot, &cold);
        row("linear_f32", k.isa, s, sizeof(float), hot, cold, bw);
      }
    }
#endif
#if ATTN_WITH_S8
    {
      std::uniform_int_distribution<int> d8(-128, 127);
      std::vector<int8_t> w(n), x(static_cast<size_t>(s.K)), y(static_cast<size_t>(s.N));
      for (auto& v : w) v = static_cast<int8_t>(d8(rng));
      for (auto& v : x) v = static_cast<int8_t>(d8(rng));
      std::vector<int32_t> bias(static_cast<size_t>(s.N)), mult(bias.size(), 1 << 30), shift(bias.size(), -8);
      std::vector<int32_t> out(bias.size());
      for (auto& v : bias) v = d8(rng) * 64;
      LinearS8Params p;
      p.input_zero_point = 3;
      p.multiplier = mult.data();
      p.shift = shift.data();
      for (const auto& k : kLinearS8) {
        if (!row_runs(k)) continue;
        double hot = 0, cold = 0;
        time_both(
            w,
            [&](const int8_t* wp) {
              k.fn(matrix(x.data(), 1, s.K), matrix(wp, s.N, s.K), bias.data(), p, matrix(y.data(), 1, s.N));
            },
            &hot, &cold);
        row("linear_s8", k.isa, s, 1, hot, cold, bw);
      }
      for (const auto& k : kLogitsS8) {
        if (!row_runs(k)) continue;
        double hot = 0, cold = 0;
        time_both(
            w,
            [&](const int8_t* wp) {
              k.fn(matrix(x.data(), 1, s.K), matrix(wp, s.N, s.K), bias.data(), mult.data(), shift.data(),
                   matrix(out.data(), 1, s.N));
            },
            &hot, &cold);
        row("logits_s8", k.isa, s, 1, hot, cold, bw);
      }
    }
#endif
  }
  return 0;
}
