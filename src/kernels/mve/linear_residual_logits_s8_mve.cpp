// The int32-output linears (W2 into the residual, the LM head's logits), int8,
// Cortex-M55 Helium (MVE, kernels/mve/dot_rows_s8_mve.h: four channels per pass, 16
// MACs per VMLADAVA): y = sat32([r +] round(acc m 2^(sh - 31))) with
// acc = bias + sum x w, the int32 sums of the ref and its epilogue
// (RescaleInto, kernels/model_fixed_rows.h): bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include "kernels/model_fixed_rows.h"
#include "kernels/mve/dot_rows_s8_mve.h"

namespace attn {
namespace detail {

template <>
struct Out32DotOps<Isa::kMve> {
  template <class Epilogue>
  static void rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Epilogue out) {
    mve::dot_rows(x, w, bias, out);
  }
  template <class Epilogue>  // int16: not in the table (the ref's row runs)
  static void rows(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, Epilogue out) {
    dot_rows_ref(x, w, bias, out);
  }
};
template struct Out32Rows<Isa::kMve>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
