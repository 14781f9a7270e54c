// The int32-output linears of attn/transformer_fixed.h, portable scalar:
// - linear_residual: the FFN's W2 adds its accumulators straight to the int32
//   residual rows, with no int8 / int16 output grid in between (measured: an
//   int8 W2 output clipped the test inputs beyond the calibrated range and
//   cost 3.5 dB on a post-norm model, s8 and s16 alike);
// - logits: the LM head, int8 / int16 hidden rows times int8 weights [V, E],
//   per-row rescale to the int32 logit grid.
//   s8:  acc = bias[c] + sum x w (int32), y = sat32([r +] round(acc m 2^(sh - 31)))
//   s16: acc = bias[c] + sum x w (int64), y = sat32([r +] round(acc q15(m) 2^(sh - 15)))
// The sums are dot_rows_ref, the epilogue RescaleInto (kernels/kernels_model_fixed.h).
#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {

template <>
struct Out32DotOps<Isa::kRef> {
  template <typename Act, typename Acc, class Epilogue>
  static void rows(Matrix<const Act> x, ConstMatS8 w, const Acc* bias, Epilogue out) {
    dot_rows_ref(x, w, bias, out);
  }
};
template struct Out32Rows<Isa::kRef>;

}  // namespace detail
}  // namespace attn
