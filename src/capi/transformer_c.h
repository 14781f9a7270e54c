// transformer_c.h: what the whole-model C entry points (attn/attn.h) share
// between src/capi/transformer_c.cpp (everything integer-clean) and
// src/capi/transformer_float_c.cpp (the float outputs of integer models).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/attn.h"
#include "attn/status.h"

namespace attn {
namespace capi {

// What one forward or decode through a handle wrote. For an integer model
// called with float_out, `count` int32 outputs sit in the caller's float
// buffer, to be converted in place with `scale` (the model's output_scale).
struct TransformerCall {
  bool convert = false;
  size_t count = 0;
  float scale = 0.0f;
};

// Runs the model behind `handle`: a forward (decode false) or a decode step
// (decode true, through its state). float_out: `out` is the caller's float
// [rows, output_dim] (an f32 model writes floats; an integer model writes its
// int32 outputs there, call->convert set); else int32 (integer models only:
// kBadDtype for f32), with *out_scale the model's output scale (copied, no
// arithmetic; out_scale may be null: the caller does not want it).
Status transformer_call(const attn_transformer* handle, bool decode, const int32_t* tokens, int32_t n,
                        int rows, void* out, bool float_out, float* out_scale, TransformerCall* call);

}  // namespace capi
}  // namespace attn
