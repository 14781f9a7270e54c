// The linears over int4 weights, Cortex-M DSP extension (kernels/s4_rows.h).
// One row of x at a time, expanded once to int16 pairs on the stack, two
// channels per pass over it. A weight word w holds 8 values; masking it
// with 0xF000F000 after a left shift by 12, 8, 4 or 0 (one AND with a
// shifted operand) leaves in each halfword one nibble at the top: 4096 v,
// sign and all, an SMLAD operand as it is. The four give the pairs
// (k0, k4), (k1, k5), (k2, k6), (k3, k7), the order x is expanded in: per
// 8 k and two channels, two LDR, two LDRD, eight AND, eight SMLAD (int8 x:
// in asm, dot_pair_s8).
// int8 x: SMLAD into int32 sums of 4096 (w x), runs of at most kRun
// values: |sum w x| <= 2^10 kRun = 2^18, so 4096 times it is in int32 and
// the arithmetic shift by 12 gives the run's sum itself, added to the bias
// in wrapping int32: ref's int32 sum.
// int16 x: SMLALD into int64 (exact), then the same shift: ref's int64 sum.
// K's last K % 8 values are ref's loop; K > kMaxK: the ref's sums. The
// epilogues are the shared ones (kernels/s4_rows.h) but linear_s8's, which
// runs linear_s8_dsp's requantization (fast::Requant, the same bits).
// Bit-exact with the ref.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "kernels/requantize.h"
#include "kernels/s4_rows.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMaxK = 512;  // values of one row of x expanded on the stack (1 KiB)
constexpr int32_t kRun = 256;   // int8 x: values per int32 run of 4096 (w x)
constexpr uint32_t kTop = 0xF000F000u;

inline uint32_t load_word(const uint8_t* p) {  // unaligned: v7E-M's LDR takes it
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline int32_t pair16(int32_t lo, int32_t hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xFFFFu) | (static_cast<uint32_t>(hi) << 16));
}
// (w << kShift) & mask in one AND (GCC would shift, then AND an immediate).
template <int kShift>
ATTN_ALWAYS_INLINE int32_t and_lsl(uint32_t mask, uint32_t w) {
  int32_t r;
  __asm__("and %0, %1, %2, lsl %3" : "=r"(r) : "r"(mask), "r"(w), "i"(kShift));
  return r;
}
inline int64_t mac(int64_t s, int32_t x, int32_t w) { return __smlald(x, w, s); }

// buf[4 j ..] = the pairs (x0, x4), (x1, x5), (x2, x6), (x3, x7) of x[8 j, 8 j + 8), for 8 j < K8.
template <typename Act>
void expand_row(const Act* x, int32_t K8, int32_t* buf) {
  for (int32_t k = 0; k < K8; k += 8, buf += 4) {
    buf[0] = pair16(x[k], x[k + 4]);
    buf[1] = pair16(x[k + 1], x[k + 5]);
    buf[2] = pair16(x[k + 2], x[k + 6]);
    buf[3] = pair16(x[k + 3], x[k + 7]);
  }
}

// int16 x: s + 4096 sum over the 8 values of weight word w of w x (xb: their expanded pairs), SMLALD.
ATTN_ALWAYS_INLINE int64_t dot8(int64_t s, const int32_t* xb, uint32_t w, uint32_t top) {
  s = mac(s, xb[0], and_lsl<12>(top, w));
  s = mac(s, xb[1], and_lsl<8>(top, w));
  s = mac(s, xb[2], and_lsl<4>(top, w));
  return mac(s, xb[3], static_cast<int32_t>(w & top));
}

