// weighted sum, int16 values, Q0.15 probabilities, Cortex-M55 Helium (MVE):
// o[t, c] = clamp(requantize_s64(sum_j p[t, j] v[j, c], m, sh)),
// weighted_sum_s16_ref's arithmetic, bit-exact.
//
// Two rows by two value columns at a time; per 8 keys, one load per row
// brings p[t, j .. j + 8] straight from P, one gather per column (VLDRH
// with offsets 0, stride, .., 7 stride) brings v[j .. j + 8, c], and one
// VMLALDAVA.S16 per (row, column) adds the 8 products into a 64-bit sum
// exactly: ref's int64 sum, for any int16 probabilities. The last 1..7 keys
// are one step with tail-predicated loads. Rows too far apart for the
// gathers' 16-bit offsets take one row and column at a time.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMaxGatherStride = 9362;  // 7 * stride elements must fit the 16-bit offsets (x 2 bytes)

// clamp(v >> 1, -32768, 32767): the 16x8 requantization's last step and
// the int16 clamp in one SSAT.
inline int32_t ssat16_half(int32_t v) {
  int32_t r;
  __asm__("ssat %0, #16, %1, asr #1" : "=r"(r) : "r"(v));
  return r;
}

// fp::requantize_s64 clamped to int16, its last step (r + 1) >> 1 and the
// clamp as one SSAT.
inline int16_t out_s16(int64_t acc, int32_t rm, int32_t sh) {
  const int64_t prod = acc * static_cast<int64_t>(static_cast<uint32_t>(rm));  // rm in [0, 2^15)
  const int32_t r = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(prod >> (14 - sh))));
  return static_cast<int16_t>(ssat16_half(fp::wrap_add(r, 1)));
}

// Rows t and t + 1 of o (two = false: row t alone, computed twice), v.stride <= kMaxGatherStride.
void rows2(ConstMatS16 p, ConstMatS16 v, int32_t rm, int32_t sh, MatS16 o, int32_t t, bool two) {
  const int32_t S = p.cols;
  const int32_t full = S & ~7;
  const mve_pred16_t tail = vctp16q(static_cast<uint32_t>(S - full));
  const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(v.stride));  // elements
  const ptrdiff_t step = 8 * v.stride;
  const int16_t* p0 = p.row(t);                // [S]
  const int16_t* p1 = p.row(two ? t + 1 : t);  // [S]
  int16_t* o0 = o.row(t);
  int16_t* o1 = two ? o.row(t + 1) : o0;
  ATTN_NO_UNROLL
  for (int32_t c = 0; c < v.cols; c += 2) {
    const int32_t c1 = c + 1 < v.cols ? c + 1 : c;  // a missing second column repeats the first
    const int16_t* va = v.data + c;
    const int16_t* vb = v.data + c1;
    int64_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;  // a<row><column>
    int32_t j = 0;
    for (; j < full; j += 8, va += step, vb += step) {
      const int16x8_t x0 = vldrhq_s16(p0 + j), x1 = vldrhq_s16(p1 + j);
      const int16x8_t g0 = vldrhq_gather_shifted_offset_s16(va, off);
      const int16x8_t g1 = vldrhq_gather_shifted_offset_s16(vb, off);
      a00 = vmlaldavaq_s16(a00, x0, g0);
      a01 = vmlaldavaq_s16(a01, x0, g1);
      a10 = vmlaldavaq_s16(a10, x1, g0);
      a11 = vmlaldavaq_s16(a11, x1, g1);
    }
    if (full < S) {
      const int16x8_t x0 = vldrhq_z_s16(p0 + j, tail), x1 = vldrhq_z_s16(p1 + j, tail);
      const int16x8_t g0 = vldrhq_gather_shifted_offset_z_s16(va, off, tail);
      const int16x8_t g1 = vldrhq_gather_shifted_offset_z_s16(vb, off, tail);
      a00 = vmlaldavaq_s16(a00, x0, g0);
      a01 = vmlaldavaq_s16(a01, x0, g1);
      a10 = vmlaldavaq_s16(a10, x1, g0);
      a11 = vmlaldavaq_s16(a11, x1, g1);
    }
    o1[c1] = out_s16(a11, rm, sh);  // row t and column c last: repeats store there first
    o1[c] = out_s16(a10, rm, sh);
    o0[c1] = out_s16(a01, rm, sh);
    o0[c] = out_s16(a00, rm, sh);
  }
}

// Row t, any row stride: scalar int64 sums, as ref (no gathers).
void row_any(ConstMatS16 p, ConstMatS16 v, int32_t rm, int32_t sh, MatS16 o, int32_t t) {
  const int16_t* pr = p.row(t);
  for (int32_t c = 0; c < v.cols; ++c) {
    int64_t acc = 0;
    for (int32_t j = 0; j < p.cols; ++j) acc += int32_t{pr[j]} * int32_t{v.row(j)[c]};
    o.row(t)[c] = out_s16(acc, rm, sh);
  }
}

}  // namespace

void weighted_sum_s16_mve(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o) {
  const int32_t m = requant.multiplier, sh = requant.shift;
  const int32_t rm = fp::reduce_multiplier_q15(m);
  if (v.stride > kMaxGatherStride) {
    for (int32_t t = 0; t < p.rows; ++t) row_any(p, v, rm, sh, o, t);
    return;
  }
  for (int32_t t = 0; t < p.rows; t += 2) rows2(p, v, rm, sh, o, t, t + 1 < p.rows);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
