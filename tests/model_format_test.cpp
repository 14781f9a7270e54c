// model_format_test.cpp: whole models in the .attn file (format v3). Valid
// model files come from the tools' writer (add_transformer_f32); each class
// of bad file is one patched field (CRC recomputed, so the check under test
// is reached) and must give its own Status.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "attn/model.h"
#include "format/writer.h"
#include "host_helpers.h"
#include "int_model_helpers.h"

using attn::Activation;
using attn::LmHead;
using attn::NormKind;
using attn::Status;
using attn::TransformerConfig;
using attn::format::BlockRecord;
using attn::format::Header;
using attn::format::ModelRecord;
using attn::format::Role;
using attn::format::TensorDesc;
namespace fmt = attn::format;
namespace tools = attn::tools;
using int_model::Blob;
using int_model::load_bytes;
using int_model::peek;
using int_model::poke;

namespace {

// A BERT-like encoder: post-norm, LayerNorm with bias, embedding norm, learned
// positions, token types, GELU, biases everywhere, no head.
TransformerConfig bert_config() {
  return TransformerConfig::encoder(/*vocab_size=*/11, /*embed_dim=*/8, /*num_layers=*/2, /*num_heads=*/2,
                                    /*ffn_dim=*/12, /*max_positions=*/7);
}

// A Llama-like decoder: pre-norm, RMSNorm, gated SiLU, no biases, final norm,
// causal, RoPE, grouped K/V heads, an untied head.
TransformerConfig llama_config() {
  TransformerConfig c = TransformerConfig::decoder(/*vocab_size=*/300, /*embed_dim=*/8, /*num_layers=*/3,
                                                   /*num_heads=*/4, /*ffn_dim=*/10, /*max_positions=*/32);
  c.num_kv_heads = 2;
  c.head = LmHead::kUntied;
  return c;
}

// Weights for `c`, every tensor different (seeded by its place).
tools::TransformerTensorsF32 weights_for(const TransformerConfig& c) {
  const size_t e = static_cast<size_t>(c.embed_dim), f = static_cast<size_t>(c.ffn_dim);
  const size_t v = static_cast<size_t>(c.vocab_size), hd = static_cast<size_t>(c.embed_dim / c.num_heads);
  const size_t d = hd * static_cast<size_t>(c.num_heads);
  const size_t dkv = hd * static_cast<size_t>(c.num_kv_heads != 0 ? c.num_kv_heads : c.num_heads);
  const bool nb = c.norm == NormKind::kLayerNorm && c.norm_bias;
  uint32_t seed = 1;
  const auto r = [&](size_t n, bool present) {
    return present ? uniform_values(n, seed++) : std::vector<float>();
  };
  tools::TransformerTensorsF32 w;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    tools::LayerTensorsF32 L;
    L.wq = r(d * e, true);
    L.wk = r(dkv * e, true);
    L.wv = r(dkv * e, true);
    L.wo = r(e * d, true);
    L.bq = r(d, c.attention_bias);
    L.bk = r(dkv, c.attention_bias);
    L.bv = r(dkv, c.attention_bias);
    L.bo = r(e, c.attention_bias);
    L.norm1_weight = r(e, true);
    L.norm1_bias = r(e, nb);
    L.norm2_weight = r(e, true);
    L.norm2_bias = r(e, nb);
    L.w1 = r(f * e, true);
    L.b1 = r(f, c.ffn_bias);
    L.w2 = r(e * f, true);
    L.b2 = r(e, c.ffn_bias);
    L.w3 = r(f * e, c.gated_ffn);
    L.b3 = r(f, c.gated_ffn && c.ffn_bias);
    w.layers.push_back(L);
  }
  w.token_embedding = r(v * e, true);
  w.position_embedding = r(static_cast<size_t>(c.max_positions) * e, c.learned_positions);
  w.type_embedding = r(static_cast<size_t>(c.type_vocab_size) * e, c.type_vocab_size > 0);
  w.embedding_norm_weight = r(e, c.embedding_norm);
  w.embedding_norm_bias = r(e, c.embedding_norm && nb);
  w.final_norm_weight = r(e, c.final_norm);
  w.final_norm_bias = r(e, c.final_norm && nb);
  w.lm_head = r(v * e, c.head == LmHead::kUntied);
  return w;
}

