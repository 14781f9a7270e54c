// kernels/neon/neon_fixed.h: the integer NEON kernels of the neon variants
// (src/kernels/neon/*_fixed_neon.cpp), AArch64 and ARMv7-A alike.
// Include only under ATTN_HAVE_NEON.
//
// Bit-exact with ref: only exact integer arithmetic (widening multiplies
// SMLAL / SMULL, SDOT where the target has it, no saturating instruction),
// sums reordered only where the accumulator cannot leave its range (each
// kernel says why), requantization scalar through kernels/fixed_point.h.
//   linear / scores  row-by-row dot products, 2 rows x 4 rows per block
//                    (kernels/fixed_blocks.h), K in steps of 8 (16 with SDOT),
//                    scalar K tail
//   weighted sum     4 rows x 8 value columns, one key at a time (SMLAL by
//                    the scalar probability), scalar column tail
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arch.h"
#include "kernels/fixed_blocks.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace neonfx {

inline int32_t hsum(int32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_s32(v);
#else
  const int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
  return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}
inline int64_t hsum(int64x2_t v) { return vgetq_lane_s64(v, 0) + vgetq_lane_s64(v, 1); }

inline int32_t wadd(int32_t a, int32_t b) { return fp::wrap_add(a, b); }

// out[i][j] = sum_k (a[i, k] - za) (b[j, k] - zb), int32, wrapping: every
// term and every lane's partial sum are int32 and addition is associative mod
// 2^32, so the result is ref's (which the caller keeps in int32).
template <int MR, int NR>
inline void dot_block_s8(const int8_t* a, int32_t lda, int32_t za, const int8_t* b, int32_t ldb, int32_t zb,
                         int32_t K, int32_t (*out)[4]) {
  int32_t k = 0;
#if ATTN_HAVE_DOTPROD
  // SDOT on the raw int8 values, zero points applied after:
  //   sum (a - za)(b - zb) = sum ab - zb sum a - za sum b + n za zb   (n = terms so far)
  int32x4_t ab[size_t{MR}][size_t{NR}], sa[size_t{MR}], sb[size_t{NR}];
  for (int i = 0; i < MR; ++i) {
    sa[i] = vdupq_n_s32(0);
    for (int j = 0; j < NR; ++j) ab[i][j] = vdupq_n_s32(0);
  }
  for (int j = 0; j < NR; ++j) sb[j] = vdupq_n_s32(0);
  const int8x16_t ones = vdupq_n_s8(1);
  for (; k + 16 <= K; k += 16) {
    int8x16_t va[size_t{MR}];
    for (int i = 0; i < MR; ++i) {
      va[i] = vld1q_s8(a + static_cast<ptrdiff_t>(i) * lda + k);
      sa[i] = vdotq_s32(sa[i], va[i], ones);
    }
    for (int j = 0; j < NR; ++j) {
      const int8x16_t vb = vld1q_s8(b + static_cast<ptrdiff_t>(j) * ldb + k);
      sb[j] = vdotq_s32(sb[j], vb, ones);
      for (int i = 0; i < MR; ++i) ab[i][j] = vdotq_s32(ab[i][j], va[i], vb);
    }
  }
  const uint32_t n = static_cast<uint32_t>(k);
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      const uint32_t v = static_cast<uint32_t>(hsum(ab[i][j])) -
                         static_cast<uint32_t>(zb) * static_cast<uint32_t>(hsum(sa[i])) -
                         static_cast<uint32_t>(za) * static_cast<uint32_t>(hsum(sb[j])) +
                         n * static_cast<uint32_t>(za) * static_cast<uint32_t>(zb);
      out[i][j] = static_cast<int32_t>(v);
    }
  }
