// attn/model.h: the .attn flat binary (formats v1..v3) and its zero-copy loader.
//
// This header is the single source of truth for the file layout; FORMAT.md
// beside it describes the same layout for humans. All fields little-endian.
//
//   [Header 64 B][ModelRecord 64 B, v3 whole models only][BlockRecord x block_count]
//   [TensorDesc x tensor_count][pad][data section]
//
// Use:
//   attn::Model model;                      // no constructor work: fine as a global
//   ATTN_TRY(attn::Model::load(blob, blob_size, &model));   // validates everything, once
//   attn::Block b;
//   ATTN_TRY(model.block(0, &b));           // b.config, b.dtype, b.f32 (pointers into blob)
//   attn::TensorView emb;
//   ATTN_TRY(model.find_tensor("embedding", &emb));
//
// A whole model (v3, model.is_model()):
//   attn::TransformerConfig cfg;
//   ATTN_TRY(model.transformer_config(&cfg));
//   attn::LayerWeightsF32 layers[ATTN_MAX_LAYERS];
//   attn::TransformerWeightsF32 w;
//   ATTN_TRY(model.transformer_weights_f32(layers, ATTN_MAX_LAYERS, &w));
//   (an s8 / s16 model: transformer_weights_s8 / _s16 into LayerWeightsS8 / S16)
//
// The loader copies nothing and allocates nothing: every pointer it hands
// out points into the caller's buffer, which must outlive the Model and be
// 16-byte aligned (then every tensor is aligned to its dtype and to 16).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/status.h"
#include "attn/tensor.h"
#include "attn/tokenizer.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"

// Caps checked by the loader (override with -D, like attn/config.h).
#ifndef ATTN_MAX_BLOCKS
#define ATTN_MAX_BLOCKS 256  // attention blocks per file
#endif
#ifndef ATTN_MAX_TENSORS
#define ATTN_MAX_TENSORS 4096  // tensor descriptors per file
#endif
#ifndef ATTN_MAX_TENSOR_DIM
#define ATTN_MAX_TENSOR_DIM (1u << 24)  // any one dim of any tensor
#endif
#ifndef ATTN_MAX_DATA_ALIGN
#define ATTN_MAX_DATA_ALIGN 65536u  // largest data alignment a file may ask for
#endif

