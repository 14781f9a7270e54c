// transformer_float_c.cpp: attn_transformer_forward / _decode (attn/attn.h),
// the float outputs of every model. For s8 / s16 models this is the only
// float arithmetic of the whole-model C API (the integer outputs times the
// model's output scale), alone in this file so that integer firmware calling
// only the _s32 entries links none of it.
#include <cstring>

#include "attn/attn.h"
#include "capi/transformer_c.h"

namespace {

// The `count` int32 outputs at `out` (written there by the integer model)
// into floats, in place: each q read as bytes, (float)((double)q * scale)
// written back as bytes, so the buffer is only ever accessed as bytes here.
void convert(float* out, size_t count, float scale) {
  const double s = static_cast<double>(scale);
  for (size_t i = 0; i < count; ++i) {
    int32_t q;
    std::memcpy(&q, out + i, sizeof q);
    const float y = static_cast<float>(static_cast<double>(q) * s);
    std::memcpy(out + i, &y, sizeof y);
  }
}

attn_status run(const attn_transformer* transformer, bool decode, const int32_t* tokens, int32_t n, int rows,
                float* out) {
  attn::capi::TransformerCall call;
  const attn::Status s =
      attn::capi::transformer_call(transformer, decode, tokens, n, rows, out, true, nullptr, &call);
  if (s == attn::Status::kOk && call.convert) convert(out, call.count, call.scale);
  return static_cast<attn_status>(s);
}

}  // namespace

extern "C" {

attn_status attn_transformer_forward(const attn_transformer* transformer, const int32_t* tokens, int32_t n,
                                     int rows, float* out) {
  return run(transformer, false, tokens, n, rows, out);
}

attn_status attn_transformer_decode(attn_transformer* transformer, const int32_t* tokens, int32_t n, int rows,
                                    float* out) {
  return run(transformer, true, tokens, n, rows, out);
}

}  // extern "C"