#else
  int32x4_t acc[size_t{MR}][size_t{NR}];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_s32(0);
  const int16x8_t vza = vdupq_n_s16(static_cast<int16_t>(za));
  const int16x8_t vzb = vdupq_n_s16(static_cast<int16_t>(zb));
  for (; k + 8 <= K; k += 8) {
    int16x8_t va[size_t{MR}];  // [8] a - za
    for (int i = 0; i < MR; ++i)
      va[i] = vsubq_s16(vmovl_s8(vld1_s8(a + static_cast<ptrdiff_t>(i) * lda + k)), vza);
    for (int j = 0; j < NR; ++j) {
      const int16x8_t vb = vsubq_s16(vmovl_s8(vld1_s8(b + static_cast<ptrdiff_t>(j) * ldb + k)), vzb);
      for (int i = 0; i < MR; ++i) {
        acc[i][j] = vmlal_s16(acc[i][j], vget_low_s16(va[i]), vget_low_s16(vb));
        acc[i][j] = vmlal_s16(acc[i][j], vget_high_s16(va[i]), vget_high_s16(vb));
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) out[i][j] = hsum(acc[i][j]);
#endif
  for (; k < K; ++k) {
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) {
        out[i][j] = wadd(out[i][j], (int32_t{a[static_cast<ptrdiff_t>(i) * lda + k]} - za) *
                                        (int32_t{b[static_cast<ptrdiff_t>(j) * ldb + k]} - zb));
      }
    }
  }
}

// out[i][j] = sum_k a[i, k] b[j, k], int16 a, int8 b, int64. |term| <= 2^22:
// int32 lanes are exact over chunks of 256 K (2^30), then pairwise-widened
// into int64 lanes (SADALP).
template <int MR, int NR>
inline void dot_block_s16x8(const int16_t* a, int32_t lda, const int8_t* b, int32_t ldb, int32_t K,
                            int64_t (*out)[4]) {
  constexpr int32_t kChunk = 256;
  int64x2_t acc64[size_t{MR}][size_t{NR}];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc64[i][j] = vdupq_n_s64(0);
  int32_t k = 0;
  while (k + 8 <= K) {
    const int32_t kend = K - k > kChunk ? k + kChunk : K;
    int32x4_t acc[size_t{MR}][size_t{NR}];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_s32(0);
    for (; k + 8 <= kend; k += 8) {
      int16x8_t va[size_t{MR}];
      for (int i = 0; i < MR; ++i) va[i] = vld1q_s16(a + static_cast<ptrdiff_t>(i) * lda + k);
      for (int j = 0; j < NR; ++j) {
        const int16x8_t vb = vmovl_s8(vld1_s8(b + static_cast<ptrdiff_t>(j) * ldb + k));
        for (int i = 0; i < MR; ++i) {
          acc[i][j] = vmlal_s16(acc[i][j], vget_low_s16(va[i]), vget_low_s16(vb));
          acc[i][j] = vmlal_s16(acc[i][j], vget_high_s16(va[i]), vget_high_s16(vb));
        }
      }
    }
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc64[i][j] = vpadalq_s32(acc64[i][j], acc[i][j]);
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) out[i][j] = hsum(acc64[i][j]);
  for (; k < K; ++k) {
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) {
        out[i][j] +=
            int32_t{a[static_cast<ptrdiff_t>(i) * lda + k]} * int32_t{b[static_cast<ptrdiff_t>(j) * ldb + k]};
      }
    }
  }
}

// out[i][j] = sum_k a[i, k] b[j, k], int16 a and b, int64: each product
// (|p| <= 2^30) exact in int32 (SMULL), widened pairwise into int64 (SADALP).
template <int MR, int NR>
inline void dot_block_s16x16(const int16_t* a, int32_t lda, const int16_t* b, int32_t ldb, int32_t K,
                             int64_t (*out)[4]) {
  int64x2_t acc[size_t{MR}][size_t{NR}];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_s64(0);
  int32_t k = 0;
  for (; k + 8 <= K; k += 8) {
    int16x8_t va[size_t{MR}];
    for (int i = 0; i < MR; ++i) va[i] = vld1q_s16(a + static_cast<ptrdiff_t>(i) * lda + k);
    for (int j = 0; j < NR; ++j) {
      const int16x8_t vb = vld1q_s16(b + static_cast<ptrdiff_t>(j) * ldb + k);
      for (int i = 0; i < MR; ++i) {
        acc[i][j] = vpadalq_s32(acc[i][j], vmull_s16(vget_low_s16(va[i]), vget_low_s16(vb)));
        acc[i][j] = vpadalq_s32(acc[i][j], vmull_s16(vget_high_s16(va[i]), vget_high_s16(vb)));
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) out[i][j] = hsum(acc[i][j]);
  for (; k < K; ++k) {
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) {
        out[i][j] +=
            int32_t{a[static_cast<ptrdiff_t>(i) * lda + k]} * int32_t{b[static_cast<ptrdiff_t>(j) * ldb + k]};
      }
    }
  }
}

