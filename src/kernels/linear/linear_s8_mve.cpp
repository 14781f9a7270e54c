// linear, int8, Cortex-M55 Helium (MVE): y = requant(x W^T + b). Per weight
// row, 16 int8 MACs per VMLADAVA against up to four rows of x (the weight
// vector is loaded once for them); tails by tail predication (VCTP), no
// scalar loop. The input zero point is applied as -zp * sum_k w[n, k] (VADDVA
// on the same vectors). Same int32 sums and requantization as linear_s8_ref:
// bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "internal/kernels_fixed.h"
#include "internal/mve_requantize.h"

namespace attn {
namespace detail {
namespace {

template <int R, bool kZx>
void rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y, int32_t m) {
  constexpr size_t kR = static_cast<size_t>(R);
  const int32_t K = x.cols;
  const int8_t* a[kR];  // x rows [K]
  for (size_t r = 0; r < kR; ++r) a[r] = x.row(m + static_cast<int32_t>(r));
  // Byte offsets of y's rows m .. m + 3 from row m.
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(y.stride));
  for (int32_t n = 0; n < w.rows; ++n) {
    const int8_t* b = w.row(n);  // [K]
    int32_t acc[kR] = {};
    int32_t wsum = 0;
    for (int32_t k = 0; k < K; k += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(K - k));
      const int8x16_t wv = vldrbq_z_s8(b + k, pred);
      if (kZx) wsum = vaddvaq_p_s8(wsum, wv, pred);  // the forward folds zp into the bias: 0
      for (size_t r = 0; r < kR; ++r) acc[r] = vmladavaq_p_s8(acc[r], vldrbq_z_s8(a[r] + k, pred), wv, pred);
    }
    const int32_t base = (bias != nullptr ? bias[n] : 0) - p.input_zero_point * wsum;
    int32_t sums[4] = {};  // [R] used
    for (size_t r = 0; r < kR; ++r) sums[r] = acc[r];
    const int32x4_t q = mve::requantize(vaddq_n_s32(vldrwq_s32(sums), base), p.multiplier[n], p.shift[n]);
    const int32x4_t out = vminq_s32(vmaxq_s32(vaddq_n_s32(q, p.output_zero_point), vdupq_n_s32(p.act_min)),
                                    vdupq_n_s32(p.act_max));
    // y[m + r][n] for r < R: a scatter of the low bytes (truncating store)
    vstrbq_scatter_offset_p_s32(y.row(m) + n, offsets, out, vctp32q(static_cast<uint32_t>(R)));
  }
}

template <bool kZx>
void run(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  int32_t m = 0;
  for (; m + 4 <= x.rows; m += 4) rows<4, kZx>(x, w, bias, p, y, m);
  if (x.rows - m == 3) rows<3, kZx>(x, w, bias, p, y, m);
  if (x.rows - m == 2) rows<2, kZx>(x, w, bias, p, y, m);
  if (x.rows - m == 1) rows<1, kZx>(x, w, bias, p, y, m);
}

}  // namespace

void linear_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  if (p.input_zero_point == 0) {
    run<false>(x, w, bias, p, y);
  } else {
    run<true>(x, w, bias, p, y);
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
