// residual, the int32 residual stream of attn/transformer_fixed.h, portable
// scalar: branch outputs added on the residual grid (saturating), and
// residual rows rescaled to a matmul's input (RescaleFixed), 32-bit steps
// (kernels/kernels_model_fixed.h: residual_add_element, residual_to_act_element).
// The row loop is every variant's (kernels/model_fixed_rows.h); the ref has
// no vector passes, so the scalar steps take each whole row.
#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {

template <>
struct ResidualOps<Isa::kRef> {
  template <typename Act>
  static int32_t to_act(const int32_t*, const RescaleFixed&, Act*, int32_t, int32_t, int32_t) {
    return 0;
  }
  template <typename Act>
  static int32_t add(int32_t*, const Act*, int32_t, const RescaleFixed&) {
    return 0;
  }
};
template struct ResidualRows<Isa::kRef>;

}  // namespace detail
}  // namespace attn
