// scores, int8, Cortex-M DSP extension: s = round((q - zq)(k - zk)^T / 2^shift),
// four query rows at a time (then, for head_dim <= 16, two: a decode step's
// query heads of one K/V head; the last one alone), expanded once to SMLAD
// pairs; each key word is unpacked once for the rows, and the loop over keys
// is one asm block (keys_short_asm / keys_short2_asm for head_dim <= 16, their
// steps unrolled; keys_asm above). Head_dim not a multiple of 4 or above
// dsp::kExpandMaxK goes through scores_s8_ref (flash: the s8 runtime must fit
// 12 KiB). Same int32 sums as scores_s8_ref: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dsp_s8.h"
#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

// Every key j of rows [t, t + 4) of s, for head_dim d a multiple of 4
// (= 4 * steps, d > 0): the whole key loop in one asm block, so that the
// per-key work around the SMLAD steps (accumulators from the zero-point
// correction plus the rounding constant, shift, four strided stores) is ~24
// instructions instead of GCC's ~54 (it spills the four output pointers).
void keys_asm(const int32_t* buf, const int32_t* init, ConstMatS8 k, int32_t shift, MatS32 s, int32_t t) {
  const int32_t d = k.cols;
  // The loop's constants, read by offset from one pointer (registers are short).
  const int32_t ctx[11] = {
      init[0],  // 0..12: the accumulators' start
      init[1],
      init[2],
      init[3],
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(buf)),  // 16: start of the expanded rows
      d,                                                       // 20: bytes of a key
      0,                                                       // 24: unused
      shift,                                                   // 28
      static_cast<int32_t>(s.stride * 4),                      // 32: bytes between rows of s
      static_cast<int32_t>(k.stride - d),                      // 36: from a key's end to the next key
      static_cast<int32_t>(reinterpret_cast<uintptr_t>(s.row(t) + k.rows)),  // 40: end of row t of s
  };
  const int8_t* b = k.data;  // key j
  int32_t* o = s.row(t);     // s[t, j]
  const int32_t* bp;
  const int8_t* end;
  int32_t s0, s1, s2, s3, t0, t1, be, bo;
  __asm__ volatile(
      "0:\n\t"
      "ldrd   %[s0], %[s1], [%[ctx]]\n\t"
      "ldrd   %[s2], %[s3], [%[ctx], #8]\n\t"
      "ldr    %[buf], [%[ctx], #16]\n\t"
      "ldr    %[t0], [%[ctx], #20]\n\t"
      "add    %[end], %[b], %[t0]\n\t"
      "tst    %[t0], #4\n\t"
      "bne    2f\n\t"
      "1:\n\t" ATTN_DSP_SMLAD_STEP "2:\n\t" ATTN_DSP_SMLAD_STEP
      "cmp    %[b], %[end]\n\t"
      "bne    1b\n\t"
      "ldr    %[t0], [%[ctx], #36]\n\t"
      "add    %[b], %[b], %[t0]\n\t"
      "ldr    %[t1], [%[ctx], #28]\n\t"
      "asr    %[s0], %[s0], %[t1]\n\t"
      "asr    %[s1], %[s1], %[t1]\n\t"
      "asr    %[s2], %[s2], %[t1]\n\t"
      "asr    %[s3], %[s3], %[t1]\n\t"
      "ldr    %[t0], [%[ctx], #32]\n\t"
      "str    %[s1], [%[o], %[t0]]\n\t"
      "add    %[be], %[o], %[t0], lsl #1\n\t"
      "str    %[s2], [%[be]]\n\t"
      "str    %[s3], [%[be], %[t0]]\n\t"
      "str    %[s0], [%[o]], #4\n\t"
      "ldr    %[t0], [%[ctx], #40]\n\t"
      "cmp    %[o], %[t0]\n\t"
      "bne    0b\n\t"
      : [b] "+r"(b), [o] "+r"(o), [buf] "=&r"(bp), [end] "=&r"(end), [s0] "=&r"(s0), [s1] "=&r"(s1),
        [s2] "=&r"(s2), [s3] "=&r"(s3), [t0] "=&r"(t0), [t1] "=&r"(t1), [be] "=&r"(be), [bo] "=&r"(bo)
      : [ctx] "r"(ctx)
      : "cc", "memory");
}

