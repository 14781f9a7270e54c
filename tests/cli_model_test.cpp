// cli_model_test.cpp: `attn import` of whole models and `attn info` of model
// files. The test writes small checkpoints itself (Hugging Face BERT and
// Llama safetensors with their config.json, llama2.c .bin files), imports
// them and checks that every weight landed in its place, that llama2.c's
// interleaved RoPE becomes attn's half-split one, and that every bad input
// fails with a message naming the problem and leaves no file behind.
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attn/model.h"
#include "hf_checkpoint.h"
#include "host_helpers.h"
#include "int_model_helpers.h"

namespace {

using cli::quote;
using cli::TempDir;

using hf::StTensor;
using hf::write_safetensors;

size_t count(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

// A checkpoint under construction: name -> tensor.
struct Checkpoint {
  std::vector<StTensor> tensors;
  uint32_t seed = 1;
  const std::vector<float>& add(const std::string& name, std::vector<int64_t> shape) {
    tensors.push_back({name, shape, uniform_values(count(shape), seed++)});
    return tensors.back().values;
  }
  const std::vector<float>& operator[](const std::string& name) const {
    for (const StTensor& t : tensors)
      if (t.name == name) return t.values;
    FAIL("no tensor " << name);
    return tensors[0].values;
  }
  void remove(const std::string& name) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].name == name) tensors.erase(tensors.begin() + static_cast<std::ptrdiff_t>(i));
  }
};

// A loaded .attn file with its f32 weights.
struct Loaded : int_model::LoadedModel<attn::TransformerWeightsF32> {
  explicit Loaded(const std::string& path)
      : LoadedModel(cli::slurp(path)), config(weights.config), layers(weights.layers), w(weights.w) {}
  const attn::TransformerConfig& config;
  const std::vector<attn::LayerWeightsF32>& layers;
  const attn::TransformerWeightsF32& w;
};

void same(const float* got, const std::vector<float>& want, const std::string& what) {
  INFO(what);
  REQUIRE(got != nullptr);
  CHECK(std::memcmp(got, want.data(), want.size() * sizeof(float)) == 0);
}

// BERT, E=8 H=2 F=12, 2 layers, vocab 20, 16 positions, 2 types, under `prefix`.
Checkpoint bert_checkpoint(const std::string& prefix) {
  Checkpoint c;
  const std::string e = prefix + "embeddings.";
  c.add(e + "word_embeddings.weight", {20, 8});
  c.add(e + "position_embeddings.weight", {16, 8});
  c.add(e + "token_type_embeddings.weight", {2, 8});
  c.add(e + "LayerNorm.weight", {8});
  c.add(e + "LayerNorm.bias", {8});
  for (int l = 0; l < 2; ++l) {
    const std::string p = prefix + "encoder.layer." + std::to_string(l) + ".";
    for (const char* n : {"query", "key", "value"}) {
      c.add(p + "attention.self." + n + ".weight", {8, 8});
      c.add(p + "attention.self." + n + ".bias", {8});
    }
    c.add(p + "attention.output.dense.weight", {8, 8});
    c.add(p + "attention.output.dense.bias", {8});
    c.add(p + "attention.output.LayerNorm.weight", {8});
    c.add(p + "attention.output.LayerNorm.bias", {8});
    c.add(p + "intermediate.dense.weight", {12, 8});
    c.add(p + "intermediate.dense.bias", {12});
    c.add(p + "output.dense.weight", {8, 12});
    c.add(p + "output.dense.bias", {8});
    c.add(p + "output.LayerNorm.weight", {8});
    c.add(p + "output.LayerNorm.bias", {8});
  }
  return c;
}

std::string bert_config(const std::string& act = "gelu_new", int layers = 2, int ffn = 12) {
  return "{\"architectures\": [\"BertForSequenceClassification\"], \"model_type\": \"bert\", "
         "\"hidden_size\": 8, "
         "\"num_hidden_layers\": " +
         std::to_string(layers) +
         ", \"num_attention_heads\": 2, \"intermediate_size\": " + std::to_string(ffn) +
         ", \"hidden_act\": \"" + act +
         "\", \"layer_norm_eps\": 1e-12, \"max_position_embeddings\": 16, \"type_vocab_size\": 2, "
         "\"vocab_size\": 20, \"position_embedding_type\": \"absolute\", \"hidden_dropout_prob\": 0.1}";
}

// Llama, E=8 H=4 G=2 F=12, 2 layers, vocab 32.
Checkpoint llama_checkpoint(bool lm_head) {
  Checkpoint c;
  c.add("model.embed_tokens.weight", {32, 8});
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    c.add(p + "self_attn.q_proj.weight", {8, 8});
    c.add(p + "self_attn.k_proj.weight", {4, 8});
    c.add(p + "self_attn.v_proj.weight", {4, 8});
    c.add(p + "self_attn.o_proj.weight", {8, 8});
    c.add(p + "mlp.gate_proj.weight", {12, 8});
    c.add(p + "mlp.up_proj.weight", {12, 8});
    c.add(p + "mlp.down_proj.weight", {8, 12});
    c.add(p + "input_layernorm.weight", {8});
    c.add(p + "post_attention_layernorm.weight", {8});
  }
  c.add("model.norm.weight", {8});
  if (lm_head) c.add("lm_head.weight", {32, 8});
  return c;
}

std::string llama_config(bool tied, const std::string& extra = "") {
  return "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": 8, "
         "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
         "\"intermediate_size\": 12, \"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-06, \"rope_theta\": "
         "500000.0, "
         "\"max_position_embeddings\": 64, \"vocab_size\": 32, \"rope_scaling\": null, "
         "\"tie_word_embeddings\": " +
         std::string(tied ? "true" : "false") + extra + "}";
}

