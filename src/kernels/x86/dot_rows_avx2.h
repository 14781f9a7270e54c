// x86/dot_rows_avx2.h: Out32DotOps<Isa::kAvx2>, the rows of the int32-output linears (W2 into the
// residual, the LM head), x86-64 AVX2, int8 and int16: acc[m, n] = bias[n] + sum_k x[m, k] w[n, k]
// handed to out(m, n, acc); the contract is in kernels/kernels_model_fixed.h
// (the W2 section). Include only under ATTN_HAVE_AVX2.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/kernels_fixed.h"
#include "kernels/arch.h"
#include "kernels/fixed_blocks.h"
#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace avx2i {

// out(m, n, acc) for every output. From kDotRowsMinRows rows on (K in
// [1, kMaxK]): gemm_s8 (w packed per call into 16-channel panels, a madd
// outer product of 6 rows by 16 channels, each lane ref's int32 sum mod 2^32);
// fewer rows (a decode step, the head's last row) or a deeper K: row-by-row
// dot blocks of 2 rows by 4 channels (dot_block_s8, wrapping int32 sums), by
// 1 channel where a decode step streams w from memory (kernels/stream.h).
constexpr int32_t kDotRowsMinRows = 4;

template <typename Out>
struct DotRowsEpi {
  const int32_t* bias;
  Out& o;
  int32_t j0 = 0, n = 0;
  void panel(int32_t j, int32_t cols) { j0 = j, n = cols; }
  void out(int32_t m, const __m256i (&acc)[2]) {
    alignas(32) int32_t t[kPanel];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), acc[0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(t + 8), acc[1]);
    for (int32_t c = 0; c < n; ++c) o(m, j0 + c, fp::wrap_add(bias != nullptr ? bias[j0 + c] : 0, t[c]));
  }
};

struct DotsS8 {
  ConstMatS8 x, w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    dot_block_s8<MR, NR, false, false>(x.row(i), x.stride, 0, w.row(j), w.stride, 0, x.cols, out);
  }
};

struct DotsS16 {
  ConstMatS16 x;
  ConstMatS8 w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int64_t (*out)[4]) const {
    dot_block_s16x8<MR, NR>(x.row(i), x.stride, w.row(j), w.stride, x.cols, out);
  }
};

}  // namespace avx2i

// Out32Rows' rows (kernels/model_fixed_rows.h).
template <>
struct Out32DotOps<Isa::kAvx2> {
  template <typename Out>
  static void rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
    using namespace avx2i;
    if (x.rows >= kDotRowsMinRows && x.cols >= 1 && x.cols <= kMaxK) {
      DotRowsEpi<Out> epi{bias, out};
      gemm_s8(x.data, x.stride, x.rows, 0, w.data, w.stride, w.rows, 0, x.cols, epi);
      return;
    }
    for_weight_blocks<2, int32_t>(
        x.rows, w.rows, x.cols, DotsS8{x, w}, [&](int32_t i0, int32_t j0, int32_t(*acc)[4], int mr, int nr) {
          for (int i = 0; i < mr; ++i)
            for (int j = 0; j < nr; ++j)
              out(i0 + i, j0 + j, fp::wrap_add(bias != nullptr ? bias[j0 + j] : 0, acc[i][j]));
        });
  }
  // acc[m, n] = bias[n] + sum_k x[m, k] w[n, k] in int64 (ref's sums, exact).
  template <typename Out>
  static void rows(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, Out out) {
    dot_rows_s16_blocks(avx2i::DotsS16{x, w}, x.rows, w.rows, bias, out);
  }
};

}  // namespace detail
}  // namespace attn
