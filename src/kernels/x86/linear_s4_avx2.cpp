// The linears over int4 weights, x86-64 AVX2 (kernels/s4_rows.h). Each
// weight row is read once per block of up to 4 input rows, 32 values (16
// bytes) at a time, and unpacked in registers:
//   int8 x:  the nibbles n XOR 8 are the unsigned u = w + 8 in [0, 15], so one
//            maddubs(u, x) per 32 values (pairs <= 2 * 15 * 128, no
//            saturation); sum u x - 8 sum x = sum w x, the sums of x taken once
//            per block of rows. Wrapping int32, as ref's int32 sums.
//   int16 x: the nibbles sign-extended to int16, madd(w, x) into int32 lanes,
//            added into int64 every kS16Block values: exact, as ref's int64.
// K's tail (< 32 values) is ref's loop. Bit-exact with the ref.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include <immintrin.h>

#include "kernels/s4_rows.h"
#include "kernels/stream.h"
#include "kernels/x86/avx2_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr size_t kS4Rows = 2;        // input rows per pass over the weights
constexpr int32_t kS16Block = 4096;  // int16 x: values per int32 lane run (<= 2^8 x 2^19 per lane)

// 32 int4 weights (16 bytes at p) as u = w + 8, unsigned bytes in k order.
inline __m256i unpack_u4(const uint8_t* p) {
  const __m128i b = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_set1_epi8(-0x78));
  const __m128i m = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(b, m);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}
// 16 int4 weights (8 bytes at p), sign-extended to int16 in k order.
inline __m256i unpack_s4_16(const uint8_t* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_and_si128(b, m);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  const __m128i u = _mm_unpacklo_epi8(lo, hi);                     // nibbles, k order
  const __m128i s = _mm_sub_epi8(_mm_xor_si128(u, eight), eight);  // two's complement
  return _mm256_cvtepi8_epi16(s);
}
inline int32_t hsum_epi32(__m256i a) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}
inline int64_t hsum_epi32_to_64(__m256i a) {
  const __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(a));
  const __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(a, 1));
  return avx2i::hsum_epi64(_mm256_add_epi64(lo, hi));
}
// The scalar tail: sum over k in [k0, K) of x w.
template <typename Act>
inline int32_t tail_dot(const Act* x, const uint8_t* w, int32_t k0, int32_t K) {
  int32_t acc = 0;
  for (int32_t k = k0; k < K; k += 2)
    acc += int32_t{x[k]} * s4_low(w[k / 2]) + int32_t{x[k + 1]} * s4_high(w[k / 2]);
  return acc;
}