// llama2.c's run.c layout, with the weights of each kind for every layer in turn.
struct Llama2c {
  int32_t dim = 16, hidden = 12, layers = 2, heads = 4, kv = 2, vocab = 40, seq = 16;  // head size 4
  bool shared = true;
  std::vector<float> emb, final_norm, wcls;
  std::vector<std::vector<float>> rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3;
  Llama2c(int32_t v, bool tied) : vocab(v), shared(tied) {
    const int32_t hs = dim / heads, kvd = kv * hs;
    uint32_t seed = 100;
    const auto r = [&](size_t n) { return uniform_values(n, seed++); };
    emb = r(static_cast<size_t>(vocab * dim));
    for (int l = 0; l < layers; ++l) {
      rms_att.push_back(r(dim));
      wq.push_back(r(static_cast<size_t>(dim * dim)));
      wk.push_back(r(static_cast<size_t>(kvd * dim)));
      wv.push_back(r(static_cast<size_t>(kvd * dim)));
      wo.push_back(r(static_cast<size_t>(dim * dim)));
      rms_ffn.push_back(r(dim));
      w1.push_back(r(static_cast<size_t>(hidden * dim)));
      w2.push_back(r(static_cast<size_t>(dim * hidden)));
      w3.push_back(r(static_cast<size_t>(hidden * dim)));
    }
    final_norm = r(dim);
    if (!shared) wcls = r(static_cast<size_t>(vocab * dim));
  }
  std::vector<uint8_t> bytes() const {
    std::vector<float> f;
    const auto put = [&](const std::vector<float>& v) { f.insert(f.end(), v.begin(), v.end()); };
    put(emb);
    for (const auto* kind : {&rms_att, &wq, &wk, &wv, &wo, &rms_ffn, &w1, &w2, &w3})
      for (const auto& v : *kind) put(v);
    put(final_norm);
    f.resize(f.size() + static_cast<size_t>(seq * (dim / heads)), 0.5f);  // freq_cis_real, _imag
    if (!shared) put(wcls);
    const int32_t hdr[7] = {dim, hidden, layers, heads, kv, shared ? vocab : -vocab, seq};
    std::vector<uint8_t> out(sizeof hdr + f.size() * 4);
    std::memcpy(out.data(), hdr, sizeof hdr);
    std::memcpy(out.data() + sizeof hdr, f.data(), f.size() * 4);
    return out;
  }
};

// Every field of an imported config is the one expected.
void check_config(const attn::TransformerConfig& c, const attn::TransformerConfig& want) {
  CHECK(c.vocab_size == want.vocab_size);
  CHECK(c.embed_dim == want.embed_dim);
  CHECK(c.num_layers == want.num_layers);
  CHECK(c.num_heads == want.num_heads);
  CHECK(c.num_kv_heads == want.num_kv_heads);
  CHECK(c.head_dim == want.head_dim);
  CHECK(c.ffn_dim == want.ffn_dim);
  CHECK(c.max_positions == want.max_positions);
  CHECK(c.type_vocab_size == want.type_vocab_size);
  CHECK(c.norm == want.norm);
  CHECK(c.norm_eps == want.norm_eps);
  CHECK(c.activation == want.activation);
  CHECK(c.head == want.head);
  CHECK(c.rope_base == want.rope_base);
  CHECK(c.pre_norm == want.pre_norm);
  CHECK(c.gated_ffn == want.gated_ffn);
  CHECK(c.attention_bias == want.attention_bias);
  CHECK(c.ffn_bias == want.ffn_bias);
  CHECK(c.norm_bias == want.norm_bias);
  CHECK(c.learned_positions == want.learned_positions);
  CHECK(c.embedding_norm == want.embedding_norm);
  CHECK(c.final_norm == want.final_norm);
  CHECK(c.causal == want.causal);
}

// Writes ck as tmp/model.safetensors and `config` as tmp/config.json and
// imports them with `attn import`: the path of the .attn written.
std::string import_checkpoint(const TempDir& tmp, const Checkpoint& ck, const std::string& config) {
  write_safetensors(tmp / "model.safetensors", ck.tensors);
  cli::spit(tmp / "config.json", config);
  cli::run_ok("import " + quote(tmp / "model.safetensors") + " --config " + quote(tmp / "config.json") +
                  " -o " + quote(tmp / "m.attn"),
              tmp);
  return tmp / "m.attn";
}

// Row j of head h after the import is llama2.c's row 2j (j < hd/2) or 2(j - hd/2) + 1.
std::vector<float> half_split_rows(const std::vector<float>& w, int heads, int hd, int cols) {
  std::vector<float> out(w.size());
  for (int h = 0; h < heads; ++h)
    for (int j = 0; j < hd; ++j) {
      const int src = j < hd / 2 ? 2 * j : 2 * (j - hd / 2) + 1;
      for (int c = 0; c < cols; ++c)
        out[static_cast<size_t>((h * hd + j) * cols + c)] = w[static_cast<size_t>((h * hd + src) * cols + c)];
    }
  return out;
}

// One head's q.k score at positions (pq, pk): llama2.c rotates interleaved
// pairs (2i, 2i+1) (run.c), attn / HF pairs (i, i + hd/2) (rotate_half).
double rope_score(const std::vector<float>& wq, const std::vector<float>& wk, int qh, int kh, int hd, int dim,
                  const std::vector<float>& x, int pq, int pk, bool interleaved) {
  const auto proj = [&](const std::vector<float>& w, int head) {
    std::vector<double> v(static_cast<size_t>(hd));
    for (int j = 0; j < hd; ++j)
      for (int c = 0; c < dim; ++c)
        v[static_cast<size_t>(j)] +=
            double{w[static_cast<size_t>((head * hd + j) * dim + c)]} * x[static_cast<size_t>(c)];
    return v;
  };
  const auto rotate = [&](std::vector<double> v, int pos) {
    for (int i = 0; i < hd / 2; ++i) {
      const double freq = 1.0 / std::pow(10000.0, 2.0 * i / hd), a = pos * freq;
      const size_t u = static_cast<size_t>(interleaved ? 2 * i : i);
      const size_t w = static_cast<size_t>(interleaved ? 2 * i + 1 : i + hd / 2);
      const double v0 = v[u], v1 = v[w];
      v[u] = v0 * std::cos(a) - v1 * std::sin(a);
      v[w] = v0 * std::sin(a) + v1 * std::cos(a);
    }
    return v;
  };
  const std::vector<double> q = rotate(proj(wq, qh), pq), k = rotate(proj(wk, kh), pk);
  double s = 0;
  for (int j = 0; j < hd; ++j) s += q[static_cast<size_t>(j)] * k[static_cast<size_t>(j)];
  return s;
}

}  // namespace

