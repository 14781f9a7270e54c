// softmax_f32: public entry; checks the view, then softmaxes each row in place.
#include "attn/kernels.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status softmax_f32(MatF32 s) {
  ATTN_TRY(detail::check_view(s));  // [T, S]
  for (int32_t t = 0; t < s.rows; ++t) detail::best(detail::kSoftmaxRowF32)(s.row(t), s.cols);
  return Status::kOk;
}

}  // namespace attn
