// weighted sum, int8 values, Q0.15 probabilities, x86-64 AVX-512 VNNI:
// weighted_sum_s8_ref's arithmetic, bit-exact. 12 rows x 32 value columns
// per block: keys j, j + 1 are widened to int16 (minus zv, |.| <= 255) and
// interleaved, and vpdpwssd adds p[t, j] v'[j, c] + p[t, j + 1] v'[j + 1, c]
// (exact int16 products) into int32 lanes, wrapping as ref's int32 sum
// (whose comment bounds it); an odd last key pairs with a zero row. Then the
// 16-lane requantization avx512i::mbqm, clamp and masked int8 stores.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx512_fixed.h"

namespace attn {
namespace detail {
namespace {

struct Ctx {
  ConstMatS16 p;
  ConstMatS8 v;
  MatS8 o;
  __m512i zv, zo, lo, hi;
  avx512i::Requant rq;
};

// Value columns [c0, c0 + nc) of key j, as int16 minus zv (nc <= 32).
inline __m512i load_v(const Ctx& x, int32_t j, int32_t c0, __mmask32 km) {
  return _mm512_sub_epi16(_mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(km, x.v.row(j) + c0)), x.zv);
}

inline int32_t prob_pair(const int16_t* pr, int32_t j, bool both) {
  int32_t w = 0;
  std::memcpy(&w, pr + j, both ? 4 : 2);  // little endian: p[j] low, p[j + 1] (or 0) high
  return w;
}

template <int MR>
void block(const Ctx& x, int32_t t0, int32_t c0, int32_t nc) {
  const __mmask32 km = static_cast<__mmask32>(nc >= 32 ? ~0u : (1u << nc) - 1u);
  const int32_t S = x.p.cols;
  __m512i lo[size_t{MR}],
      hi[size_t{MR}];  // value columns [0..3, 8..11, 16..19, 24..27] and [4..7, 12..15, ...]
  ATTN_UNROLL for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm512_setzero_si512();
  const int16_t* pr[size_t{MR}];
  ATTN_UNROLL for (int r = 0; r < MR; ++r) pr[r] = x.p.row(t0 + r);
  int32_t j = 0;
  for (; j + 2 <= S; j += 2) {
    const __m512i v0 = load_v(x, j, c0, km), v1 = load_v(x, j + 1, c0, km);
    const __m512i il = _mm512_unpacklo_epi16(v0, v1), ih = _mm512_unpackhi_epi16(v0, v1);
    ATTN_UNROLL for (int r = 0; r < MR; ++r) {
      const __m512i pp = _mm512_set1_epi32(prob_pair(pr[r], j, true));
      lo[r] = avx512i::dpwssd(lo[r], il, pp);
      hi[r] = avx512i::dpwssd(hi[r], ih, pp);
    }
  }
  if (j < S) {
    const __m512i v0 = load_v(x, j, c0, km), v1 = _mm512_setzero_si512();
    const __m512i il = _mm512_unpacklo_epi16(v0, v1), ih = _mm512_unpackhi_epi16(v0, v1);
    ATTN_UNROLL for (int r = 0; r < MR; ++r) {
      const __m512i pp = _mm512_set1_epi32(prob_pair(pr[r], j, false));
      lo[r] = avx512i::dpwssd(lo[r], il, pp);
      hi[r] = avx512i::dpwssd(hi[r], ih, pp);
    }
  }
  const __m512i first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);     // columns 0..15
  const __m512i second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);  // columns 16..31
  ATTN_UNROLL for (int r = 0; r < MR; ++r) {
    int8_t* orow = x.o.row(t0 + r) + c0;  // [nc]
    for (int h = 0; h < 2 && 16 * h < nc; ++h) {
      const __m512i acc = _mm512_permutex2var_epi64(lo[r], h == 0 ? first : second, hi[r]);
      const __m512i q = _mm512_add_epi32(x.zo, avx512i::mbqm(acc, x.rq));
      avx512i::store16_s8(orow + 16 * h, q, x.lo, x.hi, nc - 16 * h > 16 ? 16 : nc - 16 * h);
    }
  }
}

}  // namespace

void weighted_sum_s8_avx512vnni(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  const Ctx x{p,
              v,
              o,
              _mm512_set1_epi16(static_cast<int16_t>(zv)),
              _mm512_set1_epi32(zo),
              _mm512_set1_epi32(-128),
              _mm512_set1_epi32(127),
              avx512i::Requant::of(_mm512_set1_epi32(m), _mm512_set1_epi32(sh))};
  for (int32_t c0 = 0; c0 < v.cols; c0 += 32) {
    const int32_t nc = v.cols - c0 < 32 ? v.cols - c0 : 32;
    int32_t t = 0;
    for (; t + 12 <= p.rows; t += 12) block<12>(x, t, c0, nc);
    for (; t + 4 <= p.rows; t += 4) block<4>(x, t, c0, nc);
    for (; t < p.rows; ++t) block<1>(x, t, c0, nc);
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
