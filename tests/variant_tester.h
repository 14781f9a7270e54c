// variant_tester.h: the one tester of the kernel variants, shared by the host
// suite (tests/variants_test.cpp, Catch2) and the board images
// (port/cortex-m/conformance/kernel_equiv.cpp, under QEMU). It walks every
// row of every table of kernels/kernel_table.h and runs each non-ref row
// against the table's ref row (the last one) on the same inputs:
//   fixed point  bit-exact, and nothing written outside the output (row
//                padding and guard bytes keep their sentinel);
//   float32      within the error bounds below, relative to the ref row.
// A new variant needs no line here: it is one more row of a table. A row
// this CPU does not run (on x86-64: an ISA the CPU lacks, from CPUID, as the
// library's own choice reads it) is not run: its Stat counts the cases
// skipped (cpu_skipped) and the log gets one SKIP line per op and ISA.
//
// No Catch2, no heap, no exceptions: every buffer is static, sized by the
// caps below (the boards' RAM: 4 MiB on the MPS2 boards, 512 KiB on the
// M55's); a case whose buffers exceed them is skipped and counted
// (Report::skipped), so the host suite can require that none is.
//
// Cases are deterministic (a fixed-seed LCG) and the union of two families:
// the host grids (every tail of 16 and of the 2 x 4 / 4-row register blocks,
// odd sizes, long rows past the blocked products' chunks, zero points at the
// extremes, all -128 / -32768 operands, saturating requantization, arbitrary
// int16 probabilities) and the board families (shapes around the DSP / MVE
// kernels' paths: K multiples of 4 with folded shifts, head_dim 4, long key
// rows, the widest diff_limit, masked softmax ranges).
//
// Float32 bounds. Variants differ from ref only in the order of additions
// and in fused multiply-adds, so for a dot product of length K both results
// lie within gamma_K * sum_k |a_k b_k| of the exact value, gamma_K ~ K u with
// u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1):
//   |variant - ref| <= 2 (K + 2) u * (sum_k |a_k b_k| + |bias|)   per element
// (+2 for the bias add and the scale). It is a worst-case bound, not a fit;
// a dropped, doubled or misplaced term breaks it by orders of magnitude.
// Softmax: each probability is exp(x - max) / sum. The vector exps are within
// 1.26 ulp of exact, std::exp within 0.5 ulp; a sum of n positive terms is
// within n u relative in either order; one rounding for the division and one
// for the subtraction of the max (up to 64 u in the exponent). So
//   |variant - ref| <= (2 n + 140) u * ref + 1e-37   per entry,
// the absolute floor covering entries std::exp leaves as subnormals that the
// vector exps flush to 0. Masked (-INFINITY) entries must be exactly 0.
//
// Controls: every op also runs perturbed outputs through its own comparison
// (fixed point: one bit of one output flipped, one padding byte written;
// float32: the ref kernel with the largest term of an output dropped, the
// softmax with its largest entry masked), each of which must be reported, so
// that the tester is shown able to fail on every build, ref-only ones too.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/config.h"
#include "kernels/arch.h"
#include "kernels/kernel_table.h"

// Bytes of each of the two input pools and of each of the two output pools.
#ifndef ATTN_VARIANT_TESTER_IN_KIB
#define ATTN_VARIANT_TESTER_IN_KIB 256
#endif
#ifndef ATTN_VARIANT_TESTER_OUT_KIB
#define ATTN_VARIANT_TESTER_OUT_KIB 64
#endif