// One SMLAD step of keys_short_asm: four k of key b (post-incremented)
// against step i of the four rows, read from ctx at byte 32 + 32 i.
#define ATTN_SCORES_STEP(i)                  \
  "ldr    %[t0], [%[b]], #4\n\t"             \
  "sxtb16 %[be], %[t0]\n\t"                  \
  "sxtb16 %[bo], %[t0], ror #8\n\t"          \
  "ldrd   %[t0], %[t1], [%[ctx], #32+32*" #i \
  "]\n\t"                                    \
  "smlad  %[s0], %[t0], %[be], %[s0]\n\t"    \
  "smlad  %[s0], %[t1], %[bo], %[s0]\n\t"    \
  "ldrd   %[t0], %[t1], [%[ctx], #40+32*" #i \
  "]\n\t"                                    \
  "smlad  %[s1], %[t0], %[be], %[s1]\n\t"    \
  "smlad  %[s1], %[t1], %[bo], %[s1]\n\t"    \
  "ldrd   %[t0], %[t1], [%[ctx], #48+32*" #i \
  "]\n\t"                                    \
  "smlad  %[s2], %[t0], %[be], %[s2]\n\t"    \
  "smlad  %[s2], %[t1], %[bo], %[s2]\n\t"    \
  "ldrd   %[t0], %[t1], [%[ctx], #56+32*" #i \
  "]\n\t"                                    \
  "smlad  %[s3], %[t0], %[be], %[s3]\n\t"    \
  "smlad  %[s3], %[t1], %[bo], %[s3]\n\t"

// keys_asm for head_dim d = 4 n, n <= kShortSteps (4..16, where the per-key
// work is a large part of a score): the four rows' n steps expanded into
// ctx by the caller and read at fixed offsets, the steps unrolled (TBB
// enters at step 4 - n), the key stride and the shift in registers:
// 13 + 15 n instructions per key (17 + 15 n with a score shift) instead of
// keys_asm's ~24 + 16 n.
constexpr int32_t kShortSteps = 4;
void keys_short_asm(int32_t* ctx, const int32_t* init, ConstMatS8 k, int32_t shift, MatS32 s, int32_t t) {
  // ctx (int32 words): the loop's constants, then the rows, read by offset
  // from one pointer (registers are short). Words 8 + 8 (4 - n) .. hold the
  // rows' n steps already (the caller expands them there).
  const int32_t n = k.cols / 4;
  for (size_t r = 0; r < 4; ++r) ctx[r] = init[r];  // 0..12: the accumulators' start
  // 16: the entry step's address, 28: the shifts' or the stores' (set by the asm)
  ctx[5] = static_cast<int32_t>(s.stride * 4);  // 20: bytes between rows of s
  ctx[6] = static_cast<int32_t>(reinterpret_cast<uintptr_t>(s.row(t) + k.rows));  // 24: end of row t of s
  const int8_t* b = k.data;                                                       // key j
  int32_t* o = s.row(t);                                                          // s[t, j]
  const int32_t gap = static_cast<int32_t>(k.stride) - k.cols;  // from a key's end to the next key
  int32_t t0 = kShortSteps - n;                                 // the first step
  int32_t s0, s1, s2, s3, t1, be, bo;
  // The first key enters at step 4 - n through a byte table of step
  // offsets; the entry's address (Thumb bit set) goes to ctx[4], and every
  // later key loads it into pc at the loop's end, its accumulators already
  // loaded. After the steps, pc is loaded from ctx[7]: the four shifts, or
  // past them when the shift is 0 (s8's usual score_shift).
  __asm__ volatile(
      "adr.w  %[be], 20f\n\t"
      "adr.w  %[bo], 21f\n\t"
      "cmp    %[sh], #0\n\t"
      "it     eq\n\t"
      "moveq  %[be], %[bo]\n\t"
      "orr    %[be], %[be], #1\n\t"
      "str    %[be], [%[ctx], #28]\n\t"
      "adr.w  %[t1], 5f\n\t"
      "ldrb   %[t0], [%[t1], %[t0]]\n\t"
      "add    %[t1], %[t1], %[t0], lsl #1\n\t"
      "orr    %[t1], %[t1], #1\n\t"
      "str    %[t1], [%[ctx], #16]\n\t"
      "ldrd   %[s0], %[s1], [%[ctx]]\n\t"
      "ldrd   %[s2], %[s3], [%[ctx], #8]\n\t"
      "bx     %[t1]\n\t"
      "5:\n\t"
      ".byte  (10f - 5b) / 2, (11f - 5b) / 2, (12f - 5b) / 2, (13f - 5b) / 2\n\t"
      "10:\n\t" ATTN_SCORES_STEP(0) "11:\n\t" ATTN_SCORES_STEP(1) "12:\n\t" ATTN_SCORES_STEP(2)
      "13:\n\t" ATTN_SCORES_STEP(3)
      "ldr    pc, [%[ctx], #28]\n\t"
      "20:\n\t"
      "asr    %[s0], %[s0], %[sh]\n\t"
      "asr    %[s1], %[s1], %[sh]\n\t"
      "asr    %[s2], %[s2], %[sh]\n\t"
      "asr    %[s3], %[s3], %[sh]\n\t"
      "21:\n\t"
      "add    %[b], %[b], %[gap]\n\t"
      "ldrd   %[t0], %[t1], [%[ctx], #20]\n\t"
      "str    %[s1], [%[o], %[t0]]\n\t"
      "add    %[be], %[o], %[t0], lsl #1\n\t"
      "str    %[s2], [%[be]]\n\t"
      "str    %[s3], [%[be], %[t0]]\n\t"
      "str    %[s0], [%[o]], #4\n\t"
      "ldrd   %[s0], %[s1], [%[ctx]]\n\t"
      "ldrd   %[s2], %[s3], [%[ctx], #8]\n\t"
      "cmp    %[o], %[t1]\n\t"
      "it     ne\n\t"
      "ldrne  pc, [%[ctx], #16]\n\t"
      : [b] "+r"(b), [o] "+r"(o), [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3),
        [t0] "+&r"(t0), [t1] "=&r"(t1), [be] "=&r"(be), [bo] "=&r"(bo)
      : [ctx] "r"(ctx), [gap] "r"(gap), [sh] "r"(shift)
      : "cc", "memory");
}
#undef ATTN_SCORES_STEP

