// linear, int8, Cortex-M DSP extension: y = requant(x W^T + b) in 2x2 blocks
// (two rows of x against two rows of W), four MACs per SMLAD pair. Same
// int32 sums and the same requantization as linear_s8_ref: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dsp_s8.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"
#include "internal/requantize.h"

namespace attn {
namespace detail {
namespace {

template <int R, int C, bool kZx>
void block(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y, int32_t m,
           int32_t n) {
  constexpr size_t kR = static_cast<size_t>(R), kC = static_cast<size_t>(C);
  const int8_t* a[kR];  // x rows [K]
  const int8_t* b[kC];  // w rows [K]
  int32_t acc[kR * kC];
  for (int r = 0; r < R; ++r) a[r] = x.row(m + r);
  for (int c = 0; c < C; ++c) b[c] = w.row(n + c);
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r * C + c] = bias != nullptr ? bias[n + c] : 0;
  }
  dsp::dot_block<R, C, kZx, false>(a, b, x.cols, p.input_zero_point, 0, acc);
  for (int r = 0; r < R; ++r) {
    int8_t* yr = y.row(m + r);  // [N]
    for (int c = 0; c < C; ++c) {
      const int32_t out =
          p.output_zero_point + fast::requantize(acc[r * C + c], p.multiplier[n + c], p.shift[n + c]);
      yr[n + c] = static_cast<int8_t>(fp::clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

// Rows [m, m + 4) of y, x expanded once (K <= dsp::kExpandMaxK).
void rows4(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y, int32_t m) {
  const int32_t K = x.cols;
  const int32_t K4 = K & ~3;
  int32_t buf[2 * dsp::kExpandMaxK];  // [K / 4][4 rows][even, odd] int16 pairs
  const int8_t* a[4] = {x.row(m), x.row(m + 1), x.row(m + 2), x.row(m + 3)};  // [K]
  dsp::expand4(a, K4, p.input_zero_point, buf);
  for (int32_t n = 0; n < w.rows; ++n) {
    const int8_t* b = w.row(n);  // [K]
    const int32_t b0 = bias != nullptr ? bias[n] : 0;
    int32_t acc[4] = {b0, b0, b0, b0};
    dsp::dot4_expanded(buf, b, K4, acc);
    for (int32_t k = K4; k < K; ++k) {
      for (size_t r = 0; r < 4; ++r) acc[r] += (int32_t{a[r][k]} - p.input_zero_point) * int32_t{b[k]};
    }
    for (size_t r = 0; r < 4; ++r) {
      const int32_t out = p.output_zero_point + fast::requantize(acc[r], p.multiplier[n], p.shift[n]);
      y.row(m + static_cast<int32_t>(r))[n] = static_cast<int8_t>(fp::clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

template <bool kZx>
void run(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  int32_t n = 0;
  for (; n + 2 <= w.rows; n += 2) {
    int32_t m = 0;
    for (; m + 2 <= x.rows; m += 2) block<2, 2, kZx>(x, w, bias, p, y, m, n);
    if (m < x.rows) block<1, 2, kZx>(x, w, bias, p, y, m, n);
  }
  if (n < w.rows) {
    int32_t m = 0;
    for (; m + 2 <= x.rows; m += 2) block<2, 1, kZx>(x, w, bias, p, y, m, n);
    if (m < x.rows) block<1, 1, kZx>(x, w, bias, p, y, m, n);
  }
}

}  // namespace

void linear_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  if (x.cols <= dsp::kExpandMaxK) {  // four rows at a time, the rest below
    const int32_t m4 = x.rows & ~3;
    for (int32_t m = 0; m < m4; m += 4) rows4(x, w, bias, p, y, m);
    x = x.rows_slice(m4, x.rows - m4);
    y = y.rows_slice(m4, y.rows - m4);
  }
  if (p.input_zero_point == 0) {  // the forward folds it into the bias
    run<false>(x, w, bias, p, y);
  } else {
    run<true>(x, w, bias, p, y);
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
