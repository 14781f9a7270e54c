// scores, int8, Cortex-M55 Helium (MVE): s = round((q - zq)(k - zk)^T / 2^shift).
// Expanded as q.k - zk sum(q) - zq sum(k) + d zq zk: one VMLADAVA per 16
// products against up to four query rows, sum(k) by VADDVA on the loaded key
// vector, tails by tail predication. For head_dim <= 16 the query rows stay
// in registers (as q - zq where that fits int8: no zq sum(k) term) and the
// four rows' scores of a key are finished as one vector (VSHL by -shift is
// the ref's arithmetic >>) and scattered to their rows (four rows: one asm
// loop for both compilers, keys_asm); one or two rows (a
// decode step's query heads of one K/V head) are stored as scalars. Every term is exact
// in int32 (|.| < 2^28 for d < 2^14) and the sum is the ref's sum: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include <cstdint>

#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

inline int32x4_t lanes(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v = vdupq_n_s32(0);
  v = vsetq_lane_s32(a, v, 0);
  v = vsetq_lane_s32(b, v, 1);
  v = vsetq_lane_s32(c, v, 2);
  return vsetq_lane_s32(d, v, 3);
}

// small_rows' keys [0, n) for four rows, in asm (both compilers alike: GCC
// 12 builds the score vector lane by lane, 14 instructions per key, and has
// no writeback scatter): per key one whole-vector load, 4 VMLADAV, 2 VMOV
// (into the key's register, free by then), the row constants (VADD), with
// !kFold the zq sum(k) term (one more VMLADAV against zqv and a VSUB), the
// shift (kShift: VSHL by -shift, the ref's arithmetic >>) and a scatter to
// the 4 rows that advances its own addresses (addr: the 4 rows' addresses
// of the next score minus 4), in a low-overhead loop: 11 instructions per
// key (12 with the shift, 14 without the fold).
template <bool kFold, bool kShift>
inline void keys_asm(const int8x16_t* qv, int8x16_t zqv, int32x4_t vbase, uint32x4_t& addr, const int8_t*& kr,
                     int32_t stride, int32_t n, int32_t shift) {
  if (n <= 0) return;
  register int32_t s0 __asm__("r0"), s1 __asm__("r2"), s2 __asm__("r4"), s3 __asm__("r6"), z __asm__("r8");
  int8x16_t kv;
  const int32_t neg = -shift;
#define ATTN_SCORES_KEYS(ZQ, ZSUB, SHIFT)                                                                    \
  __asm__ volatile(                                                                                          \
      "dls lr, %[n]\n"                                                                                       \
      "1:\n"                                                                                                 \
      "vldrb.u8 %q[kv], [%[kr]]\n"                                                                           \
      "add %[kr], %[kr], %[stride]\n"                                                                        \
      "vmladav.s8 %[s0], %q[q0], %q[kv]\n"                                                                   \
      "vmladav.s8 %[s1], %q[q1], %q[kv]\n"                                                                   \
      "vmladav.s8 %[s2], %q[q2], %q[kv]\n"                                                                   \
      "vmladav.s8 %[s3], %q[q3], %q[kv]\n" ZQ                                                                \
      "vmov %q[kv][2], %q[kv][0], %[s0], %[s2]\n"                                                            \
      "vmov %q[kv][3], %q[kv][1], %[s1], %[s3]\n"                                                            \
      "vadd.i32 %q[kv], %q[kv], %q[base]\n" ZSUB SHIFT                                                       \
      "vstrw.32 %q[kv], [%q[addr], #4]!\n"                                                                   \
      "le lr, 1b\n"                                                                                          \
      : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [z] "=&r"(z), [kr] "+r"(kr),         \
        [addr] "+w"(addr), [kv] "=&w"(kv)                                                                    \
      : [n] "r"(n), [stride] "r"(stride), [neg] "r"(neg), [q0] "w"(qv[0]), [q1] "w"(qv[1]), [q2] "w"(qv[2]), \
        [q3] "w"(qv[3]), [base] "w"(vbase), [zq] "w"(zqv)                                                    \
      : "lr", "memory")
  if constexpr (kFold && kShift) {
    ATTN_SCORES_KEYS("", "", "vshl.s32 %q[kv], %[neg]\n");
  } else if constexpr (kFold) {
    ATTN_SCORES_KEYS("", "", "");
  } else if constexpr (kShift) {
    ATTN_SCORES_KEYS("vmladav.s8 %[z], %q[zq], %q[kv]\n", "vsub.i32 %q[kv], %q[kv], %[z]\n",
                     "vshl.s32 %q[kv], %[neg]\n");
  } else {
    ATTN_SCORES_KEYS("vmladav.s8 %[z], %q[zq], %q[kv]\n", "vsub.i32 %q[kv], %q[kv], %[z]\n", "");
  }
#undef ATTN_SCORES_KEYS
}

