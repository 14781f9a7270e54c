// fixed_dtypes.h: the s8 and s16 dtypes' types and entries (converter,
// forward, KV cache, decode), so that one test or benchmark body covers both
// (tests/decode_fixed_test.cpp, tools/bench/decode.cpp).
#pragma once

#include <cstdint>

#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/quantize.h"

namespace dtypes {

struct S8 {
  using T = int8_t;
  using Weights = attn::WeightsS8;
  using Io = attn::IoS8;
  using Cache = attn::KvCacheS8;
  static constexpr attn::DType kDtype = attn::DType::kS8;
  static constexpr const char* kName = "s8";
  static attn::Status quantize(const attn::AttentionConfig& c, const attn::WeightsF32& w,
                               const attn::CalibrationRanges& r, attn::Arena& st, Weights* out,
                               attn::ActivationQuant* act, const attn::QuantizeOptions& o) {
    return attn::quantize_attention_s8(c, w, r, st, out, act, nullptr, o);
  }
  static attn::Status forward(const attn::Plan& p, const Weights& w, const attn::Mask& m, const Io& io,
                              attn::Arena& a) {
    return attn::forward_s8(p, w, m, io, a);
  }
  static attn::Status init(const attn::Plan& p, int32_t window, attn::Arena& a, Cache* c) {
    return attn::kv_cache_init_s8(p, window, a, c);
  }
  static attn::Status decode(const attn::Plan& p, const Weights& w, Cache* c, const T* x, int32_t n, T* y,
                             attn::Arena& a) {
    return attn::decode_s8(p, w, c, x, n, y, a);
  }
};

struct S16 {
  using T = int16_t;
  using Weights = attn::WeightsS16;
  using Io = attn::IoS16;
  using Cache = attn::KvCacheS16;
  static constexpr attn::DType kDtype = attn::DType::kS16;
  static constexpr const char* kName = "s16";
  static attn::Status quantize(const attn::AttentionConfig& c, const attn::WeightsF32& w,
                               const attn::CalibrationRanges& r, attn::Arena& st, Weights* out,
                               attn::ActivationQuant* act, const attn::QuantizeOptions& o) {
    return attn::quantize_attention_s16(c, w, r, st, out, act, nullptr, o);
  }
  static attn::Status forward(const attn::Plan& p, const Weights& w, const attn::Mask& m, const Io& io,
                              attn::Arena& a) {
    return attn::forward_s16(p, w, m, io, a);
  }
  static attn::Status init(const attn::Plan& p, int32_t window, attn::Arena& a, Cache* c) {
    return attn::kv_cache_init_s16(p, window, a, c);
  }
  static attn::Status decode(const attn::Plan& p, const Weights& w, Cache* c, const T* x, int32_t n, T* y,
                             attn::Arena& a) {
    return attn::decode_s16(p, w, c, x, n, y, a);
  }
};

}  // namespace dtypes
