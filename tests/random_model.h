// tests/random_model.h: a random f32 whole model of a config (float32
// tensors in the model writer's layout), shared by the Catch2 tests and the
// integer model fixtures' generator. No Catch2: the generator links without it.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attn/transformer.h"
#include "format/writer.h"

namespace random_model {

// Llama-like, from a TransformerConfig::decoder preset (pre-norm RMSNorm,
// SiLU gate, RoPE, no biases, final norm, causal): GQA over 2 KV heads, eps
// 1e-6, the given head.
inline attn::TransformerConfig llama_like(attn::TransformerConfig c, attn::LmHead head) {
  c.num_kv_heads = 2;
  c.norm_eps = 1e-6f;
  c.head = head;
  return c;
}

// GPT-like, from a TransformerConfig::sized preset: pre-norm LayerNorm,
// gelu_tanh, learned positions, causal, untied head (the final norm as the
// preset has it: none).
inline attn::TransformerConfig gpt_like(attn::TransformerConfig c) {
  c.pre_norm = c.learned_positions = c.causal = true;
  c.activation = attn::Activation::kGeluTanh;
  c.head = attn::LmHead::kUntied;
  return c;
}

inline std::vector<float> normal(size_t n, std::mt19937& rng, float scale, float mean = 0.0f) {
  std::normal_distribution<float> d(mean, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline attn::tools::TransformerTensorsF32 random_weights(const attn::TransformerConfig& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t e = size_t(c.embed_dim), f = size_t(c.ffn_dim), v = size_t(c.vocab_size);
  const size_t hd = e / size_t(c.num_heads), d = hd * size_t(c.num_heads);
  const size_t dkv = hd * size_t(c.num_kv_heads != 0 ? c.num_kv_heads : c.num_heads);
  const bool nb = c.norm == attn::NormKind::kLayerNorm && c.norm_bias;
  const auto proj = [&](size_t out, size_t in) { return normal(out * in, rng, 1.0f / std::sqrt(float(in))); };
  const auto opt = [&](bool present, size_t n, float s, float mean = 0.0f) {
    return present ? normal(n, rng, s, mean) : std::vector<float>();
  };
  attn::tools::TransformerTensorsF32 w;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    attn::tools::LayerTensorsF32 L;
    L.wq = proj(d, e);
    L.wk = proj(dkv, e);
    L.wv = proj(dkv, e);
    L.wo = proj(e, d);
    L.bq = opt(c.attention_bias, d, 0.1f);
    L.bk = opt(c.attention_bias, dkv, 0.1f);
    L.bv = opt(c.attention_bias, dkv, 0.1f);
    L.bo = opt(c.attention_bias, e, 0.1f);
    L.norm1_weight = normal(e, rng, 0.1f, 1.0f);
    L.norm1_bias = opt(nb, e, 0.1f);
    L.norm2_weight = normal(e, rng, 0.1f, 1.0f);
    L.norm2_bias = opt(nb, e, 0.1f);
    L.w1 = proj(f, e);
    L.b1 = opt(c.ffn_bias, f, 0.1f);
    L.w2 = proj(e, f);
    L.b2 = opt(c.ffn_bias, e, 0.1f);
    L.w3 = c.gated_ffn ? proj(f, e) : std::vector<float>();
    L.b3 = opt(c.gated_ffn && c.ffn_bias, f, 0.1f);
    w.layers.push_back(L);
  }
  w.token_embedding = normal(v * e, rng, 1.0f);
  w.position_embedding = opt(c.learned_positions, size_t(c.max_positions) * e, 0.5f);
  w.type_embedding = opt(c.type_vocab_size > 0, size_t(c.type_vocab_size) * e, 0.5f);
  w.embedding_norm_weight = opt(c.embedding_norm, e, 0.1f, 1.0f);
  w.embedding_norm_bias = opt(c.embedding_norm && nb, e, 0.1f);
  w.final_norm_weight = opt(c.final_norm, e, 0.1f, 1.0f);
  w.final_norm_bias = opt(c.final_norm && nb, e, 0.1f);
  w.lm_head = c.head == attn::LmHead::kUntied ? proj(v, e) : std::vector<float>();
  return w;
}

// `count` sequences of `len` token ids uniform in [0, vocab).
inline std::vector<std::vector<int32_t>> sequences(int count, int len, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> tok(0, vocab - 1);
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(count),
                                        std::vector<int32_t>(static_cast<size_t>(len)));
  for (auto& s : out)
    for (auto& t : s) t = tok(rng);
  return out;
}

}  // namespace random_model
