// quant/int4_weights.h: the converter's int4 weights (ProjectionS8 /
// ProjectionS16::weight_s4), shared by the block and the whole-model
// converters. Offline code in double.
//
// A row's scale is chosen by error, not by its max: of the clip ratios
// r = 1, 0.98, ..., 0.5 of max |w| / 7, the one whose int4 row
// (round half away from zero, clamped to [-8, 7]) is closest to the float row
// in squared error, then refined by least squares. At four bits the grid is coarse enough that clipping a
// few outliers to refine the step for every other weight pays (at eight bits
// it does not: the converters keep max / 127 there).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/status.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"

namespace attn {
namespace detail {

constexpr int32_t kInt4Min = -8, kInt4Max = 7;

inline double int4_value(double w, double s) {
  const double q = std::round(w / s);
  return q < kInt4Min ? kInt4Min : q > kInt4Max ? kInt4Max : q;
}

// Squared error of one row of `in` weights on the int4 grid of step s.
inline double int4_row_error(const float* row, int32_t in, double s) {
  double err = 0.0;
  for (int32_t k = 0; k < in; ++k) {
    const double w = static_cast<double>(row[k]);
    const double d = w - s * int4_value(w, s);
    err += d * d;
  }
  return err;
}

// The scale of one row of `in` finite weights with max |w| = amax > 0: the
// best of the clip ratios, then refined by least squares (s = sum w q /
// sum q^2 for the row's int4 values q, while that lowers the error).
inline double int4_row_scale(const float* row, int32_t in, double amax) {
  double best_s = amax / kInt4Max, best_err = int4_row_error(row, in, best_s);
  for (int32_t i = 1; i <= 25; ++i) {
    const double s = amax * (1.0 - 0.02 * i) / kInt4Max;
    const double err = int4_row_error(row, in, s);
    if (err < best_err) best_err = err, best_s = s;
  }
  for (int iter = 0; iter < 4; ++iter) {
    double wq = 0.0, qq = 0.0;
    for (int32_t k = 0; k < in; ++k) {
      const double q = int4_value(static_cast<double>(row[k]), best_s);
      wq += static_cast<double>(row[k]) * q;
      qq += q * q;
    }
    if (!(qq > 0.0) || !(wq > 0.0)) break;
    const double s = wq / qq, err = int4_row_error(row, in, s);
    if (!(err < best_err)) break;
    best_err = err, best_s = s;
  }
  return best_s;
}

// Pack n int4 values held in int8 (n even) two per byte, low nibble first,
// in place: byte i is written after values 2i and 2i + 1 are read. Returns
// the packed bytes (the first n / 2 of q).
inline const uint8_t* pack_int4_in_place(int8_t* q, size_t n) {
  auto* b = reinterpret_cast<uint8_t*>(q);
  for (size_t i = 0; i < n / 2; ++i) {
    const uint32_t lo = static_cast<uint8_t>(q[2 * i]) & 15u, hi = static_cast<uint8_t>(q[2 * i + 1]) & 15u;
    b[i] = static_cast<uint8_t>(lo | hi << 4);
  }
  return b;
}

// ---- error feedback (GPTQ, quant/int4_gptq.cpp) ------------------------------
// Input widths above this keep round-to-nearest: H alone would take
// in^2 doubles of scratch (32 MiB at 2048).
constexpr int32_t kGptqMaxIn = 2048;

// Scratch bytes gptq_int4_rows takes beside H, for an input width `in`.
size_t gptq_scratch_bytes(int32_t in);

// h [in, in] += x x^T for one input row x [in].
void accumulate_second_moments(const float* x, int32_t in, double* h);

// q [out, in] = the int4 values of w [out, in] on the channels' scales, by
// error feedback over h = sum x x^T of the calibration inputs [in, in]
// (kept). Round to nearest if h turns out singular even after damping.
Status gptq_int4_rows(const float* w, int32_t out, int32_t in, const double* scales, const double* h,
                      Arena& scratch, int8_t* q);

// Scratch bytes of ffn_second_moments beside its hh and hg.
size_t ffn_second_moments_bytes(const TransformerConfig& c, int32_t max_len);

// The second moments of layer `layer`'s FFN inputs over the calibration
// sequences (the float forward's): hh [E, E] of W1 / W3's input, hg [F, F]
// of W2's. One float forward per sequence.
Status ffn_second_moments(const TransformerConfig& c, const TransformerWeightsF32& w,
                          const TransformerCalibration& cal, int32_t max_len, int32_t layer, Arena& scratch,
                          double* hh, double* hg);

}  // namespace detail
}  // namespace attn
