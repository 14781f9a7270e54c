// model_s8.h: an s8 whole model (attn/transformer_fixed.h) with random
// integer weights and plausible constants, built on the device with no
// quantizer: the shapes drive the cost, the constants keep every stage in
// range (multipliers in [2^30, 2^31), small shifts, zero points inside int8),
// so that the forward takes its usual paths. Shared by the model cost probe
// (cost_model.cpp) and the model's minimal flash image (images/minimal_model.cpp).
//
// Scales the constants aim at (a value's magnitude in its own units):
//   residual  ~2^20 (the converter's grid puts the calibrated max at 2^24)
//   int8      ~+-40 around small zero points
//   accumulators of an int8 x int8 dot of K terms ~ 40 * 64 * sqrt(K)
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/transformer_fixed.h"

namespace model_s8 {

// A fixed LCG: the same model on every board.
struct Rng {
  uint32_t state;
  uint32_t next() { return state = state * 1664525u + 1013904223u; }
  int32_t uniform(int32_t spread) {  // [-spread, spread]
    return static_cast<int32_t>((next() >> 8) % static_cast<uint32_t>(2 * spread + 1)) - spread;
  }
  int32_t multiplier() { return 0x40000000 + static_cast<int32_t>(next() >> 2); }  // [2^30, 2^31)
};

class Builder {
 public:
  Builder(attn::Arena& pool, uint32_t seed, bool int4_ffn = false)
      : pool_(pool), rng_{seed}, int4_ffn_(int4_ffn) {}
  attn::Status status() const { return status_; }

  // The whole model for config c (RoPE tables left empty: set them with
  // attn::rope_table or a table of your own). layers: [c.num_layers].
  attn::TransformerWeightsS8 build(const attn::TransformerConfig& c, attn::LayerWeightsS8* layers) {
    const int32_t E = c.embed_dim, F = c.ffn_dim, V = c.vocab_size;
    const int32_t hd = c.head_dim > 0 ? c.head_dim : E / c.num_heads;
    const int32_t D = c.num_heads * hd;
    const int32_t Dkv = (c.num_kv_heads > 0 ? c.num_kv_heads : c.num_heads) * hd;
    attn::TransformerWeightsS8 w;
    w.token_embedding = embedding(V, E);
    if (c.learned_positions) w.position_embedding = embedding(c.max_positions, E);
    if (c.type_vocab_size > 0) w.type_embedding = ints(E, 1 << 18);
    const bool ln = c.norm == attn::NormKind::kLayerNorm && c.norm_bias;
    if (c.embedding_norm) w.embedding_norm = norm_to_residual(E, ln);
    if (c.head != attn::LmHead::kNone) {
      if (c.final_norm) {
        w.final_norm = norm_to_s8(E, ln);
      } else {
        w.head_in = to_s8();
      }
      // logits ~2^20 from accumulators ~2^15: shift 5 (+ the multiplier's 2^-1)
      w.head = projection(V, E, 6, c.head == attn::LmHead::kTied ? w.token_embedding.table : nullptr);
    } else if (c.final_norm) {
      w.final_norm = norm_to_residual(E, ln);
    }
    for (int32_t l = 0; l < c.num_layers; ++l) {
      attn::LayerWeightsS8& L = layers[l];
      L.attention.q = projection(D, E, -9);
      L.attention.k = projection(Dkv, E, -9);
      L.attention.v = projection(Dkv, E, -9);
      L.attention.o = projection(E, D, -9);
      L.attention.q_zero_point = 3;
      L.attention.k_zero_point = -2;
      L.attention.v_zero_point = 1;
      L.attention.context_zero_point = -1;
      L.attention.output_zero_point = 2;
      L.attention.softmax.exp_multiplier = 3150000000u;  // t = u * 47 / 2^16 per score step
      L.attention.softmax.exp_shift = 6;
      L.attention.softmax.diff_limit = 22000;  // t < 2^20
      L.attention.softmax.score_shift = 0;
      L.attention.context_multiplier = 0x50000000;
      L.attention.context_shift = -14;
      if (c.pre_norm) {
        L.norm1 = norm_to_s8(E, ln);
        L.norm2 = norm_to_s8(E, ln);
      } else {
        L.norm1 = norm_to_residual(E, ln);
        L.norm2 = norm_to_residual(E, ln);
        L.attn_in = to_s8();
        L.ffn_in = to_s8();
      }
      L.attn_out = to_residual();
      attn::FfnS8& f = L.ffn;
      f.w1 = ffn_projection(F, E, -9);
      f.h1_zero_point = -5;
      f.g_zero_point = c.activation == attn::Activation::kGelu ? -100 : -3;
      f.w2 = ffn_projection(E, F, 6);  // accumulators ~2^15 -> residual ~2^20
      if (c.gated_ffn) {
        f.w3 = ffn_projection(F, E, -9);
        f.h3_zero_point = 4;
        // gate_table ~2^13 (x) h3 ~2^5 -> g ~40: 2^-13 (and the multiplier's)
        int16_t* t = array<int16_t>(256);
        for (int32_t i = 0; t != nullptr && i < 256; ++i) t[i] = static_cast<int16_t>(rng_.uniform(8192));
        f.gate_table = t;
        f.gate_multiplier = rng_.multiplier();
        f.gate_shift = -12;
      } else {
        int8_t* t = array<int8_t>(256);
        for (int32_t i = 0; t != nullptr && i < 256; ++i) t[i] = static_cast<int8_t>(rng_.uniform(127));
        f.act_table = t;
      }
    }
    w.layers = layers;
    w.residual_scale = 1.0f / 1048576.0f;
    w.output_scale = 1.0f / 1048576.0f;
    return w;
  }

