// weighted sum, int8 values, Q0.15 probabilities, Cortex-M55 Helium (MVE):
// o[t, c] = requant(sum_j p[t, j] v[j, c] - zv sum_j p[t, j]).
//
// Per two rows t and four value columns c, the sum over j runs 8 keys at a
// time: one gather load per column (VLDRB.S16 with offsets 0, stride, ..,
// 7 stride) brings v[j .. j + 8, c] widened to int16, one load per row
// brings p[t, j .. j + 8] straight from P, and one VMLADAVA.S16 per (row,
// column) accumulates the 8 products (int32), the whole steps in asm. The
// last, partial chunk is predicated (VCTP). Each row's 4 column sums are
// requantized as one vector and stored as 4 bytes. Rows too far apart for
// 16-bit gather offsets take the older path: four columns per int32 vector,
// VMLA by the scalar p[t, j]. The sums equal the ref's int32 sums: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/kernels_fixed.h"
#include "kernels/mve/mve_requantize.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMaxGatherStride = 9362;

// A loop left rolled by both compilers (GCC 12 peeled store_groups' loops
// completely, up to kGroups copies of the requantization: ~2.5 KiB each).
#if defined(__clang__)
#define ATTN_PV_ROLLED _Pragma("clang loop unroll(disable)")
#else
#define ATTN_PV_ROLLED _Pragma("GCC unroll 1")
#endif  // 7 * stride must fit the 16-bit gather offsets

// Two rows of rows_gather by G groups of 4 value columns, in asm: per
// group every 8-key step, the last partial one (kTail), and the 8 sums
// stored to ctx's buffer. VMLADAVA takes even core registers only, and the
// 8 sums need 8 of them (LR included: the loop ends on a pointer compare),
// with the 2 probability pointers, their end, the column pointer and its
// step in odd ones; what a group starts from is read from ctx (its pointer
// and the predicate register pushed on entry: neither compiler takes VPR
// as a clobber, and clang keeps a store's VCTP in it across the asm). Left
// to themselves the compilers move sums between registers, reload the step
// in every iteration and spill everything live around an asm block per
// group (GCC 12 more than clang-14), so the whole column loop is one asm
// statement for both: per 8 keys 2 probability loads, 4 gathers and 8
// VMLADAVA.S16 (17 instructions per 64 products); the first step starts
// the sums (VMLADAV) instead of zeroing them; the tail's loads are
// predicated by a VCTP of its key count, which rides in the top half of the
// step's register (UXTAH adds the low half to the column pointer); one STM
// stores a group's sums as [a0 b0 a1 b1 a2 b2 a3 b3] (VLD2 splits them).
// About 17 instructions per group besides the steps. kSub: the gathered
// values become v - zv (zv16 in every lane), one VSUB per gather.
struct PvCtx {
  const int16_t* pa;   // 0: row a's probabilities [S]
  const int16_t* pb;   // 4: row b's
  const int8_t* vb;    // 8: v[0, c] of the next group
  int32_t* out;        // 12: the next group's 8 sums
  int32_t* out_end;    // 16: past the last group's
  const int16_t* end;  // 20: pa + the keys of the whole steps
};
// The asm text shared by groups_2x4 and the one-group block below. One
// column of a step: gather, SUB (empty or a VSUB), the two rows' MLA
// (vmlav / vmlava), PRED ("t" in a VPT block, else empty).
#define ATTN_PV_COLUMN(k, SUB, MLA, PRED)                                                          \
  "vldrb" PRED ".s16 %q[g], [%[vb], %q[o" #k "]]\n" SUB MLA ".s16 %[a" #k "], %q[ta], %q[g]\n" MLA \
  ".s16 %[b" #k "], %q[tb], %q[g]\n"
#define ATTN_PV_STEP(SUB, MLA)                                                                       \
  "vldrh.u16 %q[ta], [%[pa]], #16\n"                                                                 \
  "vldrh.u16 %q[tb], [%[pb]], #16\n" ATTN_PV_COLUMN(0, SUB, MLA, "") ATTN_PV_COLUMN(1, SUB, MLA, "") \
      ATTN_PV_COLUMN(2, SUB, MLA, "") ATTN_PV_COLUMN(3, SUB, MLA, "") "uxtah %[vb], %[vb], %[step]\n"
