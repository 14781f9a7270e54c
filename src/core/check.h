// core/check.h: argument checks shared by the public entry points.
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

// The views of c [M, N] = a [M, K] b [N, K]^T (a linear: x, w, y; scores:
// q, k, s): each usable (check_view), and their shapes agreeing (kBadShape).
template <class A, class B, class C>
Status check_nt_product(const Matrix<A>& a, const Matrix<B>& b, const Matrix<C>& c) {
  ATTN_TRY(check_view(a));
  ATTN_TRY(check_view(b));
  ATTN_TRY(check_view(c));
  return b.cols != a.cols || c.rows != a.rows || c.cols != b.rows ? Status::kBadShape : Status::kOk;
}

}  // namespace detail
}  // namespace attn
