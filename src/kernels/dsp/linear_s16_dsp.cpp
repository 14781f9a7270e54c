// linear, int16 x int8, Cortex-M DSP extension (SMLAD): linear_s16_ref's
// arithmetic, bit-exact.
//
// Four rows of x at a time are expanded once into SMLAD pairs in the order
// of a weight word's SXTB16 halves: (x[k], x[k + 2]) and (x[k + 1], x[k + 3])
// (PKHBT / PKHTB of two loaded words), so that the int8 kernels' step runs
// unchanged (dsp::dot4_expanded: per four k one weight load, two SXTB16 and
// eight SMLADs for the four rows; 15 instructions per 16 MACs).
//
// Exactness: |x w| <= 2^15 * 2^7 = 2^22, so the int32 sum of a chunk of at
// most kChunk = 128 columns stays within 2^29 (SMLAD adds modulo 2^32, but
// never gets near it); the chunks' sums and the bias add in int64, which is
// ref's one int64 sum. Then ref's requantization (fp::requantize_s64 with the
// Q0.15-reduced multiplier) and clamp.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dsp_s8.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

constexpr int32_t kChunk = 128;  // columns per int32 partial sum and per expansion (1 KiB of stack)
constexpr int32_t kBlock = 16;   // channels per block of int64 sums when K > kChunk

// buf[(k / 4) * 8 + 2 r + {0, 1}] = (a_r[k], a_r[k + 2]), (a_r[k + 1], a_r[k + 3])
// as int16 pairs, for r < 4 and k < K4 (a multiple of 4).
void expand4(const int16_t* const* a, int32_t K4, int32_t* buf) {
  for (int32_t k = 0; k < K4; k += 4, buf += 8) {
    for (size_t r = 0; r < 4; ++r) {
      const uint32_t lo = static_cast<uint32_t>(dsp::load2x16(a[r] + k));      // (x[k], x[k + 1])
      const uint32_t hi = static_cast<uint32_t>(dsp::load2x16(a[r] + k + 2));  // (x[k + 2], x[k + 3])
      buf[2 * r] = static_cast<int32_t>((lo & 0xFFFFu) | (hi << 16));
      buf[2 * r + 1] = static_cast<int32_t>((hi & 0xFFFF0000u) | (lo >> 16));
    }
  }
}

// acc[r] = sum_{k < n} a_r[k] b[k] for the four rows, their first n & ~3
// columns expanded in buf (n <= kChunk).
void chunk_sums(const int32_t* buf, const int16_t* const* a, const int8_t* b, int32_t n, int32_t* acc) {
  const int32_t n4 = n & ~3;
  acc[0] = acc[1] = acc[2] = acc[3] = 0;
  dsp::dot4_expanded(buf, b, n4, acc);
  for (int32_t k = n4; k < n; ++k) {
    for (size_t r = 0; r < 4; ++r) acc[r] += int32_t{a[r][k]} * int32_t{b[k]};
  }
}

// y[m + r, n] for r < R from the int64 sums (bias included).
inline void store(const int64_t* acc, int32_t R, const LinearS16Params& p, int32_t n, MatS16 y, int32_t m) {
  const int32_t rm = fp::reduce_multiplier_q15(p.multiplier[n]);
  const int32_t sh = p.shift[n];
  for (int32_t r = 0; r < R; ++r) {
    const int32_t out = fp::requantize_s64(acc[r], rm, sh);
    y.row(m + r)[n] = static_cast<int16_t>(fp::clamp_i32(out, p.act_min, p.act_max));
  }
}

// Rows [m, m + R) of y, R <= 4 (the rows past R repeat the last one: same
// sums, not stored).
void rows4(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y, int32_t m,
           int32_t R) {
  const int32_t K = x.cols;
  const int16_t* a[4];  // [K]
  for (int32_t r = 0; r < 4; ++r) a[r] = x.row(m + (r < R ? r : R - 1));
  int32_t buf[2 * kChunk];  // [K / 4][4 rows][pairs (k, k+2), (k+1, k+3)]
  if (K <= kChunk) {        // one chunk: the rows expanded once for every channel
    expand4(a, K & ~3, buf);
    for (int32_t n = 0; n < w.rows; ++n) {
      int32_t s[4];
      chunk_sums(buf, a, w.row(n), K, s);
      const int64_t b = bias != nullptr ? bias[n] : 0;
      const int64_t acc[4] = {b + s[0], b + s[1], b + s[2], b + s[3]};
      store(acc, R, p, n, y, m);
    }
    return;
  }
  for (int32_t n0 = 0; n0 < w.rows; n0 += kBlock) {
    const int32_t nb = w.rows - n0 < kBlock ? w.rows - n0 : kBlock;
    int64_t acc[kBlock][4];
    for (int32_t j = 0; j < nb; ++j) {
      const int64_t b = bias != nullptr ? bias[n0 + j] : 0;
      acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = b;
    }
    for (int32_t k0 = 0; k0 < K; k0 += kChunk) {
      const int32_t n = K - k0 < kChunk ? K - k0 : kChunk;
      const int16_t* ak[4] = {a[0] + k0, a[1] + k0, a[2] + k0, a[3] + k0};
      expand4(ak, n & ~3, buf);
      for (int32_t j = 0; j < nb; ++j) {
        int32_t s[4];
        chunk_sums(buf, ak, w.row(n0 + j) + k0, n, s);
        for (size_t r = 0; r < 4; ++r) acc[j][r] += s[r];
      }
    }
    for (int32_t j = 0; j < nb; ++j) store(acc[j], R, p, n0 + j, y, m);
  }
}

}  // namespace

void linear_s16_dsp(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  for (int32_t m = 0; m < x.rows; m += 4) rows4(x, w, bias, p, y, m, x.rows - m < 4 ? x.rows - m : 4);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