namespace attn {
namespace format {

constexpr uint32_t kMagic = 0x4E545441u;  // bytes "ATTN"
constexpr uint16_t kVersion = 3;          // the newest version this loader reads
// Version 2 adds s8/s16 blocks and roles 16..27; nothing else changes. Writers
// use the lowest version that describes the file: 1 when every block is f32.
constexpr uint16_t kVersionQuantized = 2;
// Version 3 adds whole models: the kHeaderModel flag, the ModelRecord at
// offset 64, layer roles 28..63 and model roles 64..127. Block-only files keep
// version 1 or 2.
constexpr uint16_t kVersionModel = 3;
constexpr uint32_t kMinDataAlign = 16;
constexpr uint32_t kNoBlock = 0xFFFFFFFFu;  // TensorDesc::block of a user tensor
constexpr size_t kNameBytes = 64;           // NUL-terminated, NUL-padded
constexpr int kMaxRank = 4;

// Header flags. v1 and v2 define none; a set unknown bit is rejected.
constexpr uint32_t kHeaderModel = 1u << 0;  // v3: a whole model, ModelRecord at kModelRecordOffset
constexpr uint32_t kKnownHeaderFlags = kHeaderModel;
constexpr size_t kModelRecordOffset = 64;  // right after the header; blocks_offset >= 128 then

// BlockRecord flags.
constexpr uint16_t kBlockBias = 1u << 0;  // bq, bk, bv, bo present
constexpr uint16_t kKnownBlockFlags = kBlockBias;

// What a tensor is: one enumerator per row of attn/role_list.h (the one list
// of roles: value, canonical name, what it holds; the C API's ATTN_ROLE_*
// come from the same rows). Values are stable across versions; new roles are
// added, never renumbered. 1..27: attention block tensors (16..27: the tables
// of s8/s16 blocks); 15: user tensors; 28..63: layer tensors of whole models
// (28..37 f32, 40..62 s8/s16); 64..127: model tensors (64..71 f32, 72..90
// s8/s16). Which roles a block, layer or model holds, with which dtype and
// shape: attn/FORMAT.md, checked from one rule table by the loader
// (src/format/tensor_rules.cpp).
//
// Dtypes and shapes per block dtype (D = heads * head_dim, Dkv = n_kv_heads * head_dim,
// Dkv = D when n_kv_heads is 0; Wk, Wv, bk, bv are [Dkv, ...]):
//            f32 block      s8 block                     s16 block
//   Wq..Wo   f32            s8                           s8
//   bq       f32 [D]        s32 [D], always present      s64 [D], iff kBlockBias
//   bk bv    f32 [Dkv]      s32 [Dkv], always present    s64 [Dkv], iff kBlockBias
//   bo       f32 [E]        s32 [E], always present      s64 [E], iff kBlockBias
//   16..23   -              s32 per-channel multipliers (Q0.31, >= 0) and shifts of Q [D], K, V [Dkv],
//                           output [E]
//   24       -              s32 [kQuantParamCount]: the block's scalar constants (QuantParam)
//   25       -              f32 [4]: I/O scales (query, key, value, output) for the caller's
//                           float <-> int conversion; the integer forward never reads them
//   26, 27   -              s16 [P, head_dim / 2] rotary cos / sin tables (attn::RopeTable, Q1.14
//                           in [-16384, 16384]), required iff the block has rope; P >= 1 is the
//                           converter's max positions, the same in both
// s8 biases carry the input zero-point fold (see attn::ProjectionS8), hence always present.
enum class Role : uint16_t {
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and values
#define ATTN_ROLE(cpp_name, c_name, value, name, doc) cpp_name = value,
// NOLINTEND(bugprone-macro-parentheses)
#include "attn/role_list.h"
#undef ATTN_ROLE
};

// The role's canonical tensor name, as attn/role_list.h gives it ("wq",
// "norm1_weight", ...: `block.<i>.` or `model.` goes before it in a file);
// null for a number that is no role. A string in flash, nothing formatted.
const char* role_name(Role r);

// Entries of the s64 [3] norm constants (roles 42, 45, 81, 84) of integer models.
enum NormConst : uint32_t {
  kNormEps = 0,              // NormFixed::eps, [0, 2^62)
  kNormShift = 1,            // NormFixed::shift, [1, 62]
  kNormOutputZeroPoint = 2,  // s8 into an int8 matmul input: [-128, 127]; otherwise 0
  kNormConstCount = 3,
};
// Entries of the s32 [3] rescales (roles 46, 47, 48, 85): attn::RescaleFixed.
enum RescaleConst : uint32_t {
  kRescaleMultiplier = 0,  // >= 0
  kRescaleShift = 1,       // [-31, 30]
  kRescaleZeroPoint = 2,   // s8: [-128, 127]; s16: 0
  kRescaleConstCount = 3,
};
// Entries of the s32 [5] FFN constants (role 62). s8: FfnS8's zero points and
// the gate's multiplier and shift (plain FFN: h3_zero_point, multiplier and
// shift 0); s16: zero points 0, FfnS16::act_multiplier and act_shift.
enum FfnConst : uint32_t {
  kFfnH1ZeroPoint = 0,
  kFfnH3ZeroPoint = 1,
  kFfnGZeroPoint = 2,
  kFfnActMultiplier = 3,  // s8 gated: gate_multiplier; s16: act_multiplier (>= 0)
  kFfnActShift = 4,       // s8 gated: gate_shift [-31, 30]; s16: act_shift, [-31, 30] plain, [-31, 14] gated
  kFfnConstCount = 5,
};
// Entries of the f32 [2] model scales (role 90): real = scale * q. Not read by
// the integer forward (TransformerWeightsFixed::residual_scale, ::output_scale).
enum ModelScale : uint32_t {
  kResidualScale = 0,
  kOutputScale = 1,
  kModelScaleCount = 2,
};

// Entries of the kQuantParams table of an s8/s16 block. s16 zero points are 0.
enum QuantParam : uint32_t {
  kQpQueryZeroPoint = 0,  // I/O zero points, [-128, 127] (s8)
  kQpKeyZeroPoint = 1,
  kQpValueZeroPoint = 2,
  kQpOutputZeroPoint = 3,
  kQpQZeroPoint = 4,  // zero points of the projected Q, K, V and of the context
  kQpKZeroPoint = 5,
  kQpVZeroPoint = 6,
  kQpContextZeroPoint = 7,
  kQpExpMultiplier = 8,  // FusedSoftmaxParams, the multiplier's uint32 bits
  kQpExpShift = 9,
  kQpDiffLimit = 10,
  kQpScoreShift = 11,
  kQpContextMultiplier = 12,
  kQpContextShift = 13,
  kQpMaskCoverage = 14,   // attn::MaskCoverage: 0 any mask (files before the field), 1 none, 2 causal from
                          // offset N, 3 key length N, 4 causal window N, 5 causal key length N; others
                          // kBadQuantParams
  kQpMaskKeyLength = 15,  // the N of coverage 2, 3, 5 (0..ATTN_MAX_SEQ) or 4 (1..ATTN_MAX_SEQ); else 0
                          // (kBadReserved)
  kQuantParamCount = 16,
};
constexpr int kIoScaleCount = 4;
constexpr uint16_t kMaxRole = 63;  // block and layer roles are < 64 so a block's roles fit a uint64_t bit set
constexpr uint16_t kFirstLayerRole = 28;  // 28..63: layer roles of whole models (block = the layer)
// Model roles (block = kNoBlock) are 64..127: they fit a bit set of their own.
constexpr uint16_t kFirstModelRole = 64;
constexpr uint16_t kMaxModelRole = 127;

// How a tensor's bytes are laid out. kPlain: row-major, PyTorch's [out, in]
// for weights. Packed layouts chosen at conversion get new ids.
enum class Layout : uint16_t {
  kPlain = 0,
};

// 64 bytes at offset 0.
struct Header {
  uint32_t magic;           // kMagic
  uint16_t version;         // 1..3 (kVersion)
  uint16_t header_size;     // sizeof(Header)
  uint32_t crc32;           // CRC-32 (IEEE, zlib's) of bytes [12, file_size)
  uint32_t flags;           // kKnownHeaderFlags
  uint64_t file_size;       // total bytes, == the buffer length
  uint32_t data_align;      // power of two in [16, ATTN_MAX_DATA_ALIGN]
  uint32_t block_count;     // <= ATTN_MAX_BLOCKS
  uint32_t tensor_count;    // <= ATTN_MAX_TENSORS
  uint32_t reserved0;       // 0
  uint64_t blocks_offset;   // from file start; >= header_size (+ sizeof(ModelRecord) with kHeaderModel)
  uint64_t tensors_offset;  // from file start; >= end of the block table
  uint64_t data_offset;     // from file start; >= end of the tensor table, multiple of data_align
};

// One attention block, 64 bytes. All dims resolved (never 0).
struct BlockRecord {
  uint32_t embed_dim;    // E
  uint32_t num_heads;    // H
  uint32_t head_dim;     // D / H
  uint32_t kdim;         // width of the key input
  uint32_t vdim;         // width of the value input
  uint16_t dtype;        // attn::DType: kF32 (v1), kS8 or kS16 (v2)
  uint16_t flags;        // kBlockBias
  uint32_t n_kv_heads;   // K/V heads (GQA/MQA), divides num_heads; 0: num_heads (MHA)
  uint32_t rope;         // float32 bits of the RoPE base (finite, > 0); 0: no rotary embedding
  uint32_t reserved[8];  // 0
};

// ModelRecord::norm and ::activation hold attn::NormKind / attn::Activation values.
// ModelRecord::flags:
constexpr uint32_t kModelPreNorm = 1u << 0;           // pre-norm layers (else post-norm)
constexpr uint32_t kModelGatedFfn = 1u << 1;          // W3 present
constexpr uint32_t kModelFfnBias = 1u << 2;           // b1, b2 (and b3 when gated)
constexpr uint32_t kModelNormBias = 1u << 3;          // LayerNorm biases (never with RMSNorm)
constexpr uint32_t kModelLearnedPositions = 1u << 4;  // position embedding [max_positions, E]
constexpr uint32_t kModelEmbeddingNorm = 1u << 5;     // a norm on the embeddings (BERT)
constexpr uint32_t kModelFinalNorm = 1u << 6;         // a norm after the last layer (Llama)
constexpr uint32_t kModelCausal = 1u << 7;            // decoder
constexpr uint32_t kModelHeadTied = 1u << 8;          // logits = x token_embedding^T
constexpr uint32_t kModelHeadUntied = 1u << 9;        // logits = x lm_head^T (not with kModelHeadTied)
constexpr uint32_t kModelByteVocab = 1u << 10;        // token ids 0..255 are the bytes 0..255 (vocab >= 256)
constexpr uint32_t kKnownModelFlags = (1u << 11) - 1;
constexpr uint32_t kMaxVocab = 1u << 24;      // vocab_size 1..kMaxVocab
constexpr uint32_t kMaxTypeVocab = 1u << 16;  // type_vocab_size 0..kMaxTypeVocab

// A whole model (v3, header flag kHeaderModel), 64 bytes at offset 64. The
// layers are the blocks (block_count = num_layers, every block record equal,
// kdim = vdim = E); E, heads, head_dim, K/V heads, rope and the attention bias
// are theirs.
struct ModelRecord {
  uint32_t vocab_size;       // 1..kMaxVocab
  uint32_t max_positions;    // 1..ATTN_MAX_SEQ
  uint32_t type_vocab_size;  // 0..kMaxTypeVocab
  uint32_t ffn_dim;          // F, 1..ATTN_MAX_DIM
  uint16_t dtype;            // attn::DType of the model, = every block's dtype
  uint8_t norm;              // attn::NormKind
  uint8_t activation;        // attn::Activation
  uint32_t norm_eps;         // float32 bits: finite, > 0, < 1
  uint32_t flags;            // kModel*
  uint32_t reserved[9];      // 0
};

// One tensor, 128 bytes.
struct TensorDesc {
  char name[kNameBytes];  // unique, non-empty, NUL-terminated, zero-padded
  uint16_t role;          // Role
  uint16_t dtype;         // attn::DType
  uint16_t layout;        // Layout
  uint16_t rank;          // 1..4
  uint32_t block;         // block index, or kNoBlock for kUser
  uint32_t reserved0;     // 0
  uint32_t dims[4];       // dims[0..rank) >= 1, the rest 0; dims[rank-1] varies fastest
  uint64_t offset;        // from data_offset; multiple of data_align
  uint64_t byte_size;     // == product(dims) * dtype_bytes(dtype)
  uint64_t reserved[2];   // 0
};

static_assert(sizeof(Header) == 64, "Header is 64 bytes");
static_assert(offsetof(Header, crc32) == 8, "CRC field");
static_assert(offsetof(Header, file_size) == 16, "file_size");
static_assert(offsetof(Header, data_align) == 24, "data_align");
static_assert(offsetof(Header, blocks_offset) == 40, "blocks_offset");
static_assert(offsetof(Header, data_offset) == 56, "data_offset");
static_assert(sizeof(BlockRecord) == 64, "BlockRecord is 64 bytes");
static_assert(offsetof(BlockRecord, dtype) == 20, "BlockRecord.dtype");
static_assert(offsetof(BlockRecord, n_kv_heads) == 24, "BlockRecord.n_kv_heads");
static_assert(sizeof(ModelRecord) == 64, "ModelRecord is 64 bytes");
static_assert(offsetof(ModelRecord, ffn_dim) == 12, "ModelRecord.ffn_dim");
static_assert(offsetof(ModelRecord, dtype) == 16, "ModelRecord.dtype");
static_assert(offsetof(ModelRecord, norm) == 18, "ModelRecord.norm");
static_assert(offsetof(ModelRecord, activation) == 19, "ModelRecord.activation");
static_assert(offsetof(ModelRecord, norm_eps) == 20, "ModelRecord.norm_eps");
static_assert(offsetof(ModelRecord, flags) == 24, "ModelRecord.flags");
static_assert(offsetof(ModelRecord, reserved) == 28, "ModelRecord.reserved");
static_assert(sizeof(TensorDesc) == 128, "TensorDesc is 128 bytes");
static_assert(offsetof(TensorDesc, role) == 64, "TensorDesc.role");
static_assert(offsetof(TensorDesc, block) == 72, "TensorDesc.block");
static_assert(offsetof(TensorDesc, dims) == 80, "TensorDesc.dims");
static_assert(offsetof(TensorDesc, offset) == 96, "TensorDesc.offset");
static_assert(offsetof(TensorDesc, byte_size) == 104, "TensorDesc.byte_size");

constexpr size_t kCrcStart = offsetof(Header, crc32) + sizeof(uint32_t);  // 12

}  // namespace format

// CRC-32 (IEEE 802.3, reflected, as zlib.crc32): feed `crc` = 0 for the
// first chunk and the previous result for the next.
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

// A validated tensor: `data` points into the blob.
struct TensorView {
  const char* name = nullptr;
  format::Role role = format::Role::kUser;
  DType dtype = DType::kF32;
  format::Layout layout = format::Layout::kPlain;
  int32_t rank = 0;
  int32_t dims[4] = {0, 0, 0, 0};
  uint32_t block = format::kNoBlock;
  const void* data = nullptr;  // aligned to the file's data alignment
  size_t byte_size = 0;
};

// Quantization of an s8/s16 block's inputs and output: real = scale * (q - zero_point).
// Index 0 query, 1 key, 2 value, 3 output. For the caller's float <-> int conversion
// (the CLI); the integer forwards never read them.
struct BlockIoQuant {
  const float* scale = nullptr;  // [4] into the blob; each finite and > 0
  int32_t zero_point[4] = {0, 0, 0, 0};
};

// One attention block of a loaded model. Every pointer points into the blob.
struct Block {
  AttentionConfig config;  // head_dim, kdim, vdim resolved
  DType dtype = DType::kF32;
  WeightsF32 f32;   // set when dtype == kF32
  WeightsS8 s8;     // set when dtype == kS8: ready for forward_s8
  WeightsS16 s16;   // set when dtype == kS16: ready for forward_s16
  BlockIoQuant io;  // set when dtype is kS8 or kS16
};

class Model {
 public:
  constexpr Model() = default;