// int8 x, two channels: s0, s1 += 4096 sum w x over the expanded pairs
// [xb, end) (8 k per step, end > xb) and the weight words from b (channel
// n) and b + ws (channel n + 1). Hand-scheduled (GCC's loop: 25
// instructions per step and 4 single loads of the pairs): per step two LDR,
// two LDRD, eight AND with a shifted operand, eight SMLAD, the loop's two.
inline void dot_pair_s8(const int32_t* xb, const int32_t* end, const uint8_t* b, ptrdiff_t ws, int32_t* s0,
                        int32_t* s1) {
  int32_t a0 = *s0, a1 = *s1, x0, x1, w0, w1, t;
  const uint32_t top = kTop;
  __asm__ volatile(
      "1:\n\t"
      "ldr    %[w1], [%[b], %[ws]]\n\t"
      "ldr    %[w0], [%[b]], #4\n\t"
      "ldrd   %[x0], %[x1], [%[xb]], #8\n\t"
      "and    %[t], %[top], %[w0], lsl #12\n\t"
      "smlad  %[a0], %[x0], %[t], %[a0]\n\t"
      "and    %[t], %[top], %[w1], lsl #12\n\t"
      "smlad  %[a1], %[x0], %[t], %[a1]\n\t"
      "and    %[t], %[top], %[w0], lsl #8\n\t"
      "smlad  %[a0], %[x1], %[t], %[a0]\n\t"
      "and    %[t], %[top], %[w1], lsl #8\n\t"
      "smlad  %[a1], %[x1], %[t], %[a1]\n\t"
      "ldrd   %[x0], %[x1], [%[xb]], #8\n\t"
      "and    %[t], %[top], %[w0], lsl #4\n\t"
      "smlad  %[a0], %[x0], %[t], %[a0]\n\t"
      "and    %[t], %[top], %[w1], lsl #4\n\t"
      "smlad  %[a1], %[x0], %[t], %[a1]\n\t"
      "and    %[w0], %[w0], %[top]\n\t"
      "smlad  %[a0], %[x1], %[w0], %[a0]\n\t"
      "and    %[w1], %[w1], %[top]\n\t"
      "smlad  %[a1], %[x1], %[w1], %[a1]\n\t"
      "cmp    %[xb], %[end]\n\t"
      "bne    1b\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [xb] "+r"(xb), [b] "+r"(b), [x0] "=&r"(x0), [x1] "=&r"(x1),
        [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t)
      : [ws] "r"(ws), [end] "r"(end), [top] "r"(top)
      : "cc", "memory");
  *s0 = a0, *s1 = a1;
}

// The sum over k in [k0, K) of x w, as ref's loop.
template <typename Act, typename Acc>
inline Acc tail_dot(const Act* x, const uint8_t* w, int32_t k0, int32_t K) {
  Acc acc = 0;
  for (int32_t k = k0; k < K; k += 2)
    acc += int32_t{x[k]} * s4_low(w[k / 2]) + int32_t{x[k + 1]} * s4_high(w[k / 2]);
  return acc;
}

// int8 x: two channels per dot_pair_s8 call (the last of an odd N as a pair
// of itself, ws = 0), one call per row of W when K8 <= kRun (the models'
// rows), else one per run of kRun values.
template <class Out>
void rows_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out out) {  // out: a local copy
  const int32_t K = x.cols, K8 = K & ~7;
  int32_t buf[kMaxK / 2];  // [K / 8][4] int16 pairs
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* xr = x.row(m);
    expand_row(xr, K8, buf);
    for (int32_t n = 0; n < w.rows; n += 2) {
      const bool pair = n + 1 < w.rows;
      const uint8_t* b0 = w.row(n);
      const ptrdiff_t ws = pair ? w.stride : 0;
      int32_t t0 = 0, t1 = 0;  // the sums over k < K8
      if (K8 > 0 && K8 <= kRun) {
        dot_pair_s8(buf, buf + K8 / 2, b0, ws, &t0, &t1);
        t0 >>= 12, t1 >>= 12;
      } else {
        for (int32_t k0 = 0; k0 < K8; k0 += kRun) {
          const int32_t k1 = K8 - k0 < kRun ? K8 : k0 + kRun;
          int32_t a0 = 0, a1 = 0;
          dot_pair_s8(buf + k0 / 2, buf + k1 / 2, b0 + k0 / 2, ws, &a0, &a1);
          t0 = fp::wrap_add(t0, a0 >> 12), t1 = fp::wrap_add(t1, a1 >> 12);
        }
      }
      if (K8 < K) {
        t0 = fp::wrap_add(t0, tail_dot<int8_t, int32_t>(xr, b0, K8, K));
        if (pair) t1 = fp::wrap_add(t1, tail_dot<int8_t, int32_t>(xr, b0 + ws, K8, K));
      }
      out(m, n, fp::wrap_add(bias != nullptr ? bias[n] : 0, t0));
      if (pair) out(m, n + 1, fp::wrap_add(bias != nullptr ? bias[n + 1] : 0, t1));
    }
  }
}

