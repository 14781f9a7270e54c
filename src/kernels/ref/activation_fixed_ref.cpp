// activation, integer tables, portable scalar: the FFN activations of
// attn/transformer_fixed.h (GELU, gelu_tanh, ReLU, SiLU alike: the converter
// fills the tables). In place over the W1 output h1.
//   s8 plain: g = table[h1 + 128]                      (exact for int8 inputs)
//   s8 gated: g = clamp(zp + round(table[h1 + 128] * (h3 - zp3) * m 2^(sh - 31)))
//   s16: a = 64 T[k] + (T[k + 1] - T[k]) f for h1 = -32768 + 64 k + f (exact), then
//        plain: g = clamp(round(a m 2^(sh - 31)));  gated: g = clamp(requantize(a h3))
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void act_table_s8_ref(MatS8 h1, const int8_t* table) {
  for (int32_t r = 0; r < h1.rows; ++r) {
    int8_t* row = h1.row(r);
    for (int32_t i = 0; i < h1.cols; ++i) row[i] = table[row[i] + 128];
  }
}

void act_gate_s8_ref(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point, int32_t multiplier,
                     int32_t shift, int32_t g_zero_point) {
  for (int32_t r = 0; r < h1.rows; ++r) {
    int8_t* row = h1.row(r);
    const int8_t* up = h3.row(r);
    for (int32_t i = 0; i < h1.cols; ++i) {
      const int32_t prod = int32_t{table[row[i] + 128]} * (int32_t{up[i]} - h3_zero_point);  // |.| < 2^23
      const int64_t g = g_zero_point + rescale_q31(prod, multiplier, shift);
      row[i] = static_cast<int8_t>(g < -128 ? -128 : g > 127 ? 127 : g);
    }
  }
}
#endif

#if ATTN_WITH_S16
namespace {
// 64 * act(h) in units of the table's scale, exact: |.| < 2^27.
inline int32_t interpolate(const int32_t* table, int32_t h) {
  const int32_t u = h + 32768;  // [0, 65535]
  const int32_t k = u >> 6;
  const int32_t f = u & (kActTableS16Step - 1);
  return table[k] * kActTableS16Step + (table[k + 1] - table[k]) * f;
}
}  // namespace

void act_table_s16_ref(MatS16 h1, const int32_t* table, int32_t multiplier, int32_t shift) {
  for (int32_t r = 0; r < h1.rows; ++r) {
    int16_t* row = h1.row(r);
    for (int32_t i = 0; i < h1.cols; ++i) {
      const int64_t g = rescale_q31(interpolate(table, row[i]), multiplier, shift);
      row[i] = static_cast<int16_t>(g < -32768 ? -32768 : g > 32767 ? 32767 : g);
    }
  }
}

void act_gate_s16_ref(MatS16 h1, ConstMatS16 h3, const int32_t* table, int32_t multiplier, int32_t shift) {
  for (int32_t r = 0; r < h1.rows; ++r) {
    int16_t* row = h1.row(r);
    const int16_t* up = h3.row(r);
    for (int32_t i = 0; i < h1.cols; ++i) {
      const int64_t prod = int64_t{interpolate(table, row[i])} * up[i];  // |.| < 2^42
      const int32_t g = rescale_q15_s64(prod, multiplier, shift);
      row[i] = static_cast<int16_t>(fp::clamp_i32(g, -32768, 32767));
    }
  }
}
#endif

}  // namespace detail
}  // namespace attn
