// linear, int8, Cortex-M DSP extension: y = requant(x W^T + b), four rows of
// x at a time: the rows are expanded once to SMLAD pairs (minus the input zero
// point) in a stack buffer, and each weight word is unpacked once (SXTB16)
// for the four rows (ATTN_DSP_SMLAD_STEP, 16 instructions per 16 MACs). With a
// bias, K a multiple of 4 and shifts in [-23, -2] (the forward's projections)
// the whole channel loop is asm (channels_asm): the last M % 4 rows of M >= 4
// as the last four rows again, fewer than four rows (a decode step's
// projections) one at a time, two channels per pass (channels1_asm, 11
// instructions per 8 MACs, K up to 4 dsp::kExpandMaxK). Otherwise rows4
// (rows past M as the last row again), and, for inputs wider than its buffer
// or a narrower output clamp, linear_s8_ref (small code: the flash budget of
// an s8 image is 12 KiB).
// Same int32 sums and the same requantization as linear_s8_ref: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dsp_s8.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/requantize.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

// acc[r] += sum_{K4 <= k < K} (a[r][k] - za) b[k]: the last K % 4 columns.
// Out of line: keeps rows4's registers for its hot loop.
ATTN_COLD_CODE __attribute__((noinline)) void tail4(const int8_t* const* a, const int8_t* b, int32_t K4,
                                                    int32_t K, int32_t za, int32_t* acc) {
  for (int32_t k = K4; k < K; ++k) {
    for (size_t r = 0; r < 4; ++r) acc[r] += (int32_t{a[r][k]} - za) * int32_t{b[k]};
  }
}

// Rows m .. m + 3 of y (past the last row: the last row again, the same
// bits stored twice), channels [n0, N), x expanded once (K <=
// dsp::kExpandMaxK), output clamp [-128, 127]. Compiled for size (flash):
// the forward's projections take all_asm; this is for no bias, K % 4 != 0
// and shifts all_asm does not fold.
ATTN_COLD_CODE void rows4(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y,
                          int32_t m, int32_t n0) {
  const int32_t K = x.cols;
  const int32_t K4 = K & ~3;
  int32_t buf[2 * dsp::kExpandMaxK];  // [K / 4][4 rows][even, odd] int16 pairs
  const int8_t* a[4];                 // [K]
  int8_t* yr[4];                      // [N]
  for (int32_t r = 0; r < 4; ++r) {
    const int32_t i = m + r < x.rows ? m + r : x.rows - 1;
    a[r] = x.row(i);
    yr[r] = y.row(i);
  }
  dsp::expand4(a, K4, p.input_zero_point, buf);
  // Locals: the int8 stores below could alias p as far as the compiler knows.
  const int32_t zo = p.output_zero_point;
  const int32_t* const mult = p.multiplier;  // [N]
  const int32_t* const shift = p.shift;      // [N]
  for (int32_t n = n0; n < w.rows; ++n) {
    const int8_t* b = w.row(n);  // [K]
    const int32_t b0 = bias != nullptr ? bias[n] : 0;
    int32_t acc[4] = {b0, b0, b0, b0};
    dsp::dot4_expanded(buf, b, K4, acc);
    if (K4 < K) tail4(a, b, K4, K, p.input_zero_point, acc);
    const fast::Requant rq(mult[n], shift[n]);
#pragma GCC unroll 1  // one copy of the requantization (flash: a path for rare shifts)
    for (size_t r = 0; r < 4; ++r) yr[r][n] = static_cast<int8_t>(dsp::ssat8(zo + rq(acc[r])));
  }
}