namespace attn {
namespace variant_tester {

using detail::Kernel;

constexpr size_t kInBytes = size_t{ATTN_VARIANT_TESTER_IN_KIB} * 1024;
constexpr size_t kOutBytes = size_t{ATTN_VARIANT_TESTER_OUT_KIB} * 1024;
constexpr size_t kGuard = 64;           // bytes past every output, kept at kSentinel
constexpr uint8_t kSentinel = 0xC3;     // fills outputs before a kernel runs
constexpr int32_t kMaxChannels = 1024;  // N of a linear, rows of a softmax, T of P.V^T
constexpr int kMaxStats = 160;          // (op, isa) pairs

// ---- report -------------------------------------------------------------------
struct Stat {
  const char* op;
  const char* isa;  // "control": the op's perturbed outputs, each must be caught
  int checks;
  int failed;
  double worst;         // float32: largest error / bound (a control's: smallest)
  int cpu_skipped = 0;  // cases not run: this CPU lacks the row's ISA
};
struct Report {
  Stat stats[kMaxStats];
  int count = 0;
  int checks = 0;
  int failed = 0;
  int skipped = 0;                     // cases past the buffers' caps
  int cpu_skipped = 0;                 // row runs left out: the CPU lacks their ISA
  void (*log)(const char*) = nullptr;  // one line per failure (no newline)
};

inline Stat& stat_of(Report& r, const char* op, const char* isa) {
  for (int i = 0; i < r.count; ++i)
    if (std::strcmp(r.stats[i].op, op) == 0 && std::strcmp(r.stats[i].isa, isa) == 0) return r.stats[i];
  if (r.count == kMaxStats) return r.stats[kMaxStats - 1];
  Stat& s = r.stats[r.count++];
  s = Stat{op, isa, 0, 0, std::strcmp(isa, "control") == 0 ? INFINITY : 0.0};
  return s;
}

// One comparison of op's variant `isa`: ok, its float32 error / bound (0 for
// fixed point), and the case in `what` for the failure line.
inline void record(Report& r, const char* op, const char* isa, bool ok, double ratio, const char* what) {
  Stat& s = stat_of(r, op, isa);
  ++s.checks, ++r.checks;
  if (!ok) {
    ++s.failed, ++r.failed;
    if (r.log != nullptr) {
      char line[256];
      std::snprintf(line, sizeof line, "FAIL variant %s/%s %s (error/bound %.3g)", op, isa, what, ratio);
      r.log(line);
    }
  }
  if (!(ratio <= s.worst) && std::strcmp(isa, "control") != 0) s.worst = ratio;
}
// Whether this CPU runs `row` (detail::row_runs); if not, the skip is
// counted, and the first one of op/isa logged.
template <typename Fn>
bool cpu_runs(Report& r, const char* op, const Kernel<Fn>& row) {
  if (detail::row_runs(row)) return true;
  Stat& s = stat_of(r, op, row.isa);
  ++r.cpu_skipped;
  if (s.cpu_skipped++ == 0 && r.log != nullptr) {
    char line[160];
    std::snprintf(line, sizeof line, "SKIP variant %s/%s: this CPU lacks its ISA", op, row.isa);
    r.log(line);
  }
  return false;
}

// A control: `caught` must be true (the comparison reported the perturbation).
inline void control(Report& r, const char* op, bool caught, double ratio, const char* what) {
  Stat& s = stat_of(r, op, "control");
  if (ratio < s.worst) s.worst = ratio;
  ++s.checks, ++r.checks;
  if (!caught) {
    ++s.failed, ++r.failed;
    if (r.log != nullptr) {
      char line[256];
      std::snprintf(line, sizeof line, "FAIL control %s %s: a perturbed output passed (error/bound %.3g)", op,
                    what, ratio);
      r.log(line);
    }
  }
}

// ---- deterministic inputs -------------------------------------------------------
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint32_t next() {  // 31 bits
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
  int32_t uniform(int32_t lo, int32_t hi) {  // [lo, hi], hi - lo < 2^31
    return lo + static_cast<int32_t>(next() % (static_cast<uint32_t>(hi - lo) + 1u));
  }
  template <typename T>
  T pick(const T* v, size_t n) {
    return v[next() % n];
  }
  float frand() { return static_cast<float>(next() >> 7) * (2.0f / 16777216.0f) - 1.0f; }  // [-1, 1)
};

// Fused-softmax constants as the converter makes them: exp_shift 0..23 and
// the largest diff_limit with t(diff_limit) < 2^20.
inline detail::FusedSoftmax random_softmax(Rng& rng) {
  detail::FusedSoftmax sm{};
  sm.exp_shift = static_cast<int32_t>(rng.next() % 24);
  sm.exp_multiplier = 0x80000000u | (rng.next() << 1) | (rng.next() & 1u);
  uint32_t lo = 0, hi = 0xFFFFFFFFu >> sm.exp_shift;
  while (lo < hi) {
    const uint32_t mid = static_cast<uint32_t>((uint64_t{lo} + hi + 1) / 2);
    if (detail::fused_exp_argument(mid, sm) < (1u << 20))
      lo = mid;
    else
      hi = mid - 1;
  }
  sm.diff_limit = static_cast<int32_t>(lo > 0x7FFFFFFFu ? 0x7FFFFFFFu : lo);
  return sm;
}
// The board family's: exp_shift 4..16, diff_limit from a closed form, and
// (`widest`) the widest diff_limit the checks allow (the phase u * step wraps
// mod 2^32 below the limit: every variant must wrap as the ref does). *lim:
// the t < 2^20 limit, for spreads.
inline detail::FusedSoftmax board_softmax(Rng& rng, bool widest, uint32_t* lim) {
  detail::FusedSoftmax sm{};
  sm.exp_multiplier = 0x80000000u + (rng.next() << 1);
  sm.exp_shift = rng.uniform(4, 16);
  *lim = ((uint32_t{1} << 20) / (sm.exp_multiplier >> 16)) << (16 - sm.exp_shift);
  sm.diff_limit = static_cast<int32_t>(widest ? 0xFFFFFFFFu >> sm.exp_shift : *lim);
  return sm;
}

// ---- buffers ----------------------------------------------------------------------
alignas(64) inline uint8_t g_in_a[kInBytes];  // x, q, p, e, score rows
alignas(64) inline uint8_t g_in_b[kInBytes];  // w, k, v, v^T
alignas(64) inline uint8_t g_out_ref[kOutBytes];
alignas(64) inline uint8_t g_out_var[kOutBytes];
inline int32_t g_bias32[kMaxChannels];
inline int64_t g_bias64[kMaxChannels];
inline int32_t g_mult[kMaxChannels];
inline int32_t g_shift[kMaxChannels];
inline int32_t g_begin[kMaxChannels];
inline int32_t g_end[kMaxChannels];
inline uint32_t g_recip[kMaxChannels];

template <typename T>
T* in_a() {
  return reinterpret_cast<T*>(g_in_a);
}
template <typename T>
T* in_b() {
  return reinterpret_cast<T*>(g_in_b);
}
template <typename T>
T* out_ref() {
  return reinterpret_cast<T*>(g_out_ref);
}
template <typename T>
T* out_var() {
  return reinterpret_cast<T*>(g_out_var);
}

// Bytes of a [rows, cols] matrix of T at row stride `stride`.
template <typename T>
constexpr size_t mat_bytes(int32_t rows, int32_t stride) {
  return static_cast<size_t>(rows) * static_cast<size_t>(stride) * sizeof(T);
}
inline bool fits(Report& r, size_t a, size_t b, size_t out, int32_t channels = 0) {
  if (a <= kInBytes && b <= kInBytes && out + kGuard <= kOutBytes && channels <= kMaxChannels) return true;
  ++r.skipped;
  return false;
}
template <typename T>
void fill(T* p, int32_t rows, int32_t cols, int32_t stride, Rng& rng, int32_t lo, int32_t hi, bool extreme) {
  for (int32_t i = 0; i < rows; ++i)
    for (int32_t j = 0; j < stride; ++j)
      p[static_cast<size_t>(i) * static_cast<size_t>(stride) + static_cast<size_t>(j)] =
          static_cast<T>(extreme && j < cols ? lo : rng.uniform(lo, hi));
}
inline void clear_outputs(size_t bytes) {
  std::memset(g_out_ref, kSentinel, bytes + kGuard);
  std::memset(g_out_var, kSentinel, bytes + kGuard);
}
// Whether `out` kept the sentinel outside [rows, cols] (row padding, the guard).
inline bool outside_intact(const uint8_t* out, int32_t rows, int32_t cols, int32_t stride, size_t elem) {
  const size_t row_bytes = static_cast<size_t>(stride) * elem, used = static_cast<size_t>(cols) * elem;
  for (int32_t i = 0; i < rows; ++i)
    for (size_t b = used; b < row_bytes; ++b)
      if (out[static_cast<size_t>(i) * row_bytes + b] != kSentinel) return false;
  const size_t end = static_cast<size_t>(rows) * row_bytes;
  for (size_t b = end; b < end + kGuard; ++b)
    if (out[b] != kSentinel) return false;
  return true;
}

// ---- fixed point: bit-exact ------------------------------------------------------------
// The variant's output [rows, cols] of `elem`-byte values (row stride
// `stride`) against the ref's, every byte of the region, its padding and
// guard included; every `control_every`-th call also runs the controls.
struct FixedOut {
  int32_t rows, cols, stride;
  size_t elem;
  size_t bytes() const { return mat_bytes<uint8_t>(rows, stride) * elem; }
};
inline bool same_output(const FixedOut& o) {
  return std::memcmp(g_out_ref, g_out_var, o.bytes() + kGuard) == 0;
}
// The ref row itself must write nothing outside its output.
inline void check_ref_output(Report& r, const char* op, const FixedOut& o, const char* what) {
  record(r, op, "ref", outside_intact(g_out_ref, o.rows, o.cols, o.stride, o.elem), 0.0, what);
}
// Controls of a bit-exact comparison: copies of the ref's output with the
// lowest bit of its last element flipped, and with one padding (or guard)
// byte written, must both fail `same`.
template <typename Same>
void fixed_controls(Report& r, const char* op, const FixedOut& o, Same same, const char* what) {
  std::memcpy(g_out_var, g_out_ref, o.bytes() + kGuard);
  const size_t last =
      (static_cast<size_t>(o.rows - 1) * static_cast<size_t>(o.stride) + (o.cols - 1)) * o.elem;
  g_out_var[last] ^= 1u;
  control(r, op, !same(), 0.0, what);
  g_out_var[last] ^= 1u;
  g_out_var[static_cast<size_t>(o.cols) * o.elem] ^= 0x5Au;  // row 0's padding, or the next row / guard
  const bool outside_is_output = o.stride == o.cols && o.rows > 1;
  if (!outside_is_output) control(r, op, !same(), 0.0, what);
  std::memcpy(g_out_var, g_out_ref, o.bytes() + kGuard);
}

// Runs every non-ref row of `table` with run(fn, out) into g_out_var after
// the ref row into g_out_ref, and compares with same().
template <typename Fn, size_t N, typename Run, typename Same>
void each_variant(Report& r, const Kernel<Fn> (&table)[N], const char* op, const FixedOut& o, Run run,
                  Same same, bool controls, const char* what) {
  clear_outputs(o.bytes());
  run(table[N - 1].fn, g_out_ref);
  check_ref_output(r, op, o, what);
  for (size_t i = 0; i + 1 < N; ++i) {
    if (!cpu_runs(r, op, table[i])) continue;
    std::memset(g_out_var, kSentinel, o.bytes() + kGuard);
    run(table[i].fn, g_out_var);
    record(r, op, table[i].isa, same(), 0.0, what);
  }
  if (controls) fixed_controls(r, op, o, same, what);
}
template <typename Fn, size_t N, typename Run>
void each_variant(Report& r, const Kernel<Fn> (&table)[N], const char* op, const FixedOut& o, Run run,
                  bool controls, const char* what) {
  each_variant(
      r, table, op, o, run, [&] { return same_output(o); }, controls, what);
}

// Sizes: every tail of 16 and of the 2 x 4 / 4-row blocks, plus a few larger.
constexpr int32_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65};
constexpr size_t kNumSizes = sizeof kSizes / sizeof kSizes[0];
// (rows, columns, depth) of the host family's first cases: rows past one
// chunk of a blocked product (AVX2 gemm_s8 widens 24 rows at depth 1024, 384
// at 64) with a tail, the deepest packed depth, and a depth past it (the
// unpacked paths). Weighted sums take them as (T, head_dim, S).
constexpr int32_t kLongShapes[][3] = {{100, 33, 1000}, {400, 17, 64}, {61, 16, 1024}, {9, 40, 1501}};
constexpr int kNumLong = 4;
constexpr int32_t kBoardCols = 80;  // the board family's widest row (and output row stride)

#if ATTN_WITH_S8 || ATTN_WITH_S16
// ---- linear_s8, linear_s8_t, linear_s16 ------------------------------------------------
struct LinearCase {
  int32_t M, N, K, xs, ws, ys;  // ys: output row stride
  bool extreme, bias, narrow;   // all-minimum operands, a bias, a narrowed clamp
  int32_t zin, zout;
  int32_t wlo;  // weights in [wlo, 127]
};

#if ATTN_WITH_S8
// x in in_a (int8), w in in_b, per-channel g_mult / g_shift / g_bias32.
inline void linear_s8_case(Report& r, const LinearCase& c, int iter, const char* what) {
  const size_t y_bytes = mat_bytes<int8_t>(c.M, c.ys), yt_bytes = mat_bytes<int8_t>(c.N, c.M + 3);
  if (!fits(r, mat_bytes<int8_t>(c.M, c.xs), mat_bytes<int8_t>(c.N, c.ws),
            y_bytes > yt_bytes ? y_bytes : yt_bytes, c.N))
    return;
  const ConstMatS8 x{in_a<int8_t>(), c.M, c.K, c.xs};
  const ConstMatS8 w{in_b<int8_t>(), c.N, c.K, c.ws};
  LinearS8Params p;
  p.input_zero_point = c.zin;
  p.output_zero_point = c.zout;
  p.act_min = c.narrow ? -100 : -128;
  p.act_max = c.narrow ? 90 : 127;
  p.multiplier = g_mult;
  p.shift = g_shift;
  const int32_t* bias = c.bias ? g_bias32 : nullptr;
  const FixedOut o{c.M, c.N, c.ys, 1};
  each_variant(
      r, detail::kLinearS8, "linear_s8", o,
      [&](detail::LinearS8Fn fn, uint8_t* y) {
        fn(x, w, bias, p, MatS8{reinterpret_cast<int8_t*>(y), c.M, c.N, c.ys});
      },
      iter % 10 == 4, what);

  // Into V^T: yt [N, M] at row stride M + 3. A variant writes the leading
  // channels [0, n0) it returns and nothing else; they must equal the ref's,
  // and the ref's must be linear_s8_ref's output transposed.
  const FixedOut t{c.N, c.M, c.M + 3, 1};
  clear_outputs(t.bytes() > o.bytes() ? t.bytes() : o.bytes());
  constexpr size_t kT = sizeof detail::kLinearTS8 / sizeof detail::kLinearTS8[0];
  const int32_t nref =
      detail::kLinearTS8[kT - 1].fn(x, w, bias, p, MatS8{out_ref<int8_t>(), c.N, c.M, t.stride});
  detail::linear_s8_ref(x, w, bias, p, MatS8{out_var<int8_t>(), c.M, c.N, c.ys});
  bool transposed = nref == c.N && outside_intact(g_out_ref, t.rows, t.cols, t.stride, 1);
  for (int32_t n = 0; n < c.N && transposed; ++n)
    for (int32_t m = 0; m < c.M; ++m) transposed &= g_out_ref[n * t.stride + m] == g_out_var[m * c.ys + n];
  record(r, "linear_s8_t", "ref", transposed, 0.0, what);
  // The dsp kernel's contract (kernels/kernels_fixed.h): with a bias, K a
  // multiple of 4 and <= 128, the full clamp and every shift in [-23, -2],
  // its asm takes every channel.
  bool takes_all = bias != nullptr && c.K % 4 == 0 && c.K <= 128 && !c.narrow;
  for (int32_t n = 0; n < c.N; ++n) takes_all &= g_shift[n] >= -23 && g_shift[n] <= -2;
  int32_t n0 = 0;
  auto same_leading = [&] {
    bool ok = n0 >= 0 && n0 <= c.N;
    for (int32_t n = 0; ok && n < c.N; ++n)
      for (int32_t m = 0; m < t.stride; ++m) {
        const size_t b = static_cast<size_t>(n) * static_cast<size_t>(t.stride) + static_cast<size_t>(m);
        ok &= (n < n0 && m < c.M) ? g_out_var[b] == g_out_ref[b] : g_out_var[b] == kSentinel;
      }
    for (size_t b = t.bytes(); ok && b < t.bytes() + kGuard; ++b) ok &= g_out_var[b] == kSentinel;
    return ok;
  };
  for (size_t i = 0; i + 1 < kT; ++i) {
    if (!cpu_runs(r, "linear_s8_t", detail::kLinearTS8[i])) continue;
    std::memset(g_out_var, kSentinel, t.bytes() + kGuard);
    n0 = detail::kLinearTS8[i].fn(x, w, bias, p, MatS8{out_var<int8_t>(), c.N, c.M, t.stride});
    bool ok = same_leading();
    if (std::strcmp(detail::kLinearTS8[i].isa, "dsp") == 0 && takes_all) ok &= n0 == c.N;
    record(r, "linear_s8_t", detail::kLinearTS8[i].isa, ok, 0.0, what);
  }
  if (iter % 10 == 4) {
    n0 = c.N;
    fixed_controls(r, "linear_s8_t", t, same_leading, what);
  }
}
#endif

#if ATTN_WITH_S16
// x in in_a (int16), w in in_b, per-channel g_mult / g_shift / g_bias64.
inline void linear_s16_case(Report& r, const LinearCase& c, int iter, const char* what) {
  if (!fits(r, mat_bytes<int16_t>(c.M, c.xs), mat_bytes<int8_t>(c.N, c.ws), mat_bytes<int16_t>(c.M, c.ys),
            c.N))
    return;
  const ConstMatS16 x{in_a<int16_t>(), c.M, c.K, c.xs};
  const ConstMatS8 w{in_b<int8_t>(), c.N, c.K, c.ws};
  LinearS16Params p;
  p.multiplier = g_mult;
  p.shift = g_shift;
  const int64_t* bias = c.bias ? g_bias64 : nullptr;
  each_variant(
      r, detail::kLinearS16, "linear_s16", FixedOut{c.M, c.N, c.ys, 2},
      [&](detail::LinearS16Fn fn, uint8_t* y) {
        fn(x, w, bias, p, MatS16{reinterpret_cast<int16_t*>(y), c.M, c.N, c.ys});
      },
      iter % 10 == 4, what);
}
#endif

// One case of both dtypes: int8 x, then int16 x (s16 shifts in [s16_lo, s16_hi]).
inline void linear_fixed_case(Report& r, const LinearCase& c, int iter, Rng& rng, int32_t s16_lo,
                              int32_t s16_hi) {
  char what[128];
  std::snprintf(what, sizeof what, "case %d M=%d N=%d K=%d xs=%d ys=%d extreme=%d bias=%d narrow=%d", iter,
                int(c.M), int(c.N), int(c.K), int(c.xs), int(c.ys), int(c.extreme), int(c.bias),
                int(c.narrow));
  if (!fits(r, mat_bytes<int16_t>(c.M, c.xs), mat_bytes<int8_t>(c.N, c.ws), 0, c.N)) return;
  fill(in_b<int8_t>(), c.N, c.K, c.ws, rng, c.wlo, 127, c.extreme);
#if ATTN_WITH_S8
  fill(in_a<int8_t>(), c.M, c.K, c.xs, rng, -128, 127, c.extreme);
  linear_s8_case(r, c, iter, what);
#endif
#if ATTN_WITH_S16
  for (int32_t n = 0; n < c.N; ++n) g_shift[n] = rng.uniform(s16_lo, s16_hi);
  fill(in_a<int16_t>(), c.M, c.K, c.xs, rng, -32768, 32767, c.extreme);
  linear_s16_case(r, c, iter, what);
#endif
  (void)s16_lo, (void)s16_hi;
}

inline void linear_fixed_cases(Report& r) {
  Rng rng(11);
  // Host family: sizes from kSizes (K every 5th in [300, 600)), long shapes
  // first; x, w and y padded alike; every 9th case all -128 with the input
  // zero point 127; per-channel shifts over [-31, 6] (s8) and [-20, 0] (s16).
  for (int iter = 0; iter < 120; ++iter) {
    LinearCase c{};
    c.M = rng.pick(kSizes, kNumSizes), c.N = rng.pick(kSizes, kNumSizes);
    c.K = iter % 5 == 4 ? rng.uniform(300, 599) : rng.pick(kSizes, kNumSizes);
    if (iter < kNumLong) c.M = kLongShapes[iter][0], c.N = kLongShapes[iter][1], c.K = kLongShapes[iter][2];
    const int32_t pad = rng.uniform(0, 2) * 5;
    c.xs = c.K + pad, c.ws = c.K + pad, c.ys = c.N + pad;
    c.extreme = iter % 9 == 0, c.bias = iter % 3 != 0, c.narrow = iter % 4 == 1, c.wlo = -128;
    c.zin = c.extreme ? 127 : rng.uniform(-128, 127), c.zout = rng.uniform(-128, 127);
    for (int32_t n = 0; n < c.N && n < kMaxChannels; ++n) {
      g_mult[n] = rng.uniform(1 << 30, 0x7FFFFFFF);
      g_shift[n] = rng.uniform(-31, 6);
      g_bias32[n] = rng.uniform(-(1 << 20), (1 << 20) - 1);
      g_bias64[n] = int64_t{g_bias32[n]} * 64;
    }
    linear_fixed_case(r, c, iter, rng, -20, 0);
  }
  // Board family: M <= 9 and N up to 80 (past the MVE kernel's 64-channel
  // groups); even cases K a multiple of 4 with every shift <= -2 (the DSP
  // kernel's all-asm path when there is a bias), every 4th of those with the
  // last channel's shift unfoldable (the all-asm path stops at its block of
  // 32 channels); odd ones any K, shifts in [-14, 1]; every 10th a long row
  // (K > 256: the MVE kernel's unbuffered path), M <= 2, N <= 20.
  for (int i = 0; i < 60; ++i) {
    const bool long_rows = i % 10 == 9, folded = i % 2 == 0;
    LinearCase c{};
    c.M = long_rows ? rng.uniform(1, 2) : rng.uniform(1, 9);
    c.N = long_rows ? rng.uniform(1, 20) : rng.uniform(1, kBoardCols);
    c.K = long_rows ? rng.uniform(257, 300)
          : folded  ? 4 * rng.uniform(1, (kBoardCols - 3) / 4)
                    : rng.uniform(1, kBoardCols - 3);
    c.xs = c.K + rng.uniform(0, 3), c.ws = c.K, c.ys = c.N + rng.uniform(0, kBoardCols - c.N);
    c.wlo = -127, c.bias = i % 5 != 4, c.zin = i % 3 == 0 ? 0 : rng.uniform(-128, 127),
    c.zout = rng.uniform(-128, 127);
    for (int32_t n = 0; n < c.N; ++n) {
      g_mult[n] = 0x40000000 + static_cast<int32_t>(rng.next() & 0x3FFFFFFF);
      g_shift[n] = rng.uniform(-14, folded ? -2 : 1);
      g_bias32[n] = rng.uniform(-100000, 100000);
      g_bias64[n] = int64_t{rng.uniform(-(1 << 22), 1 << 22)} * 1000;
    }
    if (folded && i % 4 == 2) g_shift[c.N - 1] = rng.uniform(-1, 1);
    linear_fixed_case(r, c, 1000 + i, rng, -14, 1);
  }
  // One to three rows (a decode step's projections; the DSP kernel's
  // one-row path, two channels per pass, rows up to 512 wide): K a multiple
  // of 4 in [4, 512] (the first cases 64, 172 and 512, a model's widths), N
  // odd and even, shifts in [-23, -2] with a bias (the asm paths), every 5th
  // without a bias, every 4th with one unfoldable shift, every 3rd an input
  // zero point, every 7th all minimum operands with the input zero point 127.
  for (int i = 0; i < 30; ++i) {
    LinearCase c{};
    c.M = 1 + i % 3;
    c.N = i < 3 ? 63 + i : rng.uniform(1, kBoardCols);
    c.K = i < 3 ? (i == 0 ? 64 : i == 1 ? 172 : 512) : 4 * rng.uniform(1, 128);
    c.xs = c.K + rng.uniform(0, 3), c.ws = c.K + 4 * rng.uniform(0, 1), c.ys = c.N + rng.uniform(0, 3);
    c.extreme = i % 7 == 6, c.wlo = -127, c.bias = i % 5 != 4, c.zout = rng.uniform(-128, 127);
    c.zin = i % 3 == 2 ? rng.uniform(-128, 127) : 0;
    if (c.extreme) c.zin = 127;
    for (int32_t n = 0; n < c.N; ++n) {
      g_mult[n] = 0x40000000 + static_cast<int32_t>(rng.next() & 0x3FFFFFFF);
      g_shift[n] = rng.uniform(-23, -2);
      g_bias32[n] = rng.uniform(-100000, 100000);
      g_bias64[n] = int64_t{rng.uniform(-(1 << 22), 1 << 22)} * 1000;
    }
    if (i % 4 == 3) g_shift[rng.uniform(0, c.N - 1)] = rng.uniform(-1, 1);
    linear_fixed_case(r, c, 2000 + i, rng, -14, 1);
  }
}

// A host-family attention shape for case iter: T, S and d picked from kSizes
// in that order (the first kNumLong cases take kLongShapes[iter] as T, S, d,
// or as T, d, S when long_d_second), then a padding of 0 or 3, returned.
inline int32_t host_shape(Rng& rng, int iter, int32_t& T, int32_t& S, int32_t& d, bool long_d_second) {
  T = rng.pick(kSizes, kNumSizes), S = rng.pick(kSizes, kNumSizes), d = rng.pick(kSizes, kNumSizes);
  if (iter < kNumLong) {
    T = kLongShapes[iter][0];
    (long_d_second ? d : S) = kLongShapes[iter][1];
    (long_d_second ? S : d) = kLongShapes[iter][2];
  }
  return rng.uniform(0, 2) * 3;
}

// ---- scores_s8, scores_s16 ---------------------------------------------------------------
struct ScoresCase {
  int32_t T, S, d, qs, ks, ss;  // ss: output row stride
  bool extreme;
  int32_t qrange;  // s8 q in [-qrange, qrange - 1]
  int32_t zq, zk, shift8, shift16;
};

inline void scores_case(Report& r, const ScoresCase& c, int iter, Rng& rng) {
  char what[128];
  std::snprintf(what, sizeof what, "case %d T=%d S=%d d=%d qs=%d ks=%d extreme=%d shift=%d/%d", iter,
                int(c.T), int(c.S), int(c.d), int(c.qs), int(c.ks), int(c.extreme), int(c.shift8),
                int(c.shift16));
  const FixedOut o{c.T, c.S, c.ss, 4};
  const bool controls = iter % 10 == 4;
#if ATTN_WITH_S8
  if (fits(r, mat_bytes<int8_t>(c.T, c.qs), mat_bytes<int8_t>(c.S, c.ks), o.bytes())) {
    fill(in_a<int8_t>(), c.T, c.d, c.qs, rng, -c.qrange, c.qrange - 1, c.extreme);
    fill(in_b<int8_t>(), c.S, c.d, c.ks, rng, -128, 127, c.extreme);
    const ConstMatS8 q{in_a<int8_t>(), c.T, c.d, c.qs}, k{in_b<int8_t>(), c.S, c.d, c.ks};
    each_variant(
        r, detail::kScoresS8, "scores_s8", o,
        [&](detail::ScoresS8Fn fn, uint8_t* s) {
          fn(q, c.zq, k, c.zk, c.shift8, MatS32{reinterpret_cast<int32_t*>(s), c.T, c.S, c.ss});
        },
        controls, what);
  }
#endif
#if ATTN_WITH_S16
  if (fits(r, mat_bytes<int16_t>(c.T, c.qs), mat_bytes<int16_t>(c.S, c.ks), o.bytes())) {
    fill(in_a<int16_t>(), c.T, c.d, c.qs, rng, -32768, 32767, c.extreme);
    fill(in_b<int16_t>(), c.S, c.d, c.ks, rng, -32768, 32767, c.extreme);
    const ConstMatS16 q{in_a<int16_t>(), c.T, c.d, c.qs}, k{in_b<int16_t>(), c.S, c.d, c.ks};
    each_variant(
        r, detail::kScoresS16, "scores_s16", o,
        [&](detail::ScoresS16Fn fn, uint8_t* s) {
          fn(q, k, c.shift16, MatS32{reinterpret_cast<int32_t*>(s), c.T, c.S, c.ss});
        },
        controls, what);
  }
#endif
  (void)rng;
}

inline void scores_fixed_cases(Report& r) {
  Rng rng(12);
  // Host family: kSizes, long shapes first, q / k / s padded alike; every 7th
  // case all -128 (-32768) with zero points 127; shift 0 every 4th, else up
  // to 19 (s16: 12 more, so that the int64 sum rounds into int32).
  for (int iter = 0; iter < 150; ++iter) {
    ScoresCase c{};
    const int32_t pad = host_shape(rng, iter, c.T, c.S, c.d, false);
    c.qs = c.d + pad, c.ks = c.d + pad, c.ss = c.S + pad;
    c.extreme = iter % 7 == 0, c.qrange = 128;
    c.zq = c.extreme ? 127 : rng.uniform(-128, 127), c.zk = c.extreme ? 127 : rng.uniform(-128, 127);
    c.shift8 = iter % 4 == 0 ? 0 : rng.uniform(0, 19), c.shift16 = c.shift8 + 12;
    scores_case(r, c, iter, rng);
  }
  // Board family: T <= 9, S <= 80, d <= 40 (every 7th 4: the DSP kernel's
  // one-step key loop), q rows as wide as 43; every 3rd case q in [-60, 60)
  // (q - zq then fits int8: the MVE kernel's folded path), zq = 0 every 5th
  // (its path without the zq sum(k) term); s16 shifts 6..12.
  for (int i = 0; i < 60; ++i) {
    ScoresCase c{};
    c.T = rng.uniform(1, 9), c.S = rng.uniform(1, kBoardCols), c.d = i % 7 == 3 ? 4 : rng.uniform(1, 40);
    c.qs = c.d + rng.uniform(0, 43 - c.d), c.ks = c.d + rng.uniform(0, 3),
    c.ss = c.S + rng.uniform(0, kBoardCols - c.S);
    c.qrange = i % 3 == 1 ? 60 : 128;
    c.zq = i % 5 == 0 ? 0 : rng.uniform(-128, 127), c.zk = rng.uniform(-128, 127);
    c.shift8 = i % 4 == 0 ? rng.uniform(1, 6) : 0, c.shift16 = rng.uniform(6, 12);
    scores_case(r, c, 1000 + i, rng);
  }
  // A decode step's query heads of one K/V head: one or two rows after the
  // four-row blocks at head_dim <= 16 (the DSP kernel's two-row key loop, the
  // MVE kernel's scalar-store rows), with and without a score shift, q - zq
  // folded or not, zq = 0.
  for (int i = 0; i < 24; ++i) {
    static constexpr int32_t kRows[] = {2, 1, 6, 3, 5, 2};
    static constexpr int32_t kDims[] = {8, 16, 4, 12, 8};
    ScoresCase c{};
    c.T = kRows[i % 6], c.S = rng.uniform(1, kBoardCols), c.d = kDims[i % 5];
    c.qs = i % 2 == 0 ? c.d : c.d + rng.uniform(0, 8), c.ks = i % 3 == 0 ? 32 : c.d + rng.uniform(0, 3),
    c.ss = c.S + rng.uniform(0, kBoardCols - c.S);
    c.qrange = i % 3 == 1 ? 60 : 128;
    c.zq = i % 4 == 3 ? 0 : rng.uniform(-128, 127), c.zk = rng.uniform(-128, 127);
    c.shift8 = i % 2 == 1 ? rng.uniform(1, 6) : 0, c.shift16 = rng.uniform(6, 12);
    scores_case(r, c, 2000 + i, rng);
  }
}

// ---- weighted_sum_s8, weighted_sum_s16 ---------------------------------------------------
struct WeightedSumCase {
  int32_t T, S, d, ps, vs, os;
  bool extreme;
  int pkind;     // 0: softmax-like rows (>= 0, sum <= 32767); 1: arbitrary int16; 2: each in [0, pmax]
  int32_t pmax;  // pkind 2
  int32_t m, zv, zo, sh8, sh16;
};

inline void weighted_sum_case(Report& r, const WeightedSumCase& c, int iter, Rng& rng) {
  char what[128];
  std::snprintf(what, sizeof what, "case %d T=%d S=%d d=%d ps=%d vs=%d extreme=%d p=%d sh=%d/%d", iter,
                int(c.T), int(c.S), int(c.d), int(c.ps), int(c.vs), int(c.extreme), c.pkind, int(c.sh8),
                int(c.sh16));
  if (!fits(r, mat_bytes<int16_t>(c.T, c.ps), mat_bytes<int16_t>(c.S, c.vs), mat_bytes<int16_t>(c.T, c.os)))
    return;
  int16_t* p = in_a<int16_t>();
  if (c.pkind == 0) {
    fill(p, c.T, c.S, c.ps, rng, 0, 32767, false);  // padding
    for (int32_t t = 0; t < c.T; ++t) {
      int32_t left = 32767;
      for (int32_t j = 0; j < c.S; ++j) {
        const int32_t v = j + 1 == c.S ? left : rng.uniform(0, left);
        p[static_cast<size_t>(t) * static_cast<size_t>(c.ps) + static_cast<size_t>(j)] =
            static_cast<int16_t>(v);
        left -= v;
      }
    }
  } else if (c.pkind == 1) {
    fill(p, c.T, c.S, c.ps, rng, -32768, 32767, c.extreme);
  } else {
    fill(p, c.T, c.S, c.ps, rng, 0, c.pmax, false);
  }
  const ConstMatS16 P{p, c.T, c.S, c.ps};
  const bool controls = iter % 10 == 4;
#if ATTN_WITH_S8
  fill(in_b<int8_t>(), c.S, c.d, c.vs, rng, -128, 127, c.extreme);
  const ConstMatS8 v8{in_b<int8_t>(), c.S, c.d, c.vs};
  each_variant(
      r, detail::kWeightedSumS8, "weighted_sum_s8", FixedOut{c.T, c.d, c.os, 1},
      [&](detail::WeightedSumS8Fn fn, uint8_t* o) {
        fn(P, v8, c.zv, detail::Requant{c.m, c.sh8, c.zo},
           MatS8{reinterpret_cast<int8_t*>(o), c.T, c.d, c.os});
      },
      controls, what);
#endif
#if ATTN_WITH_S16
  fill(in_b<int16_t>(), c.S, c.d, c.vs, rng, -32768, 32767, c.extreme);
  const ConstMatS16 v16{in_b<int16_t>(), c.S, c.d, c.vs};
  each_variant(
      r, detail::kWeightedSumS16, "weighted_sum_s16", FixedOut{c.T, c.d, c.os, 2},
      [&](detail::WeightedSumS16Fn fn, uint8_t* o) {
        fn(P, v16, detail::Requant{c.m, c.sh16, 0}, MatS16{reinterpret_cast<int16_t*>(o), c.T, c.d, c.os});
      },
      controls, what);
#endif
}

inline void weighted_sum_fixed_cases(Report& r) {
  Rng rng(13);
  // Host family: kSizes, long shapes first (as T, d, S), padded alike; every
  // 7th case all -128 / -32768 with zv 127; every 3rd arbitrary int16
  // probabilities (weighted_sum_s16's int64 fallback) where weighted_sum_s8's
  // int32 sum cannot overflow (S <= 256), softmax-like rows otherwise; s8
  // shifts saturating (0..3) every 5th.
  for (int iter = 0; iter < 150; ++iter) {
    WeightedSumCase c{};
    const int32_t pad = host_shape(rng, iter, c.T, c.S, c.d, true);
    c.ps = c.S + pad, c.vs = c.d + pad, c.os = c.d + pad;
    c.extreme = iter % 7 == 0;
    const bool softmax_like = iter % 3 != 0 || c.S > 256;
    c.pkind = softmax_like ? 0 : 1;
    c.m = rng.uniform(1 << 30, 0x7FFFFFFF);
    c.zv = c.extreme ? 127 : rng.uniform(-128, 127), c.zo = rng.uniform(-128, 127);
    c.sh8 = iter % 5 == 0 ? rng.uniform(0, 3) : softmax_like ? -rng.uniform(8, 15) : -rng.uniform(16, 23);
    c.sh16 = -rng.uniform(14, 23);
    weighted_sum_case(r, c, iter, rng);
  }
  // Board family: T <= 9, S <= 80, d <= 40 (every 7th 4), v rows as wide as
  // 43, each probability in [0, 32767] or [0, 2047]; every 10th case a long
  // row (S > 128: the MVE kernel's key blocks), T <= 4, d <= 16; shifts -20..-4.
  for (int i = 0; i < 60; ++i) {
    const bool long_rows = i % 10 == 5;
    WeightedSumCase c{};
    c.T = long_rows ? rng.uniform(1, 4) : rng.uniform(1, 9);
    c.S = long_rows ? rng.uniform(129, 300) : rng.uniform(1, kBoardCols);
    c.d = long_rows ? rng.uniform(1, 16) : i % 7 == 3 ? 4 : rng.uniform(1, 40);
    c.vs = long_rows ? c.d + rng.uniform(0, 4) : c.d + rng.uniform(0, 43 - c.d);
    c.ps = long_rows ? c.S : 2 * kBoardCols, c.os = kBoardCols;
    c.pkind = 2, c.pmax = 32767 / (i % 2 && !long_rows ? 1 : 16);
    c.zv = rng.uniform(-128, 127), c.zo = rng.uniform(-128, 127);
    c.m = 0x40000000 + static_cast<int32_t>(rng.next() & 0x3FFFFFFF);
    c.sh8 = c.sh16 = rng.uniform(-20, -4);
    weighted_sum_case(r, c, 1000 + i, rng);
  }
}
#endif  // ATTN_WITH_S8 || ATTN_WITH_S16

#if ATTN_WITH_S8
// ---- weighted_sum_vt_s8, softmax_exps_row ----------------------------------------------
struct VtCase {
  int32_t T, S, d, es, vts, os;
  bool host;  // the host family's softmax and scores, else the board family's
  bool masked, extreme;
  int32_t m, sh, zv, zo;
};

// Scores [n] for a fused softmax: the host family's (spread over about 2
// diff_limits from -2^27, or `base`) or the board family's (within +-spread).
inline void fill_scores(int32_t* row, int32_t n, Rng& rng, int32_t base, uint32_t spread) {
  for (int32_t j = 0; j < n; ++j) row[j] = base + static_cast<int32_t>(rng.next() % spread);
}
inline uint32_t host_spread(const detail::FusedSoftmax& sm) {
  const uint32_t s = static_cast<uint32_t>(sm.diff_limit) * 2u + 1u;
  return s < (1u << 29) ? s : (1u << 29);
}

inline void weighted_sum_vt_case(Report& r, const VtCase& c, int iter, Rng& rng) {
  char what[128];
  std::snprintf(what, sizeof what, "case %d T=%d S=%d d=%d es=%d vts=%d masked=%d sh=%d", iter, int(c.T),
                int(c.S), int(c.d), int(c.es), int(c.vts), int(c.masked), int(c.sh));
  if (!fits(r, mat_bytes<int32_t>(c.T, c.es), mat_bytes<int8_t>(c.d, c.vts), mat_bytes<int8_t>(c.T, c.os),
            c.T))
    return;
  uint32_t lim = 0;
  const detail::FusedSoftmax sm = c.host ? random_softmax(rng) : board_softmax(rng, false, &lim);
  int32_t* e = in_a<int32_t>();
  for (int32_t t = 0; t < c.T; ++t) {
    int32_t* row = e + static_cast<size_t>(t) * static_cast<size_t>(c.es);
    if (c.host) {
      fill_scores(row, c.S, rng, 0, host_spread(sm));
    } else {
      const int32_t spread = iter % 2 ? sm.diff_limit : sm.diff_limit / 8 + 1;
      fill_scores(row, c.S, rng, -spread, 2u * static_cast<uint32_t>(spread) + 1u);
    }
    const int32_t begin = c.masked ? rng.uniform(0, c.S) : 0;
    const int32_t end = c.masked ? rng.uniform(begin, c.S) : c.S;
    g_recip[t] = detail::softmax_exps_row_ref(row, begin, end, c.S, sm);
  }
  fill(in_b<int8_t>(), c.d, c.S, c.vts, rng, -128, 127, c.extreme);
  const ConstMatS32 E{e, c.T, c.S, c.es};
  const ConstMatS8 vt{in_b<int8_t>(), c.d, c.S, c.vts};
  each_variant(
      r, detail::kWeightedSumVtS8, "weighted_sum_vt_s8", FixedOut{c.T, c.d, c.os, 1},
      [&](detail::WeightedSumVtS8Fn fn, uint8_t* o) {
        fn(E, g_recip, vt, c.zv, detail::Requant{c.m, c.sh, c.zo},
           MatS8{reinterpret_cast<int8_t*>(o), c.T, c.d, c.os});
      },
      iter % 10 == 4, what);
}

inline void weighted_sum_vt_cases(Report& r) {
  Rng rng(77);
  // Host family: S up to 300 (past the DSP kernel's 128-key expansion
  // block), exps of the converter's softmax constants, masked rows every 3rd,
  // all -128 values every 11th, shifts -24..1.
  for (int iter = 0; iter < 300; ++iter) {
    VtCase c{};
    c.T = rng.uniform(1, 9), c.S = rng.uniform(1, 300), c.d = rng.uniform(1, 40);
    c.es = c.S + rng.uniform(0, 5), c.vts = c.S + rng.uniform(0, 3), c.os = c.d + rng.uniform(0, 3);
    c.host = true, c.masked = iter % 3 == 0, c.extreme = iter % 11 == 0;
    c.zv = rng.uniform(-128, 127), c.zo = rng.uniform(-128, 127);
    c.m = 0x40000000 + rng.uniform(0, 0x3FFFFFFF), c.sh = rng.uniform(-24, 1);
    weighted_sum_vt_case(r, c, iter, rng);
  }
  // Board family: S up to 160, the board softmax constants, scores within
  // one diff_limit or an eighth of it, shifts -20..-1.
  for (int i = 0; i < 60; ++i) {
    VtCase c{};
    c.T = rng.uniform(1, 9), c.S = rng.uniform(1, 2 * kBoardCols), c.d = rng.uniform(1, 40);
    c.es = 2 * kBoardCols, c.vts = c.S + rng.uniform(0, 3), c.os = kBoardCols;
    c.host = false, c.masked = i % 3 == 0;
    c.zv = rng.uniform(-128, 127), c.zo = rng.uniform(-128, 127);
    c.m = 0x40000000 + static_cast<int32_t>(rng.next() & 0x3FFFFFFF), c.sh = rng.uniform(-20, -1);
    weighted_sum_vt_case(r, c, 1000 + i, rng);
  }
}

// The softmax's first pass alone: exps over a row and its normalizer (stored
// after the row, so that one comparison takes both).
inline void softmax_exps_case(Report& r, int32_t n, int32_t begin, int32_t end,
                              const detail::FusedSoftmax& sm, int iter) {
  char what[96];
  std::snprintf(what, sizeof what, "case %d n=%d begin=%d end=%d exp_shift=%d", iter, int(n), int(begin),
                int(end), int(sm.exp_shift));
  const FixedOut o{1, n + 1, n + 2, 4};
  if (!fits(r, 0, 0, o.bytes())) return;
  const int32_t* in = in_a<int32_t>();
  each_variant(
      r, detail::kSoftmaxExps, "softmax_exps_row", o,
      [&](detail::SoftmaxExpsFn fn, uint8_t* out) {
        auto* row = reinterpret_cast<int32_t*>(out);
        std::memcpy(row, in, static_cast<size_t>(n) * sizeof(int32_t));
        row[n] = static_cast<int32_t>(fn(row, begin, end, n, sm));
      },
      iter % 10 == 4, what);
}

inline void softmax_exps_cases(Report& r) {
  Rng rng(31);
  // Host family: rows up to 300 keys, converter constants, masked ranges.
  for (int iter = 0; iter < 400; ++iter) {
    const detail::FusedSoftmax sm = random_softmax(rng);
    const int32_t n = rng.uniform(1, 300);
    const int32_t begin = iter % 4 == 0 ? rng.uniform(0, n - 1) : 0;
    const int32_t end = iter % 5 == 0 ? rng.uniform(begin, n) : n;
    if (!fits(r, mat_bytes<int32_t>(1, n), 0, 0)) continue;
    fill_scores(in_a<int32_t>(), n, rng, -(1 << 27), host_spread(sm));
    softmax_exps_case(r, n, begin, end, sm, iter);
  }
  // Board family: up to 80 keys, board constants.
  for (int i = 0; i < 60; ++i) {
    const int32_t n = rng.uniform(1, kBoardCols);
    const int32_t begin = i % 3 == 0 ? rng.uniform(0, n) : 0;
    const int32_t end = i % 3 == 0 ? rng.uniform(begin, n) : n;
    uint32_t lim = 0;
    const detail::FusedSoftmax sm = board_softmax(rng, false, &lim);
    const int32_t spread = i % 2 ? sm.diff_limit : sm.diff_limit / 8 + 1;
    fill_scores(in_a<int32_t>(), n, rng, -spread, 2u * static_cast<uint32_t>(spread) + 1u);
    softmax_exps_case(r, n, begin, end, sm, 1000 + i);
  }
}
#endif  // ATTN_WITH_S8

#if ATTN_WITH_S8 || ATTN_WITH_S16
// ---- softmax_fused_rows ------------------------------------------------------------------
// rows x n int32 scores at row stride `stride` (in in_a) with their key
// ranges g_begin / g_end, in place: probabilities over each row's first 2n
// bytes must equal the ref's; its bytes past n entries (padding) and the guard
// must keep the scores (the rest of the row is the kernels' scratch).
inline void softmax_rows_case(Report& r, int32_t rows, int32_t n, int32_t stride,
                              const detail::FusedSoftmax& sm, int iter) {
  char what[96];
  std::snprintf(what, sizeof what, "case %d rows=%d n=%d stride=%d exp_shift=%d", iter, int(rows), int(n),
                int(stride), int(sm.exp_shift));
  const FixedOut o{rows, n, stride, 4};
  const size_t bytes = o.bytes();
  auto same = [&] {
    for (int32_t t = 0; t < rows; ++t) {
      const size_t at = static_cast<size_t>(t) * static_cast<size_t>(stride) * 4;
      if (std::memcmp(g_out_ref + at, g_out_var + at, 2 * static_cast<size_t>(n)) != 0) return false;
      if (std::memcmp(g_out_ref + at + 4 * static_cast<size_t>(n),
                      g_out_var + at + 4 * static_cast<size_t>(n), 4 * static_cast<size_t>(stride - n)) != 0)
        return false;
    }
    return std::memcmp(g_out_ref + bytes, g_out_var + bytes, kGuard) == 0;
  };
  auto run = [&](detail::SoftmaxRowsFn fn, uint8_t* out) {
    std::memcpy(out, g_in_a, bytes);
    fn(reinterpret_cast<int32_t*>(out), stride, rows, g_begin, g_end, n, sm);
  };
  clear_outputs(bytes);
  constexpr size_t kN = sizeof detail::kSoftmaxRows / sizeof detail::kSoftmaxRows[0];
  run(detail::kSoftmaxRows[kN - 1].fn, g_out_ref);
  bool ref_ok = std::memcmp(g_out_ref + bytes, g_out_var + bytes, kGuard) == 0;  // the guard
  for (int32_t t = 0; t < rows; ++t) {
    const size_t at = (static_cast<size_t>(t) * static_cast<size_t>(stride) + static_cast<size_t>(n)) * 4;
    ref_ok &= std::memcmp(g_out_ref + at, g_in_a + at, 4 * static_cast<size_t>(stride - n)) == 0;
  }
  record(r, "softmax_fused_rows", "ref", ref_ok, 0.0, what);
  for (size_t i = 0; i + 1 < kN; ++i) {
    if (!cpu_runs(r, "softmax_fused_rows", detail::kSoftmaxRows[i])) continue;
    std::memset(g_out_var, kSentinel, bytes + kGuard);
    run(detail::kSoftmaxRows[i].fn, g_out_var);
    record(r, "softmax_fused_rows", detail::kSoftmaxRows[i].isa, same(), 0.0, what);
  }
  if (iter % 10 == 4) {
    // the last row's last probability flipped; a row's padding written
    std::memcpy(g_out_var, g_out_ref, bytes + kGuard);
    const size_t last = (static_cast<size_t>(rows - 1) * static_cast<size_t>(stride)) * 4 + 2 * (n - 1);
    g_out_var[last] ^= 1u;
    control(r, "softmax_fused_rows", !same(), 0.0, what);
    g_out_var[last] ^= 1u;
    g_out_var[bytes] ^= 0x5Au;
    control(r, "softmax_fused_rows", !same(), 0.0, what);
  }
}

inline void softmax_rows_cases(Report& r) {
  Rng rng(14);
  // Host family, one row: up to 70 keys, converter constants, masked ranges,
  // ties every 7th, three entries of padding.
  for (int iter = 0; iter < 600; ++iter) {
    const detail::FusedSoftmax sm = random_softmax(rng);
    const int32_t n = rng.uniform(1, 70);
    g_begin[0] = iter % 4 == 0 ? rng.uniform(0, n - 1) : 0;
    g_end[0] = iter % 5 == 0 ? rng.uniform(g_begin[0], n) : n;
    const int32_t base = rng.uniform(-(1 << 27), (1 << 27) - 1);
    fill_scores(in_a<int32_t>(), n + 3, rng, base, host_spread(sm));
    if (iter % 7 == 0)
      for (int32_t j = 0; j < n + 3; ++j) in_a<int32_t>()[j] = base;
    softmax_rows_case(r, 1, n, n + 3, sm, iter);
  }
  // Host family, groups of rows (the AVX-512 and AVX2 variants run each phase
  // across 8 rows) with their own key ranges, empty ones too.
  for (int iter = 0; iter < 300; ++iter) {
    const detail::FusedSoftmax sm = random_softmax(rng);
    const int32_t n = rng.uniform(1, 90), rows = rng.uniform(1, 21), stride = n + rng.uniform(0, 3);
    for (int32_t t = 0; t < rows; ++t) {
      g_begin[t] = rng.next() % 3 == 0 ? rng.uniform(0, n - 1) : 0;
      g_end[t] = rng.next() % 3 == 0 ? rng.uniform(g_begin[t], n) : n;
    }
    const int32_t base = rng.uniform(-(1 << 27), (1 << 27) - 1);
    fill_scores(in_a<int32_t>(), rows * stride, rng, base, host_spread(sm));
    softmax_rows_case(r, rows, n, stride, sm, 1000 + iter);
  }
  // Board family: one row of up to 80 keys, board constants, every 4th with
  // the widest diff_limit, scores within 2 limits (the ref's range).
  for (int i = 0; i < 60; ++i) {
    const int32_t n = rng.uniform(1, kBoardCols);
    g_begin[0] = i % 3 == 0 ? rng.uniform(0, n) : 0;
    g_end[0] = i % 3 == 0 ? rng.uniform(g_begin[0], n) : n;
    uint32_t lim = 0;
    const detail::FusedSoftmax sm = board_softmax(rng, i % 4 == 3, &lim);
    const int32_t spread = i % 2 ? static_cast<int32_t>(lim) : static_cast<int32_t>(lim / 8 + 1);
    fill_scores(in_a<int32_t>(), n, rng, -spread, 2u * static_cast<uint32_t>(spread) + 1u);
    softmax_rows_case(r, 1, n, n, sm, 2000 + i);
  }
  // Groups of rows that share one key range (the M55 runs four such rows
  // per loop), the last group short or not, the range whole or not.
  for (int iter = 0; iter < 60; ++iter) {
    const detail::FusedSoftmax sm = random_softmax(rng);
    const int32_t n = rng.uniform(1, 90), rows = rng.uniform(4, 13), stride = n + rng.uniform(0, 3);
    const int32_t begin = iter % 3 == 0 ? rng.uniform(0, n - 1) : 0;
    const int32_t end = iter % 4 == 0 ? rng.uniform(begin, n) : n;
    for (int32_t t = 0; t < rows; ++t) g_begin[t] = begin, g_end[t] = end;
    const int32_t base = rng.uniform(-(1 << 27), (1 << 27) - 1);
    fill_scores(in_a<int32_t>(), rows * stride, rng, base, host_spread(sm));
    softmax_rows_case(r, rows, n, stride, sm, 3000 + iter);
  }
}
#endif

#if ATTN_WITH_S8 || ATTN_WITH_S16
// ---- whole-model kernels: linear_residual (W2 into the residual), logits --------------
// x [M, K] int8 (then int16) in in_a (row stride xs), w [N, K] in in_b (stride ws),
// per-channel g_bias32 / g_bias64 (or none), g_mult, g_shift; linear_residual
// adds into int32 rows r [M, N] (stride ys) that start from the same random
// values (in in_a past x: saturating adds included), logits writes them.
// The s16 kernels take shifts in [-31, 14] (rescale_q15_s64): g_shift is
// clamped to that for them.
struct ModelDotCase {
  int32_t M, N, K, xs, ws, ys;
  bool bias, extreme;
};

// Runs linear_residual and logits of one dtype: X is x's element type.
template <typename X, typename Fn, size_t NL, size_t NH, typename Bias>
void model_dot_tables(Report& r, const ModelDotCase& c, const Kernel<Fn> (&lr)[NL], const char* lr_op,
                      const Kernel<Fn> (&head)[NH], const char* head_op, const int32_t* r0, const Bias* bias,
                      const int32_t* shift, bool controls, const char* what) {
  const FixedOut o{c.M, c.N, c.ys, 4};
  const Matrix<const X> x{reinterpret_cast<const X*>(g_in_a), c.M, c.K, c.xs};
  const ConstMatS8 w{in_b<int8_t>(), c.N, c.K, c.ws};
  each_variant(
      r, lr, lr_op, o,
      [&](Fn fn, uint8_t* y) {
        auto* rr = reinterpret_cast<int32_t*>(y);
        for (int32_t m = 0; m < c.M; ++m)
          std::memcpy(rr + static_cast<size_t>(m) * static_cast<size_t>(c.ys), r0 + m * c.N,
                      static_cast<size_t>(c.N) * sizeof(int32_t));
        fn(x, w, bias, g_mult, shift, MatS32{rr, c.M, c.N, c.ys});
      },
      controls, what);
  each_variant(
      r, head, head_op, o,
      [&](Fn fn, uint8_t* y) {
        fn(x, w, bias, g_mult, shift, MatS32{reinterpret_cast<int32_t*>(y), c.M, c.N, c.ys});
      },
      controls, what);
}

inline void model_dot_case(Report& r, const ModelDotCase& c, int iter, Rng& rng) {
  char what[128];
  std::snprintf(what, sizeof what, "case %d M=%d N=%d K=%d xs=%d ys=%d bias=%d extreme=%d", iter, int(c.M),
                int(c.N), int(c.K), int(c.xs), int(c.ys), int(c.bias), int(c.extreme));
  const size_t x_bytes = (mat_bytes<int16_t>(c.M, c.xs) + 15) / 16 * 16;
  const FixedOut o{c.M, c.N, c.ys, 4};
  if (!fits(r, x_bytes + mat_bytes<int32_t>(c.M, c.N), mat_bytes<int8_t>(c.N, c.ws), o.bytes(), c.N)) return;
  fill(in_b<int8_t>(), c.N, c.K, c.ws, rng, -128, 127, c.extreme);
  int32_t* r0 = reinterpret_cast<int32_t*>(g_in_a + x_bytes);  // [M, N]
  for (int32_t i = 0; i < c.M * c.N; ++i)
    r0[i] = i % 11 == 3 ? (i % 2 ? INT32_MAX - rng.uniform(0, 1000) : INT32_MIN + rng.uniform(0, 1000))
                        : static_cast<int32_t>(rng.next() << 1) ^ static_cast<int32_t>(rng.next() & 1);
  const bool controls = iter % 10 == 4;
#if ATTN_WITH_S8
  fill(in_a<int8_t>(), c.M, c.K, c.xs, rng, -128, 127, c.extreme);
  model_dot_tables<int8_t>(r, c, detail::kLinearResidualS8, "linear_residual_s8", detail::kLogitsS8,
                           "logits_s8", r0, c.bias ? g_bias32 : nullptr, g_shift, controls, what);
#endif
#if ATTN_WITH_S16
  int32_t shift16[kMaxChannels];
  for (int32_t n = 0; n < c.N && n < kMaxChannels; ++n) {
    shift16[n] = g_shift[n] > 14 ? 14 : g_shift[n];
    g_bias64[n] =
        int64_t{g_bias32[n]} * 4096;  // 2^12 (a multiply: shifting a negative value is UB before C++20)
  }
  fill(in_a<int16_t>(), c.M, c.K, c.xs, rng, -32768, 32767, c.extreme);
  model_dot_tables<int16_t>(r, c, detail::kLinearResidualS16, "linear_residual_s16", detail::kLogitsS16,
                            "logits_s16", r0, c.bias ? g_bias64 : nullptr, shift16, controls, what);
#endif
}

inline void model_dot_cases(Report& r) {
  Rng rng(41);
  // Host family: kSizes (K every 4th in [100, 600): past the DSP rows'
  // 256-deep stack expansion), padded x / w / r; every 9th case all -128;
  // shifts over the whole [-31, 30] (large ones saturate); biases +-2^20.
  for (int iter = 0; iter < 120; ++iter) {
    ModelDotCase c{};
    c.M = rng.pick(kSizes, kNumSizes), c.N = rng.pick(kSizes, kNumSizes);
    c.K = iter % 4 == 3 ? rng.uniform(100, 599) : rng.pick(kSizes, kNumSizes);
    const int32_t pad = rng.uniform(0, 2) * 3;
    c.xs = c.K + pad, c.ws = c.K + pad, c.ys = c.N + pad;
    c.bias = iter % 3 != 0, c.extreme = iter % 9 == 0;
    for (int32_t n = 0; n < c.N && n < kMaxChannels; ++n) {
      g_mult[n] = rng.uniform(0, 0x7FFFFFFF);
      g_shift[n] = rng.uniform(-31, 30);
      g_bias32[n] = rng.uniform(-(1 << 20), (1 << 20) - 1);
    }
    model_dot_case(r, c, iter, rng);
  }
  // Board family: the models' shapes around the kernels' blocks: M <= 9
  // (four-row groups and single rows), N up to 80 (pairs / fours of
  // channels), K up to 300 (multiples of 4 and of 16, tails of both, past
  // 256), the converter's spreads (multipliers in [2^30, 2^31), shifts
  // -12..12).
  for (int i = 0; i < 60; ++i) {
    ModelDotCase c{};
    c.M = rng.uniform(1, 9), c.N = rng.uniform(1, kBoardCols);
    c.K = i % 3 == 0 ? 16 * rng.uniform(1, 18) : i % 3 == 1 ? 4 * rng.uniform(1, 70) : rng.uniform(1, 300);
    c.xs = c.K + rng.uniform(0, 3), c.ws = c.K + (i % 2) * rng.uniform(0, 3), c.ys = c.N + rng.uniform(0, 3);
    c.bias = i % 5 != 4, c.extreme = false;
    for (int32_t n = 0; n < c.N; ++n) {
      g_mult[n] = 0x40000000 + static_cast<int32_t>(rng.next() & 0x3FFFFFFF);
      g_shift[n] = rng.uniform(-12, 12);
      g_bias32[n] = rng.uniform(-100000, 100000);
    }
    model_dot_case(r, c, 1000 + i, rng);
  }
}

// ---- int4 weights: the linears of projections with weight_s4 (kernels/s4_rows.h) -------
// x [M, K] (K even) int8 then int16 in in_a (stride xs), w [N, K / 2] packed
// bytes in in_b (stride wb >= K / 2, every nibble value), per-channel g_mult,
// g_shift, g_bias32 / g_bias64; linear_* into int8 / int16 rows (stride ys),
// linear_residual_* added into int32 rows from the same start, logits_* stored.
struct S4Case {
  int32_t M, N, K, xs, wb, ys;
  bool bias, extreme;
  int32_t zout;
};

template <typename X, typename LinFn, size_t NL, typename OutFn, size_t NR, size_t NH, typename Params,
          typename Bias>
void s4_tables(Report& r, const S4Case& c, const Kernel<LinFn> (&lin)[NL], const char* lin_op,
               const Kernel<OutFn> (&res)[NR], const char* res_op, const Kernel<OutFn> (&head)[NH],
               const char* head_op, const Params& p, const int32_t* r0, const Bias* bias,
               const int32_t* shift, bool controls, const char* what) {
  const Matrix<const X> x{reinterpret_cast<const X*>(g_in_a), c.M, c.K, c.xs};
  const detail::ConstMatS4 w{in_b<uint8_t>(), c.N, c.K, c.wb};
  each_variant(
      r, lin, lin_op, FixedOut{c.M, c.N, c.ys, sizeof(X)},
      [&](LinFn fn, uint8_t* y) {
        fn(x, w, bias, p, Matrix<X>{reinterpret_cast<X*>(y), c.M, c.N, c.ys});
      },
      controls, what);
  const FixedOut o{c.M, c.N, c.ys, 4};
  each_variant(
      r, res, res_op, o,
      [&](OutFn fn, uint8_t* y) {
        auto* rr = reinterpret_cast<int32_t*>(y);
        for (int32_t m = 0; m < c.M; ++m)
          std::memcpy(rr + static_cast<size_t>(m) * static_cast<size_t>(c.ys), r0 + m * c.N,
                      static_cast<size_t>(c.N) * sizeof(int32_t));
        fn(x, w, bias, g_mult, shift, MatS32{rr, c.M, c.N, c.ys});
      },
      controls, what);
  each_variant(
      r, head, head_op, o,
      [&](OutFn fn, uint8_t* y) {
        fn(x, w, bias, g_mult, shift, MatS32{reinterpret_cast<int32_t*>(y), c.M, c.N, c.ys});
      },
      controls, what);
}

inline void s4_case(Report& r, const S4Case& c, int iter, Rng& rng) {
  char what[128];
  std::snprintf(what, sizeof what, "case %d M=%d N=%d K=%d xs=%d wb=%d ys=%d bias=%d extreme=%d", iter,
                int(c.M), int(c.N), int(c.K), int(c.xs), int(c.wb), int(c.ys), int(c.bias), int(c.extreme));
  const size_t x_bytes = (mat_bytes<int16_t>(c.M, c.xs) + 15) / 16 * 16;
  if (!fits(r, x_bytes + mat_bytes<int32_t>(c.M, c.N), mat_bytes<uint8_t>(c.N, c.wb),
            mat_bytes<int32_t>(c.M, c.ys), c.N))
    return;
  // All-minimum weights (every nibble 8: -8) in the extreme cases, else every value.
  fill(in_b<uint8_t>(), c.N, c.K / 2, c.wb, rng, c.extreme ? 0x88 : 0, 255, c.extreme);
  int32_t* r0 = reinterpret_cast<int32_t*>(g_in_a + x_bytes);  // [M, N]
  for (int32_t i = 0; i < c.M * c.N; ++i)
    r0[i] = i % 11 == 3 ? (i % 2 ? INT32_MAX - rng.uniform(0, 1000) : INT32_MIN + rng.uniform(0, 1000))
                        : static_cast<int32_t>(rng.next() << 1) ^ static_cast<int32_t>(rng.next() & 1);
  const bool controls = iter % 10 == 4;
#if ATTN_WITH_S8
  fill(in_a<int8_t>(), c.M, c.K, c.xs, rng, -128, 127, c.extreme);
  LinearS8Params p8;
  p8.output_zero_point = c.zout;
  p8.multiplier = g_mult;
  p8.shift = g_shift;
  s4_tables<int8_t>(r, c, detail::kLinearS4S8, "linear_s4_s8", detail::kLinearResidualS4S8,
                    "linear_residual_s4_s8", detail::kLogitsS4S8, "logits_s4_s8", p8, r0,
                    c.bias ? g_bias32 : nullptr, g_shift, controls, what);
#endif
#if ATTN_WITH_S16
  int32_t shift16[kMaxChannels];
  for (int32_t n = 0; n < c.N && n < kMaxChannels; ++n) {
    shift16[n] = g_shift[n] > 14 ? 14 : g_shift[n];
    g_bias64[n] = int64_t{g_bias32[n]} * 4096;
  }
  fill(in_a<int16_t>(), c.M, c.K, c.xs, rng, -32768, 32767, c.extreme);
  LinearS16Params p16;
  p16.multiplier = g_mult;
  p16.shift = shift16;
  s4_tables<int16_t>(r, c, detail::kLinearS4S16, "linear_s4_s16", detail::kLinearResidualS4S16,
                     "linear_residual_s4_s16", detail::kLogitsS4S16, "logits_s4_s16", p16, r0,
                     c.bias ? g_bias64 : nullptr, shift16, controls, what);
#endif
}

inline void s4_cases(Report& r) {
  Rng rng(43);
  // Host family: M and N over kSizes, K even around the 16- and 32-value
  // blocks and deep (past the int16 kernels' int32 lane runs), padded
  // strides; every 9th case all-minimum operands; shifts over [-31, 30].
  for (int iter = 0; iter < 100; ++iter) {
    S4Case c{};
    const bool deep = iter % 5 == 4;  // a decode step's rows
    c.M = deep ? rng.uniform(1, 5) : rng.pick(kSizes, kNumSizes), c.N = rng.pick(kSizes, kNumSizes);
    c.K = deep ? 2 * rng.uniform(500, 2600) : 2 * rng.uniform(1, 70);
    const int32_t pad = rng.uniform(0, 2) * 3;
    c.xs = c.K + pad, c.wb = c.K / 2 + pad, c.ys = c.N + pad;
    c.bias = iter % 3 != 0, c.extreme = iter % 9 == 0, c.zout = rng.uniform(-128, 127);
    for (int32_t n = 0; n < c.N && n < kMaxChannels; ++n) {
      g_mult[n] = rng.uniform(0, 0x7FFFFFFF);
      g_shift[n] = rng.uniform(-31, 30);
      g_bias32[n] = rng.uniform(-(1 << 20), (1 << 20) - 1);
    }
    s4_case(r, c, iter, rng);
  }
  // Board family: the models' shapes, the converter's spreads.
  for (int i = 0; i < 40; ++i) {
    S4Case c{};
    c.M = rng.uniform(1, 9), c.N = rng.uniform(1, kBoardCols);
    c.K = 2 * rng.uniform(1, 150);
    c.xs = c.K + rng.uniform(0, 3), c.wb = c.K / 2 + (i % 2) * rng.uniform(0, 3),
    c.ys = c.N + rng.uniform(0, 3);
    c.bias = i % 5 != 4, c.extreme = false, c.zout = rng.uniform(-20, 20);
    for (int32_t n = 0; n < c.N; ++n) {
      g_mult[n] = 0x40000000 + static_cast<int32_t>(rng.next() & 0x3FFFFFFF);
      g_shift[n] = rng.uniform(-12, 12);
      g_bias32[n] = rng.uniform(-100000, 100000);
    }
    s4_case(r, c, 1000 + i, rng);
  }
}
#endif  // ATTN_WITH_S8 || ATTN_WITH_S16

#if ATTN_WITH_F32
// ---- float32 ----------------------------------------------------------------------------
constexpr double kU = 5.9604644775390625e-8;  // 2^-24, unit roundoff of float

// Largest |var - ref| / bound(r, c) over [rows, cols] at row stride `stride`
// (infinite for a NaN, or when the variant wrote outside the region).
template <class Bound>
double worst_ratio(int32_t rows, int32_t cols, int32_t stride, Bound bound) {
  double worst = 0.0;
  const float* a = out_var<float>();
  const float* b = out_ref<float>();
  for (int32_t i = 0; i < rows; ++i)
    for (int32_t j = 0; j < cols; ++j) {
      const size_t at = static_cast<size_t>(i) * static_cast<size_t>(stride) + static_cast<size_t>(j);
      const double ratio = std::fabs(static_cast<double>(a[at]) - static_cast<double>(b[at])) / bound(i, j);
      if (!(ratio <= worst)) worst = ratio == ratio ? ratio : INFINITY;
    }
  if (!outside_intact(g_out_var, rows, cols, stride, sizeof(float))) return INFINITY;
  return worst;
}
// sum_i |a[i] b[i * bs]|: the scale of a dot product's rounding error.
inline double abs_dot(const float* a, const float* b, int32_t bs, int32_t n) {
  double sum = 0.0;
  for (int32_t i = 0; i < n; ++i)
    sum += std::fabs(static_cast<double>(a[i]) * static_cast<double>(b[static_cast<size_t>(i) * bs]));
  return sum;
}
// Index of the largest |a[i] b[i * bs]|, i < n.
inline int32_t largest_term(const float* a, const float* b, int32_t bs, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i)
    if (std::fabs(a[i] * b[static_cast<size_t>(i) * bs]) >
        std::fabs(a[best] * b[static_cast<size_t>(best) * bs]))
      best = i;
  return best;
}
inline void ffill(float* p, size_t n, Rng& rng) {
  for (size_t i = 0; i < n; ++i) p[i] = rng.frand();
}