// One SMLAD step of keys_short2_asm: keys_short_asm's step for rows 0 and 1.
#define ATTN_SCORES2_STEP(i)                 \
  "ldr    %[t0], [%[b]], #4\n\t"             \
  "sxtb16 %[be], %[t0]\n\t"                  \
  "sxtb16 %[bo], %[t0], ror #8\n\t"          \
  "ldrd   %[t0], %[t1], [%[ctx], #32+32*" #i \
  "]\n\t"                                    \
  "smlad  %[s0], %[t0], %[be], %[s0]\n\t"    \
  "smlad  %[s0], %[t1], %[bo], %[s0]\n\t"    \
  "ldrd   %[t0], %[t1], [%[ctx], #40+32*" #i \
  "]\n\t"                                    \
  "smlad  %[s1], %[t0], %[be], %[s1]\n\t"    \
  "smlad  %[s1], %[t1], %[bo], %[s1]\n\t"

// keys_short_asm for two rows (a decode step's query heads of one K/V
// head, or a tile's last two rows), same ctx layout (rows 0 and 1 of its
// steps used): 9 + 9 n instructions per key for the two scores (11 + 9 n
// with a score shift) instead of two four-row passes (2 (13 + 15 n)).
void keys_short2_asm(int32_t* ctx, const int32_t* init, ConstMatS8 k, int32_t shift, MatS32 s, int32_t t) {
  const int32_t n = k.cols / 4;
  ctx[0] = init[0];
  ctx[1] = init[1];
  ctx[5] = static_cast<int32_t>(s.stride * 4);  // 20: bytes between rows of s
  ctx[6] = static_cast<int32_t>(reinterpret_cast<uintptr_t>(s.row(t) + k.rows));  // 24: end of row t of s
  const int8_t* b = k.data;                                                       // key j
  int32_t* o = s.row(t);                                                          // s[t, j]
  const int32_t gap = static_cast<int32_t>(k.stride) - k.cols;
  int32_t t0 = kShortSteps - n;
  int32_t s0, s1, t1, be, bo;
  __asm__ volatile(
      "adr.w  %[be], 20f\n\t"
      "adr.w  %[bo], 21f\n\t"
      "cmp    %[sh], #0\n\t"
      "it     eq\n\t"
      "moveq  %[be], %[bo]\n\t"
      "orr    %[be], %[be], #1\n\t"
      "str    %[be], [%[ctx], #28]\n\t"
      "adr.w  %[t1], 5f\n\t"
      "ldrb   %[t0], [%[t1], %[t0]]\n\t"
      "add    %[t1], %[t1], %[t0], lsl #1\n\t"
      "orr    %[t1], %[t1], #1\n\t"
      "str    %[t1], [%[ctx], #16]\n\t"
      "ldrd   %[s0], %[s1], [%[ctx]]\n\t"
      "bx     %[t1]\n\t"
      "5:\n\t"
      ".byte  (10f - 5b) / 2, (11f - 5b) / 2, (12f - 5b) / 2, (13f - 5b) / 2\n\t"
      "10:\n\t" ATTN_SCORES2_STEP(0) "11:\n\t" ATTN_SCORES2_STEP(1) "12:\n\t" ATTN_SCORES2_STEP(2)
      "13:\n\t" ATTN_SCORES2_STEP(3)
      "ldr    pc, [%[ctx], #28]\n\t"
      "20:\n\t"
      "asr    %[s0], %[s0], %[sh]\n\t"
      "asr    %[s1], %[s1], %[sh]\n\t"
      "21:\n\t"
      "add    %[b], %[b], %[gap]\n\t"
      "ldrd   %[t0], %[t1], [%[ctx], #20]\n\t"
      "str    %[s1], [%[o], %[t0]]\n\t"
      "str    %[s0], [%[o]], #4\n\t"
      "ldrd   %[s0], %[s1], [%[ctx]]\n\t"
      "cmp    %[o], %[t1]\n\t"
      "it     ne\n\t"
      "ldrne  pc, [%[ctx], #16]\n\t"
      : [b] "+r"(b), [o] "+r"(o), [s0] "=&r"(s0), [s1] "=&r"(s1), [t0] "+&r"(t0), [t1] "=&r"(t1),
        [be] "=&r"(be), [bo] "=&r"(bo)
      : [ctx] "r"(ctx), [gap] "r"(gap), [sh] "r"(shift)
      : "cc", "memory");
}
#undef ATTN_SCORES2_STEP

