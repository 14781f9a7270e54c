// model_fixed_format_test.cpp: integer (s8 / s16) whole models in the .attn
// file (format v3, FORMAT.md "Integer models"). A random f32 model is written
// and loaded, quantized in memory by the library's converter, written by
// src/format/writer.h (add_transformer_fixed), loaded again: the forward
// over the file's tables must give the same int32 outputs, bit for bit, as
// the forward over the converter's. Each class of bad file is one patched
// value (CRC recomputed) with its own Status.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "int_model_helpers.h"

using attn::format::Header;
using attn::format::ModelRecord;
using attn::format::Role;
using attn::format::TensorDesc;
namespace fmt = attn::format;
using namespace int_model;

namespace {

template <class W, class Layer>
void round_trip(const Case& k) {
  INFO(k.name << " " << (dtype_of<W>() == DType::kS8 ? "s8" : "s16"));
  const TransformerConfig& c = k.c;
  const Blob f32(f32_file(c, 7));
  attn::Model fm;
  REQUIRE(attn::Model::load(f32.p, f32.n, &fm) == Status::kOk);
  const InMemory<W> q = quantize<W>(fm, sequences(6, 12, c.vocab_size, 31));
  const std::vector<uint8_t> bytes = fixed_file(c, q.w);
  const Blob blob(bytes);
  attn::Model m;
  REQUIRE(attn::Model::load(blob.p, blob.n, &m) == Status::kOk);
  CHECK(m.is_model());
  CHECK(m.version() == 3);
  ModelRecord rec;
  REQUIRE(m.model_record(&rec) == Status::kOk);
  CHECK(rec.dtype == uint16_t(dtype_of<W>()));
  TransformerConfig got;
  REQUIRE(m.transformer_config(&got) == Status::kOk);
  CHECK(got.num_layers == c.num_layers);
  CHECK(got.head == c.head);

  std::vector<Layer> layers(size_t(c.num_layers));
  W w;
  attn::LayerWeightsF32 fl[4];
  attn::TransformerWeightsF32 fw;
  CHECK(m.transformer_weights_f32(fl, 4, &fw) == Status::kBadDtype);
  if constexpr (dtype_of<W>() == DType::kS8) {
    attn::LayerWeightsS16 other[4];
    attn::TransformerWeightsS16 ow;
    CHECK(m.transformer_weights_s16(other, 4, &ow) == Status::kBadDtype);
    CHECK(m.transformer_weights_s8(layers.data(), c.num_layers - 1, &w) == Status::kBufferTooSmall);
    CHECK(m.transformer_weights_s8(nullptr, c.num_layers, &w) == Status::kNullArgument);
    CHECK(m.transformer_weights_s8(layers.data(), c.num_layers, nullptr) == Status::kNullArgument);
    REQUIRE(m.transformer_weights_s8(layers.data(), c.num_layers, &w) == Status::kOk);
    CHECK(fm.transformer_weights_s8(layers.data(), c.num_layers, &w) == Status::kBadDtype);
    REQUIRE(m.transformer_weights_s8(layers.data(), c.num_layers, &w) == Status::kOk);
  } else {
    attn::LayerWeightsS8 other[4];
    attn::TransformerWeightsS8 ow;
    CHECK(m.transformer_weights_s8(other, 4, &ow) == Status::kBadDtype);
    CHECK(m.transformer_weights_s16(layers.data(), c.num_layers - 1, &w) == Status::kBufferTooSmall);
    REQUIRE(m.transformer_weights_s16(layers.data(), c.num_layers, &w) == Status::kOk);
  }
  // Everything comes from the file: tables inside the blob, scales and constants as the converter's.
  CHECK(w.layers == layers.data());
  CHECK(inside(w.token_embedding.table, blob));
  CHECK(inside(w.token_embedding.multiplier, blob));
  CHECK(inside(layers.back().ffn.w2.shift, blob));
  CHECK(inside(layers.back().attention.o.weight, blob));
  CHECK(bits(w.residual_scale) == bits(q.w.residual_scale));
  CHECK(bits(w.output_scale) == bits(q.w.output_scale));
  if (c.head == LmHead::kTied) CHECK(w.head.weight == w.token_embedding.table);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    CHECK(bits(layers[size_t(l)].attention_input_scale) == bits(q.w.layers[l].attention_input_scale));
    CHECK(bits(layers[size_t(l)].attention_output_scale) == bits(q.w.layers[l].attention_output_scale));
    attn::Block b;
    REQUIRE(m.block(uint32_t(l), &b) == Status::kOk);
    CHECK(b.dtype == dtype_of<W>());
    CHECK(b.io.scale[0] == q.w.layers[l].attention_input_scale);
    CHECK(b.io.scale[3] == q.w.layers[l].attention_output_scale);
  }
  // The same outputs, bit for bit.
  for (const auto& s : sequences(3, 10, c.vocab_size, 57)) {
    const std::vector<int32_t> want = run(c, q.w, s), have = run(c, w, s);
    CHECK(want == have);
  }
  // Writing the loaded weights again gives the same bytes (canonical).
  CHECK(fixed_file(got, w) == bytes);
}

