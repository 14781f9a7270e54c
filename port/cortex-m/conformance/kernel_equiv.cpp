// kernel_equiv.cpp: every kernel variant dispatch.cpp picked for this core
// against its portable scalar ref, on the board itself. Fixed point (DSP on
// M4/M7, MVE on M55, ref elsewhere): bit-exact. Float32 (MVE on M55, ref
// elsewhere): within the error bounds of tests/variants_f32_test.cpp, each op
// with a control that must break them. Random shapes cover the tails of every
// unroll width (1..kMax rows, odd column counts), row strides wider than the
// rows, zero points and requantization parameters, masks; outputs have guard
// bytes around them.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/config.h"
#include "conformance.h"
#include "internal/arch.h"
#include "internal/fixed_point.h"
#include "internal/kernel_table.h"
#include "internal/mve_requantize.h"
#if ATTN_HAVE_MVE_FP
#include "internal/mve_f32.h"
#endif

namespace {

using namespace attn;

constexpr int32_t kMaxRows = 9;   // M, or T query rows
constexpr int32_t kMaxCols = 80;  // N, S, K, head_dim (+ stride padding)
constexpr int32_t kCases = 60;    // random shapes per op

uint32_t g_rng = 0x12345678u;
uint32_t next() {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}
int32_t uniform(int32_t lo, int32_t hi) {  // [lo, hi]
  return lo + static_cast<int32_t>(next() % static_cast<uint32_t>(hi - lo + 1));
}
template <typename T>
void fill(T* p, size_t n, int32_t lo, int32_t hi) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(uniform(lo, hi));
}

alignas(16) int8_t g_x8[kMaxRows * kMaxCols];
alignas(16) int16_t g_x16[kMaxRows * kMaxCols];
alignas(16) int8_t g_w8[kMaxCols * kMaxCols];
alignas(16) int16_t g_w16[kMaxCols * kMaxCols];
alignas(16) int16_t g_p16[kMaxRows * 2 * kMaxCols];
alignas(16) int32_t g_bias32[kMaxCols];
alignas(16) int64_t g_bias64[kMaxCols];
alignas(16) int32_t g_mult[kMaxCols];
alignas(16) int32_t g_shift[kMaxCols];
// Outputs: [rows, cols] at stride kMaxCols, plus guard space (byte compared).
alignas(16) uint8_t g_out_a[kMaxRows * kMaxCols * 4 + 64];
alignas(16) uint8_t g_out_b[kMaxRows * kMaxCols * 4 + 64];

int g_failed = 0;
int g_checks = 0;

void compare(const char* op, int32_t m, int32_t n, int32_t k) {
  ++g_checks;
  if (std::memcmp(g_out_a, g_out_b, sizeof g_out_a) != 0) {
    ++g_failed;
    std::printf("FAIL kernel %s M=%ld N=%ld K=%ld: dispatched != ref\n", op, static_cast<long>(m),
                static_cast<long>(n), static_cast<long>(k));
  }
}
void clear_outputs() {
  std::memset(g_out_a, 0xC3, sizeof g_out_a);
  std::memset(g_out_b, 0xC3, sizeof g_out_b);
}
void random_requant(int32_t n, int32_t shift_lo, int32_t shift_hi) {
  for (int32_t i = 0; i < n; ++i) {
    g_mult[i] = 0x40000000 + static_cast<int32_t>(next() & 0x3FFFFFFF);
    g_shift[i] = uniform(shift_lo, shift_hi);
  }
}

#if ATTN_WITH_S8
void linear_s8_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    // Mostly K <= kMaxCols - 3 and N up to kMaxCols (past the 64-channel groups of the MVE kernel);
    // every 10th case a long row (K > 256: the MVE kernel's unbuffered path) with M <= 2, N <= 20.
    // Even cases: K a multiple of 4 and every shift <= -2 (the DSP kernel's all-asm path when
    // there is a bias); odd ones: any K and shifts in [-14, 1].
    const bool long_rows = i % 10 == 9;
    const bool folded = i % 2 == 0;
    const int32_t M = long_rows ? uniform(1, 2) : uniform(1, kMaxRows);
    const int32_t N = long_rows ? uniform(1, 20) : uniform(1, kMaxCols);
    const int32_t K = long_rows ? uniform(257, 300)
                      : folded  ? 4 * uniform(1, (kMaxCols - 3) / 4)
                                : uniform(1, kMaxCols - 3);
    const int32_t xs = K + uniform(0, 3);  // row stride of x
    fill(g_x8, sizeof g_x8, -128, 127);
    fill(g_w8, static_cast<size_t>(N * K), -127, 127);
    fill(g_bias32, static_cast<size_t>(N), -100000, 100000);
    random_requant(N, -14, folded ? -2 : 1);
    // Every 4th folded case: the last channel's shift does not fold (the DSP kernel's
    // all-asm path stops at its block of 32 channels and hands the rest to rows4).
    if (folded && i % 4 == 2) g_shift[N - 1] = uniform(-1, 1);
    LinearS8Params p;
    p.input_zero_point = i % 3 == 0 ? 0 : uniform(-128, 127);
    p.output_zero_point = uniform(-128, 127);
    p.multiplier = g_mult;
    p.shift = g_shift;
    clear_outputs();
    const ConstMatS8 x{g_x8, M, K, xs};
    const ConstMatS8 w = matrix(static_cast<const int8_t*>(g_w8), N, K);
    const int32_t* bias = i % 5 == 4 ? nullptr : g_bias32;
    detail::best(detail::kLinearS8)(x, w, bias, p, MatS8{reinterpret_cast<int8_t*>(g_out_a), M, N, kMaxCols});
    detail::linear_s8_ref(x, w, bias, p, MatS8{reinterpret_cast<int8_t*>(g_out_b), M, N, kMaxCols});
    compare("linear_s8", M, N, K);
