// The linears over int4 weights, NEON, AArch64 and ARMv7-A (kernels/s4_rows.h).
// Each weight row is read once per block of up to 4 input rows, 32 values
// (16 bytes) at a time, unpacked in registers to int8 (the nibbles n, then
// (n XOR 8) - 8, interleaved back into k order):
//   int8 x:  SDOT where the target has it, else SMULL + SADALP: int32 lanes,
//            wrapping, as ref's int32 sums;
//   int16 x: SMLAL of int16 x by the weights widened to int16, into int32
//            lanes (|term| <= 2^18, 256 values a run), added into int64.
// K's tail (< 32 values) is ref's loop. Bit-exact with the ref.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include <arm_neon.h>

#include "kernels/neon/neon_fixed.h"
#include "kernels/s4_rows.h"

namespace attn {
namespace detail {
namespace {

constexpr size_t kS4Rows = 4;     // input rows per pass over the weights
constexpr int32_t kS16Run = 256;  // int16 x: values per int32 lane run (<= 2^5 x 2^18 per lane)

// 32 int4 weights (16 bytes at p) as int8 in k order: [0, 16) and [16, 32).
inline int8x16x2_t unpack_s4(const uint8_t* p) {
  const uint8x16_t b = vld1q_u8(p);
  const int8x16_t eight = vdupq_n_s8(8);
  const int8x16_t lo = vsubq_s8(veorq_s8(vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(15))), eight), eight);
  const int8x16_t hi = vsubq_s8(veorq_s8(vreinterpretq_s8_u8(vshrq_n_u8(b, 4)), eight), eight);
  return vzipq_s8(lo, hi);
}
// The scalar tail: sum over k in [k0, K) of x w.
template <typename Act>
inline int32_t tail_dot(const Act* x, const uint8_t* w, int32_t k0, int32_t K) {
  int32_t acc = 0;
  for (int32_t k = k0; k < K; k += 2)
    acc += int32_t{x[k]} * s4_low(w[k / 2]) + int32_t{x[k + 1]} * s4_high(w[k / 2]);
  return acc;
}
inline int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t x) {
#if ATTN_HAVE_DOTPROD
  return vdotq_s32(acc, w, x);
#else
  const int16x8_t lo = vmull_s8(vget_low_s8(w), vget_low_s8(x));
  const int16x8_t hi = vmull_s8(vget_high_s8(w), vget_high_s8(x));
  return vpadalq_s16(vpadalq_s16(acc, lo), hi);
#endif
}

template <size_t MR, class Out>
void rows_s8(ConstMatS8 x, int32_t i0, ConstMatS4 w, const int32_t* bias, Out& out) {
  const int32_t K = x.cols, Kv = K / 32 * 32;
  const int8_t* xr[MR];
  for (size_t i = 0; i < MR; ++i) xr[i] = x.row(i0 + static_cast<int32_t>(i));
  for (int32_t c = 0; c < w.rows; ++c) {
    const uint8_t* wr = w.row(c);
    int32x4_t acc[MR];
    for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_s32(0);
    for (int32_t k = 0; k < Kv; k += 32) {
      const int8x16x2_t wv = unpack_s4(wr + k / 2);
      for (size_t i = 0; i < MR; ++i) {
        acc[i] = dot16(acc[i], wv.val[0], vld1q_s8(xr[i] + k));
        acc[i] = dot16(acc[i], wv.val[1], vld1q_s8(xr[i] + k + 16));
      }
    }
    for (size_t i = 0; i < MR; ++i) {
      const int32_t a = neonfx::wadd(neonfx::hsum(acc[i]), tail_dot(xr[i], wr, Kv, K));
      out(i0 + static_cast<int32_t>(i), c, neonfx::wadd(bias != nullptr ? bias[c] : 0, a));
    }
  }
}

inline int32x4_t mla16(int32x4_t acc, int8x8_t w, const int16_t* x) {
  const int16x8_t w16 = vmovl_s8(w), xv = vld1q_s16(x);
  acc = vmlal_s16(acc, vget_low_s16(w16), vget_low_s16(xv));
  return vmlal_s16(acc, vget_high_s16(w16), vget_high_s16(xv));
}

template <size_t MR, class Out>
void rows_s16(ConstMatS16 x, int32_t i0, ConstMatS4 w, const int64_t* bias, Out& out) {
  const int32_t K = x.cols, Kv = K / 32 * 32;
  const int16_t* xr[MR];
  for (size_t i = 0; i < MR; ++i) xr[i] = x.row(i0 + static_cast<int32_t>(i));
  for (int32_t c = 0; c < w.rows; ++c) {
    const uint8_t* wr = w.row(c);
    int64_t sum[MR];
    for (size_t i = 0; i < MR; ++i) sum[i] = bias != nullptr ? bias[c] : 0;
    for (int32_t k0 = 0; k0 < Kv; k0 += kS16Run) {
      const int32_t k1 = Kv - k0 < kS16Run ? Kv : k0 + kS16Run;
      int32x4_t acc[MR];
      for (size_t i = 0; i < MR; ++i) acc[i] = vdupq_n_s32(0);
      for (int32_t k = k0; k < k1; k += 32) {
        const int8x16x2_t wv = unpack_s4(wr + k / 2);
        for (size_t i = 0; i < MR; ++i) {
          acc[i] = mla16(acc[i], vget_low_s8(wv.val[0]), xr[i] + k);
          acc[i] = mla16(acc[i], vget_high_s8(wv.val[0]), xr[i] + k + 8);
          acc[i] = mla16(acc[i], vget_low_s8(wv.val[1]), xr[i] + k + 16);
          acc[i] = mla16(acc[i], vget_high_s8(wv.val[1]), xr[i] + k + 24);
        }
      }
      for (size_t i = 0; i < MR; ++i) sum[i] += neonfx::hsum(vpaddlq_s32(acc[i]));
    }
    for (size_t i = 0; i < MR; ++i) out(i0 + static_cast<int32_t>(i), c, sum[i] + tail_dot(xr[i], wr, Kv, K));
  }
}

}  // namespace

template <>
struct S4DotOps<Isa::kNeon> {
  template <class Out>
  static void rows(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out out) {
    int32_t i = 0;
    for (; i + int32_t{kS4Rows} <= x.rows; i += int32_t{kS4Rows}) rows_s8<kS4Rows>(x, i, w, bias, out);
    for (; i < x.rows; ++i) rows_s8<1>(x, i, w, bias, out);
  }
  template <class Out>
  static void rows(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, Out out) {
    int32_t i = 0;
    for (; i + int32_t{kS4Rows} <= x.rows; i += int32_t{kS4Rows}) rows_s16<kS4Rows>(x, i, w, bias, out);
    for (; i < x.rows; ++i) rows_s16<1>(x, i, w, bias, out);
  }
};
template struct S4Rows<Isa::kNeon>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_NEON
