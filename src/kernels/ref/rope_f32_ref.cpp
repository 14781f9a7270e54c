// rotary position embedding, float32, portable scalar, in place.
//
// For each row r (position pos0 + r) and each head, the pairs (i, i + hd/2)
// of the head's slice rotate by angle pos * base^(-2i/hd), as HF Llama's
// rotate_half does. Angles are computed in double: in float32, pos * freq
// loses ~1e-4 rad by position 1000, well above attn's float tolerance.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void rope_f32_ref(MatF32 x, int32_t head_dim, int32_t pos0, float base) {
  const int32_t half = head_dim / 2;
  const int32_t heads = x.cols / head_dim;
  for (int32_t r = 0; r < x.rows; ++r) {
    const double pos = static_cast<double>(pos0) + r;
    for (int32_t i = 0; i < half; ++i) {
      const double angle = pos * std::pow(static_cast<double>(base), -2.0 * i / head_dim);
      const auto c = static_cast<float>(std::cos(angle));
      const auto s = static_cast<float>(std::sin(angle));
      for (int32_t h = 0; h < heads; ++h) {
        float* v = x.row(r) + h * head_dim;  // [head_dim]
        const float a = v[i];
        const float b = v[i + half];
        v[i] = a * c - b * s;
        v[i + half] = b * c + a * s;
      }
    }
  }
}

}  // namespace detail
}  // namespace attn