// ---- mutations ---------------------------------------------------------------------

size_t desc_at(const std::vector<uint8_t>& f, const std::string& name) {
  const Header h = peek<Header>(f, 0);
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const size_t at = size_t(h.tensors_offset) + i * sizeof(TensorDesc);
    if (std::strncmp(reinterpret_cast<const char*>(f.data() + at), name.c_str(), fmt::kNameBytes) == 0)
      return at;
  }
  FAIL("no tensor " << name);
  return 0;
}

// Byte offset of element i (of `elem` bytes) of tensor `name`'s data.
size_t data_at(const std::vector<uint8_t>& f, const std::string& name, size_t i, size_t elem) {
  const TensorDesc d = peek<TensorDesc>(f, desc_at(f, name));
  REQUIRE(i * elem < d.byte_size);
  return size_t(peek<Header>(f, 0).data_offset + d.offset) + i * elem;
}

Status load(std::vector<uint8_t> f) {
  tools::fix_crc(f);
  const Blob b(f);
  attn::Model m;
  const Status s = attn::Model::load(b.p, b.n, &m);
  if (s != Status::kOk) CHECK_FALSE(m.loaded());
  return s;
}

// The file with element i of tensor `name` set to v.
template <class T>
Status with(const std::vector<uint8_t>& f, const std::string& name, size_t i, T v) {
  std::vector<uint8_t> g = f;
  poke(g, data_at(f, name, i, sizeof(T)), v);
  return load(g);
}

// Files shared by the mutation tests, quantized once.
template <class W>
const std::vector<uint8_t>& file_of(const TransformerConfig& c, const char* key) {
  static std::map<std::string, std::vector<uint8_t>> files;
  std::vector<uint8_t>& f = files[key];
  if (f.empty()) {
    const Blob f32(f32_file(c, 3));
    attn::Model fm;
    REQUIRE(attn::Model::load(f32.p, f32.n, &fm) == Status::kOk);
    f = fixed_file(c, quantize<W>(fm, sequences(4, 12, c.vocab_size, 5)).w);
  }
  return f;
}

}  // namespace

TEST_CASE("integer models round-trip: converter -> file -> loader -> forward, bit-identical",
          "[model][v3][int_model]") {
  for (const Case& k : cases()) {
    round_trip<attn::TransformerWeightsS8, attn::LayerWeightsS8>(k);
    round_trip<attn::TransformerWeightsS16, attn::LayerWeightsS16>(k);
  }
}