TEST_CASE("attn import: a Hugging Face BERT (under bert.) with its config", "[cli][model_import]") {
  TempDir tmp;
  Checkpoint ck = bert_checkpoint("bert.");
  ck.add("classifier.weight", {3, 8});
  ck.add("classifier.bias", {3});
  ck.add("bert.pooler.dense.weight", {8, 8});
  ck.tensors.push_back({"bert.embeddings.position_ids", {1, 16}, std::vector<float>(16, 1.0f), "I64"});
  Loaded m(import_checkpoint(tmp, ck, bert_config()));
  attn::TransformerConfig want = attn::TransformerConfig::encoder(
      /*vocab_size=*/20, /*embed_dim=*/8, /*num_layers=*/2, /*num_heads=*/2, /*ffn_dim=*/12,
      /*max_positions=*/16);
  want.head_dim = 4;
  want.activation = attn::Activation::kGeluTanh;
  check_config(m.config, want);
  same(m.w.token_embedding, ck["bert.embeddings.word_embeddings.weight"], "word embeddings");
  same(m.w.position_embedding, ck["bert.embeddings.position_embeddings.weight"], "positions");
  same(m.w.type_embedding, ck["bert.embeddings.token_type_embeddings.weight"], "types");
  same(m.w.embedding_norm.weight, ck["bert.embeddings.LayerNorm.weight"], "embedding norm");
  same(m.w.embedding_norm.bias, ck["bert.embeddings.LayerNorm.bias"], "embedding norm bias");
  CHECK(m.w.final_norm.weight == nullptr);
  CHECK(m.w.lm_head == nullptr);
  for (int l = 0; l < 2; ++l) {
    const std::string p = "bert.encoder.layer." + std::to_string(l) + ".";
    const attn::LayerWeightsF32& L = m.layers[static_cast<size_t>(l)];
    same(L.attention.wq, ck[p + "attention.self.query.weight"], p + "query");
    same(L.attention.wk, ck[p + "attention.self.key.weight"], p + "key");
    same(L.attention.wv, ck[p + "attention.self.value.weight"], p + "value");
    same(L.attention.wo, ck[p + "attention.output.dense.weight"], p + "output");
    same(L.attention.bq, ck[p + "attention.self.query.bias"], p + "query bias");
    same(L.attention.bk, ck[p + "attention.self.key.bias"], p + "key bias");
    same(L.attention.bv, ck[p + "attention.self.value.bias"], p + "value bias");
    same(L.attention.bo, ck[p + "attention.output.dense.bias"], p + "output bias");
    same(L.norm1.weight, ck[p + "attention.output.LayerNorm.weight"], p + "norm1");
    same(L.norm1.bias, ck[p + "attention.output.LayerNorm.bias"], p + "norm1 bias");
    same(L.norm2.weight, ck[p + "output.LayerNorm.weight"], p + "norm2");
    same(L.norm2.bias, ck[p + "output.LayerNorm.bias"], p + "norm2 bias");
    same(L.ffn.w1, ck[p + "intermediate.dense.weight"], p + "w1");
    same(L.ffn.b1, ck[p + "intermediate.dense.bias"], p + "b1");
    same(L.ffn.w2, ck[p + "output.dense.weight"], p + "w2");
    same(L.ffn.b2, ck[p + "output.dense.bias"], p + "b2");
    CHECK(L.ffn.w3 == nullptr);
  }
  // The classifier and pooler are user tensors under their own names; the integer position_ids are dropped.
  for (const char* n : {"classifier.weight", "classifier.bias", "bert.pooler.dense.weight"}) {
    attn::TensorView t;
    REQUIRE(m.model.find_tensor(n, &t) == attn::Status::kOk);
    CHECK(t.role == attn::format::Role::kUser);
    same(static_cast<const float*>(t.data), ck[n], n);
  }
  attn::TensorView t;
  CHECK(m.model.find_tensor("bert.embeddings.position_ids", &t) == attn::Status::kNotFound);

  // `attn info` prints the model.
  const cli::Result info = cli::run_ok("info " + quote(tmp / "m.attn"), tmp);
  CHECK(info.out.find("bidirectional encoder transformer, f32") != std::string::npos);
  CHECK(info.out.find("layers=2 E=8 heads=2 kv_heads=2 head_dim=4 ffn_dim=12") != std::string::npos);
  CHECK(info.out.find("vocab=20 max_positions=16 type_vocab=2") != std::string::npos);
  CHECK(info.out.find("post-norm, norm LayerNorm eps=1e-12 with bias, activation gelu_tanh") !=
        std::string::npos);
  CHECK(info.out.find("head none") != std::string::npos);
  CHECK(info.out.find(" token_embedding ") != std::string::npos);  // the role column
}

TEST_CASE("attn import: a BertModel without prefix, told by its keys", "[cli][model_import]") {
  TempDir tmp;
  const Checkpoint ck = bert_checkpoint("");
  // No model_type, no architectures: the keys say BERT.
  Loaded m(import_checkpoint(
      tmp, ck,
      "{\"hidden_size\": 8, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"intermediate_size\": 12, "
      "\"hidden_act\": \"relu\", \"layer_norm_eps\": 1e-5, \"max_position_embeddings\": 16, "
      "\"type_vocab_size\": 2, \"vocab_size\": 20}"));
  CHECK(m.config.activation == attn::Activation::kRelu);
  CHECK(m.config.norm_eps == 1e-5f);
  same(m.layers[1].ffn.w2, ck["encoder.layer.1.output.dense.weight"], "w2");
  CHECK(m.model.tensor_count() == 2 * 16 + 5);  // 8 attention, 4 norm, 4 FFN tensors a layer; no user tensors
}