 private:
  template <typename T>
  T* array(int32_t n) {
    T* p = nullptr;
    const attn::Status s = pool_.alloc_array(static_cast<size_t>(n), &p);
    if (s != attn::Status::kOk && status_ == attn::Status::kOk) status_ = s;
    return p;
  }
  int32_t* ints(int32_t n, int32_t spread) {
    int32_t* p = array<int32_t>(n);
    for (int32_t i = 0; p != nullptr && i < n; ++i) p[i] = rng_.uniform(spread);
    return p;
  }
  int8_t* int8s(int32_t n) {
    int8_t* p = array<int8_t>(n);
    for (int32_t i = 0; p != nullptr && i < n; ++i) p[i] = static_cast<int8_t>(rng_.uniform(127));
    return p;
  }
  int32_t* multipliers(int32_t n) {
    int32_t* p = array<int32_t>(n);
    for (int32_t i = 0; p != nullptr && i < n; ++i) p[i] = rng_.multiplier();
    return p;
  }
  int32_t* shifts(int32_t n, int32_t shift) {
    int32_t* p = array<int32_t>(n);
    for (int32_t i = 0; p != nullptr && i < n; ++i) p[i] = shift;
    return p;
  }
  // Rows of int8 +-127 onto the residual (~2^20): ratio ~2^13.
  attn::EmbeddingFixed embedding(int32_t rows, int32_t E) {
    attn::EmbeddingFixed e;
    e.table = int8s(rows * E);
    e.multiplier = multipliers(rows);
    e.shift = shifts(rows, 13);
    return e;
  }
  // [out, in] weights (or `weight`), biases +-2000, per-channel rescale.
  attn::ProjectionS8 projection(int32_t out, int32_t in, int32_t shift, const int8_t* weight = nullptr) {
    attn::ProjectionS8 p;
    p.weight = weight != nullptr ? weight : int8s(out * in);
    p.bias = ints(out, 2000);
    p.multiplier = multipliers(out);
    p.shift = shifts(out, shift);
    return p;
  }
  // An FFN projection: int8, or with int4_ffn the same draws >> 4 as int4
  // (two per byte, low nibble first; `in` even).
  attn::ProjectionS8 ffn_projection(int32_t out, int32_t in, int32_t shift) {
    if (!int4_ffn_) return projection(out, in, shift);
    uint8_t* q = array<uint8_t>(out * in / 2);
    for (int32_t i = 0; q != nullptr && i < out * in; i += 2) {
      const uint32_t lo = static_cast<uint32_t>(rng_.uniform(127) >> 4) & 15u;
      const uint32_t hi = static_cast<uint32_t>(rng_.uniform(127) >> 4) & 15u;
      q[i / 2] = static_cast<uint8_t>(lo | hi << 4);
    }
    attn::ProjectionS8 p;
    p.weight_s4 = q;
    p.bias = ints(out, 2000);
    p.multiplier = multipliers(out);
    p.shift = shifts(out, shift + 4);  // the weights' 2^-4 given back: the same output scales
    return p;
  }
  // Normalized values n in Q.F (F = attn::norm_frac_bits(E)): int8
  // y = zp + round((round(n w / 2^31) + bias) / 2^15) ~ 40 n / 2^F with w ~ 40 * 2^(46 - F).
  attn::NormFixed norm_to_s8(int32_t E, bool bias) {
    attn::NormFixed n;
    const int32_t F = attn::norm_frac_bits(E);
    int32_t* w = array<int32_t>(E);
    for (int32_t i = 0; w != nullptr && i < E; ++i) w[i] = ((40 << 15) + rng_.uniform(1 << 18)) << (31 - F);
    n.weight = w;
    if (bias) n.bias = biases(E, 1 << 15);
    n.eps = 1000;
    n.shift = 15;
    n.output_zero_point = -7;
    return n;
  }
  // Onto the residual grid (~2^20): y = round((round(n w / 2^31) + bias) / 2) ~ n 2^(20 - F)
  // with w ~ 2^(52 - F) (2^29 at E = 64).
  attn::NormFixed norm_to_residual(int32_t E, bool bias) {
    attn::NormFixed n;
    const int32_t F = attn::norm_frac_bits(E);
    int32_t* w = array<int32_t>(E);
    for (int32_t i = 0; w != nullptr && i < E; ++i) w[i] = (1 << (52 - F)) + rng_.uniform(1 << (50 - F));
    n.weight = w;
    if (bias) n.bias = biases(E, 1 << 19);
    n.eps = 1000;
    n.shift = 1;
    return n;
  }
  int32_t* biases(int32_t n, int32_t spread) {
    int32_t* p = array<int32_t>(n);
    for (int32_t i = 0; p != nullptr && i < n; ++i) p[i] = rng_.uniform(spread);
    return p;
  }
  // Residual ~2^20 -> int8 ~40: 2^-15 (and the multiplier's).
  attn::RescaleFixed to_s8() {
    attn::RescaleFixed r;
    r.multiplier = rng_.multiplier();
    r.shift = -14;
    r.zero_point = 6;
    return r;
  }
  // int8 ~40 -> residual ~2^20: 2^15.
  attn::RescaleFixed to_residual() {
    attn::RescaleFixed r;
    r.multiplier = rng_.multiplier();
    r.shift = 15;
    r.zero_point = 2;
    return r;
  }

  attn::Arena& pool_;
  Rng rng_;
  bool int4_ffn_;
  attn::Status status_ = attn::Status::kOk;
};

}  // namespace model_s8
