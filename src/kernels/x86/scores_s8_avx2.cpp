// scores, int8, x86-64 AVX2: scores_s8_ref's arithmetic, bit-exact.
// sum_c (q[t, c] - zq) (k[j, c] - zk), then the same rounding shift. From
// kMinRows query rows on: avx2i::gemm_s8 (the keys packed per call into
// panels of 16, a madd outer product of 6 query rows by 16 keys, 16 scores
// of a row per epilogue call). Fewer rows (decode) or a head dim past
// avx2i::kMaxK: avx2i::dot_block_s8 (2 query rows by 4 keys per block).
#include "kernels/arch.h"

#include <cstring>

#if ATTN_HAVE_AVX2
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMinRows = 4;  // fewer query rows: the dot-product path

struct Dots {
  ConstMatS8 q, k;
  int32_t zq, zk;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    avx2i::dot_block_s8<MR, NR>(q.row(i), q.stride, zq, k.row(j), k.stride, zk, q.cols, out);
  }
};

// The packed path's epilogue: (dot + half) >> shift (wrapping add and
// arithmetic shift, as ref's int32 ones), the row's n scores of the panel.
struct ScoresEpi {
  MatS32 s;
  __m256i half;
  __m128i shift;
  int32_t j0 = 0, n = 0;

  void panel(int32_t j, int32_t cols) {
    j0 = j;
    n = cols;
  }
  void out(int32_t m, const __m256i (&acc)[2]) const {
    int32_t* sr = s.row(m) + j0;  // [n]
    __m256i v[2];
    for (int h = 0; h < 2; ++h) v[h] = _mm256_sra_epi32(_mm256_add_epi32(acc[h], half), shift);
    if (n == avx2i::kPanel) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sr), v[0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sr + 8), v[1]);
    } else {
      alignas(32) int32_t t[avx2i::kPanel];
      _mm256_store_si256(reinterpret_cast<__m256i*>(t), v[0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(t + 8), v[1]);
      std::memcpy(sr, t, sizeof(int32_t) * static_cast<size_t>(n));
    }
  }
};

}  // namespace

void scores_s8_avx2(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  if (q.rows >= kMinRows && q.cols > 0 && q.cols <= avx2i::kMaxK) {
    ScoresEpi epi{s, _mm256_set1_epi32(half), _mm_cvtsi32_si128(score_shift)};
    avx2i::gemm_s8(q.data, q.stride, q.rows, zq, k.data, k.stride, k.rows, zk, q.cols, epi);
    return;
  }
  const Dots dots{q, k, zq, zk};
  for_blocks<2, int32_t>(q.rows, k.rows, dots, [&](int32_t i0, int32_t j0, int32_t(*out)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i) {
      int32_t* sr = s.row(i0 + i) + j0;  // [nr]
      for (int j = 0; j < nr; ++j) sr[j] = (out[i][j] + half) >> score_shift;
    }
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