#if ATTN_HAVE_DSP
    // forward_s8's V^T: linear_s8_t_dsp's channels [0, n0) into yt [N, M] (row stride kMaxRows)
    // against the ref's columns; every channel where the all-asm path takes them all.
    int8_t y_ref[kMaxRows * kMaxCols];  // [M, N] at stride kMaxCols
    std::memcpy(y_ref, g_out_b, sizeof y_ref);
    clear_outputs();
    const int32_t n0 =
        detail::linear_s8_t_dsp(x, w, bias, p, MatS8{reinterpret_cast<int8_t*>(g_out_a), N, M, kMaxRows});
    for (int32_t n = 0; n < n0; ++n) {
      for (int32_t m = 0; m < M; ++m)
        g_out_b[n * kMaxRows + m] = static_cast<uint8_t>(y_ref[m * kMaxCols + n]);
    }
    compare("linear_s8_t", M, N, K);
    if (bias != nullptr && folded && i % 4 != 2 && !long_rows && n0 != N) {
      ++g_failed;
      std::printf("FAIL kernel linear_s8_t M=%ld N=%ld K=%ld: %ld channels of %ld\n", static_cast<long>(M),
                  static_cast<long>(N), static_cast<long>(K), static_cast<long>(n0), static_cast<long>(N));
    }
#endif
  }
}

void scores_s8_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    // Every 7th case head_dim 4 (the DSP kernel's one-step key loop).
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols), d = i % 7 == 3 ? 4 : uniform(1, 40);
    const int32_t qs = d + uniform(0, 40 - d + 3), ks = d + uniform(0, 3);
    // Every 3rd case q in [-60, 60]: q - zq then fits int8 for most zq (the MVE kernel's folded path).
    const int32_t qr = i % 3 == 1 ? 60 : 128;
    fill(g_x8, sizeof g_x8, -qr, qr - 1);
    fill(g_w8, sizeof g_w8, -128, 127);
    // zq = 0 in every 5th case (the MVE kernel has a path without the zq sum(k) term).
    const int32_t zq = i % 5 == 0 ? 0 : uniform(-128, 127), zk = uniform(-128, 127);
    const int32_t sh = i % 4 == 0 ? uniform(1, 6) : 0;
    clear_outputs();
    const ConstMatS8 q{g_x8, T, d, qs};
    const ConstMatS8 k{g_w8, S, d, ks};
    detail::best(detail::kScoresS8)(q, zq, k, zk, sh,
                                    MatS32{reinterpret_cast<int32_t*>(g_out_a), T, S, kMaxCols});
    detail::scores_s8_ref(q, zq, k, zk, sh, MatS32{reinterpret_cast<int32_t*>(g_out_b), T, S, kMaxCols});
    compare("scores_s8", T, S, d);
  }
}

void weighted_sum_s8_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    // Every 10th case a long row (S > 128: the MVE kernel's key blocks), T <= 4, d <= 16, small p.
    const bool long_rows = i % 10 == 5;
    const int32_t T = long_rows ? uniform(1, 4) : uniform(1, kMaxRows);
    const int32_t S = long_rows ? uniform(129, 300) : uniform(1, kMaxCols);
    const int32_t d = long_rows ? uniform(1, 16) : uniform(1, 40);
    const int32_t vs = long_rows ? d + uniform(0, 4) : d + uniform(0, 40 - d + 3);
    fill(g_p16, sizeof g_p16 / sizeof g_p16[0], 0, 32767 / (i % 2 && !long_rows ? 1 : 16));
    fill(g_w8, sizeof g_w8, -128, 127);
    const int32_t zv = uniform(-128, 127), zo = uniform(-128, 127);
    random_requant(1, -20, -4);
    clear_outputs();
    const ConstMatS16 p{g_p16, T, S, long_rows ? S : 2 * kMaxCols};
    const ConstMatS8 v{g_w8, S, d, vs};
    detail::best(detail::kWeightedSumS8)(p, v, zv, g_mult[0], g_shift[0], zo,
                                         MatS8{reinterpret_cast<int8_t*>(g_out_a), T, d, kMaxCols});
    detail::weighted_sum_s8_ref(p, v, zv, g_mult[0], g_shift[0], zo,
                                MatS8{reinterpret_cast<int8_t*>(g_out_b), T, d, kMaxCols});
    compare("weighted_sum_s8", T, S, d);
  }
}

