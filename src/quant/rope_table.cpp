// rope_table: the integer forwards' rotary embedding as two Q1.14 tables,
// cos and sin [positions, head_dim / 2], in the caller's arena. Converter
// code (double arithmetic), in a file of its own so that a board image that
// builds its tables at start-up (port/cortex-m/cost) can compile just this.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "attn/quantize.h"

namespace attn {

Status rope_table(float base, int32_t head_dim, int32_t positions, Arena& st, RopeTable* out) {
  if (out == nullptr) return Status::kNullArgument;
  *out = RopeTable();
  if (!(base > 0.0f) || !std::isfinite(base) || head_dim <= 0 || head_dim % 2 != 0) return Status::kBadRope;
  if (positions < 1 || positions > (1 << 24)) return Status::kBadQuantParams;
  const int32_t half = head_dim / 2;
  const size_t n = static_cast<size_t>(positions) * static_cast<size_t>(half);
  int16_t* cos = nullptr;  // [positions, half]
  int16_t* sin = nullptr;  // [positions, half]
  ATTN_TRY(st.alloc_array(n, &cos));
  ATTN_TRY(st.alloc_array(n, &sin));
  const double one = static_cast<double>(1 << kRopeFracBits);
  for (int32_t i = 0; i < half; ++i) {
    const double freq = std::pow(static_cast<double>(base), -2.0 * i / head_dim);  // as rope_f32_ref
    for (int32_t p = 0; p < positions; ++p) {
      const double angle = static_cast<double>(p) * freq;
      const size_t at = static_cast<size_t>(p) * static_cast<size_t>(half) + static_cast<size_t>(i);
      cos[at] = static_cast<int16_t>(std::round(std::cos(angle) * one));  // [-16384, 16384]
      sin[at] = static_cast<int16_t>(std::round(std::sin(angle) * one));
    }
  }
  *out = RopeTable{cos, sin, positions};
  return Status::kOk;
}

}  // namespace attn