// Every non-ref row of `table` with run(fn, out) against the ref row, within
// bound; ref must write only its output. A control (when `dropped` is not
// null): the ref kernel again with *dropped = 0, the largest term of output
// (0, 0), must break the bound.
template <typename Fn, size_t N, typename Run, typename Bound>
void each_f32_variant(Report& r, const Kernel<Fn> (&table)[N], const char* op, int32_t rows, int32_t cols,
                      int32_t stride, Run run, Bound bound, float* dropped, const char* what) {
  const size_t bytes = mat_bytes<float>(rows, stride);
  clear_outputs(bytes);
  run(table[N - 1].fn, out_ref<float>());
  record(r, op, "ref", outside_intact(g_out_ref, rows, cols, stride, sizeof(float)), 0.0, what);
  for (size_t i = 0; i + 1 < N; ++i) {
    if (!cpu_runs(r, op, table[i])) continue;
    std::memset(g_out_var, kSentinel, bytes + kGuard);
    run(table[i].fn, out_var<float>());
    const double ratio = worst_ratio(rows, cols, stride, bound);
    record(r, op, table[i].isa, ratio <= 1.0, ratio, what);
  }
  if (dropped != nullptr) {
    const float saved = *dropped;
    *dropped = 0.0f;
    std::memset(g_out_var, kSentinel, bytes + kGuard);
    run(table[N - 1].fn, out_var<float>());
    *dropped = saved;
    const double ratio = worst_ratio(rows, cols, stride, bound);
    control(r, op, !(ratio <= 1.0), ratio, what);
  }
}