// A fused-softmax configuration with its largest diff_limit (t < 2^20).
detail::FusedSoftmax random_softmax() {
  detail::FusedSoftmax sm;
  sm.exp_multiplier = 0x80000000u + (next() << 7);
  sm.exp_shift = uniform(4, 16);
  const uint32_t lim = ((uint32_t{1} << 20) / (sm.exp_multiplier >> 16)) << (16 - sm.exp_shift);
  sm.diff_limit = static_cast<int32_t>(lim);
  return sm;
}

alignas(16) int32_t g_e32[kMaxRows * 2 * kMaxCols];  // exps [rows, S] at stride 2 * kMaxCols
uint32_t g_recip[kMaxRows];

// P.V over V stored transposed (vt [d, S]) with P given as the softmax's exps
// and per-row normalizers, S up to 2 * kMaxCols: past the DSP kernel's
// 128-key expansion block. The exps come from softmax_exps_row_ref over
// random scores with masked ranges, so the probabilities are real ones.
void weighted_sum_vt_s8_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, 2 * kMaxCols), d = uniform(1, 40);
    const int32_t vs = S + uniform(0, 3);
    if (d * vs > static_cast<int32_t>(sizeof g_w8)) continue;
    const detail::FusedSoftmax sm = random_softmax();
    const int32_t spread = i % 2 ? sm.diff_limit : sm.diff_limit / 8 + 1;
    for (int32_t t = 0; t < T; ++t) {
      int32_t* row = g_e32 + t * 2 * kMaxCols;
      for (int32_t j = 0; j < S; ++j) row[j] = uniform(-spread, spread);
      const int32_t begin = i % 3 == 0 ? uniform(0, S) : 0;
      const int32_t end = i % 3 == 0 ? uniform(begin, S) : S;
      g_recip[t] = detail::softmax_exps_row_ref(row, begin, end, S, sm);
    }
    fill(g_w8, sizeof g_w8, -128, 127);
    const int32_t zv = uniform(-128, 127), zo = uniform(-128, 127);
    random_requant(1, -20, -1);
    clear_outputs();
    const ConstMatS32 e{g_e32, T, S, 2 * kMaxCols};
    const ConstMatS8 vt{g_w8, d, S, vs};
    detail::best(detail::kWeightedSumVtS8)(e, g_recip, vt, zv, g_mult[0], g_shift[0], zo,
                                           MatS8{reinterpret_cast<int8_t*>(g_out_a), T, d, kMaxCols});
    detail::weighted_sum_vt_s8_ref(e, g_recip, vt, zv, g_mult[0], g_shift[0], zo,
                                   MatS8{reinterpret_cast<int8_t*>(g_out_b), T, d, kMaxCols});
    compare("weighted_sum_vt_s8", T, S, d);
  }
}

// The softmax's first pass alone (exps over the row, its normalizer).
void softmax_exps_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t n = uniform(1, kMaxCols);
    const int32_t begin = i % 3 == 0 ? uniform(0, n) : 0;
    const int32_t end = i % 3 == 0 ? uniform(begin, n) : n;
    const detail::FusedSoftmax sm = random_softmax();
    auto* a = reinterpret_cast<int32_t*>(g_out_a);
    auto* b = reinterpret_cast<int32_t*>(g_out_b);
    clear_outputs();
    const int32_t spread = i % 2 ? sm.diff_limit : sm.diff_limit / 8 + 1;
    for (int32_t j = 0; j < n; ++j) a[j] = b[j] = uniform(-spread, spread);
    const uint32_t ra = detail::best(detail::kSoftmaxExps)(a, begin, end, n, sm);
    const uint32_t rb = detail::softmax_exps_row_ref(b, begin, end, n, sm);
    a[n] = static_cast<int32_t>(ra), b[n] = static_cast<int32_t>(rb);  // compared with the row
    compare("softmax_exps_row", 1, n, end - begin);
  }
}
#endif  // ATTN_WITH_S8

