// The linears over int4 weights, Cortex-M55 Helium (MVE, kernels/s4_rows.h).
// The weights are unpacked in registers, the even and odd k apart, and x is
// read the same way (VLD2: even k, odd k), so no lanes are interleaved:
//   int8 x:  16 bytes (32 values) per step: b << 4 and b & 0xF0 are 16 v of
//            the low and high nibbles, two VMLADAVA into int32 per channel,
//            four channels per pass; K's last K % 32 in 16-value steps, the
//            bytes as 16-bit lanes (VSLI puts each byte's high nibble in the
//            lane's high byte), tail-predicated. 16 sum w x is exact in
//            int32 for K <= kMaxK (|sum w x| <= 2^10 K), so the arithmetic
//            shift by 4 gives the sum, added to the bias wrapping, as ref's
//            int32 sums; deeper rows take the ref's sums. linear_s8's
//            requantization runs four channels per vector (Four).
//   int16 x: 8 bytes (16 values) per step, sign-extended to 16-bit lanes:
//            lo = (b << 12) >> 12, hi = b >> 4, two VMLALDAVA into int64 per
//            channel (exact, as ref's), two channels per pass; K's last
//            K % 16 values are ref's loop.
// Bit-exact with the ref.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include <cstddef>

#include "kernels/s4_rows.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMaxK = 1 << 16;  // int8 x: deeper rows take the ref's sums (16 sum w x stays in int32)

// s + 16 sum w x over 32 values: x's even and odd k, the weights' 16 bytes
// at p: b << 4 and b & 0xF0 hold 16 v of the low and the high nibbles.
ATTN_ALWAYS_INLINE int32_t dot32(int32_t s, int8x16x2_t x, const uint8_t* p) {
  const uint8x16_t b = vldrbq_u8(p);
  s = vmladavaq_s8(s, x.val[0], vreinterpretq_s8_u8(vshlq_n_u8(b, 4)));
  return vmladavaq_s8(s, x.val[1], vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(0xF0))));
}
// 16 v of the 16 values of the 8 weight bytes at p (fewer: the first
// `bytes`, the rest 0) in k order: each byte in a 16-bit lane, its low
// nibble moved to the top of the low byte and its high nibble to the top of
// the high byte (VSLI), the rest cleared.
ATTN_ALWAYS_INLINE int8x16_t unpack16(const uint8_t* p, uint32_t bytes) {
  const uint16x8_t v = vldrbq_z_u16(p, vctp16q(bytes));       // lane i: byte i
  const uint16x8_t a = vsliq_n_u16(vshlq_n_u16(v, 4), v, 8);  // low byte lo << 4, high byte hi << 4 | lo
  return vreinterpretq_s8_u16(vandq_u16(a, vdupq_n_u16(0xF0F0)));
}
// s + 16 sum w x over k in [k0, K) (K - k0 < 32, even).
ATTN_ALWAYS_INLINE int32_t dot_tail(int32_t s, const int8_t* x, const uint8_t* w, int32_t k0, int32_t K) {
  for (int32_t k = k0; k < K; k += 16) {
    const uint32_t left = static_cast<uint32_t>(K - k);
    s = vmladavaq_s8(s, vldrbq_z_s8(x + k, vctp8q(left)), unpack16(w + k / 2, left / 2));
  }
  return s;
}
// bias + s / 16 (s = 16 sum w x, exact: |sum w x| <= 2^10 K < 2^27), wrapping as ref's int32 sums.
ATTN_ALWAYS_INLINE int32_t finish(const int32_t* bias, int32_t n, int32_t s) {
  return fp::wrap_add(bias != nullptr ? bias[n] : 0, s >> 4);
}

// Four channels' sums (a vector) to the epilogue: one call each, or, for
// linear_s8's requantization (RequantS8Into), the four at once on vector
// lanes: linear_s8_mve's arithmetic (kernels/mve/mve_requantize.h: the same
// bits as fp::multiply_by_quantized_multiplier for multiplier >= 0), one
// store of 4 bytes. The parameters are read into locals once per call (the
// int8 stores could alias them: both compilers reloaded them per channel).
template <class Out>
struct Four {
  Out& out;
  explicit Four(Out& o) : out(o) {}
  ATTN_ALWAYS_INLINE void operator()(int32_t m, int32_t n, int32x4_t acc) const {
    int32_t a[4];
    vstrwq_s32(a, acc);
    for (int32_t i = 0; i < 4; ++i) out(m, n + i, a[i]);
  }
};
template <>
struct Four<RequantS8Into> {
  const int32_t* multiplier;
  const int32_t* shift;
  int32_t zo;
  int32x4_t act_min, act_max;
  MatS8 y;
  explicit Four(RequantS8Into& o)
      : multiplier(o.p.multiplier),
        shift(o.p.shift),
        zo(o.p.output_zero_point),
        act_min(vdupq_n_s32(o.p.act_min)),
        act_max(vdupq_n_s32(o.p.act_max)),
        y(o.y) {}
  ATTN_ALWAYS_INLINE void operator()(int32_t m, int32_t n, int32x4_t acc) const {
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t sh = vldrwq_s32(shift + n);
    const int32x4_t right = vminq_s32(sh, zero);  // a negative count: rounding right shift
    int32x4_t v = vqrdmulhq_s32(vshlq_s32(acc, vmaxq_s32(sh, zero)), vldrwq_s32(multiplier + n));
    v = vrshlq_s32(vaddq_s32(v, vshrq_n_s32(vandq_s32(v, right), 31)),
                   right);  // < 0 with a right shift: v - 1
    v = vminq_s32(vmaxq_s32(vaddq_n_s32(v, zo), act_min), act_max);
    vstrbq_s32(y.row(m) + n, v);  // 4 int8, truncating
  }
};

