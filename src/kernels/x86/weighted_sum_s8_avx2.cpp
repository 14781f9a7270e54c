// weighted sum, int8 values, Q0.15 probabilities, x86-64 AVX2:
// weighted_sum_s8_ref's arithmetic, bit-exact (int32 sums: ref bounds them,
// see its comment). Per group of 16 value columns:
// - S <= avx2i::kMaxK keys: the group's values are packed once per call into
//   a panel of key pairs (v'[2g][c], v'[2g + 1][c]) as int16 (gemm_s8's
//   layout), and avx2i::panel_rows_s8 runs 6 probability rows at a time: each
//   row's pair (p[2g], p[2g + 1]) is one 32-bit broadcast, one madd per 8
//   columns. An odd last key is added in the epilogue (p[S - 1] v'[S - 1]).
//   Before, every block of 4 rows widened and interleaved the values again and
//   built each probability pair from two scalar loads: P V took about 2x the
//   time per MAC of the projections in `attn run` s8 at L = 128.
// - more keys, or fewer than kMinRows rows (decode, where each packed pair
//   would be read once): avx2i::pv_block, 4 rows x 16 columns per block.
// Value columns past the last multiple of 16: the ref kernel.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMinRows = 4;  // fewer rows: pv_block (packing would not pay for itself)

template <int MR>
void rows_block(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o,
                int32_t t0) {
  const __m256i vzv = _mm256_set1_epi16(static_cast<int16_t>(zv));
  int32_t out[size_t{MR}][16];
  const avx2i::Requant rq = avx2i::Requant::of(_mm256_set1_epi32(m), _mm256_set1_epi32(sh));
  const __m256i vzo = _mm256_set1_epi32(zo), lo = _mm256_set1_epi32(-128), hi = _mm256_set1_epi32(127);
  int32_t c0 = 0;
  for (; c0 + 16 <= v.cols; c0 += 16) {
    const auto load = [&](int32_t j) { return avx2i::load16_s8(v.row(j) + c0, vzv); };
    avx2i::pv_block<MR>(p.row(t0), p.stride, p.cols, load, out);
    for (int i = 0; i < MR; ++i) {
      int8_t* orow = o.row(t0 + i) + c0;  // [16]
      for (int h = 0; h < 2; ++h) {
        const __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out[i] + 8 * h));
        avx2i::store8_s8(orow + 8 * h, _mm256_add_epi32(vzo, avx2i::mbqm(acc, rq)), lo, hi);
      }
    }
  }
  if (c0 < v.cols) {
    weighted_sum_s8_ref(p.rows_slice(t0, MR), v.cols_slice(c0, v.cols - c0), zv, Requant{m, sh, zo},
                        o.rows_slice(t0, MR).cols_slice(c0, v.cols - c0));
  }
}

// panel_rows_s8's epilogue: the odd last key's term, requantization, store.
struct PvEpi {
  ConstMatS16 p;
  MatS8 o;
  int32_t c0;
  bool odd;          // S odd: key S - 1 is not in the panel
  __m256i vlast[2];  // v'[S - 1][c0 + 8h + lane] as int32
  avx2i::Requant rq;
  __m256i zo, lo, hi;

  void out(int32_t t, const __m256i (&acc)[2]) const {
    int8_t* orow = o.row(t) + c0;  // [16]
    const __m256i pl = _mm256_set1_epi32(odd ? p.row(t)[p.cols - 1] : 0);
    for (int h = 0; h < 2; ++h) {
      const __m256i sum = _mm256_add_epi32(acc[h], _mm256_mullo_epi32(pl, vlast[h]));
      avx2i::store8_s8(orow + 8 * h, _mm256_add_epi32(zo, avx2i::mbqm(sum, rq)), lo, hi);
    }
  }
};

// Packs v' = v - zv of columns [c0, c0 + 16) and keys [0, 2G) into panel
// [G][16]: panel[g][c] = int16 pair (v'[2g][c0 + c], v'[2g + 1][c0 + c]).
void pack_values(ConstMatS8 v, int32_t c0, int32_t G, __m256i vzv, int32_t* panel) {
  for (int32_t g = 0; g < G; ++g) {
    const __m256i v0 = avx2i::load16_s8(v.row(2 * g) + c0, vzv);
    const __m256i v1 = avx2i::load16_s8(v.row(2 * g + 1) + c0, vzv);
    const __m256i il = _mm256_unpacklo_epi16(v0, v1);  // columns 0..3 | 8..11
    const __m256i ih = _mm256_unpackhi_epi16(v0, v1);  // columns 4..7 | 12..15
    __m256i* dst = reinterpret_cast<__m256i*>(panel + static_cast<ptrdiff_t>(g) * avx2i::kPanel);
    _mm256_store_si256(dst, _mm256_permute2x128_si256(il, ih, 0x20));
    _mm256_store_si256(dst + 1, _mm256_permute2x128_si256(il, ih, 0x31));
  }
}

// The panel path (see above), S in [1, avx2i::kMaxK], columns [0, 16 * (cols / 16)).
void weighted_sum_panels(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                         MatS8 o) {
  alignas(32) int32_t panel[avx2i::kMaxK / 2 * avx2i::kPanel];  // [S / 2][16] key pairs: up to 32 KiB
  const int32_t S = p.cols, G = S / 2;
  const __m256i vzv = _mm256_set1_epi16(static_cast<int16_t>(zv));
  PvEpi epi{p,
            o,
            0,
            S % 2 != 0,
            {},
            avx2i::Requant::of(_mm256_set1_epi32(m), _mm256_set1_epi32(sh)),
            _mm256_set1_epi32(zo),
            _mm256_set1_epi32(-128),
            _mm256_set1_epi32(127)};
  for (int32_t c0 = 0; c0 + 16 <= v.cols; c0 += 16) {
    pack_values(v, c0, G, vzv, panel);
    epi.c0 = c0;
    const __m256i last = epi.odd ? avx2i::load16_s8(v.row(S - 1) + c0, vzv) : _mm256_setzero_si256();
    epi.vlast[0] = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(last));
    epi.vlast[1] = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(last, 1));
    for (int32_t t = 0; t < p.rows; t += avx2i::kRows) {
      const int32_t mr = p.rows - t < avx2i::kRows ? p.rows - t : avx2i::kRows;
      avx2i::panel_rows_s8_n(mr, p.row(t), p.stride, G, panel, t, epi);
    }
  }
}

}  // namespace

void weighted_sum_s8_avx2(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  if (p.rows >= kMinRows && p.cols <= avx2i::kMaxK && v.cols >= 16) {
    weighted_sum_panels(p, v, zv, m, sh, zo, o);
    if (v.cols % 16 != 0) {
      const int32_t c0 = v.cols / 16 * 16;
      weighted_sum_s8_ref(p, v.cols_slice(c0, v.cols - c0), zv, Requant{m, sh, zo},
                          o.cols_slice(c0, v.cols - c0));
    }
    return;
  }
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) rows_block<4>(p, v, zv, m, sh, zo, o, t);
  for (; t < p.rows; ++t) rows_block<1>(p, v, zv, m, sh, zo, o, t);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