#if ATTN_WITH_S16
void linear_s16_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t M = uniform(1, kMaxRows), N = uniform(1, 40), K = uniform(1, kMaxCols - 3);
    const int32_t xs = K + uniform(0, 3);
    fill(g_x16, sizeof g_x16 / 2, -32768, 32767);
    fill(g_w8, static_cast<size_t>(N * K), -127, 127);
    for (int32_t n = 0; n < N; ++n) g_bias64[n] = static_cast<int64_t>(uniform(-(1 << 22), 1 << 22)) * 1000;
    random_requant(N, -14, 1);
    LinearS16Params p;
    p.multiplier = g_mult;
    p.shift = g_shift;
    clear_outputs();
    const ConstMatS16 x{g_x16, M, K, xs};
    const ConstMatS8 w = matrix(static_cast<const int8_t*>(g_w8), N, K);
    const int64_t* bias = i % 5 == 4 ? nullptr : g_bias64;
    detail::best(detail::kLinearS16)(x, w, bias, p,
                                     MatS16{reinterpret_cast<int16_t*>(g_out_a), M, N, kMaxCols});
    detail::linear_s16_ref(x, w, bias, p, MatS16{reinterpret_cast<int16_t*>(g_out_b), M, N, kMaxCols});
    compare("linear_s16", M, N, K);
  }
}

void scores_s16_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    // Every 7th case head_dim 4 (the DSP kernel's one-step key loop).
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols), d = i % 7 == 3 ? 4 : uniform(1, 40);
    const int32_t qs = d + uniform(0, 3), ks = d + uniform(0, 3);
    fill(g_x16, sizeof g_x16 / 2, -32768, 32767);
    fill(g_w16, sizeof g_w16 / 2, -32768, 32767);
    const int32_t sh = uniform(6, 12);  // head_dim < 2^score_shift keeps the scores in int32
    clear_outputs();
    const ConstMatS16 q{g_x16, T, d, qs};
    const ConstMatS16 k{g_w16, S, d, ks};
    detail::best(detail::kScoresS16)(q, k, sh, MatS32{reinterpret_cast<int32_t*>(g_out_a), T, S, kMaxCols});
    detail::scores_s16_ref(q, k, sh, MatS32{reinterpret_cast<int32_t*>(g_out_b), T, S, kMaxCols});
    compare("scores_s16", T, S, d);
  }
}

void weighted_sum_s16_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    // Every 7th case head_dim 4 (the DSP kernel's one-step key loop).
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols), d = i % 7 == 3 ? 4 : uniform(1, 40);
    const int32_t vs = d + uniform(0, 3);
    fill(g_p16, sizeof g_p16 / sizeof g_p16[0], 0, 32767 / (i % 2 ? 1 : 16));
    fill(g_w16, sizeof g_w16 / 2, -32768, 32767);
    random_requant(1, -20, -4);
    clear_outputs();
    const ConstMatS16 p{g_p16, T, S, 2 * kMaxCols};
    const ConstMatS16 v{g_w16, S, d, vs};
    detail::best(detail::kWeightedSumS16)(p, v, g_mult[0], g_shift[0],
                                          MatS16{reinterpret_cast<int16_t*>(g_out_a), T, d, kMaxCols});
    detail::weighted_sum_s16_ref(p, v, g_mult[0], g_shift[0],
                                 MatS16{reinterpret_cast<int16_t*>(g_out_b), T, d, kMaxCols});
    compare("weighted_sum_s16", T, S, d);
  }
}
#endif  // ATTN_WITH_S16

#if ATTN_WITH_S8 || ATTN_WITH_S16
// The fused softmax in place over a row of int32 scores, masked ranges included.
void softmax_fused_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t n = uniform(1, kMaxCols);
    const int32_t begin = i % 3 == 0 ? uniform(0, n) : 0;
    const int32_t end = i % 3 == 0 ? uniform(begin, n) : n;
    detail::FusedSoftmax sm;
    sm.exp_multiplier = 0x80000000u + (next() << 7);
    sm.exp_shift = uniform(4, 16);
    // Largest u with t(u) < 2^20.
    const uint32_t lim = ((uint32_t{1} << 20) / (sm.exp_multiplier >> 16)) << (16 - sm.exp_shift);
    // Every 4th case the widest diff_limit the checks allow (t(diff_limit) >= 2^24: the MVE kernel's
    // masked-index path), the scores still within 2 lim of each other (t < 2^21, the ref's range).
    sm.diff_limit = static_cast<int32_t>(i % 4 == 3 ? 0xFFFFFFFFu >> sm.exp_shift : lim);
    auto* a = reinterpret_cast<int32_t*>(g_out_a);
    auto* b = reinterpret_cast<int32_t*>(g_out_b);
    clear_outputs();
    const int32_t spread = i % 2 ? static_cast<int32_t>(lim) : static_cast<int32_t>(lim / 8 + 1);
    for (int32_t j = 0; j < n; ++j) a[j] = b[j] = uniform(-spread, spread);
    detail::best(detail::kSoftmaxRows)(a, n, 1, &begin, &end, n, sm);
    detail::softmax_fused_row_ref(b, begin, end, n, sm);
    compare("softmax_fused_row", 1, n, end - begin);
  }
}
#endif

