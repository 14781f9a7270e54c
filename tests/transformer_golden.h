// tests/transformer_golden.h: reader for the golden whole-model cases in
// tests/data/golden_models (writer and layout: tools/fixtures/gen_transformer_golden.py).
//
//   std::vector<std::string> dirs = model_golden::list_cases();
//   model_golden::Case c;
//   std::string error;
//   if (!model_golden::load(dirs[0], &c, &error)) { ... error says why ... }
//   attn::TransformerWeightsF32 w = c.weights();   // views into c, valid while c lives
//
// Header-only, standard library plus the attn public headers. A case is one
// directory: config.txt (`key value` lines), tokens.npy (int32 [n]),
// expected.npy (float64 [n, output_dim]) and one float32 .npy per tensor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "attn/transformer.h"

namespace model_golden {

inline std::string default_dir() { return std::string(ATTN_TEST_DATA_DIR) + "/golden_models"; }

// The case directories, sorted.
inline std::vector<std::string> list_cases(const std::string& dir = default_dir()) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory() && std::filesystem::exists(e.path() / "config.txt"))
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A little-endian .npy (version 1 or 2, C order) of dtype `descr` ("<f4",
// "<f8", "<i4"): its shape and its bytes. False with a message otherwise.
inline bool read_npy(const std::string& path, const char* descr, std::vector<int64_t>* shape,
                     std::vector<unsigned char>* data, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  const std::vector<unsigned char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) return *error = path + ": not .npy", false;
  const size_t len = b[6] == 1 ? size_t{b[8]} | size_t{b[9]} << 8
                               : size_t{b[8]} | size_t{b[9]} << 8 | size_t{b[10]} << 16 | size_t{b[11]} << 24;
  const size_t start = b[6] == 1 ? 10 : 12;
  if (start + len > b.size()) return *error = path + ": truncated header", false;
  const std::string header(b.begin() + static_cast<ptrdiff_t>(start),
                           b.begin() + static_cast<ptrdiff_t>(start + len));
  if (header.find(std::string("'descr': '") + descr + "'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos) {
    return *error = path + ": not " + descr + " in C order: " + header, false;
  }
  const size_t open = header.find("'shape': (");
  const size_t close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return *error = path + ": no shape", false;
  shape->clear();
  std::stringstream dims(header.substr(open + 10, close - open - 10));
  int64_t count = 1;
  for (std::string d; std::getline(dims, d, ',');) {
    if (d.find_first_not_of(' ') == std::string::npos) continue;
    shape->push_back(std::stoll(d));
    count *= shape->back();
  }
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(descr[2] - '0');
  if (b.size() - start - len != bytes) return *error = path + ": data size disagrees with the shape", false;
  data->assign(b.begin() + static_cast<ptrdiff_t>(start + len), b.end());
  return true;
}

template <class T>
std::vector<T> as_vector(const std::vector<unsigned char>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

struct Case {
  std::string name;
  attn::TransformerConfig config;
  int32_t n = 0;
  std::vector<int32_t> tokens;                     // [n]
  std::vector<double> expected;                    // [n, output_dim]
  std::map<std::string, std::vector<float>> t;     // tensors by file name (no .npy)
  std::vector<attn::LayerWeightsF32> layer_views;  // filled by weights()

  const float* get(const std::string& key) const {
    const auto it = t.find(key);
    return it == t.end() ? nullptr : it->second.data();
  }
  // Views over the tensors; null where the case has none (as the config says).
  attn::TransformerWeightsF32 weights() {
    attn::TransformerWeightsF32 w;
    w.token_embedding = get("token_embedding");
    w.position_embedding = get("position_embedding");
    w.type_embedding = get("type_embedding");
    w.embedding_norm = {get("embedding_norm_weight"), get("embedding_norm_bias")};
    w.final_norm = {get("final_norm_weight"), get("final_norm_bias")};
    w.lm_head = get("lm_head");
    layer_views.assign(static_cast<size_t>(config.num_layers), attn::LayerWeightsF32{});
    for (int32_t i = 0; i < config.num_layers; ++i) {
      const std::string p = "block" + std::to_string(i) + "_";
      attn::LayerWeightsF32& l = layer_views[static_cast<size_t>(i)];
      l.attention.wq = get(p + "wq"), l.attention.wk = get(p + "wk"), l.attention.wv = get(p + "wv");
      l.attention.wo = get(p + "wo");
      l.attention.bq = get(p + "bq"), l.attention.bk = get(p + "bk"), l.attention.bv = get(p + "bv");
      l.attention.bo = get(p + "bo");
      l.norm1 = {get(p + "norm1_weight"), get(p + "norm1_bias")};
      l.norm2 = {get(p + "norm2_weight"), get(p + "norm2_bias")};
      l.ffn.w1 = get(p + "ffn_w1"), l.ffn.b1 = get(p + "ffn_b1"), l.ffn.w2 = get(p + "ffn_w2");
      l.ffn.b2 = get(p + "ffn_b2"), l.ffn.w3 = get(p + "ffn_w3"), l.ffn.b3 = get(p + "ffn_b3");
    }
    w.layers = layer_views.data();
    return w;
  }
};

// Every field of config.txt into c->config (unknown keys are an error).
inline bool parse_config(const std::string& text, Case* c, std::string* error) {
  attn::TransformerConfig& k = c->config;
  std::istringstream in(text);
  for (std::string key, value; in >> key >> value;) {
    const auto i = [&] { return static_cast<int32_t>(std::stol(value)); };
    const auto b = [&] { return value == "1"; };
    if (key == "vocab_size")
      k.vocab_size = i();
    else if (key == "embed_dim")
      k.embed_dim = i();
    else if (key == "num_layers")
      k.num_layers = i();
    else if (key == "num_heads")
      k.num_heads = i();
    else if (key == "num_kv_heads")
      k.num_kv_heads = i();
    else if (key == "head_dim")
      k.head_dim = i();
    else if (key == "ffn_dim")
      k.ffn_dim = i();
    else if (key == "max_positions")
      k.max_positions = i();
    else if (key == "type_vocab_size")
      k.type_vocab_size = i();
    else if (key == "norm")
      k.norm = value == "rms" ? attn::NormKind::kRmsNorm : attn::NormKind::kLayerNorm;
    else if (key == "norm_eps")
      k.norm_eps = std::stof(value);
    else if (key == "activation")
      k.activation = value == "gelu"        ? attn::Activation::kGelu
                     : value == "gelu_tanh" ? attn::Activation::kGeluTanh
                     : value == "relu"      ? attn::Activation::kRelu
                                            : attn::Activation::kSilu;
    else if (key == "head")
      k.head = value == "tied"     ? attn::LmHead::kTied
               : value == "untied" ? attn::LmHead::kUntied
                                   : attn::LmHead::kNone;
    else if (key == "rope_base")
      k.rope_base = std::stof(value);
    else if (key == "pre_norm")
      k.pre_norm = b();
    else if (key == "gated_ffn")
      k.gated_ffn = b();
    else if (key == "attention_bias")
      k.attention_bias = b();
    else if (key == "ffn_bias")
      k.ffn_bias = b();
    else if (key == "norm_bias")
      k.norm_bias = b();
    else if (key == "learned_positions")
      k.learned_positions = b();
    else if (key == "embedding_norm")
      k.embedding_norm = b();
    else if (key == "final_norm")
      k.final_norm = b();
    else if (key == "causal")
      k.causal = b();
    else if (key == "n")
      c->n = i();
    else
      return *error = "unknown config key " + key, false;
  }
  return true;
}

inline bool load(const std::string& dir, Case* c, std::string* error) {
  *c = Case();
  c->name = std::filesystem::path(dir).filename().string();
  std::ifstream cf(dir + "/config.txt");
  const std::string text((std::istreambuf_iterator<char>(cf)), std::istreambuf_iterator<char>());
  if (!parse_config(text, c, error)) return false;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;
  if (!read_npy(dir + "/tokens.npy", "<i4", &shape, &data, error)) return false;
  c->tokens = as_vector<int32_t>(data);
  if (!read_npy(dir + "/expected.npy", "<f8", &shape, &data, error)) return false;
  c->expected = as_vector<double>(data);
  if (static_cast<int32_t>(c->tokens.size()) != c->n ||
      c->expected.size() != static_cast<size_t>(c->n) * static_cast<size_t>(c->config.output_dim())) {
    return *error = dir + ": tokens or expected disagree with n and the config", false;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    if (e.path().extension() != ".npy" || file == "tokens.npy" || file == "expected.npy") continue;
    if (!read_npy(e.path().string(), "<f4", &shape, &data, error)) return false;
    c->t[e.path().stem().string()] = as_vector<float>(data);
  }
  return true;
}

}  // namespace model_golden
