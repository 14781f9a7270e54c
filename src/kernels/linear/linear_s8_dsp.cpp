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

// Rows [m, m + 4) of y, x expanded once (K <= dsp::kExpandMaxK).
void rows4(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y, int32_t m) {
  const int32_t K = x.cols;
  const int32_t K4 = K & ~3;
  int32_t buf[2 * dsp::kExpandMaxK];  // [K / 4][4 rows][even, odd] int16 pairs
  const int8_t* a[4] = {x.row(m), x.row(m + 1), x.row(m + 2), x.row(m + 3)};  // [K]
  int8_t* out[4] = {y.row(m), y.row(m + 1), y.row(m + 2), y.row(m + 3)};      // [N]
  dsp::expand4(a, K4, p.input_zero_point, buf);
  // Locals: the int8 stores below could alias p as far as the compiler knows.
  const int32_t zo = p.output_zero_point, lo = p.act_min, hi = p.act_max;
  const int32_t* const mult = p.multiplier;  // [N]
  const int32_t* const shift = p.shift;      // [N]
  for (int32_t n = 0; n < w.rows; ++n) {
    const int8_t* b = w.row(n);  // [K]
    const int32_t b0 = bias != nullptr ? bias[n] : 0;
    int32_t acc[4] = {b0, b0, b0, b0};
    dsp::dot4_expanded(buf, b, K4, acc);
    for (int32_t k = K4; k < K; ++k) {
      for (size_t r = 0; r < 4; ++r) acc[r] += (int32_t{a[r][k]} - p.input_zero_point) * int32_t{b[k]};
    }
    const fast::Requant rq(mult[n], shift[n]);
    for (size_t r = 0; r < 4; ++r) out[r][n] = static_cast<int8_t>(fp::clamp_i32(zo + rq(acc[r]), lo, hi));
  }
}

}  // namespace

void linear_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  if (x.cols > dsp::kExpandMaxK) {  // wider than the stack buffer: the portable kernel
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