// The folded requantization (fast::Requant, shift <= -2) of the accumulator
// in register %[s], in place, plus the output zero point, SSAT to int8.
// Channel constants: %[t0] multiplier, %[t1] 2^(right - 2) + zo 2^(right - 1)
// (the zero point added before the shift: exact for right <= 23, where
// |hi word| + 128 * 2^(right - 1) stays below 2^31), %[bo] right - 1.
// Scratch: %[be] and %[buf] (reloaded at each channel's start).
#define ATTN_DSP_REQUANT(s)              \
  "and    %[be], %[" s                   \
  "], #0x80000000\n\t"                   \
  "orr    %[be], %[be], #0x40000000\n\t" \
  "add    %[buf], %[t1], %[" s           \
  "], asr #31\n\t"                       \
  "smlal  %[be], %[buf], %[" s           \
  "], %[t0]\n\t"                         \
  "asr    %[buf], %[buf], %[bo]\n\t"     \
  "ssat   %[" s "], #8, %[buf]\n\t"

// One step of channels1_asm: four k of the expanded row (%[buf], two int16
// pairs in %[t1], %[bo]) against weight rows n (%[b], post-incremented) and
// n + 1 (%[b] + %[ws]), into %[s0] and %[s1].
#define ATTN_DSP_SMLAD_STEP1              \
  "ldrd   %[t1], %[bo], [%[buf]], #8\n\t" \
  "ldr    %[t0], [%[b], %[ws]]\n\t"       \
  "sxtb16 %[be], %[t0]\n\t"               \
  "sxtb16 %[t0], %[t0], ror #8\n\t"       \
  "smlad  %[s1], %[t1], %[be], %[s1]\n\t" \
  "smlad  %[s1], %[bo], %[t0], %[s1]\n\t" \
  "ldr    %[t0], [%[b]], #4\n\t"          \
  "sxtb16 %[be], %[t0]\n\t"               \
  "sxtb16 %[t0], %[t0], ror #8\n\t"       \
  "smlad  %[s0], %[t1], %[be], %[s0]\n\t" \
  "smlad  %[s0], %[bo], %[t0], %[s0]\n\t"

}  // namespace

// The whole channel loop in one asm block, ~44 instructions per channel
// around the SMLAD steps (accumulator start, requantization, four strided
// stores) instead of GCC's ~110, and the steps four to a loop iteration (15
// instructions per 16 MACs, plus 2 per 64). The steps' loop ends at the end
// of the expanded rows, the same address for every channel (%[end], set
// once). Thirteen registers: the loop's other constants and the output
// pointer live in ctx.
void dsp::channels_asm(const int32_t* buf, const Channel* ch, int32_t nc, const int8_t* w, ptrdiff_t ws,
                       int32_t K, int8_t* o, ptrdiff_t ys, ptrdiff_t cs) {
  int32_t ctx[8] = {
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(buf)),      // 0: start of the expanded rows
      0,                                                           // 4: unused
      static_cast<int32_t>(ws - K),                                // 8: from a row's end to the next row
      0,                                                           // 12: the steps' entry (set by the asm)
      static_cast<int32_t>(ys),                                    // 16: bytes between rows of y
      static_cast<int32_t>(cs),                                    // 20: bytes between columns of y
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(o)),        // 24: y[0, n] (moves)
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(ch + nc)),  // 28: end of the channels
  };
  const int8_t* b = w;
  const Channel* c = ch;  // channel n
  const int32_t* bp;
  const int32_t* const end = buf + 2 * K;  // the expanded rows' end: 8 words per step of 4 k
  int32_t s0, s1, s2, s3, t1, be, bo;
  int32_t t0 = K;  // bytes of a weight row: 4 * steps
  __asm__ volatile(
      // The steps' loop is unrolled four times; a channel enters it at
      // step (4 - steps % 4) % 4, whose address (Thumb bit set) is worked
      // out here once, from a byte table of step offsets, into ctx[3].
      "ubfx   %[t0], %[t0], #2, #2\n\t"
      "adr.w  %[t1], 5f\n\t"
      "ldrb   %[t0], [%[t1], %[t0]]\n\t"
      "add    %[t1], %[t1], %[t0], lsl #1\n\t"
      "orr    %[t1], %[t1], #1\n\t"
      "str    %[t1], [%[ctx], #12]\n\t"
      "b      0f\n\t"
      "5:\n\t"
      ".byte  (10f - 5b) / 2, (13f - 5b) / 2, (12f - 5b) / 2, (11f - 5b) / 2\n\t"
      "0:\n\t"
      "ldrd   %[s0], %[s1], [%[ch], #4]\n\t"
      "ldrd   %[s2], %[s3], [%[ch], #12]\n\t"
      "ldr    %[buf], [%[ctx]]\n\t"
      "ldr    pc, [%[ctx], #12]\n\t"
      "10:\n\t" ATTN_DSP_SMLAD_STEP "11:\n\t" ATTN_DSP_SMLAD_STEP "12:\n\t" ATTN_DSP_SMLAD_STEP
      "13:\n\t" ATTN_DSP_SMLAD_STEP
      "cmp    %[buf], %[end]\n\t"
      "bne    10b\n\t"
      "ldr    %[t0], [%[ctx], #8]\n\t"
      "add    %[b], %[b], %[t0]\n\t"
      "ldrd   %[t0], %[t1], [%[ch], #20]\n\t"
      "ldr    %[bo], [%[ch]], #28\n\t"
      "ldr    %[buf], [%[ctx], #28]\n\t"
      "cmp    %[ch], %[buf]\n\t"  // the flags live to the final bne
      ATTN_DSP_REQUANT("s0") ATTN_DSP_REQUANT("s1") ATTN_DSP_REQUANT("s2") ATTN_DSP_REQUANT("s3")
      "ldrd   %[t0], %[t1], [%[ctx], #16]\n\t"
      "ldr    %[be], [%[ctx], #24]\n\t"
      "strb   %[s1], [%[be], %[t0]]\n\t"
      "add    %[buf], %[be], %[t0], lsl #1\n\t"
      "strb   %[s2], [%[buf]]\n\t"
      "strb   %[s3], [%[buf], %[t0]]\n\t"
      "strb   %[s0], [%[be]]\n\t"
      "add    %[be], %[be], %[t1]\n\t"
      "str    %[be], [%[ctx], #24]\n\t"
      "bne    0b\n\t"
      : [b] "+r"(b), [ch] "+r"(c), [buf] "=&r"(bp), [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2),
        [s3] "=&r"(s3), [t0] "+&r"(t0), [t1] "=&r"(t1), [be] "=&r"(be), [bo] "=&r"(bo)
      : [ctx] "r"(ctx), [end] "r"(end)
      : "cc", "memory");
}

