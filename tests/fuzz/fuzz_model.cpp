// fuzz_model.cpp: libFuzzer target for the .attn loader.
//
// Each input is loaded twice: as is (mostly stopped by the CRC) and with
// its CRC recomputed, so mutations reach every later check. A file that
// loads has every view walked and every tensor byte read, so ASan flags any
// pointer the loader hands out past the buffer. Model files (format v3) also
// have their transformer weights walked (f32, s8, s16), and their tokenizer
// section, if any, encodes a text and decodes every id. Seeds: every .attn
// under tests/data (whole BERT / Llama models, f32 and integer;
// tokenizers/tiny_story.attn has a tokenizer section).
// Build and run: tests/fuzz/run_fuzz.sh SECONDS
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "attn/model.h"

namespace {

// Touch the last element of every table of a quantized block through the
// WeightsS8 / WeightsS16 views (ASan checks they lie inside the blob).
// Int4 weights (weight_s4, two per byte) in place of int8 ones: exactly one of the two is set.
template <class P>
uint32_t touch(const P& p, int32_t out, int32_t in, bool bias) {
  if ((p.weight == nullptr) == (p.weight_s4 == nullptr) || p.multiplier == nullptr || p.shift == nullptr)
    __builtin_trap();
  if (bias && p.bias == nullptr) __builtin_trap();
  const uint32_t last_weight = p.weight_s4 != nullptr ? static_cast<uint32_t>(p.weight_s4[out * in / 2 - 1])
                                                      : static_cast<uint32_t>(p.weight[out * in - 1]);
  uint32_t s =
      last_weight + static_cast<uint32_t>(p.multiplier[out - 1]) + static_cast<uint32_t>(p.shift[out - 1]);
  if (bias) s += static_cast<uint32_t>(p.bias[out - 1]);
  return s;
}

void walk_quantized(const attn::Block& blk) {
  volatile uint32_t sink = 0;
  const attn::AttentionConfig& c = blk.config;
  const int32_t d = c.inner_dim();
  if (blk.io.scale == nullptr) __builtin_trap();
  sink = sink + static_cast<uint32_t>(blk.io.scale[3] > 0.0f);
  if (blk.dtype == attn::DType::kS8) {
    const attn::WeightsS8& w = blk.s8;
    sink = sink + touch(w.q, d, c.embed_dim, true) + touch(w.k, c.kv_dim(), c.kdim, true) +
           touch(w.v, c.kv_dim(), c.vdim, true) + touch(w.o, c.embed_dim, d, true);
  } else {
    const attn::WeightsS16& w = blk.s16;
    sink = sink + touch(w.q, d, c.embed_dim, c.bias) + touch(w.k, c.kv_dim(), c.kdim, c.bias) +
           touch(w.v, c.kv_dim(), c.vdim, c.bias) + touch(w.o, c.embed_dim, d, c.bias);
  }
}

void walk(const attn::Model& m) {
  volatile uint32_t sink = 0;
  for (uint32_t i = 0; i < m.tensor_count(); ++i) {
    attn::TensorView t;
    if (m.tensor(i, &t) != attn::Status::kOk) __builtin_trap();
    const auto* p = static_cast<const uint8_t*>(t.data);
    for (size_t k = 0; k < t.byte_size; ++k) sink = sink + p[k];
    attn::TensorView again;
    if (m.find_tensor(t.name, &again) != attn::Status::kOk || again.data != t.data) __builtin_trap();
  }
  for (uint32_t b = 0; b < m.block_count(); ++b) {
    attn::Block blk;
    if (m.block(b, &blk) != attn::Status::kOk) __builtin_trap();
    const int32_t d = blk.config.inner_dim();
    if (blk.dtype == attn::DType::kS8 || blk.dtype == attn::DType::kS16) {
      walk_quantized(blk);
      continue;
    }
    if (blk.f32.wq == nullptr || blk.f32.wo == nullptr) __builtin_trap();
    sink = sink + static_cast<uint32_t>(blk.f32.wq[d * blk.config.embed_dim - 1] != 0.0f);
    sink = sink + static_cast<uint32_t>(blk.f32.wk[d * blk.config.kdim - 1] != 0.0f);
    sink = sink + static_cast<uint32_t>(blk.f32.wv[d * blk.config.vdim - 1] != 0.0f);
    sink = sink + static_cast<uint32_t>(blk.f32.wo[d * blk.config.embed_dim - 1] != 0.0f);
    if (blk.config.bias) sink = sink + static_cast<uint32_t>(blk.f32.bo[blk.config.embed_dim - 1] != 0.0f);
  }
}

// An integer model (s8 / s16): every table transformer_weights_s8 / _s16 hands
// out is present exactly when the config needs it, its last element inside the blob.
template <class Layer, class Weights>
void walk_fixed(const attn::Model& m, const attn::TransformerConfig& c,
                attn::Status (attn::Model::*get)(Layer*, int32_t, Weights*) const) {
  static Layer layers[ATTN_MAX_LAYERS];
  Weights w;
  if ((m.*get)(layers, ATTN_MAX_LAYERS, &w) != attn::Status::kOk) __builtin_trap();
  volatile int64_t sink = 0;
  const auto touch = [&](const auto* p, bool present, int64_t n) {
    if ((p != nullptr) != present) __builtin_trap();
    if (p != nullptr) sink = sink + static_cast<int64_t>(p[n - 1]);
  };
  // A projection's weights: int8 [n] or int4 [n / 2] bytes, exactly one of the two.
  const auto weights = [&](const auto& pr, bool present, int64_t n) {
    if (pr.weight_s4 != nullptr) {
      if (!present || pr.weight != nullptr) __builtin_trap();
      sink = sink + static_cast<int64_t>(pr.weight_s4[n / 2 - 1]);
      return;
    }
    touch(pr.weight, present, n);
  };
  constexpr bool s8 = sizeof(w.head.bias[0]) == 4;
  const int64_t e = c.embed_dim, f = c.ffn_dim, v = c.vocab_size, p = c.max_positions;
  const bool nb = c.norm == attn::NormKind::kLayerNorm && c.norm_bias, head = c.head != attn::LmHead::kNone;
  touch(w.token_embedding.table, true, v * e);
  touch(w.token_embedding.shift, true, v);
  touch(w.position_embedding.multiplier, c.learned_positions, p);
  touch(w.position_embedding.table, c.learned_positions, p * e);
  touch(w.type_embedding, c.type_vocab_size > 0, e);
  touch(w.embedding_norm.bias, c.embedding_norm && nb, e);
  touch(w.final_norm.weight, c.final_norm, e);
  weights(w.head, head, v * e);
  touch(w.head.shift, head, v);
  touch(w.head.bias, s8 && head, v);
  if (!(w.residual_scale > 0.0f) || !(w.output_scale > 0.0f)) __builtin_trap();
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const Layer& L = layers[l];
    weights(L.attention.o, true, e * c.num_heads * c.head_dim);
    touch(L.norm1.weight, true, e);
    touch(L.norm2.bias, nb, e);
    touch(L.ffn.w1.multiplier, true, f);
    weights(L.ffn.w2, true, e * f);
    touch(L.ffn.w2.bias, s8 || c.ffn_bias, e);
    touch(L.ffn.w3.shift, c.gated_ffn, f);
    touch(L.ffn.w3.bias, c.gated_ffn && (s8 || c.ffn_bias), f);
    if (!(L.attention_input_scale > 0.0f)) __builtin_trap();
  }
}

