// linear, int8, x86-64 AVX2: linear_s8_ref's arithmetic, bit-exact.
// acc[m, n] = bias[n] + sum_k (x[m, k] - zx) w[n, k] by avx2i::dot_block_s8
// (2 rows of x by 4 rows of w per block), then the same scalar requantization.
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include "internal/avx2_fixed.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

struct Dots {
  ConstMatS8 x, w;
  int32_t zx;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    avx2i::dot_block_s8<MR, NR>(x.row(i), x.stride, zx, w.row(j), w.stride, 0, x.cols, out);
  }
};

}  // namespace

void linear_s8_avx2(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  const Dots dots{x, w, p.input_zero_point};
  for_blocks<2, int32_t>(x.rows, w.rows, dots, [&](int32_t i0, int32_t j0, int32_t(*out)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i) {
      int8_t* yr = y.row(i0 + i) + j0;  // [nr]
      for (int j = 0; j < nr; ++j) {
        const int32_t n = j0 + j;
        const int32_t acc = fp::wrap_add(bias != nullptr ? bias[n] : 0, out[i][j]);
        const int32_t v =
            p.output_zero_point + fp::multiply_by_quantized_multiplier(acc, p.multiplier[n], p.shift[n]);
        yr[j] = static_cast<int8_t>(fp::clamp_i32(v, p.act_min, p.act_max));
      }
    }
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