// out[i][c] = sum_j p[i, j] v'(j)[c] for MR rows and 8 columns, int32
// (wrapping; the caller bounds the sums), v'(j) = load(j) as int16x8.
template <int MR, class LoadV>
inline void pv_block(const int16_t* p, int32_t ldp, int32_t S, const LoadV& load, int32_t (*out)[8]) {
  int32x4_t lo[size_t{MR}], hi[size_t{MR}];
  for (int i = 0; i < MR; ++i) lo[i] = hi[i] = vdupq_n_s32(0);
  for (int32_t j = 0; j < S; ++j) {
    const int16x8_t v = load(j);
    for (int i = 0; i < MR; ++i) {
      const int16_t pj = p[static_cast<ptrdiff_t>(i) * ldp + j];
      lo[i] = vmlal_n_s16(lo[i], vget_low_s16(v), pj);
      hi[i] = vmlal_n_s16(hi[i], vget_high_s16(v), pj);
    }
  }
  for (int i = 0; i < MR; ++i) {
    vst1q_s32(out[i], lo[i]);
    vst1q_s32(out[i] + 4, hi[i]);
  }
}

// ---- the kernels --------------------------------------------------------

struct DotsLinearS8 {
  ConstMatS8 x, w;
  int32_t zx;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    dot_block_s8<MR, NR>(x.row(i), x.stride, zx, w.row(j), w.stride, 0, x.cols, out);
  }
};

inline void linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  const DotsLinearS8 dots{x, w, p.input_zero_point};
  for_weight_blocks<2, int32_t>(
      x.rows, w.rows, x.cols, dots, [&](int32_t i0, int32_t j0, int32_t(*out)[4], int mr, int nr) {
        for (int i = 0; i < mr; ++i) {
          int8_t* yr = y.row(i0 + i) + j0;  // [nr]
          for (int j = 0; j < nr; ++j) {
            const int32_t n = j0 + j;
            const int32_t acc = wadd(bias != nullptr ? bias[n] : 0, out[i][j]);
            const int32_t v =
                p.output_zero_point + fp::multiply_by_quantized_multiplier(acc, p.multiplier[n], p.shift[n]);
            yr[j] = static_cast<int8_t>(fp::clamp_i32(v, p.act_min, p.act_max));
          }
        }
      });
}

struct DotsLinearS16 {
  ConstMatS16 x;
  ConstMatS8 w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int64_t (*out)[4]) const {
    dot_block_s16x8<MR, NR>(x.row(i), x.stride, w.row(j), w.stride, x.cols, out);
  }
};

inline void linear_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  const DotsLinearS16 dots{x, w};
  linear_s16_blocks(dots, x.rows, w.rows, bias, p, y);
}

struct DotsScoresS8 {
  ConstMatS8 q, k;
  int32_t zq, zk;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    dot_block_s8<MR, NR>(q.row(i), q.stride, zq, k.row(j), k.stride, zk, q.cols, out);
  }
};

inline void scores_s8(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  const DotsScoresS8 dots{q, k, zq, zk};
  for_blocks<2, int32_t>(q.rows, k.rows, dots, [&](int32_t i0, int32_t j0, int32_t(*out)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i) {
      int32_t* sr = s.row(i0 + i) + j0;  // [nr]
      for (int j = 0; j < nr; ++j) sr[j] = (out[i][j] + half) >> score_shift;
    }
  });
}

struct DotsScoresS16 {
  ConstMatS16 q, k;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int64_t (*out)[4]) const {
    dot_block_s16x16<MR, NR>(q.row(i), q.stride, k.row(j), k.stride, q.cols, out);
  }
};

