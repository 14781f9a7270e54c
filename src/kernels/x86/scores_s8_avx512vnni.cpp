// scores, int8, x86-64 AVX-512 VNNI: scores_s8_ref's arithmetic, bit-exact.
// avx512i::gemm_s8 gives dot[t, j] = sum_c q[t, c] k[j, c] (keys packed per
// call, 8 query rows x 32 keys per block); the zero points expand as
//   sum_c (q - zq)(k - zk) = dot - zk * qsum[t] - zq * ksum[j] + d * zq * zk
// in wrapping int32 (equal to ref's sum, which |.| < 2^30 bounds), then the
// same rounding shift, 16 keys per vector. d past avx512i::kMaxK: AVX2.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx512_fixed.h"

namespace attn {
namespace detail {
namespace {

struct ScoresEpi {
  static constexpr bool kRawSums = true;  // out() gets dot + 128 qsum
  MatS32 s;
  int32_t zq, zk;
  __m512i vzq, bias;  // bias = half + d * zq * zk (wrapping)
  __m128i shift;
  int32_t j0 = 0, n = 0;
  __m512i col[2] = {};  // bias - zq * ksum per half

  void panel(int32_t j, int32_t cols, const __m512i* ksum) {
    col[0] = _mm512_sub_epi32(bias, _mm512_mullo_epi32(vzq, ksum[0]));
    col[1] = _mm512_sub_epi32(bias, _mm512_mullo_epi32(vzq, ksum[1]));
    j0 = j;
    n = cols;
  }
  // raw = dot + 128 qsum: dot - zk qsum = raw - (128 + zk) qsum.
  void out(int32_t t, int h, __m512i raw, int32_t qsum) const {
    const int32_t qc = static_cast<int32_t>(static_cast<uint32_t>(zk + 128) * static_cast<uint32_t>(qsum));
    __m512i acc = _mm512_add_epi32(_mm512_sub_epi32(raw, _mm512_set1_epi32(qc)), col[h]);
    acc = _mm512_sra_epi32(acc, shift);
    const int32_t c = n - 16 * h;
    _mm512_mask_storeu_epi32(s.row(t) + j0 + 16 * h, avx512i::mask16(c > 16 ? 16 : c), acc);
  }
};

}  // namespace

void scores_s8_avx512vnni(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  if (q.cols > avx512i::kMaxK || q.cols <= 0) {
    scores_s8_avx2(q, zq, k, zk, score_shift, s);
    return;
  }
  const uint32_t half = score_shift > 0 ? uint32_t{1} << (score_shift - 1) : 0u;
  const uint32_t b =
      half + static_cast<uint32_t>(q.cols) * static_cast<uint32_t>(zq) * static_cast<uint32_t>(zk);
  ScoresEpi epi{s,
                zq,
                zk,
                _mm512_set1_epi32(zq),
                _mm512_set1_epi32(static_cast<int32_t>(b)),
                _mm_cvtsi32_si128(score_shift)};
  avx512i::gemm_s8(q.data, q.stride, q.rows, k.data, k.stride, k.rows, q.cols, epi);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