// int16 x: SMLALD into int64, two channels per pass (exact: no runs).
template <class Out>
void rows_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, Out out) {
  const int32_t K = x.cols, K8 = K & ~7;
  const uint32_t top = kTop;
  int32_t buf[kMaxK / 2];  // [K / 8][4] int16 pairs
  for (int32_t m = 0; m < x.rows; ++m) {
    const int16_t* xr = x.row(m);
    expand_row(xr, K8, buf);
    int32_t n = 0;
    for (; n + 2 <= w.rows; n += 2) {
      const uint8_t* b0 = w.row(n);
      const uint8_t* b1 = w.row(n + 1);
      int64_t s0 = 0, s1 = 0;
      const int32_t* xb = buf;
      for (int32_t k = 0; k < K8; k += 8, xb += 4) {
        s0 = dot8(s0, xb, load_word(b0 + k / 2), top);
        s1 = dot8(s1, xb, load_word(b1 + k / 2), top);
      }
      out(m, n, (bias != nullptr ? bias[n] : 0) + (s0 >> 12) + tail_dot<int16_t, int64_t>(xr, b0, K8, K));
      out(m, n + 1,
          (bias != nullptr ? bias[n + 1] : 0) + (s1 >> 12) + tail_dot<int16_t, int64_t>(xr, b1, K8, K));
    }
    if (n < w.rows) {
      const uint8_t* b0 = w.row(n);
      int64_t s0 = 0;
      for (int32_t k = 0; k < K8; k += 8) s0 = dot8(s0, buf + k / 2, load_word(b0 + k / 2), top);
      out(m, n, (bias != nullptr ? bias[n] : 0) + (s0 >> 12) + tail_dot<int16_t, int64_t>(xr, b0, K8, K));
    }
  }
}

// Rows deeper than kMaxK (past the stack buffer: W2 of an FFN wider than 512):
// the ref's sums, out of line and compiled for size with GCC (an image carries one
// per epilogue it links).
template <typename Act, typename Acc, class Out>
ATTN_COLD_FLAT ATTN_NOINLINE void rows_ref(Matrix<const Act> x, ConstMatS4 w, const Acc* bias, Out out) {
  dot_rows_s4_ref(x, w, bias, out);
}

}  // namespace

template <>
struct S4DotOps<Isa::kDsp> {
  template <class Out>
  static void rows(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out out) {
    if (x.cols > kMaxK) return rows_ref(x, w, bias, out);
    rows_s8(x, w, bias, out);
  }
  template <class Out>
  static void rows(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, Out out) {
    if (x.cols > kMaxK) return rows_ref(x, w, bias, out);
    rows_s16(x, w, bias, out);
  }
};
#if ATTN_WITH_S8
namespace {
// RequantS8Into's requantization through fast::Requant: the same bits for
// multiplier >= 0 (kernels/requantize.h; the forwards validate it), in a
// quarter of the instructions, as linear_s8_dsp's.
struct RequantS8FastInto {
  // p's fields as copies: the int8 stores could alias p (GCC reloaded them per channel).
  const int32_t* multiplier;
  const int32_t* shift;
  int32_t zo, act_min, act_max;
  MatS8 y;
  ATTN_ALWAYS_INLINE void operator()(int32_t m, int32_t c, int32_t acc) const {
    const int32_t out = zo + fast::Requant(multiplier[c], shift[c])(acc);
    y.row(m)[c] = static_cast<int8_t>(fp::clamp_i32(out, act_min, act_max));
  }
};
}  // namespace
template <>
void S4Rows<Isa::kDsp>::linear_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const LinearS8Params& p,
                                  MatS8 y) {
  S4DotOps<Isa::kDsp>::rows(
      x, w, bias, RequantS8FastInto{p.multiplier, p.shift, p.output_zero_point, p.act_min, p.act_max, y});
}
#endif
template struct S4Rows<Isa::kDsp>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