// x [M, K] at stride xs in in_a, w [N, K] at stride ws in in_b.
struct LinearF32Case {
  int32_t M, N, K, xs, ws, ys;
  bool bias, control;
};

inline void linear_f32_case(Report& r, const LinearF32Case& c, int iter, Rng& rng) {
  char what[112];
  std::snprintf(what, sizeof what, "case %d M=%d N=%d K=%d xs=%d ys=%d bias=%d", iter, int(c.M), int(c.N),
                int(c.K), int(c.xs), int(c.ys), int(c.bias));
  if (!fits(r, mat_bytes<float>(c.M, c.xs), mat_bytes<float>(c.N, c.ws), mat_bytes<float>(c.M, c.ys), c.N))
    return;
  float* xa = in_a<float>();
  float* wa = in_b<float>();
  ffill(xa, mat_bytes<float>(c.M, c.xs) / sizeof(float), rng);
  ffill(wa, mat_bytes<float>(c.N, c.ws) / sizeof(float), rng);
  static float bias_buf[kMaxChannels];
  ffill(bias_buf, static_cast<size_t>(c.N), rng);
  const float* bias = c.bias ? bias_buf : nullptr;
  const ConstMatF32 x{xa, c.M, c.K, c.xs}, w{wa, c.N, c.K, c.ws};
  // bound(m, n) = 2 (K + 2) u (sum_k |x w| + |b|)
  auto bound = [&](int32_t m, int32_t n) {
    const double b = bias != nullptr ? std::fabs(static_cast<double>(bias[n])) : 0.0;
    return 2.0 * (c.K + 2) * kU * (b + abs_dot(x.row(m), w.row(n), 1, c.K)) + 1e-30;
  };
  float* dropped = c.control && !c.bias ? xa + largest_term(xa, wa, 1, c.K) : nullptr;
  each_f32_variant(
      r, detail::kLinearF32, "linear_f32", c.M, c.N, c.ys,
      [&](detail::LinearF32Fn fn, float* y) {
        fn(x, w, bias, MatF32{y, c.M, c.N, c.ys});
      },
      bound, dropped, what);

  // Weights packed once: each packing row's linear on its panels against the
  // ref, and bit-for-bit against its own ISA's unpacked linear up to K = 256
  // (the stack panel's depth; avx512vnni at any K). The pack writes exactly panels_floats floats.
  constexpr size_t kP = sizeof detail::kPackedLinearF32 / sizeof detail::kPackedLinearF32[0];
  constexpr size_t kL = sizeof detail::kLinearF32 / sizeof detail::kLinearF32[0];
  for (size_t i = 0; i < kP; ++i) {
    const detail::PackedLinearF32& pk = detail::kPackedLinearF32[i].fn;
    if (pk.linear == nullptr || !cpu_runs(r, "linear_packed_f32", detail::kPackedLinearF32[i])) continue;
    const char* isa = detail::kPackedLinearF32[i].isa;
    const size_t floats = static_cast<size_t>(pk.panels_floats(c.N, c.K));
    if (!fits(r, mat_bytes<float>(c.M, c.xs), mat_bytes<float>(c.N, c.ws) + (floats + 16) * sizeof(float),
              mat_bytes<float>(c.M, c.ys)))
      continue;
    float* panels = wa + (mat_bytes<float>(c.N, c.ws) / sizeof(float) + 15) / 16 * 16;
    std::memset(panels, kSentinel, (floats + 1) * sizeof(float));
    pk.pack(w, panels);
    bool guard = true;
    for (size_t b = 0; b < sizeof(float); ++b)
      guard &= reinterpret_cast<uint8_t*>(panels + floats)[b] == kSentinel;
    std::memset(g_out_var, kSentinel, mat_bytes<float>(c.M, c.ys) + kGuard);
    pk.linear(x, w, panels, bias, MatF32{out_var<float>(), c.M, c.N, c.ys});
    const double ratio = worst_ratio(c.M, c.N, c.ys, bound);
    record(r, "linear_packed_f32", isa, guard && ratio <= 1.0, ratio, what);
    // The avx512vnni row resumes its chains past depth 256: the same bits at any K.
    if (c.K <= 256 || std::strcmp(isa, "avx512vnni") == 0) {
      for (size_t j = 0; j < kL; ++j) {
        if (std::strcmp(detail::kLinearF32[j].isa, isa) != 0) continue;
        std::memcpy(g_out_ref, g_out_var, mat_bytes<float>(c.M, c.ys) + kGuard);
        std::memset(g_out_var, kSentinel, mat_bytes<float>(c.M, c.ys) + kGuard);
        detail::kLinearF32[j].fn(x, w, bias, MatF32{out_var<float>(), c.M, c.N, c.ys});
        record(r, "linear_packed_f32", isa,
               std::memcmp(g_out_ref, g_out_var, mat_bytes<float>(c.M, c.ys) + kGuard) == 0, 0.0, what);
      }
    }
  }
}

