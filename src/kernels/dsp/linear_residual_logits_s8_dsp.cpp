// The int32-output linears (W2 into the residual, the LM head's logits), int8,
// Cortex-M DSP extension (SMLAD, kernels/dsp/dot_rows_s8_dsp.h: four rows expanded
// once, 15 instructions per 16 MACs; one row: two channels per pass):
// y = sat32([r +] round(acc m 2^(sh - 31))) with acc = bias + sum x w, the
// int32 sums of the ref and its epilogue (RescaleInto, kernels/model_fixed_rows.h):
// bit-exact. K > dsp::kDotRowsMaxK: the ref's sums.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dot_rows_s8_dsp.h"
#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {

template <>
struct Out32DotOps<Isa::kDsp> {
  template <typename Act, typename Acc, class Epilogue>  // int16: not in the table (the ref's row runs)
  static void rows(Matrix<const Act> x, ConstMatS8 w, const Acc* bias, Epilogue out) {
    if constexpr (sizeof(Act) == 1) {
      if (x.cols <= dsp::kDotRowsMaxK) return dsp::dot_rows(x, w, bias, out);
    }
    dot_rows_ref(x, w, bias, out);
  }
};
template struct Out32Rows<Isa::kDsp>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