  // Validate the `size` bytes at `data` as a .attn file and, only on success,
  // point *out at it. `data` must stay valid and unchanged while *out is used.
  // Errors (one per class of bad file, see status.h 64..): kNullArgument,
  // kBlobMisaligned, kTruncated, kBadMagic, kUnsupportedVersion,
  // kBadHeaderSize, kFileSizeMismatch, kCrcMismatch, kUnknownFlags,
  // kBadReserved, kBadAlignment, kTooManyEntries, kOffsetOutOfBounds,
  // kSizeOverflow, kBadBlock, kBadDims, kDimsTooLarge, kUnknownDtype,
  // kUnknownRole, kUnknownLayout, kBadTensorName, kDuplicateName,
  // kBadByteSize, kTensorMisaligned, kTensorOverlap, kDtypeMismatch,
  // kDuplicateRole, kMissingTensor, kDimsMismatch, kBadKvHeads (n_kv_heads
  // not dividing num_heads), kBadRope (rope base not finite and > 0, or an odd
  // head_dim with rope); for s8/s16 blocks also kBadQuantParams (a multiplier, shift, zero point, softmax
  // constant or I/O scale out of the range the integer forward accepts; a rope table entry outside [-16384,
  // 16384]) and kBiasOutOfRange (a bias beyond the accumulator bound, FORMAT.md "Bias bound"). s8/s16 blocks
  // may have grouped K/V heads (Wk, Wv, bk, bv and the K/V multiplier and shift tables are then [Dkv, ...])
  // and rotary embedding (roles 26, 27: missing kMissingTensor, wrong dtype kDtypeMismatch, wrong rank or
  // width, or cos and sin of different lengths kDimsMismatch; in a block without rope kUnknownRole).
  // Whole models (v3, kHeaderModel): the record's fields kBadNumLayers (block_count), kBadVocab,
  // kBadMaxPositions, kBadFfnDim, kUnknownDtype, kBadNorm (kind, eps, a bias with RMSNorm),
  // kBadActivation, kBadHead (tied and untied), kUnknownFlags, kBadReserved; a layer's block record
  // unlike the first or not self-attention of the model's dtype kBadModelRecord; layer and model
  // tensors present iff the record's flags say so (kMissingTensor, kUnknownRole), once
  // (kDuplicateRole), of their rule's dtype and shape (kDtypeMismatch, kDimsMismatch), model
  // tensors outside every block and layer tensors inside one (kBadBlock).
  static Status load(const void* data, size_t size, Model* out);