// Rows [i0, i0 + MR) of x (xr, corr: 8 sum_{k < Kv} x of each) against
// channels [c0, c0 + NC): every unpacked weight vector serves MR rows, and
// the NC sums of a row are reduced together (hsum4_epi32 for 4).
template <size_t MR, size_t NC, class Out>
void block_s8(const int8_t* const* xr, const int32_t* corr, int32_t i0, ConstMatS4 w, int32_t c0, int32_t Kv,
              int32_t K, const int32_t* bias, Out& out) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[MR][NC];
  for (size_t i = 0; i < MR; ++i)
    for (size_t j = 0; j < NC; ++j) acc[i][j] = _mm256_setzero_si256();
  for (int32_t k = 0; k < Kv; k += 32) {
    __m256i u[NC];
    for (size_t j = 0; j < NC; ++j) u[j] = unpack_u4(w.row(c0 + static_cast<int32_t>(j)) + k / 2);
    for (size_t i = 0; i < MR; ++i) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr[i] + k));
      for (size_t j = 0; j < NC; ++j)
        acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(_mm256_maddubs_epi16(u[j], xv), ones));
    }
  }
  for (size_t i = 0; i < MR; ++i) {
    alignas(16) int32_t sums[4];
    if constexpr (NC == 4) {
      _mm_store_si128(reinterpret_cast<__m128i*>(sums),
                      avx2i::hsum4_epi32(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    } else {
      for (size_t j = 0; j < NC; ++j) sums[j] = hsum_epi32(acc[i][j]);
    }
    for (size_t j = 0; j < NC; ++j) {
      const int32_t c = c0 + static_cast<int32_t>(j);
      int32_t a = fp::wrap_add(sums[j], -corr[i]);
      a = fp::wrap_add(a, tail_dot(xr[i], w.row(c), Kv, K));
      out(i0 + static_cast<int32_t>(i), c, fp::wrap_add(bias != nullptr ? bias[c] : 0, a));
    }
  }
}

template <size_t MR, class Out>
void rows_s8(ConstMatS8 x, int32_t i0, ConstMatS4 w, const int32_t* bias, Out& out) {
  const int32_t K = x.cols, Kv = K / 32 * 32;
  const int8_t* xr[MR];
  int32_t corr[MR];  // 8 sum_{k < Kv} x
  for (size_t i = 0; i < MR; ++i) {
    xr[i] = x.row(i0 + static_cast<int32_t>(i));
    int32_t s = 0;
    for (int32_t k = 0; k < Kv; ++k) s += xr[i][k];
    corr[i] = static_cast<int32_t>(static_cast<uint32_t>(s) * 8u);
  }
  // A decode step over a matrix from memory reads one weight row at a time (kernels/stream.h).
  const bool stream = stream_weights(static_cast<int32_t>(MR), w.rows, K / 2, 1);
  int32_t c = 0;
  if (!stream)
    for (; c + 4 <= w.rows; c += 4) block_s8<MR, 4>(xr, corr, i0, w, c, Kv, K, bias, out);
  for (; c < w.rows; ++c) block_s8<MR, 1>(xr, corr, i0, w, c, Kv, K, bias, out);
}

// Many rows (a prefill): 4 channels at a time unpacked once into u = w + 8
// bytes on the stack (K <= kPanelMaxK), then every row of x against them:
// loads from L1 instead of an unpack per pair of rows.
constexpr int32_t kPanelMinRows = 8;
constexpr int32_t kPanelMaxK = 4096;

template <class Out>
void panel_rows_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out& out) {
  const int32_t K = x.cols, Kv = K / 32 * 32;
  alignas(32) uint8_t u[4][kPanelMaxK];
  const __m256i ones = _mm256_set1_epi16(1);
  for (int32_t c0 = 0; c0 < w.rows; c0 += 4) {
    const int32_t nc = w.rows - c0 < 4 ? w.rows - c0 : 4;
    for (int32_t j = 0; j < nc; ++j)
      for (int32_t k = 0; k < Kv; k += 32)
        _mm256_store_si256(reinterpret_cast<__m256i*>(&u[j][k]), unpack_u4(w.row(c0 + j) + k / 2));
    for (int32_t m = 0; m < x.rows; ++m) {
      const int8_t* xr = x.row(m);
      int32_t s = 0;
      for (int32_t k = 0; k < Kv; ++k) s += xr[k];
      const int32_t corr = static_cast<int32_t>(static_cast<uint32_t>(s) * 8u);
      __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256()};
      for (int32_t k = 0; k < Kv; k += 32) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr + k));
        for (int32_t j = 0; j < nc; ++j) {
          const __m256i uj = _mm256_load_si256(reinterpret_cast<const __m256i*>(&u[j][k]));
          acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(uj, xv), ones));
        }
      }
      alignas(16) int32_t sums[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(sums), avx2i::hsum4_epi32(acc[0], acc[1], acc[2], acc[3]));
      for (int32_t j = 0; j < nc; ++j) {
        const int32_t c = c0 + j;
        int32_t a = fp::wrap_add(sums[j], -corr);
        a = fp::wrap_add(a, tail_dot(xr, w.row(c), Kv, K));
        out(m, c, fp::wrap_add(bias != nullptr ? bias[c] : 0, a));
      }
    }
  }
}

template <size_t MR, class Out>
void rows_s16(ConstMatS16 x, int32_t i0, ConstMatS4 w, const int64_t* bias, Out& out) {
  const int32_t K = x.cols, Kv = K / 16 * 16;
  const int16_t* xr[MR];
  for (size_t i = 0; i < MR; ++i) xr[i] = x.row(i0 + static_cast<int32_t>(i));
  for (int32_t c = 0; c < w.rows; ++c) {
    const uint8_t* wr = w.row(c);
    int64_t sum[MR];
    for (size_t i = 0; i < MR; ++i) sum[i] = bias != nullptr ? bias[c] : 0;
    for (int32_t k0 = 0; k0 < Kv; k0 += kS16Block) {
      const int32_t k1 = Kv - k0 < kS16Block ? Kv : k0 + kS16Block;
      __m256i acc[MR];
      for (size_t i = 0; i < MR; ++i) acc[i] = _mm256_setzero_si256();
      for (int32_t k = k0; k < k1; k += 16) {
        const __m256i wv = unpack_s4_16(wr + k / 2);
        for (size_t i = 0; i < MR; ++i)
          acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(wv, avx2i::load16_s16(xr[i] + k)));
      }
      for (size_t i = 0; i < MR; ++i) sum[i] += hsum_epi32_to_64(acc[i]);
    }
    for (size_t i = 0; i < MR; ++i) out(i0 + static_cast<int32_t>(i), c, sum[i] + tail_dot(xr[i], wr, Kv, K));
  }
}

}  // namespace

template <>
struct S4DotOps<Isa::kAvx2> {
  template <class Out>
  static void rows(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, Out out) {
    if (x.rows >= kPanelMinRows && x.cols <= kPanelMaxK) return panel_rows_s8(x, w, bias, out);
    int32_t i = 0;
    for (; i + int32_t{kS4Rows} <= x.rows; i += int32_t{kS4Rows}) rows_s8<kS4Rows>(x, i, w, bias, out);
    for (; i < x.rows; ++i) rows_s8<1>(x, i, w, bias, out);
  }
  template <class Out>
  static void rows(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, Out out) {
    int32_t i = 0;
    for (; i + int32_t{kS4Rows} <= x.rows; i += int32_t{kS4Rows}) rows_s16<kS4Rows>(x, i, w, bias, out);
    for (; i < x.rows; ++i) rows_s16<1>(x, i, w, bias, out);
  }
};
template struct S4Rows<Isa::kAvx2>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