// One row of keys4_asm: row i's q pairs, accumulator start and the bytes
// to the next row's output from ctx, two keys' scores stored as a pair.
#define ATTN_SCORES4_ROW(i)                \
  "ldrd   %[t0], %[t1], [%[ctx], #16*" #i  \
  "]\n\t"                                  \
  "ldrd   %[c], %[rs], [%[ctx], #16*" #i   \
  "+8]\n\t"                                \
  "smlad  %[a1], %[t0], %[k1], %[c]\n\t"   \
  "smlad  %[c], %[t0], %[k0], %[c]\n\t"    \
  "smlad  %[c], %[t1], %[k0o], %[c]\n\t"   \
  "smlad  %[a1], %[t1], %[k1o], %[a1]\n\t" \
  "strd   %[c], %[a1], [%[p]]\n\t"         \
  "add    %[p], %[p], %[rs]\n\t"

// Keys [0, 2 (rows / 2)) of rows [t, t + 4) of s for head_dim 4 and score
// shift 0 (s8's usual), q expanded in rows (one step): two keys per
// iteration, each key word unpacked once for the four rows and each row's
// pair of scores stored by one STRD, 42 instructions per 8 scores
// (keys_short_asm: 28 per 4). Thirteen registers: the rows live in ctx.
void keys4_asm(const int32_t* rows, const int32_t* init, ConstMatS8 k, MatS32 s, int32_t t) {
  const int32_t rs = static_cast<int32_t>(s.stride * 4);  // bytes between rows of s
  int32_t ctx[17];  // per row r at word 4 r: q's even and odd pairs, init[r], bytes to the next output row
  for (int32_t r = 0; r < 4; ++r) {
    ctx[4 * r] = rows[2 * r];
    ctx[4 * r + 1] = rows[2 * r + 1];
    ctx[4 * r + 2] = init[r];
    ctx[4 * r + 3] = rs;
  }
  ctx[15] = 8 - 3 * rs;                      // from row 3 back to row 0, two keys on
  ctx[16] = static_cast<int32_t>(k.stride);  // 64: bytes between keys
  const int8_t* b = k.data;                  // key j
  const int8_t* const end = b + static_cast<ptrdiff_t>(k.rows & ~1) * k.stride;
  int32_t* p = s.row(t);  // s[t, j]
  int32_t k0, k0o, k1, k1o, t0, t1, c, rsv, a1;
  __asm__ volatile(
      "1:\n\t"
      "ldr    %[t0], [%[ctx], #64]\n\t"
      "ldr    %[k1], [%[b], %[t0]]\n\t"
      "ldr    %[k0], [%[b]]\n\t"
      "add    %[b], %[b], %[t0], lsl #1\n\t"
      "sxtb16 %[k0o], %[k0], ror #8\n\t"
      "sxtb16 %[k0], %[k0]\n\t"
      "sxtb16 %[k1o], %[k1], ror #8\n\t"
      "sxtb16 %[k1], %[k1]\n\t" ATTN_SCORES4_ROW(0) ATTN_SCORES4_ROW(1) ATTN_SCORES4_ROW(2)
          ATTN_SCORES4_ROW(3)
      "cmp    %[b], %[end]\n\t"
      "bne    1b\n\t"
      : [b] "+r"(b), [p] "+r"(p), [k0] "=&r"(k0), [k0o] "=&r"(k0o), [k1] "=&r"(k1), [k1o] "=&r"(k1o),
        [t0] "=&r"(t0), [t1] "=&r"(t1), [c] "=&r"(c), [rs] "=&r"(rsv), [a1] "=&r"(a1)
      : [ctx] "r"(ctx), [end] "r"(end)
      : "cc", "memory");
}
#undef ATTN_SCORES4_ROW

