// SiLU, float32, x86-64 AVX2/FMA, in place, times up when given (Llama's
// gate): x sigmoid(x), with the sigmoid of kernels/x86/avx2_f32.h.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {

void silu_f32_avx2(float* x, const float* up, int32_t n) {
  avx2::map_times(x, up, n, [](__m256 v) { return _mm256_mul_ps(v, avx2::sigmoid(v)); });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