template <bool kSub, bool kTail>
inline void groups_2x4(PvCtx* ctx, int32_t step, int32_t tail, const uint16x8_t (&off)[4], int16x8_t zv16) {
  register PvCtx* a0 __asm__("r0") = ctx;
  register int32_t b0 __asm__("r2"), a1 __asm__("r4"), b1 __asm__("r6");
  register int32_t a2 __asm__("r8"), b2 __asm__("r10"), a3 __asm__("r12"), b3 __asm__("lr");
  register int32_t rpa __asm__("r1"), rpb __asm__("r3"), rvb __asm__("r5"), rend __asm__("r11");
  register int32_t rstep __asm__("r9") = step | tail << 16;  // step < 2^16, tail < 8
  int16x8_t ta, tb, g;
#define ATTN_PV_TAIL(SUB)                                                 \
  "lsr %[end], %[step], #16\n"                                            \
  "vctp.16 %[end]\n"                                                      \
  "vpstt\n"                                                               \
  "vldrht.u16 %q[ta], [%[pa]]\n"                                          \
  "vldrht.u16 %q[tb], [%[pb]]\n"                                          \
  "vpst\n" ATTN_PV_COLUMN(0, SUB, "vmlava", "t") "vpst\n" ATTN_PV_COLUMN( \
      1, SUB, "vmlava", "t") "vpst\n" ATTN_PV_COLUMN(2, SUB, "vmlava",    \
                                                     "t") "vpst\n" ATTN_PV_COLUMN(3, SUB, "vmlava", "t")
#define ATTN_PV_GROUPS(SUB, TAIL) \
  __asm__ volatile(                                                                                         \
      "vmrs %[pa], p0\n"                                                                                    \
      "push {%[a0], %[pa]}\n"                                                                               \
      "0:\n"                                                                                                \
      "ldr %[a0], [sp]\n"                                                                                   \
      "ldrd %[pa], %[pb], [%[a0]]\n"                                                                        \
      "ldr %[vb], [%[a0], #8]\n"                                                                            \
      "ldr %[end], [%[a0], #20]\n"                                                                          \
      "cmp %[pa], %[end]\n"                                                                                 \
      "bne 3f\n"                                                                                            \
      "mov %[a0], #0\n"                                                                                     \
      "mov %[a1], #0\n"                                                                                     \
      "mov %[a2], #0\n"                                                                                     \
      "mov %[a3], #0\n"                                                                                     \
      "mov %[b0], #0\n"                                                                                     \
      "mov %[b1], #0\n"                                                                                     \
      "mov %[b2], #0\n"                                                                                     \
      "mov %[b3], #0\n"                                                                                     \
      "b 2f\n"                                                                                              \
      "3:\n" ATTN_PV_STEP(SUB, "vmlav") "cmp %[pa], %[end]\n"                                               \
      "beq 2f\n"                                                                                            \
      "1:\n" ATTN_PV_STEP(SUB, "vmlava") "cmp %[pa], %[end]\n"                                              \
      "bne 1b\n"                                                                                            \
      "2:\n" TAIL                                                                                           \
      "ldr %[pa], [sp]\n"                                                                                   \
      "ldr %[pb], [%[pa], #12]\n"                                                                           \
      "stmia %[pb]!, {%[a0], %[b0], %[a1], %[b1], %[a2], %[b2], %[a3], %[b3]}\n"                            \
      "str %[pb], [%[pa], #12]\n"                                                                           \
      "ldr %[vb], [%[pa], #8]\n"                                                                            \
      "adds %[vb], %[vb], #4\n"                                                                             \
      "str %[vb], [%[pa], #8]\n"                                                                            \
      "ldr %[end], [%[pa], #16]\n"                                                                          \
      "cmp %[pb], %[end]\n"                                                                                 \
      "bne 0b\n"                                                                                            \
      "pop {%[a0], %[pa]}\n"                                                                                \
      "vmsr p0, %[pa]\n"                                                                                    \
      : [a0] "+r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [b0] "=&r"(b0), [b1] "=&r"(b1),    \
        [b2] "=&r"(b2), [b3] "=&r"(b3), [pa] "=&r"(rpa), [pb] "=&r"(rpb), [vb] "=&r"(rvb), [end] "=&r"(rend), \
        [ta] "=&w"(ta), [tb] "=&w"(tb), [g] "=&w"(g)                                                        \
      : [step] "r"(rstep), [o0] "w"(off[0]), [o1] "w"(off[1]), [o2] "w"(off[2]), [o3] "w"(off[3]),          \
        [zv] "w"(zv16)                                                                                      \
      : "cc", "memory")
  if constexpr (kSub && kTail) {
    ATTN_PV_GROUPS("vsub.i16 %q[g], %q[g], %q[zv]\n", ATTN_PV_TAIL("vsub.i16 %q[g], %q[g], %q[zv]\n"));
  } else if constexpr (kSub) {
    ATTN_PV_GROUPS("vsub.i16 %q[g], %q[g], %q[zv]\n", "");
  } else if constexpr (kTail) {
    ATTN_PV_GROUPS("", ATTN_PV_TAIL(""));
  } else {
    ATTN_PV_GROUPS("", "");
  }
#undef ATTN_PV_GROUPS
#undef ATTN_PV_TAIL
}

// groups_2x4 for one group (v.cols <= 4: head_dim 4 and smaller), the
// sums returned as two vectors (4 VMOV) instead of stored and reloaded: the
// same steps without the per-group context, which would cost more than
// the group's own work. The predicate register is saved around the tail.
struct Pair {
  int32x4_t a, b;  // [column] the sums of rows a and b
};
template <bool kSub, bool kTail>
inline Pair block_2x4(const int16_t* pa, const int16_t* pb, const int8_t* vb, int32_t keys, int32_t step,
                      const uint16x8_t (&off)[4], int16x8_t zv16, int32_t tail) {
  register int32_t a0 __asm__("r0"), b0 __asm__("r2"), a1 __asm__("r4"), b1 __asm__("r6");
  register int32_t a2 __asm__("r8"), b2 __asm__("r10"), a3 __asm__("r12"), b3 __asm__("lr");
  register const int16_t* rpa __asm__("r1") = pa;
  register const int16_t* rpb __asm__("r3") = pb;
  register const int8_t* rvb __asm__("r5") = vb;
  register const int16_t* rend __asm__("r11") = pa + keys;
  register int32_t rstep __asm__("r9") = step | tail << 16;  // step < 2^16, tail < 8
  int16x8_t ta, tb, g;
#define ATTN_PV_TAIL(SUB) \
  "vmrs %[end], p0\n"                                                     \
  "push {%[end]}\n"                                                       \
  "lsr %[end], %[step], #16\n"                                            \
  "vctp.16 %[end]\n"                                                      \
  "vpstt\n"                                                               \
  "vldrht.u16 %q[ta], [%[pa]]\n"                                          \
  "vldrht.u16 %q[tb], [%[pb]]\n"                                          \
  "vpst\n" ATTN_PV_COLUMN(0, SUB, "vmlava", "t") "vpst\n" ATTN_PV_COLUMN( \
      1, SUB, "vmlava", "t") "vpst\n" ATTN_PV_COLUMN(2, SUB, "vmlava",    \
                                                     "t") "vpst\n" ATTN_PV_COLUMN(3, SUB, "vmlava", "t") "pop {%[end]}\n" "vmsr p0, %[end]\n"
#define ATTN_PV_BLOCK(SUB, TAIL) \
  __asm__ volatile("cmp %[pa], %[end]\n"                                                                 \
                   "bne 3f\n"                                                                            \
                   "mov %[a0], #0\n"                                                                     \
                   "mov %[a1], #0\n"                                                                     \
                   "mov %[a2], #0\n"                                                                     \
                   "mov %[a3], #0\n"                                                                     \
                   "mov %[b0], #0\n"                                                                     \
                   "mov %[b1], #0\n"                                                                     \
                   "mov %[b2], #0\n"                                                                     \
                   "mov %[b3], #0\n"                                                                     \
                   "b 2f\n"                                                                              \
                   "3:\n" ATTN_PV_STEP(SUB, "vmlav") "cmp %[pa], %[end]\n"                               \
                   "beq 2f\n"                                                                            \
                   "1:\n" ATTN_PV_STEP(SUB, "vmlava") "cmp %[pa], %[end]\n"                              \
                   "bne 1b\n"                                                                            \
                   "2:\n" TAIL "vmov %q[ta][2], %q[ta][0], %[a0], %[a2]\n"                               \
                   "vmov %q[ta][3], %q[ta][1], %[a1], %[a3]\n"                                           \
                   "vmov %q[tb][2], %q[tb][0], %[b0], %[b2]\n"                                           \
                   "vmov %q[tb][3], %q[tb][1], %[b1], %[b3]\n"                                           \
                   : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [b0] "=&r"(b0),    \
                     [b1] "=&r"(b1), [b2] "=&r"(b2), [b3] "=&r"(b3), [pa] "+r"(rpa), [pb] "+r"(rpb),    \
                     [vb] "+r"(rvb), [end] "+r"(rend), [ta] "=&w"(ta), [tb] "=&w"(tb), [g] "=&w"(g)                       \
                   : [step] "r"(rstep), [o0] "w"(off[0]), [o1] "w"(off[1]),            \
                     [o2] "w"(off[2]), [o3] "w"(off[3]), [zv] "w"(zv16)          \
                   : "cc", "memory")
  if constexpr (kSub && kTail) {
    ATTN_PV_BLOCK("vsub.i16 %q[g], %q[g], %q[zv]\n", ATTN_PV_TAIL("vsub.i16 %q[g], %q[g], %q[zv]\n"));
  } else if constexpr (kSub) {
    ATTN_PV_BLOCK("vsub.i16 %q[g], %q[g], %q[zv]\n", "");
  } else if constexpr (kTail) {
    ATTN_PV_BLOCK("", ATTN_PV_TAIL(""));
  } else {
    ATTN_PV_BLOCK("", "");
  }
#undef ATTN_PV_BLOCK
#undef ATTN_PV_TAIL
#undef ATTN_PV_STEP
#undef ATTN_PV_COLUMN
  return {vreinterpretq_s32_s16(ta), vreinterpretq_s32_s16(tb)};
}

// The requantization of a call's outputs (one multiplier and shift), as in
// mve::requantize but branch-free per vector, the shift's sign a template
// argument (kSign): > 0 a left shift before VQRDMULH; < 0 after it a
// rounding right shift (VRSHL by the negative count) of v - 1 for
// negative v (v + (v >> 31)); 0 neither.
struct PvQuant {
  int32_t shift, m, zo;  // scalars: VSHL / VRSHL by a core register (no vector live across the asm)
};
inline PvQuant pv_quant(int32_t m, int32_t sh, int32_t zo) { return {sh, m, zo}; }

// Four sums of a row (its zv term included), requantized, as int8 at out:
// all 4 columns (kWhole), else the first nc.
template <int kSign, bool kWhole>
inline void store4(int32x4_t acc, const PvQuant& q, int32_t nc, int8_t* out) {
  int32x4_t v = acc;
  if (kSign > 0) v = vshlq_r_s32(v, q.shift);
  v = vqrdmulhq_n_s32(v, q.m);
  if (kSign < 0) v = vrshlq_n_s32(vaddq_s32(v, vshrq_n_s32(v, 31)), q.shift);
  v = vaddq_n_s32(v, q.zo);
  v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(-128)), vdupq_n_s32(127));
  if (kWhole) {
    vstrbq_s32(out, v);  // int8, truncating
  } else {
    vstrbq_p_s32(out, v, vctp32q(static_cast<uint32_t>(nc)));
  }
}