  // The file size a blob's header declares, for a blob at the start of a
  // larger region (a flash partition of `available` bytes): checks magic,
  // version and header size only, then load(data, *out, ...) checks the rest.
  // Errors: kNullArgument, kTruncated (fewer than 64 bytes, or file_size >
  // available), kBadMagic, kUnsupportedVersion, kBadHeaderSize.
  static Status file_bytes(const void* data, size_t available, size_t* out);

  // Format version of the loaded file (0 when nothing is loaded).
  uint16_t version() const;

  bool loaded() const { return base_ != nullptr; }
  uint32_t block_count() const { return block_count_; }
  uint32_t tensor_count() const { return tensor_count_; }
  const void* data() const { return base_; }
  size_t size() const { return size_; }
  uint32_t crc() const;
  uint32_t data_align() const;

  // Recompute the CRC-32 of the loaded blob and compare it with its header:
  // integrity after load, on demand (firmware that scrubs its flash
  // periodically). O(file size), reads only, no state. kOk, kCrcMismatch (a
  // changed byte anywhere in [8, size): CRC field, records, tables, weights),
  // kBadMagic / kUnsupportedVersion / kBadHeaderSize (bytes [0, 8), outside
  // the CRC, checked as load() does; kUnsupportedVersion also for a version
  // other than the one loaded), or kBadHandle when nothing is loaded.
  Status verify() const;