template <class Out>
void rows_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out& out) {
  const int32_t K = x.cols, K32 = K & ~31;
  const int32_t steps = K32 / 32;
  const ptrdiff_t ws = w.stride;
  const Four<Out> four(out);
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* const xr = x.row(m);
    int32_t n = 0;
    for (; n + 4 <= w.rows; n += 4) {
      const uint8_t* b = w.row(n);
      const int8_t* px = xr;
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int32_t i = steps; i > 0; --i) {
        const int8x16x2_t xv = vld2q_s8(px);
        s0 = dot32(s0, xv, b);
        s1 = dot32(s1, xv, b + ws);
        s2 = dot32(s2, xv, b + 2 * ws);
        s3 = dot32(s3, xv, b + 3 * ws);
        px += 32, b += 16;
      }
      const uint8_t* b0 = w.row(n);
      for (int32_t k = K32; k < K; k += 16) {  // the last K % 32, the four channels at once
        const uint32_t left = static_cast<uint32_t>(K - k), bytes = left / 2;
        const int8x16_t xv = vldrbq_z_s8(xr + k, vctp8q(left));
        const uint8_t* bk = b0 + k / 2;
        s0 = vmladavaq_s8(s0, xv, unpack16(bk, bytes));
        s1 = vmladavaq_s8(s1, xv, unpack16(bk + ws, bytes));
        s2 = vmladavaq_s8(s2, xv, unpack16(bk + 2 * ws, bytes));
        s3 = vmladavaq_s8(s3, xv, unpack16(bk + 3 * ws, bytes));
      }
      int32x4_t acc = vsetq_lane_s32(s3, vsetq_lane_s32(s2, vsetq_lane_s32(s1, vdupq_n_s32(s0), 1), 2), 3);
      acc = vshrq_n_s32(acc, 4);                                        // the sums (16 sum w x: exact)
      if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_s32(bias + n));  // wrapping, as ref's int32 sums
      four(m, n, acc);
    }
    for (; n < w.rows; ++n) {
      const uint8_t* b0 = w.row(n);
      int32_t s0 = 0;
      for (int32_t k = 0; k < K32; k += 32) s0 = dot32(s0, vld2q_s8(xr + k), b0 + k / 2);
      out(m, n, finish(bias, n, dot_tail(s0, xr, b0, K32, K)));
    }
  }
}

// s + the sum of w x over 16 values: x's even and odd k, the weights' 8 bytes at p.
ATTN_ALWAYS_INLINE int64_t dot16(int64_t s, int16x8x2_t x, const uint8_t* p) {
  const int16x8_t b = vldrbq_s16(reinterpret_cast<const int8_t*>(p));  // lane i: byte i, sign-extended
  s = vmlaldavaq_s16(s, x.val[0], vshrq_n_s16(vshlq_n_s16(b, 12), 12));
  return vmlaldavaq_s16(s, x.val[1], vshrq_n_s16(b, 4));
}
inline int64_t tail_dot(const int16_t* x, const uint8_t* w, int32_t k0, int32_t K) {
  int64_t acc = 0;
  for (int32_t k = k0; k < K; k += 2)
    acc += int32_t{x[k]} * s4_low(w[k / 2]) + int32_t{x[k + 1]} * s4_high(w[k / 2]);
  return acc;
}

template <class Out>
void rows_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, Out& out) {
  const int32_t K = x.cols, K16 = K & ~15;
  for (int32_t m = 0; m < x.rows; ++m) {
    const int16_t* const xr = x.row(m);
    int32_t n = 0;
    for (; n + 2 <= w.rows; n += 2) {
      const uint8_t* b0 = w.row(n);
      const uint8_t* b1 = w.row(n + 1);
      int64_t s0 = 0, s1 = 0;
      if (bias != nullptr) s0 = bias[n], s1 = bias[n + 1];
      for (int32_t k = 0; k < K16; k += 16) {
        const int16x8x2_t xv = vld2q_s16(xr + k);
        s0 = dot16(s0, xv, b0 + k / 2);
        s1 = dot16(s1, xv, b1 + k / 2);
      }
      out(m, n, s0 + tail_dot(xr, b0, K16, K));
      out(m, n + 1, s1 + tail_dot(xr, b1, K16, K));
    }
    if (n < w.rows) {
      const uint8_t* b0 = w.row(n);
      int64_t s0 = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < K16; k += 16) s0 = dot16(s0, vld2q_s16(xr + k), b0 + k / 2);
      out(m, n, s0 + tail_dot(xr, b0, K16, K));
    }
  }
}

// Rows deeper than kMaxK (int8 x): the ref's sums, out of line and compiled
// for size with GCC (an image carries one per epilogue it links).
template <typename Act, typename Acc, class Out>
ATTN_COLD_FLAT ATTN_NOINLINE void rows_ref(Matrix<const Act> x, ConstMatS4 w, const Acc* bias, Out out) {
  dot_rows_s4_ref(x, w, bias, out);
}

}  // namespace

template <>
struct S4DotOps<Isa::kMve> {
  template <class Out>
  static void rows(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out out) {
    if (x.cols > kMaxK) return rows_ref(x, w, bias, out);
    rows_s8(x, w, bias, out);
  }
  template <class Out>
  static void rows(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, Out out) {
    rows_s16(x, w, bias, out);
  }
};
template struct S4Rows<Isa::kMve>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
