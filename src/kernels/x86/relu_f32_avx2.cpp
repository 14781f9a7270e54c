// ReLU, float32, x86-64 AVX2, in place, times up when given. NaN stays NaN:
// maxps returns its second operand when either is NaN.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/activation_f32.h"
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {

void relu_f32_avx2(float* x, const float* up, int32_t n) {
  act::map_times<avx2::MapOps>(x, up, n, [](__m256 v) { return _mm256_max_ps(_mm256_setzero_ps(), v); });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
