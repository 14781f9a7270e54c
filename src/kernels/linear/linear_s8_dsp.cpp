// linear, int8, Cortex-M DSP extension: y = requant(x W^T + b) in 2x2 blocks
// (two rows of x against two rows of W), four MACs per SMLAD pair. Same
// int32 sums and the same requantization as linear_s8_ref: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dsp_s8.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

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
      const int32_t out = p.output_zero_point + fp::multiply_by_quantized_multiplier(
                                                    acc[r * C + c], p.multiplier[n + c], p.shift[n + c]);
      yr[n + c] = static_cast<int8_t>(fp::clamp_i32(out, p.act_min, p.act_max));
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
  if (p.input_zero_point == 0) {  // the forward folds it into the bias
    run<false>(x, w, bias, p, y);
  } else {
    run<true>(x, w, bias, p, y);
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