// A whole model (v3): every pointer transformer_weights_f32 hands out is
// present exactly when the config needs it, and its last element lies inside the blob.
void walk_model(const attn::Model& m) {
  attn::TransformerConfig c;
  if (m.transformer_config(&c) != attn::Status::kOk) __builtin_trap();
  attn::format::ModelRecord r{};
  if (m.model_record(&r) != attn::Status::kOk) __builtin_trap();
  if (r.dtype == static_cast<uint16_t>(attn::DType::kS8)) {
    walk_fixed(m, c, &attn::Model::transformer_weights_s8);
    return;
  }
  if (r.dtype == static_cast<uint16_t>(attn::DType::kS16)) {
    walk_fixed(m, c, &attn::Model::transformer_weights_s16);
    return;
  }
  static attn::LayerWeightsF32 layers[ATTN_MAX_LAYERS];
  attn::TransformerWeightsF32 w;
  if (m.transformer_weights_f32(layers, ATTN_MAX_LAYERS, &w) != attn::Status::kOk) __builtin_trap();
  volatile float sink = 0;
  const auto touch = [&](const float* p, bool present, int64_t n) {
    if ((p != nullptr) != present) __builtin_trap();
    if (p != nullptr) sink = sink + p[n - 1];
  };
  const int64_t e = c.embed_dim, f = c.ffn_dim, v = c.vocab_size;
  const int64_t hd = c.head_dim, d = c.num_heads * hd,
                dkv = (c.num_kv_heads ? c.num_kv_heads : c.num_heads) * hd;
  const bool nb = c.norm == attn::NormKind::kLayerNorm && c.norm_bias;
  touch(w.token_embedding, true, v * e);
  touch(w.position_embedding, c.learned_positions, int64_t{c.max_positions} * e);
  touch(w.type_embedding, c.type_vocab_size > 0, int64_t{c.type_vocab_size} * e);
  touch(w.embedding_norm.weight, c.embedding_norm, e);
  touch(w.embedding_norm.bias, c.embedding_norm && nb, e);
  touch(w.final_norm.weight, c.final_norm, e);
  touch(w.final_norm.bias, c.final_norm && nb, e);
  touch(w.lm_head, c.head == attn::LmHead::kUntied, v * e);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const attn::LayerWeightsF32& L = layers[l];
    touch(L.attention.wq, true, d * e);
    touch(L.attention.wk, true, dkv * e);
    touch(L.attention.wv, true, dkv * e);
    touch(L.attention.wo, true, e * d);
    touch(L.attention.bk, c.attention_bias, dkv);
    touch(L.norm1.weight, true, e);
    touch(L.norm2.bias, nb, e);
    touch(L.ffn.w1, true, f * e);
    touch(L.ffn.w2, true, e * f);
    touch(L.ffn.b2, c.ffn_bias, e);
    touch(L.ffn.w3, c.gated_ffn, f * e);
    touch(L.ffn.b3, c.gated_ffn && c.ffn_bias, f);
  }
}