inline void scores_s16(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  const int64_t half = score_shift > 0 ? int64_t{1} << (score_shift - 1) : 0;
  const DotsScoresS16 dots{q, k};
  for_blocks<2, int64_t>(q.rows, k.rows, dots, [&](int32_t i0, int32_t j0, int64_t(*out)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i) {
      int32_t* sr = s.row(i0 + i) + j0;  // [nr]
      for (int j = 0; j < nr; ++j) sr[j] = static_cast<int32_t>((out[i][j] + half) >> score_shift);
    }
  });
}

// int32 sums: ref bounds them (see weighted_sum_s8_ref).
template <int MR>
inline void weighted_sum_s8_rows(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                                 MatS8 o, int32_t t0) {
  const int16x8_t vzv = vdupq_n_s16(static_cast<int16_t>(zv));
  int32_t out[size_t{MR}][8];
  int32_t c0 = 0;
  for (; c0 + 8 <= v.cols; c0 += 8) {
    const auto load = [&](int32_t j) { return vsubq_s16(vmovl_s8(vld1_s8(v.row(j) + c0)), vzv); };
    pv_block<MR>(p.row(t0), p.stride, p.cols, load, out);
    for (int i = 0; i < MR; ++i) {
      int8_t* orow = o.row(t0 + i) + c0;  // [8]
      for (int c = 0; c < 8; ++c) {
        orow[c] = static_cast<int8_t>(
            fp::clamp_i32(zo + fp::multiply_by_quantized_multiplier(out[i][c], m, sh), -128, 127));
      }
    }
  }
  if (c0 < v.cols) {
    weighted_sum_s8_ref(p.rows_slice(t0, MR), v.cols_slice(c0, v.cols - c0), zv, Requant{m, sh, zo},
                        o.rows_slice(t0, MR).cols_slice(c0, v.cols - c0));
  }
}

inline void weighted_sum_s8(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                            MatS8 o) {
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) weighted_sum_s8_rows<4>(p, v, zv, m, sh, zo, o, t);
  for (; t < p.rows; ++t) weighted_sum_s8_rows<1>(p, v, zv, m, sh, zo, o, t);
}

// ref sums in int64; int32 is exact when sum_j |p[t, j]| < 2^16 (every partial
// sum is then below 2^31 in magnitude), which the softmax's probabilities
// meet. Rows that do not go to ref.
template <int MR>
inline void weighted_sum_s16_rows(ConstMatS16 p, ConstMatS16 v, int32_t m, int32_t sh, MatS16 o, int32_t t0) {
  for (int i = 0; i < MR; ++i) {
    const int16_t* pr = p.row(t0 + i);  // [S]
    int64_t sum = 0;
    for (int32_t j = 0; j < p.cols; ++j) sum += pr[j] < 0 ? -int32_t{pr[j]} : int32_t{pr[j]};
    if (sum >= (int64_t{1} << 16)) {
      weighted_sum_s16_ref(p.rows_slice(t0, MR), v, Requant{m, sh, 0}, o.rows_slice(t0, MR));
      return;
    }
  }
  int32_t out[size_t{MR}][8];
  int32_t c0 = 0;
  for (; c0 + 8 <= v.cols; c0 += 8) {
    const auto load = [&](int32_t j) { return vld1q_s16(v.row(j) + c0); };
    pv_block<MR>(p.row(t0), p.stride, p.cols, load, out);
    for (int i = 0; i < MR; ++i) {
      int16_t* orow = o.row(t0 + i) + c0;  // [8]
      for (int c = 0; c < 8; ++c) {
        orow[c] = static_cast<int16_t>(
            fp::clamp_i32(fp::multiply_by_quantized_multiplier_s64(out[i][c], m, sh), -32768, 32767));
      }
    }
  }
  if (c0 < v.cols) {
    weighted_sum_s16_ref(p.rows_slice(t0, MR), v.cols_slice(c0, v.cols - c0), Requant{m, sh, 0},
                         o.rows_slice(t0, MR).cols_slice(c0, v.cols - c0));
  }
}

inline void weighted_sum_s16(ConstMatS16 p, ConstMatS16 v, int32_t m, int32_t sh, MatS16 o) {
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) weighted_sum_s16_rows<4>(p, v, m, sh, o, t);
  for (; t < p.rows; ++t) weighted_sum_s16_rows<1>(p, v, m, sh, o, t);
}

}  // namespace neonfx
}  // namespace detail
}  // namespace attn