// Rows [t, t + 4) of s, q expanded once (d a multiple of 4, <= dsp::kExpandMaxK); two:
// rows [t, t + 2) only (head_dim <= 16: keys_short2_asm). The key zero point is
// folded: sum (q - zq)(k - zk) = sum (q - zq) k - zk sum (q - zq).
void rows4(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t half, int32_t shift, MatS32 s,
           int32_t t, bool two) {
  const int32_t d = q.cols;
  const int32_t n = d / 4;  // SMLAD steps
  const bool short_keys = n <= kShortSteps;
  // keys_short_asm's ctx (its 8-word header, then its steps 4 - n .. 3), or
  // keys_asm's expanded rows from word 8: [n][4 rows][even, odd] int16 pairs.
  int32_t buf[8 + 2 * dsp::kExpandMaxK];
  int32_t* const rows = buf + 8 + (short_keys ? 8 * (kShortSteps - n) : 0);
  const int8_t* a[4] = {q.row(t), q.row(t + 1), q.row(t + (two ? 1 : 2)), q.row(t + (two ? 1 : 3))};  // [d]
  dsp::expand4(a, d, zq, rows);
  // sum_c (q[c] - zq) of each row (SMLAD against (1, 1) adds both int16
  // halves of a pair), the four rows in one pass over the steps.
  int32_t sum[4] = {0, 0, 0, 0};
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t r = 0; r < 4; ++r)
      sum[r] = __smlad(rows[8 * i + 2 * r], 0x00010001, __smlad(rows[8 * i + 2 * r + 1], 0x00010001, sum[r]));
  }
  int32_t corr[4];  // -zk * sum_c (q[c] - zq) + half: the accumulators' start
  for (size_t r = 0; r < 4; ++r) corr[r] = -zk * sum[r] + half;
  if (two) {
    keys_short2_asm(buf, corr, k, shift, s, t);
    return;
  }
  if (d == 4 && shift == 0 && k.rows >= 2) {  // pairs of keys, then the last odd one below
    keys4_asm(rows, corr, k, s, t);
    const int32_t j = k.rows & ~1;
    k = k.rows_slice(j, k.rows - j);
    s = s.cols_slice(j, s.cols - j);
  }
  if (k.rows == 0) return;
  if (short_keys) {
    keys_short_asm(buf, corr, k, shift, s, t);
  } else {
    keys_asm(rows, corr, k, shift, s, t);
  }
}

}  // namespace

// Compiled for size (flash): the dispatch around rows4, a few passes per call
// (the same instruction count as -O3 on the forward's shapes, within 20).
ATTN_COLD_CODE void scores_s8_dsp(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift,
                                  MatS32 s) {
  // head_dim wider than the stack buffer or not a multiple of 4: the portable kernel.
  if (q.cols > dsp::kExpandMaxK || q.cols % 4 != 0 || q.cols == 0) {
    scores_s8_ref(q, zq, k, zk, score_shift, s);
    return;
  }
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  const int32_t t4 = q.rows & ~3;
  const bool short_keys = q.cols <= 4 * kShortSteps;
  for (int32_t t = 0; t < q.rows;) {
    // Four rows at a time, then (head_dim <= 16) two, then the last row as
    // four copies of itself (row stride 0) into one output row: the asm
    // stores row 0 last. A quarter of that pass is used, still fewer
    // instructions than scores_s8_ref.
    const bool four = t < t4;
    const bool two = !four && short_keys && q.rows - t >= 2;
    const ConstMatS8 qt{q.row(t), 4, q.cols, four || two ? q.stride : 0};  // [4, d]
    const MatS32 st{s.row(t), 4, s.cols, four || two ? s.stride : 0};      // [4, S]
    rows4(qt, zq, k, zk, half, score_shift, st, 0, two);
    t += four ? 4 : two ? 2 : 1;
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
