// attn/quantize.h: OFFLINE quantization helpers, for the converter (`attn
// quantize`) and the tests. They use double; nothing in the fixed-point run
// time path (forward_s8 / forward_s16, the *_s8 / *_s16 kernels) calls them.
#pragma once

#include <cstdint>

#include "attn/kernels_fixed.h"
#include "attn/status.h"

namespace attn {

// TFLite's QuantizeMultiplier: real = multiplier * 2^(shift - 31), with
// multiplier in [2^30, 2^31): f = frexp(real, &shift), multiplier =
// round_half_away(f * 2^31) (2^31 -> 2^30 with shift + 1); reals below
// 2^-32 flush to (0, 0). The one implementation, shared by the converter and
// the tests. Errors: kBadQuantParams for a negative, NaN or infinite real,
// kNullArgument.
Status quantize_multiplier(double real, int32_t* multiplier, int32_t* shift);

// Parameters of softmax_s8 for softmax(beta * x) on an int8 input of scale
// input_scale (TFLite PreprocessSoftmaxScaling + CalculateInputRadius with 5
// integer bits). Errors: kBadQuantParams (beta * input_scale not > 0 or too
// small for a left shift), kNullArgument.
Status softmax_s8_params(double beta, double input_scale, SoftmaxS8Params* out);

}  // namespace attn
