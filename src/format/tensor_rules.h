// format/tensor_rules.h: which tensors an attention block, a layer and a
// whole model of a .attn file hold: one table, one row per (owner dtype,
// role), read by the loader (format/validate.cpp) and printed by `attn info
// --roles`. The roles themselves (numbers and names) are attn/role_list.h.
//
// A row gives the tensor's dtype, its shape (from the block and model
// records), when it is present and which values it may hold. The owner dtype
// is the block's dtype for block roles (1..27) and the model's for layer
// (28..63) and model (64..127) roles; a model's blocks all have its dtype. A
// role may have one row per condition (the s8 activation table: s8 for a
// plain FFN, s16 for a gated one).
//
// The loader's verdicts, for a tensor of role r in a block (or, r >= 64, among
// the model's own tensors):
//   no row of (owner dtype, r)                       kUnknownRole
//   a row, its condition false                       kUnknownRole; kDimsMismatch for
//                                                    When::kBiasFlag (a bias in a block without one)
//   the row's condition true: dtype, shape, values   kDtypeMismatch, kDimsMismatch, Check's status
//   a row whose condition holds, no tensor           kMissingTensor
// Adding a block or model dtype, or a section of new roles: rows here (new
// Dim / When / Check values if they need them); nothing else in the validator
// changes (src/README.md, "Adding a format section").
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/model.h"

