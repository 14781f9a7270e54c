// The int32-output linears (W2 into the residual, the LM head's logits), int8
// and int16, x86-64 AVX2 (kernels/x86/dot_rows_avx2.h: s8 from 4 rows a
// packed-panel madd product, avx2i::gemm_s8; fewer rows and s16 2 x 4 dot blocks):
//   s8:  y = sat32([r +] round(acc m 2^(sh - 31))), acc = bias + sum x w (int32)
//   s16: y = sat32([r +] round(acc q15(m) 2^(sh - 15))), acc = bias + sum x w (int64)
// ref's sums (int32 mod 2^32, the same products in another order; int64 exact)
// and ref's epilogue (RescaleInto, kernels/model_fixed_rows.h): bit-exact with the ref.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/model_fixed_rows.h"
#include "kernels/x86/dot_rows_avx2.h"

namespace attn {
namespace detail {

template struct Out32Rows<Isa::kAvx2>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
