// kernels_f32: GFLOP/s of each float32 kernel variant compiled for this target
// (ref and the dispatched SIMD set) on the shapes forward() gives them for a
// standard attention shape. Thread CPU time, median of samples.
//
//   attn_bench_kernels_f32 [L E H T]      (default 256 256 8 48)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <random>
#include <vector>

#include "bench/cpu_time.h"
#include "kernels/arch.h"
#include "kernels/kernel_table.h"

namespace {

double median_us(const std::function<void()>& f) { return attn_bench::median_cpu_us(f); }

}  // namespace

int main(int argc, char** argv) {
  int L = 256, E = 256, H = 8, T = 48;
  if (argc == 5)
    L = std::atoi(argv[1]), E = std::atoi(argv[2]), H = std::atoi(argv[3]), T = std::atoi(argv[4]);
  const int S = L, D = E, hd = D / H;
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto vec = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
  };
  auto x = vec(size_t(L) * E), w = vec(size_t(D) * E), b = vec(size_t(D)), y = vec(size_t(L) * D);
  auto kk = vec(size_t(S) * D), q = vec(size_t(T) * D), s = vec(size_t(T) * S), v = vec(size_t(S) * D),
       o = vec(size_t(T) * D);
  using namespace attn;
  using namespace attn::detail;
  struct Set {
    const char* name;
    LinearF32Fn linear;
    ScoresF32Fn scores;
    SoftmaxRowF32Fn softmax;
    WeightedSumF32Fn wsum;
  };
  // Every f32 variant this build has, one set per row of the linear table;
  // an op without a row of that ISA (the AVX-512 tier has a linear only)
  // takes its best row below it: the first one that is not a higher tier.
  const auto pick = [](const auto& table, const char* isa) {
    for (const auto& row : table) {
      if (std::strcmp(row.isa, isa) == 0) return row.fn;
    }
    for (const auto& row : table) {
      if (std::strcmp(row.isa, "avx512vnni") != 0) return row.fn;
    }
    return table[std::size(table) - 1].fn;
  };
  std::vector<Set> sets;
  for (const auto& row : kLinearF32) {
    if (!row_runs(row)) {
      std::printf("# %s: SKIPPED, this CPU lacks it\n", row.isa);
      continue;
    }
    sets.push_back({row.isa, row.fn, pick(kScoresF32, row.isa), pick(kSoftmaxRowF32, row.isa),
                    pick(kWeightedSumF32, row.isa)});
  }
  std::printf("# L=%d E=%d H=%d T=%d: GFLOP/s (softmax: ns per row of %d)\n", L, E, H, T, S);
  std::printf("%-8s %12s %12s %12s %12s %12s %12s\n", "set", "linear_L", "linear_T", "scores_T", "scores_1",
              "softmax", "wsum");
  for (const Set& k : sets) {
    const double fl_lin = 2.0 * L * D * E, fl_tile = 2.0 * T * D * E, fl_sc = 2.0 * T * S * hd;
    const double a = median_us(
        [&] { k.linear(matrix(x.data(), L, E), matrix(w.data(), D, E), b.data(), matrix(y.data(), L, D)); });
    const double a2 = median_us(
        [&] { k.linear(matrix(x.data(), T, E), matrix(w.data(), D, E), b.data(), matrix(y.data(), T, D)); });
    // scores of a tile of T query rows, and of one row (decoding), against K [S, hd] (row stride D)
    const double d = median_us([&] {
      k.scores(MatF32{q.data(), T, hd, D}, MatF32{kk.data(), S, hd, D}, 0.1f, matrix(s.data(), T, S));
    });
    const double d1 = median_us([&] {
      k.scores(MatF32{q.data(), 1, hd, D}, MatF32{kk.data(), S, hd, D}, 0.1f, matrix(s.data(), 1, S));
    });
    // softmax rows refilled from a copy of the scores (the copy is timed too)
    const std::vector<float> src = vec(size_t(T) * S);
    const double e = median_us([&] {
      std::memcpy(s.data(), src.data(), src.size() * sizeof(float));
      for (int r = 0; r < T; ++r) k.softmax(s.data() + size_t(r) * S, S);
    });
    const double f = median_us([&] {
      k.wsum(matrix(s.data(), T, S), MatF32{v.data(), S, hd, D}, MatF32{o.data(), T, hd, D});
    });
    std::printf("%-8s %12.2f %12.2f %12.2f %12.2f %12.1f %12.2f\n", k.name, fl_lin / a * 1e-3,
                fl_tile / a2 * 1e-3, fl_sc / d * 1e-3, fl_sc / T / d1 * 1e-3, e / T * 1e3, fl_sc / f * 1e-3);
  }
  return 0;
}
