// tensor_values.cpp: the values of the integer tensors of a .attn file, with
// the rules forward_s8 / forward_s16 and transformer_forward_s8 / _s16 apply
// at run time (and the bound the s16 activation table's interpolation
// needs): one case per Check of the rule table (format/tensor_rules.h).
// Values are read with memcpy (no alignment assumed) and float bits as
// integers (no float arithmetic: integer-only firmware links the loader).
#include <cstring>

#include "attn/tokenizer.h"
#include "core/bias_bound.h"
#include "core/mask_coverage.h"
#include "format/tensor_rules.h"

namespace attn {
namespace format {
namespace {

int32_t read_s32(const uint8_t* p, size_t i) {
  int32_t v = 0;
  std::memcpy(&v, p + i * sizeof v, sizeof v);
  return v;
}

int64_t read_s64(const uint8_t* p, size_t i) {
  int64_t v = 0;
  std::memcpy(&v, p + i * sizeof v, sizeof v);
  return v;
}

// A float's bits (read as an integer: no float arithmetic here) are finite, > 0.
bool positive_finite_bits(uint32_t bits) {
  return (bits >> 31) == 0 && ((bits >> 23) & 0xFFu) != 0xFFu && bits != 0;
}

bool zero_point_ok(int64_t zp, bool int8) { return int8 ? zp >= -128 && zp <= 127 : zp == 0; }

// Largest requantization shift of an s8 / s16 integer forward.
int32_t max_shift(uint16_t dtype) { return dtype == kS16 ? 14 : 30; }

bool has(const ModelRecord* m, uint32_t flag) { return m != nullptr && (m->flags & flag) != 0; }

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
Status check_biases(const uint8_t* data, size_t n, uint16_t dtype, uint32_t in) {
  const int32_t inputs = static_cast<int32_t>(in);  // <= ATTN_MAX_DIM: validated
  for (size_t i = 0; i < n; ++i) {
    const bool ok = dtype == kS32 ? detail::bias_in_range(read_s32(data, i), inputs)
                                  : detail::bias_in_range(read_s64(data, i), inputs);
    if (!ok) return Status::kBiasOutOfRange;
  }
  return Status::kOk;
}

// NormFixed's constants: eps in [0, 2^62), shift [-31, 30], the output zero point
// of an int8 matmul input (int8) or 0.
Status check_norm_consts(const uint8_t* data, bool int8_out) {
  const int64_t eps = read_s64(data, kNormEps), shift = read_s64(data, kNormShift);
  if (eps < 0 || eps >= (int64_t{1} << 62) || shift < -31 || shift > 30 ||
      !zero_point_ok(read_s64(data, kNormOutputZeroPoint), int8_out))
    return Status::kBadQuantParams;
  return Status::kOk;
}

// RescaleFixed: multiplier >= 0, shift [-31, 30], zero point of the activation type.
Status check_rescale(const uint8_t* data, bool int8) {
  if (read_s32(data, kRescaleMultiplier) < 0) return Status::kBadQuantParams;
  const int32_t shift = read_s32(data, kRescaleShift);
  if (shift < -31 || shift > 30 || !zero_point_ok(read_s32(data, kRescaleZeroPoint), int8))
    return Status::kBadQuantParams;
  return Status::kOk;
}

// FfnS8's zero points and gate constants, or FfnS16's act multiplier and shift.
Status check_ffn_consts(const uint8_t* data, bool s8, bool gated) {
  const int32_t h1 = read_s32(data, kFfnH1ZeroPoint), h3 = read_s32(data, kFfnH3ZeroPoint);
  const int32_t g = read_s32(data, kFfnGZeroPoint);
  const int32_t mult = read_s32(data, kFfnActMultiplier), shift = read_s32(data, kFfnActShift);
  if (s8 && !gated) {  // the table alone: no gate product
    if (h3 != 0 || mult != 0 || shift != 0) return Status::kBadReserved;
    return zero_point_ok(h1, true) && zero_point_ok(g, true) ? Status::kOk : Status::kBadQuantParams;
  }
  if (!zero_point_ok(h1, s8) || !zero_point_ok(h3, s8) || !zero_point_ok(g, s8) || mult < 0 || shift < -31 ||
      shift > (s8 || !gated ? 30 : 14))
    return Status::kBadQuantParams;
  return Status::kOk;
}

// The tokenizer tensor: a blob Tokenizer::load accepts (its own statuses for
// its tables; kBadTokenizerSection for what makes it no blob at all), with
// no more pieces than the model's vocabulary (kTokenizerVocabMismatch).
Status check_tokenizer(const uint8_t* data, uint64_t bytes, const ModelRecord* m) {
  Tokenizer t;
  const Status s = Tokenizer::load(data, static_cast<size_t>(bytes), &t);
  switch (s) {
    case Status::kOk:
      break;
    case Status::kBadMagic:
    case Status::kUnsupportedVersion:
    case Status::kBadHeaderSize:
    case Status::kTruncated:
    case Status::kFileSizeMismatch:
    case Status::kOffsetOutOfBounds:
    case Status::kBadReserved:
    case Status::kBlobMisaligned:
      return Status::kBadTokenizerSection;
    default:
      return s;
  }
  if (m == nullptr || static_cast<uint32_t>(t.vocab_size()) > m->vocab_size)
    return Status::kTokenizerVocabMismatch;
  return Status::kOk;
}

// An s8/s16 block's scalar constants (QuantParam).
Status check_quant_params(const uint8_t* data, const BlockRecord& b) {
  const int32_t coverage = read_s32(data, kQpMaskCoverage), key_length = read_s32(data, kQpMaskKeyLength);
  ATTN_TRY(detail::mask_coverage_status(coverage, key_length));
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

}  // namespace

Status check_values(const TensorRule& r, const BlockRecord& b, const ModelRecord* m, const TensorDesc& t,
                    const uint8_t* data) {
  const size_t n = t.dims[0];
  const bool s8 = r.owner_dtype == kS8;
  switch (r.check) {
    case Check::kAny:
      return Status::kOk;
    case Check::kMultipliers:
      return check_multipliers(data, n);
    case Check::kShifts:
      return check_shifts(data, n, max_shift(r.owner_dtype));
    case Check::kShifts30:
      return check_shifts(data, n, 30);
    case Check::kBiasE:
      return check_biases(data, n, t.dtype, b.embed_dim);
    case Check::kBiasKdim:
      return check_biases(data, n, t.dtype, b.kdim);
    case Check::kBiasVdim:
      return check_biases(data, n, t.dtype, b.vdim);
    case Check::kBiasD:
      return check_biases(data, n, t.dtype, b.num_heads * b.head_dim);
    case Check::kBiasF:
      return check_biases(data, n, t.dtype, m != nullptr ? m->ffn_dim : 0);
    case Check::kNormBias:
      for (size_t i = 0; i < n; ++i) {  // |bias| < 2^29, as the forward's norm check
        const int32_t v = read_s32(data, i);
        if (v <= -(int32_t{1} << 29) || v >= (int32_t{1} << 29)) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Check::kLayerNormConsts:  // pre-norm: into the attention / FFN input; post-norm: the int32 residual
      return check_norm_consts(data, s8 && has(m, kModelPreNorm));
    case Check::kEmbeddingNormConsts:  // onto the residual
      return check_norm_consts(data, false);
    case Check::kFinalNormConsts:  // into the head input, or the int32 hidden output
      return check_norm_consts(data, s8 && (has(m, kModelHeadTied) || has(m, kModelHeadUntied)));
    case Check::kRescale:
      return check_rescale(data, s8);
    case Check::kActTableS16:  // |entry| <= 2^20 keeps the int32 interpolation exact
      for (size_t i = 0; i < n; ++i) {
        const int32_t v = read_s32(data, i);
        if (v < -(1 << 20) || v > (1 << 20)) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Check::kFfnConsts:
      return check_ffn_consts(data, s8, has(m, kModelGatedFfn));
    case Check::kScales:
      for (size_t i = 0; i < n; ++i) {
        if (!positive_finite_bits(static_cast<uint32_t>(read_s32(data, i)))) return Status::kBadQuantParams;
      }
      return Status::kOk;
    case Check::kQuantParams:
      return check_quant_params(data, b);
    case Check::kTokenizer:
      return check_tokenizer(data, t.byte_size, m);
    case Check::kRopeTable:
      for (size_t i = 0; i < n * t.dims[1]; ++i) {
        int16_t v = 0;
        std::memcpy(&v, data + i * sizeof v, sizeof v);
        if (v < -(1 << kRopeFracBits) || v > (1 << kRopeFracBits)) return Status::kBadQuantParams;
      }
      return Status::kOk;
  }
  return Status::kOk;
}

}  // namespace format
}  // namespace attn