// A model's tokenizer section that loaded: encode a text with every kind of
// character (ASan checks every table read), then decode every id.
void walk_tokenizer(const attn::Model& m) {
  attn::Tokenizer t;
  const attn::Status s = m.tokenizer(&t);
  if (s == attn::Status::kNotFound) return;
  if (s != attn::Status::kOk) __builtin_trap();  // the loader checked it
  static const char kText[] = "Once upon a time, \xC3\xA9t\xC3\xA9  \xF0\x9F\x8E\x89\xFF  the  end\n";
  const size_t len = sizeof kText - 1;
  alignas(16) static uint8_t scratch[64 * 1024];
  static int32_t ids[4 * sizeof kText];
  attn::Arena arena;
  if (t.tokenize_scratch_bytes(len) > sizeof scratch || t.max_ids(len) > sizeof ids / sizeof ids[0]) return;
  if (arena.init(scratch, sizeof scratch) != attn::Status::kOk) __builtin_trap();
  size_t n = 0;
  if (t.encode(kText, len, ids, t.max_ids(len), &arena, &n) != attn::Status::kOk) __builtin_trap();
  attn::TokenizerDecodeState state{};
  char out[ATTN_TOKENIZER_MAX_PIECE + 16];
  for (int32_t id = 0; id < t.vocab_size(); ++id) {
    size_t w = 0;
    if (t.decode(id, &state, out, sizeof out, &w) != attn::Status::kOk) __builtin_trap();
  }
}

void try_load(const uint8_t* data, size_t size, bool fix_crc) {
  // Exactly `size` bytes, 16-aligned, as flash would hold them.
  auto* buf = static_cast<uint8_t*>(::operator new (size == 0 ? 1 : size, std::align_val_t{16}));
  if (size) std::memcpy(buf, data, size);
  if (fix_crc && size >= attn::format::kCrcStart) {
    const uint32_t crc = attn::crc32(buf + attn::format::kCrcStart, size - attn::format::kCrcStart);
    std::memcpy(buf + offsetof(attn::format::Header, crc32), &crc, sizeof crc);
  }
  attn::Model m;
  if (attn::Model::load(buf, size, &m) == attn::Status::kOk) {
    walk(m);
    if (m.is_model()) walk_model(m);
    if (m.is_model()) walk_tokenizer(m);
  }
  ::operator delete (buf, std::align_val_t{16});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try_load(data, size, false);
  try_load(data, size, true);
  return 0;
}