TEST_CASE("integer model files are canonical: record, blocks, tensor order", "[model][v3][int_model]") {
  const TransformerConfig c = bert();
  const std::vector<uint8_t>& f = file_of<attn::TransformerWeightsS8>(c, "bert8");
  const Header h = peek<Header>(f, 0);
  CHECK(h.version == 3);
  CHECK(h.flags == fmt::kHeaderModel);
  CHECK(h.blocks_offset == 128);
  CHECK(peek<ModelRecord>(f, 64).dtype == uint16_t(DType::kS8));
  for (uint32_t b = 0; b < h.block_count; ++b)
    CHECK(peek<uint16_t>(f, 128 + 64 * b + 20) == uint16_t(DType::kS8));
  std::vector<std::string> names;
  for (uint32_t i = 0; i < h.tensor_count; ++i)
    names.push_back(reinterpret_cast<const char*>(f.data() + h.tensors_offset + i * sizeof(TensorDesc)));
  const std::vector<std::string> layer0 = {"block.0.wq",           "block.0.wk",
                                           "block.0.wv",           "block.0.wo",
                                           "block.0.bq",           "block.0.bk",
                                           "block.0.bv",           "block.0.bo",
                                           "block.0.q_multiplier", "block.0.q_shift",
                                           "block.0.k_multiplier", "block.0.k_shift",
                                           "block.0.v_multiplier", "block.0.v_shift",
                                           "block.0.o_multiplier", "block.0.o_shift",
                                           "block.0.quant_params", "block.0.io_scale",
                                           "block.0.norm1_weight", "block.0.norm1_bias",
                                           "block.0.norm1_consts", "block.0.norm2_weight",
                                           "block.0.norm2_bias",   "block.0.norm2_consts",
                                           "block.0.attn_in",      "block.0.attn_out",
                                           "block.0.ffn_in",       "block.0.ffn_w1",
                                           "block.0.ffn_b1",       "block.0.ffn_w1_multiplier",
                                           "block.0.ffn_w1_shift", "block.0.ffn_w2",
                                           "block.0.ffn_b2",       "block.0.ffn_w2_multiplier",
                                           "block.0.ffn_w2_shift", "block.0.ffn_act_table",
                                           "block.0.ffn_consts",   "block.1.wq"};
  REQUIRE(names.size() > layer0.size());
  CHECK(std::vector<std::string>(names.begin(), names.begin() + std::ptrdiff_t(layer0.size())) == layer0);
  const std::vector<std::string> tail = {"model.token_embedding",
                                         "model.token_multiplier",
                                         "model.token_shift",
                                         "model.position_embedding",
                                         "model.position_multiplier",
                                         "model.position_shift",
                                         "model.type_embedding",
                                         "model.embedding_norm_weight",
                                         "model.embedding_norm_bias",
                                         "model.embedding_norm_consts",
                                         "model.scales"};
  CHECK(std::vector<std::string>(names.end() - std::ptrdiff_t(tail.size()), names.end()) == tail);
}