// The ng groups' sums of two rows ([group][a0 b0 a1 b1 a2 b2 a3 b3], split
// by VLD2) plus each row's zv term (ca, cb), requantized to oa and ob (ob
// only when two rows), nc <= 4 columns of each group.
template <int kSign>
void store_groups(const int32_t* sums, int32_t ng, int32_t ca, int32_t cb, const PvQuant& q, int32_t nc,
                  int8_t* oa, int8_t* ob, bool two) {
  if (nc == 4) {
    ATTN_PV_ROLLED
    for (int32_t gi = 0; gi < ng; ++gi, sums += 8, oa += 4, ob += 4) {
      const int32x4x2_t ab = vld2q_s32(sums);
      store4<kSign, true>(vaddq_n_s32(ab.val[0], ca), q, 4, oa);
      if (two) store4<kSign, true>(vaddq_n_s32(ab.val[1], cb), q, 4, ob);
    }
    return;
  }
  ATTN_PV_ROLLED
  for (int32_t gi = 0; gi < ng; ++gi, sums += 8, oa += 4, ob += 4) {
    const int32x4x2_t ab = vld2q_s32(sums);
    store4<kSign, false>(vaddq_n_s32(ab.val[0], ca), q, nc, oa);
    if (two) store4<kSign, false>(vaddq_n_s32(ab.val[1], cb), q, nc, ob);
  }
}