#if ATTN_WITH_F32
// ---- float32 ----------------------------------------------------------------
// The dispatched f32 set against ref, within the bounds of
// tests/variants_f32_test.cpp (derived there): variants differ from ref only
// in the order of additions and in fused multiply-adds, so per element
//   |variant - ref| <= 2 (K + 2) u (sum_k |a_k b_k| + |bias|) (* scale)
// for linear (K = in features), scores (K = head dim) and weighted sum
// (K = keys), u = 2^-24; softmax: <= (2 n + 140) u ref + 1e-37 per entry,
// masked (-INFINITY) entries exactly 0. The sums of |a b| are taken in float:
// their own relative error (K u) is far below the bound's slack. Controls:
// in every 10th case the dispatched kernel runs again with the largest term
// of one output dropped (softmax: its largest entry masked) and must break
// the bound (a dropped term exceeds it over 90-fold at these sizes), or the
// comparison could not fail.
constexpr float kU = 5.9604645e-8f;  // 2^-24, unit roundoff of float

alignas(16) float g_fa[kMaxRows * 2 * kMaxCols];  // x, q or p: [rows, <= 2 kMaxCols]
alignas(16) float g_fb[2 * kMaxCols * kMaxCols];  // w, k or v
alignas(16) float g_fbias[kMaxCols];

float frand() { return static_cast<float>(next()) * (2.0f / 16777216.0f) - 1.0f; }  // [-1, 1)
void ffill(float* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = frand();
}
float* out_a() { return reinterpret_cast<float*>(g_out_a); }
float* out_b() { return reinterpret_cast<float*>(g_out_b); }

// Largest |dispatched - ref| / bound(r, c) over [rows, cols] at row stride ld
// (infinite for a NaN, or when the dispatched kernel wrote outside the region).
template <class Bound>
float worst_ratio(int32_t rows, int32_t cols, int32_t ld, Bound bound) {
  float worst = 0.0f;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) {
      const float ratio = std::fabs(out_a()[r * ld + c] - out_b()[r * ld + c]) / bound(r, c);
      if (!(ratio <= worst)) worst = ratio == ratio ? ratio : INFINITY;
    }
  for (size_t b = 0; b < sizeof g_out_a; ++b) {
    const int32_t f = static_cast<int32_t>(b / sizeof(float));
    const bool inside = f / ld < rows && f % ld < cols;
    if (!inside && g_out_a[b] != 0xC3) return INFINITY;
  }
  return worst;
}

struct F32Stats {
  const char* op;
  int cases;
  float worst;   // largest error / bound over the cases
  int controls;  // control runs, each of which must break the bound
  int caught;
};

void check_f32(F32Stats& st, float ratio, int32_t m, int32_t n, int32_t k) {
  ++g_checks;
  ++st.cases;
  if (!(ratio <= st.worst)) st.worst = ratio;
  if (!(ratio <= 1.0f)) {
    ++g_failed;
    std::printf("FAIL kernel %s M=%ld N=%ld K=%ld: dispatched vs ref error/bound %.3g\n", st.op,
                static_cast<long>(m), static_cast<long>(n), static_cast<long>(k), static_cast<double>(ratio));
  }
}

void control_f32(F32Stats& st, float ratio, int32_t m, int32_t n, int32_t k) {
  ++g_checks;
  ++st.controls;
  if (ratio > 1.0f) {
    ++st.caught;
  } else {
    ++g_failed;
    std::printf("FAIL control %s M=%ld N=%ld K=%ld: a dropped term passed (error/bound %.3g)\n", st.op,
                static_cast<long>(m), static_cast<long>(n), static_cast<long>(k), static_cast<double>(ratio));
  }
}

void print_f32(const F32Stats& st) {
  std::printf("kernel %s: %s vs ref, %d cases, worst error/bound %.3f, controls caught %d/%d\n", st.op,
              detail::kLinearF32[0].isa, st.cases, static_cast<double>(st.worst), st.caught, st.controls);
}