inline void linear_f32_cases(Report& r) {
  Rng rng(21);
  // Host grid: tails of the vector width and of the register blocks.
  constexpr int32_t kM[] = {1, 2, 3, 4, 5, 7, 8, 9, 13};
  constexpr int32_t kN[] = {1, 2, 3, 4, 5, 6, 7, 12, 13, 16, 17, 40};
  constexpr int32_t kK[] = {1, 3, 7, 8, 9, 15, 16, 17, 33, 64, 67, 260};
  int iter = 0;
  for (int32_t M : kM)
    for (int32_t N : kN)
      for (int32_t K : kK) {
        linear_f32_case(r, LinearF32Case{M, N, K, K + 3, K + 1, N + 2, (M + N + K) % 2 == 0, iter % 50 == 7},
                        iter, rng);
        ++iter;
      }
  // Packing grid: panels of 16 columns and their tails, K to the stack
  // panel's depth (256) and past it.
  constexpr int32_t kPM[] = {1, 3, 4, 5, 7, 8, 13};
  constexpr int32_t kPN[] = {1, 7, 15, 16, 17, 40};
  constexpr int32_t kPK[] = {1, 7, 8, 9, 33, 64, 256, 260, 300};
  for (int32_t M : kPM)
    for (int32_t N : kPN)
      for (int32_t K : kPK)
        linear_f32_case(r, LinearF32Case{M, N, K, K + 3, K + 1, N + 2, (M + N + K) % 2 == 1, false}, iter++,
                        rng);
  // Board family: N past several 4-output blocks, any K % 4, x rows with
  // padding, every 10th case long rows (K > 256), M <= 2, N <= 20.
  for (int i = 0; i < 60; ++i) {
    const bool long_rows = i % 10 == 9;
    LinearF32Case c{};
    c.M = long_rows ? rng.uniform(1, 2) : rng.uniform(1, 9);
    c.N = long_rows ? rng.uniform(1, 20) : rng.uniform(1, kBoardCols);
    c.K = long_rows ? rng.uniform(257, 300) : rng.uniform(1, kBoardCols - 3);
    c.xs = c.K + rng.uniform(0, 3), c.ws = c.K, c.ys = kBoardCols;
    c.bias = i % 5 != 4, c.control = i % 10 == 4;
    linear_f32_case(r, c, 10000 + i, rng);
  }
}

