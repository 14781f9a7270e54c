// pack_weights_f32.cpp: W^T panels of the four projections, made once per
// model for the kernels that multiply by them (attention/packed_f32.h).
#include <cstdint>

#include "attention/attend_f32.h"
#include "attention/packed_f32.h"
#include "attn/attention.h"
#include "kernels/kernel_table.h"

namespace attn {
namespace {

// An f32 plan whose config plan_attention() accepts (forward or decode plan).
Status check_plan(const Plan& plan) {
  if (plan.dtype != DType::kF32) return Status::kBadDtype;
  Plan fresh;
  if (plan_attention(plan.config, DType::kF32, 1, 1, &fresh) != Status::kOk) return Status::kPlanMismatch;
  return Status::kOk;
}

Status bytes_of(const detail::PackedLayoutF32& p, size_t* bytes) {
  if (p.total > SIZE_MAX / sizeof(float)) return Status::kSizeOverflow;
  *bytes = static_cast<size_t>(p.total) * sizeof(float);
  return Status::kOk;
}

}  // namespace

Status pack_weights_f32_storage_bytes(const Plan& plan, size_t* bytes) {
  if (bytes == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_plan(plan));
  return bytes_of(detail::packed_layout_f32(plan.config), bytes);
}

Status pack_weights_f32(const Plan& plan, const WeightsF32& w, void* buffer, size_t bytes,
                        WeightsF32* packed) {
  if (packed == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_plan(plan));
  const AttentionConfig& c = plan.config;
  ATTN_TRY(detail::check_weights_f32(c, w));
  const detail::PackedLayoutF32 p = detail::packed_layout_f32(c);
  size_t need = 0;
  ATTN_TRY(bytes_of(p, &need));
  WeightsF32 out = w;
  out.packed = nullptr;
  if (need > 0) {
    if (buffer == nullptr) return Status::kNullArgument;
    if (reinterpret_cast<uintptr_t>(buffer) % ATTN_ARENA_ALIGN != 0) return Status::kArenaMisaligned;
    if (bytes < need) return Status::kBufferTooSmall;
    const int32_t D = c.num_heads * c.head_dim, Dkv = c.num_kv_heads * c.head_dim;
    float* const panels = static_cast<float*>(buffer);  // [p.total]
    detail::best(detail::kPackedLinearF32).pack(matrix(w.wq, D, c.embed_dim), panels + p.q);
    detail::best(detail::kPackedLinearF32).pack(matrix(w.wk, Dkv, c.kdim), panels + p.k);
    detail::best(detail::kPackedLinearF32).pack(matrix(w.wv, Dkv, c.vdim), panels + p.v);
    detail::best(detail::kPackedLinearF32).pack(matrix(w.wo, c.embed_dim, D), panels + p.o);
    out.packed = panels;
  }
  *packed = out;
  return Status::kOk;
}

}  // namespace attn
