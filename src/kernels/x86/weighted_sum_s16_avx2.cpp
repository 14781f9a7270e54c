// weighted sum, int16 values, Q0.15 probabilities, x86-64 AVX2:
// weighted_sum_s16_ref's arithmetic, bit-exact.
//
// ref sums in int64; here the sums are int32 when that is exact: every
// partial sum (and every madd pair) of row t is at most
// sum_j |p[t, j]| * 2^15 in magnitude, below 2^31 when sum_j |p[t, j]| < 2^16,
// which the softmax's probabilities (sum <= 2^15 + S / 2) always meet. A block
// of rows that does not is left to ref. 4 rows x 16 columns per block
// (avx2i::pv_block); the column tail and the requantization are scalar.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

bool int32_exact(const int16_t* pr, int32_t S) {
  int64_t sum = 0;
  for (int32_t j = 0; j < S; ++j) sum += pr[j] < 0 ? -int32_t{pr[j]} : int32_t{pr[j]};
  return sum < (int64_t{1} << 16);
}

template <int MR>
void rows_block(ConstMatS16 p, ConstMatS16 v, int32_t m, int32_t sh, MatS16 o, int32_t t0) {
  bool exact = true;
  for (int i = 0; i < MR; ++i) exact = exact && int32_exact(p.row(t0 + i), p.cols);
  if (!exact) {
    weighted_sum_s16_ref(p.rows_slice(t0, MR), v, Requant{m, sh, 0}, o.rows_slice(t0, MR));
    return;
  }
  int32_t out[size_t{MR}][16];
  int32_t c0 = 0;
  for (; c0 + 16 <= v.cols; c0 += 16) {
    const auto load = [&](int32_t j) { return avx2i::load16_s16(v.row(j) + c0); };
    avx2i::pv_block<MR>(p.row(t0), p.stride, p.cols, load, out);
    for (int i = 0; i < MR; ++i) {
      int16_t* orow = o.row(t0 + i) + c0;  // [16]
      for (int c = 0; c < 16; ++c) {
        orow[c] = static_cast<int16_t>(
            fp::clamp_i32(fp::multiply_by_quantized_multiplier_s64(out[i][c], m, sh), -32768, 32767));
      }
    }
  }
  if (c0 < v.cols) {
    weighted_sum_s16_ref(p.rows_slice(t0, MR), v.cols_slice(c0, v.cols - c0), Requant{m, sh, 0},
                         o.rows_slice(t0, MR).cols_slice(c0, v.cols - c0));
  }
}

}  // namespace

void weighted_sum_s16_avx2(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o) {
  const int32_t m = requant.multiplier, sh = requant.shift;
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) rows_block<4>(p, v, m, sh, o, t);
  for (; t < p.rows; ++t) rows_block<1>(p, v, m, sh, o, t);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
