// writer.cpp: the .attn writer (format/writer.h). Host-side only: built
// into attn_writer, never into libattn.
#include "format/writer.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace attn {
namespace tools {
namespace {

// A tensor's canonical name: block.<i>.<role name> for block and layer
// roles, model.<role name> for model roles (attn/role_list.h).
std::string tensor_name(uint32_t block, format::Role role) {
  const char* name = format::role_name(role);
  if (name == nullptr)
    throw std::runtime_error("tensor_name: role " + std::to_string(static_cast<int>(role)) + " is no role");
  return (block == format::kNoBlock ? std::string("model.") : "block." + std::to_string(block) + ".") + name;
}

// Bytes of a tensor of dtype dt and dims: product(dims) * dtype_bytes, or
// half the product for int4 (two per byte; the last dim must be even).
uint64_t tensor_bytes(const std::string& name, DType dt, const std::vector<uint32_t>& dims) {
  uint64_t n = 1;
  for (uint32_t v : dims) n *= v;
  if (dt != DType::kS4) return n * dtype_bytes(dt);
  if (dims.empty() || dims.back() % 2 != 0)
    throw std::runtime_error("tensor '" + name + "': int4 needs an even last dim");
  return n / 2;
}

// A projection's weight tensor: its int4 bytes when it has weight_s4, else its int8 ones.
template <class Projection>
std::pair<DType, std::vector<uint8_t>> weight_tensor(const Projection& p, uint32_t out, uint32_t in) {
  const size_t n = size_t{out} * in;
  if (p.weight_s4 != nullptr) return {DType::kS4, std::vector<uint8_t>(p.weight_s4, p.weight_s4 + n / 2)};
  if (p.weight == nullptr) throw std::runtime_error("a projection has no weights");
  const auto* b = reinterpret_cast<const uint8_t*>(p.weight);
  return {DType::kS8, std::vector<uint8_t>(b, b + n)};
}

}  // namespace

std::string block_tensor_name(size_t block, const char* name) {
  return "block." + std::to_string(block) + "." + name;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Append an f32 block and its tensors (wq [D,E], wk [D,kdim], wv [D,vdim],
// wo [E,D], then bq bk bv [D], bo [E] when bias) in the canonical order.
void add_block_f32(ModelSpec& m, const BlockSpec& b, const std::vector<const std::vector<float>*>& w) {
  const uint32_t idx = static_cast<uint32_t>(m.blocks.size());
  const uint32_t d = b.num_heads * b.head_dim;
  const uint32_t dkv = (b.n_kv_heads != 0 ? b.n_kv_heads : b.num_heads) * b.head_dim;
  m.blocks.push_back(b);
  struct R {
    format::Role role;
    std::vector<uint32_t> dims;
  };
  std::vector<R> roles = {{format::Role::kWq, {d, b.embed_dim}},
                          {format::Role::kWk, {dkv, b.kdim}},
                          {format::Role::kWv, {dkv, b.vdim}},
                          {format::Role::kWo, {b.embed_dim, d}}};
  if (b.bias) {
    roles.push_back({format::Role::kBq, {d}});
    roles.push_back({format::Role::kBk, {dkv}});
    roles.push_back({format::Role::kBv, {dkv}});
    roles.push_back({format::Role::kBo, {b.embed_dim}});
  }
  if (w.size() != roles.size()) throw std::runtime_error("add_block_f32: wrong number of weight tensors");
  for (size_t i = 0; i < roles.size(); ++i) {
    TensorSpec t;
    t.name = tensor_name(idx, roles[i].role);
    t.role = roles[i].role;
    t.block = idx;
    t.dims = roles[i].dims;
    size_t n = 1;
    for (uint32_t v : t.dims) n *= v;
    if (w[i]->size() != n) throw std::runtime_error("add_block_f32: " + t.name + " has the wrong size");
    t.bytes = f32_bytes(*w[i]);
    m.tensors.push_back(std::move(t));
  }
}

template <class T>
std::vector<uint8_t> raw_bytes(const T* p, size_t n) {
  if (p == nullptr) throw std::runtime_error("raw_bytes: null table");
  std::vector<uint8_t> b(n * sizeof(T));
  if (n != 0) std::memcpy(b.data(), p, b.size());
  return b;
}

// Append a quantized block (b.dtype kS8 or kS16) in the canonical order:
// wq wk wv wo, bq bk bv bo (s8: always, s32; s16: with bias, s64), the
// per-channel multipliers and shifts of q k v o, the scalar table
// (format::QuantParam), the I/O scales, and with b.rope_base the rope cos and
// sin tables (w.rope). `W` is WeightsS8 or WeightsS16,
// `act` the activation quantization quantize_attention_* chose.
template <class W>
void add_block_quant(ModelSpec& m, const BlockSpec& b, const W& w, const ActivationQuant& act) {
  constexpr bool is_s8 = std::is_same<W, WeightsS8>::value;
  static_assert(is_s8 || std::is_same<W, WeightsS16>::value, "WeightsS8 or WeightsS16");
  if (b.dtype != (is_s8 ? DType::kS8 : DType::kS16))
    throw std::runtime_error("add_block_quant: block dtype disagrees with the weights");
  const uint32_t idx = static_cast<uint32_t>(m.blocks.size());
  const uint32_t d = b.num_heads * b.head_dim, e = b.embed_dim;
  const uint32_t dkv = (b.n_kv_heads != 0 ? b.n_kv_heads : b.num_heads) * b.head_dim;  // K/V rows
  m.blocks.push_back(b);
  const auto add = [&](format::Role role, DType dt, std::vector<uint32_t> dims, std::vector<uint8_t> bytes) {
    TensorSpec t;
    t.name = tensor_name(idx, role);
    t.role = role;
    t.dtype = dt;
    t.block = idx;
    t.dims = std::move(dims);
    t.bytes = std::move(bytes);
    m.tensors.push_back(std::move(t));
  };
  using format::Role;
  const auto weights = [&](Role role, const auto& pr, uint32_t out, uint32_t in) {
    auto t = weight_tensor(pr, out, in);
    add(role, t.first, {out, in}, std::move(t.second));
  };
  weights(Role::kWq, w.q, d, e);
  weights(Role::kWk, w.k, dkv, b.kdim);
  weights(Role::kWv, w.v, dkv, b.vdim);
  weights(Role::kWo, w.o, e, d);
  if (is_s8 || b.bias) {
    const DType bdt = is_s8 ? DType::kS32 : DType::kS64;
    add(Role::kBq, bdt, {d}, raw_bytes(w.q.bias, d));
    add(Role::kBk, bdt, {dkv}, raw_bytes(w.k.bias, dkv));
    add(Role::kBv, bdt, {dkv}, raw_bytes(w.v.bias, dkv));
    add(Role::kBo, bdt, {e}, raw_bytes(w.o.bias, e));
  }
  add(Role::kQMultiplier, DType::kS32, {d}, raw_bytes(w.q.multiplier, d));
  add(Role::kQShift, DType::kS32, {d}, raw_bytes(w.q.shift, d));
  add(Role::kKMultiplier, DType::kS32, {dkv}, raw_bytes(w.k.multiplier, dkv));
  add(Role::kKShift, DType::kS32, {dkv}, raw_bytes(w.k.shift, dkv));
  add(Role::kVMultiplier, DType::kS32, {dkv}, raw_bytes(w.v.multiplier, dkv));
  add(Role::kVShift, DType::kS32, {dkv}, raw_bytes(w.v.shift, dkv));
  add(Role::kOMultiplier, DType::kS32, {e}, raw_bytes(w.o.multiplier, e));
  add(Role::kOShift, DType::kS32, {e}, raw_bytes(w.o.shift, e));
  int32_t qp[format::kQuantParamCount] = {};
  qp[format::kQpQueryZeroPoint] = act.query.zero_point;
  qp[format::kQpKeyZeroPoint] = act.key.zero_point;
  qp[format::kQpValueZeroPoint] = act.value.zero_point;
  qp[format::kQpOutputZeroPoint] = act.output.zero_point;
  qp[format::kQpQZeroPoint] = act.q.zero_point;
  qp[format::kQpKZeroPoint] = act.k.zero_point;
  qp[format::kQpVZeroPoint] = act.v.zero_point;
  qp[format::kQpContextZeroPoint] = act.context.zero_point;
  std::memcpy(&qp[format::kQpExpMultiplier], &w.softmax.exp_multiplier, sizeof(int32_t));
  qp[format::kQpExpShift] = w.softmax.exp_shift;
  qp[format::kQpDiffLimit] = w.softmax.diff_limit;
  qp[format::kQpScoreShift] = w.softmax.score_shift;
  qp[format::kQpContextMultiplier] = w.context_multiplier;
  qp[format::kQpContextShift] = w.context_shift;
  qp[format::kQpMaskCoverage] = static_cast<int32_t>(w.mask_coverage);
  qp[format::kQpMaskKeyLength] = w.mask_key_length;
  add(Role::kQuantParams, DType::kS32, {format::kQuantParamCount}, raw_bytes(qp, format::kQuantParamCount));
  const float io[format::kIoScaleCount] = {act.query.scale, act.key.scale, act.value.scale, act.output.scale};
  add(Role::kIoScale, DType::kF32, {format::kIoScaleCount}, raw_bytes(io, format::kIoScaleCount));
  if (b.rope_base != 0.0f) {  // the converter's Q1.14 tables [positions, head_dim / 2]
    const uint32_t p = static_cast<uint32_t>(w.rope.positions), half = b.head_dim / 2;
    add(Role::kRopeCos, DType::kS16, {p, half}, raw_bytes(w.rope.cos, size_t{p} * half));
    add(Role::kRopeSin, DType::kS16, {p, half}, raw_bytes(w.rope.sin, size_t{p} * half));
  }
}

// The record of a config, canonical: norm_bias only with LayerNorm.
format::ModelRecord model_record(const TransformerConfig& c, DType dtype, bool byte_vocab) {
  using namespace format;
  ModelRecord r{};
  r.vocab_size = static_cast<uint32_t>(c.vocab_size);
  r.max_positions = static_cast<uint32_t>(c.max_positions);
  r.type_vocab_size = static_cast<uint32_t>(c.type_vocab_size);
  r.ffn_dim = static_cast<uint32_t>(c.ffn_dim);
  r.dtype = static_cast<uint16_t>(dtype);
  r.norm = static_cast<uint8_t>(c.norm);
  r.activation = static_cast<uint8_t>(c.activation);
  std::memcpy(&r.norm_eps, &c.norm_eps, sizeof r.norm_eps);
  const bool layer_norm = c.norm == NormKind::kLayerNorm;
  r.flags = (c.pre_norm ? kModelPreNorm : 0) | (c.gated_ffn ? kModelGatedFfn : 0) |
            (c.ffn_bias ? kModelFfnBias : 0) | (layer_norm && c.norm_bias ? kModelNormBias : 0) |
            (c.learned_positions ? kModelLearnedPositions : 0) |
            (c.embedding_norm ? kModelEmbeddingNorm : 0) | (c.final_norm ? kModelFinalNorm : 0) |
            (c.causal ? kModelCausal : 0) | (c.head == LmHead::kTied ? kModelHeadTied : 0) |
            (c.head == LmHead::kUntied ? kModelHeadUntied : 0) | (byte_vocab ? kModelByteVocab : 0);
  return r;
}

// Make `m` (empty) a whole f32 model of config `c` in the canonical order:
// for each layer i its attention block (block.<i>.wq wk wv wo, bq bk bv bo),
// then block.<i>.norm1_weight norm1_bias norm2_weight norm2_bias ffn_w1 ffn_b1
// ffn_w2 ffn_b2 ffn_w3 ffn_b3 (those present, in role order); then
// model.token_embedding position_embedding type_embedding
// embedding_norm_weight embedding_norm_bias final_norm_weight final_norm_bias
// lm_head (those present). User tensors may follow. Throws when a tensor's
// presence or size disagrees with the config.
void add_transformer_f32(ModelSpec& m, const TransformerConfig& c, bool byte_vocab,
                         const TransformerTensorsF32& w) {
  using format::Role;
  if (!m.blocks.empty() || !m.tensors.empty() || m.is_model)
    throw std::runtime_error("add_transformer_f32: the spec must be empty");
  if (c.num_layers < 1 || static_cast<size_t>(c.num_layers) != w.layers.size())
    throw std::runtime_error("add_transformer_f32: num_layers disagrees with the layers given");
  if (c.vocab_size < 1 || c.embed_dim < 1 || c.num_heads < 1 || c.ffn_dim < 1 || c.max_positions < 1 ||
      c.type_vocab_size < 0)
    throw std::runtime_error("add_transformer_f32: a dimension of the config is not positive");
  const uint32_t e = static_cast<uint32_t>(c.embed_dim), f = static_cast<uint32_t>(c.ffn_dim);
  const uint32_t v = static_cast<uint32_t>(c.vocab_size);
  const bool layer_norm = c.norm == NormKind::kLayerNorm, norm_bias = layer_norm && c.norm_bias;
  BlockSpec b;
  b.embed_dim = b.kdim = b.vdim = e;
  b.num_heads = static_cast<uint32_t>(c.num_heads);
  b.head_dim = static_cast<uint32_t>(c.head_dim != 0 ? c.head_dim : c.embed_dim / c.num_heads);
  if (c.head_dim == 0 && c.embed_dim % c.num_heads != 0)
    throw std::runtime_error("add_transformer_f32: heads do not divide embed_dim");
  b.bias = c.attention_bias;
  b.n_kv_heads = static_cast<uint32_t>(c.num_kv_heads);
  b.rope_base = c.rope_base;
  m.is_model = true;
  m.record = model_record(c, DType::kF32, byte_vocab);
  const auto add = [&](uint32_t block, Role role, const std::vector<float>& x, std::vector<uint32_t> dims,
                       bool present) {
    const std::string name = tensor_name(block, role);
    if (!present) {
      if (!x.empty())
        throw std::runtime_error("add_transformer_f32: " + name + " given but the config has none");
      return;
    }
    size_t n = 1;
    for (uint32_t d : dims) n *= d;
    if (x.size() != n)
      throw std::runtime_error("add_transformer_f32: " + name + " has " + std::to_string(x.size()) +
                               " values, expected " + std::to_string(n));
    TensorSpec t;
    t.name = name;
    t.role = role;
    t.block = block;
    t.dims = std::move(dims);
    t.bytes = f32_bytes(x);
    m.tensors.push_back(std::move(t));
  };
  for (uint32_t i = 0; i < static_cast<uint32_t>(c.num_layers); ++i) {
    const LayerTensorsF32& L = w.layers[i];
    std::vector<const std::vector<float>*> att = {&L.wq, &L.wk, &L.wv, &L.wo};
    if (c.attention_bias) att.insert(att.end(), {&L.bq, &L.bk, &L.bv, &L.bo});
    if (!c.attention_bias && !(L.bq.empty() && L.bk.empty() && L.bv.empty() && L.bo.empty()))
      throw std::runtime_error("add_transformer_f32: attention biases given but the config has none");
    add_block_f32(m, b, att);
    add(i, Role::kNorm1Weight, L.norm1_weight, {e}, true);
    add(i, Role::kNorm1Bias, L.norm1_bias, {e}, norm_bias);
    add(i, Role::kNorm2Weight, L.norm2_weight, {e}, true);
    add(i, Role::kNorm2Bias, L.norm2_bias, {e}, norm_bias);
    add(i, Role::kFfnW1, L.w1, {f, e}, true);
    add(i, Role::kFfnB1, L.b1, {f}, c.ffn_bias);
    add(i, Role::kFfnW2, L.w2, {e, f}, true);
    add(i, Role::kFfnB2, L.b2, {e}, c.ffn_bias);
    add(i, Role::kFfnW3, L.w3, {f, e}, c.gated_ffn);
    add(i, Role::kFfnB3, L.b3, {f}, c.gated_ffn && c.ffn_bias);
  }
  const uint32_t none = format::kNoBlock;
  const uint32_t p = static_cast<uint32_t>(c.max_positions), tv = static_cast<uint32_t>(c.type_vocab_size);
  add(none, Role::kTokenEmbedding, w.token_embedding, {v, e}, true);
  add(none, Role::kPositionEmbedding, w.position_embedding, {p, e}, c.learned_positions);
  add(none, Role::kTypeEmbedding, w.type_embedding, {tv, e}, tv > 0);
  add(none, Role::kEmbeddingNormWeight, w.embedding_norm_weight, {e}, c.embedding_norm);
  add(none, Role::kEmbeddingNormBias, w.embedding_norm_bias, {e}, c.embedding_norm && norm_bias);
  add(none, Role::kFinalNormWeight, w.final_norm_weight, {e}, c.final_norm);
  add(none, Role::kFinalNormBias, w.final_norm_bias, {e}, c.final_norm && norm_bias);
  add(none, Role::kLmHead, w.lm_head, {v, e}, c.head == LmHead::kUntied);
}

// Make `m` (empty) a whole s8 or s16 model (W: TransformerWeightsS8 / S16, the
// converter's output, quantize_transformer_s8 / _s16) of config `c` in the
// canonical order: for each layer i its attention block (add_block_quant:
// the block's I/O scales and zero points are the layer's attention input and
// output grids), then block.<i>.norm1_weight norm1_bias norm1_consts
// norm2_weight norm2_bias norm2_consts attn_in attn_out ffn_in ffn_w1 ffn_b1
// ffn_w1_multiplier ffn_w1_shift ffn_w2 ... ffn_w3 ... ffn_act_table
// ffn_consts (those present, in role order); then model.token_embedding
// token_multiplier token_shift position_embedding position_multiplier
// position_shift type_embedding embedding_norm_weight embedding_norm_bias
// embedding_norm_consts final_norm_weight final_norm_bias final_norm_consts
// head_in lm_head head_bias head_multiplier head_shift scales (those present).
// User tensors may follow. Throws when a table the config needs is null.
template <class W>
void add_transformer_fixed(ModelSpec& m, const TransformerConfig& c, bool byte_vocab, const W& w) {
  using format::Role;
  constexpr bool is_s8 = std::is_same<W, TransformerWeightsS8>::value;
  static_assert(is_s8 || std::is_same<W, TransformerWeightsS16>::value,
                "TransformerWeightsS8 or TransformerWeightsS16");
  const DType dtype = is_s8 ? DType::kS8 : DType::kS16;
  const char* const what = "add_transformer_fixed: ";
  if (!m.blocks.empty() || !m.tensors.empty() || m.is_model)
    throw std::runtime_error(std::string(what) + "the spec must be empty");
  if (c.num_layers < 1 || c.vocab_size < 1 || c.embed_dim < 1 || c.num_heads < 1 || c.ffn_dim < 1 ||
      c.max_positions < 1 || c.type_vocab_size < 0)
    throw std::runtime_error(std::string(what) + "a dimension of the config is not positive");
  if (w.layers == nullptr) throw std::runtime_error(std::string(what) + "no layers");
  const uint32_t e = static_cast<uint32_t>(c.embed_dim), f = static_cast<uint32_t>(c.ffn_dim);
  const uint32_t v = static_cast<uint32_t>(c.vocab_size), p = static_cast<uint32_t>(c.max_positions);
  const bool norm_bias = c.norm == NormKind::kLayerNorm && c.norm_bias;
  const bool head = c.head != LmHead::kNone, gated = c.gated_ffn;
  const bool proj_bias = is_s8 || c.ffn_bias;  // s8 biases carry the zero point fold: always
  BlockSpec b;
  b.embed_dim = b.kdim = b.vdim = e;
  b.num_heads = static_cast<uint32_t>(c.num_heads);
  if (c.head_dim == 0 && c.embed_dim % c.num_heads != 0)
    throw std::runtime_error(std::string(what) + "heads do not divide embed_dim");
  b.head_dim = static_cast<uint32_t>(c.head_dim != 0 ? c.head_dim : c.embed_dim / c.num_heads);
  b.bias = c.attention_bias;
  b.dtype = dtype;
  b.n_kv_heads = static_cast<uint32_t>(c.num_kv_heads);
  b.rope_base = c.rope_base;
  m.is_model = true;
  m.record = model_record(c, dtype, byte_vocab);
  const auto add = [&](uint32_t block, Role role, DType dt, std::vector<uint32_t> dims, const void* data) {
    const std::string name = tensor_name(block, role);
    if (data == nullptr) throw std::runtime_error(what + name + " is null but the config needs it");
    const size_t n = static_cast<size_t>(tensor_bytes(name, dt, dims));
    TensorSpec t;
    t.name = name;
    t.role = role;
    t.dtype = dt;
    t.block = block;
    t.dims = std::move(dims);
    t.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + n);
    m.tensors.push_back(std::move(t));
  };
  // weight, bias, constants of a norm (their roles follow the weight's).
  const auto norm = [&](uint32_t block, Role weight, const NormFixed& n) {
    const auto role = [&](int k) { return static_cast<Role>(static_cast<uint16_t>(weight) + k); };
    const int64_t consts[format::kNormConstCount] = {n.eps, n.shift, n.output_zero_point};
    add(block, weight, DType::kS32, {e}, n.weight);
    if (norm_bias) add(block, role(1), DType::kS32, {e}, n.bias);
    add(block, role(2), DType::kS64, {format::kNormConstCount}, consts);
  };
  const auto rescale = [&](uint32_t block, Role role, const RescaleFixed& r) {
    const int32_t x[format::kRescaleConstCount] = {r.multiplier, r.shift, r.zero_point};
    add(block, role, DType::kS32, {format::kRescaleConstCount}, x);
  };
  // weight, bias, multiplier, shift of a projection [out, in] (their roles follow the weight's).
  const auto projection = [&](uint32_t block, Role weight, const auto& pr, uint32_t out, uint32_t in,
                              bool bias) {
    const auto role = [&](int k) { return static_cast<Role>(static_cast<uint16_t>(weight) + k); };
    if (pr.weight_s4 != nullptr) {
      add(block, role(0), DType::kS4, {out, in}, pr.weight_s4);
    } else {
      add(block, role(0), DType::kS8, {out, in}, pr.weight);
    }
    if (bias) add(block, role(1), is_s8 ? DType::kS32 : DType::kS64, {out}, pr.bias);
    add(block, role(2), DType::kS32, {out}, pr.multiplier);
    add(block, role(3), DType::kS32, {out}, pr.shift);
  };
  for (uint32_t i = 0; i < static_cast<uint32_t>(c.num_layers); ++i) {
    const auto& L = w.layers[i];
    // The block's I/O: query = key = value = the attention input (self-attention).
    const int32_t in_zp = c.pre_norm ? L.norm1.output_zero_point : L.attn_in.zero_point;
    ActivationQuant act;
    act.query = act.key = act.value = QuantParams{L.attention_input_scale, in_zp};
    act.output = QuantParams{L.attention_output_scale, L.attn_out.zero_point};
    if constexpr (is_s8) {
      act.q.zero_point = L.attention.q_zero_point;
      act.k.zero_point = L.attention.k_zero_point;
      act.v.zero_point = L.attention.v_zero_point;
      act.context.zero_point = L.attention.context_zero_point;
      if (L.attention.output_zero_point != L.attn_out.zero_point)
        throw std::runtime_error(what + tensor_name(i, Role::kAttnOut) +
                                 ": zero point disagrees with the attention's output");
    }
    add_block_quant(m, b, L.attention, act);
    norm(i, Role::kIntNorm1Weight, L.norm1);
    norm(i, Role::kIntNorm2Weight, L.norm2);
    if (!c.pre_norm) rescale(i, Role::kAttnIn, L.attn_in);
    rescale(i, Role::kAttnOut, L.attn_out);
    if (!c.pre_norm) rescale(i, Role::kFfnIn, L.ffn_in);
    projection(i, Role::kIntFfnW1, L.ffn.w1, f, e, proj_bias);
    projection(i, Role::kIntFfnW2, L.ffn.w2, e, f, proj_bias);
    if (gated) projection(i, Role::kIntFfnW3, L.ffn.w3, f, e, proj_bias);
    int32_t consts[format::kFfnConstCount] = {};
    if constexpr (is_s8) {
      if (gated) {
        add(i, Role::kFfnActTable, DType::kS16, {256}, L.ffn.gate_table);
      } else {
        add(i, Role::kFfnActTable, DType::kS8, {256}, L.ffn.act_table);
      }
      consts[format::kFfnH1ZeroPoint] = L.ffn.h1_zero_point;
      consts[format::kFfnH3ZeroPoint] = gated ? L.ffn.h3_zero_point : 0;
      consts[format::kFfnGZeroPoint] = L.ffn.g_zero_point;
      consts[format::kFfnActMultiplier] = gated ? L.ffn.gate_multiplier : 0;
      consts[format::kFfnActShift] = gated ? L.ffn.gate_shift : 0;
    } else {
      add(i, Role::kFfnActTable, DType::kS32, {uint32_t{kActTableS16Entries}}, L.ffn.act_table);
      consts[format::kFfnActMultiplier] = L.ffn.act_multiplier;
      consts[format::kFfnActShift] = L.ffn.act_shift;
    }
    add(i, Role::kFfnConsts, DType::kS32, {format::kFfnConstCount}, consts);
  }
  const uint32_t none = format::kNoBlock;
  add(none, Role::kIntTokenEmbedding, DType::kS8, {v, e}, w.token_embedding.table);
  add(none, Role::kTokenMultiplier, DType::kS32, {v}, w.token_embedding.multiplier);
  add(none, Role::kTokenShift, DType::kS32, {v}, w.token_embedding.shift);
  if (c.learned_positions) {
    add(none, Role::kIntPositionEmbedding, DType::kS8, {p, e}, w.position_embedding.table);
    add(none, Role::kPositionMultiplier, DType::kS32, {p}, w.position_embedding.multiplier);
    add(none, Role::kPositionShift, DType::kS32, {p}, w.position_embedding.shift);
  }
  if (c.type_vocab_size > 0) add(none, Role::kIntTypeEmbedding, DType::kS32, {e}, w.type_embedding);
  if (c.embedding_norm) norm(none, Role::kIntEmbeddingNormWeight, w.embedding_norm);
  if (c.final_norm) norm(none, Role::kIntFinalNormWeight, w.final_norm);
  if (head && !c.final_norm) rescale(none, Role::kHeadIn, w.head_in);
  if (c.head == LmHead::kUntied && w.head.weight_s4 != nullptr) {
    add(none, Role::kIntLmHead, DType::kS4, {v, e}, w.head.weight_s4);
  } else if (c.head == LmHead::kUntied) {
    add(none, Role::kIntLmHead, DType::kS8, {v, e}, w.head.weight);
  }
  if (head) {
    if (is_s8) add(none, Role::kHeadBias, DType::kS32, {v}, w.head.bias);
    add(none, Role::kHeadMultiplier, DType::kS32, {v}, w.head.multiplier);
    add(none, Role::kHeadShift, DType::kS32, {v}, w.head.shift);
  }
  const float scales[format::kModelScaleCount] = {w.residual_scale, w.output_scale};
  add(none, Role::kModelScales, DType::kF32, {format::kModelScaleCount}, scales);
}

namespace detail {
template <class T>
void put(std::vector<uint8_t>& out, size_t at, const T& v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}
uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }
}  // namespace detail

// Serialize. Throws std::runtime_error on what the loader would reject for
// simple reasons (names, sizes); the result should still be checked with
// Model::load.
void add_tokenizer(ModelSpec& m, const std::vector<uint8_t>& blob) {
  if (!m.is_model) throw std::runtime_error("add_tokenizer: only a whole model carries a tokenizer");
  for (const TensorSpec& t : m.tensors) {
    if (t.role == format::Role::kTokenizer)
      throw std::runtime_error("add_tokenizer: the model has one already");
  }
  if (blob.empty() || blob.size() > ATTN_MAX_TENSOR_DIM)
    throw std::runtime_error("add_tokenizer: a tokenizer blob of " + std::to_string(blob.size()) +
                             " bytes (1 .. " + std::to_string(ATTN_MAX_TENSOR_DIM) + ")");
  TensorSpec t;
  t.name = tensor_name(format::kNoBlock, format::Role::kTokenizer);
  t.role = format::Role::kTokenizer;
  t.dtype = DType::kU8;
  t.dims = {static_cast<uint32_t>(blob.size())};
  t.bytes = blob;
  m.tensors.push_back(std::move(t));
}

std::vector<uint8_t> write_model(const ModelSpec& m) {
  using namespace format;
  const uint64_t a = m.data_align;
  if (a < kMinDataAlign || (a & (a - 1)) != 0)
    throw std::runtime_error("data alignment must be a power of two >= 16");
  const uint64_t blocks_at = sizeof(Header) + (m.is_model ? sizeof(ModelRecord) : 0);
  const uint64_t tensors_at = blocks_at + m.blocks.size() * sizeof(BlockRecord);
  const uint64_t data_at = detail::align_up(tensors_at + m.tensors.size() * sizeof(TensorDesc), a);
  std::vector<uint64_t> offsets;
  uint64_t cursor = 0;
  for (const TensorSpec& t : m.tensors) {
    cursor = detail::align_up(cursor, a);
    offsets.push_back(cursor);
    cursor += t.bytes.size();
  }
  const uint64_t file_size = data_at + cursor;
  std::vector<uint8_t> out(static_cast<size_t>(file_size), 0);

  Header h{};
  h.magic = kMagic;
  h.version = 1;  // the lowest version that describes the file
  for (const BlockSpec& b : m.blocks) {
    if (b.dtype != DType::kF32) h.version = kVersionQuantized;
  }
  if (m.is_model) h.version = kVersionModel;
  h.header_size = sizeof(Header);
  h.flags = m.is_model ? kHeaderModel : 0;
  h.file_size = file_size;
  h.data_align = m.data_align;
  h.block_count = static_cast<uint32_t>(m.blocks.size());
  h.tensor_count = static_cast<uint32_t>(m.tensors.size());
  h.blocks_offset = blocks_at;
  h.tensors_offset = tensors_at;
  h.data_offset = data_at;

  if (m.is_model) detail::put(out, kModelRecordOffset, m.record);
  for (size_t i = 0; i < m.blocks.size(); ++i) {
    const BlockSpec& b = m.blocks[i];
    BlockRecord r{};
    r.embed_dim = b.embed_dim;
    r.num_heads = b.num_heads;
    r.head_dim = b.head_dim;
    r.kdim = b.kdim;
    r.vdim = b.vdim;
    r.dtype = static_cast<uint16_t>(b.dtype);
    r.flags = b.bias ? kBlockBias : 0;
    // Canonical: 0 when K/V have as many heads as Q, so MHA files stay byte-identical.
    r.n_kv_heads = b.n_kv_heads == b.num_heads ? 0 : b.n_kv_heads;
    std::memcpy(&r.rope, &b.rope_base, sizeof r.rope);
    detail::put(out, static_cast<size_t>(blocks_at + i * sizeof(BlockRecord)), r);
  }
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorSpec& t = m.tensors[i];
    if (t.name.empty() || t.name.size() >= kNameBytes)
      throw std::runtime_error("tensor name '" + t.name + "' must have 1.." + std::to_string(kNameBytes - 1) +
                               " bytes");
    if (t.dims.empty() || t.dims.size() > static_cast<size_t>(kMaxRank))
      throw std::runtime_error("tensor '" + t.name + "' must have rank 1..4");
    if (tensor_bytes(t.name, t.dtype, t.dims) != t.bytes.size())
      throw std::runtime_error("tensor '" + t.name + "': byte size disagrees with dims");
    TensorDesc d{};
    std::memcpy(d.name, t.name.data(), t.name.size());
    d.role = static_cast<uint16_t>(t.role);
    d.dtype = static_cast<uint16_t>(t.dtype);
    d.layout = static_cast<uint16_t>(t.layout);
    d.rank = static_cast<uint16_t>(t.dims.size());
    d.block = t.block;
    for (size_t k = 0; k < t.dims.size(); ++k) d.dims[k] = t.dims[k];
    d.offset = offsets[i];
    d.byte_size = t.bytes.size();
    detail::put(out, static_cast<size_t>(tensors_at + i * sizeof(TensorDesc)), d);
    if (!t.bytes.empty()) std::memcpy(out.data() + data_at + offsets[i], t.bytes.data(), t.bytes.size());
  }
  detail::put(out, 0, h);
  const uint32_t crc = crc32(out.data() + kCrcStart, out.size() - kCrcStart);
  detail::put(out, offsetof(Header, crc32), crc);
  return out;
}

// Recompute and store the CRC of a file in `bytes` (for tests that patch a file).
void fix_crc(std::vector<uint8_t>& bytes) {
  if (bytes.size() < sizeof(format::Header)) return;
  const uint32_t crc = crc32(bytes.data() + format::kCrcStart, bytes.size() - format::kCrcStart);
  std::memcpy(bytes.data() + offsetof(format::Header, crc32), &crc, sizeof crc);
}

// The templates' two instances each.
template void add_block_quant<WeightsS8>(ModelSpec&, const BlockSpec&, const WeightsS8&,
                                         const ActivationQuant&);
template void add_block_quant<WeightsS16>(ModelSpec&, const BlockSpec&, const WeightsS16&,
                                          const ActivationQuant&);
template void add_transformer_fixed<TransformerWeightsS8>(ModelSpec&, const TransformerConfig&, bool,
                                                          const TransformerWeightsS8&);
template void add_transformer_fixed<TransformerWeightsS16>(ModelSpec&, const TransformerConfig&, bool,
                                                           const TransformerWeightsS16&);

}  // namespace tools
}  // namespace attn
