// attention/packed_f32.h: where pack_weights_f32() puts each projection's W^T
// panels in its buffer (kernels/kernel_table.h: linear_panels_floats_f32).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/attention.h"
#include "kernels/kernel_table.h"

namespace attn {
namespace detail {

// Float offsets of the four projections' panels, and their total; every part
// rounded up to ATTN_ARENA_ALIGN bytes. All 0 where this build packs nothing.
// c is a resolved config (Plan::config); 64-bit counts, so the caller can
// check the total against SIZE_MAX before using it on a 32-bit target.
struct PackedLayoutF32 {
  uint64_t q, k, v, o, total;  // in floats
};

inline PackedLayoutF32 packed_layout_f32(const AttentionConfig& c) {
  const int32_t D = c.num_heads * c.head_dim, Dkv = c.num_kv_heads * c.head_dim;
  constexpr uint64_t kAlignFloats = ATTN_ARENA_ALIGN / sizeof(float);
  const auto part = [](uint64_t floats) -> uint64_t {
    return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  };
  PackedLayoutF32 p{};
  p.q = 0;
  p.k = p.q + part(linear_panels_floats_f32(D, c.embed_dim));      // Wq^T panels [D/16, E, 16]
  p.v = p.k + part(linear_panels_floats_f32(Dkv, c.kdim));         // Wk^T panels [Dkv/16, kdim, 16]
  p.o = p.v + part(linear_panels_floats_f32(Dkv, c.vdim));         // Wv^T panels [Dkv/16, vdim, 16]
  p.total = p.o + part(linear_panels_floats_f32(c.embed_dim, D));  // Wo^T panels [E/16, D, 16]
  return p;
}

// The panels of w.packed, or four nulls when w has none (linear_packed_f32
// then reads the weights as stored).
struct PanelsF32 {
  const float* q;
  const float* k;
  const float* v;
  const float* o;
};

inline PanelsF32 packed_panels_f32(const AttentionConfig& c, const WeightsF32& w) {
  if (w.packed == nullptr) return PanelsF32{nullptr, nullptr, nullptr, nullptr};
  const PackedLayoutF32 p = packed_layout_f32(c);
  return PanelsF32{w.packed + p.q, w.packed + p.k, w.packed + p.v, w.packed + p.o};
}

}  // namespace detail
}  // namespace attn
