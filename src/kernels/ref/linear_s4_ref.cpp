// The linears over int4 weights, portable scalar (kernels/s4_rows.h): the
// int8-weight kernels' sums and epilogues on the unpacked values.
#include "kernels/s4_rows.h"

namespace attn {
namespace detail {

template <>
struct S4DotOps<Isa::kRef> {
  template <typename Act, typename Acc, class Epilogue>
  static void rows(Matrix<const Act> x, ConstMatS4 w, const Acc* bias, Epilogue out) {
    dot_rows_s4_ref(x, w, bias, out);
  }
};
template struct S4Rows<Isa::kRef>;

}  // namespace detail
}  // namespace attn