// Every row of o, v.stride <= kMaxGatherStride (the setup once per call). Two rows
// by all value columns at a time (groups_2x4: per group of four columns and
// 8-key step, 2 probability loads straight from the rows of p, 4 gathers
// (VLDRB.S16, offsets 0, stride, .., 7 stride from the column), 8
// VMLADAVA.S16; the last 1..7 keys (if S % 8) one step with predicated loads,
// zero probabilities past S), up to kGroups groups per call, the last
// 1..3 columns as one more group whose missing columns repeat the last one
// (same sums, not stored); a missing second row repeats the first. The zv
// term: kPsum, -zv sum_j p[t + r, j] added to the sums (one pass over each
// row of p: cheaper from 8 columns on); else the gathered values are v - zv
// (exact in int16, one VSUB per gather). Either way the sums are the ref's
// int32 sums sum_j p (v - zv); each row's 4 sums of a group are requantized
// as one vector and stored as 4 bytes.
constexpr int32_t kGroups = 8;  // column groups per groups_2x4 call (32 columns)
template <bool kPsum>
void rows_gather(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o,
                 int32_t t, int32_t nr) {  // rows [t, t + nr)
  const int32_t S = p.cols;
  const int32_t full = S & ~7;  // keys in whole 8-key steps
  const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(v.stride));
  const int32_t step = 8 * v.stride;  // bytes between 8-key steps of a column (< 2^16)
  const int16x8_t zv16 = vdupq_n_s16(static_cast<int16_t>(zv));
  const int32_t whole = v.cols & ~3;  // columns in whole groups
  const PvQuant q = pv_quant(m, sh, zo);
  const uint16x8_t off[4] = {offsets, vaddq_n_u16(offsets, 1), vaddq_n_u16(offsets, 2),
                             vaddq_n_u16(offsets, 3)};
  if (v.cols <= 4) {  // one group: block_2x4, its sums in registers
    const int32_t nc = v.cols;
    const uint16x8_t last[4] = {off[0], off[nc > 1 ? 1 : 0], off[nc > 2 ? 2 : nc - 1], off[nc - 1]};
    for (int32_t ra = 0; ra < nr; ra += 2) {
      const int32_t rb = ra + 1 < nr ? ra + 1 : ra;
      const int16_t* pa = p.row(t + ra);  // [S]
      const int16_t* pb = p.row(t + rb);  // [S]
      int32_t ca = 0, cb = 0;             // -zv sum_j p[row, j]
      if (kPsum) {
        const mve_pred16_t tail = vctp16q(static_cast<uint32_t>(S - full));
        for (int32_t j = 0; j < full; j += 8)
          ca = vaddvaq_s16(ca, vldrhq_s16(pa + j)), cb = vaddvaq_s16(cb, vldrhq_s16(pb + j));
        if (full < S)
          ca = vaddvaq_s16(ca, vldrhq_z_s16(pa + full, tail)),
          cb = vaddvaq_s16(cb, vldrhq_z_s16(pb + full, tail));
        ca *= -zv, cb *= -zv;
      }
      const Pair s2 = full < S ? block_2x4<!kPsum, true>(pa, pb, v.data, full, step, last, zv16, S - full)
                               : block_2x4<!kPsum, false>(pa, pb, v.data, full, step, last, zv16, 0);
      const int32x4_t a = kPsum ? vaddq_n_s32(s2.a, ca) : s2.a;
      const int32x4_t b = kPsum ? vaddq_n_s32(s2.b, cb) : s2.b;
      if (sh > 0) {
        store4<1, false>(a, q, nc, o.row(t + ra));
        if (rb != ra) store4<1, false>(b, q, nc, o.row(t + rb));
      } else if (sh < 0) {
        store4<-1, false>(a, q, nc, o.row(t + ra));
        if (rb != ra) store4<-1, false>(b, q, nc, o.row(t + rb));
      } else {
        store4<0, false>(a, q, nc, o.row(t + ra));
        if (rb != ra) store4<0, false>(b, q, nc, o.row(t + rb));
      }
    }
    return;
  }
  int32_t sums[8 * kGroups];  // [group][a0 b0 a1 b1 a2 b2 a3 b3]
  for (int32_t ra = 0; ra < nr; ra += 2) {
    const int32_t rb = ra + 1 < nr ? ra + 1 : ra;
    const int16_t* pa = p.row(t + ra);  // [S]
    const int16_t* pb = p.row(t + rb);  // [S]
    int32_t ca = 0, cb = 0;             // -zv sum_j p[row, j]
    if (kPsum) {
      const mve_pred16_t tail = vctp16q(static_cast<uint32_t>(S - full));
      for (int32_t j = 0; j < full; j += 8)
        ca = vaddvaq_s16(ca, vldrhq_s16(pa + j)), cb = vaddvaq_s16(cb, vldrhq_s16(pb + j));
      if (full < S)
        ca = vaddvaq_s16(ca, vldrhq_z_s16(pa + full, tail)),
        cb = vaddvaq_s16(cb, vldrhq_z_s16(pb + full, tail));
      ca *= -zv, cb *= -zv;
    }
    int8_t* oa = o.row(t + ra);
    int8_t* ob = o.row(t + rb);
    ATTN_NO_UNROLL
    for (int32_t c0 = 0; c0 < v.cols;) {
      // Whole groups from c0 (up to kGroups), else the last 1..3 columns as one group.
      const int32_t groups = (whole - c0) / 4 < kGroups ? (whole - c0) / 4 : kGroups;
      const int32_t nc = groups > 0 ? 4 : v.cols - c0;  // columns of each group stored
      const int32_t ng = groups > 0 ? groups : 1;
      PvCtx ctx{pa, pb, v.data + c0, sums, sums + 8 * ng, pa + full};
      if (groups > 0) {
        if (full < S) {
          groups_2x4<!kPsum, true>(&ctx, step, S - full, off, zv16);
        } else {
          groups_2x4<!kPsum, false>(&ctx, step, 0, off, zv16);
        }
      } else {
        const uint16x8_t last[4] = {off[0], off[nc > 1 ? 1 : 0], off[nc > 2 ? 2 : nc - 1], off[nc - 1]};
        groups_2x4<!kPsum, true>(&ctx, step, S - full, last, zv16);  // rare: one copy (a 0-key tail adds 0)
      }
      if (sh > 0) {
        store_groups<1>(sums, ng, ca, cb, q, nc, oa + c0, ob + c0, rb != ra);
      } else if (sh < 0) {
        store_groups<-1>(sums, ng, ca, cb, q, nc, oa + c0, ob + c0, rb != ra);
      } else {
        store_groups<0>(sums, ng, ca, cb, q, nc, oa + c0, ob + c0, rb != ra);
      }
      c0 += 4 * ng;
    }
  }
}

