// linear, int8, x86-64 AVX-512 VNNI: linear_s8_ref's arithmetic, bit-exact.
// avx512i::gemm_s8 gives dot[m, n] = sum_k x[m, k] w[n, k] (vpdpbusd on w
// packed per call, 8 rows x 32 channels per block); then per 16 channels
//   acc = bias[n] + dot[m, n] - zx * sum_k w[n, k]   (= ref's int32 sum, mod 2^32)
// and the 16-lane requantization avx512i::mbqm. K past avx512i::kMaxK, and
// fewer than kMinRows rows of x (a decode step): the AVX2 kernel, whose dot
// products read w as stored. Packing w per call for one row reads it twice,
// 32 rows at a time: from memory that got half the AVX2 dot products' bandwidth
// (6 against 12 GB/s for the stories15M projections, tools/bench/README.md),
// with the same speed in cache.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx512_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMinRows = 4;  // fewer rows: the AVX2 kernel's dot products

struct LinearEpi {
  static constexpr bool kRawSums = false;
  const int32_t* bias;
  const LinearS8Params& p;
  MatS8 y;
  __m512i zx, zo, lo, hi;
  // This panel's channels [j0, j0 + n): per half, bias, requantization and weight-sum lanes.
  int32_t j0 = 0, n = 0;
  __m512i b[2] = {};  // bias - zx * wsum per half
  avx512i::Requant rq[2] = {};

  LinearEpi(const int32_t* bias_, const LinearS8Params& p_, MatS8 y_)
      : bias(bias_),
        p(p_),
        y(y_),
        zx(_mm512_set1_epi32(p_.input_zero_point)),
        zo(_mm512_set1_epi32(p_.output_zero_point)),
        lo(_mm512_set1_epi32(p_.act_min)),
        hi(_mm512_set1_epi32(p_.act_max)) {}

  void panel(int32_t j, int32_t cols, const __m512i* wsum) {
    j0 = j;
    n = cols;
    for (int h = 0; h < 2; ++h) {
      const int32_t c = cols - 16 * h;
      const __mmask16 k = avx512i::mask16(c <= 0 ? 0 : c > 16 ? 16 : c);
      const int32_t off = j + 16 * h;
      const __m512i bh = bias != nullptr ? _mm512_maskz_loadu_epi32(k, bias + off) : _mm512_setzero_si512();
      b[h] = _mm512_sub_epi32(bh, _mm512_mullo_epi32(zx, wsum[h]));
      rq[h] = avx512i::Requant::of(_mm512_maskz_loadu_epi32(k, p.multiplier + off),
                                   _mm512_maskz_loadu_epi32(k, p.shift + off));
    }
  }
  void out(int32_t m, int h, __m512i dot, int32_t /*xsum*/) const {
    const __m512i acc = _mm512_add_epi32(b[h], dot);
    const __m512i v = _mm512_add_epi32(zo, avx512i::mbqm(acc, rq[h]));
    const int32_t c = n - 16 * h;
    avx512i::store16_s8(y.row(m) + j0 + 16 * h, v, lo, hi, c > 16 ? 16 : c);
  }
};

}  // namespace

void linear_s8_avx512vnni(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  if (x.rows < kMinRows || x.cols > avx512i::kMaxK || x.cols <= 0) {
    linear_s8_avx2(x, w, bias, p, y);
    return;
  }
  LinearEpi epi(bias, p, y);
  avx512i::gemm_s8(x.data, x.stride, x.rows, w.data, w.stride, w.rows, x.cols, epi);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
