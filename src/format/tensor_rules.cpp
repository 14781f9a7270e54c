// tensor_rules.cpp: reading the rule table (format/tensor_rules.h): which
// row a tensor falls under, whether it applies, its dims.
#include "format/tensor_rules.h"

namespace attn {
namespace format {
namespace {

bool has(const ModelRecord& m, uint32_t flag) { return (m.flags & flag) != 0; }

// Conditions on the model record (m non-null).
bool model_condition(When w, const ModelRecord& m) {
  const bool norm_bias = m.norm == static_cast<uint8_t>(NormKind::kLayerNorm) && has(m, kModelNormBias);
  const bool head = has(m, kModelHeadTied) || has(m, kModelHeadUntied);
  switch (w) {
    case When::kNormBias:
      return norm_bias;
    case When::kFfnBias:
      return has(m, kModelFfnBias);
    case When::kGated:
      return has(m, kModelGatedFfn);
    case When::kGatedFfnBias:
      return has(m, kModelGatedFfn) && has(m, kModelFfnBias);
    case When::kLearnedPositions:
      return has(m, kModelLearnedPositions);
    case When::kTypeVocab:
      return m.type_vocab_size > 0;
    case When::kEmbeddingNorm:
      return has(m, kModelEmbeddingNorm);
    case When::kEmbeddingNormBias:
      return has(m, kModelEmbeddingNorm) && norm_bias;
    case When::kFinalNorm:
      return has(m, kModelFinalNorm);
    case When::kFinalNormBias:
      return has(m, kModelFinalNorm) && norm_bias;
    case When::kUntiedHead:
      return has(m, kModelHeadUntied);
    case When::kPostNorm:
      return !has(m, kModelPreNorm);
    case When::kPlainFfn:
      return !has(m, kModelGatedFfn);
    case When::kHead:
      return head;
    case When::kHeadNoFinalNorm:
      return head && !has(m, kModelFinalNorm);
    case When::kAlways:
    case When::kBiasFlag:
    case When::kRope:
    case When::kOptional:
      break;
  }
  return true;
}

}  // namespace

bool rule_applies(const TensorRule& r, const BlockRecord& b, const ModelRecord* m) {
  if (static_cast<uint16_t>(r.role) >= kFirstLayerRole && m == nullptr) return false;
  switch (r.when) {
    case When::kAlways:
      return true;
    case When::kBiasFlag:
      return (b.flags & kBlockBias) != 0;
    case When::kRope:
      return b.rope != 0;
    case When::kOptional:
      return true;
    default:
      return m != nullptr && model_condition(r.when, *m);
  }
}

const TensorRule* find_rule(uint16_t owner_dtype, uint16_t role, const BlockRecord& b, const ModelRecord* m) {
  const TensorRule* any = nullptr;
  for (const TensorRule& r : kTensorRules) {
    if (r.owner_dtype != owner_dtype || static_cast<uint16_t>(r.role) != role) continue;
    if (rule_applies(r, b, m)) return &r;
    any = &r;
  }
  return any;
}

uint32_t resolve(Dim d, const BlockRecord& b, const ModelRecord* m) {
  const uint32_t kv_heads = b.n_kv_heads != 0 ? b.n_kv_heads : b.num_heads;
  switch (d) {
    case Dim::kNone:
      return 0;
    case Dim::kE:
      return b.embed_dim;
    case Dim::kD:
      return b.num_heads * b.head_dim;  // validated: no overflow
    case Dim::kDkv:
      return kv_heads * b.head_dim;  // <= D
    case Dim::kKdim:
      return b.kdim;
    case Dim::kVdim:
      return b.vdim;
    case Dim::kHalfHead:
      return b.head_dim / 2;
    case Dim::kRopePositions:  // a model's forward reaches every position it has
      return m != nullptr ? m->max_positions : 0;
    case Dim::kF:
      return m != nullptr ? m->ffn_dim : 0;
    case Dim::kV:
      return m != nullptr ? m->vocab_size : 0;
    case Dim::kP:
      return m != nullptr ? m->max_positions : 0;
    case Dim::kT:
      return m != nullptr ? m->type_vocab_size : 0;
    case Dim::kQuantParams:
      return kQuantParamCount;
    case Dim::kIoScales:
      return kIoScaleCount;
    case Dim::kNormConsts:
      return kNormConstCount;
    case Dim::kRescale:
      return kRescaleConstCount;
    case Dim::kFfnConsts:
      return kFfnConstCount;
    case Dim::kActTableS8:
      return 256;
    case Dim::kActTableS16:
      return kActTableS16Entries;
    case Dim::kModelScales:
      return kModelScaleCount;
    case Dim::kAnyLength:
      return 0;
  }
  return 0;
}

bool known_model_dtype(uint16_t dtype) {
  for (const TensorRule& r : kTensorRules) {
    if (r.owner_dtype == dtype && static_cast<uint16_t>(r.role) >= kFirstLayerRole) return true;
  }
  return false;
}

bool known_role(uint16_t role) { return role_name(static_cast<Role>(role)) != nullptr; }

}  // namespace format
}  // namespace attn
