// weighted sum, int8 values, Q0.15 probabilities, Cortex-M DSP extension:
// o[t, c] = requant(sum_j p[t, j] v[j, c] - zv sum_j p[t, j]) (the zero point
// folded into one correction per row). Per pair of keys (j, j + 1) and pair
// of value columns (c, c + 1), two halfword loads and one ORR give the bytes
// (v[j, c], v[j, c+1], v[j+1, c], v[j+1, c+1]); SXTB16 and SXTB16 ROR #8 turn
// them into the int16 key pairs of column c and of column c + 1, each
// SMLADed against the probability pairs (p[t, j], p[t, j+1]) of two rows.
// Same int32 sums and requantization as weighted_sum_s8_ref: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dsp_s8.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/requantize.h"

namespace attn {
namespace detail {
namespace {

inline int32_t load_u16(const int8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline int8_t out_s8(int32_t acc, const fast::Requant& rq, int32_t zo) {
  return static_cast<int8_t>(fp::clamp_i32(zo + rq(acc), -128, 127));
}

// Rows [t, t + R) of o (R = 1 or 2), every column. R at run time: one copy
// of the code (flash).
void rows(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o, int32_t t,
          int32_t R) {
  const int32_t S = p.cols;
  const int32_t d = v.cols;
  const int32_t S2 = S & ~1;
  const int16_t* p0 = p.row(t);            // [S]
  const int16_t* p1 = p.row(t + (R - 1));  // [S] (p0 again when R == 1)
  int32_t corr0 = 0, corr1 = 0;            // -zv * sum_j p[t, j]
  for (int32_t j = 0; j < S; ++j) corr0 += p0[j], corr1 += p1[j];
  corr0 *= -zv, corr1 *= -zv;
  const ptrdiff_t vs = v.stride;
  const fast::Requant rq(m, sh);
  int32_t c = 0;
  for (; c + 2 <= d; c += 2) {
    int32_t a00 = corr0, a01 = corr0, a10 = corr1, a11 = corr1;  // a<row><column>
    const int8_t* vc = v.data + c;                               // v[j, c .. c + 1]
    for (int32_t j = 0; j < S2; j += 2, vc += 2 * vs) {
      const int32_t bytes = load_u16(vc) | (load_u16(vc + vs) << 16);
      int32_t even, odd;  // (v[j, c], v[j+1, c]), (v[j, c+1], v[j+1, c+1])
      dsp::unpack<false>(bytes, 0, &even, &odd);
      const int32_t q0 = dsp::load2x16(p0 + j);
      const int32_t q1 = dsp::load2x16(p1 + j);
      a00 = __smlad(q0, even, a00);
      a01 = __smlad(q0, odd, a01);
      a10 = __smlad(q1, even, a10);
      a11 = __smlad(q1, odd, a11);
    }
    if (S2 < S) {
      const int32_t v0 = vc[0], v1 = vc[1];
      a00 += p0[S2] * v0, a01 += p0[S2] * v1, a10 += p1[S2] * v0, a11 += p1[S2] * v1;
    }
    int8_t* o0 = o.row(t) + c;
    o0[0] = out_s8(a00, rq, zo);
    o0[1] = out_s8(a01, rq, zo);
    if (R == 2) {
      int8_t* o1 = o.row(t + 1) + c;
      o1[0] = out_s8(a10, rq, zo);
      o1[1] = out_s8(a11, rq, zo);
    }
  }
  if (c < d) {  // the last, odd column
    int32_t a0 = corr0, a1 = corr1;
    for (int32_t j = 0; j < S; ++j) {
      const int32_t vj = v.data[j * vs + c];
      a0 += p0[j] * vj, a1 += p1[j] * vj;
    }
    o.row(t)[c] = out_s8(a0, rq, zo);
    if (R == 2) o.row(t + 1)[c] = out_s8(a1, rq, zo);
  }
}

}  // namespace

void weighted_sum_s8_dsp(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  for (int32_t t = 0; t < p.rows; t += 2) rows(p, v, zv, m, sh, zo, o, t, p.rows - t < 2 ? 1 : 2);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
