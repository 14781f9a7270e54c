// kernels/fixed_blocks.h: the block walk shared by the SIMD integer kernels
// (kernels/x86/avx2_fixed.h, kernels/neon/neon_fixed.h, and the int16 rows of
// kernels/x86/dot_rows_avx2.h and kernels/neon/dot_rows_neon.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "attn/kernels_fixed.h"
#include "kernels/fixed_point.h"
#include "kernels/stream.h"

namespace attn {
namespace detail {

// Walks an [M, N] output in MR x 4 blocks (tails by smaller blocks): for each,
// block.run<mr, nr>(i0, j0, out) fills out[mr][nr], then epi(i0, j0, out, mr, nr).
template <int MR, class T, class Block, class Epi>
inline void for_blocks(int32_t M, int32_t N, const Block& block, const Epi& epi) {
  T out[size_t{MR}][4];
  int32_t i = 0;
  for (; i + MR <= M; i += MR) {
    int32_t j = 0;
    for (; j + 4 <= N; j += 4) {
      block.template run<MR, 4>(i, j, out);
      epi(i, j, out, MR, 4);
    }
    if (N - j == 3) block.template run<MR, 3>(i, j, out);
    if (N - j == 2) block.template run<MR, 2>(i, j, out);
    if (N - j == 1) block.template run<MR, 1>(i, j, out);
    if (N - j > 0) epi(i, j, out, MR, N - j);
  }
  for (; i < M; ++i) {
    int32_t j = 0;
    for (; j + 4 <= N; j += 4) {
      block.template run<1, 4>(i, j, out);
      epi(i, j, out, 1, 4);
    }
    if (N - j == 3) block.template run<1, 3>(i, j, out);
    if (N - j == 2) block.template run<1, 2>(i, j, out);
    if (N - j == 1) block.template run<1, 1>(i, j, out);
    if (N - j > 0) epi(i, j, out, 1, N - j);
  }
}

// The same outputs with w read one row at a time, front to back, for weights
// that come from memory (kernels/stream.h): for each group of 4 rows of w,
// each row's dot products against MR rows of x in turn (a block of one row
// of w), gathered into the group's MR x 4 outputs for one epilogue call, as
// for_blocks makes them. Integer sums: the same values.
template <int MR, class T, class Block, class Epi>
inline void for_blocks_by_row(int32_t M, int32_t N, const Block& block, const Epi& epi) {
  T out[size_t{MR}][4], one[size_t{MR}][4];
  const auto group = [&](auto mr, int32_t i, int32_t j, int nr) {
    constexpr int kMr = decltype(mr)::value;
    for (int q = 0; q < nr; ++q) {
      block.template run<kMr, 1>(i, j + q, one);
      for (int r = 0; r < kMr; ++r) out[r][q] = one[r][0];
    }
    epi(i, j, out, kMr, nr);
  };
  for (int32_t j = 0; j < N; j += 4) {
    const int nr = N - j < 4 ? static_cast<int>(N - j) : 4;
    int32_t i = 0;
    for (; i + MR <= M; i += MR) group(std::integral_constant<int, MR>(), i, j, nr);
    for (; i < M; ++i) group(std::integral_constant<int, 1>(), i, j, nr);
  }
}

// A linear's walk over x [M, K] against int8 weights w [N, K]: for_blocks,
// or for_blocks_by_row where a decode step streams w from memory.
template <int MR, class T, class Block, class Epi>
inline void for_weight_blocks(int32_t M, int32_t N, int32_t K, const Block& block, const Epi& epi) {
  if (stream_weights(M, N, K, sizeof(int8_t))) {
    for_blocks_by_row<MR, T>(M, N, block, epi);
  } else {
    for_blocks<MR, T>(M, N, block, epi);
  }
}

// linear_s16 over a SIMD dot block (dots.run<mr, nr> gives the int64 sums
// x[i] . w[j] of a block): bias, the 16x8 requantization and the clamp of
// linear_s16_ref on each block, so every variant stores the ref's bytes.
template <class Dots>
inline void linear_s16_blocks(const Dots& dots, int32_t M, int32_t N, const int64_t* bias,
                              const LinearS16Params& p, MatS16 y) {
  for_blocks<2, int64_t>(M, N, dots, [&](int32_t i0, int32_t j0, int64_t(*out)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i) {
      int16_t* yr = y.row(i0 + i) + j0;  // [nr]
      for (int j = 0; j < nr; ++j) {
        const int32_t n = j0 + j;
        const int64_t acc = (bias != nullptr ? bias[n] : 0) + out[i][j];
        const int32_t v = fp::multiply_by_quantized_multiplier_s64(acc, p.multiplier[n], p.shift[n]);
        yr[j] = static_cast<int16_t>(fp::clamp_i32(v, p.act_min, p.act_max));
      }
    }
  });
}

// The int16 rows of the int32-output linears (W2 into the residual, the LM
// head) over a SIMD dot block: acc = bias[n] + x[m] . w[n] in int64 (ref's
// sums, exact) handed to out(m, n, acc).
template <class Dots, class Out>
inline void dot_rows_s16_blocks(const Dots& dots, int32_t M, int32_t N, const int64_t* bias, Out& out) {
  for_blocks<2, int64_t>(M, N, dots, [&](int32_t i0, int32_t j0, int64_t(*acc)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nr; ++j) out(i0 + i, j0 + j, (bias != nullptr ? bias[j0 + j] : 0) + acc[i][j]);
  });
}

}  // namespace detail
}  // namespace attn
