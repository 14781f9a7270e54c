// attn/kernels_fixed.h: stand-alone fixed-point ops, bit-exact with the int8
// conventions of TFLite / TFLM / CMSIS-NN, for users who compose their own
// layers and want to check attn against the tools they already trust.
//
// Quantized values: real = scale * (q - zero_point). Weights are symmetric
// per output channel (zero point 0). Every multiplier and shift is computed
// offline (attn/quantize.h: quantize_multiplier, softmax_s8_params); nothing
// here touches float but the activation conversions at the end. Each op validates its views and parameters
// (kNullArgument, kBadShape, kBadQuantParams) and then runs the variant the kernel table
// (src/kernels/kernel_table.h) picked. Each has a *_scratch_bytes() (all 0 today: the arena API is uniform).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/status.h"
#include "attn/tensor.h"

namespace attn {

using MatS8 = Matrix<int8_t>;
using ConstMatS8 = Matrix<const int8_t>;
using MatS16 = Matrix<int16_t>;
using ConstMatS16 = Matrix<const int16_t>;
using MatS32 = Matrix<int32_t>;
using ConstMatS32 = Matrix<const int32_t>;

// Requantization of one output channel c: out = MBQM(acc, multiplier[c], shift[c])
// with multiplier in [2^30, 2^31) (or 0) and shift in [-31, 30].
struct LinearS8Params {
  int32_t input_zero_point = 0;   // zp of x, [-128, 127]
  int32_t output_zero_point = 0;  // zp of y, [-128, 127]
  int32_t act_min = -128;         // output clamp, -128 <= act_min <= act_max <= 127
  int32_t act_max = 127;
  const int32_t* multiplier = nullptr;  // [N] Q0.31, >= 0
  const int32_t* shift = nullptr;       // [N] in [-31, 30]
};

// int8 fully connected, per-channel (TFLite FULLY_CONNECTED int8 reference):
//   acc[m, n] = bias[n] + sum_k (x[m, k] - input_zero_point) * w[n, k]      (int32)
//   y[m, n]   = clamp(output_zero_point + MBQM(acc, multiplier[n], shift[n]), act_min, act_max)
// x [M, K] int8 asymmetric; w [N, K] int8 symmetric, PyTorch's [out, in];
// bias [N] int32 at scale in_scale * w_scale[n] (null: none); y [M, N] int8.
// Folded zero point: a converter may put -input_zero_point * sum_k w[n, k]
// into bias and pass input_zero_point = 0; the result is identical.
// The caller keeps |acc| < 2^31 (true whenever K <= 2^16 and the bias is a
// real int32 bias). Errors: kNullArgument, kBadShape, kBadQuantParams.
Status linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& params, MatS8 y);
constexpr size_t linear_s8_scratch_bytes(int32_t /*M*/, int32_t /*N*/, int32_t /*K*/) { return 0; }

// int16 x int8 fully connected (CMSIS-NN arm_fully_connected_s16 / TFLite 16x8):
//   acc[m, n] = bias[n] + sum_k x[m, k] * w[n, k]                           (int64)
//   y[m, n]   = clamp(requantize_s64(acc, reduce_q15(multiplier[n]), shift[n]), act_min, act_max)
// x [M, K] int16 symmetric (zero point 0); w [N, K] int8 symmetric per
// channel; bias [N] int64 (null: none); y [M, N] int16 symmetric.
// multiplier in [0, 2^31), shift in [-31, 14]. Errors: as linear_s8.
struct LinearS16Params {
  int32_t act_min = -32768;  // output clamp, -32768 <= act_min <= act_max <= 32767
  int32_t act_max = 32767;
  const int32_t* multiplier = nullptr;  // [N] Q0.31, >= 0
  const int32_t* shift = nullptr;       // [N] in [-31, 14]
};
Status linear_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& params, MatS16 y);
constexpr size_t linear_s16_scratch_bytes(int32_t /*M*/, int32_t /*N*/, int32_t /*K*/) { return 0; }

// Parameters of softmax_s8, from attn::softmax_s8_params(beta, input_scale).
struct SoftmaxS8Params {
  int32_t input_multiplier = 0;  // beta * in_scale * 2^26 as Q0.31 multiplier, > 0
  int32_t input_left_shift = 0;  // [0, 31]
  int32_t diff_min = 0;          // <= 0: x - max below it gives probability 0
};

// int8 softmax over each row of x [M, N] (TFLite SOFTMAX int8 reference, gemmlowp
// exp and 1/(1+x)): y = softmax(beta * in_scale * x) quantized at scale 1/256,
// zero point -128, int8 [M, N]. y may be x's memory (in place) only if the
// views are identical. Errors: kNullArgument, kBadShape, kBadQuantParams.
Status softmax_s8(ConstMatS8 x, const SoftmaxS8Params& params, MatS8 y);
constexpr size_t softmax_s8_scratch_bytes(int32_t /*M*/, int32_t /*N*/) { return 0; }

// Float <-> integer activations, for a caller with float data (the C API's
// attn_quantize_* / attn_dequantize_*; `attn run` converts with them):
//   quantize_DT:   q[i] = clamp(round(x[i] / scale) + zero_point) for i < n
//   dequantize_DT: y[i] = scale * (q[i] - zero_point)
// round() is round half away from zero of x / scale computed in double, the
// sum saturates to the dtype's range (+-infinity saturate), NaN gives the
// zero point; the dequantized value is the float nearest the exact product.
// attn::quantize_value (attn/quantize.h) gives the same integers for every
// non-NaN x. The only float functions of the runtime: each in an object file
// of its own, so firmware that calls none links none. Errors: kNullArgument
// (a pointer null with n > 0), kBadQuantParams (scale not finite and > 0, a
// zero point outside the dtype's range);
// nothing is written on error.
Status quantize_s8(const float* x, size_t n, float scale, int32_t zero_point, int8_t* q);
Status dequantize_s8(const int8_t* q, size_t n, float scale, int32_t zero_point, float* y);
Status quantize_s16(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q);
Status dequantize_s16(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y);

}  // namespace attn