// The control of linear, scores and weighted sum: run() (the dispatched
// kernel into out_a) again with a[i] = 0, the largest term of output (0, 0)
// dropped, against ref on the full inputs in out_b: must break the bound.
template <class Run, class Bound>
void drop_term_control(F32Stats& st, float* a, int32_t i, Run run, int32_t rows, int32_t cols, int32_t k,
                       Bound bound) {
  const float saved = a[i];
  a[i] = 0.0f;
  std::memset(g_out_a, 0xC3, sizeof g_out_a);
  run();
  a[i] = saved;
  control_f32(st, worst_ratio(rows, cols, kMaxCols, bound), rows, cols, k);
}

// sum |a[i] b[i * bs]| over i < n: the scale of a dot product's rounding error.
float abs_dot(const float* a, const float* b, int32_t bs, int32_t n) {
  float sum = 0.0f;
  for (int32_t i = 0; i < n; ++i) sum += std::fabs(a[i] * b[i * bs]);
  return sum;
}

// Index of the largest |a[i] b[i * bs]|, i < n.
int32_t largest_term(const float* a, const float* b, int32_t bs, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i)
    if (std::fabs(a[i] * b[i * bs]) > std::fabs(a[best] * b[best * bs])) best = i;
  return best;
}

void linear_f32_cases() {
  F32Stats st{"linear_f32", 0, 0.0f, 0, 0};
  for (int32_t i = 0; i < kCases; ++i) {
    // Every 10th case long rows (K > 256), M <= 2, N <= 20; N past several 4-output blocks; any K % 4.
    const bool long_rows = i % 10 == 9;
    const int32_t M = long_rows ? uniform(1, 2) : uniform(1, kMaxRows);
    const int32_t N = long_rows ? uniform(1, 20) : uniform(1, kMaxCols);
    const int32_t K = long_rows ? uniform(257, 300) : uniform(1, kMaxCols - 3);
    const int32_t xs = K + uniform(0, 3);  // row stride of x
    ffill(g_fa, static_cast<size_t>(M * xs));
    ffill(g_fb, static_cast<size_t>(N * K));
    ffill(g_fbias, static_cast<size_t>(N));
    const float* bias = i % 5 == 4 ? nullptr : g_fbias;  // the controls (i % 10 == 4) have none
    const ConstMatF32 x{g_fa, M, K, xs};
    const ConstMatF32 w{g_fb, N, K, K};
    clear_outputs();
    detail::best(detail::kLinearF32)(x, w, bias, MatF32{out_a(), M, N, kMaxCols});
    detail::linear_f32_ref(x, w, bias, MatF32{out_b(), M, N, kMaxCols});
    auto bound = [&](int32_t r, int32_t c) {
      const float sum = (bias != nullptr ? std::fabs(bias[c]) : 0.0f) + abs_dot(x.row(r), w.row(c), 1, K);
      return 2.0f * static_cast<float>(K + 2) * kU * sum + 1e-30f;
    };
    check_f32(st, worst_ratio(M, N, kMaxCols, bound), M, N, K);
    if (i % 10 == 4) {  // control: x[0][k] = 0 for the largest term of y[0][0]
      auto run = [&] { detail::best(detail::kLinearF32)(x, w, bias, MatF32{out_a(), M, N, kMaxCols}); };
      drop_term_control(st, g_fa, largest_term(g_fa, g_fb, 1, K), run, M, N, K, bound);
    }
  }
  print_f32(st);
}

void scores_f32_cases() {
  F32Stats st{"scores_f32", 0, 0.0f, 0, 0};
  for (int32_t i = 0; i < kCases; ++i) {
    // T past the 4-row blocks, S past several 4-key blocks, d up to 40 (every 10th case up to 76).
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols);
    const int32_t d = i % 10 == 7 ? uniform(41, kMaxCols - 4) : uniform(1, 40);
    const int32_t qs = d + uniform(0, 3), ks = d + uniform(0, 3);
    ffill(g_fa, static_cast<size_t>(T * qs));
    ffill(g_fb, static_cast<size_t>(S * ks));
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const ConstMatF32 q{g_fa, T, d, qs};
    const ConstMatF32 k{g_fb, S, d, ks};
    clear_outputs();
    detail::best(detail::kScoresF32)(q, k, scale, MatF32{out_a(), T, S, kMaxCols});
    detail::scores_f32_ref(q, k, scale, MatF32{out_b(), T, S, kMaxCols});
    auto bound = [&](int32_t t, int32_t j) {
      return 2.0f * static_cast<float>(d + 2) * kU * abs_dot(q.row(t), k.row(j), 1, d) * scale + 1e-30f;
    };
    check_f32(st, worst_ratio(T, S, kMaxCols, bound), T, S, d);
    if (i % 10 == 4) {  // control: q[0][c] = 0 for the largest term of s[0][0]
      auto run = [&] { detail::best(detail::kScoresF32)(q, k, scale, MatF32{out_a(), T, S, kMaxCols}); };
      drop_term_control(st, g_fa, largest_term(g_fa, g_fb, 1, d), run, T, S, d, bound);
    }
  }
  print_f32(st);
}

