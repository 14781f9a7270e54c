// norm, int32 residual rows -> int8 / int16 / int32, portable scalar: the
// integer LayerNorm and RMSNorm of attn/transformer_fixed.h (NormFixed).
//
// Per row (E values x_i on the residual grid; the steps of
// kernels/kernels_model_fixed.h, shared with the SIMD variants):
//   LayerNorm: mean = round(sum x / E) (int64 sum); RMSNorm: mean = 0
//   d_i = sat32(x_i - mean), b = bits(max |d|), k = max(0, b - 23)
//   sq = sum round(d_i / 2^k)^2                          (int64, exact)
//   R  = norm_multiplier(sq, E, eps, b, k): one exact integer 1/sqrt per row
//   per element, 32-bit: u = d 2^(29 - b), n = round(u R / 2^31) (Q.F),
//   p = round(n w_i / 2^31), y = clamp(zp + round((p + bias_i) / 2^shift))
// Every step is an exact integer operation: the same bits on every target.
// The row loop is every variant's (norm_rows, kernels/model_fixed_rows.h);
// the ref has no vector passes, so the scalar steps take each whole row.
#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {

template <>
struct NormOps<Isa::kRef> {
  static int32_t cols(int32_t) { return 0; }
  static int64_t sum(const int32_t*, int32_t) { return 0; }
  static uint32_t max_abs(const int32_t*, int32_t, int32_t) { return 0; }
  static uint64_t sum_sq(const int32_t*, int32_t, int32_t, int32_t) { return 0; }
  template <typename Out>
  static void store(const int32_t*, int32_t, int32_t, int32_t, int32_t, const NormFixed&, int32_t, int32_t,
                    Out*) {}
};
template struct NormRows<Isa::kRef>;

}  // namespace detail
}  // namespace attn