TEST_CASE("attn import: a Hugging Face Llama, untied and tied", "[cli][model_import]") {
  for (const bool tied : {false, true}) {
    INFO("tied " << tied);
    TempDir tmp;
    const Checkpoint ck = llama_checkpoint(!tied);
    Loaded m(import_checkpoint(tmp, ck, llama_config(tied)));
    attn::TransformerConfig want = attn::TransformerConfig::decoder(
        /*vocab_size=*/32, /*embed_dim=*/8, /*num_layers=*/2, /*num_heads=*/4, /*ffn_dim=*/12,
        /*max_positions=*/64);
    want.num_kv_heads = 2;
    want.head_dim = 2;
    want.norm_eps = 1e-6f;
    want.rope_base = 500000.0f;
    want.head = tied ? attn::LmHead::kTied : attn::LmHead::kUntied;
    check_config(m.config, want);  // also: no learned positions, no embedding norm, no token types
    same(m.w.token_embedding, ck["model.embed_tokens.weight"], "embed_tokens");
    same(m.w.final_norm.weight, ck["model.norm.weight"], "norm");
    if (tied) {
      CHECK(m.w.lm_head == nullptr);
    } else {
      same(m.w.lm_head, ck["lm_head.weight"], "lm_head");
    }
    for (int l = 0; l < 2; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      const attn::LayerWeightsF32& L = m.layers[static_cast<size_t>(l)];
      same(L.attention.wq, ck[p + "self_attn.q_proj.weight"], p + "q");  // HF already pairs (i, i + hd/2)
      same(L.attention.wk, ck[p + "self_attn.k_proj.weight"], p + "k");
      same(L.attention.wv, ck[p + "self_attn.v_proj.weight"], p + "v");
      same(L.attention.wo, ck[p + "self_attn.o_proj.weight"], p + "o");
      CHECK(L.attention.bq == nullptr);
      same(L.norm1.weight, ck[p + "input_layernorm.weight"], p + "input_layernorm");
      same(L.norm2.weight, ck[p + "post_attention_layernorm.weight"], p + "post_attention_layernorm");
      same(L.ffn.w1, ck[p + "mlp.gate_proj.weight"], p + "gate");
      same(L.ffn.w3, ck[p + "mlp.up_proj.weight"], p + "up");
      same(L.ffn.w2, ck[p + "mlp.down_proj.weight"], p + "down");
      CHECK(L.ffn.b1 == nullptr);
    }
    const cli::Result info = cli::run_ok("info " + quote(tmp / "m.attn"), tmp);
    CHECK(info.out.find("causal decoder transformer, f32") != std::string::npos);
    CHECK(info.out.find("pre-norm, norm RMSNorm eps=1e-06, activation silu (gated FFN)") !=
          std::string::npos);
    CHECK(info.out.find(tied ? "head tied" : "head untied") != std::string::npos);
  }
}

TEST_CASE("attn import: llama2.c checkpoints, RoPE pairs permuted to attn's", "[cli][model_import]") {
  for (const bool tied : {true, false}) {
    INFO("tied " << tied);
    TempDir tmp;
    const Llama2c ck(tied ? 260 : 40, tied);
    cli::spit(tmp / "model.bin", ck.bytes());
    const std::string byte_vocab = tied ? " --byte-vocab" : "";
    cli::run_ok("import " + quote(tmp / "model.bin") + byte_vocab + " -o " + quote(tmp / "m.attn"), tmp);
    Loaded m(tmp / "m.attn");
    CHECK(m.model.byte_vocab() == tied);
    // --byte-vocab also stores the tokenizer: each of ids 0..255 its byte, no special tokens; ids
    // 256..259 have no text. Without it the file has none.
    attn::Tokenizer tok;
    const attn::Status ts = m.model.tokenizer(&tok);
    CHECK(ts == (tied ? attn::Status::kOk : attn::Status::kNotFound));
    if (tied && ts == attn::Status::kOk) {
      CHECK(tok.algorithm() == attn::TokenizerAlgorithm::kBytes);
      CHECK(tok.vocab_size() == 256);
      for (uint32_t k = 0; k < static_cast<uint32_t>(attn::SpecialToken::kCount); ++k)
        CHECK(tok.special(static_cast<attn::SpecialToken>(k)) == -1);
      const std::string text = "Copy \xC3\xA9\n\x01\xFF";
      int32_t ids[16];
      size_t n = 0;
      REQUIRE(tok.max_ids(text.size()) <= 16);
      REQUIRE(tok.tokenize_scratch_bytes(text.size()) == 0);
      REQUIRE(tok.encode(text.data(), text.size(), ids, 16, nullptr, &n) == attn::Status::kOk);
      REQUIRE(n == text.size());
      for (size_t i = 0; i < n; ++i) CHECK(ids[i] == static_cast<uint8_t>(text[i]));
    }
    attn::TransformerConfig want = attn::TransformerConfig::decoder(
        /*vocab_size=*/ck.vocab, /*embed_dim=*/16, /*num_layers=*/2, /*num_heads=*/4, /*ffn_dim=*/12,
        /*max_positions=*/16);
    want.num_kv_heads = 2;
    want.head_dim = 4;
    want.head = tied ? attn::LmHead::kTied : attn::LmHead::kUntied;
    check_config(m.config, want);
    same(m.w.token_embedding, ck.emb, "token_embedding_table");
    same(m.w.final_norm.weight, ck.final_norm, "rms_final_weight");
    if (tied) {
      CHECK(m.w.lm_head == nullptr);
    } else {
      same(m.w.lm_head, ck.wcls, "wcls");
    }
    const int hd = 4;  // with 2, the two pairings are the same
    for (size_t l = 0; l < 2; ++l) {
      INFO("layer " << l);
      const attn::LayerWeightsF32& L = m.layers[l];
      same(L.attention.wq, half_split_rows(ck.wq[l], 4, hd, 16), "wq (permuted)");
      same(L.attention.wk, half_split_rows(ck.wk[l], 2, hd, 16), "wk (permuted)");
      same(L.attention.wv, ck.wv[l], "wv");
      same(L.attention.wo, ck.wo[l], "wo");
      same(L.norm1.weight, ck.rms_att[l], "rms_att_weight");
      same(L.norm2.weight, ck.rms_ffn[l], "rms_ffn_weight");
      same(L.ffn.w1, ck.w1[l], "w1");
      same(L.ffn.w2, ck.w2[l], "w2");
      same(L.ffn.w3, ck.w3[l], "w3");
      // What the permutation is for: half-split RoPE on the imported weights
      // gives llama2.c's interleaved-RoPE scores (query head 3 uses K/V head 1).
      const std::vector<float> wq(L.attention.wq, L.attention.wq + 256),
          wk(L.attention.wk, L.attention.wk + 128);
      const std::vector<float> x = uniform_values(16, 7 + static_cast<uint32_t>(l));
      for (const int pq : {0, 3, 15})
        for (const int pk : {0, 2, 9}) {
          const double want = rope_score(ck.wq[l], ck.wk[l], 3, 1, hd, 16, x, pq, pk, true);
          const double got = rope_score(wq, wk, 3, 1, hd, 16, x, pq, pk, false);
          CHECK(std::fabs(got - want) <= 1e-12 * (1 + std::fabs(want)));
        }
    }
  }
}