void weighted_sum_f32_cases() {
  F32Stats st{"weighted_sum_f32", 0, 0.0f, 0, 0};
  for (int32_t i = 0; i < kCases; ++i) {
    // S up to 2 kMaxCols with d <= 40; every 10th case d up to kMaxCols - 3 with S <= kMaxCols.
    const bool wide = i % 10 == 7;
    const int32_t T = uniform(1, kMaxRows);
    const int32_t S = wide ? uniform(1, kMaxCols) : uniform(1, 2 * kMaxCols);
    const int32_t d = wide ? uniform(41, kMaxCols - 3) : uniform(1, 40);
    const int32_t ps = 2 * kMaxCols, vs = d + uniform(0, 3);
    // p: probabilities-like, >= 0, a third of them exactly 0 (masked keys)
    for (int32_t t = 0; t < T; ++t)
      for (int32_t j = 0; j < S; ++j) g_fa[t * ps + j] = next() % 3 == 0 ? 0.0f : std::fabs(frand());
    ffill(g_fb, static_cast<size_t>(S * vs));
    const ConstMatF32 p{g_fa, T, S, ps};
    const ConstMatF32 v{g_fb, S, d, vs};
    clear_outputs();
    detail::best(detail::kWeightedSumF32)(p, v, MatF32{out_a(), T, d, kMaxCols});
    detail::weighted_sum_f32_ref(p, v, MatF32{out_b(), T, d, kMaxCols});
    auto bound = [&](int32_t t, int32_t c) {
      return 2.0f * static_cast<float>(S + 2) * kU * abs_dot(p.row(t), v.data + c, vs, S) + 1e-30f;
    };
    check_f32(st, worst_ratio(T, d, kMaxCols, bound), T, S, d);
    if (i % 10 == 4) {  // control: p[0][j] = 0 for the largest term of o[0][0] (p[0][0] = 1: never all 0)
      g_fa[0] = 1.0f;
      detail::weighted_sum_f32_ref(p, v, MatF32{out_b(), T, d, kMaxCols});
      auto run = [&] { detail::best(detail::kWeightedSumF32)(p, v, MatF32{out_a(), T, d, kMaxCols}); };
      drop_term_control(st, g_fa, largest_term(g_fa, g_fb, vs, S), run, T, d, S, bound);
    }
  }
  print_f32(st);
}

// One row in place, n up to 2 kMaxCols (every 10th up to 300), guard after it.
// Kinds: 0 plain; 1 a third masked (-INFINITY); 2 wide range (tiny and
// underflowing exps); 3 all masked but one; 4 all masked (all 0).
void softmax_f32_cases() {
  F32Stats st{"softmax_row_f32", 0, 0.0f, 0, 0};
  for (int32_t i = 0; i < 2 * kCases; ++i) {
    const int32_t n = i % 10 == 9 ? uniform(2 * kMaxCols, 300) : uniform(1, 2 * kMaxCols);
    const int32_t kind = i % 5;
    float* a = out_a();
    float* b = out_b();
    float* in = g_fa;  // the input row [n], kept for the bound and the control
    for (int32_t j = 0; j < n; ++j) {
      float x = 4.0f * frand();
      if (kind == 1 && next() % 3 == 0) x = -INFINITY;
      if (kind == 2) x = 31.5f * (frand() - 1.0f) + (j % 5 == 0 ? 40.0f : 0.0f);
      if ((kind == 3 && j != n / 2) || kind == 4) x = -INFINITY;
      in[j] = x;
    }
    clear_outputs();
    std::memcpy(a, in, static_cast<size_t>(n) * sizeof(float));
    std::memcpy(b, in, static_cast<size_t>(n) * sizeof(float));
    detail::best(detail::kSoftmaxRowF32)(a, n);
    detail::softmax_row_f32_ref(b, n);
    auto bound = [&](int32_t, int32_t j) {
      return (2.0f * static_cast<float>(n) + 140.0f) * kU * b[j] + 1e-37f;
    };
    auto masked_zero = [&]() {
      for (int32_t j = 0; j < n; ++j)
        if (in[j] == -INFINITY && a[j] != 0.0f) return false;
      return true;
    };
    float ratio = worst_ratio(1, n, n, bound);
    if (!masked_zero()) ratio = INFINITY;
    check_f32(st, ratio, 1, n, kind);
    if (i % 8 == 0 && kind != 4) {  // control: the row's largest entry masked
      int32_t jmax = 0;
      for (int32_t j = 1; j < n; ++j) jmax = in[j] > in[jmax] ? j : jmax;
      std::memset(g_out_a, 0xC3, sizeof g_out_a);
      std::memcpy(a, in, static_cast<size_t>(n) * sizeof(float));
      a[jmax] = -INFINITY;
      detail::best(detail::kSoftmaxRowF32)(a, n);
      control_f32(st, worst_ratio(1, n, n, bound), 1, n, kind);
    }
  }
  print_f32(st);
}
#endif  // ATTN_WITH_F32

