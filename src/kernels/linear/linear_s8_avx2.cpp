// linear, int8, x86-64 AVX2: linear_s8_ref's arithmetic, bit-exact.
// acc[m, n] = bias[n] + sum_k (x[m, k] - zx) w[n, k] by avx2i::dot_block_s8
// (2 rows of x by 4 rows of w per block), then the same scalar requantization.
#include "internal/arch.h"

#include <cstring>

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
    if (zx != 0) {
      avx2i::dot_block_s8<MR, NR, true, false>(x.row(i), x.stride, zx, w.row(j), w.stride, 0, x.cols, out);
    } else {  // the forwards fold the input zero point into the bias
      avx2i::dot_block_s8<MR, NR, false, false>(x.row(i), x.stride, 0, w.row(j), w.stride, 0, x.cols, out);
    }
  }
};

}  // namespace

void linear_s8_avx2(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  const Dots dots{x, w, p.input_zero_point};
  const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
  const __m256i zo = _mm256_set1_epi32(p.output_zero_point);
  for_blocks<2, int32_t>(x.rows, w.rows, dots, [&](int32_t i0, int32_t j0, int32_t(*out)[4], int mr, int nr) {
    if (mr == 2 && nr == 4) {  // 2 rows x 4 channels: one 8-lane requantization
      const auto dup4 = [](const int32_t* v) {
        return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v)));
      };
      const avx2i::Requant rq = avx2i::Requant::of(dup4(p.multiplier + j0), dup4(p.shift + j0));
      __m256i acc =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out[0]));  // out[0][0..4), out[1][0..4)
      if (bias != nullptr) acc = _mm256_add_epi32(acc, dup4(bias + j0));
      const __m256i v = _mm256_add_epi32(zo, avx2i::mbqm(acc, rq.mult, rq.left, rq.right));
      alignas(8) int8_t b[8];
      avx2i::store8_s8(b, v, lo, hi);
      std::memcpy(y.row(i0) + j0, b, 4);
      std::memcpy(y.row(i0 + 1) + j0, b + 4, 4);
      return;
    }
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
