// model.cpp: validation and zero-copy views of a .attn blob (formats v1..v3).
//
// load() checks everything once, in file order, and returns the first
// problem found; afterwards block()/tensor() only read validated records.
// Records are copied field-wise into locals with memcpy, so the tables need
// no alignment; tensor data is handed out in place.
#include <cstring>

#include "attn/model.h"
#include "attention/attention_fixed_common.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "the .attn format is little-endian; this loader reads it in place"
#endif

namespace attn {
namespace {

using format::BlockRecord;
using format::Header;
using format::ModelRecord;
using format::Role;
using format::TensorDesc;

template <class T>
T read_record(const uint8_t* p) {
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

// a * b into *out; false when it overflows 64 bits.
bool mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  *out = a * b;
  return true;
}

bool add_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (b > UINT64_MAX - a) return false;
  *out = a + b;
  return true;
}

bool known_dtype(uint16_t d) { return d >= 1 && d <= 6; }

constexpr uint16_t kF32 = static_cast<uint16_t>(DType::kF32);
constexpr uint16_t kS8 = static_cast<uint16_t>(DType::kS8);
constexpr uint16_t kS16 = static_cast<uint16_t>(DType::kS16);
constexpr uint16_t kS32 = static_cast<uint16_t>(DType::kS32);
constexpr uint16_t kS64 = static_cast<uint16_t>(DType::kS64);

// Block dtypes this loader runs: f32 from v1 on, s8/s16 from v2 on.
bool known_block_dtype(uint16_t d, uint16_t version) {
  return d == kF32 || (version >= format::kVersionQuantized && (d == kS8 || d == kS16));
}

// ---- Layer and model tensors of whole models (v3) ----
//
// One row per (model dtype, role): the tensor's dtype, its shape and when the
// model has it. Roles < 64 are layer roles (one per block), the others model
// roles (block = kNoBlock). A present tensor whose condition is false, or a
// role without a row for the model's dtype, is kUnknownRole; an absent one
// whose condition is true, kMissingTensor. A model dtype is readable iff it
// has rows: the integer models add theirs (roles 40..63 and 72..95) below,
// with new Dim / When values if they need them; nothing else changes.

// A dimension, from the model record and the (common) block record.
enum class Dim : uint8_t {
  kE,    // embed_dim
  kF,    // ffn_dim
  kV,    // vocab_size
  kP,    // max_positions
  kT,    // type_vocab_size
  kOne,  // 1
  // Integer models' constant tables.
  kNormConsts,   // format::kNormConstCount
  kRescale,      // format::kRescaleConstCount
  kFfnConsts,    // format::kFfnConstCount
  kActTableS8,   // 256: one entry per int8 input
  kActTableS16,  // kActTableS16Entries
  kModelScales,  // format::kModelScaleCount
};

// When the tensor is present.
enum class When : uint8_t {
  kAlways,
  kNormBias,           // LayerNorm with kModelNormBias
  kFfnBias,            // kModelFfnBias
  kGated,              // kModelGatedFfn
  kGatedFfnBias,       // kModelGatedFfn and kModelFfnBias
  kLearnedPositions,   // kModelLearnedPositions
  kTypeVocab,          // type_vocab_size > 0
  kEmbeddingNorm,      // kModelEmbeddingNorm
  kEmbeddingNormBias,  // kModelEmbeddingNorm, LayerNorm with kModelNormBias
  kFinalNorm,          // kModelFinalNorm
  kFinalNormBias,      // kModelFinalNorm, LayerNorm with kModelNormBias
  kUntiedHead,         // kModelHeadUntied
  kPostNorm,           // not kModelPreNorm
  kPlainFfn,           // not kModelGatedFfn
  kHead,               // kModelHeadTied or kModelHeadUntied
  kHeadNoFinalNorm,    // a head, not kModelFinalNorm
};

struct ModelTensorRule {
  uint16_t model_dtype;  // the model's dtype (ModelRecord::dtype)
  Role role;
  uint16_t dtype;  // the tensor's dtype
  uint16_t rank;   // 1 or 2
  Dim dims[2];     // dims[0..rank)
  When when;
};

constexpr ModelTensorRule kModelTensorRules[] = {
    // f32 models: every tensor f32.
    {kF32, Role::kNorm1Weight, kF32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kF32, Role::kNorm1Bias, kF32, 1, {Dim::kE, Dim::kOne}, When::kNormBias},
    {kF32, Role::kNorm2Weight, kF32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kF32, Role::kNorm2Bias, kF32, 1, {Dim::kE, Dim::kOne}, When::kNormBias},
    {kF32, Role::kFfnW1, kF32, 2, {Dim::kF, Dim::kE}, When::kAlways},
    {kF32, Role::kFfnB1, kF32, 1, {Dim::kF, Dim::kOne}, When::kFfnBias},
    {kF32, Role::kFfnW2, kF32, 2, {Dim::kE, Dim::kF}, When::kAlways},
    {kF32, Role::kFfnB2, kF32, 1, {Dim::kE, Dim::kOne}, When::kFfnBias},
    {kF32, Role::kFfnW3, kF32, 2, {Dim::kF, Dim::kE}, When::kGated},
    {kF32, Role::kFfnB3, kF32, 1, {Dim::kF, Dim::kOne}, When::kGatedFfnBias},
    {kF32, Role::kTokenEmbedding, kF32, 2, {Dim::kV, Dim::kE}, When::kAlways},
    {kF32, Role::kPositionEmbedding, kF32, 2, {Dim::kP, Dim::kE}, When::kLearnedPositions},
    {kF32, Role::kTypeEmbedding, kF32, 2, {Dim::kT, Dim::kE}, When::kTypeVocab},
    {kF32, Role::kEmbeddingNormWeight, kF32, 1, {Dim::kE, Dim::kOne}, When::kEmbeddingNorm},
    {kF32, Role::kEmbeddingNormBias, kF32, 1, {Dim::kE, Dim::kOne}, When::kEmbeddingNormBias},
    {kF32, Role::kFinalNormWeight, kF32, 1, {Dim::kE, Dim::kOne}, When::kFinalNorm},
    {kF32, Role::kFinalNormBias, kF32, 1, {Dim::kE, Dim::kOne}, When::kFinalNormBias},
    {kF32, Role::kLmHead, kF32, 2, {Dim::kV, Dim::kE}, When::kUntiedHead},
    // s8 models: the tables of attn::TransformerWeightsS8. Biases s32, always
    // (they carry the input zero point fold).
    {kS8, Role::kIntNorm1Weight, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntNorm1Bias, kS32, 1, {Dim::kE, Dim::kOne}, When::kNormBias},
    {kS8, Role::kNorm1Consts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntNorm2Weight, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntNorm2Bias, kS32, 1, {Dim::kE, Dim::kOne}, When::kNormBias},
    {kS8, Role::kNorm2Consts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kAlways},
    {kS8, Role::kAttnIn, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kPostNorm},
    {kS8, Role::kAttnOut, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kAlways},
    {kS8, Role::kFfnIn, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kPostNorm},
    {kS8, Role::kIntFfnW1, kS8, 2, {Dim::kF, Dim::kE}, When::kAlways},
    {kS8, Role::kIntFfnB1, kS32, 1, {Dim::kF, Dim::kOne}, When::kAlways},
    {kS8, Role::kFfnW1Multiplier, kS32, 1, {Dim::kF, Dim::kOne}, When::kAlways},
    {kS8, Role::kFfnW1Shift, kS32, 1, {Dim::kF, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntFfnW2, kS8, 2, {Dim::kE, Dim::kF}, When::kAlways},
    {kS8, Role::kIntFfnB2, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS8, Role::kFfnW2Multiplier, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS8, Role::kFfnW2Shift, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntFfnW3, kS8, 2, {Dim::kF, Dim::kE}, When::kGated},
    {kS8, Role::kIntFfnB3, kS32, 1, {Dim::kF, Dim::kOne}, When::kGated},
    {kS8, Role::kFfnW3Multiplier, kS32, 1, {Dim::kF, Dim::kOne}, When::kGated},
    {kS8, Role::kFfnW3Shift, kS32, 1, {Dim::kF, Dim::kOne}, When::kGated},
    {kS8, Role::kFfnConsts, kS32, 1, {Dim::kFfnConsts, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntTokenEmbedding, kS8, 2, {Dim::kV, Dim::kE}, When::kAlways},
    {kS8, Role::kTokenMultiplier, kS32, 1, {Dim::kV, Dim::kOne}, When::kAlways},
    {kS8, Role::kTokenShift, kS32, 1, {Dim::kV, Dim::kOne}, When::kAlways},
    {kS8, Role::kIntPositionEmbedding, kS8, 2, {Dim::kP, Dim::kE}, When::kLearnedPositions},
    {kS8, Role::kPositionMultiplier, kS32, 1, {Dim::kP, Dim::kOne}, When::kLearnedPositions},
    {kS8, Role::kPositionShift, kS32, 1, {Dim::kP, Dim::kOne}, When::kLearnedPositions},
    {kS8, Role::kIntTypeEmbedding, kS32, 1, {Dim::kE, Dim::kOne}, When::kTypeVocab},
    {kS8, Role::kIntEmbeddingNormWeight, kS32, 1, {Dim::kE, Dim::kOne}, When::kEmbeddingNorm},
    {kS8, Role::kIntEmbeddingNormBias, kS32, 1, {Dim::kE, Dim::kOne}, When::kEmbeddingNormBias},
    {kS8, Role::kEmbeddingNormConsts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kEmbeddingNorm},
    {kS8, Role::kIntFinalNormWeight, kS32, 1, {Dim::kE, Dim::kOne}, When::kFinalNorm},
    {kS8, Role::kIntFinalNormBias, kS32, 1, {Dim::kE, Dim::kOne}, When::kFinalNormBias},
    {kS8, Role::kFinalNormConsts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kFinalNorm},
    {kS8, Role::kHeadIn, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kHeadNoFinalNorm},
    {kS8, Role::kIntLmHead, kS8, 2, {Dim::kV, Dim::kE}, When::kUntiedHead},
    {kS8, Role::kHeadMultiplier, kS32, 1, {Dim::kV, Dim::kOne}, When::kHead},
    {kS8, Role::kHeadShift, kS32, 1, {Dim::kV, Dim::kOne}, When::kHead},
    {kS8, Role::kModelScales, kF32, 1, {Dim::kModelScales, Dim::kOne}, When::kAlways},
    {kS8, Role::kFfnActTable, kS8, 1, {Dim::kActTableS8, Dim::kOne}, When::kPlainFfn},
    {kS8, Role::kFfnActTable, kS16, 1, {Dim::kActTableS8, Dim::kOne}, When::kGated},
    {kS8, Role::kHeadBias, kS32, 1, {Dim::kV, Dim::kOne}, When::kHead},
    // s16 models: attn::TransformerWeightsS16. Biases s64, iff the config has them; no head bias.
    {kS16, Role::kIntNorm1Weight, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntNorm1Bias, kS32, 1, {Dim::kE, Dim::kOne}, When::kNormBias},
    {kS16, Role::kNorm1Consts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntNorm2Weight, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntNorm2Bias, kS32, 1, {Dim::kE, Dim::kOne}, When::kNormBias},
    {kS16, Role::kNorm2Consts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kAlways},
    {kS16, Role::kAttnIn, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kPostNorm},
    {kS16, Role::kAttnOut, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kAlways},
    {kS16, Role::kFfnIn, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kPostNorm},
    {kS16, Role::kIntFfnW1, kS8, 2, {Dim::kF, Dim::kE}, When::kAlways},
    {kS16, Role::kIntFfnB1, kS64, 1, {Dim::kF, Dim::kOne}, When::kFfnBias},
    {kS16, Role::kFfnW1Multiplier, kS32, 1, {Dim::kF, Dim::kOne}, When::kAlways},
    {kS16, Role::kFfnW1Shift, kS32, 1, {Dim::kF, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntFfnW2, kS8, 2, {Dim::kE, Dim::kF}, When::kAlways},
    {kS16, Role::kIntFfnB2, kS64, 1, {Dim::kE, Dim::kOne}, When::kFfnBias},
    {kS16, Role::kFfnW2Multiplier, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS16, Role::kFfnW2Shift, kS32, 1, {Dim::kE, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntFfnW3, kS8, 2, {Dim::kF, Dim::kE}, When::kGated},
    {kS16, Role::kIntFfnB3, kS64, 1, {Dim::kF, Dim::kOne}, When::kGatedFfnBias},
    {kS16, Role::kFfnW3Multiplier, kS32, 1, {Dim::kF, Dim::kOne}, When::kGated},
    {kS16, Role::kFfnW3Shift, kS32, 1, {Dim::kF, Dim::kOne}, When::kGated},
    {kS16, Role::kFfnConsts, kS32, 1, {Dim::kFfnConsts, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntTokenEmbedding, kS8, 2, {Dim::kV, Dim::kE}, When::kAlways},
    {kS16, Role::kTokenMultiplier, kS32, 1, {Dim::kV, Dim::kOne}, When::kAlways},
    {kS16, Role::kTokenShift, kS32, 1, {Dim::kV, Dim::kOne}, When::kAlways},
    {kS16, Role::kIntPositionEmbedding, kS8, 2, {Dim::kP, Dim::kE}, When::kLearnedPositions},
    {kS16, Role::kPositionMultiplier, kS32, 1, {Dim::kP, Dim::kOne}, When::kLearnedPositions},
    {kS16, Role::kPositionShift, kS32, 1, {Dim::kP, Dim::kOne}, When::kLearnedPositions},
    {kS16, Role::kIntTypeEmbedding, kS32, 1, {Dim::kE, Dim::kOne}, When::kTypeVocab},
    {kS16, Role::kIntEmbeddingNormWeight, kS32, 1, {Dim::kE, Dim::kOne}, When::kEmbeddingNorm},
    {kS16, Role::kIntEmbeddingNormBias, kS32, 1, {Dim::kE, Dim::kOne}, When::kEmbeddingNormBias},
    {kS16, Role::kEmbeddingNormConsts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kEmbeddingNorm},
    {kS16, Role::kIntFinalNormWeight, kS32, 1, {Dim::kE, Dim::kOne}, When::kFinalNorm},
    {kS16, Role::kIntFinalNormBias, kS32, 1, {Dim::kE, Dim::kOne}, When::kFinalNormBias},
    {kS16, Role::kFinalNormConsts, kS64, 1, {Dim::kNormConsts, Dim::kOne}, When::kFinalNorm},
    {kS16, Role::kHeadIn, kS32, 1, {Dim::kRescale, Dim::kOne}, When::kHeadNoFinalNorm},
    {kS16, Role::kIntLmHead, kS8, 2, {Dim::kV, Dim::kE}, When::kUntiedHead},
    {kS16, Role::kHeadMultiplier, kS32, 1, {Dim::kV, Dim::kOne}, When::kHead},
    {kS16, Role::kHeadShift, kS32, 1, {Dim::kV, Dim::kOne}, When::kHead},
    {kS16, Role::kModelScales, kF32, 1, {Dim::kModelScales, Dim::kOne}, When::kAlways},
    {kS16, Role::kFfnActTable, kS32, 1, {Dim::kActTableS16, Dim::kOne}, When::kAlways},
};

// Model dtypes this loader reads: those with rows.
bool known_model_dtype(uint16_t d) {
  for (const ModelTensorRule& r : kModelTensorRules) {
    if (r.model_dtype == d) return true;
  }
  return false;
}

bool layer_or_model_role(uint16_t role) {
  for (const ModelTensorRule& r : kModelTensorRules) {
    if (static_cast<uint16_t>(r.role) == role) return true;
  }
  return false;
}

bool model_role(uint16_t role) { return role >= format::kFirstModelRole && role <= format::kMaxModelRole; }

bool has(const ModelRecord& m, uint32_t flag) { return (m.flags & flag) != 0; }

bool rule_applies(const ModelRecord& m, When w) {
  const bool norm_bias =
      m.norm == static_cast<uint8_t>(NormKind::kLayerNorm) && has(m, format::kModelNormBias);
  switch (w) {
    case When::kAlways:
      return true;
    case When::kNormBias:
      return norm_bias;
    case When::kFfnBias:
      return has(m, format::kModelFfnBias);
    case When::kGated:
      return has(m, format::kModelGatedFfn);
    case When::kGatedFfnBias:
      return has(m, format::kModelGatedFfn) && has(m, format::kModelFfnBias);
    case When::kLearnedPositions:
      return has(m, format::kModelLearnedPositions);
    case When::kTypeVocab:
      return m.type_vocab_size > 0;
    case When::kEmbeddingNorm:
      return has(m, format::kModelEmbeddingNorm);
    case When::kEmbeddingNormBias:
      return has(m, format::kModelEmbeddingNorm) && norm_bias;
    case When::kFinalNorm:
      return has(m, format::kModelFinalNorm);
    case When::kFinalNormBias:
      return has(m, format::kModelFinalNorm) && norm_bias;
    case When::kUntiedHead:
      return has(m, format::kModelHeadUntied);
    case When::kPostNorm:
      return !has(m, format::kModelPreNorm);
    case When::kPlainFfn:
      return !has(m, format::kModelGatedFfn);
    case When::kHead:
      return has(m, format::kModelHeadTied) || has(m, format::kModelHeadUntied);
    case When::kHeadNoFinalNorm:
      return (has(m, format::kModelHeadTied) || has(m, format::kModelHeadUntied)) &&
             !has(m, format::kModelFinalNorm);
  }
  return false;
}

// The row of (model dtype, role) whose condition holds for `m` (a role may
// have one row per condition, e.g. the s8 activation table: s8 plain, s16
// gated); else any row of the pair (its condition false: the tensor is not
// allowed); null when the model dtype has no such role.
const ModelTensorRule* model_rule(const ModelRecord& m, uint16_t role) {
  const ModelTensorRule* any = nullptr;
  for (const ModelTensorRule& r : kModelTensorRules) {
    if (r.model_dtype != m.dtype || static_cast<uint16_t>(r.role) != role) continue;
    if (rule_applies(m, r.when)) return &r;
    any = &r;
  }
  return any;
}

uint32_t resolve(Dim d, const ModelRecord& m, const BlockRecord& b) {
  switch (d) {
    case Dim::kE:
      return b.embed_dim;
    case Dim::kF:
      return m.ffn_dim;
    case Dim::kV:
      return m.vocab_size;
    case Dim::kP:
      return m.max_positions;
    case Dim::kT:
      return m.type_vocab_size;
    case Dim::kOne:
      return 1;
    case Dim::kNormConsts:
      return format::kNormConstCount;
    case Dim::kRescale:
      return format::kRescaleConstCount;
    case Dim::kFfnConsts:
      return format::kFfnConstCount;
    case Dim::kActTableS8:
      return 256;
    case Dim::kActTableS16:
      return kActTableS16Entries;
    case Dim::kModelScales:
      return format::kModelScaleCount;
  }
  return 0;
}

// Roles this loader knows (whether they may appear is checked per block / per model).
bool known_role(uint16_t r) {
  return (r >= 1 && r <= 8) || r == static_cast<uint16_t>(Role::kUser) ||
         (r >= static_cast<uint16_t>(Role::kQMultiplier) && r <= static_cast<uint16_t>(Role::kRopeSin)) ||
         layer_or_model_role(r);
}

bool rope_role(uint16_t r) {
  return r == static_cast<uint16_t>(Role::kRopeCos) || r == static_cast<uint16_t>(Role::kRopeSin);
}

bool known_layout(uint16_t l) { return l == static_cast<uint16_t>(format::Layout::kPlain); }

// What a block needs for `role`: dtype, rank and dims. False when the role
// does not belong in a block of this dtype. The rope tables' first dim (their
// positions) is the converter's choice: dims[0] 0 there means any.
struct Expected {
  uint16_t dtype;
  uint16_t rank;
  uint32_t dims[2];
  bool required;
};

// f32 blocks: every tensor f32. s8 blocks: int8 weights, int32 biases (always:
// they carry the zero-point fold), the quantization tables. s16 blocks: int8
// weights, int64 biases iff the bias flag, the quantization tables.
bool expected_tensor(const BlockRecord& b, const ModelRecord* m, uint16_t role, Expected* e) {
  const uint32_t d = b.num_heads * b.head_dim;  // validated: no overflow
  const uint32_t dkv = (b.n_kv_heads != 0 ? b.n_kv_heads : b.num_heads) * b.head_dim;  // <= d
  const bool bias = (b.flags & format::kBlockBias) != 0;
  const bool quant = b.dtype != kF32;
  const uint16_t wdt = quant ? kS8 : b.dtype;
  const uint16_t bdt = b.dtype == kS8 ? kS32 : b.dtype == kS16 ? kS64 : b.dtype;
  const bool has_bias = b.dtype == kS8 ? true : bias;
  switch (static_cast<Role>(role)) {
    case Role::kWq:
      *e = {wdt, 2, {d, b.embed_dim}, true};
      return true;
    case Role::kWk:
      *e = {wdt, 2, {dkv, b.kdim}, true};
      return true;
    case Role::kWv:
      *e = {wdt, 2, {dkv, b.vdim}, true};
      return true;
    case Role::kWo:
      *e = {wdt, 2, {b.embed_dim, d}, true};
      return true;
    case Role::kBq:
      *e = {bdt, 1, {d, 0}, has_bias};
      return true;
    case Role::kBk:
    case Role::kBv:
      *e = {bdt, 1, {dkv, 0}, has_bias};
      return true;
    case Role::kBo:
      *e = {bdt, 1, {b.embed_dim, 0}, has_bias};
      return true;
    case Role::kQMultiplier:
    case Role::kQShift:
      *e = {kS32, 1, {d, 0}, true};
      return quant;
    case Role::kKMultiplier:
    case Role::kKShift:
    case Role::kVMultiplier:
    case Role::kVShift:
      *e = {kS32, 1, {dkv, 0}, true};
      return quant;
    case Role::kOMultiplier:
    case Role::kOShift:
      *e = {kS32, 1, {b.embed_dim, 0}, true};
      return quant;
    case Role::kQuantParams:
      *e = {kS32, 1, {format::kQuantParamCount, 0}, true};
      return quant;
    case Role::kIoScale:
      *e = {kF32, 1, {format::kIoScaleCount, 0}, true};
      return quant;
    case Role::kRopeCos:
    case Role::kRopeSin:
      // [positions, head_dim / 2], Q1.14; positions: the converter's choice (0: any) in a
      // block file, a model's max_positions in a model (its forward reaches every one).
      *e = {kS16, 2, {m != nullptr ? m->max_positions : 0, b.head_dim / 2}, true};
      return quant && b.rope != 0;
    default:
      break;
  }
  // A layer role of a whole model: allowed iff required.
  if (m == nullptr) return false;
  const ModelTensorRule* r = model_rule(*m, role);
  if (r == nullptr || model_role(role) || !rule_applies(*m, r->when)) return false;
  *e = {r->dtype, r->rank, {resolve(r->dims[0], *m, b), resolve(r->dims[1], *m, b)}, true};
  return true;
}

// Largest requantization shift of the block's integer forward.
int32_t max_shift(uint16_t block_dtype) { return block_dtype == kS16 ? 14 : 30; }

int32_t read_s32(const uint8_t* p, size_t i) {
  int32_t v = 0;
  std::memcpy(&v, p + i * sizeof v, sizeof v);
  return v;
}

// A float's bits (read as an integer: no float arithmetic here) are finite, > 0.
bool positive_finite_bits(uint32_t bits) {
  return (bits >> 31) == 0 && ((bits >> 23) & 0xFFu) != 0xFFu && bits != 0;
}

int64_t read_s64(const uint8_t* p, size_t i) {
  int64_t v = 0;
  std::memcpy(&v, p + i * sizeof v, sizeof v);
  return v;
}

bool zero_point_ok(int64_t zp, bool int8) { return int8 ? zp >= -128 && zp <= 127 : zp == 0; }

// Multipliers >= 0 (n entries).
Status check_multipliers(const uint8_t* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (read_s32(data, i) < 0) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

// Shifts in [-31, max] (n entries).
Status check_shifts(const uint8_t* data, size_t n, int32_t max) {
  for (size_t i = 0; i < n; ++i) {
    const int32_t s = read_s32(data, i);
    if (s < -31 || s > max) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

// Biases of a projection over `in` inputs within the accumulator bound (s32: s8, s64: s16).
Status check_biases(const uint8_t* data, size_t n, uint16_t dtype, int32_t in) {
  for (size_t i = 0; i < n; ++i) {
    const bool ok = dtype == kS32 ? detail::bias_in_range(read_s32(data, i), in)
                                  : detail::bias_in_range(read_s64(data, i), in);
    if (!ok) return Status::kBiasOutOfRange;
  }
  return Status::kOk;
}

// NormFixed's constants: eps in [0, 2^62), shift [-31, 30], the output zero point
// of an int8 matmul input (int8) or 0.
Status check_norm_consts(const uint8_t* data, bool int8_out) {
  const int64_t eps = read_s64(data, format::kNormEps), shift = read_s64(data, format::kNormShift);
  if (eps < 0 || eps >= (int64_t{1} << 62) || shift < -31 || shift > 30 ||
      !zero_point_ok(read_s64(data, format::kNormOutputZeroPoint), int8_out))
    return Status::kBadQuantParams;
  return Status::kOk;
}

// RescaleFixed: multiplier >= 0, shift [-31, 30], zero point of the activation type.
Status check_rescale(const uint8_t* data, bool int8) {
  if (read_s32(data, format::kRescaleMultiplier) < 0) return Status::kBadQuantParams;
  const int32_t shift = read_s32(data, format::kRescaleShift);
  if (shift < -31 || shift > 30 || !zero_point_ok(read_s32(data, format::kRescaleZeroPoint), int8))
    return Status::kBadQuantParams;
  return Status::kOk;
}

// The values of one layer or model table of an integer model, with the rules
// transformer_forward_s8 / _s16 apply at run time (and the bound the s16
// activation table's interpolation needs).
Status check_model_values(const ModelRecord& m, const BlockRecord& b, const TensorDesc& t,
                          const uint8_t* data) {
  if (m.dtype != kS8 && m.dtype != kS16) return Status::kOk;
  const bool s8 = m.dtype == kS8;
  const bool pre_norm = has(m, format::kModelPreNorm), gated = has(m, format::kModelGatedFfn);
  const bool head = rule_applies(m, When::kHead);
  const int32_t proj_shift = max_shift(m.dtype);  // the FFN and head projections
  const int32_t e = static_cast<int32_t>(b.embed_dim), f = static_cast<int32_t>(m.ffn_dim);
  const size_t n = t.dims[0];
  switch (static_cast<Role>(t.role)) {
    case Role::kIntNorm1Bias:
    case Role::kIntNorm2Bias:
    case Role::kIntEmbeddingNormBias:
    case Role::kIntFinalNormBias:
      for (size_t i = 0; i < n; ++i) {  // |bias| < 2^29, as the forward's norm check
        const int32_t v = read_s32(data, i);
        if (v <= -(int32_t{1} << 29) || v >= (int32_t{1} << 29)) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Role::kNorm1Consts:
    case Role::kNorm2Consts:  // pre-norm: into the attention / FFN input; post-norm: the int32 residual
      return check_norm_consts(data, s8 && pre_norm);
    case Role::kEmbeddingNormConsts:  // onto the residual
      return check_norm_consts(data, false);
    case Role::kFinalNormConsts:  // into the head input, or the int32 hidden output
      return check_norm_consts(data, s8 && head);
    case Role::kAttnIn:
    case Role::kAttnOut:
    case Role::kFfnIn:
    case Role::kHeadIn:
      return check_rescale(data, s8);
    case Role::kFfnW1Multiplier:
    case Role::kFfnW2Multiplier:
    case Role::kFfnW3Multiplier:
    case Role::kTokenMultiplier:
    case Role::kPositionMultiplier:
    case Role::kHeadMultiplier:
      return check_multipliers(data, n);
    case Role::kFfnW1Shift:
    case Role::kFfnW2Shift:
    case Role::kFfnW3Shift:
    case Role::kHeadShift:
      return check_shifts(data, n, proj_shift);
    case Role::kTokenShift:
    case Role::kPositionShift:  // embedding rows onto the residual grid: Q0.31, [-31, 30]
      return check_shifts(data, n, 30);
    case Role::kIntFfnB1:
    case Role::kIntFfnB3:
      return check_biases(data, n, t.dtype, e);
    case Role::kIntFfnB2:
      return check_biases(data, n, t.dtype, f);
    case Role::kHeadBias:
      return check_biases(data, n, t.dtype, e);
    case Role::kFfnActTable:
      if (t.dtype == kS32) {  // s16: |entry| <= 2^20 keeps the int32 interpolation exact
        for (size_t i = 0; i < n; ++i) {
          const int32_t v = read_s32(data, i);
          if (v < -(1 << 20) || v > (1 << 20)) return Status::kBadQuantParams;
        }
      }
      return Status::kOk;
    case Role::kFfnConsts: {
      using namespace format;
      const int32_t h1 = read_s32(data, kFfnH1ZeroPoint), h3 = read_s32(data, kFfnH3ZeroPoint);
      const int32_t g = read_s32(data, kFfnGZeroPoint);
      const int32_t mult = read_s32(data, kFfnActMultiplier), shift = read_s32(data, kFfnActShift);
      if (s8 && !gated) {  // the table alone: no gate product
        if (h3 != 0 || mult != 0 || shift != 0) return Status::kBadReserved;
        return zero_point_ok(h1, true) && zero_point_ok(g, true) ? Status::kOk : Status::kBadQuantParams;
      }
      if (!zero_point_ok(h1, s8) || !zero_point_ok(h3, s8) || !zero_point_ok(g, s8) || mult < 0 ||
          shift < -31 || shift > (s8 || !gated ? 30 : 14))
        return Status::kBadQuantParams;
      return Status::kOk;
    }
    case Role::kModelScales:
      for (size_t i = 0; i < n; ++i) {
        if (!positive_finite_bits(static_cast<uint32_t>(read_s32(data, i)))) return Status::kBadQuantParams;
      }
      return Status::kOk;
    default:  // weights, norm weights, the type row: any value
      return Status::kOk;
  }
}

// Values of one quantization table or s8/s16 bias, with the rules forward_s8 / forward_s16 apply at run time;
// an integer model's layer tables with check_model_values.
Status check_quant_table(const BlockRecord& b, const ModelRecord* m, const TensorDesc& t,
                         const uint8_t* data) {
  if (m != nullptr && t.role >= static_cast<uint16_t>(Role::kNorm1Weight))
    return check_model_values(*m, b, t, data);
  const size_t n = t.dims[0];
  switch (static_cast<Role>(t.role)) {
    case Role::kQMultiplier:
    case Role::kKMultiplier:
    case Role::kVMultiplier:
    case Role::kOMultiplier:
      for (size_t i = 0; i < n; ++i) {
        if (read_s32(data, i) < 0) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Role::kQShift:
    case Role::kKShift:
    case Role::kVShift:
    case Role::kOShift:
      for (size_t i = 0; i < n; ++i) {
        const int32_t s = read_s32(data, i);
        if (s < -31 || s > max_shift(b.dtype)) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Role::kBq:
    case Role::kBk:
    case Role::kBv:
    case Role::kBo: {
      if (b.dtype == kF32) return Status::kOk;
      // The accumulator bound over the projection's inputs (FORMAT.md, "Bias bound").
      const uint32_t d = b.num_heads * b.head_dim;
      const uint32_t ins[] = {b.embed_dim, b.kdim, b.vdim, d};
      const int32_t in = static_cast<int32_t>(ins[t.role - static_cast<uint16_t>(Role::kBq)]);
      for (size_t i = 0; i < n; ++i) {
        bool ok = false;
        if (b.dtype == kS8) {
          ok = detail::bias_in_range(read_s32(data, i), in);
        } else {
          int64_t v = 0;
          std::memcpy(&v, data + i * sizeof v, sizeof v);
          ok = detail::bias_in_range(v, in);
        }
        if (!ok) return Status::kBiasOutOfRange;
      }
      return Status::kOk;
    }
    case Role::kRopeCos:
    case Role::kRopeSin:
      for (size_t i = 0; i < n * t.dims[1]; ++i) {
        int16_t v = 0;
        std::memcpy(&v, data + i * sizeof v, sizeof v);
        if (v < -(1 << kRopeFracBits) || v > (1 << kRopeFracBits)) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Role::kIoScale:
      for (size_t i = 0; i < n; ++i) {
        uint32_t bits = 0;
        std::memcpy(&bits, data + i * sizeof bits, sizeof bits);
        if (!positive_finite_bits(bits)) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Role::kQuantParams: {
      using namespace format;
      const int32_t coverage = read_s32(data, kQpMaskCoverage), key_length = read_s32(data, kQpMaskKeyLength);
      if (coverage != kMaskKeyLength && key_length != 0) return Status::kBadReserved;
      if (coverage < 0 || coverage > kMaskKeyLength || (coverage == kMaskKeyLength && key_length < 1) ||
          key_length > ATTN_MAX_SEQ)
        return Status::kBadQuantParams;
      for (uint32_t i = kQpQueryZeroPoint; i <= kQpContextZeroPoint; ++i) {
        const int32_t zp = read_s32(data, i);
        if (b.dtype == kS16 ? zp != 0 : (zp < -128 || zp > 127)) return Status::kBadQuantParams;
      }
      uint32_t exp_multiplier = 0;
      std::memcpy(&exp_multiplier, data + kQpExpMultiplier * sizeof(int32_t), sizeof exp_multiplier);
      const int32_t exp_shift = read_s32(data, kQpExpShift), diff_limit = read_s32(data, kQpDiffLimit);
      const int32_t score_shift = read_s32(data, kQpScoreShift);
      if (exp_multiplier < 0x80000000u || exp_shift < 0 || exp_shift > 31 || diff_limit < 0 ||
          static_cast<uint32_t>(diff_limit) > (0xFFFFFFFFu >> exp_shift) || score_shift < 0)
        return Status::kBadQuantParams;
      if (b.dtype == kS8 ? score_shift > 30 : (score_shift > 40 || (int64_t{1} << score_shift) <= b.head_dim))
        return Status::kBadQuantParams;
      const int32_t cm = read_s32(data, kQpContextMultiplier), cs = read_s32(data, kQpContextShift);
      if (cm < 0 || cs < -31 || cs > max_shift(b.dtype)) return Status::kBadQuantParams;
      return Status::kOk;
    }
    default:
      return Status::kOk;
  }
}

// Roles a block of this dtype must or may hold, as bit sets.
void block_roles(const BlockRecord& b, const ModelRecord* m, uint64_t* required, uint64_t* allowed) {
  *required = 0;
  *allowed = 0;
  for (uint16_t r = 1; r <= format::kMaxRole; ++r) {
    Expected e{};
    if (!expected_tensor(b, m, r, &e)) continue;
    *allowed |= uint64_t{1} << r;
    if (e.required) *required |= uint64_t{1} << r;
  }
}

Status check_dim(uint32_t v, uint32_t cap) {
  if (v == 0) return Status::kBadDims;
  if (v > cap) return Status::kDimsTooLarge;
  return Status::kOk;
}

constexpr uint32_t kMaxRopeBaseBits = 0x7149F2CAu;  // 1e30f, as plan_attention() allows

Status check_block(const BlockRecord& b, uint16_t version) {
  if (!known_dtype(b.dtype) || !known_block_dtype(b.dtype, version)) return Status::kUnknownDtype;
  if ((b.flags & ~format::kKnownBlockFlags) != 0) return Status::kUnknownFlags;
  for (uint32_t r : b.reserved) {
    if (r != 0) return Status::kBadReserved;
  }
  const uint32_t kMaxDim = ATTN_MAX_DIM;
  ATTN_TRY(check_dim(b.embed_dim, kMaxDim));
  ATTN_TRY(check_dim(b.num_heads, ATTN_MAX_HEADS));
  ATTN_TRY(check_dim(b.head_dim, kMaxDim));
  ATTN_TRY(check_dim(b.kdim, kMaxDim));
  ATTN_TRY(check_dim(b.vdim, kMaxDim));
  if (static_cast<uint64_t>(b.num_heads) * b.head_dim > kMaxDim) return Status::kDimsTooLarge;
  // int8 scores: |score| <= head_dim * 255^2 must stay below 2^30 (forward_s8's limit).
  if (b.dtype == kS8 && b.head_dim >= (1u << 14)) return Status::kDimsTooLarge;
  // Grouped-query attention: K/V heads divide the query heads (0: as many).
  if (b.n_kv_heads > b.num_heads || (b.n_kv_heads != 0 && b.num_heads % b.n_kv_heads != 0))
    return Status::kBadKvHeads;
  // RoPE: the base as float32 bits in (0, 1e30], the planner's range (positive
  // floats order like their bits; sign, inf, NaN exceed it); rotary pairs need an even head_dim.
  if (b.rope != 0 && (b.rope > kMaxRopeBaseBits || b.head_dim % 2 != 0)) return Status::kBadRope;
  return Status::kOk;
}

// Name: non-empty, NUL within the field, zero bytes after the NUL.
Status check_name(const char (&name)[format::kNameBytes]) {
  if (name[0] == '\0') return Status::kBadTensorName;
  size_t n = 0;
  while (n < format::kNameBytes && name[n] != '\0') ++n;
  if (n == format::kNameBytes) return Status::kBadTensorName;
  for (size_t i = n; i < format::kNameBytes; ++i) {
    if (name[i] != '\0') return Status::kBadTensorName;
  }
  return Status::kOk;
}

// Everything about one tensor that needs no other record but the header.
Status check_tensor(const TensorDesc& t, const Header& h, uint64_t data_bytes) {
  ATTN_TRY(check_name(t.name));
  if (t.reserved0 != 0 || t.reserved[0] != 0 || t.reserved[1] != 0) return Status::kBadReserved;
  if (!known_role(t.role)) return Status::kUnknownRole;
  if (!known_dtype(t.dtype)) return Status::kUnknownDtype;
  if (!known_layout(t.layout)) return Status::kUnknownLayout;
  if (t.role == static_cast<uint16_t>(Role::kUser) || model_role(t.role)) {
    if (t.block != format::kNoBlock) return Status::kBadBlock;
  } else if (t.block >= h.block_count) {
    return Status::kBadBlock;
  }
  if (t.rank < 1 || t.rank > format::kMaxRank) return Status::kBadDims;
  uint64_t elements = 1;
  for (int i = 0; i < format::kMaxRank; ++i) {
    const uint32_t v = t.dims[i];
    if (i >= t.rank) {
      if (v != 0) return Status::kBadReserved;
      continue;
    }
    ATTN_TRY(check_dim(v, ATTN_MAX_TENSOR_DIM));
    if (!mul_u64(elements, v, &elements)) return Status::kSizeOverflow;
  }
  uint64_t bytes = 0;
  if (!mul_u64(elements, dtype_size(static_cast<DType>(t.dtype)), &bytes)) return Status::kSizeOverflow;
  if (bytes != t.byte_size) return Status::kBadByteSize;
  if (t.offset % h.data_align != 0) return Status::kTensorMisaligned;
  uint64_t end = 0;
  if (!add_u64(t.offset, t.byte_size, &end)) return Status::kSizeOverflow;
  if (end > data_bytes) return Status::kOffsetOutOfBounds;
  return Status::kOk;
}

// A table of `count` records of `record` bytes at `offset`, not before
// `min_offset`; its end in *end.
Status check_table(uint64_t offset, uint64_t count, uint64_t record, uint64_t min_offset, uint64_t file_size,
                   uint64_t* end) {
  uint64_t bytes = 0;
  if (!mul_u64(count, record, &bytes) || !add_u64(offset, bytes, end)) return Status::kSizeOverflow;
  if (offset < min_offset || *end > file_size) return Status::kOffsetOutOfBounds;
  return Status::kOk;
}

// Magic, version and header size: enough to trust header_size and file_size's position.
Status check_preamble(const uint8_t* p, size_t size) {
  if (size < sizeof(uint32_t)) return Status::kTruncated;
  uint32_t magic = 0;
  std::memcpy(&magic, p, sizeof magic);
  if (magic != format::kMagic) return Status::kBadMagic;
  if (size < offsetof(Header, crc32)) return Status::kTruncated;
  uint16_t version = 0, header_size = 0;
  std::memcpy(&version, p + offsetof(Header, version), sizeof version);
  std::memcpy(&header_size, p + offsetof(Header, header_size), sizeof header_size);
  if (version == 0 || version > format::kVersion) return Status::kUnsupportedVersion;
  if (header_size != sizeof(Header)) return Status::kBadHeaderSize;  // the only size of v1..v3
  if (size < sizeof(Header)) return Status::kTruncated;
  return Status::kOk;
}

Status check_header(const uint8_t* p, size_t size, Header* h) {
  ATTN_TRY(check_preamble(p, size));
  *h = read_record<Header>(p);
  if (h->file_size > size) return Status::kTruncated;
  if (h->file_size < size) return Status::kFileSizeMismatch;
  if (crc32(p + format::kCrcStart, size - format::kCrcStart) != h->crc32) return Status::kCrcMismatch;
  if ((h->flags & ~format::kKnownHeaderFlags) != 0) return Status::kUnknownFlags;
  const bool model = (h->flags & format::kHeaderModel) != 0;
  if (model && h->version < format::kVersionModel) return Status::kUnknownFlags;  // v1, v2 define no flags
  if (h->reserved0 != 0) return Status::kBadReserved;
  const uint32_t a = h->data_align;
  if (a < format::kMinDataAlign || a > ATTN_MAX_DATA_ALIGN || (a & (a - 1)) != 0)
    return Status::kBadAlignment;
  if (h->block_count > ATTN_MAX_BLOCKS || h->tensor_count > ATTN_MAX_TENSORS) return Status::kTooManyEntries;
  uint64_t blocks_end = 0, tensors_end = 0;
  // A model's record sits between the header and the block table.
  const uint64_t blocks_min = sizeof(Header) + (model ? sizeof(ModelRecord) : 0);
  ATTN_TRY(check_table(h->blocks_offset, h->block_count, sizeof(BlockRecord), blocks_min, h->file_size,
                       &blocks_end));
  ATTN_TRY(check_table(h->tensors_offset, h->tensor_count, sizeof(TensorDesc), blocks_end, h->file_size,
                       &tensors_end));
  if (h->data_offset < tensors_end || h->data_offset > h->file_size) return Status::kOffsetOutOfBounds;
  if (h->data_offset % a != 0) return Status::kTensorMisaligned;
  return Status::kOk;
}

// Norm eps: float32 bits of a finite float in (0, 1) (positive floats order like their bits).
constexpr uint32_t kOneBits = 0x3F800000u;

// The model record's own fields (the layers are checked against it later).
Status check_model_record(const ModelRecord& m, const Header& h) {
  for (uint32_t r : m.reserved) {
    if (r != 0) return Status::kBadReserved;
  }
  if ((m.flags & ~format::kKnownModelFlags) != 0) return Status::kUnknownFlags;
  if (h.block_count == 0 || h.block_count > ATTN_MAX_LAYERS) return Status::kBadNumLayers;
  if (m.vocab_size == 0 || m.vocab_size > format::kMaxVocab || m.type_vocab_size > format::kMaxTypeVocab)
    return Status::kBadVocab;
  if ((m.flags & format::kModelByteVocab) != 0 && m.vocab_size < 256) return Status::kBadVocab;
  if (m.max_positions == 0 || m.max_positions > ATTN_MAX_SEQ) return Status::kBadMaxPositions;
  if (m.ffn_dim == 0 || m.ffn_dim > ATTN_MAX_DIM) return Status::kBadFfnDim;
  if (!known_dtype(m.dtype) || !known_block_dtype(m.dtype, h.version) || !known_model_dtype(m.dtype))
    return Status::kUnknownDtype;
  const bool layer_norm = m.norm == static_cast<uint8_t>(NormKind::kLayerNorm);
  if (!layer_norm && m.norm != static_cast<uint8_t>(NormKind::kRmsNorm)) return Status::kBadNorm;
  if (!layer_norm && (m.flags & format::kModelNormBias) != 0) return Status::kBadNorm;  // RMSNorm has no bias
  if (m.norm_eps == 0 || m.norm_eps >= kOneBits) return Status::kBadNorm;
  if (m.activation < static_cast<uint8_t>(Activation::kGelu) ||
      m.activation > static_cast<uint8_t>(Activation::kSilu))
    return Status::kBadActivation;
  if ((m.flags & format::kModelHeadTied) != 0 && (m.flags & format::kModelHeadUntied) != 0)
    return Status::kBadHead;
  return Status::kOk;
}

// Every layer's block record: self-attention of width E, of the model's
// dtype, the same as the first layer's.
Status check_layer_block(const BlockRecord& b, const BlockRecord& first, const ModelRecord& m) {
  if (b.dtype != m.dtype || b.kdim != b.embed_dim || b.vdim != b.embed_dim) return Status::kBadModelRecord;
  if (std::memcmp(&b, &first, sizeof b) != 0) return Status::kBadModelRecord;
  return Status::kOk;
}

// The model tensors (roles 64..127): each once, present iff its rule applies,
// of its rule's dtype and shape. O(tensors), one bit set.
Status check_model_tensors(const uint8_t* p, const Header& h, const ModelRecord* m,
                           const BlockRecord& first) {
  const size_t tensors_at = static_cast<size_t>(h.tensors_offset);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const TensorDesc t = read_record<TensorDesc>(p + tensors_at + size_t{i} * sizeof(TensorDesc));
    if (!model_role(t.role)) continue;
    const ModelTensorRule* r = m != nullptr ? model_rule(*m, t.role) : nullptr;
    if (r == nullptr || !rule_applies(*m, r->when)) return Status::kUnknownRole;
    const uint64_t bit = uint64_t{1} << (t.role - format::kFirstModelRole);
    if ((seen & bit) != 0) return Status::kDuplicateRole;
    seen |= bit;
    if (t.dtype != r->dtype) return Status::kDtypeMismatch;
    if (t.layout != static_cast<uint16_t>(format::Layout::kPlain)) return Status::kUnknownLayout;
    if (t.rank != r->rank) return Status::kDimsMismatch;
    for (uint16_t k = 0; k < r->rank; ++k) {
      if (t.dims[k] != resolve(r->dims[k], *m, first)) return Status::kDimsMismatch;
    }
    // Offsets and sizes are checked: the table lies inside the data section.
    ATTN_TRY(check_model_values(*m, first, t,
                                p + static_cast<size_t>(h.data_offset) + static_cast<size_t>(t.offset)));
  }
  if (m == nullptr) return Status::kOk;
  for (const ModelTensorRule& r : kModelTensorRules) {
    const uint16_t role = static_cast<uint16_t>(r.role);
    if (r.model_dtype != m->dtype || !model_role(role) || !rule_applies(*m, r.when)) continue;
    if ((seen & (uint64_t{1} << (role - format::kFirstModelRole))) == 0) return Status::kMissingTensor;
  }
  return Status::kOk;
}

}  // namespace

Status Model::load(const void* data, size_t size, Model* out) {
  if (data == nullptr || out == nullptr) return Status::kNullArgument;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (reinterpret_cast<uintptr_t>(p) % format::kMinDataAlign != 0) return Status::kBlobMisaligned;
  Header h{};
  ATTN_TRY(check_header(p, size, &h));
  // Offsets are now <= file_size == size, so they fit size_t.
  const size_t blocks_at = static_cast<size_t>(h.blocks_offset);
  const size_t tensors_at = static_cast<size_t>(h.tensors_offset);
  const uint64_t data_bytes = h.file_size - h.data_offset;
  const bool is_model = (h.flags & format::kHeaderModel) != 0;
  ModelRecord mr{};
  if (is_model) {
    mr = read_record<ModelRecord>(p + format::kModelRecordOffset);  // blocks_offset >= 128 <= size: inside
    ATTN_TRY(check_model_record(mr, h));
  }
  const ModelRecord* model = is_model ? &mr : nullptr;

  BlockRecord first{};
  for (uint32_t b = 0; b < h.block_count; ++b) {
    const BlockRecord r = read_record<BlockRecord>(p + blocks_at + size_t{b} * sizeof(BlockRecord));
    ATTN_TRY(check_block(r, h.version));
    if (b == 0) first = r;
    if (is_model) ATTN_TRY(check_layer_block(r, first, mr));
  }
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const TensorDesc t = read_record<TensorDesc>(p + tensors_at + size_t{i} * sizeof(TensorDesc));
    ATTN_TRY(check_tensor(t, h, data_bytes));
    // Pairwise against the earlier tensors: names unique, bytes disjoint.
    for (uint32_t j = 0; j < i; ++j) {
      const TensorDesc u = read_record<TensorDesc>(p + tensors_at + size_t{j} * sizeof(TensorDesc));
      if (std::memcmp(t.name, u.name, format::kNameBytes) == 0) return Status::kDuplicateName;
      if (t.offset < u.offset + u.byte_size && u.offset < t.offset + t.byte_size)
        return Status::kTensorOverlap;
    }
  }
  // Each block: the roles its dtype and flags require, once each, with
  // dims that agree with its hyperparameters.
  for (uint32_t b = 0; b < h.block_count; ++b) {
    const BlockRecord r = read_record<BlockRecord>(p + blocks_at + size_t{b} * sizeof(BlockRecord));
    uint64_t required = 0, allowed = 0, seen = 0;
    uint32_t rope_rows[2] = {0, 0};  // positions of the cos and sin tables
    block_roles(r, model, &required, &allowed);
    for (uint32_t i = 0; i < h.tensor_count; ++i) {
      const TensorDesc t = read_record<TensorDesc>(p + tensors_at + size_t{i} * sizeof(TensorDesc));
      if (t.block != b) continue;
      if (t.role > format::kMaxRole) return Status::kUnknownRole;  // model roles have no block: checked
      const uint64_t bit = uint64_t{1} << t.role;
      if ((seen & bit) != 0) return Status::kDuplicateRole;
      seen |= bit;
      Expected e{};
      if ((allowed & bit) == 0 || !expected_tensor(r, model, t.role, &e)) return Status::kUnknownRole;
      if (!e.required) return Status::kDimsMismatch;  // e.g. a bias in a block without bias
      if (t.dtype != e.dtype) return Status::kDtypeMismatch;
      if (t.layout != static_cast<uint16_t>(format::Layout::kPlain)) return Status::kUnknownLayout;
      if (t.rank != e.rank) return Status::kDimsMismatch;
      for (uint16_t k = 0; k < e.rank; ++k) {
        if (t.dims[k] != e.dims[k] && !(k == 0 && e.dims[0] == 0)) return Status::kDimsMismatch;
      }
      if (rope_role(t.role)) rope_rows[t.role - static_cast<uint16_t>(Role::kRopeCos)] = t.dims[0];
      // Offsets and sizes are checked: the table lies inside the data section.
      ATTN_TRY(check_quant_table(r, model, t,
                                 p + static_cast<size_t>(h.data_offset) + static_cast<size_t>(t.offset)));
    }
    if ((seen & required) != required) return Status::kMissingTensor;
    if (rope_rows[0] != rope_rows[1]) return Status::kDimsMismatch;  // cos and sin cover the same positions
  }
  ATTN_TRY(check_model_tensors(p, h, model, first));

  out->base_ = p;
  out->size_ = size;
  out->block_count_ = h.block_count;
  out->tensor_count_ = h.tensor_count;
  out->blocks_offset_ = blocks_at;
  out->tensors_offset_ = tensors_at;
  out->data_offset_ = static_cast<size_t>(h.data_offset);
  out->model_ = is_model;
  out->version_ = h.version;
  return Status::kOk;
}

Status Model::file_size(const void* data, size_t available, size_t* out) {
  if (data == nullptr || out == nullptr) return Status::kNullArgument;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  ATTN_TRY(check_preamble(p, available));
  const uint64_t n = read_record<Header>(p).file_size;
  if (n > available) return Status::kTruncated;
  *out = static_cast<size_t>(n);
  return Status::kOk;
}

uint16_t Model::version() const { return base_ == nullptr ? 0 : version_; }

uint32_t Model::crc() const {
  if (base_ == nullptr) return 0;
  return read_record<Header>(base_).crc32;
}

Status Model::verify() const {
  if (base_ == nullptr) return Status::kBadHandle;
  // Bytes [0, 8) lie outside the CRC: the loader's own checks of them again,
  // and the version must still be the one loaded (v2 -> v3 is one bit, and
  // both are versions this loader reads).
  ATTN_TRY(check_preamble(base_, size_));
  if (read_record<Header>(base_).version != version_) return Status::kUnsupportedVersion;
  // The stored CRC is read again too: a flip in the header's crc32 field shows.
  return crc32(base_ + format::kCrcStart, size_ - format::kCrcStart) == read_record<Header>(base_).crc32
             ? Status::kOk
             : Status::kCrcMismatch;
}

uint32_t Model::data_align() const {
  if (base_ == nullptr) return 0;
  return read_record<Header>(base_).data_align;
}

Status Model::tensor(uint32_t i, TensorView* out) const {
  if (out == nullptr) return Status::kNullArgument;
  if (i >= tensor_count_) return Status::kTensorIndex;
  const uint8_t* rec = base_ + tensors_offset_ + size_t{i} * sizeof(TensorDesc);
  const TensorDesc t = read_record<TensorDesc>(rec);
  TensorView v;
  v.name = reinterpret_cast<const char*>(rec + offsetof(TensorDesc, name));
  v.role = static_cast<Role>(t.role);
  v.dtype = static_cast<DType>(t.dtype);
  v.layout = static_cast<format::Layout>(t.layout);
  v.rank = t.rank;
  for (int k = 0; k < format::kMaxRank; ++k) v.dims[k] = static_cast<int32_t>(t.dims[k]);
  v.block = t.block;
  v.data = base_ + data_offset_ + static_cast<size_t>(t.offset);
  v.byte_size = static_cast<size_t>(t.byte_size);
  *out = v;
  return Status::kOk;
}

Status Model::find_tensor(const char* name, TensorView* out) const {
  if (name == nullptr || out == nullptr) return Status::kNullArgument;
  for (uint32_t i = 0; i < tensor_count_; ++i) {
    TensorView v;
    ATTN_TRY(tensor(i, &v));
    if (std::strncmp(v.name, name, format::kNameBytes) == 0 && std::strlen(name) < format::kNameBytes) {
      *out = v;
      return Status::kOk;
    }
  }
  return Status::kNotFound;
}

Status Model::find_block_tensor(uint32_t block, Role role, TensorView* out) const {
  if (out == nullptr) return Status::kNullArgument;
  if (block >= block_count_) return Status::kBlockIndex;
  for (uint32_t i = 0; i < tensor_count_; ++i) {
    TensorView v;
    ATTN_TRY(tensor(i, &v));
    if (v.block == block && v.role == role) {
      *out = v;
      return Status::kOk;
    }
  }
  return Status::kNotFound;
}

// The s8/s16 views of block i (validated by load: every table is present,
// of the right dtype and length, 16-byte aligned).
Status Model::quantized_block(uint32_t i, Block* b) const {
  constexpr uint16_t kRoles = static_cast<uint16_t>(Role::kRopeSin) + 1;
  const void* by_role[kRoles] = {};  // the block's tensors by role (null: absent)
  RopeTable rope;                    // null unless the block has rotary embedding
  for (uint32_t t = 0; t < tensor_count_; ++t) {
    TensorView v;
    ATTN_TRY(tensor(t, &v));
    const uint16_t r = static_cast<uint16_t>(v.role);
    if (v.block == i && r < kRoles) by_role[r] = v.data;
    if (v.block == i && v.role == Role::kRopeCos) rope.positions = v.dims[0];
  }
  rope.cos = static_cast<const int16_t*>(by_role[static_cast<uint16_t>(Role::kRopeCos)]);
  rope.sin = static_cast<const int16_t*>(by_role[static_cast<uint16_t>(Role::kRopeSin)]);
  const auto s32 = [&](Role r) { return static_cast<const int32_t*>(by_role[static_cast<uint16_t>(r)]); };
  const auto s8 = [&](Role r) { return static_cast<const int8_t*>(by_role[static_cast<uint16_t>(r)]); };
  const auto s64 = [&](Role r) { return static_cast<const int64_t*>(by_role[static_cast<uint16_t>(r)]); };
  const int32_t* qp = s32(Role::kQuantParams);  // [kQuantParamCount]
  b->io.scale = static_cast<const float*>(by_role[static_cast<uint16_t>(Role::kIoScale)]);
  for (int k = 0; k < format::kIoScaleCount; ++k)
    b->io.zero_point[k] = qp[format::kQpQueryZeroPoint + static_cast<uint32_t>(k)];
  FusedSoftmaxParams sm;
  std::memcpy(&sm.exp_multiplier, qp + format::kQpExpMultiplier, sizeof sm.exp_multiplier);
  sm.exp_shift = qp[format::kQpExpShift];
  sm.diff_limit = qp[format::kQpDiffLimit];
  sm.score_shift = qp[format::kQpScoreShift];
  const MaskCoverage coverage = static_cast<MaskCoverage>(qp[format::kQpMaskCoverage]);  // checked at load
  const int32_t coverage_keys = qp[format::kQpMaskKeyLength];
  if (b->dtype == DType::kS8) {
    WeightsS8& w = b->s8;
    w.q = ProjectionS8{s8(Role::kWq), s32(Role::kBq), s32(Role::kQMultiplier), s32(Role::kQShift)};
    w.k = ProjectionS8{s8(Role::kWk), s32(Role::kBk), s32(Role::kKMultiplier), s32(Role::kKShift)};
    w.v = ProjectionS8{s8(Role::kWv), s32(Role::kBv), s32(Role::kVMultiplier), s32(Role::kVShift)};
    w.o = ProjectionS8{s8(Role::kWo), s32(Role::kBo), s32(Role::kOMultiplier), s32(Role::kOShift)};
    w.q_zero_point = qp[format::kQpQZeroPoint];
    w.k_zero_point = qp[format::kQpKZeroPoint];
    w.v_zero_point = qp[format::kQpVZeroPoint];
    w.context_zero_point = qp[format::kQpContextZeroPoint];
    w.output_zero_point = qp[format::kQpOutputZeroPoint];
    w.softmax = sm;
    w.context_multiplier = qp[format::kQpContextMultiplier];
    w.context_shift = qp[format::kQpContextShift];
    w.rope = rope;
    w.mask_coverage = coverage;
    w.mask_key_length = coverage_keys;
  } else {
    WeightsS16& w = b->s16;
    w.q = ProjectionS16{s8(Role::kWq), s64(Role::kBq), s32(Role::kQMultiplier), s32(Role::kQShift)};
    w.k = ProjectionS16{s8(Role::kWk), s64(Role::kBk), s32(Role::kKMultiplier), s32(Role::kKShift)};
    w.v = ProjectionS16{s8(Role::kWv), s64(Role::kBv), s32(Role::kVMultiplier), s32(Role::kVShift)};
    w.o = ProjectionS16{s8(Role::kWo), s64(Role::kBo), s32(Role::kOMultiplier), s32(Role::kOShift)};
    w.softmax = sm;
    w.context_multiplier = qp[format::kQpContextMultiplier];
    w.context_shift = qp[format::kQpContextShift];
    w.rope = rope;
    w.mask_coverage = coverage;
    w.mask_key_length = coverage_keys;
  }
  return Status::kOk;
}

Status Model::block(uint32_t i, Block* out) const {
  if (out == nullptr) return Status::kNullArgument;
  if (i >= block_count_) return Status::kBlockIndex;
  const BlockRecord r = read_record<BlockRecord>(base_ + blocks_offset_ + size_t{i} * sizeof(BlockRecord));
  Block b;
  b.config.embed_dim = static_cast<int32_t>(r.embed_dim);
  b.config.num_heads = static_cast<int32_t>(r.num_heads);
  b.config.head_dim = static_cast<int32_t>(r.head_dim);
  b.config.kdim = static_cast<int32_t>(r.kdim);
  b.config.vdim = static_cast<int32_t>(r.vdim);
  b.config.bias = (r.flags & format::kBlockBias) != 0;
  b.config.num_kv_heads = static_cast<int32_t>(r.n_kv_heads);  // 0: num_heads
  std::memcpy(&b.config.rope_base, &r.rope, sizeof r.rope);    // bits 0: +0.0f, no rope
  b.dtype = static_cast<DType>(r.dtype);
  if (b.dtype == DType::kF32) {
    const float** slots[] = {&b.f32.wq, &b.f32.wk, &b.f32.wv, &b.f32.wo,
                             &b.f32.bq, &b.f32.bk, &b.f32.bv, &b.f32.bo};
    for (uint32_t t = 0; t < tensor_count_; ++t) {
      TensorView v;
      ATTN_TRY(tensor(t, &v));
      const uint16_t role = static_cast<uint16_t>(v.role);
      if (v.block != i || role < 1 || role > 8) continue;
      *slots[role - 1] = static_cast<const float*>(v.data);
    }
  } else {
    ATTN_TRY(quantized_block(i, &b));
  }
  *out = b;
  return Status::kOk;
}

}  // namespace attn

namespace attn {

Status Model::model_record(format::ModelRecord* out) const {
  if (out == nullptr) return Status::kNullArgument;
  if (!model_) return Status::kNotAModel;
  *out = read_record<ModelRecord>(base_ + format::kModelRecordOffset);
  return Status::kOk;
}

bool Model::byte_vocab() const {
  format::ModelRecord m{};
  return model_record(&m) == Status::kOk && (m.flags & format::kModelByteVocab) != 0;
}

Status Model::transformer_config(TransformerConfig* out) const {
  if (out == nullptr) return Status::kNullArgument;
  format::ModelRecord m{};
  ATTN_TRY(model_record(&m));
  const BlockRecord b = read_record<BlockRecord>(base_ + blocks_offset_);  // layer 0 (every layer is alike)
  const auto flag = [&](uint32_t f) { return (m.flags & f) != 0; };
  TransformerConfig c;
  c.vocab_size = static_cast<int32_t>(m.vocab_size);
  c.embed_dim = static_cast<int32_t>(b.embed_dim);
  c.num_layers = static_cast<int32_t>(block_count_);
  c.num_heads = static_cast<int32_t>(b.num_heads);
  c.num_kv_heads = static_cast<int32_t>(b.n_kv_heads);
  c.head_dim = static_cast<int32_t>(b.head_dim);
  c.ffn_dim = static_cast<int32_t>(m.ffn_dim);
  c.max_positions = static_cast<int32_t>(m.max_positions);
  c.type_vocab_size = static_cast<int32_t>(m.type_vocab_size);
  c.norm = static_cast<NormKind>(m.norm);
  std::memcpy(&c.norm_eps, &m.norm_eps, sizeof c.norm_eps);
  c.activation = static_cast<Activation>(m.activation);
  c.head = flag(format::kModelHeadTied)     ? LmHead::kTied
           : flag(format::kModelHeadUntied) ? LmHead::kUntied
                                            : LmHead::kNone;
  std::memcpy(&c.rope_base, &b.rope, sizeof c.rope_base);  // bits 0: +0.0f, no rope
  c.pre_norm = flag(format::kModelPreNorm);
  c.gated_ffn = flag(format::kModelGatedFfn);
  c.attention_bias = (b.flags & format::kBlockBias) != 0;
  c.ffn_bias = flag(format::kModelFfnBias);
  c.norm_bias = flag(format::kModelNormBias);  // never set with RMSNorm (load checks)
  c.learned_positions = flag(format::kModelLearnedPositions);
  c.embedding_norm = flag(format::kModelEmbeddingNorm);
  c.final_norm = flag(format::kModelFinalNorm);
  c.causal = flag(format::kModelCausal);
  *out = c;
  return Status::kOk;
}

#if ATTN_WITH_F32
Status Model::transformer_weights_f32(LayerWeightsF32* layers, int32_t capacity,
                                      TransformerWeightsF32* out) const {
  if (out == nullptr) return Status::kNullArgument;
  format::ModelRecord m{};
  ATTN_TRY(model_record(&m));
  if (m.dtype != kF32) return Status::kBadDtype;
  if (capacity < 0 || static_cast<uint32_t>(capacity) < block_count_) return Status::kBufferTooSmall;
  if (layers == nullptr) return Status::kNullArgument;
  TransformerWeightsF32 w;
  for (uint32_t l = 0; l < block_count_; ++l) layers[l] = LayerWeightsF32{};
  // One pass over the tensors: each goes to its slot (load checked that every
  // tensor the flags require is there, once, and nothing else).
  for (uint32_t i = 0; i < tensor_count_; ++i) {
    TensorView v;
    ATTN_TRY(tensor(i, &v));
    const uint16_t r = static_cast<uint16_t>(v.role);
    const float** slot = nullptr;
    if (v.block != format::kNoBlock) {
      LayerWeightsF32& L = layers[v.block];
      const float** attention[] = {&L.attention.wq, &L.attention.wk, &L.attention.wv, &L.attention.wo,
                                   &L.attention.bq, &L.attention.bk, &L.attention.bv, &L.attention.bo};
      const float** rest[] = {&L.norm1.weight, &L.norm1.bias, &L.norm2.weight, &L.norm2.bias, &L.ffn.w1,
                              &L.ffn.b1,       &L.ffn.w2,     &L.ffn.b2,       &L.ffn.w3,     &L.ffn.b3};
      if (r >= static_cast<uint16_t>(Role::kWq) && r <= static_cast<uint16_t>(Role::kBo))
        slot = attention[r - static_cast<uint16_t>(Role::kWq)];
      if (r >= static_cast<uint16_t>(Role::kNorm1Weight) && r <= static_cast<uint16_t>(Role::kFfnB3))
        slot = rest[r - static_cast<uint16_t>(Role::kNorm1Weight)];
    } else {
      const float** model[] = {
          &w.token_embedding,     &w.position_embedding, &w.type_embedding,  &w.embedding_norm.weight,
          &w.embedding_norm.bias, &w.final_norm.weight,  &w.final_norm.bias, &w.lm_head};
      if (r >= static_cast<uint16_t>(Role::kTokenEmbedding) && r <= static_cast<uint16_t>(Role::kLmHead))
        slot = model[r - static_cast<uint16_t>(Role::kTokenEmbedding)];  // user tensors: none
    }
    if (slot != nullptr) *slot = static_cast<const float*>(v.data);
  }
  w.layers = layers;
  *out = w;
  return Status::kOk;
}
#endif  // ATTN_WITH_F32

}  // namespace attn

namespace attn {
namespace {

template <typename T>
T read_at(const void* p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + i * sizeof(T), sizeof v);
  return v;
}

// NormFixed from its weight, bias and s64 [3] constants.
void set_norm_table(NormFixed* n, Role role, const TensorView& v, Role weight) {
  const int32_t k = static_cast<int32_t>(role) - static_cast<int32_t>(weight);  // 0 weight, 1 bias, 2 consts
  if (k == 0) n->weight = static_cast<const int32_t*>(v.data);
  if (k == 1) n->bias = static_cast<const int32_t*>(v.data);
  if (k == 2) {
    n->eps = read_at<int64_t>(v.data, format::kNormEps);
    n->shift = static_cast<int32_t>(read_at<int64_t>(v.data, format::kNormShift));  // load checked [-31, 30]
    n->output_zero_point = static_cast<int32_t>(read_at<int64_t>(v.data, format::kNormOutputZeroPoint));
  }
}

RescaleFixed rescale_of(const TensorView& v) {
  RescaleFixed r;
  r.multiplier = read_at<int32_t>(v.data, format::kRescaleMultiplier);
  r.shift = read_at<int32_t>(v.data, format::kRescaleShift);
  r.zero_point = read_at<int32_t>(v.data, format::kRescaleZeroPoint);
  return r;
}

// One of the projection's four tables (weight, bias, multiplier, shift: k = 0..3).
template <typename Projection>
void set_projection_table(Projection* p, int32_t k, const void* data) {
  if (k == 0) p->weight = static_cast<const int8_t*>(data);
  if (k == 1) p->bias = static_cast<decltype(p->bias)>(data);
  if (k == 2) p->multiplier = static_cast<const int32_t*>(data);
  if (k == 3) p->shift = static_cast<const int32_t*>(data);
}

// One overload per integer dtype; a build without a dtype leaves its overloads unused.
[[maybe_unused]] void set_ffn_consts(FfnS8* f, const TensorView& v) {
  f->h1_zero_point = read_at<int32_t>(v.data, format::kFfnH1ZeroPoint);
  f->h3_zero_point = read_at<int32_t>(v.data, format::kFfnH3ZeroPoint);
  f->g_zero_point = read_at<int32_t>(v.data, format::kFfnGZeroPoint);
  f->gate_multiplier = read_at<int32_t>(v.data, format::kFfnActMultiplier);
  f->gate_shift = read_at<int32_t>(v.data, format::kFfnActShift);
}
[[maybe_unused]] void set_ffn_consts(FfnS16* f,
                                     const TensorView& v) {  // the zero points are 0 (load checked)
  f->act_multiplier = read_at<int32_t>(v.data, format::kFfnActMultiplier);
  f->act_shift = read_at<int32_t>(v.data, format::kFfnActShift);
}
[[maybe_unused]] void set_act_table(FfnS8* f, const TensorView& v) {
  if (v.dtype == DType::kS8) f->act_table = static_cast<const int8_t*>(v.data);     // plain
  if (v.dtype == DType::kS16) f->gate_table = static_cast<const int16_t*>(v.data);  // gated
}
[[maybe_unused]] void set_act_table(FfnS16* f, const TensorView& v) {
  f->act_table = static_cast<const int32_t*>(v.data);
}

[[maybe_unused]] const WeightsS8& block_weights(const Block& b, const LayerWeightsS8*) { return b.s8; }
[[maybe_unused]] const WeightsS16& block_weights(const Block& b, const LayerWeightsS16*) { return b.s16; }

// The integer model's views: every table from its role (load checked that the
// flags' tensors are there, once, with their shapes and values).
template <typename Layer, typename Weights>
Status fixed_weights(const Model& model, DType dtype, Layer* layers, int32_t capacity, Weights* out) {
  if (out == nullptr) return Status::kNullArgument;
  format::ModelRecord m{};
  ATTN_TRY(model.model_record(&m));
  if (m.dtype != static_cast<uint16_t>(dtype)) return Status::kBadDtype;
  const uint32_t layer_count = model.block_count();
  if (capacity < 0 || static_cast<uint32_t>(capacity) < layer_count) return Status::kBufferTooSmall;
  if (layers == nullptr) return Status::kNullArgument;
  Weights w;
  for (uint32_t l = 0; l < layer_count; ++l) {
    Block b;
    ATTN_TRY(model.block(l, &b));
    layers[l] = Layer();
    layers[l].attention = block_weights(b, &layers[l]);
    layers[l].attention_input_scale = b.io.scale[0];  // query = key = value: self-attention
    layers[l].attention_output_scale = b.io.scale[3];
  }
  for (uint32_t i = 0; i < model.tensor_count(); ++i) {
    TensorView v;
    ATTN_TRY(model.tensor(i, &v));
    const int32_t r = static_cast<int32_t>(v.role);
    const auto from = [&](Role first) { return r - static_cast<int32_t>(first); };
    if (v.block != format::kNoBlock) {
      Layer& L = layers[v.block];
      if (r >= static_cast<int32_t>(Role::kIntNorm1Weight) && r <= static_cast<int32_t>(Role::kNorm1Consts))
        set_norm_table(&L.norm1, v.role, v, Role::kIntNorm1Weight);
      if (r >= static_cast<int32_t>(Role::kIntNorm2Weight) && r <= static_cast<int32_t>(Role::kNorm2Consts))
        set_norm_table(&L.norm2, v.role, v, Role::kIntNorm2Weight);
      if (v.role == Role::kAttnIn) L.attn_in = rescale_of(v);
      if (v.role == Role::kAttnOut) L.attn_out = rescale_of(v);
      if (v.role == Role::kFfnIn) L.ffn_in = rescale_of(v);
      if (from(Role::kIntFfnW1) >= 0 && from(Role::kIntFfnW1) < 4)
        set_projection_table(&L.ffn.w1, from(Role::kIntFfnW1), v.data);
      if (from(Role::kIntFfnW2) >= 0 && from(Role::kIntFfnW2) < 4)
        set_projection_table(&L.ffn.w2, from(Role::kIntFfnW2), v.data);
      if (from(Role::kIntFfnW3) >= 0 && from(Role::kIntFfnW3) < 4)
        set_projection_table(&L.ffn.w3, from(Role::kIntFfnW3), v.data);
      if (v.role == Role::kFfnActTable) set_act_table(&L.ffn, v);
      if (v.role == Role::kFfnConsts) set_ffn_consts(&L.ffn, v);
      continue;
    }
    switch (v.role) {  // model tables; user tensors: none
      case Role::kIntTokenEmbedding:
        w.token_embedding.table = static_cast<const int8_t*>(v.data);
        break;
      case Role::kTokenMultiplier:
        w.token_embedding.multiplier = static_cast<const int32_t*>(v.data);
        break;
      case Role::kTokenShift:
        w.token_embedding.shift = static_cast<const int32_t*>(v.data);
        break;
      case Role::kIntPositionEmbedding:
        w.position_embedding.table = static_cast<const int8_t*>(v.data);
        break;
      case Role::kPositionMultiplier:
        w.position_embedding.multiplier = static_cast<const int32_t*>(v.data);
        break;
      case Role::kPositionShift:
        w.position_embedding.shift = static_cast<const int32_t*>(v.data);
        break;
      case Role::kIntTypeEmbedding:
        w.type_embedding = static_cast<const int32_t*>(v.data);
        break;
      case Role::kIntEmbeddingNormWeight:
      case Role::kIntEmbeddingNormBias:
      case Role::kEmbeddingNormConsts:
        set_norm_table(&w.embedding_norm, v.role, v, Role::kIntEmbeddingNormWeight);
        break;
      case Role::kIntFinalNormWeight:
      case Role::kIntFinalNormBias:
      case Role::kFinalNormConsts:
        set_norm_table(&w.final_norm, v.role, v, Role::kIntFinalNormWeight);
        break;
      case Role::kHeadIn:
        w.head_in = rescale_of(v);
        break;
      case Role::kIntLmHead:
        w.head.weight = static_cast<const int8_t*>(v.data);
        break;
      case Role::kHeadBias:
        set_projection_table(&w.head, 1, v.data);
        break;
      case Role::kHeadMultiplier:
        w.head.multiplier = static_cast<const int32_t*>(v.data);
        break;
      case Role::kHeadShift:
        w.head.shift = static_cast<const int32_t*>(v.data);
        break;
      case Role::kModelScales:
        w.residual_scale = read_at<float>(v.data, format::kResidualScale);
        w.output_scale = read_at<float>(v.data, format::kOutputScale);
        break;
      default:
        break;
    }
  }
  if ((m.flags & format::kModelHeadTied) != 0) w.head.weight = w.token_embedding.table;
  w.layers = layers;
  *out = w;
  return Status::kOk;
}

}  // namespace

#if ATTN_WITH_S8
Status Model::transformer_weights_s8(LayerWeightsS8* layers, int32_t capacity,
                                     TransformerWeightsS8* out) const {
  return fixed_weights(*this, DType::kS8, layers, capacity, out);
}
#endif

#if ATTN_WITH_S16
Status Model::transformer_weights_s16(LayerWeightsS16* layers, int32_t capacity,
                                      TransformerWeightsS16* out) const {
  return fixed_weights(*this, DType::kS16, layers, capacity, out);
}
#endif

}  // namespace attn