#if ATTN_HAVE_MVE_FP && ATTN_WITH_F32
// The softmax's vector exp against exp in double, in ulps of the exact value:
// every float in [-1e-3, 0] near 0 and [kMin, kMin + 1e-3] near the flush
// point are sampled densely, plus 20000 random points of [-87.33, 0].
// The bound is the AVX2 / NEON one the softmax tolerance assumes (1.26 ulp);
// below ln(FLT_MIN) and at -INFINITY the result must be exactly 0. One check.
void exp_mve_cases() {
  ++g_checks;
  double worst = 0.0;
  int bad = 0;
  auto check4 = [&](float x0, float x1, float x2, float x3) {
    const float in[4] = {x0, x1, x2, x3};
    float out[4];
    vst1q_f32(out, detail::mve::exp_nonpositive(vld1q_f32(in)));
    for (int l = 0; l < 4; ++l) {
      if (in[l] < -87.336544f) {
        if (out[l] != 0.0f) ++bad;
        continue;
      }
      const double e = std::exp(static_cast<double>(in[l]));
      int ex = 0;
      std::frexp(e, &ex);
      const double ulps = std::fabs(static_cast<double>(out[l]) - e) / std::ldexp(1.0, ex - 24);
      if (!(ulps <= 1.26)) ++bad;
      if (!(ulps <= worst)) worst = ulps;
    }
  };
  check4(0.0f, -0.0f, -INFINITY, -87.336544f);
  check4(-87.3365f, -87.34f, -88.0f, -1e30f);
  for (int i = 0; i < 4000; ++i) {
    const float s = static_cast<float>(i) * 2.5e-7f;
    check4(-s, -s - 1e-7f, -87.336544f + s, -87.33654f + s);
  }
  for (int i = 0; i < 5000; ++i)
    check4(43.668f * (frand() - 1.0f), 43.668f * (frand() - 1.0f), 43.668f * (frand() - 1.0f),
           43.668f * (frand() - 1.0f));
  std::printf("kernel mve::exp_nonpositive: 36008 points, worst %.3f ulp (bound 1.26), %d out of bound\n",
              worst, bad);
  if (bad != 0) {
    ++g_failed;
    std::printf("FAIL kernel mve::exp_nonpositive: %d values past 1.26 ulp or not flushed to 0\n", bad);
  }
}
#endif

#if ATTN_HAVE_MVE
// The softmax's reciprocal on Helium lanes against fp::, over its whole
// domain a in [0, 2^31): the ends, every power of two and its neighbours,
// and 20000 random points. One check.
void reciprocal_mve_cases() {
  ++g_checks;
  int bad = 0;
  auto check = [&](int32_t a) {
    if (detail::mve::one_over_one_plus_x(a) != fp::one_over_one_plus_x_for_x_in_0_1(a)) ++bad;
  };
  check(0);
  check(INT32_MAX);
  for (int b = 0; b < 31; ++b) {
    const int32_t v = int32_t{1} << b;
    check(v - 1);
    check(v);
    check(v + 1);
  }
  for (int i = 0; i < 20000; ++i) check(static_cast<int32_t>((next() << 8 ^ next()) & 0x7FFFFFFFu));
  if (bad != 0) {
    ++g_failed;
    std::printf("FAIL kernel mve::one_over_one_plus_x: %d of 20095 values != fp::\n", bad);
  }
}
#endif

}  // namespace

int run_kernel_equivalence(int* checks) {
#if ATTN_HAVE_MVE
  reciprocal_mve_cases();
#endif
#if ATTN_HAVE_MVE_FP && ATTN_WITH_F32
  exp_mve_cases();
#endif
#if ATTN_WITH_F32
  linear_f32_cases();
  scores_f32_cases();
  weighted_sum_f32_cases();
  softmax_f32_cases();
#endif
#if ATTN_WITH_S8
  linear_s8_cases();
  scores_s8_cases();
  weighted_sum_s8_cases();
  weighted_sum_vt_s8_cases();
  softmax_exps_cases();
#endif
#if ATTN_WITH_S16
  linear_s16_cases();
  scores_s16_cases();
  weighted_sum_s16_cases();
#endif
#if ATTN_WITH_S8 || ATTN_WITH_S16
  softmax_fused_cases();
#endif
  *checks = g_checks;
  return g_failed;
}
