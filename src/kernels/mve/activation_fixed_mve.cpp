// activation, int8 tables, Cortex-M55 Helium (MVE): the arithmetic of
// activation_fixed_ref.cpp, in place over the W1 output h1.
//   plain: g = table[h1 + 128], 16 bytes per step: one byte gather (VLDRB.U8
//          with 8-bit offsets h1 ^ 0x80 = h1 + 128), tails predicated.
//   gated: g = clamp(zp + round(table[h1 + 128] * (h3 - zp3) * m 2^(sh - 31)))
//          per element, as the ref: the product p = t u (|p| < 2^23) times m
//          in 64 bits, rounded to nearest with ties away from zero by one
//          SQRSHRL (a rounding shift right of a 64-bit pair, ties up) of
//          p m - [p < 0] (ties up of v - 1 is ties away from zero for
//          v < 0), then the zero point and the clamp (SSAT). The ref's int64 division by a
//          run-time power of two is what this replaces (~33 -> ~13 instructions
//          per element). For sh <= 7 the rounded value fits int32
//          (|p m| < 2^54, e = 31 - sh >= 24); larger shifts, which no
//          converter makes, run the ref.
#include "kernels/arch.h"
#include "kernels/kernels_model_fixed.h"

#if ATTN_HAVE_MVE && ATTN_WITH_S8
#include <arm_mve.h>

#include <cstdint>

namespace attn {
namespace detail {

void act_table_s8_mve(MatS8 h1, const int8_t* table) {
  for (int32_t r = 0; r < h1.rows; ++r) {
    int8_t* row = h1.row(r);
    for (int32_t i = 0; i < h1.cols; i += 16) {
      const mve_pred16_t p = vctp8q(static_cast<uint32_t>(h1.cols - i));
      const uint8x16_t index =
          veorq_u8(vldrbq_z_u8(reinterpret_cast<const uint8_t*>(row + i), p), vdupq_n_u8(0x80));
      vstrbq_p_s8(row + i, vldrbq_gather_offset_z_s8(table, index, p), p);
    }
  }
}

void act_gate_s8_mve(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point, int32_t multiplier,
                     int32_t shift, int32_t g_zero_point) {
  if (shift > 7) {  // the rounded product may pass int32
    act_gate_s8_ref(h1, h3, table, h3_zero_point, multiplier, shift, g_zero_point);
    return;
  }
  const int16_t* t = table + 128;
  const int32_t right = 31 - shift;  // SQRSHRL's rounding shift right, in [24, 62]
  for (int32_t r = 0; r < h1.rows; ++r) {
    int8_t* row = h1.row(r);
    const int8_t* up = h3.row(r);
    for (int32_t i = 0; i < h1.cols; ++i) {
      const int32_t prod = int32_t{t[row[i]]} * (int32_t{up[i]} - h3_zero_point);  // |.| < 2^23
      const int64_t v = int64_t{prod} * multiplier + (prod >> 31);                 // minus 1 when negative
      const int32_t g = g_zero_point + static_cast<int32_t>(sqrshrl(v, right));    // |.| < 2^30 + 2^7
      row[i] = static_cast<int8_t>(g < -128 ? -128 : g > 127 ? 127 : g);           // SSAT
    }
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE && ATTN_WITH_S8
