// kernels/linear_split.h: the linear products of the forwards, split over
// their output channels through the caller's ParallelFor (core/parallel.h):
// each piece is the kernel table's own kernel on a contiguous range of
// channels (its rows of w, its bias, its per-channel requantization, its
// columns of y), so every output is the same sum as in one call.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "kernels/kernel_table.h"

namespace attn {
namespace detail {

#if ATTN_WITH_F32
// linear_packed_f32 (kernels/kernel_table.h) split over y's columns. The
// panels are [ceil(N / 16), K, 16]: a piece starting at channel n0 (a
// multiple of 16) starts at float n0 * K of them.
inline void linear_packed_f32(const ParallelFor& par, ConstMatF32 x, ConstMatF32 w, const float* panels,
                              const float* bias, MatF32 y) {
#if !ATTN_PARALLEL
  (void)par;
  return linear_packed_f32(x, w, panels, bias, y);
#endif
  static_assert(kParallelChannels % 16 == 0, "a piece must start on a panel");
  for_output_channels(par, x.rows, w.rows, x.cols, [&](int32_t n0, int32_t nc) {
    linear_packed_f32(x, w.rows_slice(n0, nc),
                      panels != nullptr ? panels + static_cast<ptrdiff_t>(n0) * x.cols : nullptr,
                      bias != nullptr ? bias + n0 : nullptr, y.cols_slice(n0, nc));
  });
}
#endif

#if ATTN_WITH_S8 || ATTN_WITH_S16
// y = requant(x w^T + bias) by fn (the best row of kLinearS8 or kLinearS16),
// split over y's columns: each piece offsets the bias and the per-channel
// multipliers and shifts.
template <class Fn, class X, class W, class Bias, class Params, class Y>
void linear_split_fixed(const ParallelFor& par, Fn fn, X x, W w, const Bias* bias, const Params& p, Y y) {
#if !ATTN_PARALLEL
  (void)par;
  return fn(x, w, bias, p, y);
#endif
  for_output_channels(par, x.rows, w.rows, x.cols, [&](int32_t n0, int32_t nc) {
    Params q = p;
    q.multiplier = p.multiplier + n0;
    q.shift = p.shift + n0;
    fn(x, w.rows_slice(n0, nc), bias != nullptr ? bias + n0 : nullptr, q, y.cols_slice(n0, nc));
  });
}
// y = rescale(x w^T + bias) into int32 by fn (kLogitsS8/S16: store;
// kLinearResidualS8/S16: add), split over y's columns.
template <class Fn, class X, class W, class Bias>
void out32_split(const ParallelFor& par, Fn fn, X x, W w, const Bias* bias, const int32_t* multiplier,
                 const int32_t* shift, MatS32 y) {
#if !ATTN_PARALLEL
  (void)par;
  return fn(x, w, bias, multiplier, shift, y);
#endif
  for_output_channels(par, x.rows, w.rows, x.cols, [&](int32_t n0, int32_t nc) {
    fn(x, w.rows_slice(n0, nc), bias != nullptr ? bias + n0 : nullptr, multiplier + n0, shift + n0,
       y.cols_slice(n0, nc));
  });
}
#endif
// The projections of the forwards, on their int8 or int4 weights
// (ProjectionS8 / ProjectionS16::weight_s4): y [M, N] = requant(x [M, K] W^T + bias).
#if ATTN_WITH_S8
inline void project_split(const ParallelFor& par, ConstMatS8 x, const ProjectionS8& pr,
                          const LinearS8Params& p, MatS8 y) {
  if (pr.weight_s4 != nullptr) {
    linear_split_fixed(par, best(kLinearS4S8), x, matrix_s4(pr.weight_s4, y.cols, x.cols), pr.bias, p, y);
  } else {
    linear_split_fixed(par, best(kLinearS8), x, matrix(pr.weight, y.cols, x.cols), pr.bias, p, y);
  }
}
// W2 into the residual: r [M, N] = sat32(r + rescale of x [M, K] W^T).
inline void residual_split(const ParallelFor& par, ConstMatS8 x, const ProjectionS8& pr, MatS32 r) {
  if (pr.weight_s4 != nullptr) {
    out32_split(par, best(kLinearResidualS4S8), x, matrix_s4(pr.weight_s4, r.cols, x.cols), pr.bias,
                pr.multiplier, pr.shift, r);
  } else {
    out32_split(par, best(kLinearResidualS8), x, matrix(pr.weight, r.cols, x.cols), pr.bias, pr.multiplier,
                pr.shift, r);
  }
}
// The LM head: y [M, V] = rescale of x [M, K] W^T, int32 logits.
inline void logits_split(const ParallelFor& par, ConstMatS8 x, const ProjectionS8& pr, MatS32 y) {
  if (pr.weight_s4 != nullptr) {
    out32_split(par, best(kLogitsS4S8), x, matrix_s4(pr.weight_s4, y.cols, x.cols), pr.bias, pr.multiplier,
                pr.shift, y);
  } else {
    out32_split(par, best(kLogitsS8), x, matrix(pr.weight, y.cols, x.cols), pr.bias, pr.multiplier, pr.shift,
                y);
  }
}
#endif
#if ATTN_WITH_S16
// As the s8 ones; bias null: none (a model without biases).
inline void project_split(const ParallelFor& par, ConstMatS16 x, const ProjectionS16& pr, const int64_t* bias,
                          const LinearS16Params& p, MatS16 y) {
  if (pr.weight_s4 != nullptr) {
    linear_split_fixed(par, best(kLinearS4S16), x, matrix_s4(pr.weight_s4, y.cols, x.cols), bias, p, y);
  } else {
    linear_split_fixed(par, best(kLinearS16), x, matrix(pr.weight, y.cols, x.cols), bias, p, y);
  }
}
inline void residual_split(const ParallelFor& par, ConstMatS16 x, const ProjectionS16& pr, MatS32 r) {
  if (pr.weight_s4 != nullptr) {
    out32_split(par, best(kLinearResidualS4S16), x, matrix_s4(pr.weight_s4, r.cols, x.cols), pr.bias,
                pr.multiplier, pr.shift, r);
  } else {
    out32_split(par, best(kLinearResidualS16), x, matrix(pr.weight, r.cols, x.cols), pr.bias, pr.multiplier,
                pr.shift, r);
  }
}
inline void logits_split(const ParallelFor& par, ConstMatS16 x, const ProjectionS16& pr, MatS32 y) {
  if (pr.weight_s4 != nullptr) {
    out32_split(par, best(kLogitsS4S16), x, matrix_s4(pr.weight_s4, y.cols, x.cols), pr.bias, pr.multiplier,
                pr.shift, y);
  } else {
    out32_split(par, best(kLogitsS16), x, matrix(pr.weight, y.cols, x.cols), pr.bias, pr.multiplier, pr.shift,
                y);
  }
}
#endif

}  // namespace detail
}  // namespace attn