// head_dim <= 16: the query rows stay in registers (zero past d) and the
// rows' scores of a key are finished as one vector (VSHL by -shift is the
// ref's arithmetic >>) and scattered to their rows. kFull: four rows (else
// nr < 4, lanes >= nr not stored). kFold: every q - zq fits int8, so the
// registers hold q' = q - zq and s = q'.k - zk sum(q') (the same integer):
// no zq sum(k) term per key. Else zq sum(k) is one more VMLADAV, of the key
// vector with zq in lanes < d. kShift: shift > 0 (else no VSHL). Key loads
// are whole vectors (the lanes past d meet zeros) while the 16 bytes stay
// inside k's span; the last keys' loads are predicated. Four rows: those
// whole-vector keys in keys_asm.
template <bool kFull, bool kFold, bool kShift>
void small_rows(const int8x16_t* qv, int32_t nr, int8x16_t zqv, int32x4_t vbase, ConstMatS8 k, int32_t shift,
                MatS32 s, int32_t t) {
  const int32_t d = k.cols;
  const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d));
  const mve_pred16_t live = vctp32q(static_cast<uint32_t>(nr));  // rows stored when !kFull
  // Byte offsets of rows t .. t + 3 of s from row t; lanes >= nr are not stored.
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(s.stride) * 4u);
  const int8x16_t q0 = qv[0], q1 = qv[1], q2 = qv[2], q3 = qv[3];
  int32_t* out = s.row(t);
  const auto step = [&](int8x16_t kv) {
    int32x4_t acc = vaddq_s32(
        lanes(vmladavq_s8(q0, kv), vmladavq_s8(q1, kv), vmladavq_s8(q2, kv), vmladavq_s8(q3, kv)), vbase);
    if (!kFold) acc = vsubq_n_s32(acc, vmladavq_s8(zqv, kv));
    if (kShift) acc = vshlq_r_s32(acc, -shift);
    if (kFull) {
      vstrwq_scatter_offset_s32(out, offsets, acc);
    } else {
      vstrwq_scatter_offset_p_s32(out, offsets, acc, live);
    }
    ++out;
  };
  // Keys j < safe: j * stride + 16 <= (S - 1) * stride + d, the end of k's
  // span, i.e. j <= S - 1 - ceil((16 - d) / stride).
  const int32_t short_by = d >= 16 ? 0 : (16 - d + k.stride - 1) / k.stride;
  const int32_t safe = k.rows - short_by > 0 ? k.rows - short_by : 0;
  const int8_t* kr = k.data;
  int32_t j = 0;
  if (kFull) {
    // The scatter's addresses minus 4: VSTRW with writeback adds 4 first.
    uint32x4_t addr = vaddq_n_u32(offsets, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(out)) - 4u);
    keys_asm<kFold, kShift>(qv, zqv, vbase, addr, kr, k.stride, safe, shift);
    j = safe;
    out += safe;
  }
  for (; j < safe; ++j, kr += k.stride) step(vldrbq_s8(kr));
  for (; j < k.rows; ++j, kr += k.stride) step(vldrbq_z_s8(kr, pred));
}

// small_rows for one or two rows (kTwo), as a decode step's query heads of
// one K/V head are: each score one VMLADAVA from the row's constant (minus
// the zq sum(k) term when !kFold) and one post-incremented store, instead of
// four VMLADAV, a vector built lane by lane and a scatter per key.
template <bool kTwo, bool kFold, bool kShift>
void few_rows(const int8x16_t* qv, int8x16_t zqv, const int32_t* base, ConstMatS8 k, int32_t shift, MatS32 s,
              int32_t t) {
  const int32_t d = k.cols;
  const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d));
  const int8x16_t q0 = qv[0], q1 = qv[1];
  const int32_t b0 = base[0], b1 = base[1];
  int32_t* o0 = s.row(t);
  int32_t* o1 = s.row(t + (kTwo ? 1 : 0));
  const auto step = [&](int8x16_t kv) {
    const int32_t z = kFold ? 0 : vmladavq_s8(zqv, kv);
    int32_t a0 = vmladavaq_s8(b0 - z, q0, kv);
    if (kShift) a0 >>= shift;
    *o0++ = a0;
    if (kTwo) {
      int32_t a1 = vmladavaq_s8(b1 - z, q1, kv);
      if (kShift) a1 >>= shift;
      *o1++ = a1;
    }
  };
  const int32_t short_by = d >= 16 ? 0 : (16 - d + k.stride - 1) / k.stride;  // as small_rows
  const int32_t safe = k.rows - short_by > 0 ? k.rows - short_by : 0;
  const int8_t* kr = k.data;
  int32_t j = 0;
  for (; j < safe; ++j, kr += k.stride) step(vldrbq_s8(kr));
  for (; j < k.rows; ++j, kr += k.stride) step(vldrbq_z_s8(kr, pred));
}

template <bool kFold, bool kShift>
void few_rows(int32_t nr, const int8x16_t* qv, int8x16_t zqv, const int32_t* base, ConstMatS8 k,
              int32_t shift, MatS32 s, int32_t t) {
  if (nr == 2) {
    few_rows<true, kFold, kShift>(qv, zqv, base, k, shift, s, t);
  } else {
    few_rows<false, kFold, kShift>(qv, zqv, base, k, shift, s, t);
  }
}