// scores: s[T, S] = q[T, d] k[S, d]^T * scale (q in in_a, k in in_b);
// weighted sum: o[T, d] = p[T, S] v[S, d] (p in in_a, v in in_b).
inline void scores_f32_case(Report& r, int32_t T, int32_t S, int32_t d, int32_t qs, int32_t ks, int32_t ss,
                            bool with_control, int iter, Rng& rng) {
  char what[112];
  std::snprintf(what, sizeof what, "case %d T=%d S=%d d=%d qs=%d ks=%d", iter, int(T), int(S), int(d),
                int(qs), int(ks));
  if (!fits(r, mat_bytes<float>(T, qs), mat_bytes<float>(S, ks), mat_bytes<float>(T, ss))) return;
  float* qa = in_a<float>();
  float* ka = in_b<float>();
  ffill(qa, mat_bytes<float>(T, qs) / sizeof(float), rng);
  ffill(ka, mat_bytes<float>(S, ks) / sizeof(float), rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const ConstMatF32 q{qa, T, d, qs}, k{ka, S, d, ks};
  auto bound = [&](int32_t t, int32_t j) {
    return 2.0 * (d + 2) * kU * abs_dot(q.row(t), k.row(j), 1, d) * scale + 1e-30;
  };
  each_f32_variant(
      r, detail::kScoresF32, "scores_f32", T, S, ss,
      [&](detail::ScoresF32Fn fn, float* s) {
        fn(q, k, scale, MatF32{s, T, S, ss});
      },
      bound, with_control ? qa + largest_term(qa, ka, 1, d) : nullptr, what);
}

inline void weighted_sum_f32_case(Report& r, int32_t T, int32_t S, int32_t d, int32_t ps, int32_t vs,
                                  int32_t os, bool with_control, int iter, Rng& rng) {
  char what[112];
  std::snprintf(what, sizeof what, "case %d T=%d S=%d d=%d ps=%d vs=%d", iter, int(T), int(S), int(d),
                int(ps), int(vs));
  if (!fits(r, mat_bytes<float>(T, ps), mat_bytes<float>(S, vs), mat_bytes<float>(T, os))) return;
  float* pa = in_a<float>();
  float* va = in_b<float>();
  // p: probabilities-like, >= 0, a third of them exactly 0 (masked keys)
  for (int32_t t = 0; t < T; ++t)
    for (int32_t j = 0; j < ps; ++j) {
      const float f = std::fabs(rng.frand());
      pa[static_cast<size_t>(t) * static_cast<size_t>(ps) + static_cast<size_t>(j)] =
          (j + t + iter) % 3 == 0 ? 0.0f : f;
    }
  if (with_control) pa[0] = 1.0f;  // the dropped term is never the only one
  ffill(va, mat_bytes<float>(S, vs) / sizeof(float), rng);
  const ConstMatF32 p{pa, T, S, ps}, v{va, S, d, vs};
  auto bound = [&](int32_t t, int32_t c) {
    return 2.0 * (S + 2) * kU * abs_dot(p.row(t), va + c, vs, S) + 1e-30;
  };
  each_f32_variant(
      r, detail::kWeightedSumF32, "weighted_sum_f32", T, d, os,
      [&](detail::WeightedSumF32Fn fn, float* o) {
        fn(p, v, MatF32{o, T, d, os});
      },
      bound, with_control ? pa + largest_term(pa, va, vs, S) : nullptr, what);
}

inline void scores_weighted_sum_f32_cases(Report& r) {
  Rng rng(22);
  // Host grid: T from 1 (decoding) past the 4 rows where the SIMD scores
  // switch to K^T panels; S past the 16-key panel; d past the 8-wide
  // transposes and the 256-deep panel.
  constexpr int32_t kT[] = {1, 2, 3, 4, 5, 6, 7, 12, 13};
  constexpr int32_t kS[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 33, 100};
  constexpr int32_t kD[] = {1, 2, 3, 4, 8, 9, 16, 17, 32, 257};
  int iter = 0;
  for (int32_t T : kT)
    for (int32_t S : kS)
      for (int32_t d : kD) {
        if (d == 257 && S > 17) continue;  // the deep case needs few keys
        scores_f32_case(r, T, S, d, d + 4, d + 3, S + 1, iter % 50 == 7, iter, rng);
        weighted_sum_f32_case(r, T, S, d, S + 2, d + 5, d + 3, iter % 50 == 7, iter, rng);
        ++iter;
      }
  // Board family: T <= 9, S <= 80, d <= 40 (every 10th up to 76) for the
  // scores; P.V with S up to 160 and d <= 40, every 10th d up to 77 with S <= 80.
  for (int i = 0; i < 60; ++i) {
    const int32_t T = rng.uniform(1, 9), S = rng.uniform(1, kBoardCols);
    const int32_t d = i % 10 == 7 ? rng.uniform(41, kBoardCols - 4) : rng.uniform(1, 40);
    scores_f32_case(r, T, S, d, d + rng.uniform(0, 3), d + rng.uniform(0, 3), kBoardCols, i % 10 == 4,
                    10000 + i, rng);
    const bool wide = i % 10 == 7;
    const int32_t T2 = rng.uniform(1, 9);
    const int32_t S2 = wide ? rng.uniform(1, kBoardCols) : rng.uniform(1, 2 * kBoardCols);
    const int32_t d2 = wide ? rng.uniform(41, kBoardCols - 3) : rng.uniform(1, 40);
    weighted_sum_f32_case(r, T2, S2, d2, 2 * kBoardCols, d2 + rng.uniform(0, 3), kBoardCols, i % 10 == 4,
                          10000 + i, rng);
  }
}

// One row in place; kinds: 0 plain; 1 a third masked (-INFINITY); 2 wide
// range (tiny and underflowing exps); 3 all masked but one; 4 all masked
// (all 0). Masked entries must be exactly 0 and every entry finite; the
// control masks the row's largest entry. The NaN policy (a NaN score makes
// the whole row NaN, in every variant): 5 one NaN among finite scores, 6 all
// NaN, 7 one NaN among masked ones; every entry of ref and variant must be NaN.
inline void softmax_f32_case(Report& r, int32_t n, int kind, bool with_control, int iter, Rng& rng) {
  char what[80];
  std::snprintf(what, sizeof what, "case %d n=%d kind=%d", iter, int(n), kind);
  if (!fits(r, mat_bytes<float>(1, n), 0, mat_bytes<float>(1, n))) return;
  float* in = in_a<float>();
  for (int32_t j = 0; j < n; ++j) {
    float x = 4.0f * rng.frand();
    if (kind == 1 && rng.next() % 3 == 0) x = -INFINITY;
    if (kind == 2) x = 31.5f * (rng.frand() - 1.0f) + (j % 5 == 0 ? 40.0f : 0.0f);
    if ((kind == 3 && j != n / 2) || kind == 4 || kind == 7) x = -INFINITY;
    if ((kind == 5 && j == iter % n) || kind == 6 || (kind == 7 && j == n / 2)) x = NAN;
    in[j] = x;
  }
  const bool nan_row = kind >= 5;
  auto all_nan = [n](const float* row) {
    bool all = true;
    for (int32_t j = 0; j < n; ++j) all &= detail::is_nan_bits(row[j]);
    return all;
  };
  const float* want = out_ref<float>();
  auto bound = [&](int32_t, int32_t j) { return (2.0 * n + 140.0) * kU * want[j] + 1e-37; };
  auto ratio_of = [&] {
    if (nan_row)
      return all_nan(out_var<float>()) && outside_intact(g_out_var, 1, n, n, sizeof(float)) ? 0.0 : INFINITY;
    double ratio = worst_ratio(1, n, n, bound);
    const float* got = out_var<float>();
    for (int32_t j = 0; j < n; ++j)
      if ((in[j] == -INFINITY && got[j] != 0.0f) || !std::isfinite(got[j])) ratio = INFINITY;
    return ratio;
  };
  auto run = [&](detail::SoftmaxRowF32Fn fn, float* row) {
    std::memcpy(row, in, static_cast<size_t>(n) * sizeof(float));
    fn(row, n);
  };
  clear_outputs(mat_bytes<float>(1, n));
  constexpr size_t kN = sizeof detail::kSoftmaxRowF32 / sizeof detail::kSoftmaxRowF32[0];
  run(detail::kSoftmaxRowF32[kN - 1].fn, out_ref<float>());
  bool ref_ok = outside_intact(g_out_ref, 1, n, n, sizeof(float));
  for (int32_t j = 0; j < n; ++j) ref_ok &= nan_row || in[j] != -INFINITY || want[j] == 0.0f;
  if (nan_row) ref_ok &= all_nan(want);
  record(r, "softmax_row_f32", "ref", ref_ok, 0.0, what);
  for (size_t i = 0; i + 1 < kN; ++i) {
    if (!cpu_runs(r, "softmax_row_f32", detail::kSoftmaxRowF32[i])) continue;
    std::memset(g_out_var, kSentinel, mat_bytes<float>(1, n) + kGuard);
    run(detail::kSoftmaxRowF32[i].fn, out_var<float>());
    const double ratio = ratio_of();
    record(r, "softmax_row_f32", detail::kSoftmaxRowF32[i].isa, ratio <= 1.0, ratio, what);
  }
  if (with_control && kind < 4) {
    int32_t jmax = 0;
    for (int32_t j = 1; j < n; ++j) jmax = in[j] > in[jmax] ? j : jmax;
    const float saved = in[jmax];
    in[jmax] = -INFINITY;
    std::memset(g_out_var, kSentinel, mat_bytes<float>(1, n) + kGuard);
    run(detail::kSoftmaxRowF32[kN - 1].fn, out_var<float>());
    in[jmax] = saved;
    const double ratio = worst_ratio(1, n, n, bound);
    control(r, "softmax_row_f32", !(ratio <= 1.0), ratio, what);
  }
}

inline void softmax_f32_cases(Report& r) {
  Rng rng(23);
  // Host family: every length to 40, then vector-width boundaries and long rows.
  int iter = 0;
  constexpr int32_t kLong[] = {63, 64, 65, 100, 255, 256, 257, 1000};
  for (int32_t n = 1; n <= 40 + 8; ++n) {
    const int32_t len = n <= 40 ? n : kLong[n - 41];
    for (int kind = 0; kind < 8; ++kind, ++iter) softmax_f32_case(r, len, kind, iter % 8 == 1, iter, rng);
  }
  // Board family: up to 160 entries, every 10th up to 300.
  for (int i = 0; i < 120; ++i) {
    const int32_t n = i % 10 == 9 ? rng.uniform(2 * kBoardCols, 300) : rng.uniform(1, 2 * kBoardCols);
    softmax_f32_case(r, n, i % 8, i % 7 == 0, 10000 + i, rng);
  }
}

// ---- whole-model ops: norm rows and activations -------------------------------------
// Norms: v = x + r is the same single rounding in every variant; then the
// mean, the (centred) sum of squares and the output differ in the order of
// additions and in fused multiply-adds. With the inputs below (|v| below 4,
// the spread about the mean not small against the mean), the computed mean
// is within (n + 1) u sum|v| / n of the exact one, and 1 / sqrt(var + eps)
// within (n + 4) u / 2 relative, so each output lies within
//   2 (n + 4) u rstd |w_i| (|v_i - mean| + sum|v| / n) + 2 u (|b_i| + |y_i|)
// of the ref's (RMSNorm: mean 0 and sum|v| / n not needed:
// 2 (n + 4) u rstd |w_i| |v_i| + 2 u |y_i|).
// Activations: each variant's act(x) is within 4 u |x| of the exact value
// (checked against float64 on [-12, 12] in steps of 1e-4: 3.6 u |x| for the
// avx2 erf and sigmoid), the ref within 4 u |x| as well, times |up| and one
// more rounding:
//   |variant - ref| <= 10 u |x_i| max(|up_i|, 1) + 1e-37.
// A NaN input must give NaN at that entry in every variant.
// Controls: the ref with the largest |x| (norms) or the largest x (activations)
// set to 0 must break the bound.
inline void norm_f32_case(Report& r, bool rms, int32_t n, bool residual, bool bias, bool in_place,
                          bool with_control, int iter, Rng& rng) {
  const char* op = rms ? "rms_norm_row_f32" : "layer_norm_row_f32";
  char what[112];
  std::snprintf(what, sizeof what, "case %d n=%d residual=%d bias=%d in_place=%d", iter, int(n),
                int(residual), int(bias), int(in_place));
  if (!fits(r, 2 * mat_bytes<float>(1, n), 2 * mat_bytes<float>(1, n), mat_bytes<float>(1, n))) return;
  float* x = in_a<float>();
  float* res = x + n;
  float* w = in_b<float>();
  float* b = w + n;
  const float offset = 2.0f * rng.frand();
  for (int32_t j = 0; j < n; ++j) x[j] = rng.frand() + offset;
  for (int32_t j = 0; j < n; ++j) res[j] = residual ? rng.frand() : 0.0f;
  ffill(w, static_cast<size_t>(2 * n), rng);
  const float eps = iter % 2 == 0 ? 1e-5f : 1e-6f;
  const float* rp = residual ? res : nullptr;
  const float* bp = bias && !rms ? b : nullptr;
  // The bound, from v = x + r rounded once, as every variant computes it.
  double sum = 0.0, sum_abs = 0.0, sq = 0.0;
  for (int32_t j = 0; j < n; ++j) {
    const double v = static_cast<double>(residual ? x[j] + res[j] : x[j]);
    sum += v, sum_abs += std::fabs(v);
  }
  const double mean = rms ? 0.0 : sum / n;
  for (int32_t j = 0; j < n; ++j) {
    const double v = static_cast<double>(residual ? x[j] + res[j] : x[j]);
    sq += (v - mean) * (v - mean);
  }
  const double rstd = 1.0 / std::sqrt(sq / n + static_cast<double>(eps));
  const float* want = out_ref<float>();
  auto bound = [&](int32_t, int32_t j) {
    const double v = static_cast<double>(residual ? x[j] + res[j] : x[j]);
    const double spread = rms ? std::fabs(v) : std::fabs(v - mean) + sum_abs / n;
    const double bj = bp != nullptr ? std::fabs(static_cast<double>(bp[j])) : 0.0;
    return 2.0 * (n + 4) * kU * rstd * std::fabs(static_cast<double>(w[j])) * spread +
           2.0 * kU * (bj + std::fabs(static_cast<double>(want[j]))) + 1e-30;
  };
  // In place: the output starts as a copy of x and is passed as x.
  auto run = [&](detail::NormRowF32Fn fn, float* y) {
    if (in_place) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
    fn(in_place ? y : x, rp, n, w, bp, eps, y);
  };
  int32_t jmax = 0;
  for (int32_t j = 1; j < n; ++j) jmax = std::fabs(x[j]) > std::fabs(x[jmax]) ? j : jmax;
  each_f32_variant(r, rms ? detail::kRmsNormF32 : detail::kLayerNormF32, op, 1, n, n, run, bound,
                   with_control && n > 1 ? x + jmax : nullptr, what);
}

inline void activation_f32_case(Report& r, int which, int32_t n, bool gated, int kind, bool with_control,
                                int iter, Rng& rng) {
  static const char* const kOps[] = {"gelu_f32", "gelu_tanh_f32", "relu_f32", "silu_f32"};
  char what[112];
  std::snprintf(what, sizeof what, "case %d n=%d gated=%d kind=%d", iter, int(n), int(gated), kind);
  if (!fits(r, mat_bytes<float>(1, n), mat_bytes<float>(1, n), mat_bytes<float>(1, n))) return;
  float* x = in_a<float>();
  float* up = in_b<float>();
  // kinds: 0 in [-6, 6); 1 wide, [-100, 100) (exp and erf saturate); 2 one NaN
  for (int32_t j = 0; j < n; ++j) x[j] = (kind == 1 ? 100.0f : 6.0f) * rng.frand();
  if (kind == 2) x[iter % n] = NAN;
  ffill(up, static_cast<size_t>(n), rng);
  const float* upp = gated ? up : nullptr;
  auto bound = [&](int32_t, int32_t j) {
    if (detail::is_nan_bits(x[j])) return 1.0;  // kind 2's NaN entry, checked apart
    const double u = gated ? std::fabs(static_cast<double>(up[j])) : 1.0;
    return 10.0 * kU * std::fabs(static_cast<double>(x[j])) * (u > 1.0 ? u : 1.0) + 1e-37;
  };
  auto run = [&](detail::ActivationF32Fn fn, float* y) {
    std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
    fn(y, upp, n);
  };
  int32_t jmax = 0;
  for (int32_t j = 1; j < n; ++j) jmax = x[j] > x[jmax] ? j : jmax;
  float* dropped = with_control && kind != 2 && x[jmax] > 0.5f ? x + jmax : nullptr;
  auto each = [&](const auto& table) {
    if (kind != 2) return each_f32_variant(r, table, kOps[which], 1, n, n, run, bound, dropped, what);
    // NaN: NaN at that entry (ref and variants), the rest within the bound.
    const int32_t at = iter % n;
    constexpr size_t kN = sizeof table / sizeof table[0];
    clear_outputs(mat_bytes<float>(1, n));
    run(table[kN - 1].fn, out_ref<float>());
    const bool ref_nan = detail::is_nan_bits(out_ref<float>()[at]);
    out_ref<float>()[at] = 0.0f;
    record(r, kOps[which], "ref", ref_nan && outside_intact(g_out_ref, 1, n, n, sizeof(float)), 0.0, what);
    for (size_t i = 0; i + 1 < kN; ++i) {
      if (!cpu_runs(r, kOps[which], table[i])) continue;
      std::memset(g_out_var, kSentinel, mat_bytes<float>(1, n) + kGuard);
      run(table[i].fn, out_var<float>());
      const bool nan = detail::is_nan_bits(out_var<float>()[at]);
      out_var<float>()[at] = 0.0f;
      const double ratio = nan ? worst_ratio(1, n, n, bound) : INFINITY;
      record(r, kOps[which], table[i].isa, ratio <= 1.0, ratio, what);
    }
  };
  switch (which) {
    case 0:
      return each(detail::kGeluF32);
    case 1:
      return each(detail::kGeluTanhF32);
    case 2:
      return each(detail::kReluF32);
    default:
      return each(detail::kSiluF32);
  }
}

inline void model_ops_f32_cases(Report& r) {
  Rng rng(24);
  // Every length to 40 (the 8-lane tails), then long rows and model widths.
  constexpr int32_t kLong[] = {63, 64, 65, 100, 257, 768, 1000, 4096};
  int iter = 0;
  for (int32_t i = 1; i <= 40 + 8; ++i) {
    const int32_t n = i <= 40 ? i : kLong[i - 41];
    for (int v = 0; v < 8; ++v, ++iter) {
      norm_f32_case(r, v % 2 == 1, n, v & 2, v & 4, v == 3 || v == 4, i % 3 == 0, iter, rng);
      activation_f32_case(r, v % 4, n, v >= 4, iter % 3, i % 3 == 1, iter, rng);
    }
  }
}
#endif  // ATTN_WITH_F32

// ---- the whole run --------------------------------------------------------------------------
// Every table's last row must be ref (the oracle the others are run against).
template <typename Fn, size_t N>
void check_table(Report& r, const Kernel<Fn> (&table)[N], const char* op) {
  record(r, op, "ref", std::strcmp(table[N - 1].isa, "ref") == 0, 0.0, "the table's last row is ref");
}

// ---- float <-> integer activations: bit-exact both ways -------------------------------
// Quantize: n floats in in_a of every kind the contract names: random values
// up to 300 grid steps (the clamps), exact ties k + 1/2 on a power-of-two
// scale, +-0, +-infinity, NaN, +-FLT_MAX, subnormals. Dequantize: n random
// integers of T in in_b. Lengths cover every tail of the 8-value steps.
template <typename T, typename QFn, size_t NQ, typename DFn, size_t ND>
void quantize_io_cases_of(Report& r, const Kernel<QFn> (&qt)[NQ], const char* q_op,
                          const Kernel<DFn> (&dt)[ND], const char* d_op, int32_t zp_lo, int32_t zp_hi,
                          uint64_t seed) {
  Rng rng(seed);
  constexpr int32_t kLengths[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 257};
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3.4028235e38f, -3.4028235e38f, 1e-45f};
  int iter = 0;
  for (int32_t n : kLengths) {
    for (int pow2 = 0; pow2 < 2; ++pow2, ++iter) {
      const float scale = pow2 ? std::ldexp(1.0f, rng.uniform(-12, 4)) : std::exp2(8.0f * rng.frand() - 4.0f);
      const int32_t zp = rng.uniform(zp_lo, zp_hi);
      float* x = in_a<float>();
      for (int32_t i = 0; i < n; ++i) {
        const uint32_t kind = rng.next() % 8;
        x[i] = kind == 0   ? specials[rng.next() % 8]
               : kind == 1 ? (static_cast<float>(rng.uniform(-70000, 70000)) + 0.5f) * scale
                           : rng.frand() * 300.0f * scale;
      }
      char what[96];
      std::snprintf(what, sizeof what, "n=%d scale=%g zp=%d", static_cast<int>(n), static_cast<double>(scale),
                    static_cast<int>(zp));
      const FixedOut oq{1, n, n, sizeof(T)};
      each_variant(
          r, qt, q_op, oq,
          [&](QFn fn, uint8_t* out) { fn(x, static_cast<size_t>(n), scale, zp, reinterpret_cast<T*>(out)); },
          iter % 4 == 0, what);
      T* q = in_b<T>();
      for (int32_t i = 0; i < n; ++i) q[i] = static_cast<T>(rng.uniform(zp_lo, zp_hi));
      const FixedOut od{1, n, n, sizeof(float)};
      each_variant(
          r, dt, d_op, od,
          [&](DFn fn, uint8_t* out) {
            fn(q, static_cast<size_t>(n), scale, zp, reinterpret_cast<float*>(out));
          },
          iter % 4 == 0, what);
    }
  }
}

