// weighted sum, int8 values, Q0.15 probabilities, Cortex-M DSP extension:
// o[t, c] = requant(sum_j p[t, j] (v[j, c] - zv)). Per value column c and
// pair of keys (j, j + 1), the two values are packed once as int16 (minus zv)
// and SMLADed against up to four probability rows. Same int32 sums and
// requantization as weighted_sum_s8_ref: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dsp_s8.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"
#include "internal/requantize.h"

namespace attn {
namespace detail {
namespace {

// Rows [t, t + R) of o, every column.
template <int R>
void rows(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o, int32_t t) {
  const int32_t S = p.cols;
  constexpr size_t kR = static_cast<size_t>(R);
  const int16_t* pr[kR];  // probability rows [S]
  for (int r = 0; r < R; ++r) pr[r] = p.row(t + r);
  for (int32_t c = 0; c < v.cols; ++c) {
    int32_t acc[kR] = {};
    const int8_t* vc = v.data + c;  // column c, stride v.stride
    int32_t j = 0;
    for (; j + 2 <= S; j += 2) {
      const int32_t v0 = int32_t{vc[static_cast<ptrdiff_t>(j) * v.stride]} - zv;
      const int32_t v1 = int32_t{vc[static_cast<ptrdiff_t>(j + 1) * v.stride]} - zv;
      const int32_t pair =
          static_cast<int32_t>((static_cast<uint32_t>(v0) & 0xFFFFu) | (static_cast<uint32_t>(v1) << 16));
      for (int r = 0; r < R; ++r) acc[r] = __smlad(dsp::load2x16(pr[r] + j), pair, acc[r]);
    }
    if (j < S) {
      const int32_t vl = int32_t{vc[static_cast<ptrdiff_t>(j) * v.stride]} - zv;
      for (int r = 0; r < R; ++r) acc[r] += int32_t{pr[r][j]} * vl;
    }
    for (int r = 0; r < R; ++r) {
      o.row(t + r)[c] = static_cast<int8_t>(fp::clamp_i32(zo + fast::requantize(acc[r], m, sh), -128, 127));
    }
  }
}

}  // namespace

void weighted_sum_s8_dsp(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                         MatS8 o) {
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) rows<4>(p, v, zv, m, sh, zo, o, t);
  if (p.rows - t == 3) rows<3>(p, v, zv, m, sh, zo, o, t);
  if (p.rows - t == 2) rows<2>(p, v, zv, m, sh, zo, o, t);
  if (p.rows - t == 1) rows<1>(p, v, zv, m, sh, zo, o, t);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