TEST_CASE("attn import of whole models: every bad input is named, and no file is left",
          "[cli][model_import]") {
  TempDir tmp;
  const auto fails = [&](const std::string& args, const std::vector<std::string>& parts) {
    INFO(args);
    cli::check_error(cli::run(args + " -o " + quote(tmp / "out.attn"), tmp), parts);
    CHECK_FALSE(cli::fs::exists(tmp / "out.attn"));
    CHECK(cli::no_leftovers(tmp,
                            {"bert.safetensors", "config.json", "llama.safetensors", "model.bin", "x.json"}));
  };
  Checkpoint bert = bert_checkpoint("bert.");
  write_safetensors(tmp / "bert.safetensors", bert.tensors);
  const std::string bst = quote(tmp / "bert.safetensors"), cfg = " --config " + quote(tmp / "config.json");
  // config.json that disagrees with the tensors.
  cli::spit(tmp / "config.json", bert_config("gelu_new", 2, 13));
  fails("import " + bst + cfg, {"bert.encoder.layer.0.intermediate.dense.weight", "[12, 8]", "[13, 8]"});
  cli::spit(tmp / "config.json", bert_config("swish"));
  fails("import " + bst + cfg, {"hidden_act", "swish"});
  cli::spit(tmp / "config.json", bert_config("gelu", 1));
  fails("import " + bst + cfg, {"bert.encoder.layer.1."});
  cli::spit(tmp / "config.json", bert_config("gelu", 3));
  fails("import " + bst + cfg, {"missing tensor 'bert.encoder.layer.2.attention.self.query.weight'"});
  cli::spit(tmp / "config.json", "{\"model_type\": \"bert\", \"hidden_size\": 8}");
  fails("import " + bst + cfg, {"num_hidden_layers", "missing"});
  cli::spit(tmp / "config.json", "{\"model_type\": \"t5\"}");
  fails("import " + bst + cfg, {"t5", "not supported"});
  cli::spit(tmp / "config.json", "{\"model_type\": \"gpt2\"}");
  fails("import " + bst + cfg, {"wte.weight"});
  cli::spit(tmp / "config.json", "{\"model_type\": ");
  fails("import " + bst + cfg, {"config.json", "JSON"});
  // A missing key.
  bert.remove("bert.encoder.layer.1.output.dense.bias");
  write_safetensors(tmp / "bert.safetensors", bert.tensors);
  cli::spit(tmp / "config.json", bert_config());
  fails("import " + bst + cfg, {"missing tensor 'bert.encoder.layer.1.output.dense.bias'"});
  // Block-import options do not mix with a whole model; --byte-vocab needs one with 256 tokens.
  fails("import " + bst + cfg + " --heads 2", {"--heads"});
  bert = bert_checkpoint("bert.");
  write_safetensors(tmp / "bert.safetensors", bert.tensors);
  fails("import " + bst + cfg + " --byte-vocab", {"--byte-vocab", "20"});
  fails("import " + bst + " --heads 2 --byte-vocab", {"--byte-vocab"});

  // Llama.
  Checkpoint llama = llama_checkpoint(true);
  write_safetensors(tmp / "llama.safetensors", llama.tensors);
  const std::string lst = quote(tmp / "llama.safetensors");
  cli::spit(tmp / "config.json", llama_config(false, ", \"hidden_act\": \"gelu\""));
  fails("import " + lst + cfg, {"hidden_act", "gelu"});
  cli::spit(tmp / "config.json",
            llama_config(false, ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}"));
  fails("import " + lst + cfg, {"rope_scaling"});
  cli::spit(tmp / "config.json", llama_config(false, ", \"num_key_value_heads\": 4"));
  fails("import " + lst + cfg, {"model.layers.0.self_attn.k_proj.weight", "[4, 8]", "[8, 8]"});
  cli::spit(tmp / "config.json", llama_config(true));  // tied, but the file's lm_head is not the embedding
  fails("import " + lst + cfg, {"lm_head.weight", "tie_word_embeddings"});
  llama.remove("lm_head.weight");
  write_safetensors(tmp / "llama.safetensors", llama.tensors);
  cli::spit(tmp / "config.json", llama_config(false));
  fails("import " + lst + cfg, {"missing tensor 'lm_head.weight'"});

  // llama2.c: truncated, too long, a bad header.
  const std::vector<uint8_t> good = Llama2c(40, false).bytes();
  const std::string bin = quote(tmp / "model.bin");
  for (const size_t cut : {size_t{4}, size_t{100}, good.size() / 2, size_t{27}, size_t{0}}) {
    cli::spit(tmp / "model.bin",
              std::vector<uint8_t>(good.begin(),
                                   good.end() - static_cast<std::ptrdiff_t>(cut == 0 ? good.size() : cut)));
    fails("import " + bin, {"model.bin"});
  }
  std::vector<uint8_t> longer = good;
  longer.resize(good.size() + 4);
  cli::spit(tmp / "model.bin", longer);
  fails("import " + bin, {"model.bin", std::to_string(good.size())});
  std::vector<uint8_t> cut = good;
  cut.resize(good.size() - 4);
  cli::spit(tmp / "model.bin", cut);
  fails("import " + bin, {"truncated"});
  std::vector<uint8_t> bad = good;
  const int32_t three = 3;
  std::memcpy(bad.data() + 12, &three, 4);  // n_heads 3 does not divide dim 8
  cli::spit(tmp / "model.bin", bad);
  fails("import " + bin, {"n_heads 3"});  // does not divide dim 16
  std::memcpy(bad.data() + 12, &(good[12]), 4);
  const int32_t zero = 0;
  std::memcpy(bad.data() + 24, &zero, 4);
  cli::spit(tmp / "model.bin", bad);
  fails("import " + bin, {"seq_len"});
  cli::spit(tmp / "model.bin", good);
  fails("import " + bin + " --byte-vocab", {"--byte-vocab", "40"});
}

TEST_CASE("attn import of GPT-2, Qwen2 and Mistral: what changes is said, what is unsupported is named",
          "[cli][model_import]") {
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  TempDir tmp;
  const auto import = [&](const std::string& name, const std::string& config) {
    return cli::run("import " + quote(dir + name + ".safetensors") + " --config " + quote(config) + " -o " +
                        quote(tmp / "out.attn"),
                    tmp);
  };
  // Qwen2's sliding window of 16 is exact up to 16 tokens: the model keeps 16 positions, and says so.
  const cli::Result q = import("qwen2", dir + "qwen2.config.json");
  REQUIRE(q.code == 0);
  CHECK(q.out.find("max_positions 64 -> 16") != std::string::npos);
  CHECK(q.out.find("qwen2 model") != std::string::npos);
  {
    const Loaded m(tmp / "out.attn");
    CHECK(m.config.max_positions == 16);
    CHECK(m.config.attention_bias);
    for (int32_t l = 0; l < m.config.num_layers; ++l)  // Qwen2's o_proj has no bias: a zero one
      for (int32_t i = 0; i < m.config.embed_dim; ++i) CHECK(m.layers[l].attention.bo[i] == 0.0f);
  }
  // Mistral's window of 4096 is beyond its 64 positions: nothing to say.
  const cli::Result mi = import("mistral", dir + "mistral.config.json");
  REQUIRE(mi.code == 0);
  CHECK(mi.out.find("note") == std::string::npos);
  // GPT-2 settings attn does not compute are named, and leave no file.
  cli::fs::remove(tmp / "out.attn");
  const std::string gpt2 = cli::slurp_text(dir + "gpt2.config.json");
  struct Bad {
    std::string from, to, named;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"\"scale_attn_weights\": true", "\"scale_attn_weights\": false", "scale_attn_weights"},
           {"\"n_inner\": 16", "\"n_inner\": 16, \"scale_attn_by_inverse_layer_idx\": true",
            "scale_attn_by_inverse_layer_idx"},
           {"\"gelu_new\"", "\"swish\"", "swish"},
           {"\"n_inner\": 16", "\"n_inner\": 17", "'transformer.h.0.mlp.c_fc.weight' has shape [8, 16]"}}) {
    std::string c = gpt2;
    const size_t at = c.find(bad.from);
    REQUIRE(at != std::string::npos);
    c.replace(at, bad.from.size(), bad.to);
    cli::spit(tmp / "x.json", c);
    INFO(bad.to);
    cli::check_error(import("gpt2", tmp / "x.json"), {bad.named});
    CHECK_FALSE(cli::fs::exists(tmp / "out.attn"));
  }
  // Qwen2's q/k/v biases are required.
  std::string qc = cli::slurp_text(dir + "llama.config.json");
  const size_t at = qc.find("\"llama\"");
  REQUIRE(at != std::string::npos);
  qc.replace(at, 7, "\"qwen2\"");
  cli::spit(tmp / "x.json", qc);
  cli::check_error(import("llama", tmp / "x.json"),
                   {"missing tensor 'model.layers.0.self_attn.q_proj.bias'"});
  CHECK_FALSE(cli::fs::exists(tmp / "out.attn"));
}

