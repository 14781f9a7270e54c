// softmax_f32: public entry; checks the view, then softmaxes each row in place.
#include "attn/kernels.h"
#include "internal/check.h"
#include "internal/kernels_f32.h"

namespace attn {

Status softmax_f32(MatF32 s) {
  ATTN_TRY(detail::check_view(s));  // [T, S]
  for (int32_t t = 0; t < s.rows; ++t) detail::softmax_row_f32(s.row(t), s.cols);
  return Status::kOk;
}

}  // namespace attn
