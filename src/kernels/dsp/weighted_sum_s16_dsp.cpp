// weighted sum, int16 values, Q0.15 probabilities, Cortex-M DSP extension:
// o[t, c] = clamp(requantize_s64(sum_j p[t, j] v[j, c], m, sh)),
// weighted_sum_s16_ref's arithmetic, bit-exact.
//
// Two rows by two value columns at a time: per pair of keys (j, j + 1), the
// words (v[j, c], v[j, c + 1]) and (v[j + 1, c], v[j + 1, c + 1]) become the
// key pairs of column c and of column c + 1 (PKHBT / PKHTB), each SMLADed
// against the probability pairs (p[t, j], p[t, j + 1]) of the two rows.
//
// Exactness: the sums are int32, which is exact for a row whose
// probabilities are all >= 0 with sum < 2^16 (every softmax row): then every
// partial sum is below 2^16 * 2^15 = 2^31 in magnitude, and ref's int64 sum
// has the same value. Rows that are not (the contract allows any int16
// probabilities) go through weighted_sum_s16_ref; the check costs one load,
// one ORR (the sign bits) and one SMLAD (the sum) per two probabilities.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include "kernels/dsp/dsp_s8.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

// Whether every p[j] >= 0 and sum_j p[j] < 2^16 (the int32 sums are exact).
bool int32_exact(const int16_t* p, int32_t S) {
  if (S >= 65536) return false;  // else the sum below cannot wrap: S * 32767 < 2^31
  uint32_t signs = 0;
  int32_t sum = 0;
  int32_t j = 0;
  for (; j + 2 <= S; j += 2) {
    const int32_t w = dsp::load2x16(p + j);
    signs |= static_cast<uint32_t>(w);
    sum = __smlad(w, 0x00010001, sum);
  }
  if (j < S) {
    signs |= static_cast<uint16_t>(p[j]);
    sum += p[j];
  }
  return (signs & 0x80008000u) == 0 && sum < 65536;
}

inline int16_t out_s16(int32_t acc, int32_t rm, int32_t sh) {
  return static_cast<int16_t>(fp::clamp_i32(fp::requantize_s64(acc, rm, sh), -32768, 32767));
}

// Rows t and t + 1 of o (two = false: row t alone, its sums computed twice),
// every column; both rows int32_exact.
void rows2(ConstMatS16 p, ConstMatS16 v, int32_t rm, int32_t sh, MatS16 o, int32_t t, bool two) {
  const int32_t S = p.cols;
  const int32_t d = v.cols;
  const int32_t S2 = S & ~1;
  const int16_t* p0 = p.row(t);                // [S]
  const int16_t* p1 = p.row(two ? t + 1 : t);  // [S]
  int16_t* o0 = o.row(t);                      // [d]
  int16_t* o1 = two ? o.row(t + 1) : o0;       // [d]
  const ptrdiff_t vs = v.stride;
  int32_t c = 0;
  for (; c + 2 <= d; c += 2) {
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;  // a<row><column>
    const int16_t* vc = v.data + c;              // v[j, c .. c + 1]
    for (int32_t j = 0; j < S2; j += 2, vc += 2 * vs) {
      const uint32_t w0 = static_cast<uint32_t>(dsp::load2x16(vc));       // (v[j, c], v[j, c + 1])
      const uint32_t w1 = static_cast<uint32_t>(dsp::load2x16(vc + vs));  // (v[j + 1, c], v[j + 1, c + 1])
      const int32_t even = static_cast<int32_t>((w0 & 0xFFFFu) | (w1 << 16));     // column c
      const int32_t odd = static_cast<int32_t>((w1 & 0xFFFF0000u) | (w0 >> 16));  // column c + 1
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
    o1[c] = out_s16(a10, rm, sh);  // row t last: when two is false, o1 is o0
    o1[c + 1] = out_s16(a11, rm, sh);
    o0[c] = out_s16(a00, rm, sh);
    o0[c + 1] = out_s16(a01, rm, sh);
  }
  if (c < d) {  // the last, odd column
    int32_t a0 = 0, a1 = 0;
    const int16_t* vc = v.data + c;
    for (int32_t j = 0; j < S; ++j, vc += vs) a0 += p0[j] * *vc, a1 += p1[j] * *vc;
    o1[c] = out_s16(a1, rm, sh);
    o0[c] = out_s16(a0, rm, sh);
  }
}

}  // namespace

void weighted_sum_s16_dsp(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o) {
  const int32_t m = requant.multiplier, sh = requant.shift;
  const int32_t rm = fp::reduce_multiplier_q15(m);
  for (int32_t t = 0; t < p.rows;) {
    const bool e0 = int32_exact(p.row(t), p.cols);
    if (!e0) {  // any int16 probabilities: ref's int64 sums
      weighted_sum_s16_ref(p.rows_slice(t, 1), v, Requant{m, sh, 0}, o.rows_slice(t, 1));
      ++t;
      continue;
    }
    const bool two = t + 1 < p.rows && int32_exact(p.row(t + 1), p.cols);
    rows2(p, v, rm, sh, o, t, two);
    t += two ? 2 : 1;
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
