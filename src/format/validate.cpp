// validate.cpp: the .attn validator (format/validate.h): the header, the
// model record, the block records, the tensor descriptors, then each block's
// tensors and the model's own against the rule table (format/tensor_rules.h),
// in file order, returning the first problem found.
#include "format/validate.h"

#include "format/tensor_rules.h"

namespace attn {
namespace format {
namespace {

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

bool known_dtype(uint16_t d) { return d >= 1 && d <= 7; }

// Block dtypes this loader runs: f32 from v1 on, s8/s16 from v2 on.
bool known_block_dtype(uint16_t d, uint16_t version) {
  return d == kF32 || (version >= kVersionQuantized && (d == kS8 || d == kS16));
}

bool model_role(uint16_t role) { return role >= kFirstModelRole && role <= kMaxModelRole; }

bool known_layout(uint16_t l) { return l == static_cast<uint16_t>(Layout::kPlain); }

}  // namespace

Status check_preamble(const uint8_t* p, size_t size) {
  if (size < sizeof(uint32_t)) return Status::kTruncated;
  uint32_t magic = 0;
  std::memcpy(&magic, p, sizeof magic);
  if (magic != kMagic) return Status::kBadMagic;
  if (size < offsetof(Header, crc32)) return Status::kTruncated;
  uint16_t version = 0, header_size = 0;
  std::memcpy(&version, p + offsetof(Header, version), sizeof version);
  std::memcpy(&header_size, p + offsetof(Header, header_size), sizeof header_size);
  if (version == 0 || version > kVersion) return Status::kUnsupportedVersion;
  if (header_size != sizeof(Header)) return Status::kBadHeaderSize;  // the only size of v1..v3
  if (size < sizeof(Header)) return Status::kTruncated;
  return Status::kOk;
}

namespace {

Status check_dim(uint32_t v, uint32_t cap) {
  if (v == 0) return Status::kBadDims;
  if (v > cap) return Status::kDimsTooLarge;
  return Status::kOk;
}

constexpr uint32_t kMaxRopeBaseBits = 0x7149F2CAu;  // 1e30f, as plan_attention() allows

Status check_block(const BlockRecord& b, uint16_t version) {
  if (!known_dtype(b.dtype) || !known_block_dtype(b.dtype, version)) return Status::kUnknownDtype;
  if ((b.flags & ~kKnownBlockFlags) != 0) return Status::kUnknownFlags;
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
Status check_name(const char (&name)[kNameBytes]) {
  if (name[0] == '\0') return Status::kBadTensorName;
  size_t n = 0;
  while (n < kNameBytes && name[n] != '\0') ++n;
  if (n == kNameBytes) return Status::kBadTensorName;
  for (size_t i = n; i < kNameBytes; ++i) {
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
    if (t.block != kNoBlock) return Status::kBadBlock;
  } else if (t.block >= h.block_count) {
    return Status::kBadBlock;
  }
  if (t.rank < 1 || t.rank > kMaxRank) return Status::kBadDims;
  uint64_t elements = 1;
  for (int i = 0; i < kMaxRank; ++i) {
    const uint32_t v = t.dims[i];
    if (i >= t.rank) {
      if (v != 0) return Status::kBadReserved;
      continue;
    }
    ATTN_TRY(check_dim(v, ATTN_MAX_TENSOR_DIM));
    if (!mul_u64(elements, v, &elements)) return Status::kSizeOverflow;
  }
  uint64_t bytes = 0;
  if (t.dtype == static_cast<uint16_t>(DType::kS4)) {
    // int4: two per byte, each row (the last dimension) in whole bytes.
    if (t.dims[t.rank - 1] % 2 != 0) return Status::kBadDims;
    bytes = elements / 2;
  } else if (!mul_u64(elements, dtype_bytes(static_cast<DType>(t.dtype)), &bytes)) {
    return Status::kSizeOverflow;
  }
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

Status check_header(const uint8_t* p, size_t size, Header* h) {
  ATTN_TRY(check_preamble(p, size));
  *h = read_record<Header>(p);
  if (h->file_size > size) return Status::kTruncated;
  if (h->file_size < size) return Status::kFileSizeMismatch;
  if (crc32(p + kCrcStart, size - kCrcStart) != h->crc32) return Status::kCrcMismatch;
  if ((h->flags & ~kKnownHeaderFlags) != 0) return Status::kUnknownFlags;
  const bool model = (h->flags & kHeaderModel) != 0;
  if (model && h->version < kVersionModel) return Status::kUnknownFlags;  // v1, v2 define no flags
  if (h->reserved0 != 0) return Status::kBadReserved;
  const uint32_t a = h->data_align;
  if (a < kMinDataAlign || a > ATTN_MAX_DATA_ALIGN || (a & (a - 1)) != 0) return Status::kBadAlignment;
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
  if ((m.flags & ~kKnownModelFlags) != 0) return Status::kUnknownFlags;
  if (h.block_count == 0 || h.block_count > ATTN_MAX_LAYERS) return Status::kBadNumLayers;
  if (m.vocab_size == 0 || m.vocab_size > kMaxVocab || m.type_vocab_size > kMaxTypeVocab)
    return Status::kBadVocab;
  if ((m.flags & kModelByteVocab) != 0 && m.vocab_size < 256) return Status::kBadVocab;
  if (m.max_positions == 0 || m.max_positions > ATTN_MAX_SEQ) return Status::kBadMaxPositions;
  if (m.ffn_dim == 0 || m.ffn_dim > ATTN_MAX_DIM) return Status::kBadFfnDim;
  if (!known_dtype(m.dtype) || !known_block_dtype(m.dtype, h.version) || !known_model_dtype(m.dtype))
    return Status::kUnknownDtype;
  const bool layer_norm = m.norm == static_cast<uint8_t>(NormKind::kLayerNorm);
  if (!layer_norm && m.norm != static_cast<uint8_t>(NormKind::kRmsNorm)) return Status::kBadNorm;
  if (!layer_norm && (m.flags & kModelNormBias) != 0) return Status::kBadNorm;  // RMSNorm has no bias
  if (m.norm_eps == 0 || m.norm_eps >= kOneBits) return Status::kBadNorm;
  if (m.activation < static_cast<uint8_t>(Activation::kGelu) ||
      m.activation > static_cast<uint8_t>(Activation::kSilu))
    return Status::kBadActivation;
  if ((m.flags & kModelHeadTied) != 0 && (m.flags & kModelHeadUntied) != 0) return Status::kBadHead;
  return Status::kOk;
}

// Every layer's block record: self-attention of width E, of the model's
// dtype, the same as the first layer's.
Status check_layer_block(const BlockRecord& b, const BlockRecord& first, const ModelRecord& m) {
  if (b.dtype != m.dtype || b.kdim != b.embed_dim || b.vdim != b.embed_dim) return Status::kBadModelRecord;
  if (std::memcmp(&b, &first, sizeof b) != 0) return Status::kBadModelRecord;
  return Status::kOk;
}

// The tensors of one scope against the rule table: block `index` (its
// attention tensors and, in a model, its layer tensors: roles < 64) or, with
// index kNoBlock, the model's own tensors (roles 64..127; user tensors have
// no rules). Each role at most once (a bit set), present iff its row's
// condition holds, with the row's dtype, shape and values. `b` is the block's
// record (the first block's for the model's tensors: every layer is alike).
Status check_scope(const uint8_t* p, const Header& h, uint32_t index, const BlockRecord& b,
                   const ModelRecord* m) {
  const bool model_scope = index == kNoBlock;
  const uint16_t owner = model_scope ? (m != nullptr ? m->dtype : uint16_t{0}) : b.dtype;
  const uint16_t first_role = model_scope ? kFirstModelRole : 0;
  const size_t tensors_at = static_cast<size_t>(h.tensors_offset);
  uint64_t seen = 0;
  uint32_t rope_rows[2] = {0, 0};  // positions of the cos and sin tables
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const TensorDesc t = read_record<TensorDesc>(p + tensors_at + size_t{i} * sizeof(TensorDesc));
    if (t.block != index || t.role == static_cast<uint16_t>(Role::kUser)) continue;
    // check_tensor put model roles outside every block and the others inside one.
    const TensorRule* r = find_rule(owner, t.role, b, m);
    if (r == nullptr) return Status::kUnknownRole;
    const uint64_t bit = uint64_t{1} << (t.role - first_role);
    if ((seen & bit) != 0) return Status::kDuplicateRole;
    seen |= bit;
    // A tensor its row's condition rules out; a bias in a block without bias has the wrong dims.
    if (!rule_applies(*r, b, m))
      return r->when == When::kBiasFlag ? Status::kDimsMismatch : Status::kUnknownRole;
    if (t.dtype != r->dtype && !(t.dtype == static_cast<uint16_t>(DType::kS4) && int4_weights_allowed(*r)))
      return Status::kDtypeMismatch;
    if (t.layout != static_cast<uint16_t>(Layout::kPlain)) return Status::kUnknownLayout;
    if (t.rank != rank_of(*r)) return Status::kDimsMismatch;
    for (uint16_t k = 0; k < t.rank; ++k) {
      const uint32_t want = resolve(r->dims[k], b, m);  // 0: any (a block file's rope positions)
      if (want != 0 && t.dims[k] != want) return Status::kDimsMismatch;
    }
    if (r->role == Role::kRopeCos || r->role == Role::kRopeSin)
      rope_rows[r->role == Role::kRopeSin ? 1 : 0] = t.dims[0];
    // Offsets and sizes are checked: the tensor lies inside the data section.
    ATTN_TRY(
        check_values(*r, b, m, t, p + static_cast<size_t>(h.data_offset) + static_cast<size_t>(t.offset)));
  }
  for (const TensorRule& r : kTensorRules) {
    const uint16_t role = static_cast<uint16_t>(r.role);
    if (r.owner_dtype != owner || model_role(role) != model_scope || !rule_applies(r, b, m) ||
        r.when == When::kOptional)
      continue;
    if ((seen & (uint64_t{1} << (role - first_role))) == 0) return Status::kMissingTensor;
  }
  if (rope_rows[0] != rope_rows[1]) return Status::kDimsMismatch;  // cos and sin cover the same positions
  return Status::kOk;
}

}  // namespace

Status validate(const uint8_t* p, size_t size, FileLayout* out) {
  if (reinterpret_cast<uintptr_t>(p) % kMinDataAlign != 0) return Status::kBlobMisaligned;
  Header h{};
  ATTN_TRY(check_header(p, size, &h));
  // Offsets are now <= file_size == size, so they fit size_t.
  const size_t blocks_at = static_cast<size_t>(h.blocks_offset);
  const size_t tensors_at = static_cast<size_t>(h.tensors_offset);
  const uint64_t data_bytes = h.file_size - h.data_offset;
  const bool is_model = (h.flags & kHeaderModel) != 0;
  ModelRecord mr{};
  if (is_model) {
    mr = read_record<ModelRecord>(p + kModelRecordOffset);  // blocks_offset >= 128 <= size: inside
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
      if (std::memcmp(t.name, u.name, kNameBytes) == 0) return Status::kDuplicateName;
      if (t.offset < u.offset + u.byte_size && u.offset < t.offset + t.byte_size)
        return Status::kTensorOverlap;
    }
  }
  // Each block's tensors, then the model's own.
  for (uint32_t b = 0; b < h.block_count; ++b) {
    const BlockRecord r = read_record<BlockRecord>(p + blocks_at + size_t{b} * sizeof(BlockRecord));
    ATTN_TRY(check_scope(p, h, b, r, model));
  }
  ATTN_TRY(check_scope(p, h, kNoBlock, first, model));

  FileLayout f;
  f.version = h.version;
  f.model = is_model;
  f.block_count = h.block_count;
  f.tensor_count = h.tensor_count;
  f.blocks_offset = blocks_at;
  f.tensors_offset = tensors_at;
  f.data_offset = static_cast<size_t>(h.data_offset);
  *out = f;
  return Status::kOk;
}

}  // namespace format
}  // namespace attn