// Any row stride (row t): four value columns per int32 vector, VMLA by the scalar p[t, j].
void row_any(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o, int32_t t) {
  const int32_t S = p.cols;
  const int16_t* pr = p.row(t);  // [S]
  int32_t psum = 0;
  for (int32_t j = 0; j < S; j += 8) {
    const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(S - j));
    psum = vaddvaq_p_s16(psum, vldrhq_z_s16(pr + j, pred), pred);
  }
  for (int32_t c = 0; c < v.cols; c += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(v.cols - c));
    int32x4_t acc = vdupq_n_s32(-zv * psum);
    const int8_t* vc = v.data + c;  // columns [c, c + 4) of row 0
    for (int32_t j = 0; j < S; ++j, vc += v.stride) acc = vmlaq_n_s32(acc, vldrbq_z_s32(vc, pred), pr[j]);
    int32x4_t out = vaddq_n_s32(mve::requantize(acc, m, sh), zo);
    out = vminq_s32(vmaxq_s32(out, vdupq_n_s32(-128)), vdupq_n_s32(127));
    vstrbq_p_s32(o.row(t) + c, out, pred);  // int8, truncating
  }
}

}  // namespace

void weighted_sum_s8_mve(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  if (v.stride > kMaxGatherStride) {
    for (int32_t t = 0; t < p.rows; ++t) row_any(p, v, zv, m, sh, zo, o, t);
    return;
  }
  if (v.cols >= 8) {
    rows_gather<true>(p, v, zv, m, sh, zo, o, 0, p.rows);
  } else {
    rows_gather<false>(p, v, zv, m, sh, zo, o, 0, p.rows);
  }
}

}  // namespace detail
}  // namespace attn
#undef ATTN_PV_ROLLED
#endif  // ATTN_HAVE_MVE
