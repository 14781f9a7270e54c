// linear into the residual, int8 and int16, x86-64 AVX2 (kernels/dot_rows_s8.h: s8 from 4 rows a
// packed-panel madd product, avx2i::gemm_s8; fewer rows and s16 2 x 4 dot blocks):
//   s8:  r = sat32(r + round(acc m 2^(sh - 31))), acc = bias + sum x w (int32)
//   s16: r = sat32(r + round(acc q15(m) 2^(sh - 15))), acc = bias + sum x w (int64)
// ref's sums (int32 mod 2^32, the same products in another order; int64 exact)
// and ref's epilogue: bit-exact with linear_residual_s8_ref / _s16_ref.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/dot_rows_s8.h"
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void linear_residual_s8_avx2(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 r) {
  avx2i::dot_rows(x, w, bias, [&](int32_t m, int32_t n, int32_t acc) {
    int32_t* rr = r.row(m) + n;
    *rr = saturate_s32(int64_t{*rr} + rescale_q31(acc, multiplier[n], shift[n]));
  });
}
#endif

#if ATTN_WITH_S16
void linear_residual_s16_avx2(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                              const int32_t* shift, MatS32 r) {
  avx2i::dot_rows_s16(x, w, bias, [&](int32_t m, int32_t n, int64_t acc) {
    int32_t* rr = r.row(m) + n;
    *rr = saturate_s32(int64_t{*rr} + rescale_q15_s64(acc, multiplier[n], shift[n]));
  });
}
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