// Rows t .. t + nr - 1 (nr <= 4), head_dim <= 16: the query rows loaded once
// (zero past d and in rows >= nr), q - zq folded in where it fits int8, and
// the per-row constants d zq zk - zk sum(q) (+ the rounding half) as one vector.
template <bool kFull>
void small_block(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t half, int32_t shift, MatS32 s,
                 int32_t t, int32_t nr) {
  const int32_t d = q.cols;
  const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d));
  int8x16_t qv[4];             // [4] rows, zero past d and in rows >= nr
  int8_t lo = 127, hi = -128;  // min and max of q[0 .. nr) over the lanes < d
  for (int32_t r = 0; r < 4; ++r) {
    qv[r] = vdupq_n_s8(0);
    if (r < nr) {
      qv[r] = vldrbq_z_s8(q.row(t + r), pred);
      lo = vminvq_p_s8(lo, qv[r], pred);
      hi = vmaxvq_p_s8(hi, qv[r], pred);
    }
  }
  const bool fold = zq != 0 && hi - zq <= 127 && lo - zq >= -128;
  int32_t base[4] = {};  // [nr] used: the row's constant terms + half
  for (int32_t r = 0; r < nr; ++r) {
    if (fold) qv[r] = vsubq_m_n_s8(qv[r], qv[r], static_cast<int8_t>(zq), pred);  // q', zero past d
    const int32_t qsum = vaddvq_s8(qv[r]);
    base[r] = (fold ? 0 : d * zq * zk) - zk * qsum + half;
  }
  if (!kFull && nr <= 2) {
    if (fold || zq == 0) {
      if (shift > 0) {
        few_rows<true, true>(nr, qv, qv[0], base, k, shift, s, t);
      } else {
        few_rows<true, false>(nr, qv, qv[0], base, k, shift, s, t);
      }
    } else {
      const int8x16_t zqv = vdupq_m_n_s8(vdupq_n_s8(0), static_cast<int8_t>(zq), pred);  // zq in lanes < d
      few_rows<false, true>(nr, qv, zqv, base, k, shift, s, t);
    }
    return;
  }
  const int32x4_t vbase = lanes(base[0], base[1], base[2], base[3]);
  if (fold || zq == 0) {
    if (shift > 0) {
      small_rows<kFull, true, true>(qv, nr, qv[0], vbase, k, shift, s, t);
    } else {
      small_rows<kFull, true, false>(qv, nr, qv[0], vbase, k, shift, s, t);
    }
  } else {
    const int8x16_t zqv = vdupq_m_n_s8(vdupq_n_s8(0), static_cast<int8_t>(zq), pred);  // zq in lanes < d
    small_rows<kFull, false, true>(qv, nr, zqv, vbase, k, shift, s, t);
  }
}

template <int R>
void rows(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t half, int32_t shift, MatS32 s,
          int32_t t) {
  constexpr size_t kR = static_cast<size_t>(R);
  const int32_t d = q.cols;
  const int8_t* a[kR];  // query rows [d]
  int32_t base[kR];     // d zq zk - zk sum(q)
  for (size_t r = 0; r < kR; ++r) {
    a[r] = q.row(t + static_cast<int32_t>(r));
    int32_t qsum = 0;
    for (int32_t c = 0; c < d; c += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d - c));
      qsum = vaddvaq_p_s8(qsum, vldrbq_z_s8(a[r] + c, pred), pred);
    }
    base[r] = d * zq * zk - zk * qsum;
  }
  for (int32_t j = 0; j < k.rows; ++j) {
    const int8_t* b = k.row(j);  // [d]
    int32_t acc[kR] = {};
    int32_t ksum = 0;
    for (int32_t c = 0; c < d; c += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d - c));
      const int8x16_t kv = vldrbq_z_s8(b + c, pred);
      ksum = vaddvaq_p_s8(ksum, kv, pred);
      for (size_t r = 0; r < kR; ++r) acc[r] = vmladavaq_p_s8(acc[r], vldrbq_z_s8(a[r] + c, pred), kv, pred);
    }
    for (size_t r = 0; r < kR; ++r) {
      s.row(t + static_cast<int32_t>(r))[j] = (acc[r] + base[r] - zq * ksum + half) >> shift;
    }
  }
}

}  // namespace

void scores_s8_mve(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  int32_t t = 0;
  if (q.cols <= 16) {
    for (; t + 4 <= q.rows; t += 4) small_block<true>(q, zq, k, zk, half, score_shift, s, t, 4);
    if (t < q.rows) small_block<false>(q, zq, k, zk, half, score_shift, s, t, q.rows - t);
    return;
  }
  for (; t + 4 <= q.rows; t += 4) rows<4>(q, zq, k, zk, half, score_shift, s, t);
  if (q.rows - t == 3) rows<3>(q, zq, k, zk, half, score_shift, s, t);
  if (q.rows - t == 2) rows<2>(q, zq, k, zk, half, score_shift, s, t);
  if (q.rows - t == 1) rows<1>(q, zq, k, zk, half, score_shift, s, t);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