TEST_CASE("integer model files: every bad constant has its status", "[model][v3][int_model][bad]") {
  const TransformerConfig b = bert(), lt = llama(LmHead::kTied), lu = llama(LmHead::kUntied);
  const TransformerConfig g = gpt_head_in();
  const auto& b8 = file_of<attn::TransformerWeightsS8>(b, "bert8");
  const auto& b16 = file_of<attn::TransformerWeightsS16>(b, "bert16");
  const auto& l8 = file_of<attn::TransformerWeightsS8>(lt, "llama_tied8");
  const auto& l16 = file_of<attn::TransformerWeightsS16>(lu, "llama_untied16");
  const auto& u8 = file_of<attn::TransformerWeightsS8>(lu, "llama_untied8");
  const auto& g8 = file_of<attn::TransformerWeightsS8>(g, "gpt8");
  const auto& g16 = file_of<attn::TransformerWeightsS16>(g, "gpt16");
  for (const auto* f : {&b8, &b16, &l8, &l16, &u8, &g8, &g16}) CHECK(load(*f) == Status::kOk);
  const Status bad = Status::kBadQuantParams;
  const int64_t huge = int64_t{1} << 62;

  SECTION("norm constants: eps, shift, output zero point; norm biases") {
    // eps [0, 2^62), shift [-31, 30]
    CHECK(with<int64_t>(b8, "block.0.norm1_consts", fmt::kNormEps, -1) == bad);
    CHECK(with<int64_t>(b8, "block.1.norm2_consts", fmt::kNormEps, huge) == bad);
    CHECK(with<int64_t>(b8, "block.1.norm2_consts", fmt::kNormEps, huge - 1) == Status::kOk);
    CHECK(with<int64_t>(b16, "model.embedding_norm_consts", fmt::kNormShift, -32) == bad);
    CHECK(with<int64_t>(l8, "model.final_norm_consts", fmt::kNormShift, 31) == bad);
    CHECK(with<int64_t>(l8, "block.0.norm1_consts", fmt::kNormShift, 30) == Status::kOk);
    CHECK(with<int64_t>(l8, "block.0.norm1_consts", fmt::kNormShift, -31) == Status::kOk);
    CHECK(with<int64_t>(l8, "block.0.norm1_consts", fmt::kNormShift, int64_t{1} << 32) == bad);
    // Zero points: pre-norm s8 norms feed an int8 input [-128, 127]; post-norm, the
    // embedding norm and s16 ones write int32 / int16 (0).
    CHECK(with<int64_t>(l8, "block.1.norm2_consts", fmt::kNormOutputZeroPoint, 127) == Status::kOk);
    CHECK(with<int64_t>(l8, "block.1.norm2_consts", fmt::kNormOutputZeroPoint, 128) == bad);
    CHECK(with<int64_t>(l8, "model.final_norm_consts", fmt::kNormOutputZeroPoint, -129) == bad);
    CHECK(with<int64_t>(b8, "block.0.norm1_consts", fmt::kNormOutputZeroPoint, 1) == bad);
    CHECK(with<int64_t>(b8, "model.embedding_norm_consts", fmt::kNormOutputZeroPoint, -1) == bad);
    CHECK(with<int64_t>(l16, "block.0.norm1_consts", fmt::kNormOutputZeroPoint, 1) == bad);
    CHECK(with<int64_t>(l16, "model.final_norm_consts", fmt::kNormOutputZeroPoint, 1) == bad);
    // |bias| < 2^29
    const int32_t big_bias = int32_t{1} << 29;
    CHECK(with<int32_t>(b8, "block.0.norm1_bias", 3, big_bias) == bad);
    CHECK(with<int32_t>(b16, "model.embedding_norm_bias", 0, -big_bias) == bad);
    CHECK(with<int32_t>(b16, "model.embedding_norm_bias", 0, big_bias - 1) == Status::kOk);
    CHECK(with<int32_t>(b16, "model.embedding_norm_bias", 0, 1 - big_bias) == Status::kOk);
  }
  SECTION("rescales: multiplier, shift, zero point") {
    using R = int32_t;
    CHECK(with<R>(b8, "block.0.attn_in", fmt::kRescaleMultiplier, -1) == bad);
    CHECK(with<R>(b8, "block.1.attn_out", fmt::kRescaleShift, 31) == bad);
    CHECK(with<R>(b8, "block.1.attn_out", fmt::kRescaleShift, 30) == Status::kOk);
    CHECK(with<R>(b16, "block.0.ffn_in", fmt::kRescaleShift, -32) == bad);
    CHECK(with<R>(b8, "block.0.ffn_in", fmt::kRescaleZeroPoint, 128) == bad);
    CHECK(with<R>(b16, "block.0.attn_out", fmt::kRescaleZeroPoint, 1) == bad);
    CHECK(with<R>(g8, "model.head_in", fmt::kRescaleZeroPoint, -129) == bad);
    CHECK(with<R>(g16, "model.head_in", fmt::kRescaleMultiplier, -5) == bad);
  }
  SECTION("FFN: multipliers, shifts, biases, activation tables, constants") {
    CHECK(with<int32_t>(b8, "block.0.ffn_w1_multiplier", 2, -1) == bad);
    CHECK(with<int32_t>(b8, "block.1.ffn_w2_shift", 0, 31) == bad);
    CHECK(with<int32_t>(b16, "block.1.ffn_w2_shift", 0, 15) == bad);  // s16 projections: [-31, 14]
    CHECK(with<int32_t>(b16, "block.1.ffn_w2_shift", 0, 14) == Status::kOk);
    CHECK(with<int32_t>(l8, "block.0.ffn_w3_shift", 5, -32) == bad);
    CHECK(with<int32_t>(l16, "block.1.ffn_w3_multiplier", 0, std::numeric_limits<int32_t>::min()) == bad);
    // Bias bound over the inputs: E for W1 / W3, F for W2.
    const int32_t e = b.embed_dim, ff = b.ffn_dim;
    const int32_t lim_e = int32_t(INT32_MAX - int64_t{e} * 128 * 128);
    const int32_t lim_f = int32_t(INT32_MAX - int64_t{ff} * 128 * 128);
    CHECK(with<int32_t>(b8, "block.0.ffn_b1", 1, lim_e) == Status::kOk);
    CHECK(with<int32_t>(b8, "block.0.ffn_b1", 1, lim_e + 1) == Status::kBiasOutOfRange);
    CHECK(with<int32_t>(b8, "block.1.ffn_b2", 0, -lim_f) == Status::kOk);
    CHECK(with<int32_t>(b8, "block.1.ffn_b2", 0, -lim_f - 1) == Status::kBiasOutOfRange);
    CHECK(with<int32_t>(l8, "block.0.ffn_b3", 0, INT32_MIN) == Status::kBiasOutOfRange);
    const int64_t lim16 = INT64_MAX / 0x7FFF - int64_t{ff} * 32768 * 128;
    CHECK(with<int64_t>(b16, "block.0.ffn_b2", 4, lim16) == Status::kOk);
    CHECK(with<int64_t>(b16, "block.0.ffn_b2", 4, lim16 + 1) == Status::kBiasOutOfRange);
    // s16 tables: |entry| <= 2^20 (the interpolation's int32 bound); s8 ones: any value.
    CHECK(with<int32_t>(b16, "block.0.ffn_act_table", 1024, 1 << 20) == Status::kOk);
    CHECK(with<int32_t>(b16, "block.0.ffn_act_table", 1024, (1 << 20) + 1) == bad);
    CHECK(with<int32_t>(l16, "block.1.ffn_act_table", 0, -(1 << 20) - 1) == bad);
    CHECK(with<int8_t>(b8, "block.0.ffn_act_table", 7, -128) == Status::kOk);
    CHECK(with<int16_t>(l8, "block.0.ffn_act_table", 7, -32768) == Status::kOk);
    // Constants: zero points, the gate / activation multiplier and shift.
    using namespace fmt;
    CHECK(with<int32_t>(b8, "block.0.ffn_consts", kFfnH1ZeroPoint, 128) == bad);
    CHECK(with<int32_t>(b8, "block.0.ffn_consts", kFfnGZeroPoint, -129) == bad);
    CHECK(with<int32_t>(l8, "block.0.ffn_consts", kFfnH3ZeroPoint, 200) == bad);
    CHECK(with<int32_t>(l8, "block.0.ffn_consts", kFfnActMultiplier, -1) == bad);
    CHECK(with<int32_t>(l8, "block.1.ffn_consts", kFfnActShift, 31) == bad);
    CHECK(with<int32_t>(l8, "block.1.ffn_consts", kFfnActShift, 30) == Status::kOk);
    // A plain s8 FFN has no gate: those entries are 0.
    CHECK(with<int32_t>(b8, "block.1.ffn_consts", kFfnH3ZeroPoint, 1) == Status::kBadReserved);
    CHECK(with<int32_t>(b8, "block.1.ffn_consts", kFfnActMultiplier, 1) == Status::kBadReserved);
    CHECK(with<int32_t>(b8, "block.1.ffn_consts", kFfnActShift, 1) == Status::kBadReserved);
    // s16: no zero points; act_shift [-31, 30] plain, [-31, 14] gated.
    CHECK(with<int32_t>(b16, "block.0.ffn_consts", kFfnH1ZeroPoint, 1) == bad);
    CHECK(with<int32_t>(l16, "block.0.ffn_consts", kFfnGZeroPoint, -1) == bad);
    CHECK(with<int32_t>(b16, "block.0.ffn_consts", kFfnActShift, 30) == Status::kOk);
    CHECK(with<int32_t>(b16, "block.0.ffn_consts", kFfnActShift, 31) == bad);
    CHECK(with<int32_t>(l16, "block.0.ffn_consts", kFfnActShift, 15) == bad);
    CHECK(with<int32_t>(l16, "block.0.ffn_consts", kFfnActShift, 14) == Status::kOk);
    CHECK(with<int32_t>(b16, "block.0.ffn_consts", kFfnActMultiplier, -1) == bad);
  }
  SECTION("embeddings, head, scales") {
    CHECK(with<int32_t>(b8, "model.token_multiplier", 3, -1) == bad);
    CHECK(with<int32_t>(b16, "model.token_shift", 0, 31) == bad);  // onto the residual: [-31, 30] for both
    CHECK(with<int32_t>(b16, "model.token_shift", 0, 30) == Status::kOk);
    CHECK(with<int32_t>(b8, "model.position_multiplier", 0, -7) == bad);
    CHECK(with<int32_t>(b8, "model.position_shift", 15, -32) == bad);
    CHECK(with<int32_t>(l8, "model.head_multiplier", 1, -1) == bad);
    CHECK(with<int32_t>(l8, "model.head_shift", 1, 31) == bad);
    CHECK(with<int32_t>(l16, "model.head_shift", 1, 15) == bad);
    CHECK(with<int32_t>(l16, "model.head_shift", 1, 14) == Status::kOk);
    const int32_t lim = int32_t(INT32_MAX - int64_t{lt.embed_dim} * 128 * 128);
    CHECK(with<int32_t>(l8, "model.head_bias", 0, lim) == Status::kOk);
    CHECK(with<int32_t>(l8, "model.head_bias", 0, lim + 1) == Status::kBiasOutOfRange);
    CHECK(with<int32_t>(u8, "model.head_bias", 9, -lim - 1) == Status::kBiasOutOfRange);
    // Scales: finite and > 0, read as bits.
    for (const float s : {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()}) {
      INFO(s);
      CHECK(with<float>(b8, "model.scales", fmt::kResidualScale, s) == bad);
      CHECK(with<float>(l16, "model.scales", fmt::kOutputScale, s) == bad);
    }
    CHECK(with<float>(l16, "model.scales", fmt::kOutputScale, 1e-30f) == Status::kOk);
    // The type row, weights and norm weights take any value.
    CHECK(with<int32_t>(b8, "model.type_embedding", 0, INT32_MIN) == Status::kOk);
    CHECK(with<int32_t>(b8, "block.0.norm2_weight", 0, INT32_MIN) == Status::kOk);
  }
  SECTION("the attention block's own checks still apply") {
    CHECK(with<int32_t>(l8, "block.1.q_shift", 0, 31) == bad);
    CHECK(with<int32_t>(l16, "block.0.o_shift", 0, 15) == bad);
    CHECK(with<int16_t>(l8, "block.0.rope_cos", 0, 16385) == bad);
  }
}