TEST_CASE("attn import of GPT-2 in the hub's layout (no 'transformer.' prefix) keeps GPT2LMHeadModel's head",
          "[cli][model_import]") {
  // The published gpt2 weights: keys 'wte.weight', 'h.0.attn.c_attn.weight', ...
  // and architectures ["GPT2LMHeadModel"]. The same tensors under either
  // layout must give the same file (the tied head included).
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  TempDir tmp;
  std::vector<uint8_t> st = cli::slurp(dir + "gpt2.safetensors");
  uint64_t hl = 0;
  std::memcpy(&hl, st.data(), 8);
  std::string header(st.begin() + 8, st.begin() + 8 + static_cast<ptrdiff_t>(hl));
  size_t renamed = 0;
  for (size_t at = header.find("\"transformer."); at != std::string::npos;
       at = header.find("\"transformer.")) {
    header.erase(at + 1, std::strlen("transformer."));
    ++renamed;
  }
  REQUIRE(renamed > 10);
  header.append((8 - header.size() % 8) % 8, ' ');  // the data stays 8-byte aligned
  const std::vector<uint8_t> data(st.begin() + 8 + static_cast<ptrdiff_t>(hl), st.end());
  const uint64_t nl = header.size();
  std::vector<uint8_t> hub(8);
  std::memcpy(hub.data(), &nl, 8);
  hub.insert(hub.end(), header.begin(), header.end());
  hub.insert(hub.end(), data.begin(), data.end());
  cli::spit(tmp / "hub.safetensors", hub);
  const auto import = [&](const std::string& config) {
    return cli::run("import " + quote(tmp / "hub.safetensors") + " --config " + quote(config) + " -o " +
                        quote(tmp / "out.attn"),
                    tmp);
  };
  const cli::Result r = import(dir + "gpt2.config.json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(cli::slurp(tmp / "out.attn") == cli::slurp(dir + "gpt2.attn"));
  CHECK(r.out.find("without 'transformer.'") != std::string::npos);
  {
    const Loaded m(tmp / "out.attn");
    CHECK(m.config.head == attn::LmHead::kTied);
  }
  // Without architectures, the hub layout is a GPT2Model: the hidden state, no head.
  std::string cfg = cli::slurp_text(dir + "gpt2.config.json");
  const size_t a = cfg.find("\"architectures\"");
  const size_t b = cfg.find("\"model_type\"");
  REQUIRE(a != std::string::npos);
  REQUIRE(b > a);
  cfg.erase(a, b - a);
  cli::spit(tmp / "model.json", cfg);
  cli::run_ok("import " + quote(tmp / "hub.safetensors") + " --config " + quote(tmp / "model.json") + " -o " +
                  quote(tmp / "out.attn"),
              tmp);
  const Loaded m(tmp / "out.attn");
  CHECK(m.config.head == attn::LmHead::kNone);
}

TEST_CASE("attn import of whole models writes the committed fixtures' bytes", "[cli][model_import]") {
  // tests/data/model (tools/fixtures/gen_model_fixtures.py): each line `OUT.attn MODEL.safetensors
  // CONFIG.json [FLAGS]`, OUT.attn as committed (its first writer was a Python one of its own; now attn
  // import).
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  const std::string cases = cli::slurp_text(dir + "cases.txt");
  size_t n = 0, at = 0;
  TempDir tmp;
  while (at < cases.size()) {
    const size_t end = cases.find('\n', at);
    const std::string line = cases.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? cases.size() : end + 1;
    std::vector<std::string> w;
    for (size_t i = 0; i < line.size();) {
      const size_t j = line.find(' ', i);
      w.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
      i = j == std::string::npos ? line.size() : j + 1;
    }
    if (w.size() < 3) continue;
    INFO(line);
    std::string flags;
    for (size_t i = 3; i < w.size(); ++i) flags += " " + w[i];
    cli::run_ok("import " + quote(dir + w[1]) + " --config " + quote(dir + w[2]) + flags + " -o " +
                    quote(tmp / "out.attn"),
                tmp);
    CHECK(cli::slurp(tmp / "out.attn") == cli::slurp(dir + w[0]));
    ++n;
  }
  CHECK(n == 8);
}

namespace {

// Every tensor of a loaded f32 file, under its own name, to safetensors file `st_path`;
// returns the user tensors' names in file order as a JSON list. The tokenizer section is not a
// weight: a byte vocabulary's comes back from --byte-vocab (the only fixture with one).
std::string write_tensors(const attn::Model& model, const std::string& st_path) {
  std::vector<StTensor> ts;
  std::string users;
  for (uint32_t i = 0; i < model.tensor_count(); ++i) {
    attn::TensorView t;
    REQUIRE(model.tensor(i, &t) == attn::Status::kOk);
    if (t.role == attn::format::Role::kTokenizer) {
      REQUIRE(model.byte_vocab());
      continue;
    }
    REQUIRE(t.dtype == attn::DType::kF32);
    StTensor st{t.name, std::vector<int64_t>(t.dims, t.dims + t.rank), {}};
    const float* v = static_cast<const float*>(t.data);
    st.values.assign(v, v + t.byte_size / sizeof(float));
    ts.push_back(std::move(st));
    if (t.role == attn::format::Role::kUser)
      users += std::string(users.empty() ? "" : ", ") + "\"" + t.name + "\"";
  }
  write_safetensors(st_path, ts);
  return "[" + users + "]";
}

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", x);  // float32 round trip
  return b;
}

// A loaded f32 model file in the attn layout: every tensor under its own name, config.json with
// TransformerConfig's fields and the user tensors in file order.
std::string attn_layout(const std::string& attn_file, const std::string& st_path, bool* byte_vocab) {
  Loaded m(attn_file);
  const std::string users = write_tensors(m.model, st_path);
  *byte_vocab = m.model.byte_vocab();
  const attn::TransformerConfig& c = m.config;
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  const char* norms[] = {"", "layer_norm", "rms_norm"};
  const char* acts[] = {"", "gelu", "gelu_tanh", "relu", "silu"};
  const char* heads[] = {"none", "tied", "untied"};
  return std::string("{\"model_type\": \"attn\", \"vocab_size\": ") + std::to_string(c.vocab_size) +
         ", \"embed_dim\": " + std::to_string(c.embed_dim) +
         ", \"num_layers\": " + std::to_string(c.num_layers) +
         ", \"num_heads\": " + std::to_string(c.num_heads) +
         ", \"num_kv_heads\": " + std::to_string(c.num_kv_heads) +
         ", \"head_dim\": " + std::to_string(c.head_dim) + ", \"ffn_dim\": " + std::to_string(c.ffn_dim) +
         ", \"max_positions\": " + std::to_string(c.max_positions) +
         ", \"type_vocab_size\": " + std::to_string(c.type_vocab_size) + ", \"norm\": \"" +
         norms[static_cast<int>(c.norm)] + "\", \"norm_eps\": " + num(c.norm_eps) + ", \"activation\": \"" +
         acts[static_cast<int>(c.activation)] + "\", \"head\": \"" + heads[static_cast<int>(c.head)] +
         "\", \"rope_base\": " + num(c.rope_base) + ", \"pre_norm\": " + flag(c.pre_norm) +
         ", \"gated_ffn\": " + flag(c.gated_ffn) + ", \"attention_bias\": " + flag(c.attention_bias) +
         ", \"ffn_bias\": " + flag(c.ffn_bias) + ", \"norm_bias\": " + flag(c.norm_bias) +
         ", \"learned_positions\": " + flag(c.learned_positions) +
         ", \"embedding_norm\": " + flag(c.embedding_norm) + ", \"final_norm\": " + flag(c.final_norm) +
         ", \"causal\": " + flag(c.causal) + ", \"user_tensors\": " + users + "}";
}

}  // namespace

