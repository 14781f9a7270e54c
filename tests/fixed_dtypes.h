// fixed_dtypes.h: the s8 and s16 dtypes' types and entries (converter,
// forward, KV cache, decode), so that one test or benchmark body covers both
// (tests/decode_fixed_test.cpp, tools/bench/decode.cpp).
#pragma once

#include <cstdint>

#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/quantize.h"

namespace dtypes {

// One dtype's row: element type T_, the entries' suffix dt, the types' suffix DT.
#define ATTN_FIXED_DTYPE(T_, dt, DT)                                                                         \
  struct DT {                                                                                                \
    using T = T_;                                                                                            \
    using Weights = attn::Weights##DT;                                                                       \
    using Io = attn::Io##DT;                                                                                 \
    using Cache = attn::KvCache##DT;                                                                         \
    static constexpr attn::DType kDtype = attn::DType::k##DT;                                                \
    static constexpr const char* kName = #dt;                                                                \
    static attn::Status quantize(const attn::AttentionConfig& c, const attn::WeightsF32& w,                  \
                                 const attn::CalibrationRanges& r, attn::Arena& st, Weights* out,            \
                                 attn::ActivationQuant* act, const attn::QuantizeOptions& o) {               \
      return attn::quantize_attention_##dt(c, w, r, st, out, act, nullptr, o);                               \
    }                                                                                                        \
    static attn::Status forward(const attn::Plan& p, const Weights& w, const attn::Mask& m, const Io& io,    \
                                attn::Arena& a) {                                                            \
      return attn::forward_##dt(p, w, m, io, a);                                                             \
    }                                                                                                        \
    static attn::Status init(const attn::Plan& p, int32_t window, attn::Arena& a, Cache* c) {                \
      return attn::kv_cache_init_##dt(p, window, a, c);                                                      \
    }                                                                                                        \
    static attn::Status decode(const attn::Plan& p, const Weights& w, Cache* c, const T* x, int32_t n, T* y, \
                               attn::Arena& a) {                                                             \
      return attn::decode_##dt(p, w, c, x, n, y, a);                                                         \
    }                                                                                                        \
  };

ATTN_FIXED_DTYPE(int8_t, s8, S8)
ATTN_FIXED_DTYPE(int16_t, s16, S16)

#undef ATTN_FIXED_DTYPE

}  // namespace dtypes