// One row, two channels (n, n + 1) per pass over it: per four k one LDRD of
// the expanded row, and per channel one weight word, two SXTB16 and two
// SMLADs (11 instructions per 8 MACs, four steps to a loop iteration), then
// both requantizations and stores: ~15 instructions per channel around the
// steps. Channel n + 1's weights are read at [b, ws] beside channel n's
// post-incremented [b], so the loop needs no second pointer.
void dsp::channels1_asm(const int32_t* buf, const Channel* ch, int32_t pairs, const int8_t* w, ptrdiff_t ws,
                        int32_t K, int8_t* o, ptrdiff_t cs) {
  int32_t ctx[7] = {
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(buf)),  // 0: start of the expanded row
      0,                                                       // 4: unused
      static_cast<int32_t>(2 * ws - K),                        // 8: from a row's end to the next pair
      0,                                                       // 12: the steps' entry (set by the asm)
      static_cast<int32_t>(cs),                                // 16: bytes between columns of y
      static_cast<int32_t>(2 * cs),                            // 20: bytes between pairs of y
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(ch + 2 * pairs)),  // 24: end of the channels
  };
  const int8_t* b = w;
  const Channel* c = ch;  // channels n, n + 1
  int8_t* y = o;
  const int32_t* bp;
  const int32_t* const end = buf + K / 2;  // the expanded row's end: 2 words per step of 4 k
  int32_t s0, s1, t1, be, bo;
  int32_t t0 = K;
  __asm__ volatile(
      "ubfx   %[t0], %[t0], #2, #2\n\t"
      "adr.w  %[t1], 5f\n\t"
      "ldrb   %[t0], [%[t1], %[t0]]\n\t"
      "add    %[t1], %[t1], %[t0], lsl #1\n\t"
      "orr    %[t1], %[t1], #1\n\t"
      "str    %[t1], [%[ctx], #12]\n\t"
      "b      0f\n\t"
      "5:\n\t"
      ".byte  (10f - 5b) / 2, (13f - 5b) / 2, (12f - 5b) / 2, (11f - 5b) / 2\n\t"
      "0:\n\t"
      "ldr    %[s0], [%[ch], #4]\n\t"
      "ldr    %[s1], [%[ch], #32]\n\t"
      "ldr    %[buf], [%[ctx]]\n\t"
      "ldr    pc, [%[ctx], #12]\n\t"
      "10:\n\t" ATTN_DSP_SMLAD_STEP1 "11:\n\t" ATTN_DSP_SMLAD_STEP1 "12:\n\t" ATTN_DSP_SMLAD_STEP1
      "13:\n\t" ATTN_DSP_SMLAD_STEP1
      "cmp    %[buf], %[end]\n\t"
      "bne    10b\n\t"
      "ldr    %[t0], [%[ctx], #8]\n\t"
      "add    %[b], %[b], %[t0]\n\t"
      "ldrd   %[t0], %[t1], [%[ch], #20]\n\t"
      "ldr    %[bo], [%[ch]], #28\n\t" ATTN_DSP_REQUANT("s0")
      "ldrd   %[t0], %[t1], [%[ch], #20]\n\t"
      "ldr    %[bo], [%[ch]], #28\n\t" ATTN_DSP_REQUANT("s1")
      "ldrd   %[t0], %[t1], [%[ctx], #16]\n\t"
      "strb   %[s1], [%[o], %[t0]]\n\t"
      "strb   %[s0], [%[o]]\n\t"
      "add    %[o], %[o], %[t1]\n\t"
      "ldr    %[buf], [%[ctx], #24]\n\t"
      "cmp    %[ch], %[buf]\n\t"
      "bne    0b\n\t"
      : [b] "+r"(b), [ch] "+r"(c), [o] "+r"(y), [buf] "=&r"(bp), [s0] "=&r"(s0), [s1] "=&r"(s1),
        [t0] "+&r"(t0), [t1] "=&r"(t1), [be] "=&r"(be), [bo] "=&r"(bo)
      : [ctx] "r"(ctx), [ws] "r"(ws), [end] "r"(end)
      : "cc", "memory");
}
#undef ATTN_DSP_SMLAD_STEP1
#undef ATTN_DSP_REQUANT

