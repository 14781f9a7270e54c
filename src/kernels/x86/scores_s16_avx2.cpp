// scores, int16, x86-64 AVX2: scores_s16_ref's arithmetic, bit-exact.
// sum_c q[t, c] k[j, c] in int64 by avx2i::dot_block_s16x16, then the same
// rounding shift.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

struct Dots {
  ConstMatS16 q, k;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int64_t (*out)[4]) const {
    avx2i::dot_block_s16x16<MR, NR>(q.row(i), q.stride, k.row(j), k.stride, q.cols, out);
  }
};

}  // namespace

void scores_s16_avx2(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  const int64_t half = score_shift > 0 ? int64_t{1} << (score_shift - 1) : 0;
  const Dots dots{q, k};
  for_blocks<2, int64_t>(q.rows, k.rows, dots, [&](int32_t i0, int32_t j0, int64_t(*out)[4], int mr, int nr) {
    for (int i = 0; i < mr; ++i) {
      int32_t* sr = s.row(i0 + i) + j0;  // [nr]
      for (int j = 0; j < nr; ++j) sr[j] = static_cast<int32_t>((out[i][j] + half) >> score_shift);
    }
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