TEST_CASE("integer model files: presence, dtypes and shapes of the tables", "[model][v3][int_model][bad]") {
  const TransformerConfig b = bert(), lt = llama(LmHead::kTied), lu = llama(LmHead::kUntied);
  const auto& b8 = file_of<attn::TransformerWeightsS8>(b, "bert8");
  const auto& b16 = file_of<attn::TransformerWeightsS16>(b, "bert16");
  const auto& l8 = file_of<attn::TransformerWeightsS8>(lt, "llama_tied8");
  const auto& l16 = file_of<attn::TransformerWeightsS16>(lu, "llama_untied16");
  const auto rec = [](std::vector<uint8_t> f, size_t field, uint32_t v) {
    poke(f, 64 + field, v);
    return load(f);
  };
  const auto flags = [](const std::vector<uint8_t>& f) { return peek<ModelRecord>(f, 64).flags; };
  const size_t kFlags = offsetof(ModelRecord, flags);
  // Flags that call for tables the file lacks, or rule out ones it has.
  CHECK(rec(b8, kFlags, flags(b8) | fmt::kModelPreNorm) == Status::kUnknownRole);  // attn_in, ffn_in
  // Post-norm: the norms write the int32 residual (zero point 0), and attn_in / ffn_in are missing.
  CHECK(rec(l8, kFlags, flags(l8) & ~fmt::kModelPreNorm) == Status::kBadQuantParams);
  CHECK(rec(l16, kFlags, flags(l16) & ~fmt::kModelPreNorm) == Status::kMissingTensor);
  CHECK(rec(l8, kFlags, flags(l8) & ~fmt::kModelGatedFfn) == Status::kUnknownRole);   // w3
  CHECK(rec(b8, kFlags, flags(b8) | fmt::kModelHeadTied) == Status::kMissingTensor);  // head tables
  CHECK(rec(l8, kFlags, (flags(l8) & ~fmt::kModelHeadTied) | fmt::kModelHeadUntied) ==
        Status::kMissingTensor);
  CHECK(rec(l16, kFlags, (flags(l16) & ~fmt::kModelHeadUntied) | fmt::kModelHeadTied) ==
        Status::kUnknownRole);
  CHECK(rec(l8, kFlags, flags(l8) | fmt::kModelFfnBias) == Status::kOk);  // s8 biases are there anyway
  CHECK(rec(l16, kFlags, flags(l16) | fmt::kModelFfnBias) == Status::kMissingTensor);  // s16 ones are not
  CHECK(rec(b16, kFlags, flags(b16) & ~fmt::kModelFfnBias) == Status::kUnknownRole);
  CHECK(rec(l16, kFlags, flags(l16) & ~fmt::kModelFinalNorm) == Status::kUnknownRole);  // and head_in missing
  // Tensors left out by the writer.
  for (const char* name : {"block.1.norm1_consts", "block.0.attn_in", "block.0.ffn_act_table", "model.scales",
                           "model.token_shift", "model.head_bias", "block.1.ffn_w3_shift",
                           "model.head_multiplier", "block.0.io_scale"}) {
    INFO(name);
    const std::vector<uint8_t>& f = std::string(name).find("attn_in") != std::string::npos ? b8 : l8;
    const LoadedModel<attn::TransformerWeightsS8> lm(f);
    const TransformerConfig& c = lm.weights.config;
    const attn::TransformerWeightsS8& w = lm.weights.w;
    tools::ModelSpec s;
    tools::add_transformer_fixed(s, c, false, w);
    size_t erased = 0;
    for (size_t i = 0; i < s.tensors.size(); ++i)
      if (s.tensors[i].name == name) {
        s.tensors.erase(s.tensors.begin() + std::ptrdiff_t(i));
        ++erased;
      }
    REQUIRE(erased == 1);
    CHECK(load(tools::write_model(s)) == Status::kMissingTensor);
  }
  // dtypes: s32 <-> f32 have one size (the byte size still agrees).
  const auto dtype = [](std::vector<uint8_t> f, const std::string& name, DType d) {
    poke(f, desc_at(f, name) + offsetof(TensorDesc, dtype), uint16_t(d));
    return load(f);
  };
  CHECK(dtype(b8, "block.0.norm1_weight", DType::kF32) == Status::kDtypeMismatch);
  CHECK(dtype(b8, "model.scales", DType::kS32) == Status::kDtypeMismatch);
  CHECK(dtype(b16, "block.1.ffn_act_table", DType::kF32) == Status::kDtypeMismatch);
  CHECK(dtype(b8, "block.0.norm1_bias", DType::kF32) == Status::kDtypeMismatch);
  CHECK(dtype(b8, "block.0.norm1_consts", DType::kF32) == Status::kBadByteSize);  // 8 -> 4 bytes
  // The s8 activation table: s8 for a plain FFN, s16 for a gated one (same length, other byte size).
  CHECK(dtype(l8, "block.0.ffn_act_table", DType::kS8) == Status::kBadByteSize);
  // Shapes: a constants table of other length (byte size fixed along), a table of other rank.
  const auto dims = [](std::vector<uint8_t> f, const std::string& name, uint16_t rank, uint32_t d0,
                       uint32_t d1) {
    const size_t at = desc_at(f, name);
    poke(f, at + offsetof(TensorDesc, rank), rank);
    poke(f, at + offsetof(TensorDesc, dims), d0);
    poke(f, at + offsetof(TensorDesc, dims) + 4, d1);
    return load(f);
  };
  CHECK(dims(b8, "block.0.norm1_consts", 2, 1, 3) == Status::kDimsMismatch);
  CHECK(dims(b8, "block.0.ffn_consts", 2, 5, 1) == Status::kDimsMismatch);
  CHECK(dims(b8, "model.scales", 2, 1, 2) == Status::kDimsMismatch);
  CHECK(dims(b16, "block.0.ffn_act_table", 2, 5, 205) == Status::kDimsMismatch);  // 1025 = 5 * 205
  CHECK(dims(l8, "model.head_multiplier", 2, 8, 6) == Status::kDimsMismatch);     // 48 entries, [8, 6]
  // Rotary tables of a model cover max_positions.
  CHECK(rec(l8, offsetof(ModelRecord, max_positions), 15) == Status::kDimsMismatch);
  CHECK(rec(l16, offsetof(ModelRecord, max_positions), 17) == Status::kDimsMismatch);
  // Roles without a row: 63 in a layer, 92 in the model; an integer role in an f32 model.
  const auto role = [](std::vector<uint8_t> f, const std::string& name, uint16_t r) {
    poke(f, desc_at(f, name) + offsetof(TensorDesc, role), r);
    return load(f);
  };
  CHECK(role(b8, "block.0.ffn_consts", 63) == Status::kUnknownRole);
  CHECK(role(b8, "model.scales", 92) == Status::kUnknownRole);
  CHECK(role(b8, "block.0.norm1_weight", uint16_t(Role::kNorm1Weight)) == Status::kUnknownRole);
  CHECK(role(b8, "block.1.ffn_in", uint16_t(Role::kAttnIn)) == Status::kDuplicateRole);
  // The model's dtype: s16 tables under an s8 record (and s8 blocks) are refused.
  CHECK(rec(b8, offsetof(ModelRecord, dtype),
            uint32_t(DType::kS16) | (peek<uint32_t>(b8, 64 + 16) & 0xFFFF0000u)) == Status::kBadModelRecord);
}

