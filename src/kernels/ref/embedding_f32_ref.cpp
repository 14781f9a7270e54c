// Embedding gather, float32, portable scalar:
//   x[i] = table[tokens[i]] (+ rows[i]) (+ add)      rows of E, i < n
// The token embedding plus the learned position rows and the token-type
// row of a model (attn/transformer.h). Memory-bound: the compiler's
// vectorization of these loops is all there is to gain.
#include <cstring>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void embed_rows_f32_ref(const float* table, const int32_t* tokens, int32_t n, int32_t E, const float* rows,
                        const float* add, float* x) {
  const size_t e = static_cast<size_t>(E);
  for (int32_t i = 0; i < n; ++i) {
    float* xi = x + static_cast<size_t>(i) * e;  // [E]
    std::memcpy(xi, table + static_cast<size_t>(tokens[i]) * e, e * sizeof(float));
    if (rows != nullptr) {
      const float* ri = rows + static_cast<size_t>(i) * e;  // [E]
      for (size_t j = 0; j < e; ++j) xi[j] += ri[j];
    }
    if (add != nullptr)
      for (size_t j = 0; j < e; ++j) xi[j] += add[j];
  }
}

}  // namespace detail
}  // namespace attn
