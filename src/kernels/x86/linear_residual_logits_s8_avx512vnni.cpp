// The int32-output linears of int8 models (W2 into the residual, the LM
// head's logits), x86-64 AVX-512 VNNI: avx512i::gemm_s8's sums (vpdpbusd,
// w packed per call into 32-channel panels; kernels/x86/avx512_fixed.h) and
// ref's epilogue (RescaleInto, kernels/kernels_model_fixed.h) on 8 int64 lanes:
//   acc = bias[n] + dot[m, n]                 (wrapping int32: ref's sum)
//   v   = round(acc m 2^(sh - 31))            (64-bit product, ties away from 0)
//   y   = sat32([r +] v)
// bit-exact with the ref. Fewer than kMinRows rows (a decode step, the head's
// last row) or K past avx512i::kMaxK: the AVX2 rows (their dot products read
// w as stored).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/avx512_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMinRows = 4;  // fewer rows: the AVX2 rows

// round(x / 2^e), ties away from zero, per int64 lane (|x| < 2^62, e in
// [1, 62]); half = 2^(e - 1): fp::rounding_divide_by_pot_s64.
inline __m512i round_shift64(__m512i x, __m512i e, __m512i half) {
  const __mmask8 neg = _mm512_cmplt_epi64_mask(x, _mm512_setzero_si512());
  const __m512i q = _mm512_srlv_epi64(_mm512_add_epi64(_mm512_abs_epi64(x), half), e);
  return _mm512_mask_sub_epi64(q, neg, _mm512_setzero_si512(), q);
}

template <Out32 kOut>
struct Out32Epi {
  static constexpr bool kRawSums = false;
  const int32_t* bias;
  const int32_t* multiplier;
  const int32_t* shift;
  MatS32 y;
  // This panel's channels [j0, j0 + n): per 16-lane half, the bias, and per
  // 8-lane quarter the multiplier, the exponent 31 - shift and 2^(30 - shift).
  int32_t j0 = 0, n = 0;
  __m512i b[2] = {};
  __m512i mult[4] = {}, expo[4] = {}, half[4] = {};

  void panel(int32_t j, int32_t cols, const __m512i* /*wsum*/) {
    j0 = j;
    n = cols;
    const __m512i one = _mm512_set1_epi64(1), e31 = _mm512_set1_epi64(31);
    for (int h = 0; h < 2; ++h) {
      const int32_t c = cols - 16 * h;
      const __mmask16 k = avx512i::mask16(c <= 0 ? 0 : c > 16 ? 16 : c);
      const int32_t off = j + 16 * h;
      b[h] = bias != nullptr ? _mm512_maskz_loadu_epi32(k, bias + off) : _mm512_setzero_si512();
      // Lanes past the last channel: multiplier 0, shift 0 (never stored).
      const __m512i m = _mm512_maskz_loadu_epi32(k, multiplier + off);
      const __m512i s = _mm512_maskz_loadu_epi32(k, shift + off);
      for (int q = 0; q < 2; ++q) {
        const __m256i mq = q == 0 ? _mm512_castsi512_si256(m) : _mm512_extracti64x4_epi64(m, 1);
        const __m256i sq = q == 0 ? _mm512_castsi512_si256(s) : _mm512_extracti64x4_epi64(s, 1);
        mult[2 * h + q] = _mm512_cvtepi32_epi64(mq);
        expo[2 * h + q] = _mm512_sub_epi64(e31, _mm512_cvtepi32_epi64(sq));
        half[2 * h + q] = _mm512_sllv_epi64(one, _mm512_sub_epi64(expo[2 * h + q], one));
      }
    }
  }
  void out(int32_t m, int h, __m512i dot, int32_t /*xsum*/) const {
    const __m512i acc = _mm512_add_epi32(b[h], dot);
    const int32_t c = n - 16 * h;
    int32_t* dst = y.row(m) + j0 + 16 * h;
    const __m512i lo = _mm512_set1_epi64(INT32_MIN), hi = _mm512_set1_epi64(INT32_MAX);
    for (int q = 0; q < 2; ++q) {
      const int32_t cq = c - 8 * q;  // channels in this quarter
      if (cq <= 0) break;
      const __mmask8 k = static_cast<__mmask8>(cq >= 8 ? 0xFF : (1u << cq) - 1u);
      const __m512i a =
          _mm512_cvtepi32_epi64(q == 0 ? _mm512_castsi512_si256(acc) : _mm512_extracti64x4_epi64(acc, 1));
      __m512i v = round_shift64(_mm512_mul_epi32(a, mult[2 * h + q]), expo[2 * h + q], half[2 * h + q]);
      if constexpr (kOut == Out32::kAddToResidual) {
        v = _mm512_add_epi64(v, _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, dst + 8 * q)));
      }
      v = _mm512_min_epi64(_mm512_max_epi64(v, lo), hi);
      _mm256_mask_storeu_epi32(dst + 8 * q, k, _mm512_cvtepi64_epi32(v));
    }
  }
};

template <Out32 kOut>
void out32_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                const int32_t* shift, MatS32 y) {
  Out32Epi<kOut> epi{bias, multiplier, shift, y};
  avx512i::gemm_s8(x.data, x.stride, x.rows, w.data, w.stride, w.rows, x.cols, epi);
}

bool packed_path(ConstMatS8 x) { return x.rows >= kMinRows && x.cols >= 1 && x.cols <= avx512i::kMaxK; }

}  // namespace

void linear_residual_s8_avx512vnni(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                                   const int32_t* shift, MatS32 r) {
  if (!packed_path(x)) return Out32Rows<Isa::kAvx2>::linear_residual_s8(x, w, bias, multiplier, shift, r);
  out32_rows<Out32::kAddToResidual>(x, w, bias, multiplier, shift, r);
}

void logits_s8_avx512vnni(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                          const int32_t* shift, MatS32 y) {
  if (!packed_path(x)) return Out32Rows<Isa::kAvx2>::logits_s8(x, w, bias, multiplier, shift, y);
  out32_rows<Out32::kStore>(x, w, bias, multiplier, shift, y);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
