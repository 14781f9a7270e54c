// linear, int16 x int8, x86-64 AVX2: linear_s16_ref's arithmetic, bit-exact.
// acc[m, n] = bias[n] + sum_k x[m, k] w[n, k] (int64) by avx2i::dot_block_s16x8,
// then the same scalar requantization.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

struct Dots {
  ConstMatS16 x;
  ConstMatS8 w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int64_t (*out)[4]) const {
    avx2i::dot_block_s16x8<MR, NR>(x.row(i), x.stride, w.row(j), w.stride, x.cols, out);
  }
};

}  // namespace

void linear_s16_avx2(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  const Dots dots{x, w};
  linear_s16_blocks(dots, x.rows, w.rows, bias, p, y);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
