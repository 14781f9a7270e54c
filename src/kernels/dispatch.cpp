// dispatch.cpp: the one place that picks a kernel variant, at compile time,
// from the ISA flags in internal/arch.h. -DATTN_KERNELS=ref forces the
// portable scalar kernels everywhere.
#include "attn/config.h"
#include "internal/arch.h"
#include "internal/kernels_f32.h"
#include "internal/kernels_fixed.h"

// The float32 set: linear, scores, softmax_row, weighted_sum (Helium: M55 with the MVE float extension).
#if ATTN_HAVE_AVX2
#define ATTN_F32_ISA avx2
#define ATTN_F32_ISA_NAME "avx2"
#elif ATTN_HAVE_NEON64
#define ATTN_F32_ISA neon64
#define ATTN_F32_ISA_NAME "neon64"
#elif ATTN_HAVE_NEON32
#define ATTN_F32_ISA neon32
#define ATTN_F32_ISA_NAME "neon32"
#elif ATTN_HAVE_MVE_FP
#define ATTN_F32_ISA mve
#define ATTN_F32_ISA_NAME "mve"
#else
#define ATTN_F32_ISA ref
#define ATTN_F32_ISA_NAME "ref"
#endif
#define ATTN_CAT2(a, b) a##b
#define ATTN_CAT(a, b) ATTN_CAT2(a, b)
#define ATTN_F32(op) ATTN_CAT(op##_f32_, ATTN_F32_ISA)  // e.g. ATTN_F32(linear) -> linear_f32_avx2

// The fixed-point set: linear, scores, weighted_sum (s8 and s16).
#if ATTN_HAVE_AVX2
#define ATTN_FIXED_ISA avx2
#define ATTN_FIXED_ISA_NAME "avx2"
#elif ATTN_HAVE_NEON64
#define ATTN_FIXED_ISA neon64
#define ATTN_FIXED_ISA_NAME (ATTN_HAVE_DOTPROD ? "neon64-dotprod" : "neon64")
#elif ATTN_HAVE_NEON32
#define ATTN_FIXED_ISA neon32
#define ATTN_FIXED_ISA_NAME "neon32"
#else
#define ATTN_FIXED_ISA ref
#define ATTN_FIXED_ISA_NAME "ref"
#endif
#define ATTN_FIXED(op) ATTN_CAT(op##_, ATTN_FIXED_ISA)  // e.g. ATTN_FIXED(linear_s8) -> linear_s8_avx2

namespace attn {
namespace detail {

#if ATTN_WITH_F32  // an s8/s16-only build (ATTN_DTYPES) compiles no f32 kernel
void linear_f32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  ATTN_F32(linear)(x, w, bias, y);
}
void scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) { ATTN_F32(scores)(q, k, scale, s); }
void softmax_row_f32(float* row, int32_t n) { ATTN_F32(softmax_row)(row, n); }
void weighted_sum_f32(ConstMatF32 p, ConstMatF32 v, MatF32 o) { ATTN_F32(weighted_sum)(p, v, o); }

void rope_f32(MatF32 x, int32_t head_dim, int32_t pos0, float base) { rope_f32_ref(x, head_dim, pos0, base); }

// Weights packed once: only the avx2 linear multiplies by W^T panels; the
// other sets read W as stored, so they need no panels and ignore them.
#if ATTN_HAVE_AVX2
uint64_t linear_panels_floats_f32(int32_t N, int32_t K) { return panels_floats_f32_avx2(N, K); }
void pack_panels_f32(ConstMatF32 w, float* panels) { pack_panels_f32_avx2(w, panels); }
void linear_packed_f32(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias, MatF32 y) {
  if (panels == nullptr) return linear_f32_avx2(x, w, bias, y);
  linear_panels_f32_avx2(x, w, panels, bias, y);
}
#else
uint64_t linear_panels_floats_f32(int32_t, int32_t) { return 0; }
void pack_panels_f32(ConstMatF32, float*) {}
void linear_packed_f32(ConstMatF32 x, ConstMatF32 w, const float*, const float* bias, MatF32 y) {
  ATTN_F32(linear)(x, w, bias, y);
}
#endif

const char* kernel_set_f32() { return ATTN_F32_ISA_NAME; }
#endif  // ATTN_WITH_F32

