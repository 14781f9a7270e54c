// neon/dot_rows_neon.h: Out32DotOps<Isa::kNeon>, the rows of the int32-output linears (W2 into the
// residual, the LM head), NEON (AArch64, ARMv7-A), int8 and int16: acc[m, n] = bias[n] + sum_k x[m, k] w[n,
// k] handed to out(m, n, acc); the contract is in kernels/kernels_model_fixed.h (the W2 section). Include
// only under ATTN_HAVE_NEON.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/kernels_fixed.h"
#include "kernels/arch.h"
#include "kernels/fixed_blocks.h"
#include "kernels/kernels_model_fixed.h"
#include "kernels/neon/neon_fixed.h"

namespace attn {
namespace detail {
namespace neonfx {

// out(m, n, acc) for every output: dot blocks of 2 rows by 4 channels
// (dot_block_s8: SMLAL, or SDOT where the target has it; wrapping int32); by 1 channel where a decode
// step streams w from memory (kernels/stream.h).
struct DotsS8 {
  ConstMatS8 x, w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    dot_block_s8<MR, NR>(x.row(i), x.stride, 0, w.row(j), w.stride, 0, x.cols, out);
  }
};

}  // namespace neonfx

// Out32Rows' rows (kernels/model_fixed_rows.h).
template <>
struct Out32DotOps<Isa::kNeon> {
  template <typename Out>
  static void rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
    using namespace neonfx;
    for_weight_blocks<2, int32_t>(
        x.rows, w.rows, x.cols, DotsS8{x, w}, [&](int32_t i0, int32_t j0, int32_t(*acc)[4], int mr, int nr) {
          for (int i = 0; i < mr; ++i)
            for (int j = 0; j < nr; ++j)
              out(i0 + i, j0 + j, wadd(bias != nullptr ? bias[j0 + j] : 0, acc[i][j]));
        });
  }
  // acc[m, n] = bias[n] + sum_k x[m, k] w[n, k] in int64 (dot_block_s16x8:
  // int32 lanes exact over 256-deep chunks, then int64; ref's sums, exact).
  template <typename Out>
  static void rows(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, Out out) {
    dot_rows_s16_blocks(neonfx::DotsLinearS16{x, w}, x.rows, w.rows, bias, out);
  }
};

}  // namespace detail
}  // namespace attn