namespace attn {
namespace format {

// A dimension, from the block record (E, D, ...), the model record (F, V,
// ...) or fixed. kNone ends a shape of rank 1.
enum class Dim : uint8_t {
  kNone,
  kE,              // embed_dim
  kD,              // num_heads * head_dim
  kDkv,            // n_kv_heads * head_dim (D when n_kv_heads is 0)
  kKdim,           // kdim
  kVdim,           // vdim
  kHalfHead,       // head_dim / 2 (rope tables)
  kRopePositions,  // rope table rows: a model's max_positions; in a block file the converter's choice (any)
  kF,              // ffn_dim
  kV,              // vocab_size
  kP,              // max_positions
  kT,              // type_vocab_size
  kQuantParams,    // kQuantParamCount
  kIoScales,       // kIoScaleCount
  kNormConsts,     // kNormConstCount
  kRescale,        // kRescaleConstCount
  kFfnConsts,      // kFfnConstCount
  kActTableS8,     // 256: one entry per int8 input
  kActTableS16,    // kActTableS16Entries
  kModelScales,    // kModelScaleCount
  kAnyLength,      // any length (the tokenizer blob's bytes)
};

// When the tensor is present. Layer and model roles (>= 28) are present only
// in a whole model, whatever the condition.
enum class When : uint8_t {
  kAlways,
  kBiasFlag,           // the block's kBlockBias flag
  kRope,               // the block has rotary embedding (rope != 0)
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
  kOptional,           // may be absent (the tokenizer)
};

// The values a tensor may hold: the rules the integer forwards apply at run
// time (format/tensor_values.cpp; kBadQuantParams unless said otherwise).
enum class Check : uint8_t {
  kAny,                  // weights, norm weights, f32 tensors, the s8 activation tables
  kMultipliers,          // each >= 0
  kShifts,               // each in [-31, 30] (s8 owner) or [-31, 14] (s16 owner)
  kShifts30,             // each in [-31, 30] (embedding rows onto the residual grid)
  kBiasE,                // within the bias bound over E inputs: kBiasOutOfRange
  kBiasKdim,             // ... over kdim inputs
  kBiasVdim,             // ... over vdim inputs
  kBiasD,                // ... over D inputs
  kBiasF,                // ... over F inputs
  kNormBias,             // |bias| < 2^29
  kLayerNormConsts,      // NormConst; int8 output zero point iff s8 and pre-norm
  kEmbeddingNormConsts,  // NormConst; output onto the residual: zero point 0
  kFinalNormConsts,      // NormConst; int8 output zero point iff s8 with a head
  kRescale,              // RescaleConst
  kActTableS16,          // |entry| <= 2^20
  kFfnConsts,            // FfnConst (a plain s8 FFN's gate constants 0: kBadReserved)
  kScales,               // float bits finite and > 0
  kQuantParams,          // QuantParam (reserved entries 0: kBadReserved)
  kRopeTable,            // entries in [-2^14, 2^14]
  kTokenizer,            // a tokenizer blob Tokenizer::load accepts, no larger a vocabulary than the model's
};

struct TensorRule {
  uint16_t owner_dtype;  // attn::DType of the block (block roles) or the model (layer, model roles)
  Role role;
  uint16_t dtype;  // the tensor's attn::DType
  Dim dims[2];     // the shape; rank 1 when dims[1] is kNone
  When when;
  Check check;
};

constexpr uint16_t kF32 = static_cast<uint16_t>(DType::kF32);
constexpr uint16_t kS8 = static_cast<uint16_t>(DType::kS8);
constexpr uint16_t kS16 = static_cast<uint16_t>(DType::kS16);
constexpr uint16_t kS32 = static_cast<uint16_t>(DType::kS32);
constexpr uint16_t kS64 = static_cast<uint16_t>(DType::kS64);
constexpr uint16_t kU8 = static_cast<uint16_t>(DType::kU8);

inline constexpr TensorRule kTensorRules[] = {
    // f32 blocks: every tensor f32.
    {kF32, Role::kWq, kF32, {Dim::kD, Dim::kE}, When::kAlways, Check::kAny},
    {kF32, Role::kWk, kF32, {Dim::kDkv, Dim::kKdim}, When::kAlways, Check::kAny},
    {kF32, Role::kWv, kF32, {Dim::kDkv, Dim::kVdim}, When::kAlways, Check::kAny},
    {kF32, Role::kWo, kF32, {Dim::kE, Dim::kD}, When::kAlways, Check::kAny},
    {kF32, Role::kBq, kF32, {Dim::kD}, When::kBiasFlag, Check::kAny},
    {kF32, Role::kBk, kF32, {Dim::kDkv}, When::kBiasFlag, Check::kAny},
    {kF32, Role::kBv, kF32, {Dim::kDkv}, When::kBiasFlag, Check::kAny},
    {kF32, Role::kBo, kF32, {Dim::kE}, When::kBiasFlag, Check::kAny},
    // s8 blocks: int8 weights, int32 biases (always: they carry the zero-point fold), the
    // quantization tables; rope tables iff the block has rope.
    {kS8, Role::kWq, kS8, {Dim::kD, Dim::kE}, When::kAlways, Check::kAny},
    {kS8, Role::kWk, kS8, {Dim::kDkv, Dim::kKdim}, When::kAlways, Check::kAny},
    {kS8, Role::kWv, kS8, {Dim::kDkv, Dim::kVdim}, When::kAlways, Check::kAny},
    {kS8, Role::kWo, kS8, {Dim::kE, Dim::kD}, When::kAlways, Check::kAny},
    {kS8, Role::kBq, kS32, {Dim::kD}, When::kAlways, Check::kBiasE},
    {kS8, Role::kBk, kS32, {Dim::kDkv}, When::kAlways, Check::kBiasKdim},
    {kS8, Role::kBv, kS32, {Dim::kDkv}, When::kAlways, Check::kBiasVdim},
    {kS8, Role::kBo, kS32, {Dim::kE}, When::kAlways, Check::kBiasD},
    {kS8, Role::kQMultiplier, kS32, {Dim::kD}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kQShift, kS32, {Dim::kD}, When::kAlways, Check::kShifts},
    {kS8, Role::kKMultiplier, kS32, {Dim::kDkv}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kKShift, kS32, {Dim::kDkv}, When::kAlways, Check::kShifts},
    {kS8, Role::kVMultiplier, kS32, {Dim::kDkv}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kVShift, kS32, {Dim::kDkv}, When::kAlways, Check::kShifts},
    {kS8, Role::kOMultiplier, kS32, {Dim::kE}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kOShift, kS32, {Dim::kE}, When::kAlways, Check::kShifts},
    {kS8, Role::kQuantParams, kS32, {Dim::kQuantParams}, When::kAlways, Check::kQuantParams},
    {kS8, Role::kIoScale, kF32, {Dim::kIoScales}, When::kAlways, Check::kScales},
    {kS8, Role::kRopeCos, kS16, {Dim::kRopePositions, Dim::kHalfHead}, When::kRope, Check::kRopeTable},
    {kS8, Role::kRopeSin, kS16, {Dim::kRopePositions, Dim::kHalfHead}, When::kRope, Check::kRopeTable},
    // s16 blocks: int8 weights, int64 biases iff the bias flag, the quantization tables.
    {kS16, Role::kWq, kS8, {Dim::kD, Dim::kE}, When::kAlways, Check::kAny},
    {kS16, Role::kWk, kS8, {Dim::kDkv, Dim::kKdim}, When::kAlways, Check::kAny},
    {kS16, Role::kWv, kS8, {Dim::kDkv, Dim::kVdim}, When::kAlways, Check::kAny},
    {kS16, Role::kWo, kS8, {Dim::kE, Dim::kD}, When::kAlways, Check::kAny},
    {kS16, Role::kBq, kS64, {Dim::kD}, When::kBiasFlag, Check::kBiasE},
    {kS16, Role::kBk, kS64, {Dim::kDkv}, When::kBiasFlag, Check::kBiasKdim},
    {kS16, Role::kBv, kS64, {Dim::kDkv}, When::kBiasFlag, Check::kBiasVdim},
    {kS16, Role::kBo, kS64, {Dim::kE}, When::kBiasFlag, Check::kBiasD},
    {kS16, Role::kQMultiplier, kS32, {Dim::kD}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kQShift, kS32, {Dim::kD}, When::kAlways, Check::kShifts},
    {kS16, Role::kKMultiplier, kS32, {Dim::kDkv}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kKShift, kS32, {Dim::kDkv}, When::kAlways, Check::kShifts},
    {kS16, Role::kVMultiplier, kS32, {Dim::kDkv}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kVShift, kS32, {Dim::kDkv}, When::kAlways, Check::kShifts},
    {kS16, Role::kOMultiplier, kS32, {Dim::kE}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kOShift, kS32, {Dim::kE}, When::kAlways, Check::kShifts},
    {kS16, Role::kQuantParams, kS32, {Dim::kQuantParams}, When::kAlways, Check::kQuantParams},
    {kS16, Role::kIoScale, kF32, {Dim::kIoScales}, When::kAlways, Check::kScales},
    {kS16, Role::kRopeCos, kS16, {Dim::kRopePositions, Dim::kHalfHead}, When::kRope, Check::kRopeTable},
    {kS16, Role::kRopeSin, kS16, {Dim::kRopePositions, Dim::kHalfHead}, When::kRope, Check::kRopeTable},
    // f32 models: layer and model tensors, every one f32.
    {kF32, Role::kNorm1Weight, kF32, {Dim::kE}, When::kAlways, Check::kAny},
    {kF32, Role::kNorm1Bias, kF32, {Dim::kE}, When::kNormBias, Check::kAny},
    {kF32, Role::kNorm2Weight, kF32, {Dim::kE}, When::kAlways, Check::kAny},
    {kF32, Role::kNorm2Bias, kF32, {Dim::kE}, When::kNormBias, Check::kAny},
    {kF32, Role::kFfnW1, kF32, {Dim::kF, Dim::kE}, When::kAlways, Check::kAny},
    {kF32, Role::kFfnB1, kF32, {Dim::kF}, When::kFfnBias, Check::kAny},
    {kF32, Role::kFfnW2, kF32, {Dim::kE, Dim::kF}, When::kAlways, Check::kAny},
    {kF32, Role::kFfnB2, kF32, {Dim::kE}, When::kFfnBias, Check::kAny},
    {kF32, Role::kFfnW3, kF32, {Dim::kF, Dim::kE}, When::kGated, Check::kAny},
    {kF32, Role::kFfnB3, kF32, {Dim::kF}, When::kGatedFfnBias, Check::kAny},
    {kF32, Role::kTokenEmbedding, kF32, {Dim::kV, Dim::kE}, When::kAlways, Check::kAny},
    {kF32, Role::kPositionEmbedding, kF32, {Dim::kP, Dim::kE}, When::kLearnedPositions, Check::kAny},
    {kF32, Role::kTypeEmbedding, kF32, {Dim::kT, Dim::kE}, When::kTypeVocab, Check::kAny},
    {kF32, Role::kEmbeddingNormWeight, kF32, {Dim::kE}, When::kEmbeddingNorm, Check::kAny},
    {kF32, Role::kEmbeddingNormBias, kF32, {Dim::kE}, When::kEmbeddingNormBias, Check::kAny},
    {kF32, Role::kFinalNormWeight, kF32, {Dim::kE}, When::kFinalNorm, Check::kAny},
    {kF32, Role::kFinalNormBias, kF32, {Dim::kE}, When::kFinalNormBias, Check::kAny},
    {kF32, Role::kLmHead, kF32, {Dim::kV, Dim::kE}, When::kUntiedHead, Check::kAny},
    // s8 models: the tables of attn::TransformerWeightsS8. Biases s32, always (they carry the input
    // zero point fold).
    {kS8, Role::kIntNorm1Weight, kS32, {Dim::kE}, When::kAlways, Check::kAny},
    {kS8, Role::kIntNorm1Bias, kS32, {Dim::kE}, When::kNormBias, Check::kNormBias},
    {kS8, Role::kNorm1Consts, kS64, {Dim::kNormConsts}, When::kAlways, Check::kLayerNormConsts},
    {kS8, Role::kIntNorm2Weight, kS32, {Dim::kE}, When::kAlways, Check::kAny},
    {kS8, Role::kIntNorm2Bias, kS32, {Dim::kE}, When::kNormBias, Check::kNormBias},
    {kS8, Role::kNorm2Consts, kS64, {Dim::kNormConsts}, When::kAlways, Check::kLayerNormConsts},
    {kS8, Role::kAttnIn, kS32, {Dim::kRescale}, When::kPostNorm, Check::kRescale},
    {kS8, Role::kAttnOut, kS32, {Dim::kRescale}, When::kAlways, Check::kRescale},
    {kS8, Role::kFfnIn, kS32, {Dim::kRescale}, When::kPostNorm, Check::kRescale},
    {kS8, Role::kIntFfnW1, kS8, {Dim::kF, Dim::kE}, When::kAlways, Check::kAny},
    {kS8, Role::kIntFfnB1, kS32, {Dim::kF}, When::kAlways, Check::kBiasE},
    {kS8, Role::kFfnW1Multiplier, kS32, {Dim::kF}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kFfnW1Shift, kS32, {Dim::kF}, When::kAlways, Check::kShifts},
    {kS8, Role::kIntFfnW2, kS8, {Dim::kE, Dim::kF}, When::kAlways, Check::kAny},
    {kS8, Role::kIntFfnB2, kS32, {Dim::kE}, When::kAlways, Check::kBiasF},
    {kS8, Role::kFfnW2Multiplier, kS32, {Dim::kE}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kFfnW2Shift, kS32, {Dim::kE}, When::kAlways, Check::kShifts},
    {kS8, Role::kIntFfnW3, kS8, {Dim::kF, Dim::kE}, When::kGated, Check::kAny},
    {kS8, Role::kIntFfnB3, kS32, {Dim::kF}, When::kGated, Check::kBiasE},
    {kS8, Role::kFfnW3Multiplier, kS32, {Dim::kF}, When::kGated, Check::kMultipliers},
    {kS8, Role::kFfnW3Shift, kS32, {Dim::kF}, When::kGated, Check::kShifts},
    {kS8, Role::kFfnConsts, kS32, {Dim::kFfnConsts}, When::kAlways, Check::kFfnConsts},
    {kS8, Role::kIntTokenEmbedding, kS8, {Dim::kV, Dim::kE}, When::kAlways, Check::kAny},
    {kS8, Role::kTokenMultiplier, kS32, {Dim::kV}, When::kAlways, Check::kMultipliers},
    {kS8, Role::kTokenShift, kS32, {Dim::kV}, When::kAlways, Check::kShifts30},
    {kS8, Role::kIntPositionEmbedding, kS8, {Dim::kP, Dim::kE}, When::kLearnedPositions, Check::kAny},
    {kS8, Role::kPositionMultiplier, kS32, {Dim::kP}, When::kLearnedPositions, Check::kMultipliers},
    {kS8, Role::kPositionShift, kS32, {Dim::kP}, When::kLearnedPositions, Check::kShifts30},
    {kS8, Role::kIntTypeEmbedding, kS32, {Dim::kE}, When::kTypeVocab, Check::kAny},
    {kS8, Role::kIntEmbeddingNormWeight, kS32, {Dim::kE}, When::kEmbeddingNorm, Check::kAny},
    {kS8, Role::kIntEmbeddingNormBias, kS32, {Dim::kE}, When::kEmbeddingNormBias, Check::kNormBias},
    {kS8,
     Role::kEmbeddingNormConsts,
     kS64,
     {Dim::kNormConsts},
     When::kEmbeddingNorm,
     Check::kEmbeddingNormConsts},
    {kS8, Role::kIntFinalNormWeight, kS32, {Dim::kE}, When::kFinalNorm, Check::kAny},
    {kS8, Role::kIntFinalNormBias, kS32, {Dim::kE}, When::kFinalNormBias, Check::kNormBias},
    {kS8, Role::kFinalNormConsts, kS64, {Dim::kNormConsts}, When::kFinalNorm, Check::kFinalNormConsts},
    {kS8, Role::kHeadIn, kS32, {Dim::kRescale}, When::kHeadNoFinalNorm, Check::kRescale},
    {kS8, Role::kIntLmHead, kS8, {Dim::kV, Dim::kE}, When::kUntiedHead, Check::kAny},
    {kS8, Role::kHeadMultiplier, kS32, {Dim::kV}, When::kHead, Check::kMultipliers},
    {kS8, Role::kHeadShift, kS32, {Dim::kV}, When::kHead, Check::kShifts},
    {kS8, Role::kModelScales, kF32, {Dim::kModelScales}, When::kAlways, Check::kScales},
    {kS8, Role::kFfnActTable, kS8, {Dim::kActTableS8}, When::kPlainFfn, Check::kAny},
    {kS8, Role::kFfnActTable, kS16, {Dim::kActTableS8}, When::kGated, Check::kAny},
    {kS8, Role::kHeadBias, kS32, {Dim::kV}, When::kHead, Check::kBiasE},
    // s16 models: attn::TransformerWeightsS16. Biases s64, iff the config has them; no head bias.
    {kS16, Role::kIntNorm1Weight, kS32, {Dim::kE}, When::kAlways, Check::kAny},
    {kS16, Role::kIntNorm1Bias, kS32, {Dim::kE}, When::kNormBias, Check::kNormBias},
    {kS16, Role::kNorm1Consts, kS64, {Dim::kNormConsts}, When::kAlways, Check::kLayerNormConsts},
    {kS16, Role::kIntNorm2Weight, kS32, {Dim::kE}, When::kAlways, Check::kAny},
    {kS16, Role::kIntNorm2Bias, kS32, {Dim::kE}, When::kNormBias, Check::kNormBias},
    {kS16, Role::kNorm2Consts, kS64, {Dim::kNormConsts}, When::kAlways, Check::kLayerNormConsts},
    {kS16, Role::kAttnIn, kS32, {Dim::kRescale}, When::kPostNorm, Check::kRescale},
    {kS16, Role::kAttnOut, kS32, {Dim::kRescale}, When::kAlways, Check::kRescale},
    {kS16, Role::kFfnIn, kS32, {Dim::kRescale}, When::kPostNorm, Check::kRescale},
    {kS16, Role::kIntFfnW1, kS8, {Dim::kF, Dim::kE}, When::kAlways, Check::kAny},
    {kS16, Role::kIntFfnB1, kS64, {Dim::kF}, When::kFfnBias, Check::kBiasE},
    {kS16, Role::kFfnW1Multiplier, kS32, {Dim::kF}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kFfnW1Shift, kS32, {Dim::kF}, When::kAlways, Check::kShifts},
    {kS16, Role::kIntFfnW2, kS8, {Dim::kE, Dim::kF}, When::kAlways, Check::kAny},
    {kS16, Role::kIntFfnB2, kS64, {Dim::kE}, When::kFfnBias, Check::kBiasF},
    {kS16, Role::kFfnW2Multiplier, kS32, {Dim::kE}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kFfnW2Shift, kS32, {Dim::kE}, When::kAlways, Check::kShifts},
    {kS16, Role::kIntFfnW3, kS8, {Dim::kF, Dim::kE}, When::kGated, Check::kAny},
    {kS16, Role::kIntFfnB3, kS64, {Dim::kF}, When::kGatedFfnBias, Check::kBiasE},
    {kS16, Role::kFfnW3Multiplier, kS32, {Dim::kF}, When::kGated, Check::kMultipliers},
    {kS16, Role::kFfnW3Shift, kS32, {Dim::kF}, When::kGated, Check::kShifts},
    {kS16, Role::kFfnConsts, kS32, {Dim::kFfnConsts}, When::kAlways, Check::kFfnConsts},
    {kS16, Role::kIntTokenEmbedding, kS8, {Dim::kV, Dim::kE}, When::kAlways, Check::kAny},
    {kS16, Role::kTokenMultiplier, kS32, {Dim::kV}, When::kAlways, Check::kMultipliers},
    {kS16, Role::kTokenShift, kS32, {Dim::kV}, When::kAlways, Check::kShifts30},
    {kS16, Role::kIntPositionEmbedding, kS8, {Dim::kP, Dim::kE}, When::kLearnedPositions, Check::kAny},
    {kS16, Role::kPositionMultiplier, kS32, {Dim::kP}, When::kLearnedPositions, Check::kMultipliers},
    {kS16, Role::kPositionShift, kS32, {Dim::kP}, When::kLearnedPositions, Check::kShifts30},
    {kS16, Role::kIntTypeEmbedding, kS32, {Dim::kE}, When::kTypeVocab, Check::kAny},
    {kS16, Role::kIntEmbeddingNormWeight, kS32, {Dim::kE}, When::kEmbeddingNorm, Check::kAny},
    {kS16, Role::kIntEmbeddingNormBias, kS32, {Dim::kE}, When::kEmbeddingNormBias, Check::kNormBias},
    {kS16,
     Role::kEmbeddingNormConsts,
     kS64,
     {Dim::kNormConsts},
     When::kEmbeddingNorm,
     Check::kEmbeddingNormConsts},
    {kS16, Role::kIntFinalNormWeight, kS32, {Dim::kE}, When::kFinalNorm, Check::kAny},
    {kS16, Role::kIntFinalNormBias, kS32, {Dim::kE}, When::kFinalNormBias, Check::kNormBias},
    {kS16, Role::kFinalNormConsts, kS64, {Dim::kNormConsts}, When::kFinalNorm, Check::kFinalNormConsts},
    {kS16, Role::kHeadIn, kS32, {Dim::kRescale}, When::kHeadNoFinalNorm, Check::kRescale},
    {kS16, Role::kIntLmHead, kS8, {Dim::kV, Dim::kE}, When::kUntiedHead, Check::kAny},
    {kS16, Role::kHeadMultiplier, kS32, {Dim::kV}, When::kHead, Check::kMultipliers},
    {kS16, Role::kHeadShift, kS32, {Dim::kV}, When::kHead, Check::kShifts},
    {kS16, Role::kModelScales, kF32, {Dim::kModelScales}, When::kAlways, Check::kScales},
    {kS16, Role::kFfnActTable, kS32, {Dim::kActTableS16}, When::kAlways, Check::kActTableS16},
    // Every model dtype: the tokenizer, optional.
    {kF32, Role::kTokenizer, kU8, {Dim::kAnyLength}, When::kOptional, Check::kTokenizer},
    {kS8, Role::kTokenizer, kU8, {Dim::kAnyLength}, When::kOptional, Check::kTokenizer},
    {kS16, Role::kTokenizer, kU8, {Dim::kAnyLength}, When::kOptional, Check::kTokenizer},
};

inline constexpr uint16_t rank_of(const TensorRule& r) { return r.dims[1] == Dim::kNone ? 1 : 2; }

// Whether the row's tensor may hold int4 weights (dtype kS4) instead of its
// int8 ones: the projections of integer blocks and models (Q, K, V, O, the
// FFN's W1, W2, W3, an untied LM head). Embedding tables stay int8.
inline constexpr bool int4_weights_allowed(const TensorRule& r) {
  return r.dtype == kS8 && (r.role == Role::kWq || r.role == Role::kWk || r.role == Role::kWv ||
                            r.role == Role::kWo || r.role == Role::kIntFfnW1 || r.role == Role::kIntFfnW2 ||
                            r.role == Role::kIntFfnW3 || r.role == Role::kIntLmHead);
}

// Whether the row's tensor is present in block `b` of a block file (m null)
// or of the model `m` (layer and model roles: only there).
bool rule_applies(const TensorRule& r, const BlockRecord& b, const ModelRecord* m);

// The row of (owner dtype, role) whose condition holds; else a row of the
// pair (its condition false: the tensor may not be there); null when the
// owner dtype has no such role.
const TensorRule* find_rule(uint16_t owner_dtype, uint16_t role, const BlockRecord& b, const ModelRecord* m);

// The dimension's value for block `b` (of model `m`, or m null); 0 for
// kRopePositions in a block file (any number of rows).
uint32_t resolve(Dim d, const BlockRecord& b, const ModelRecord* m);

// Model dtypes with rows for layer or model roles: the ones a model may have.
bool known_model_dtype(uint16_t dtype);

// A role of attn/role_list.h.
bool known_role(uint16_t role);

// The tensor's values (`data`, inside the file: its offset and size are
// checked) against the row's Check, for block `b` of model `m` (or m null).
Status check_values(const TensorRule& r, const BlockRecord& b, const ModelRecord* m, const TensorDesc& t,
                    const uint8_t* data);

}  // namespace format
}  // namespace attn
