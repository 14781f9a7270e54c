// scores, int8, x86-64 AVX2: scores_s8_ref's arithmetic, bit-exact.
// sum_c (q[t, c] - zq) (k[j, c] - zk) by avx2i::dot_block_s8 (2 query rows by
// 4 keys per block), then the same rounding shift.
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include "internal/avx2_fixed.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

struct Dots {
  ConstMatS8 q, k;
  int32_t zq, zk;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    avx2i::dot_block_s8<MR, NR>(q.row(i), q.stride, zq, k.row(j), k.stride, zk, q.cols, out);
  }
};

}  // namespace

void scores_s8_avx2(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
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
