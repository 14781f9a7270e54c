// The linears over int4 weights, Cortex-M55 Helium (MVE, kernels/s4_rows.h).
// The weights are unpacked in registers, the even and odd k apart, and x is
// read the same way (VLD2: even k, odd k), so no lanes are interleaved:
//   int8 x:  16 bytes (32 values) per step: lo = (b << 4) >> 4, hi = b >> 4
//            (arithmetic, per byte: the nibbles' values), two VMLADAVA into
//            int32 per channel, four channels per pass; K's last K % 32 in
//            16-value steps, the bytes as 16-bit lanes (VSLI puts each
//            byte's high nibble in the lane's high byte), tail-predicated.
//            Wrapping int32 sums, as ref's.
//   int16 x: 8 bytes (16 values) per step, sign-extended to 16-bit lanes:
//            lo = (b << 12) >> 12, hi = b >> 4, two VMLALDAVA into int64 per
//            channel (exact, as ref's), two channels per pass; K's last
//            K % 16 values are ref's loop.
// Bit-exact with the ref.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/s4_rows.h"

namespace attn {
namespace detail {
namespace {

// s + the sum of w x over 32 values: x's even and odd k, the weights' 16 bytes at p.
ATTN_ALWAYS_INLINE int32_t dot32(int32_t s, int8x16x2_t x, const uint8_t* p) {
  const int8x16_t b = vreinterpretq_s8_u8(vldrbq_u8(p));
  s = vmladavaq_s8(s, x.val[0], vshrq_n_s8(vshlq_n_s8(b, 4), 4));
  return vmladavaq_s8(s, x.val[1], vshrq_n_s8(b, 4));
}
// The 16 values of the 8 weight bytes at p (fewer: the first `bytes`, the rest 0) in k order.
ATTN_ALWAYS_INLINE int8x16_t unpack16(const uint8_t* p, uint32_t bytes) {
  const uint16x8_t v = vldrbq_z_u16(p, vctp16q(bytes));       // lane i: byte i
  const uint16x8_t a = vsliq_n_u16(vshlq_n_u16(v, 4), v, 8);  // low byte lo << 4, high byte hi << 4 | lo
  return vshrq_n_s8(vreinterpretq_s8_u16(a), 4);
}

template <class Out>
void rows_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out& out) {
  const int32_t K = x.cols, K32 = K & ~31;
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* const xr = x.row(m);
    int32_t n = 0;
    for (; n + 4 <= w.rows; n += 4) {
      const uint8_t* b0 = w.row(n);
      const uint8_t* b1 = w.row(n + 1);
      const uint8_t* b2 = w.row(n + 2);
      const uint8_t* b3 = w.row(n + 3);
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      if (bias != nullptr) s0 = bias[n], s1 = bias[n + 1], s2 = bias[n + 2], s3 = bias[n + 3];
      for (int32_t k = 0; k < K32; k += 32) {
        const int8x16x2_t xv = vld2q_s8(xr + k);
        s0 = dot32(s0, xv, b0 + k / 2);
        s1 = dot32(s1, xv, b1 + k / 2);
        s2 = dot32(s2, xv, b2 + k / 2);
        s3 = dot32(s3, xv, b3 + k / 2);
      }
      for (int32_t k = K32; k < K; k += 16) {
        const uint32_t left = static_cast<uint32_t>(K - k), bytes = left / 2;
        const int8x16_t xv = vldrbq_z_s8(xr + k, vctp8q(left));
        s0 = vmladavaq_s8(s0, xv, unpack16(b0 + k / 2, bytes));
        s1 = vmladavaq_s8(s1, xv, unpack16(b1 + k / 2, bytes));
        s2 = vmladavaq_s8(s2, xv, unpack16(b2 + k / 2, bytes));
        s3 = vmladavaq_s8(s3, xv, unpack16(b3 + k / 2, bytes));
      }
      out(m, n, s0);
      out(m, n + 1, s1);
      out(m, n + 2, s2);
      out(m, n + 3, s3);
    }
    for (; n < w.rows; ++n) {
      const uint8_t* b0 = w.row(n);
      int32_t s0 = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < K32; k += 32) s0 = dot32(s0, vld2q_s8(xr + k), b0 + k / 2);
      for (int32_t k = K32; k < K; k += 16) {
        const uint32_t left = static_cast<uint32_t>(K - k);
        s0 = vmladavaq_s8(s0, vldrbq_z_s8(xr + k, vctp8q(left)), unpack16(b0 + k / 2, left / 2));
      }
      out(m, n, s0);
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

}  // namespace

template <>
struct S4DotOps<Isa::kMve> {
  template <class Out>
  static void rows(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out out) {
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
