// model.cpp: zero-copy views of a validated .attn blob (formats v1..v3):
// Model::load runs the validator (format/validate.cpp) once; afterwards
// block(), tensor() and the transformer accessors only read validated
// records. Records are copied field-wise into locals with memcpy, so the
// tables need no alignment; tensor data is handed out in place.
#include <cstring>

#include "attn/model.h"
#include "format/validate.h"

namespace attn {
namespace {

using format::BlockRecord;
using format::Header;
using format::ModelRecord;
using format::read_record;
using format::Role;
using format::TensorDesc;

constexpr uint16_t kF32 = static_cast<uint16_t>(DType::kF32);

}  // namespace

Status Model::load(const void* data, size_t size, Model* out) {
  if (data == nullptr || out == nullptr) return Status::kNullArgument;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  format::FileLayout f;
  ATTN_TRY(format::validate(p, size, &f));
  out->base_ = p;
  out->size_ = size;
  out->block_count_ = f.block_count;
  out->tensor_count_ = f.tensor_count;
  out->blocks_offset_ = f.blocks_offset;
  out->tensors_offset_ = f.tensors_offset;
  out->data_offset_ = f.data_offset;
  out->model_ = f.model;
  out->version_ = f.version;
  return Status::kOk;
}

Status Model::file_bytes(const void* data, size_t available, size_t* out) {
  if (data == nullptr || out == nullptr) return Status::kNullArgument;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  ATTN_TRY(format::check_preamble(p, available));
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
  ATTN_TRY(format::check_preamble(base_, size_));
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
  uint32_t int4_roles = 0;           // bit r: role r's tensor holds int4 weights
  RopeTable rope;                    // null unless the block has rotary embedding
  for (uint32_t t = 0; t < tensor_count_; ++t) {
    TensorView v;
    ATTN_TRY(tensor(t, &v));
    const uint16_t r = static_cast<uint16_t>(v.role);
    if (v.block == i && r < kRoles) by_role[r] = v.data;
    if (v.block == i && r < kRoles && v.dtype == DType::kS4) int4_roles |= uint32_t{1} << r;
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
  const auto int4_weights = [&](auto& w) {  // int4 weights go to weight_s4 (load checked the roles)
    const auto set = [&](auto& p, Role r) {
      if ((int4_roles >> static_cast<uint16_t>(r) & 1u) == 0) return;
      p.weight_s4 = static_cast<const uint8_t*>(by_role[static_cast<uint16_t>(r)]);
      p.weight = nullptr;
    };
    set(w.q, Role::kWq);
    set(w.k, Role::kWk);
    set(w.v, Role::kWv);
    set(w.o, Role::kWo);
  };
  const auto set_softmax_rope_mask = [&](auto& w) {  // what WeightsS8 and WeightsS16 share
    w.softmax = sm;
    w.context_multiplier = qp[format::kQpContextMultiplier];
    w.context_shift = qp[format::kQpContextShift];
    w.rope = rope;
    w.mask_coverage = static_cast<MaskCoverage>(qp[format::kQpMaskCoverage]);  // checked at load
    w.mask_key_length = qp[format::kQpMaskKeyLength];
  };
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
    int4_weights(w);
    set_softmax_rope_mask(w);
  } else {
    WeightsS16& w = b->s16;
    w.q = ProjectionS16{s8(Role::kWq), s64(Role::kBq), s32(Role::kQMultiplier), s32(Role::kQShift)};
    w.k = ProjectionS16{s8(Role::kWk), s64(Role::kBk), s32(Role::kKMultiplier), s32(Role::kKShift)};
    w.v = ProjectionS16{s8(Role::kWv), s64(Role::kBv), s32(Role::kVMultiplier), s32(Role::kVShift)};
    w.o = ProjectionS16{s8(Role::kWo), s64(Role::kBo), s32(Role::kOMultiplier), s32(Role::kOShift)};
    int4_weights(w);
    set_softmax_rope_mask(w);
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
void set_projection_table(Projection* p, int32_t k, const TensorView& v) {
  const void* data = v.data;
  if (k == 0 && v.dtype == DType::kS4) p->weight_s4 = static_cast<const uint8_t*>(data);
  if (k == 0 && v.dtype != DType::kS4) p->weight = static_cast<const int8_t*>(data);
  if (k == 1) p->bias = static_cast<decltype(p->bias)>(data);
  if (k == 2) p->multiplier = static_cast<const int32_t*>(data);
  if (k == 3) p->shift = static_cast<const int32_t*>(data);
}

// One of the embedding's three tables (table, multiplier, shift: k = 0..2).
void set_embedding_table(EmbeddingFixed* e, int32_t k, const void* data) {
  if (k == 0) e->table = static_cast<const int8_t*>(data);
  if (k == 1) e->multiplier = static_cast<const int32_t*>(data);
  if (k == 2) e->shift = static_cast<const int32_t*>(data);
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
    const auto in = [&](Role first, int32_t count) { return from(first) >= 0 && from(first) < count; };
    if (v.block != format::kNoBlock) {
      Layer& L = layers[v.block];
      if (in(Role::kIntNorm1Weight, 3)) set_norm_table(&L.norm1, v.role, v, Role::kIntNorm1Weight);
      if (in(Role::kIntNorm2Weight, 3)) set_norm_table(&L.norm2, v.role, v, Role::kIntNorm2Weight);
      if (v.role == Role::kAttnIn) L.attn_in = rescale_of(v);
      if (v.role == Role::kAttnOut) L.attn_out = rescale_of(v);
      if (v.role == Role::kFfnIn) L.ffn_in = rescale_of(v);
      if (in(Role::kIntFfnW1, 4)) set_projection_table(&L.ffn.w1, from(Role::kIntFfnW1), v);
      if (in(Role::kIntFfnW2, 4)) set_projection_table(&L.ffn.w2, from(Role::kIntFfnW2), v);
      if (in(Role::kIntFfnW3, 4)) set_projection_table(&L.ffn.w3, from(Role::kIntFfnW3), v);
      if (v.role == Role::kFfnActTable) set_act_table(&L.ffn, v);
      if (v.role == Role::kFfnConsts) set_ffn_consts(&L.ffn, v);
      continue;
    }
    // Model tables; user tensors: none.
    if (in(Role::kIntTokenEmbedding, 3))
      set_embedding_table(&w.token_embedding, from(Role::kIntTokenEmbedding), v.data);
    if (in(Role::kIntPositionEmbedding, 3))
      set_embedding_table(&w.position_embedding, from(Role::kIntPositionEmbedding), v.data);
    if (v.role == Role::kIntTypeEmbedding) w.type_embedding = static_cast<const int32_t*>(v.data);
    if (in(Role::kIntEmbeddingNormWeight, 3))
      set_norm_table(&w.embedding_norm, v.role, v, Role::kIntEmbeddingNormWeight);
    if (in(Role::kIntFinalNormWeight, 3)) set_norm_table(&w.final_norm, v.role, v, Role::kIntFinalNormWeight);
    if (v.role == Role::kHeadIn) w.head_in = rescale_of(v);
    if (in(Role::kIntLmHead, 4)) set_projection_table(&w.head, from(Role::kIntLmHead), v);
    if (v.role == Role::kModelScales) {
      w.residual_scale = read_at<float>(v.data, format::kResidualScale);
      w.output_scale = read_at<float>(v.data, format::kOutputScale);
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

Status Model::tokenizer(Tokenizer* out) const {
  if (out == nullptr) return Status::kNullArgument;
  for (uint32_t i = 0; i < tensor_count_; ++i) {
    TensorView v;
    ATTN_TRY(tensor(i, &v));
    if (v.role == Role::kTokenizer) return Tokenizer::load(v.data, v.byte_size, out);
  }
  return Status::kNotFound;
}

}  // namespace attn
