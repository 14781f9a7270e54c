// kernels/fixed_blocks.h: the block walk shared by the SIMD integer kernels
// (kernels/x86/avx2_fixed.h, kernels/neon/neon_fixed.h, and the int16 rows of
// kernels/x86/dot_rows_avx2.h and kernels/neon/dot_rows_neon.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/kernels_fixed.h"
#include "kernels/fixed_point.h"

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
