// kernels/dsp/dsp_s8.h: the Cortex-M DSP-extension (SMLAD) inner loops shared by
// the *_s8_dsp kernels: blocks of int8 dot products with zero points, four
// bytes per step unpacked to two int16 pairs (SXTB16), two SMLADs per pair of
// rows; and SMMULR, for the whole-model norm and residual kernels. Only
// compiled where ATTN_HAVE_DSP (M4, M7, M33).
#pragma once

#include "kernels/arch.h"
#include "kernels/requantize.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include <cstdint>
#include <cstring>

namespace attn {
namespace detail {
namespace dsp {

// Four int8 at p (any alignment: v7E-M loads unaligned words).
inline int32_t load4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// Two int16 at p.
inline int32_t load2x16(const int16_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// round(a b / 2^32), half up (mulhi_round32): SMMULR.
inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// z in both int16 halves, for SSUB16.
inline int32_t splat16(int32_t z) {
  return static_cast<int32_t>((static_cast<uint32_t>(z) & 0xFFFFu) | (static_cast<uint32_t>(z) << 16));
}
// Bytes 0 and 2 (even) and 1 and 3 (odd) of w as int16 pairs, minus z (if kZ).
template <bool kZ>
inline void unpack(int32_t w, int32_t z2, int32_t* even, int32_t* odd) {
  int32_t e = __sxtb16(w);
  int32_t o;  // SXTB16 with its free rotation (ACLE has no intrinsic for it)
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(o) : "r"(w));
  if (kZ) {
    e = __ssub16(e, z2);
    o = __ssub16(o, z2);
  }
  *even = e;
  *odd = o;
}

// clamp(v, -128, 127) in one SSAT.
inline int32_t ssat8(int32_t v) {
  int32_t r;
  __asm__("ssat %0, #8, %1" : "=r"(r) : "r"(v));
  return r;
}

// Rows of up to kExpandMaxK int8 are expanded once to SMLAD pairs, so that
// the weights (or keys) are unpacked once for four rows: 1 KiB of stack (one
// row of up to 4 kExpandMaxK for channels1_asm).
constexpr int32_t kExpandRows = 4;
constexpr int32_t kExpandMaxK = 128;

// buf[(k / 4) * 8 + 2 r + {0, 1}] = the even / odd int16 pair of a[r][k, k + 4)
// minus za, for r < 4 and k < K4 (a multiple of 4, <= kExpandMaxK). kZ =
// false: za is 0 (no subtraction).
template <bool kZ = true>
__attribute__((noinline)) void expand4(const int8_t* const* a, int32_t K4, int32_t za, int32_t* buf) {
  const int32_t za2 = splat16(za);
  for (int32_t k = 0; k < K4; k += 4, buf += 8) {
    for (size_t r = 0; r < 4; ++r) unpack<kZ>(load4(a[r] + k), za2, &buf[2 * r], &buf[2 * r + 1]);
  }
}

// buf[2 i + {0, 1}] = the even / odd int16 pair of a[4 i, 4 i + 4) minus za,
// for 4 i < K4 (a multiple of 4): one row, for channels1_asm.
__attribute__((noinline)) inline void expand1(const int8_t* a, int32_t K4, int32_t za, int32_t* buf) {
  const int32_t za2 = splat16(za);
  for (int32_t k = 0; k < K4; k += 4, buf += 2) unpack<true>(load4(a + k), za2, &buf[0], &buf[1]);
}

// One step of the SMLAD loops (asm text): four k of b (pointer %[b], post-
// incremented) against four rows expanded by expand4 (%[buf], post-
// incremented by 32 bytes), accumulated into %[s0..s3]; scratch %[t0],
// %[t1], %[be], %[bo]. 15 instructions per 16 MACs.
#define ATTN_DSP_SMLAD_STEP               \
  "ldr    %[t0], [%[b]], #4\n\t"          \
  "sxtb16 %[be], %[t0]\n\t"               \
  "sxtb16 %[bo], %[t0], ror #8\n\t"       \
  "ldrd   %[t0], %[t1], [%[buf]], #8\n\t" \
  "smlad  %[s0], %[t0], %[be], %[s0]\n\t" \
  "smlad  %[s0], %[t1], %[bo], %[s0]\n\t" \
  "ldrd   %[t0], %[t1], [%[buf]], #8\n\t" \
  "smlad  %[s1], %[t0], %[be], %[s1]\n\t" \
  "smlad  %[s1], %[t1], %[bo], %[s1]\n\t" \
  "ldrd   %[t0], %[t1], [%[buf]], #8\n\t" \
  "smlad  %[s2], %[t0], %[be], %[s2]\n\t" \
  "smlad  %[s2], %[t1], %[bo], %[s2]\n\t" \
  "ldrd   %[t0], %[t1], [%[buf]], #8\n\t" \
  "smlad  %[s3], %[t0], %[be], %[s3]\n\t" \
  "smlad  %[s3], %[t1], %[bo], %[s3]\n\t"

// acc[r] += sum_{k < K4} (a[r][k] - za) * b[k] over rows expanded by expand4:
// per four k, one load and two SXTB16 of b, eight SMLADs.
inline void dot4_expanded(const int32_t* buf, const int8_t* b, int32_t K4, int32_t* acc) {
  if (K4 <= 0) return;
  int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
  const int8_t* const end = b + K4;
  int32_t t0, t1, be, bo;
  // Hand-scheduled: GCC 12 spills the eight pairs of the C version (33
  // instructions per step instead of 17). Per four k: ldr + 2 sxtb16 of b,
  // then per row one ldrd of its two pairs and two SMLADs. Four steps per
  // loop iteration (15 instructions per 16 MACs, plus 2 per 64); the first
  // iteration enters at step (4 - steps % 4) % 4 through a byte table.
  __asm__ volatile(
      "sub    %[t0], %[end], %[b]\n\t"
      "ubfx   %[t0], %[t0], #2, #2\n\t"
      "tbb    [pc, %[t0]]\n\t"
      "5:\n\t"
      ".byte  (10f - 5b) / 2, (13f - 5b) / 2, (12f - 5b) / 2, (11f - 5b) / 2\n\t"
      "10:\n\t" ATTN_DSP_SMLAD_STEP "11:\n\t" ATTN_DSP_SMLAD_STEP "12:\n\t" ATTN_DSP_SMLAD_STEP
      "13:\n\t" ATTN_DSP_SMLAD_STEP
      "cmp    %[b], %[end]\n\t"
      "bne    10b\n\t"
      : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [buf] "+r"(buf), [b] "+r"(b),
        [t0] "=&r"(t0), [t1] "=&r"(t1), [be] "=&r"(be), [bo] "=&r"(bo)
      : [end] "r"(end)
      : "cc", "memory");
  acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3;
}

// One output channel of channels_asm: the four rows' accumulator start
// (linear: the channel's bias in each) and the folded requantization
// (fast::Requant, shift in [-23, -2]) plus the output zero point. hi_shift
// first: the asm's last read of a channel post-increments to the next one.
struct Channel {
  int32_t hi_shift;  // fast::Requant::hi_shift
  int32_t init[4];
  int32_t multiplier;
  int32_t hi_base;  // fast::Requant::hi_base + (output zero point << hi_shift)
};
constexpr int32_t kChannels = 32;  // per channels_asm call (the callers' stack blocks: 896 B)

// y[r, n] = ssat8(requant(ch[n].init[r] + sum_k x[r, k] w[n, k])) for rows
// r < 4 (x expanded by expand4 in buf, K = 4 * steps > 0 bytes) and the
// channels n < nc (weight rows from w, stride ws), y[r, n] at o + r ys + n cs
// (rows stored 1, 2, 3, then 0: ys = 0 leaves row 0's). The shared loop of
// linear_s8_dsp (y = x W^T + b) and weighted_sum_vt_s8_dsp (o = P V).
void channels_asm(const int32_t* buf, const Channel* ch, int32_t nc, const int8_t* w, ptrdiff_t ws, int32_t K,
                  int8_t* o, ptrdiff_t ys, ptrdiff_t cs);

// One row: y[n] = ssat8(requant(ch[n].init[0] + sum_k x[k] w[n, k])) for
// channels n < 2 pairs, two channels per pass over the row (x expanded by
// expand1 in buf, K = 4 * steps > 0 bytes), weight row n at w + n ws, y[n]
// at o + n cs. ws = cs = 0 with pairs = 1 and ch[1] = ch[0]: one channel.
void channels1_asm(const int32_t* buf, const Channel* ch, int32_t pairs, const int8_t* w, ptrdiff_t ws,
                   int32_t K, int8_t* o, ptrdiff_t cs);

}  // namespace dsp
}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
