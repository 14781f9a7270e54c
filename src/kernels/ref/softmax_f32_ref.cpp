// softmax over one row, float32, portable scalar, in place.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

// NaN policy (PyTorch's): a NaN among the scores makes the whole row NaN
// (tested on the bits first: row_has_nan); a row of -INFINITY (fully masked,
// or empty) gives all-zero weights.
void softmax_row_f32_ref(float* row, int32_t n) {
  if (row_has_nan(row, n)) return softmax_row_nan(row, n);
  float max = -INFINITY;
  for (int32_t j = 0; j < n; ++j) max = row[j] > max ? row[j] : max;
  if (max == -INFINITY) {  // fully masked (or empty): all weights 0
    softmax_row_without_max(row, n);
    return;
  }
  float sum = 0.0f;
  for (int32_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max);  // exp(-inf) == 0 exactly: masked entries vanish
    sum += row[j];
  }
  const float inv = 1.0f / sum;  // sum >= 1: the max entry contributes exp(0)
  for (int32_t j = 0; j < n; ++j) row[j] *= inv;
}

}  // namespace detail
}  // namespace attn