TEST_CASE("attn import of the attn layout gives back every model file", "[cli][model_import]") {
  // Each whole-model fixture (BERT, Llama, GPT-2, Qwen2, Mistral, RoBERTa, DistilBERT; user tensors,
  // a byte vocabulary) written out in the attn layout imports to the same bytes: the layout says all
  // a model file holds (tools/export/attn_export.py's write_model and export_encoder write it).
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  TempDir tmp;
  size_t n = 0;
  for (const char* name :
       {"bert_cls", "llama", "llama_tied", "gpt2", "qwen2", "mistral", "roberta", "distilbert"}) {
    INFO(name);
    bool byte_vocab = false;
    cli::spit(tmp / "config.json", attn_layout(dir + name + ".attn", tmp / "m.safetensors", &byte_vocab));
    cli::run_ok("import " + quote(tmp / "m.safetensors") + " --config " + quote(tmp / "config.json") +
                    (byte_vocab ? " --byte-vocab" : "") + " -o " + quote(tmp / "out.attn"),
                tmp);
    CHECK(cli::slurp(tmp / "out.attn") == cli::slurp(dir + name + ".attn"));
    n += byte_vocab ? 1 : 0;
  }
  CHECK(n == 1);  // llama_tied
}

TEST_CASE("attn import of the attn layout gives back every f32 block file", "[cli][model_import]") {
  // Block files: MHA packed, cross (kdim, vdim != E), BERT (+ a user tensor), heads differing per
  // block, HF Llama GQA / MQA, llama2.c RoPE 500000, a Llama GQA block, the demo (four user tensors).
  const std::string data = std::string(ATTN_TEST_DATA_DIR) + "/";
  TempDir tmp;
  for (const char* name :
       {"format/mha_packed.attn", "format/mha_cross.attn", "format/bert.attn", "format/layers.attn",
        "format/llama_hf.attn", "format/llama2c.attn", "format/quant/llama_gqa.attn", "demo/demo.attn"}) {
    INFO(name);
    const std::vector<uint8_t> want = cli::slurp(data + name);
    const int_model::Blob blob(want);
    const attn::Model model = int_model::load_model(blob);
    std::string blocks;
    for (uint32_t i = 0; i < model.block_count(); ++i) {
      attn::Block b;
      REQUIRE(model.block(i, &b) == attn::Status::kOk);
      blocks += std::string(i ? ", " : "") + "{\"num_heads\": " + std::to_string(b.config.num_heads) +
                ", \"num_kv_heads\": " + std::to_string(b.config.num_kv_heads) +
                ", \"rope_base\": " + num(b.config.rope_base) + "}";
    }
    const std::string users = write_tensors(model, tmp / "m.safetensors");
    cli::spit(tmp / "config.json",
              "{\"model_type\": \"attn\", \"blocks\": [" + blocks + "], \"user_tensors\": " + users + "}");
    cli::run_ok("import " + quote(tmp / "m.safetensors") + " --config " + quote(tmp / "config.json") +
                    " -o " + quote(tmp / "out.attn"),
                tmp);
    CHECK(cli::slurp(tmp / "out.attn") == want);
  }
  // A bad block is named.
  cli::spit(tmp / "config.json", "{\"model_type\": \"attn\", \"blocks\": [{\"num_heads\": 3}]}");
  cli::check_error(cli::run("import " + quote(tmp / "m.safetensors") + " --config " +
                                quote(tmp / "config.json") + " -o " + quote(tmp / "out2.attn"),
                            tmp),
                   {"block.0.wq", "3 * head_dim"});
  cli::spit(tmp / "config.json",
            "{\"model_type\": \"attn\", \"blocks\": [{\"num_heads\": 4, \"window\": 2}]}");
  cli::check_error(cli::run("import " + quote(tmp / "m.safetensors") + " --config " +
                                quote(tmp / "config.json") + " -o " + quote(tmp / "out2.attn"),
                            tmp),
                   {"blocks[0]", "'window' is not a field"});
  CHECK_FALSE(cli::fs::exists(tmp / "out2.attn"));
}

