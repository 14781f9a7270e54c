// kernel_equiv.cpp: every fixed-point kernel variant dispatch.cpp picked for
// this core (DSP on M4/M7, MVE on M55, ref elsewhere) against its portable
// scalar ref, on the board itself, bit-exact. Random shapes cover the tails
// of every unroll width (1..kMax rows, odd column counts), row strides wider
// than the rows, zero points and requantization parameters; each output is
// compared byte for byte, with guard bytes behind it.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/config.h"
#include "conformance.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"
#include "internal/mve_requantize.h"

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
    LinearS8Params p;
    p.input_zero_point = i % 3 == 0 ? 0 : uniform(-128, 127);
    p.output_zero_point = uniform(-128, 127);
    p.multiplier = g_mult;
    p.shift = g_shift;
    clear_outputs();
    const ConstMatS8 x{g_x8, M, K, xs};
    const ConstMatS8 w = matrix(static_cast<const int8_t*>(g_w8), N, K);
    const int32_t* bias = i % 5 == 4 ? nullptr : g_bias32;
    detail::linear_s8(x, w, bias, p, MatS8{reinterpret_cast<int8_t*>(g_out_a), M, N, kMaxCols});
    detail::linear_s8_ref(x, w, bias, p, MatS8{reinterpret_cast<int8_t*>(g_out_b), M, N, kMaxCols});
    compare("linear_s8", M, N, K);
  }
}

void scores_s8_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols), d = uniform(1, 40);
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
    detail::scores_s8(q, zq, k, zk, sh, MatS32{reinterpret_cast<int32_t*>(g_out_a), T, S, kMaxCols});
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
    detail::weighted_sum_s8(p, v, zv, g_mult[0], g_shift[0], zo,
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
    detail::weighted_sum_vt_s8(e, g_recip, vt, zv, g_mult[0], g_shift[0], zo,
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
    const uint32_t ra = detail::softmax_exps_row(a, begin, end, n, sm);
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
    detail::linear_s16(x, w, bias, p, MatS16{reinterpret_cast<int16_t*>(g_out_a), M, N, kMaxCols});
    detail::linear_s16_ref(x, w, bias, p, MatS16{reinterpret_cast<int16_t*>(g_out_b), M, N, kMaxCols});
    compare("linear_s16", M, N, K);
  }
}

void scores_s16_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols), d = uniform(1, 40);
    const int32_t qs = d + uniform(0, 3), ks = d + uniform(0, 3);
    fill(g_x16, sizeof g_x16 / 2, -32768, 32767);
    fill(g_w16, sizeof g_w16 / 2, -32768, 32767);
    const int32_t sh = uniform(6, 12);  // head_dim < 2^score_shift keeps the scores in int32
    clear_outputs();
    const ConstMatS16 q{g_x16, T, d, qs};
    const ConstMatS16 k{g_w16, S, d, ks};
    detail::scores_s16(q, k, sh, MatS32{reinterpret_cast<int32_t*>(g_out_a), T, S, kMaxCols});
    detail::scores_s16_ref(q, k, sh, MatS32{reinterpret_cast<int32_t*>(g_out_b), T, S, kMaxCols});
    compare("scores_s16", T, S, d);
  }
}

void weighted_sum_s16_cases() {
  for (int32_t i = 0; i < kCases; ++i) {
    const int32_t T = uniform(1, kMaxRows), S = uniform(1, kMaxCols), d = uniform(1, 40);
    const int32_t vs = d + uniform(0, 3);
    fill(g_p16, sizeof g_p16 / sizeof g_p16[0], 0, 32767 / (i % 2 ? 1 : 16));
    fill(g_w16, sizeof g_w16 / 2, -32768, 32767);
    random_requant(1, -20, -4);
    clear_outputs();
    const ConstMatS16 p{g_p16, T, S, 2 * kMaxCols};
    const ConstMatS16 v{g_w16, S, d, vs};
    detail::weighted_sum_s16(p, v, g_mult[0], g_shift[0],
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
    detail::softmax_fused_row(a, begin, end, n, sm);
    detail::softmax_fused_row_ref(b, begin, end, n, sm);
    compare("softmax_fused_row", 1, n, end - begin);
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