  // Whole models (format v3, header flag kHeaderModel): the layers are the
  // blocks, the rest is the ModelRecord and the layer and model tensors.
  bool is_model() const { return model_; }
  // The record as stored (kNotAModel for a block file, kNullArgument).
  Status model_record(format::ModelRecord* out) const;
  // Token ids 0..255 are the bytes 0..255 (kModelByteVocab); false for block files.
  bool byte_vocab() const;
  // The model's hyperparameters (kNullArgument, kNotAModel).
  Status transformer_config(TransformerConfig* out) const;
  // Pointers into the blob for an f32 model: out->layers = layers, filled for
  // layers [0, num_layers). kNullArgument, kNotAModel (a block file),
  // kBadDtype (an s8/s16 model), kBufferTooSmall (capacity < num_layers).
  // (Each accessor exists in builds with its dtype: ATTN_WITH_F32 / _S8 / _S16.)
#if ATTN_WITH_F32
  Status transformer_weights_f32(LayerWeightsF32* layers, int32_t capacity, TransformerWeightsF32* out) const;
#endif
  // The same for an integer model (s8 / s16, ready for transformer_forward_s8 /
  // _s16): every table points into the blob, each layer's attention is
  // block(l)'s s8 / s16 weights, the float scales are the file's.
  // kNullArgument, kNotAModel (a block file), kBadDtype (a model of another
  // dtype), kBufferTooSmall (capacity < num_layers).
#if ATTN_WITH_S8
  Status transformer_weights_s8(LayerWeightsS8* layers, int32_t capacity, TransformerWeightsS8* out) const;
#endif
#if ATTN_WITH_S16
  Status transformer_weights_s16(LayerWeightsS16* layers, int32_t capacity, TransformerWeightsS16* out) const;
#endif

  // Block i (kBlockIndex when i >= block_count()).
  Status block(uint32_t i, Block* out) const;
  // Tensor i in file order (kTensorIndex when i >= tensor_count()).
  Status tensor(uint32_t i, TensorView* out) const;
  // The tensor with this name (kNotFound otherwise). User tensors and block
  // tensors alike; names are unique in a valid file.
  Status find_tensor(const char* name, TensorView* out) const;
  // The tensor of `role` in block `block` (kNotFound if the block has none).
  Status find_block_tensor(uint32_t block, format::Role role, TensorView* out) const;
  // The model's tokenizer (its `model.tokenizer` section, attn/tokenizer.h),
  // read in place: kNotFound if the file has none. load() has checked it.
  Status tokenizer(Tokenizer* out) const;

 private:
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint32_t block_count_ = 0;
  uint32_t tensor_count_ = 0;
  size_t blocks_offset_ = 0;
  size_t tensors_offset_ = 0;
  size_t data_offset_ = 0;
  bool model_ = false;
  uint16_t version_ = 0;  // as loaded (verify() compares: the version lies outside the CRC)

  Status quantized_block(uint32_t i, Block* b) const;
};

}  // namespace attn