inline void quantize_io_cases(Report& r) {
#if ATTN_WITH_S8
  check_table(r, detail::kQuantizeS8, "quantize_s8");
  check_table(r, detail::kDequantizeS8, "dequantize_s8");
  quantize_io_cases_of<int8_t>(r, detail::kQuantizeS8, "quantize_s8", detail::kDequantizeS8, "dequantize_s8",
                               -128, 127, 71);
#endif
#if ATTN_WITH_S16
  check_table(r, detail::kQuantizeS16, "quantize_s16");
  check_table(r, detail::kDequantizeS16, "dequantize_s16");
  quantize_io_cases_of<int16_t>(r, detail::kQuantizeS16, "quantize_s16", detail::kDequantizeS16,
                                "dequantize_s16", -32768, 32767, 73);
#endif
}

// ---- whole-model kernels: norms (int32 rows -> int8 / int16 / int32) and the
// residual stream's rescales -------------------------------------------------------------
// Norm rows x [M, E] int32 in in_a (row stride xs); weight, bias int32 [E] in
// in_b. Row kinds: random at a magnitude 2^0 .. 2^31 (saturating
// differences from the mean included), constant rows (d = 0), one spike,
// INT32_MIN / INT32_MAX mixes. int32 outputs also run in place (y = x).
struct NormCase {
  int32_t M, E, xs, ys;
  NormKind kind;
  bool bias;
  int32_t shift, zp;
  int64_t eps;
};

inline void fill_norm_rows(int32_t* x, const NormCase& c, Rng& rng) {
  for (int32_t m = 0; m < c.M; ++m) {
    int32_t* row = x + static_cast<size_t>(m) * static_cast<size_t>(c.xs);
    const int32_t kind = rng.uniform(0, 9);
    const int32_t bits = rng.uniform(0, 31);
    const int32_t base = rng.uniform(-(1 << 30), (1 << 30) - 1) >> rng.uniform(0, 30);
    for (int32_t i = 0; i < c.xs; ++i) {
      const int32_t noise =
          bits == 0 ? 0 : static_cast<int32_t>(((rng.next() << 1) ^ rng.next()) >> (32 - bits));
      int32_t v = static_cast<int32_t>(static_cast<uint32_t>(base) + static_cast<uint32_t>(noise));
      if (kind == 0) v = base;                                     // constant
      if (kind == 1) v = i == 3 % c.E ? base ^ 0x40000000 : base;  // one spike
      if (kind == 2) v = rng.next() % 2 ? INT32_MIN + rng.uniform(0, 3) : INT32_MAX - rng.uniform(0, 3);
      if (kind == 3) v = i % 2 ? INT32_MAX : INT32_MIN;
      row[i] = v;
    }
  }
}

template <typename Out, typename Fn, size_t N>
void norm_case(Report& r, const Kernel<Fn> (&table)[N], const char* op, const NormCase& c, bool controls,
               const char* what) {
  const FixedOut o{c.M, c.E, c.ys, sizeof(Out)};
  if (!fits(r, mat_bytes<int32_t>(c.M, c.xs), mat_bytes<int32_t>(2, c.E), o.bytes())) return;
  NormFixed p;
  p.weight = in_b<int32_t>();
  p.bias = c.bias ? in_b<int32_t>() + c.E : nullptr;
  p.eps = c.eps;
  p.shift = c.shift;
  p.output_zero_point = c.zp;
  const ConstMatS32 x{in_a<int32_t>(), c.M, c.E, c.xs};
  each_variant(
      r, table, op, o,
      [&](Fn fn, uint8_t* y) {
        fn(x, c.kind, p, Matrix<Out>{reinterpret_cast<Out*>(y), c.M, c.E, c.ys});
      },
      controls, what);
}

// In place (int32 only): the output buffer starts as a copy of x (row stride ys).
template <typename Fn, size_t N>
void norm_in_place_case(Report& r, const Kernel<Fn> (&table)[N], const char* op, const NormCase& c,
                        const char* what) {
  const FixedOut o{c.M, c.E, c.ys, sizeof(int32_t)};
  if (!fits(r, mat_bytes<int32_t>(c.M, c.xs), mat_bytes<int32_t>(2, c.E), o.bytes())) return;
  NormFixed p;
  p.weight = in_b<int32_t>();
  p.bias = c.bias ? in_b<int32_t>() + c.E : nullptr;
  p.eps = c.eps;
  p.shift = c.shift;
  const auto run = [&](Fn fn, uint8_t* y) {
    auto* yy = reinterpret_cast<int32_t*>(y);
    for (int32_t m = 0; m < c.M; ++m)
      std::memcpy(yy + static_cast<size_t>(m) * static_cast<size_t>(c.ys),
                  in_a<int32_t>() + static_cast<size_t>(m) * static_cast<size_t>(c.xs),
                  static_cast<size_t>(c.E) * sizeof(int32_t));
    const MatS32 io{yy, c.M, c.E, c.ys};
    fn(io, c.kind, p, io);
  };
  each_variant(r, table, op, o, run, false, what);
}