namespace {

// ch[i] for channels i < nc (bias b, requantization mult and shift), or
// false if a shift is not in [-23, -2] (the folded forms of channels_asm).
// fast::Requant's hi_base + zo 2^hi_shift = 2^(right - 2) + zo 2^(right - 1)
// is (2 zo + 1) 2^(right - 2): one shift. Paid per call (a forward's query
// and output projections work out their channels per tile): -O2, 15
// instructions per channel (-Os: 22).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O2")))
#endif
bool channel_constants(const int32_t* b, const int32_t* mult, const int32_t* shift, int32_t nc, int32_t zo,
                       dsp::Channel* ch) {
  const uint32_t zo21 = 2 * static_cast<uint32_t>(zo) + 1;
  for (int32_t i = 0; i < nc; ++i) {
    const int32_t sh = shift[i];
    if (sh > -2 || sh < -23) return false;
    const int32_t bi = b[i];
    ch[i] = dsp::Channel{-sh - 1, {bi, bi, bi, bi}, mult[i], static_cast<int32_t>(zo21 << (-sh - 2))};
  }
  return true;
}

// Channels [0, n) of y, n returned: blocks of kChannels channels while every
// shift of a block folds (in [-23, -2]; checked while working out the
// block's constants, before any of its outputs is written), four rows at a
// time through channels_asm (M < 4: one at a time through channels1_asm).
// Needs a bias and K a multiple of 4. y[m, n] is at y + m ys + n cs.
ATTN_COLD_CODE int32_t all_asm(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p,
                               int8_t* y, ptrdiff_t ys, ptrdiff_t cs) {
  const int32_t K = x.cols;
  // One group of four rows (a forward's query tile): expanded once for every block of channels.
  const bool one_group = x.rows == 4;
  dsp::Channel ch[dsp::kChannels];
  int32_t buf[2 * dsp::kExpandMaxK];  // [K / 4][4 rows or 1][even, odd] int16 pairs
  for (int32_t n0 = 0; n0 < w.rows; n0 += dsp::kChannels) {
    const int32_t nc = w.rows - n0 < dsp::kChannels ? w.rows - n0 : dsp::kChannels;
    if (!channel_constants(bias + n0, p.multiplier + n0, p.shift + n0, nc, p.output_zero_point, ch))
      return n0;
    // Fewer than four rows one at a time, two channels per pass over the row.
    if (x.rows < 4) {
      if (nc % 2 != 0) ch[nc] = ch[nc - 1];  // the last channel, as a pair of itself (nc < kChannels)
      for (int32_t m = 0; m < x.rows; ++m) {
        if (n0 == 0 || x.rows > 1) dsp::expand1(x.row(m), K, p.input_zero_point, buf);
        int8_t* const o = y + m * ys + n0 * cs;
        if (nc >= 2) dsp::channels1_asm(buf, ch, nc / 2, w.row(n0), w.stride, K, o, cs);
        if (nc % 2 != 0)
          dsp::channels1_asm(buf, ch + nc - 1, 1, w.row(n0 + nc - 1), 0, K, o + (nc - 1) * cs, 0);
      }
      continue;
    }
    // Four rows at a time, the last M % 4 rows as the last four rows again
    // (rows computed twice, the same bits).
    for (int32_t m = 0; m < x.rows; m += 4) {
      if (m + 4 > x.rows) m = x.rows - 4;
      const int8_t* a[4] = {x.row(m), x.row(m + 1), x.row(m + 2), x.row(m + 3)};  // [K]
      if (n0 == 0 || !one_group) {      // else buf holds these rows already
        if (p.input_zero_point == 0) {  // the forward's projections (zero point folded into the bias)
          dsp::expand4<false>(a, K, 0, buf);
        } else {
          dsp::expand4(a, K, p.input_zero_point, buf);
        }
      }
      dsp::channels_asm(buf, ch, nc, w.row(n0), w.stride, K, y + m * ys + n0 * cs, ys, cs);
    }
  }
  return w.rows;
}

// The widest x the stack buffer takes: four rows of kExpandMaxK, or, for
// fewer than four rows (expanded one at a time), one row of four times that.
constexpr int32_t max_k(int32_t rows) { return rows < 4 ? 4 * dsp::kExpandMaxK : dsp::kExpandMaxK; }

}  // namespace

void linear_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  const bool full_clamp = p.act_min == -128 && p.act_max == 127;
  const int32_t n0 = full_clamp && bias != nullptr && x.cols % 4 == 0 && x.cols > 0 && x.cols <= max_k(x.rows)
                         ? all_asm(x, w, bias, p, y.data, y.stride, 1)
                         : 0;
  if (n0 == w.rows) return;
  // The channels all_asm does not take (from the first block with a shift
  // it does not fold on, or all of them): rows4, or, for x wider than its
  // buffer or a narrower output clamp, the portable kernel over the whole
  // output (the channels all_asm wrote again: the same bits).
  if (!full_clamp || x.cols > dsp::kExpandMaxK) {
    linear_s8_ref(x, w, bias, p, y);
    return;
  }
  for (int32_t m = 0; m < x.rows; m += 4) rows4(x, w, bias, p, y, m, n0);
}

int32_t linear_s8_t_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 yt) {
  if (bias == nullptr || x.cols % 4 != 0 || x.cols == 0 || x.cols > max_k(x.rows) || p.act_min != -128 ||
      p.act_max != 127) {
    return 0;
  }
  return all_asm(x, w, bias, p, yt.data, 1, yt.stride);  // y[m, n] = yt[n, m]
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