// Fixed point: DSP (SMLAD) s8 kernels on M4/M7/M33, Helium (MVE) s8 kernels
// on M55, AVX-512 VNNI s8 kernels on x86-64 hosts that have it, else the ATTN_FIXED_ISA set (AVX2, NEON64,
// NEON32 or ref). Each dtype under its ATTN_WITH_<DT> guard. softmax_s8 (the stand-alone op, not on the
// forwards' path) stays ref.
#if ATTN_WITH_S8
#if ATTN_HAVE_DSP
void linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  linear_s8_dsp(x, w, bias, p, y);
}
void scores_s8(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  scores_s8_dsp(q, zq, k, zk, score_shift, s);
}
void weighted_sum_s8(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o) {
  weighted_sum_s8_dsp(p, v, zv, m, sh, zo, o);
}
#elif ATTN_HAVE_AVX512VNNI
void linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  linear_s8_avx512vnni(x, w, bias, p, y);
}
void scores_s8(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  scores_s8_avx512vnni(q, zq, k, zk, score_shift, s);
}
void weighted_sum_s8(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o) {
  weighted_sum_s8_avx512vnni(p, v, zv, m, sh, zo, o);
}
#elif ATTN_HAVE_MVE
void linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  linear_s8_mve(x, w, bias, p, y);
}
void scores_s8(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  scores_s8_mve(q, zq, k, zk, score_shift, s);
}
void weighted_sum_s8(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o) {
  weighted_sum_s8_mve(p, v, zv, m, sh, zo, o);
}
#else
void linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  ATTN_FIXED(linear_s8)(x, w, bias, p, y);
}
void scores_s8(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  ATTN_FIXED(scores_s8)(q, zq, k, zk, score_shift, s);
}
void weighted_sum_s8(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o) {
  ATTN_FIXED(weighted_sum_s8)(p, v, zv, m, sh, zo, o);
}
#endif
void softmax_s8(ConstMatS8 x, const SoftmaxS8Params& p, MatS8 y) { softmax_s8_ref(x, p, y); }
void weighted_sum_vt_s8(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv, int32_t m,
                        int32_t sh, int32_t zo, MatS8 o) {
#if ATTN_HAVE_DSP
  weighted_sum_vt_s8_dsp(e, recip, vt, zv, m, sh, zo, o);
#else
  weighted_sum_vt_s8_ref(e, recip, vt, zv, m, sh, zo, o);
#endif
}
uint32_t softmax_exps_row(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
#if ATTN_HAVE_DSP
  return softmax_exps_row_dsp(row, begin, end, n, sm);
#else
  return softmax_exps_row_ref(row, begin, end, n, sm);
#endif
}
// Rotary embedding: hd/2 pairs per head and row, a small share of a forward; ref everywhere.
void rope_s8(MatS8 x, int32_t head_dim, int32_t zp, int32_t pos0, const RopeTable& t) {
  rope_s8_ref(x, head_dim, zp, pos0, t);
}
#endif  // ATTN_WITH_S8
#if ATTN_WITH_S16
void linear_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  ATTN_FIXED(linear_s16)(x, w, bias, p, y);
}
void scores_s16(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  ATTN_FIXED(scores_s16)(q, k, score_shift, s);
}
void weighted_sum_s16(ConstMatS16 p, ConstMatS16 v, int32_t m, int32_t sh, MatS16 o) {
  ATTN_FIXED(weighted_sum_s16)(p, v, m, sh, o);
}
void rope_s16(MatS16 x, int32_t head_dim, int32_t pos0, const RopeTable& t) {
  rope_s16_ref(x, head_dim, pos0, t);
}
#endif  // ATTN_WITH_S16
const char* kernel_set_fixed() {
  return ATTN_HAVE_DSP          ? "dsp"
         : ATTN_HAVE_MVE        ? "mve"
         : ATTN_HAVE_AVX512VNNI ? "avx512vnni"
                                : ATTN_FIXED_ISA_NAME;
}

#if ATTN_WITH_S8 || ATTN_WITH_S16
void softmax_fused_row(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
#if ATTN_HAVE_AVX512VNNI
  softmax_fused_row_avx512(row, begin, end, n, sm);
#elif ATTN_HAVE_AVX2
  softmax_fused_row_avx2(row, begin, end, n, sm);
#elif ATTN_HAVE_NEON64 || ATTN_HAVE_NEON32
  softmax_fused_row_neon(row, begin, end, n, sm);
#elif ATTN_HAVE_MVE
  softmax_fused_row_mve(row, begin, end, n, sm);
#elif ATTN_HAVE_DSP
  softmax_fused_row_dsp(row, begin, end, n, sm);
#else
  softmax_fused_row_ref(row, begin, end, n, sm);
#endif
}
void softmax_fused_rows(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin, const int32_t* end,
                        int32_t n, const FusedSoftmax& sm) {
#if ATTN_HAVE_AVX512VNNI
  softmax_fused_rows_avx512(s, stride, rows, begin, end, n, sm);
#elif ATTN_HAVE_AVX2
  softmax_fused_rows_avx2(s, stride, rows, begin, end, n, sm);
#elif ATTN_HAVE_MVE
  softmax_fused_rows_mve(s, stride, rows, begin, end, n, sm);
#else
  for (int32_t r = 0; r < rows; ++r)
    softmax_fused_row(s + static_cast<ptrdiff_t>(r) * stride, begin[r], end[r], n, sm);
#endif
}
#endif

}  // namespace detail
}  // namespace attn