TEST_CASE("integer model accessors on block files and f32 models", "[model][v3][int_model]") {
  tools::ModelSpec s;
  tools::BlockSpec bs{8, 2, 4, 8, 8, false, DType::kF32};
  std::vector<float> w(64, 0.5f);
  tools::add_block_f32(s, bs, {&w, &w, &w, &w});
  const Blob blob(tools::write_model(s));
  attn::Model m;
  REQUIRE(attn::Model::load(blob.p, blob.n, &m) == Status::kOk);
  attn::LayerWeightsS8 l8[1];
  attn::TransformerWeightsS8 w8;
  attn::LayerWeightsS16 l16[1];
  attn::TransformerWeightsS16 w16;
  CHECK(m.transformer_weights_s8(l8, 1, &w8) == Status::kNotAModel);
  CHECK(m.transformer_weights_s16(l16, 1, &w16) == Status::kNotAModel);
  const Blob f32(f32_file(bert(), 1));
  attn::Model fm;
  REQUIRE(attn::Model::load(f32.p, f32.n, &fm) == Status::kOk);
  attn::LayerWeightsS16 l2[2];
  CHECK(fm.transformer_weights_s16(l2, 2, &w16) == Status::kBadDtype);
}
TEST_CASE("committed s8 / s16 model files (fuzzer seeds) load and run", "[model][v3][int_model]") {
  for (const char* name : {"llama1.s8.attn", "bert1.s16.attn"}) {
    INFO(name);
    std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/model/" + name, std::ios::binary);
    REQUIRE(in.good());
    const std::vector<uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(f.size() <= 16384);  // the fuzzer's input limit (tests/fuzz/run_fuzz.sh)
    const Blob blob(f);
    attn::Model m;
    REQUIRE(attn::Model::load(blob.p, blob.n, &m) == Status::kOk);
    TransformerConfig c;
    REQUIRE(m.transformer_config(&c) == Status::kOk);
    ModelRecord r;
    REQUIRE(m.model_record(&r) == Status::kOk);
    const std::vector<int32_t> toks = sequences(1, std::min(5, c.max_positions), c.vocab_size, 1)[0];
    std::vector<int32_t> out;
    if (r.dtype == uint16_t(DType::kS8)) {
      out = run(c, ModelWeights<attn::TransformerWeightsS8>(m).w, toks);
    } else {
      REQUIRE(r.dtype == uint16_t(DType::kS16));
      out = run(c, ModelWeights<attn::TransformerWeightsS16>(m).w, toks);
    }
    CHECK(out.size() == toks.size() * size_t(c.output_dim()));
  }
}