tools::ModelSpec model_spec(const TransformerConfig& c, bool byte_vocab = false) {
  tools::ModelSpec s;
  tools::add_transformer_f32(s, c, byte_vocab, weights_for(c));
  return s;
}

std::vector<uint8_t> model_file(const TransformerConfig& c, bool byte_vocab = false) {
  return tools::write_model(model_spec(c, byte_vocab));
}

constexpr size_t kRec = fmt::kModelRecordOffset;
#define REC(field) (kRec + offsetof(ModelRecord, field))
#define HDR(field) offsetof(Header, field)

size_t block_at(size_t i) { return 128 + i * sizeof(BlockRecord); }
#define BLK(i, field) (block_at(i) + offsetof(BlockRecord, field))

// Offset of the descriptor of the tensor named `name` in file `f`.
size_t tensor_desc_at(const std::vector<uint8_t>& f, const std::string& name) {
  const Header h = peek<Header>(f, 0);
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const size_t at = static_cast<size_t>(h.tensors_offset) + i * sizeof(TensorDesc);
    if (std::strncmp(reinterpret_cast<const char*>(f.data() + at), name.c_str(), fmt::kNameBytes) == 0)
      return at;
  }
  FAIL("no tensor " << name);
  return 0;
}
#define TEN(f, name, field) (tensor_desc_at(f, name) + offsetof(TensorDesc, field))

// Patch a valid model file of config c, recompute its CRC, load it.
Status mutated(const TransformerConfig& c, const std::function<void(std::vector<uint8_t>&)>& patch) {
  std::vector<uint8_t> f = model_file(c);
  patch(f);
  tools::fix_crc(f);
  return load_bytes(f);
}

uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

