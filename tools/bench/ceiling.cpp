// ceiling: how much faster int8 can be than float32 on this x86 CPU, with
// exact int8 arithmetic, measured on our own kernels (the goal is s8 at 2x
// our f32; this program shows where that stops).
//
// 1. Micro-kernel ceilings: the register blocks of our AVX2 GEMMs on operands
//    that stay in L1, no packing, no epilogue work per element:
//    - f32: avx2::nn_block<6, 2>, 6 rows x 16 columns, one FMA = 8 MACs;
//    - s8:  avx2i::panel_rows_s8<6>, 6 rows x 16 channels, one vpmaddwd =
//      16 MACs plus one vpaddd to accumulate (exact: vpmaddubsw saturates).
//    Their ratio bounds s8/f32 for the products: an exact int8 MAC is
//    cheaper than an f32 one only by what madd + add gain over FMA on this
//    core's vector pipes.
// 2. Our dispatched projections (linear_f32, linear_s8) on a forward's tile
//    (48 rows, K = N = E): GMAC/s and the share of the ceiling they reach.
//
//   attn_bench_ceiling [E ...]     (default 128 256)
//
// Medians of thread CPU time (bench/cpu_time.h); the ceilings keep the
// lowest of 5 interleaved rounds, the projections the lowest of 3. Only AVX2 builds have the
// micro-kernels; elsewhere the program says so and exits 0.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/cpu_time.h"
#include "bench/kernel_names.h"
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "attn/kernels_fixed.h"
#include "kernels/kernel_table.h"
#include "kernels/x86/avx2_f32.h"
#include "kernels/x86/avx2_fixed.h"

namespace {

namespace d = attn::detail;

constexpr int32_t kDepth = 256;  // K of the micro-kernel runs: 16 KiB f32 panel, 8 KiB s8 panel

// Keeps the s8 micro-kernel's sums alive.
struct SinkEpi {
  __m256i acc = _mm256_setzero_si256();
  void out(int32_t, const __m256i (&a)[2]) { acc = _mm256_add_epi32(acc, _mm256_xor_si256(a[0], a[1])); }
};

// GMAC/s of one call doing `macs` multiply-adds in `us` microseconds.
double gmacs(double macs, double us) { return macs / us * 1e-3; }

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> dims;
  for (int i = 1; i < argc; ++i) dims.push_back(std::atoi(argv[i]));
  if (dims.empty()) dims = {128, 256};
  std::mt19937 rng(7);

  // 1. Micro-kernels: 6 x 16 outputs over kDepth, operands in L1.
  alignas(32) static float af[6 * kDepth], bf[kDepth * 16], cf[6 * 16];
  std::uniform_real_distribution<float> uf(-1.0f, 1.0f);
  for (float& v : af) v = uf(rng);
  for (float& v : bf) v = uf(rng);
  const d::NnArgs g{af, kDepth, bf, 16, kDepth, 1.0f, cf, 16};

  alignas(32) static int16_t xw[6 * kDepth];                        // [6][kDepth] x' as int16
  alignas(32) static int32_t panel[kDepth / 2 * d::avx2i::kPanel];  // [kDepth / 2][16] int16 pairs
  for (int16_t& v : xw) v = static_cast<int16_t>(static_cast<int>(rng() % 511) - 255);
  for (int32_t& v : panel) v = static_cast<int32_t>(rng() & 0x00FF00FFu) - 0x00800080;
  SinkEpi sink;
  // kRounds rounds, the two blocks interleaved, each keeping its lowest
  // median: other tenants of a shared core only ever add time.
  constexpr int kRounds = 5;
  double f32_us = 1e300, s8_us = 1e300;
  for (int r = 0; r < kRounds; ++r) {
    f32_us = std::min(f32_us,
                      attn_bench::median_cpu_us([&] { d::avx2::nn_block<6, 2, false>(g, 0, 0, __m256i()); }));
    s8_us = std::min(s8_us, attn_bench::median_cpu_us(
                                [&] { d::avx2i::panel_rows_s8<6>(xw, kDepth, kDepth / 2, panel, 0, sink); }));
  }
  const double macs = 6.0 * 16 * kDepth;
  const double f32_peak = gmacs(macs, f32_us), s8_peak = gmacs(macs, s8_us);
  std::printf("# kernels %s (with avx512vnni, linear_s8 is vpdpbusd, not the AVX2 block)\n",
              attn_bench::all_kernel_names().c_str());
  std::printf(
      "# micro-kernel ceilings, 6 x 16 outputs, K = %d, operands in L1 (GMAC/s, lowest thread CPU median of "
      "%d)\n",
      kDepth, kRounds);
  std::printf("ceiling f32_fma=%.1f s8_madd=%.1f s8/f32=%.2f\n", f32_peak, s8_peak, s8_peak / f32_peak);

  // 2. Our dispatched projections on a forward tile: 48 rows, K = N = E.
  std::printf(
      "# projections (dispatched linear_f32 / linear_s8), M = 48 rows, K = N = E: GMAC/s, %% of ceiling\n");
  std::printf("%6s %10s %8s %10s %8s %8s\n", "E", "f32_GMAC", "%ceil", "s8_GMAC", "%ceil", "s8/f32");
  for (const int E : dims) {
    const int M = 48;
    std::vector<float> x(size_t(M) * E), w(size_t(E) * E), b(static_cast<size_t>(E)), y(size_t(M) * E);
    for (float& v : x) v = uf(rng);
    for (float& v : w) v = uf(rng);
    for (float& v : b) v = uf(rng);
    std::vector<int8_t> x8(x.size()), w8(w.size()), y8(y.size());
    for (int8_t& v : x8) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    for (int8_t& v : w8) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    std::vector<int32_t> b32(size_t(E), 1000), mult(size_t(E), 1 << 30), shift(size_t(E), -10);
    attn::LinearS8Params p;
    p.multiplier = mult.data();
    p.shift = shift.data();
    double tf = 1e300, t8 = 1e300;
    for (int r = 0; r < 3; ++r) {
      tf = std::min(tf, attn_bench::median_cpu_us([&] {
                      d::best(d::kLinearF32)(attn::ConstMatF32{x.data(), M, E, E},
                                             attn::ConstMatF32{w.data(), E, E, E}, b.data(),
                                             attn::MatF32{y.data(), M, E, E});
                    }));
      t8 = std::min(t8, attn_bench::median_cpu_us([&] {
                      d::best(d::kLinearS8)(attn::ConstMatS8{x8.data(), M, E, E},
                                            attn::ConstMatS8{w8.data(), E, E, E}, b32.data(), p,
                                            attn::MatS8{y8.data(), M, E, E});
                    }));
    }
    const double m = double(M) * E * E, gf = gmacs(m, tf), g8 = gmacs(m, t8);
    std::printf("%6d %10.1f %7.0f%% %10.1f %7.0f%% %8.2f\n", E, gf, 100 * gf / f32_peak, g8,
                100 * g8 / s8_peak, tf / t8);
  }
  std::printf("# sink %d %g\n", _mm256_extract_epi32(sink.acc, 0), double(cf[0]));
  return 0;
}

#else
int main() {
  std::printf("# ceiling: no AVX2 micro-kernels in this build (x86-64 with -mavx2 -mfma only)\n");
  return 0;
}
#endif