TEST_CASE("attn import of the attn layout: every bad input is named", "[cli][model_import]") {
  const std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  TempDir tmp;
  bool byte_vocab = false;
  const std::string good = attn_layout(dir + "llama.attn", tmp / "m.safetensors", &byte_vocab);
  const auto fails = [&](const std::string& from, const std::string& to,
                         const std::vector<std::string>& words) {
    std::string cfg = good;
    const size_t at = cfg.find(from);
    REQUIRE(at != std::string::npos);
    cfg.replace(at, from.size(), to);
    cli::spit(tmp / "config.json", cfg);
    cli::check_error(cli::run("import " + quote(tmp / "m.safetensors") + " --config " +
                                  quote(tmp / "config.json") + " -o " + quote(tmp / "out.attn"),
                              tmp),
                     words);
    CHECK_FALSE(cli::fs::exists(tmp / "out.attn"));
  };
  fails("\"attention_bias\": false", "\"attention_bias\": true", {"missing tensor 'block.0.bq'"});
  fails("\"gated_ffn\": true", "\"gated_ffn\": false", {"'block.0.ffn_w3' is given", "gated_ffn"});
  fails("\"num_layers\": 2", "\"num_layers\": 1", {"'block.1.", "num_layers = 1"});
  fails("\"num_kv_heads\": 1", "\"num_kv_heads\": 2", {"block.0.wk", "[4, 8]", "[8, 8]"});
  fails("\"norm\": \"rms_norm\"", "\"norm\": \"rms\"", {"'norm'", "layer_norm, rms_norm"});
  fails("\"causal\": true", "\"causal\": true, \"window\": 4", {"'window' is not a field"});
  fails("\"vocab_size\": 40, ", "", {"'vocab_size' is missing"});
  fails("\"user_tensors\": []", "\"user_tensors\": [\"x\"]", {"missing tensor 'x'"});
  fails("\"head\": \"untied\"", "\"head\": \"tied\"", {"'model.lm_head' is given", "head untied"});
}

#endif  // ATTN_CLI_PATH
