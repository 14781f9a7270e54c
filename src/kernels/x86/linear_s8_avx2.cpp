// linear, int8, x86-64 AVX2: linear_s8_ref's arithmetic, bit-exact.
// From kMinRows rows of x on: avx2i::gemm_s8 (w packed per call into panels
// of 16 channels, a madd outer product of 6 rows by 16 channels) gives
//   acc[m, n] = bias[n] + sum_k (x[m, k] - zx) w[n, k]   (ref's int32 sum, mod 2^32)
// 16 channels of a row at a time, then the 8-lane requantization avx2i::mbqm. Fewer rows (decode) or K past
// avx2i::kMaxK: row-by-row dot products (avx2i::dot_block_s8, 2 rows of x
// by 4 rows of w per block, or by 1 where a decode step streams w from
// memory: kernels/stream.h), where packing would not pay for itself.
#include "kernels/arch.h"

#include <cstring>

#if ATTN_HAVE_AVX2
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMinRows = 4;  // fewer rows: the dot-product path

struct Dots {
  ConstMatS8 x, w;
  int32_t zx;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    if (zx != 0) {
      avx2i::dot_block_s8<MR, NR, true, false>(x.row(i), x.stride, zx, w.row(j), w.stride, 0, x.cols, out);
    } else {  // the forwards fold the input zero point into the bias
      avx2i::dot_block_s8<MR, NR, false, false>(x.row(i), x.stride, 0, w.row(j), w.stride, 0, x.cols, out);
    }
  }
};

void linear_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  const Dots dots{x, w, p.input_zero_point};
  const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
  const __m256i zo = _mm256_set1_epi32(p.output_zero_point);
  for_weight_blocks<2, int32_t>(
      x.rows, w.rows, x.cols, dots, [&](int32_t i0, int32_t j0, int32_t(*out)[4], int mr, int nr) {
        if (mr == 2 && nr == 4) {  // 2 rows x 4 channels: one 8-lane requantization
          const auto dup4 = [](const int32_t* v) {
            return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v)));
          };
          const avx2i::Requant rq = avx2i::Requant::of(dup4(p.multiplier + j0), dup4(p.shift + j0));
          __m256i acc =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out[0]));  // out[0][0..4), out[1][0..4)
          if (bias != nullptr) acc = _mm256_add_epi32(acc, dup4(bias + j0));
          const __m256i v = _mm256_add_epi32(zo, avx2i::mbqm(acc, rq.mult, rq.left, rq.right));
          alignas(8) int8_t b[8];
          avx2i::store8_s8(b, v, lo, hi);
          std::memcpy(y.row(i0) + j0, b, 4);
          std::memcpy(y.row(i0 + 1) + j0, b + 4, 4);
          return;
        }
        for (int i = 0; i < mr; ++i) {
          int8_t* yr = y.row(i0 + i) + j0;  // [nr]
          for (int j = 0; j < nr; ++j) {
            const int32_t n = j0 + j;
            const int32_t acc = fp::wrap_add(bias != nullptr ? bias[n] : 0, out[i][j]);
            const int32_t v =
                p.output_zero_point + fp::multiply_by_quantized_multiplier(acc, p.multiplier[n], p.shift[n]);
            yr[j] = static_cast<int8_t>(fp::clamp_i32(v, p.act_min, p.act_max));
          }
        }
      });
}

// The packed path's epilogue: per panel of channels [j0, j0 + n), bias and
// requantization lanes (two halves of 8, zero past n); per row, acc + bias,
// the 8-lane requantization and the store of the row's n outputs.
struct LinearEpi {
  const int32_t* b;
  const LinearS8Params& p;
  MatS8 y;
  __m256i zo, lo, hi;
  int32_t j0 = 0, n = 0;
  __m256i bias[2] = {};
  avx2i::Requant rq[2] = {};

  LinearEpi(const int32_t* b_, const LinearS8Params& p_, MatS8 y_)
      : b(b_),
        p(p_),
        y(y_),
        zo(_mm256_set1_epi32(p_.output_zero_point)),
        lo(_mm256_set1_epi32(p_.act_min)),
        hi(_mm256_set1_epi32(p_.act_max)) {}

  void panel(int32_t j, int32_t cols) {
    j0 = j;
    n = cols;
    const auto ld = [](const int32_t* v) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)); };
    if (n == avx2i::kPanel) {  // whole panel: the lanes straight from the arrays
      for (int h = 0; h < 2; ++h) {
        bias[h] = b != nullptr ? ld(b + j0 + 8 * h) : _mm256_setzero_si256();
        rq[h] = avx2i::Requant::of(ld(p.multiplier + j0 + 8 * h), ld(p.shift + j0 + 8 * h));
      }
      return;
    }
    alignas(32) int32_t t[3][avx2i::kPanel] = {};  // bias, multiplier, shift of the panel's channels
    for (int32_t c = 0; c < n; ++c) {
      t[0][c] = b != nullptr ? b[j0 + c] : 0;
      t[1][c] = p.multiplier[j0 + c];
      t[2][c] = p.shift[j0 + c];
    }
    for (int h = 0; h < 2; ++h) {
      bias[h] = ld(t[0] + 8 * h);
      rq[h] = avx2i::Requant::of(ld(t[1] + 8 * h), ld(t[2] + 8 * h));
    }
  }

  __m128i quant(__m256i dot, int h) const {  // 8 outputs, clamped, as int16 (exact)
    const __m256i acc = _mm256_add_epi32(bias[h], dot);
    __m256i v = _mm256_add_epi32(zo, avx2i::mbqm(acc, rq[h]));
    v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
    return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  }
  void out(int32_t m, const __m256i (&acc)[2]) const {
    int8_t* yr = y.row(m) + j0;  // [n]
    const __m128i v = _mm_packs_epi16(quant(acc[0], 0), quant(acc[1], 1));
    if (n == avx2i::kPanel) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yr), v);
    } else {
      alignas(16) int8_t t[avx2i::kPanel];
      _mm_store_si128(reinterpret_cast<__m128i*>(t), v);
      std::memcpy(yr, t, static_cast<size_t>(n));
    }
  }
};

}  // namespace

void linear_s8_avx2(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  if (x.rows < kMinRows || x.cols > avx2i::kMaxK || x.cols <= 0) {
    linear_rows(x, w, bias, p, y);
    return;
  }
  LinearEpi epi(bias, p, y);
  avx2i::gemm_s8(x.data, x.stride, x.rows, p.input_zero_point, w.data, w.stride, w.rows, 0, x.cols, epi);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
