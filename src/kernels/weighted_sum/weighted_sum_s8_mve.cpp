// weighted sum, int8 values, Q0.15 probabilities, Cortex-M55 Helium (MVE):
// o[t, c] = requant(sum_j p[t, j] v[j, c] - zv sum_j p[t, j]). Four value
// columns per int32 vector (VLDRB.S32, tail-predicated), one VMLA by the
// scalar p[t, j] per row, up to four rows sharing each loaded value vector.
// The sums equal the ref's int32 sums: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "internal/kernels_fixed.h"
#include "internal/mve_requantize.h"

namespace attn {
namespace detail {
namespace {

template <int R>
void rows(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o, int32_t t) {
  constexpr size_t kR = static_cast<size_t>(R);
  const int32_t S = p.cols;
  const int32_t d = v.cols;
  const int16_t* pr[kR];  // probability rows [S]
  int32_t corr[kR];       // -zv * sum_j p[t, j]
  for (size_t r = 0; r < kR; ++r) {
    pr[r] = p.row(t + static_cast<int32_t>(r));
    int32_t psum = 0;
    for (int32_t j = 0; j < S; j += 8) {
      const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(S - j));
      psum = vaddvaq_p_s16(psum, vldrhq_z_s16(pr[r] + j, pred), pred);
    }
    corr[r] = -zv * psum;
  }
  for (int32_t c = 0; c < d; c += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(d - c));
    int32x4_t acc[kR];
    for (size_t r = 0; r < kR; ++r) acc[r] = vdupq_n_s32(corr[r]);
    const int8_t* vc = v.data + c;  // columns [c, c + 4) of row 0
    for (int32_t j = 0; j < S; ++j, vc += v.stride) {
      const int32x4_t vv = vldrbq_z_s32(vc, pred);
      for (size_t r = 0; r < kR; ++r) acc[r] = vmlaq_n_s32(acc[r], vv, pr[r][j]);
    }
    for (size_t r = 0; r < kR; ++r) {
      int32x4_t out = vaddq_n_s32(mve::requantize(acc[r], m, sh), zo);
      out = vminq_s32(vmaxq_s32(out, vdupq_n_s32(-128)), vdupq_n_s32(127));
      vstrbq_p_s32(o.row(t + static_cast<int32_t>(r)) + c, out, pred);  // int8, truncating
    }
  }
}

}  // namespace

void weighted_sum_s8_mve(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                         MatS8 o) {
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) rows<4>(p, v, zv, m, sh, zo, o, t);
  if (p.rows - t == 3) rows<3>(p, v, zv, m, sh, zo, o, t);
  if (p.rows - t == 2) rows<2>(p, v, zv, m, sh, zo, o, t);
  if (p.rows - t == 1) rows<1>(p, v, zv, m, sh, zo, o, t);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
