// internal/fixed_blocks.h: the block walk shared by the SIMD integer kernels
// (internal/avx2_fixed.h, internal/neon_fixed.h).
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace detail
}  // namespace attn