void check_same(const float* got, const std::vector<float>& want, const char* what) {
  INFO(what);
  if (want.empty()) {
    CHECK(got == nullptr);
    return;
  }
  REQUIRE(got != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(got) % 16 == 0);
  CHECK(std::memcmp(got, want.data(), want.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("a whole model round-trips: writer, loader, config and f32 weights", "[model][v3]") {
  for (const bool llama : {false, true}) {
    const TransformerConfig c = llama ? llama_config() : bert_config();
    const tools::TransformerTensorsF32 w = weights_for(c);
    tools::ModelSpec spec;
    tools::add_transformer_f32(spec, c, llama, w);
    tools::TensorSpec user;  // a classifier after the model's tensors
    user.name = "classifier.weight";
    user.dims = {3, 8};
    user.bytes = tools::f32_bytes(uniform_values(24, 99));
    spec.tensors.push_back(user);
    const std::vector<uint8_t> file = tools::write_model(spec);
    Blob b(file);
    attn::Model m;
    REQUIRE(attn::Model::load(b.p, b.n, &m) == Status::kOk);
    CHECK(m.is_model());
    CHECK(m.version() == 3);
    CHECK(m.byte_vocab() == llama);
    CHECK(m.block_count() == static_cast<uint32_t>(c.num_layers));

    TransformerConfig got;
    REQUIRE(m.transformer_config(&got) == Status::kOk);
    CHECK(got.vocab_size == c.vocab_size);
    CHECK(got.embed_dim == c.embed_dim);
    CHECK(got.num_layers == c.num_layers);
    CHECK(got.num_heads == c.num_heads);
    CHECK(got.num_kv_heads == c.num_kv_heads);
    CHECK(got.head_dim == c.embed_dim / c.num_heads);
    CHECK(got.ffn_dim == c.ffn_dim);
    CHECK(got.max_positions == c.max_positions);
    CHECK(got.type_vocab_size == c.type_vocab_size);
    CHECK(got.norm == c.norm);
    CHECK(float_bits(got.norm_eps) == float_bits(c.norm_eps));
    CHECK(got.activation == c.activation);
    CHECK(got.head == c.head);
    CHECK(float_bits(got.rope_base) == float_bits(c.rope_base));
    CHECK(got.pre_norm == c.pre_norm);
    CHECK(got.gated_ffn == c.gated_ffn);
    CHECK(got.attention_bias == c.attention_bias);
    CHECK(got.ffn_bias == c.ffn_bias);
    CHECK(got.norm_bias == (c.norm == NormKind::kLayerNorm && c.norm_bias));
    CHECK(got.learned_positions == c.learned_positions);
    CHECK(got.embedding_norm == c.embedding_norm);
    CHECK(got.final_norm == c.final_norm);
    CHECK(got.causal == c.causal);

    std::vector<attn::LayerWeightsF32> layers(static_cast<size_t>(c.num_layers) + 1);
    attn::TransformerWeightsF32 tw;
    CHECK(m.transformer_weights_f32(layers.data(), c.num_layers - 1, &tw) == Status::kBufferTooSmall);
    CHECK(m.transformer_weights_f32(layers.data(), c.num_layers, nullptr) == Status::kNullArgument);
    CHECK(m.transformer_weights_f32(nullptr, c.num_layers, &tw) == Status::kNullArgument);
    REQUIRE(m.transformer_weights_f32(layers.data(), c.num_layers + 1, &tw) == Status::kOk);
    CHECK(tw.layers == layers.data());
    check_same(tw.token_embedding, w.token_embedding, "token_embedding");
    check_same(tw.position_embedding, w.position_embedding, "position_embedding");
    check_same(tw.type_embedding, w.type_embedding, "type_embedding");
    check_same(tw.embedding_norm.weight, w.embedding_norm_weight, "embedding_norm.weight");
    check_same(tw.embedding_norm.bias, w.embedding_norm_bias, "embedding_norm.bias");
    check_same(tw.final_norm.weight, w.final_norm_weight, "final_norm.weight");
    check_same(tw.final_norm.bias, w.final_norm_bias, "final_norm.bias");
    check_same(tw.lm_head, w.lm_head, "lm_head");
    for (size_t l = 0; l < static_cast<size_t>(c.num_layers); ++l) {
      INFO("layer " << l);
      const attn::LayerWeightsF32& L = layers[l];
      const tools::LayerTensorsF32& W = w.layers[l];
      check_same(L.attention.wq, W.wq, "wq");
      check_same(L.attention.wk, W.wk, "wk");
      check_same(L.attention.wv, W.wv, "wv");
      check_same(L.attention.wo, W.wo, "wo");
      check_same(L.attention.bq, W.bq, "bq");
      check_same(L.attention.bk, W.bk, "bk");
      check_same(L.attention.bv, W.bv, "bv");
      check_same(L.attention.bo, W.bo, "bo");
      check_same(L.norm1.weight, W.norm1_weight, "norm1.weight");
      check_same(L.norm1.bias, W.norm1_bias, "norm1.bias");
      check_same(L.norm2.weight, W.norm2_weight, "norm2.weight");
      check_same(L.norm2.bias, W.norm2_bias, "norm2.bias");
      check_same(L.ffn.w1, W.w1, "w1");
      check_same(L.ffn.b1, W.b1, "b1");
      check_same(L.ffn.w2, W.w2, "w2");
      check_same(L.ffn.b2, W.b2, "b2");
      check_same(L.ffn.w3, W.w3, "w3");
      check_same(L.ffn.b3, W.b3, "b3");
    }
    // The user tensor is still found by name, outside every block.
    attn::TensorView t;
    REQUIRE(m.find_tensor("classifier.weight", &t) == Status::kOk);
    CHECK(t.role == Role::kUser);
    REQUIRE(m.find_tensor("model.token_embedding", &t) == Status::kOk);
    CHECK(t.role == Role::kTokenEmbedding);
    CHECK(t.block == fmt::kNoBlock);
    REQUIRE(m.find_block_tensor(1, Role::kFfnW2, &t) == Status::kOk);
    CHECK(t.dims[0] == c.embed_dim);
    CHECK(t.dims[1] == c.ffn_dim);
  }
}

TEST_CASE("model files are canonical: header, record, blocks and tensor order", "[model][v3]") {
  const TransformerConfig c = bert_config();
  const std::vector<uint8_t> f = model_file(c);
  const Header h = peek<Header>(f, 0);
  CHECK(h.version == 3);
  CHECK(h.flags == fmt::kHeaderModel);
  CHECK(h.blocks_offset == 128);
  CHECK(h.tensors_offset == 128 + 2 * 64);
  const ModelRecord r = peek<ModelRecord>(f, 64);
  CHECK(r.vocab_size == 11);
  CHECK(r.max_positions == 7);
  CHECK(r.type_vocab_size == 2);
  CHECK(r.ffn_dim == 12);
  CHECK(r.dtype == 1);
  CHECK(r.norm == 1);
  CHECK(r.activation == 1);
  CHECK(r.norm_eps == float_bits(1e-12f));
  CHECK(r.flags ==
        (fmt::kModelFfnBias | fmt::kModelNormBias | fmt::kModelLearnedPositions | fmt::kModelEmbeddingNorm));
  for (uint32_t x : r.reserved) CHECK(x == 0);
  const char* order[] = {"block.0.wq",
                         "block.0.wk",
                         "block.0.wv",
                         "block.0.wo",
                         "block.0.bq",
                         "block.0.bk",
                         "block.0.bv",
                         "block.0.bo",
                         "block.0.norm1_weight",
                         "block.0.norm1_bias",
                         "block.0.norm2_weight",
                         "block.0.norm2_bias",
                         "block.0.ffn_w1",
                         "block.0.ffn_b1",
                         "block.0.ffn_w2",
                         "block.0.ffn_b2",
                         "block.1.wq"};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; ++i) {
    const size_t at = static_cast<size_t>(h.tensors_offset) + i * sizeof(TensorDesc);
    CHECK(std::string(reinterpret_cast<const char*>(f.data() + at)) == order[i]);
  }
  const char* tail[] = {"model.token_embedding", "model.position_embedding", "model.type_embedding",
                        "model.embedding_norm_weight", "model.embedding_norm_bias"};
  const size_t n = h.tensor_count;
  for (size_t i = 0; i < 5; ++i) {
    const size_t at = static_cast<size_t>(h.tensors_offset) + (n - 5 + i) * sizeof(TensorDesc);
    CHECK(std::string(reinterpret_cast<const char*>(f.data() + at)) == tail[i]);
  }
  // RMSNorm never records a norm bias, even when the config says norm_bias.
  TransformerConfig l = llama_config();
  l.norm_bias = true;
  const std::vector<uint8_t> g = model_file(l);
  CHECK((peek<ModelRecord>(g, 64).flags & fmt::kModelNormBias) == 0);
  CHECK(load_bytes(g) == Status::kOk);
  // Tied head: no lm_head; a K/V head count equal to H is stored as 0.
  l.head = LmHead::kTied;
  l.num_kv_heads = l.num_heads;
  const std::vector<uint8_t> t = model_file(l);
  CHECK(peek<BlockRecord>(t, 128).n_kv_heads == 0);
  CHECK((peek<ModelRecord>(t, 64).flags & (fmt::kModelHeadTied | fmt::kModelHeadUntied)) ==
        fmt::kModelHeadTied);
  CHECK(load_bytes(t) == Status::kOk);
}

TEST_CASE("block files keep their version and layout, and are not models", "[model][v3]") {
  tools::ModelSpec s;
  tools::BlockSpec b{8, 2, 4, 8, 8, true, attn::DType::kF32};
  std::vector<std::vector<float>> w;
  for (size_t n : {64, 64, 64, 64, 8, 8, 8, 8}) w.push_back(uniform_values(n, static_cast<uint32_t>(n)));
  tools::add_block_f32(s, b, {&w[0], &w[1], &w[2], &w[3], &w[4], &w[5], &w[6], &w[7]});
  const std::vector<uint8_t> f = tools::write_model(s);
  const Header h = peek<Header>(f, 0);
  CHECK(h.version == 1);
  CHECK(h.flags == 0);
  CHECK(h.blocks_offset == 64);
  Blob blob(f);
  attn::Model m;
  REQUIRE(attn::Model::load(blob.p, blob.n, &m) == Status::kOk);
  CHECK_FALSE(m.is_model());
  CHECK_FALSE(m.byte_vocab());
  TransformerConfig c;
  CHECK(m.transformer_config(&c) == Status::kNotAModel);
  CHECK(m.transformer_config(nullptr) == Status::kNullArgument);
  attn::LayerWeightsF32 layers[2];
  attn::TransformerWeightsF32 tw;
  CHECK(m.transformer_weights_f32(layers, 2, &tw) == Status::kNotAModel);
  ModelRecord r;
  CHECK(m.model_record(&r) == Status::kNotAModel);
  // Layer and model roles belong to models only.
  std::vector<uint8_t> g = f;
  poke<uint16_t>(g, h.tensors_offset + offsetof(TensorDesc, role), 28);
  tools::fix_crc(g);
  CHECK(load_bytes(g) == Status::kUnknownRole);
  tools::TensorSpec u;
  u.name = "emb";
  u.role = Role::kTokenEmbedding;
  u.dims = {4, 8};
  u.bytes = tools::f32_bytes(uniform_values(32, 5));
  s.tensors.push_back(u);
  CHECK(load_bytes(tools::write_model(s)) == Status::kUnknownRole);
  // A model file is version 3 and later: a loader of v2 rejects it by version.
  const std::vector<uint8_t> mf = model_file(bert_config());
  CHECK(peek<Header>(mf, 0).version > 2);
}

TEST_CASE("model header: the flag, the version and the record's place", "[model][v3][bad]") {
  const TransformerConfig c = bert_config();
  CHECK(mutated(c, [](auto&) {}) == Status::kOk);
  // The model flag in a v1 or v2 file: those define no flags.
  CHECK(mutated(c, [](auto& f) { poke<uint16_t>(f, HDR(version), 2); }) == Status::kUnknownFlags);
  CHECK(mutated(c, [](auto& f) { poke<uint16_t>(f, HDR(version), 1); }) == Status::kUnknownFlags);
  // An unknown header flag.
  CHECK(mutated(c, [](auto& f) { poke<uint32_t>(f, HDR(flags), 3); }) == Status::kUnknownFlags);
  // The block table over the model record.
  CHECK(mutated(c, [](auto& f) { poke<uint64_t>(f, HDR(blocks_offset), 64); }) == Status::kOffsetOutOfBounds);
  CHECK(mutated(c, [](auto& f) { poke<uint64_t>(f, HDR(blocks_offset), 127); }) ==
        Status::kOffsetOutOfBounds);
  // Without the flag the layer tensors are roles a block file may not have.
  CHECK(mutated(c, [](auto& f) { poke<uint32_t>(f, HDR(flags), 0); }) == Status::kUnknownRole);
  // A v3 block file (not canonical, but valid): no flag, no layer tensors.
  tools::ModelSpec s;
  std::vector<uint8_t> bf = tools::write_model(s);
  poke<uint16_t>(bf, HDR(version), 3);
  tools::fix_crc(bf);
  CHECK(load_bytes(bf) == Status::kOk);
  // Too short for the record: every prefix of a model file is rejected.
  const std::vector<uint8_t> f = model_file(c);
  for (size_t n = 0; n < f.size(); n += (n < 400 ? 1 : 97)) {
    std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK(load_bytes(cut) != Status::kOk);
  }
}

TEST_CASE("model record: every field out of range has its status", "[model][v3][bad]") {
  const TransformerConfig c = bert_config();
  const auto u32 = [&](size_t at, uint32_t v) {
    return mutated(c, [=](auto& f) { poke<uint32_t>(f, at, v); });
  };
  const auto u16 = [&](size_t at, uint16_t v) {
    return mutated(c, [=](auto& f) { poke<uint16_t>(f, at, v); });
  };
  const auto u8 = [&](size_t at, uint8_t v) { return mutated(c, [=](auto& f) { poke<uint8_t>(f, at, v); }); };
  const uint32_t flags = peek<ModelRecord>(model_file(c), 64).flags;

  CHECK(u32(REC(vocab_size), 0) == Status::kBadVocab);
  CHECK(u32(REC(vocab_size), (1u << 24) + 1) == Status::kBadVocab);
  CHECK(u32(REC(type_vocab_size), (1u << 16) + 1) == Status::kBadVocab);
  CHECK(u32(REC(flags), flags | fmt::kModelByteVocab) == Status::kBadVocab);  // vocab 11 < 256
  CHECK(u32(REC(max_positions), 0) == Status::kBadMaxPositions);
  CHECK(u32(REC(max_positions), ATTN_MAX_SEQ + 1) == Status::kBadMaxPositions);
  CHECK(u32(REC(ffn_dim), 0) == Status::kBadFfnDim);
  CHECK(u32(REC(ffn_dim), ATTN_MAX_DIM + 1) == Status::kBadFfnDim);
  CHECK(u16(REC(dtype), 0) == Status::kUnknownDtype);
  CHECK(u16(REC(dtype), 99) == Status::kUnknownDtype);
  CHECK(u16(REC(dtype), static_cast<uint16_t>(attn::DType::kS32)) == Status::kUnknownDtype);
  CHECK(u8(REC(norm), 0) == Status::kBadNorm);
  CHECK(u8(REC(norm), 3) == Status::kBadNorm);
  CHECK(u8(REC(norm), 2) == Status::kBadNorm);  // RMSNorm with the norm-bias flag
  for (const float eps : {0.0f, -1e-5f, 1.0f, 2.0f, std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), -0.0f})
    CHECK(u32(REC(norm_eps), float_bits(eps)) == Status::kBadNorm);
  CHECK(u32(REC(norm_eps), float_bits(0.99f)) == Status::kOk);
  CHECK(u32(REC(norm_eps), 1) == Status::kOk);  // the smallest subnormal is > 0
  CHECK(u8(REC(activation), 0) == Status::kBadActivation);
  CHECK(u8(REC(activation), 5) == Status::kBadActivation);
  for (uint8_t a = 1; a <= 4; ++a) CHECK(u8(REC(activation), a) == Status::kOk);
  CHECK(u32(REC(flags), flags | fmt::kModelHeadTied | fmt::kModelHeadUntied) == Status::kBadHead);
  CHECK(u32(REC(flags), flags | (1u << 11)) == Status::kUnknownFlags);
  CHECK(u32(REC(flags), flags | 0x80000000u) == Status::kUnknownFlags);
  for (size_t i = 0; i < 9; ++i) CHECK(u32(REC(reserved) + 4 * i, 1) == Status::kBadReserved);
  // Layer count: 0, or above ATTN_MAX_LAYERS.
  CHECK(u32(HDR(block_count), 0) == Status::kBadNumLayers);
  TransformerConfig many = bert_config();
  many.embed_dim = 2;
  many.num_heads = 1;
  many.ffn_dim = 1;
  many.num_layers = ATTN_MAX_LAYERS;
  CHECK(load_bytes(model_file(many)) == Status::kOk);
  many.num_layers = ATTN_MAX_LAYERS + 1;
  CHECK(load_bytes(model_file(many)) == Status::kBadNumLayers);
}

TEST_CASE("model layers: block records that disagree with the model or each other", "[model][v3][bad]") {
  const TransformerConfig c = llama_config();
  CHECK(mutated(c, [](auto&) {}) == Status::kOk);
  const auto blk = [&](size_t i, size_t field, uint32_t v) {
    return mutated(c, [=](auto& f) { poke<uint32_t>(f, block_at(i) + field, v); });
  };
  // kdim / vdim other than E (the layers are self-attention).
  CHECK(blk(0, offsetof(BlockRecord, kdim), 6) == Status::kBadModelRecord);
  CHECK(blk(2, offsetof(BlockRecord, vdim), 6) == Status::kBadModelRecord);
  // One layer unlike the first: heads, K/V heads, rope, bias flag.
  CHECK(blk(1, offsetof(BlockRecord, n_kv_heads), 4) == Status::kBadModelRecord);
  CHECK(blk(2, offsetof(BlockRecord, rope), float_bits(500000.0f)) == Status::kBadModelRecord);
  CHECK(mutated(c, [](auto& f) { poke<uint16_t>(f, BLK(1, flags), 1); }) == Status::kBadModelRecord);
  CHECK(blk(1, offsetof(BlockRecord, num_heads), 2) == Status::kBadModelRecord);
  // A block dtype other than the model's (s8 blocks exist in v3, an s8 layer in an f32 model does not).
  CHECK(mutated(c, [](auto& f) { poke<uint16_t>(f, BLK(1, dtype), 2); }) == Status::kBadModelRecord);
  // The block record's own checks still come first.
  CHECK(blk(0, offsetof(BlockRecord, n_kv_heads), 3) == Status::kBadKvHeads);
}

TEST_CASE("model tensors: presence follows the flags exactly", "[model][v3][bad]") {
  const TransformerConfig bert = bert_config(), llama = llama_config();
  const uint32_t bf = peek<ModelRecord>(model_file(bert), 64).flags;
  const uint32_t lf = peek<ModelRecord>(model_file(llama), 64).flags;
  const auto flags = [](const TransformerConfig& c, uint32_t v) {
    return mutated(c, [=](auto& f) { poke<uint32_t>(f, REC(flags), v); });
  };
  // Present but not allowed: kUnknownRole.
  CHECK(flags(bert, bf & ~fmt::kModelFfnBias) == Status::kUnknownRole);
  CHECK(flags(bert, bf & ~fmt::kModelNormBias) == Status::kUnknownRole);
  CHECK(flags(bert, bf & ~fmt::kModelLearnedPositions) == Status::kUnknownRole);
  CHECK(flags(bert, bf & ~fmt::kModelEmbeddingNorm) == Status::kUnknownRole);
  CHECK(flags(llama, lf & ~fmt::kModelGatedFfn) == Status::kUnknownRole);
  CHECK(flags(llama, lf & ~fmt::kModelFinalNorm) == Status::kUnknownRole);
  CHECK(flags(llama, lf & ~fmt::kModelHeadUntied) == Status::kUnknownRole);
  CHECK(flags(llama, (lf & ~fmt::kModelHeadUntied) | fmt::kModelHeadTied) == Status::kUnknownRole);
  CHECK(mutated(bert, [](auto& f) { poke<uint32_t>(f, REC(type_vocab_size), 0); }) == Status::kUnknownRole);
  // Required but absent: kMissingTensor.
  CHECK(flags(bert, bf | fmt::kModelGatedFfn) == Status::kMissingTensor);
  CHECK(flags(bert, bf | fmt::kModelFinalNorm) == Status::kMissingTensor);
  CHECK(flags(bert, bf | fmt::kModelHeadUntied) == Status::kMissingTensor);
  CHECK(flags(llama, lf | fmt::kModelFfnBias) == Status::kMissingTensor);
  CHECK(flags(llama, lf | fmt::kModelLearnedPositions) == Status::kMissingTensor);
  CHECK(flags(llama, lf | fmt::kModelEmbeddingNorm) == Status::kMissingTensor);
  // Flags that change no tensor load.
  CHECK(flags(bert, bf | fmt::kModelPreNorm | fmt::kModelCausal | fmt::kModelHeadTied) == Status::kOk);
  CHECK(flags(llama, lf | fmt::kModelByteVocab) == Status::kOk);
  // A tensor left out by the writer.
  for (const char* name : {"block.1.ffn_w2", "block.0.norm1_weight", "model.token_embedding",
                           "model.final_norm_weight", "model.lm_head", "block.2.ffn_w3"}) {
    INFO(name);
    tools::ModelSpec s = model_spec(llama);
    for (size_t i = 0; i < s.tensors.size(); ++i)
      if (s.tensors[i].name == name) s.tensors.erase(s.tensors.begin() + static_cast<std::ptrdiff_t>(i));
    CHECK(load_bytes(tools::write_model(s)) == Status::kMissingTensor);
  }
}

TEST_CASE("model tensors: block index, dtype, shape, duplicates and unknown roles", "[model][v3][bad]") {
  const TransformerConfig c = bert_config();
  const auto ten = [&](const char* name, size_t field, auto v) {
    return mutated(c, [=](auto& f) { poke(f, tensor_desc_at(f, name) + field, v); });
  };
  // Layer tensors belong to a block, model tensors to none.
  CHECK(ten("block.0.norm1_weight", offsetof(TensorDesc, block), fmt::kNoBlock) == Status::kBadBlock);
  CHECK(ten("block.0.norm1_weight", offsetof(TensorDesc, block), uint32_t{2}) == Status::kBadBlock);
  CHECK(ten("model.token_embedding", offsetof(TensorDesc, block), uint32_t{0}) == Status::kBadBlock);
  // dtype s32 has f32's size: the byte size still agrees, the dtype does not.
  const uint16_t s32 = static_cast<uint16_t>(attn::DType::kS32);
  CHECK(ten("block.1.ffn_b2", offsetof(TensorDesc, dtype), s32) == Status::kDtypeMismatch);
  CHECK(ten("model.position_embedding", offsetof(TensorDesc, dtype), s32) == Status::kDtypeMismatch);
  // Shapes: swapped dims, a different rank of the same size, other dims.
  CHECK(mutated(c, [](auto& f) {
          poke<uint32_t>(f, TEN(f, "block.0.ffn_w1", dims), 8);
          poke<uint32_t>(f, TEN(f, "block.0.ffn_w1", dims) + 4, 12);
        }) == Status::kDimsMismatch);
  CHECK(mutated(c, [](auto& f) {
          poke<uint32_t>(f, TEN(f, "model.token_embedding", dims), 8);
          poke<uint32_t>(f, TEN(f, "model.token_embedding", dims) + 4, 11);
        }) == Status::kDimsMismatch);
  CHECK(mutated(c, [](auto& f) {
          poke<uint16_t>(f, TEN(f, "block.1.norm2_bias", rank), 2);
          poke<uint32_t>(f, TEN(f, "block.1.norm2_bias", dims), 1);
          poke<uint32_t>(f, TEN(f, "block.1.norm2_bias", dims) + 4, 8);
        }) == Status::kDimsMismatch);
  CHECK(mutated(c, [](auto& f) {
          poke<uint16_t>(f, TEN(f, "model.embedding_norm_bias", rank), 2);
          poke<uint32_t>(f, TEN(f, "model.embedding_norm_bias", dims), 2);
          poke<uint32_t>(f, TEN(f, "model.embedding_norm_bias", dims) + 4, 4);
        }) == Status::kDimsMismatch);
  // The record's dims against the tensors.
  const auto rec = [&](size_t at, uint32_t v) {
    return mutated(c, [=](auto& f) { poke<uint32_t>(f, at, v); });
  };
  CHECK(rec(REC(vocab_size), 12) == Status::kDimsMismatch);
  CHECK(rec(REC(max_positions), 8) == Status::kDimsMismatch);
  CHECK(rec(REC(type_vocab_size), 3) == Status::kDimsMismatch);
  CHECK(rec(REC(ffn_dim), 13) == Status::kDimsMismatch);
  // Without learned positions max_positions is free.
  const TransformerConfig l = llama_config();
  CHECK(mutated(l, [](auto& f) { poke<uint32_t>(f, REC(max_positions), 4096); }) == Status::kOk);
  // The same role twice (layer, model).
  CHECK(ten("block.1.norm2_weight", offsetof(TensorDesc, role), uint16_t{28}) == Status::kDuplicateRole);
  CHECK(ten("model.embedding_norm_bias", offsetof(TensorDesc, role), uint16_t{67}) == Status::kDuplicateRole);
  // Reserved and unknown roles.
  for (const uint16_t r : {38, 39, 40, 63}) {
    INFO("layer role " << r);
    CHECK(ten("block.0.norm1_weight", offsetof(TensorDesc, role), r) == Status::kUnknownRole);
  }
  for (const uint16_t r : {72, 95, 127, 128}) {
    INFO("model role " << r);
    CHECK(ten("model.embedding_norm_weight", offsetof(TensorDesc, role), r) == Status::kUnknownRole);
  }
  // A model role as a block role, a block role as a model role.
  CHECK(ten("block.0.norm1_weight", offsetof(TensorDesc, role), uint16_t{69}) == Status::kBadBlock);
  CHECK(ten("model.embedding_norm_weight", offsetof(TensorDesc, role), uint16_t{28}) == Status::kBadBlock);
  // A user tensor in a layer's block.
  CHECK(ten("block.0.norm1_weight", offsetof(TensorDesc, role), uint16_t{15}) == Status::kBadBlock);
  // Layouts other than plain.
  CHECK(ten("block.0.ffn_w2", offsetof(TensorDesc, layout), uint16_t{1}) == Status::kUnknownLayout);
}
