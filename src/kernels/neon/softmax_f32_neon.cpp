// softmax over one row, float32, NEON (AArch64 Advanced SIMD with FMA, and ARMv7-A), in place: softmax_row of
// kernels/neon/neon_f32.h (vector exp; -INFINITY gives exactly 0; a fully masked
// row gives all 0).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void softmax_row_f32_neon(float* row, int32_t n) { neon::softmax_row(row, n); }

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
