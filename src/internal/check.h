// internal/check.h: argument checks shared by the public entry points.
#pragma once

#include "attn/status.h"
#include "attn/tensor.h"

namespace attn {
namespace detail {

// A view is usable when it has data, positive dims and stride >= cols.
template <class T>
Status check_view(const Matrix<T>& m) {
  if (m.data == nullptr) return Status::kNullArgument;
  if (m.rows <= 0 || m.cols <= 0 || m.stride < m.cols) return Status::kBadShape;
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
