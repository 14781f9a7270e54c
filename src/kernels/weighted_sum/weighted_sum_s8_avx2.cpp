// weighted sum, int8 values, Q0.15 probabilities, x86-64 AVX2:
// weighted_sum_s8_ref's arithmetic, bit-exact. 4 rows x 16 columns per block
// by avx2i::pv_block (int32 sums: ref bounds them, see its comment), value
// columns past the last multiple of 16 and the requantization scalar.
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include "internal/avx2_fixed.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <int MR>
void rows_block(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o,
                int32_t t0) {
  const __m256i vzv = _mm256_set1_epi16(static_cast<int16_t>(zv));
  int32_t out[size_t{MR}][16];
  const avx2i::Requant rq = avx2i::Requant::of(_mm256_set1_epi32(m), _mm256_set1_epi32(sh));
  const __m256i vzo = _mm256_set1_epi32(zo), lo = _mm256_set1_epi32(-128), hi = _mm256_set1_epi32(127);
  int32_t c0 = 0;
  for (; c0 + 16 <= v.cols; c0 += 16) {
    const auto load = [&](int32_t j) { return avx2i::load16_s8(v.row(j) + c0, vzv); };
    avx2i::pv_block<MR>(p.row(t0), p.stride, p.cols, load, out);
    for (int i = 0; i < MR; ++i) {
      int8_t* orow = o.row(t0 + i) + c0;  // [16]
      for (int h = 0; h < 2; ++h) {
        const __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out[i] + 8 * h));
        avx2i::store8_s8(orow + 8 * h, _mm256_add_epi32(vzo, avx2i::mbqm(acc, rq.mult, rq.left, rq.right)),
                         lo, hi);
      }
    }
  }
  if (c0 < v.cols) {
    weighted_sum_s8_ref(p.rows_slice(t0, MR), v.cols_slice(c0, v.cols - c0), zv, m, sh, zo,
                        o.rows_slice(t0, MR).cols_slice(c0, v.cols - c0));
  }
}

}  // namespace

void weighted_sum_s8_avx2(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                          MatS8 o) {
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) rows_block<4>(p, v, zv, m, sh, zo, o, t);
  for (; t < p.rows; ++t) rows_block<1>(p, v, zv, m, sh, zo, o, t);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
