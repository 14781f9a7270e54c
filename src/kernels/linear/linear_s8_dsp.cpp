// linear, int8, Cortex-M DSP extension: y = requant(x W^T + b), four rows of
// x at a time: the rows are expanded once to SMLAD pairs (minus the input zero
// point) in a stack buffer, and each weight word is unpacked once (SXTB16)
// for the four rows (dsp::dot4_expanded, 17 instructions per 16 MACs). The
// last M % 4 rows, and inputs wider than dsp::kExpandMaxK, go through
// linear_s8_ref (small code: the flash budget of an s8 image is 12 KiB). Same
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

// acc[r] += sum_{K4 <= k < K} (a[r][k] - za) b[k]: the last K % 4 columns.
// Out of line: keeps rows4's registers for its hot loop.
__attribute__((noinline)) void tail4(const int8_t* const* a, const int8_t* b, int32_t K4, int32_t K,
                                     int32_t za, int32_t* acc) {
  for (int32_t k = K4; k < K; ++k) {
    for (size_t r = 0; r < 4; ++r) acc[r] += (int32_t{a[r][k]} - za) * int32_t{b[k]};
  }
}

// Rows [m, m + 4) of y, x expanded once (K <= dsp::kExpandMaxK), output clamp
// [-128, 127].
void rows4(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y, int32_t m) {
  const int32_t K = x.cols;
  const int32_t K4 = K & ~3;
  int32_t buf[2 * dsp::kExpandMaxK];  // [K / 4][4 rows][even, odd] int16 pairs
  const int8_t* a[4] = {x.row(m), x.row(m + 1), x.row(m + 2), x.row(m + 3)};  // [K]
  dsp::expand4(a, K4, p.input_zero_point, buf);
  // Locals: the int8 stores below could alias p as far as the compiler knows.
  const int32_t zo = p.output_zero_point;
  const int32_t* const mult = p.multiplier;  // [N]
  const int32_t* const shift = p.shift;      // [N]
  const ptrdiff_t ys = y.stride;
  int8_t* yo = y.row(m);  // y[m .. m + 3, n]
  for (int32_t n = 0; n < w.rows; ++n, ++yo) {
    const int8_t* b = w.row(n);  // [K]
    const int32_t b0 = bias != nullptr ? bias[n] : 0;
    int32_t acc[4] = {b0, b0, b0, b0};
    dsp::dot4_expanded(buf, b, K4, acc);
    if (K4 < K) tail4(a, b, K4, K, p.input_zero_point, acc);
    const fast::Requant rq(mult[n], shift[n]);
    yo[0] = static_cast<int8_t>(dsp::ssat8(zo + rq(acc[0])));
    yo[ys] = static_cast<int8_t>(dsp::ssat8(zo + rq(acc[1])));
    yo[2 * ys] = static_cast<int8_t>(dsp::ssat8(zo + rq(acc[2])));
    yo[3 * ys] = static_cast<int8_t>(dsp::ssat8(zo + rq(acc[3])));
  }
}

}  // namespace

void linear_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  // Wider than the stack buffer, or a narrower output clamp: the portable kernel.
  if (x.cols > dsp::kExpandMaxK || p.act_min != -128 || p.act_max != 127) {
    linear_s8_ref(x, w, bias, p, y);
    return;
  }
  const int32_t m4 = x.rows & ~3;
  for (int32_t m = 0; m < m4; m += 4) rows4(x, w, bias, p, y, m);
  if (m4 < x.rows) linear_s8_ref(x.rows_slice(m4, x.rows - m4), w, bias, p, y.rows_slice(m4, y.rows - m4));
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
