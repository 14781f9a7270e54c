// int_model_helpers.h: what the integer model file tests share
// (model_fixed_format_test.cpp, cli_int_model_test.cpp): random HF-style
// float models written as f32 model files, the library's converter in
// memory, the s8 / s16 model file of its output, and the integer forward.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "attn/model.h"
#include "attn/transformer_fixed.h"
#include "format/writer.h"
#include "random_model.h"

namespace int_model {

using attn::DType;
using attn::LmHead;
using attn::Status;
using attn::TransformerConfig;
namespace tools = attn::tools;

// A 16-byte aligned copy of a file, as the loader wants it.
struct Blob {
  explicit Blob(const std::vector<uint8_t>& v) : n(v.size()) {
    p = static_cast<uint8_t*>(::operator new (n == 0 ? 1 : n, std::align_val_t{16}));
    if (n) std::memcpy(p, v.data(), n);
  }
  ~Blob() { ::operator delete (p, std::align_val_t{16}); }
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;
  uint8_t* p;
  size_t n;
};

// Loads a file's bytes (a 16-byte aligned copy); a failed load leaves the
// Model unset.
inline Status load_bytes(const std::vector<uint8_t>& v) {
  const Blob b(v);
  attn::Model m;
  const Status s = attn::Model::load(b.p, b.n, &m);
  if (s != Status::kOk) CHECK_FALSE(m.loaded());  // nothing set on failure
  return s;
}

// ---- a model file's weights ---------------------------------------------------------

inline Status weights_of(const attn::Model& m, attn::LayerWeightsF32* l, int32_t n,
                         attn::TransformerWeightsF32* w) {
  return m.transformer_weights_f32(l, n, w);
}
inline Status weights_of(const attn::Model& m, attn::LayerWeightsS8* l, int32_t n,
                         attn::TransformerWeightsS8* w) {
  return m.transformer_weights_s8(l, n, w);
}
inline Status weights_of(const attn::Model& m, attn::LayerWeightsS16* l, int32_t n,
                         attn::TransformerWeightsS16* w) {
  return m.transformer_weights_s16(l, n, w);
}

// The config of a loaded model file and its weights of type W
// (TransformerWeightsF32 / S8 / S16) over their own layer table.
template <class W>
struct ModelWeights {
  explicit ModelWeights(const attn::Model& m) {
    REQUIRE(m.transformer_config(&config) == Status::kOk);
    layers.resize(static_cast<size_t>(config.num_layers));
    REQUIRE(weights_of(m, layers.data(), config.num_layers, &w) == Status::kOk);
  }
  ModelWeights(const ModelWeights&) = delete;
  ModelWeights& operator=(const ModelWeights&) = delete;
  TransformerConfig config;
  std::vector<std::remove_const_t<std::remove_pointer_t<decltype(W::layers)>>> layers;
  W w;
};

inline attn::Model load_model(const Blob& b) {
  attn::Model m;
  REQUIRE(attn::Model::load(b.p, b.n, &m) == Status::kOk);
  return m;
}

// A model file's bytes loaded (from an aligned copy it keeps) with its weights of type W.
template <class W>
struct LoadedModel {
  explicit LoadedModel(const std::vector<uint8_t>& file)
      : blob(file), model(load_model(blob)), weights(model) {}
  Blob blob;
  attn::Model model;
  ModelWeights<W> weights;
};

// Patch / read a T at byte `at` of a file (the tests' mutations).
template <class T>
void poke(std::vector<uint8_t>& f, size_t at, T v) {
  std::memcpy(f.data() + at, &v, sizeof v);
}
template <class T>
T peek(const std::vector<uint8_t>& f, size_t at) {
  T v;
  std::memcpy(&v, f.data() + at, sizeof v);
  return v;
}

// Arena storage, 16-byte aligned.
struct Buffer {
  explicit Buffer(size_t n) : raw(n + 16) {
    const auto mis = reinterpret_cast<uintptr_t>(raw.data()) % 16;
    data = raw.data() + (16 - mis) % 16;
  }
  std::vector<uint8_t> raw;
  uint8_t* data;
};

// ---- configs and random float models ----------------------------------------------

// The sizes every model here has, in one of TransformerConfig's presets.
inline TransformerConfig sized(TransformerConfig (*family)(int32_t, int32_t, int32_t, int32_t, int32_t,
                                                           int32_t)) {
  return family(/*vocab_size=*/48, /*embed_dim=*/16, /*num_layers=*/2, /*num_heads=*/4, /*ffn_dim=*/24,
                /*max_positions=*/16);
}
inline TransformerConfig base() { return sized(TransformerConfig::sized); }

// BERT-like: post-norm LayerNorm with biases, GELU, learned positions, token
// types, embedding norm, biases everywhere, no head.
inline TransformerConfig bert() { return sized(TransformerConfig::encoder); }

// Llama-like: pre-norm RMSNorm, SiLU gate, GQA, RoPE, no biases, final norm, causal.
inline TransformerConfig llama(LmHead head) {
  return random_model::llama_like(sized(TransformerConfig::decoder), head);
}

// GPT-like without a final norm: the head reads the residual through head_in;
// pre-norm LayerNorm, gelu_tanh, learned positions, untied head; one layer.
inline TransformerConfig gpt_head_in() {
  TransformerConfig c = random_model::gpt_like(base());
  c.num_layers = 1;
  return c;
}

struct Case {
  const char* name;
  TransformerConfig c;
};
inline std::vector<Case> cases() {
  return {{"bert", bert()},
          {"llama_tied", llama(LmHead::kTied)},
          {"llama_untied", llama(LmHead::kUntied)},
          {"gpt_head_in", gpt_head_in()}};
}

using random_model::normal;
using random_model::random_weights;
using random_model::sequences;

// The f32 model file of `c` (with a user tensor, a classifier, after the model).
inline std::vector<uint8_t> f32_file(const TransformerConfig& c, uint32_t seed) {
  tools::ModelSpec s;
  tools::add_transformer_f32(s, c, false, random_weights(c, seed));
  tools::TensorSpec user;
  user.name = "classifier.weight";
  user.dims = {3, uint32_t(c.embed_dim)};
  std::mt19937 rng(seed + 1);
  user.bytes = tools::f32_bytes(normal(3 * size_t(c.embed_dim), rng, 1.0f));
  s.tensors.push_back(user);
  return tools::write_model(s);
}

// ---- the integer model, in memory (the converter) and from its file --------------------

template <class W>
constexpr DType dtype_of() {
  return std::is_same<W, attn::TransformerWeightsS8>::value ? DType::kS8 : DType::kS16;
}

// The converter's output for the f32 model in `f32` (a loaded f32 model file),
// calibrated on `cal`; its tables live in `storage`.
template <class W>
struct InMemory {
  std::unique_ptr<Buffer> storage;
  W w;
};

template <class W>
InMemory<W> quantize(const attn::Model& f32, const std::vector<std::vector<int32_t>>& cal,
                     const attn::TransformerQuantOptions& options = attn::TransformerQuantOptions()) {
  TransformerConfig c;
  REQUIRE(f32.transformer_config(&c) == Status::kOk);
  static std::vector<attn::LayerWeightsF32> layers;  // the f32 views outlive nothing the result keeps
  layers.assign(size_t(c.num_layers), attn::LayerWeightsF32());
  attn::TransformerWeightsF32 wf;
  REQUIRE(f32.transformer_weights_f32(layers.data(), c.num_layers, &wf) == Status::kOk);
  std::vector<int32_t> tokens, lengths;
  for (const auto& s : cal) {
    tokens.insert(tokens.end(), s.begin(), s.end());
    lengths.push_back(int32_t(s.size()));
  }
  attn::TransformerCalibration tc;
  tc.tokens = tokens.data();
  tc.lengths = lengths.data();
  tc.count = int32_t(lengths.size());
  constexpr DType dt = dtype_of<W>();
  size_t sb = 0, xb = 0;
  REQUIRE(attn::quantize_transformer_storage_bytes(c, dt, &sb) == Status::kOk);
  REQUIRE(attn::quantize_transformer_scratch_bytes(c, dt, int32_t(cal[0].size()), &xb, options) ==
          Status::kOk);
  InMemory<W> q;
  q.storage = std::make_unique<Buffer>(sb);
  Buffer scratch(xb);
  attn::Arena st, sc;
  REQUIRE(st.init(q.storage->data, sb) == Status::kOk);
  REQUIRE(sc.init(scratch.data, xb) == Status::kOk);
  if constexpr (dt == DType::kS8) {
    REQUIRE(attn::quantize_transformer_s8(c, wf, tc, st, sc, &q.w, nullptr, options) == Status::kOk);
  } else {
    REQUIRE(attn::quantize_transformer_s16(c, wf, tc, st, sc, &q.w, nullptr, options) == Status::kOk);
  }
  return q;
}

template <class W>
std::vector<uint8_t> fixed_file(const TransformerConfig& c, const W& w) {
  tools::ModelSpec s;
  tools::add_transformer_fixed(s, c, false, w);
  return tools::write_model(s);
}

inline Status forward(const attn::TransformerPlan& p, const attn::TransformerWeightsS8& w, const int32_t* t,
                      int32_t n, int32_t* out, attn::Arena& a) {
  return attn::transformer_forward_s8(p, w, t, n, attn::OutputRows::kAll, out, a);
}
inline Status forward(const attn::TransformerPlan& p, const attn::TransformerWeightsS16& w, const int32_t* t,
                      int32_t n, int32_t* out, attn::Arena& a) {
  return attn::transformer_forward_s16(p, w, t, n, attn::OutputRows::kAll, out, a);
}

template <class W>
std::vector<int32_t> run(const TransformerConfig& c, const W& w, const std::vector<int32_t>& tokens) {
  attn::TransformerPlan plan;
  const int32_t n = int32_t(tokens.size());
  REQUIRE(attn::plan_transformer_fixed(c, dtype_of<W>(), n, 0, &plan) == Status::kOk);
  Buffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<int32_t> out(size_t(n) * size_t(c.output_dim()), 0x5A5A5A5A);
  REQUIRE(forward(plan, w, tokens.data(), n, out.data(), arena) == Status::kOk);
  return out;
}

inline uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

inline bool inside(const void* p, const Blob& b) {
  const auto* q = static_cast<const uint8_t*>(p);
  return q >= b.p && q < b.p + b.n;
}
}  // namespace int_model
