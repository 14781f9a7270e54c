// dispatch.cpp: the one place that picks a kernel variant, at compile time,
// from the ISA flags in internal/arch.h. -DATTN_KERNELS=ref forces the
// portable scalar kernels everywhere.
#include "attn/config.h"
#include "internal/arch.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {

#if ATTN_WITH_F32  // an s8/s16-only build (ATTN_DTYPES) compiles no f32 kernel
void linear_f32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) { linear_f32_ref(x, w, bias, y); }
void scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) { scores_f32_ref(q, k, scale, s); }
void softmax_row_f32(float* row, int32_t n) { softmax_row_f32_ref(row, n); }
void weighted_sum_f32(ConstMatF32 p, ConstMatF32 v, MatF32 o) { weighted_sum_f32_ref(p, v, o); }

void rope_f32(MatF32 x, int32_t head_dim, int32_t pos0, float base) { rope_f32_ref(x, head_dim, pos0, base); }

const char* kernel_set_f32() { return "ref"; }
#endif  // ATTN_WITH_F32

}  // namespace detail
}  // namespace attn