inline void norm_cases(Report& r) {
  Rng rng(53);
  for (int iter = 0; iter < 160; ++iter) {
    NormCase c{};
    const bool board = iter >= 100;  // the models' shapes: E multiple of 4 up to 80, a few rows
    const bool long_rows = !board && iter % 7 == 6;
    c.M = board ? rng.uniform(1, 5) : long_rows ? rng.uniform(1, 16) : rng.pick(kSizes, kNumSizes);
    c.E = board       ? 4 * rng.uniform(1, kBoardCols / 4)
          : long_rows ? rng.uniform(100, 700)
                      : rng.pick(kSizes, kNumSizes);
    c.xs = c.E + rng.uniform(0, 2) * 3;
    c.ys = c.E + rng.uniform(0, 2) * 3;
    c.kind = iter % 2 ? NormKind::kLayerNorm : NormKind::kRmsNorm;
    c.bias = iter % 3 != 0;
    // shifts: the converter's (int8 outputs ~10..20, residual outputs ~-4..4), then any
    c.shift = iter % 4 == 0 ? rng.uniform(-31, 30) : iter % 4 == 1 ? rng.uniform(-4, 4) : rng.uniform(8, 22);
    c.eps = iter % 5 == 0   ? 0
            : iter % 5 == 1 ? (int64_t{rng.uniform(0, (1 << 30) - 1)} << rng.uniform(0, 31))
                            : rng.uniform(0, 1000);
    int32_t* w = in_b<int32_t>();
    const int32_t wbits = rng.uniform(1, 31);
    for (int32_t i = 0; i < c.E; ++i) {
      w[i] = iter % 9 == 0 ? (i % 2 ? INT32_MAX : INT32_MIN + 1)
                           : static_cast<int32_t>(((rng.next() << 1) ^ rng.next()) >> (32 - wbits)) -
                                 (wbits == 31 ? 0 : (1 << (wbits - 1)));
      w[c.E + i] = rng.uniform(-(1 << 29) + 1, (1 << 29) - 1) >> rng.uniform(0, 29);
    }
    fill_norm_rows(in_a<int32_t>(), c, rng);
    char what[160];
    std::snprintf(what, sizeof what, "case %d M=%d E=%d kind=%d bias=%d shift=%d eps=%lld", iter, int(c.M),
                  int(c.E), int(c.kind), int(c.bias), int(c.shift), static_cast<long long>(c.eps));
    const bool controls = iter % 10 == 4;
#if ATTN_WITH_S8
    c.zp = rng.uniform(-128, 127);
    norm_case<int8_t>(r, detail::kNormS8, "norm_s8", c, controls, what);
#endif
#if ATTN_WITH_S16
    c.zp = 0;
    norm_case<int16_t>(r, detail::kNormS16, "norm_s16", c, controls, what);
#endif
    c.zp = 0;
    norm_case<int32_t>(r, detail::kNormS32, "norm_s32", c, controls, what);
    norm_in_place_case(r, detail::kNormS32, "norm_s32", c, what);
  }
}

// Rows and columns of the model-row ops' case `iter` of 120 (M drawn before
// N): from 80 on the boards' shapes (a few rows, up to kBoardCols columns),
// every 7th before that rows 100-700 wide, else the shared sizes.
struct RowsShape {
  int32_t M, N;
};
inline RowsShape model_rows_shape(Rng& rng, int iter) {
  const bool board = iter >= 80;
  const bool long_rows = !board && iter % 7 == 6;
  RowsShape s{};
  s.M = board ? rng.uniform(1, 5) : long_rows ? rng.uniform(1, 16) : rng.pick(kSizes, kNumSizes);
  s.N = board ? rng.uniform(1, kBoardCols) : long_rows ? rng.uniform(100, 700) : rng.pick(kSizes, kNumSizes);
  return s;
}

// Residual rescales: rows x [M, N] int32, activations [M, N] (row strides xs,
// as); add: the output starts as a copy of x. Multipliers [0, 2^31), shifts
// over [-31, 30] and the converter's (to: -20..-8, add: 8..20).
template <typename Act, typename AddFn, size_t NA, typename ToFn, size_t NT>
void residual_cases_of(Report& r, const Kernel<AddFn> (&add)[NA], const char* add_op,
                       const Kernel<ToFn> (&to)[NT], const char* to_op, int32_t zp_lo, int32_t zp_hi,
                       uint64_t seed) {
  Rng rng(seed);
  constexpr int32_t lo = sizeof(Act) == 1 ? -128 : -32768, hi = sizeof(Act) == 1 ? 127 : 32767;
  for (int iter = 0; iter < 120; ++iter) {
    const RowsShape shape = model_rows_shape(rng, iter);
    const int32_t M = shape.M, N = shape.N;
    const int32_t xs = N + rng.uniform(0, 2) * 3, as = N + rng.uniform(0, 2) * 5;
    RescaleFixed rs;
    rs.multiplier = iter % 11 == 0 ? INT32_MAX : iter % 11 == 1 ? 0 : rng.uniform(0, INT32_MAX - 1);
    rs.zero_point = rng.uniform(zp_lo, zp_hi);
    const int32_t* x = in_a<int32_t>();
    Act* a = reinterpret_cast<Act*>(g_in_b);
    if (!fits(r, mat_bytes<int32_t>(M, xs), mat_bytes<Act>(M, as), mat_bytes<int32_t>(M, xs))) continue;
    const int32_t xbits = rng.uniform(1, 32);
    for (int32_t i = 0; i < M * xs; ++i) {
      const uint32_t u = (rng.next() << 1) ^ rng.next();
      in_a<int32_t>()[i] =
          i % 13 == 5 ? (i % 2 ? INT32_MAX : INT32_MIN)
                      : static_cast<int32_t>(xbits == 32 ? u : (u >> (32 - xbits)) - (1u << (xbits - 1)));
    }
    fill(a, M, N, as, rng, lo, hi, iter % 9 == 0);
    char what[128];
    const bool controls = iter % 10 == 4;
    // to an activation
    rs.shift = iter % 3 == 0 ? rng.uniform(-31, 30) : rng.uniform(-20, -8);
    std::snprintf(what, sizeof what, "case %d M=%d N=%d m=%d shift=%d zp=%d", iter, int(M), int(N),
                  int(rs.multiplier), int(rs.shift), int(rs.zero_point));
    each_variant(
        r, to, to_op, FixedOut{M, N, as, sizeof(Act)},
        [&](ToFn fn, uint8_t* y) {
          fn(ConstMatS32{x, M, N, xs}, rs, Matrix<Act>{reinterpret_cast<Act*>(y), M, N, as});
        },
        controls, what);
    // to the residual
    rs.shift = iter % 3 == 0 ? rng.uniform(-31, 30) : rng.uniform(8, 20);
    std::snprintf(what, sizeof what, "case %d M=%d N=%d m=%d shift=%d zp=%d", iter, int(M), int(N),
                  int(rs.multiplier), int(rs.shift), int(rs.zero_point));
    each_variant(
        r, add, add_op, FixedOut{M, N, xs, sizeof(int32_t)},
        [&](AddFn fn, uint8_t* y) {
          auto* yy = reinterpret_cast<int32_t*>(y);
          for (int32_t m = 0; m < M; ++m)
            std::memcpy(yy + static_cast<size_t>(m) * static_cast<size_t>(xs),
                        x + static_cast<size_t>(m) * static_cast<size_t>(xs),
                        static_cast<size_t>(N) * sizeof(int32_t));
          fn(MatS32{yy, M, N, xs}, Matrix<const Act>{a, M, N, as}, rs);
        },
        controls, what);
  }
}

#if ATTN_WITH_S8
// The int8 FFN activations, in place over h1 [M, N] (row stride hs; h3's
// stride us): the plain table and the gate. Rows up to 700 wide every 7th
// case; every 7th table the extremes only. Gate multipliers [0, 2^31) with
// powers of two (exact ties), shifts over [-31, 30] (both sides of 7, the
// int32 bound of the rounded product) and the converter's (-20..-8).
inline void activation_s8_cases(Report& r) {
  Rng rng(71);
  for (int iter = 0; iter < 120; ++iter) {
    const bool extreme_table = iter % 7 == 0;
    const RowsShape shape = model_rows_shape(rng, iter);
    const int32_t M = shape.M, N = shape.N;
    const int32_t hs = N + rng.uniform(0, 2) * 3, us = N + rng.uniform(0, 2) * 5;
    int8_t* h1 = in_a<int8_t>();
    int8_t* up = in_b<int8_t>();
    int8_t* table8 = in_b<int8_t>() + kInBytes - 768;                                 // [256]
    int16_t* table16 = reinterpret_cast<int16_t*>(in_b<uint8_t>() + kInBytes - 512);  // [256]
    if (!fits(r, mat_bytes<int8_t>(M, hs), mat_bytes<int8_t>(M, us) + 768, mat_bytes<int8_t>(M, hs)))
      continue;
    fill(h1, M, N, hs, rng, -128, 127, iter % 9 == 0);
    fill(up, M, N, us, rng, -128, 127, iter % 9 == 1);
    fill(table8, 1, 256, 256, rng, -128, 127, false);
    const bool full16 = iter % 5 == 0;  // else the values of a SiLU-like table
    for (int32_t i = 0; i < 256; ++i) {
      if (extreme_table) {
        table8[i] = static_cast<int8_t>(i % 2 ? 127 : -128);
        table16[i] = static_cast<int16_t>(i % 2 ? 32767 : -32768);
      } else {
        table16[i] = static_cast<int16_t>(full16 ? rng.uniform(-32768, 32767) : rng.uniform(-300, 4000));
      }
    }
    if (iter % 13 == 3) table16[rng.uniform(0, 255)] = -32768;
    const int32_t zp3 = iter % 9 == 2 ? 127 : rng.uniform(-128, 127);
    const int32_t zpg = rng.uniform(-128, 127);
    const int32_t m = iter % 11 == 0   ? INT32_MAX
                      : iter % 11 == 1 ? 0
                      : iter % 4 == 2  ? int32_t{1} << rng.uniform(0, 30)
                                       : rng.uniform(0, INT32_MAX - 1);
    const int32_t sh = iter % 3 == 0   ? rng.uniform(-31, 30)
                       : iter % 3 == 1 ? rng.uniform(-20, -8)
                                       : rng.uniform(5, 9);
    const bool controls = iter % 10 == 4;
    char what[128];
    std::snprintf(what, sizeof what, "case %d M=%d N=%d zp3=%d m=%d shift=%d zp=%d", iter, int(M), int(N),
                  int(zp3), int(m), int(sh), int(zpg));
    const auto copy_h1 = [&](uint8_t* y) {
      for (int32_t i = 0; i < M; ++i)
        std::memcpy(y + static_cast<size_t>(i) * static_cast<size_t>(hs),
                    h1 + static_cast<size_t>(i) * static_cast<size_t>(hs), static_cast<size_t>(N));
      return MatS8{reinterpret_cast<int8_t*>(y), M, N, hs};
    };
    each_variant(
        r, detail::kActTableS8, "act_table_s8", FixedOut{M, N, hs, 1},
        [&](detail::ActTableS8Fn fn, uint8_t* y) { fn(copy_h1(y), table8); }, controls, what);
    each_variant(
        r, detail::kActGateS8, "act_gate_s8", FixedOut{M, N, hs, 1},
        [&](detail::ActGateS8Fn fn, uint8_t* y) {
          fn(copy_h1(y), ConstMatS8{up, M, N, us}, table16, zp3, m, sh, zpg);
        },
        controls, what);
  }
}
#endif

inline void model_row_cases(Report& r) {
  check_table(r, detail::kNormS32, "norm_s32");
#if ATTN_WITH_S8
  check_table(r, detail::kNormS8, "norm_s8");
  check_table(r, detail::kResidualAddS8, "residual_add_s8");
  check_table(r, detail::kResidualToS8, "residual_to_s8");
  residual_cases_of<int8_t>(r, detail::kResidualAddS8, "residual_add_s8", detail::kResidualToS8,
                            "residual_to_s8", -128, 127, 61);
  check_table(r, detail::kActTableS8, "act_table_s8");
  check_table(r, detail::kActGateS8, "act_gate_s8");
  activation_s8_cases(r);
#endif
#if ATTN_WITH_S16
  check_table(r, detail::kNormS16, "norm_s16");
  check_table(r, detail::kResidualAddS16, "residual_add_s16");
  check_table(r, detail::kResidualToS16, "residual_to_s16");
  residual_cases_of<int16_t>(r, detail::kResidualAddS16, "residual_add_s16", detail::kResidualToS16,
                             "residual_to_s16", 0, 0, 67);
#endif
  norm_cases(r);
}

// Runs every case of every op; returns the number of failed checks.
inline int run_all(Report& r) {
#if ATTN_WITH_F32
  check_table(r, detail::kLinearF32, "linear_f32");
  check_table(r, detail::kScoresF32, "scores_f32");
  check_table(r, detail::kSoftmaxRowF32, "softmax_row_f32");
  check_table(r, detail::kWeightedSumF32, "weighted_sum_f32");
  linear_f32_cases(r);
  scores_weighted_sum_f32_cases(r);
  softmax_f32_cases(r);
  check_table(r, detail::kLayerNormF32, "layer_norm_row_f32");
  check_table(r, detail::kRmsNormF32, "rms_norm_row_f32");
  check_table(r, detail::kGeluF32, "gelu_f32");
  check_table(r, detail::kGeluTanhF32, "gelu_tanh_f32");
  check_table(r, detail::kReluF32, "relu_f32");
  check_table(r, detail::kSiluF32, "silu_f32");
  model_ops_f32_cases(r);
#endif
#if ATTN_WITH_S8 || ATTN_WITH_S16
  check_table(r, detail::kSoftmaxRows, "softmax_fused_rows");
  linear_fixed_cases(r);
  scores_fixed_cases(r);
  weighted_sum_fixed_cases(r);
  softmax_rows_cases(r);
#endif
#if ATTN_WITH_S8
  check_table(r, detail::kLinearS8, "linear_s8");
  check_table(r, detail::kScoresS8, "scores_s8");
  check_table(r, detail::kWeightedSumS8, "weighted_sum_s8");
  check_table(r, detail::kWeightedSumVtS8, "weighted_sum_vt_s8");
  check_table(r, detail::kSoftmaxExps, "softmax_exps_row");
  check_table(r, detail::kLinearTS8, "linear_s8_t");
  weighted_sum_vt_cases(r);
  softmax_exps_cases(r);
  check_table(r, detail::kLinearResidualS8, "linear_residual_s8");
  check_table(r, detail::kLogitsS8, "logits_s8");
  check_table(r, detail::kLinearS4S8, "linear_s4_s8");
  check_table(r, detail::kLinearResidualS4S8, "linear_residual_s4_s8");
  check_table(r, detail::kLogitsS4S8, "logits_s4_s8");
#endif
#if ATTN_WITH_S16
  check_table(r, detail::kLinearResidualS16, "linear_residual_s16");
  check_table(r, detail::kLogitsS16, "logits_s16");
  check_table(r, detail::kLinearS4S16, "linear_s4_s16");
  check_table(r, detail::kLinearResidualS4S16, "linear_residual_s4_s16");
  check_table(r, detail::kLogitsS4S16, "logits_s4_s16");
#endif
#if ATTN_WITH_S8 || ATTN_WITH_S16
  model_dot_cases(r);
  s4_cases(r);
#endif
  model_row_cases(r);
  quantize_io_cases(r);
#if ATTN_WITH_S16
  check_table(r, detail::kLinearS16, "linear_s16");
  check_table(r, detail::kScoresS16, "scores_s16");
  check_table(r, detail::kWeightedSumS16, "weighted_sum_s16");
#endif
  return r.failed;
}

}  // namespace variant_tester
}  // namespace attn
