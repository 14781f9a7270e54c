// cli_golden_import_test.cpp: `attn import` and `attn run` reproduce the
// float64 references of the golden whole models (tests/data/golden_models).
// Every case that is a Hugging Face BERT or Llama is written as the
// checkpoint Hugging Face would save (safetensors under BertModel /
// LlamaForCausalLM key names, plus config.json), imported, and run on the
// case's tokens: the output must be within 1e-4 max|expected| of the float64
// output, for the Llama cases also with --incremental (the KV-cache decode).
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hf_checkpoint.h"
#include "transformer_golden.h"

namespace {

using cli::quote;
using cli::TempDir;

bool is_bert(const attn::TransformerConfig& c) {
  return !c.pre_norm && !c.causal && !c.gated_ffn && c.norm == attn::NormKind::kLayerNorm && c.norm_bias &&
         c.attention_bias && c.ffn_bias && c.learned_positions && c.embedding_norm && !c.final_norm &&
         c.head == attn::LmHead::kNone && c.rope_base == 0.0f &&
         (c.activation == attn::Activation::kGelu || c.activation == attn::Activation::kGeluTanh);
}

bool is_llama(const attn::TransformerConfig& c) {
  return c.pre_norm && c.causal && c.gated_ffn && c.norm == attn::NormKind::kRmsNorm && !c.attention_bias &&
         !c.ffn_bias && !c.learned_positions && !c.embedding_norm && c.final_norm && c.rope_base > 0.0f &&
         c.activation == attn::Activation::kSilu && c.head != attn::LmHead::kNone && c.type_vocab_size == 0;
}

// A float exactly: config.json numbers are read as doubles and cast to float.
std::string num(float x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", static_cast<double>(x));
  return b;
}

// The case's tensor `key`, which must have `shape`, as the checkpoint tensor `name`.
hf::StTensor tensor(const model_golden::Case& c, const std::string& key, const std::string& name,
                    std::vector<int64_t> shape) {
  const auto it = c.t.find(key);
  INFO(c.name << ": " << key);
  REQUIRE(it != c.t.end());
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  REQUIRE(it->second.size() == n);
  return {name, shape, it->second};
}

// BertModel's keys (no prefix) and config.json.
std::vector<hf::StTensor> bert_checkpoint(const model_golden::Case& c, std::string* config) {
  const attn::TransformerConfig& k = c.config;
  const int64_t e = k.embed_dim, f = k.ffn_dim;
  std::vector<hf::StTensor> ts;
  ts.push_back(tensor(c, "token_embedding", "embeddings.word_embeddings.weight", {k.vocab_size, e}));
  ts.push_back(
      tensor(c, "position_embedding", "embeddings.position_embeddings.weight", {k.max_positions, e}));
  ts.push_back(
      tensor(c, "type_embedding", "embeddings.token_type_embeddings.weight", {k.type_vocab_size, e}));
  ts.push_back(tensor(c, "embedding_norm_weight", "embeddings.LayerNorm.weight", {e}));
  ts.push_back(tensor(c, "embedding_norm_bias", "embeddings.LayerNorm.bias", {e}));
  for (int32_t l = 0; l < k.num_layers; ++l) {
    const std::string b = "block" + std::to_string(l) + "_", p = "encoder.layer." + std::to_string(l) + ".";
    ts.push_back(tensor(c, b + "wq", p + "attention.self.query.weight", {e, e}));
    ts.push_back(tensor(c, b + "bq", p + "attention.self.query.bias", {e}));
    ts.push_back(tensor(c, b + "wk", p + "attention.self.key.weight", {e, e}));
    ts.push_back(tensor(c, b + "bk", p + "attention.self.key.bias", {e}));
    ts.push_back(tensor(c, b + "wv", p + "attention.self.value.weight", {e, e}));
    ts.push_back(tensor(c, b + "bv", p + "attention.self.value.bias", {e}));
    ts.push_back(tensor(c, b + "wo", p + "attention.output.dense.weight", {e, e}));
    ts.push_back(tensor(c, b + "bo", p + "attention.output.dense.bias", {e}));
    ts.push_back(tensor(c, b + "norm1_weight", p + "attention.output.LayerNorm.weight", {e}));
    ts.push_back(tensor(c, b + "norm1_bias", p + "attention.output.LayerNorm.bias", {e}));
    ts.push_back(tensor(c, b + "ffn_w1", p + "intermediate.dense.weight", {f, e}));
    ts.push_back(tensor(c, b + "ffn_b1", p + "intermediate.dense.bias", {f}));
    ts.push_back(tensor(c, b + "ffn_w2", p + "output.dense.weight", {e, f}));
    ts.push_back(tensor(c, b + "ffn_b2", p + "output.dense.bias", {e}));
    ts.push_back(tensor(c, b + "norm2_weight", p + "output.LayerNorm.weight", {e}));
    ts.push_back(tensor(c, b + "norm2_bias", p + "output.LayerNorm.bias", {e}));
  }
  const std::string act = k.activation == attn::Activation::kGelu ? "gelu" : "gelu_new";
  *config =
      "{\"architectures\": [\"BertModel\"], \"model_type\": \"bert\", \"hidden_size\": " + std::to_string(e) +
      ", \"num_hidden_layers\": " + std::to_string(k.num_layers) +
      ", \"num_attention_heads\": " + std::to_string(k.num_heads) +
      ", \"intermediate_size\": " + std::to_string(f) + ", \"hidden_act\": \"" + act +
      "\", \"layer_norm_eps\": " + num(k.norm_eps) +
      ", \"max_position_embeddings\": " + std::to_string(k.max_positions) +
      ", \"type_vocab_size\": " + std::to_string(k.type_vocab_size) +
      ", \"vocab_size\": " + std::to_string(k.vocab_size) + ", \"position_embedding_type\": \"absolute\"}";
  return ts;
}

// LlamaForCausalLM's keys and config.json.
std::vector<hf::StTensor> llama_checkpoint(const model_golden::Case& c, std::string* config) {
  const attn::TransformerConfig& k = c.config;
  const int64_t e = k.embed_dim, f = k.ffn_dim, h = k.num_heads;
  const int64_t kv = k.num_kv_heads > 0 ? k.num_kv_heads : h, hd = k.head_dim > 0 ? k.head_dim : e / h;
  const bool tied = k.head == attn::LmHead::kTied;
  std::vector<hf::StTensor> ts;
  ts.push_back(tensor(c, "token_embedding", "model.embed_tokens.weight", {k.vocab_size, e}));
  for (int32_t l = 0; l < k.num_layers; ++l) {
    const std::string b = "block" + std::to_string(l) + "_", p = "model.layers." + std::to_string(l) + ".";
    ts.push_back(tensor(c, b + "wq", p + "self_attn.q_proj.weight", {h * hd, e}));
    ts.push_back(tensor(c, b + "wk", p + "self_attn.k_proj.weight", {kv * hd, e}));
    ts.push_back(tensor(c, b + "wv", p + "self_attn.v_proj.weight", {kv * hd, e}));
    ts.push_back(tensor(c, b + "wo", p + "self_attn.o_proj.weight", {e, h * hd}));
    ts.push_back(tensor(c, b + "ffn_w1", p + "mlp.gate_proj.weight", {f, e}));
    ts.push_back(tensor(c, b + "ffn_w3", p + "mlp.up_proj.weight", {f, e}));
    ts.push_back(tensor(c, b + "ffn_w2", p + "mlp.down_proj.weight", {e, f}));
    ts.push_back(tensor(c, b + "norm1_weight", p + "input_layernorm.weight", {e}));
    ts.push_back(tensor(c, b + "norm2_weight", p + "post_attention_layernorm.weight", {e}));
  }
  ts.push_back(tensor(c, "final_norm_weight", "model.norm.weight", {e}));
  if (!tied) ts.push_back(tensor(c, "lm_head", "lm_head.weight", {k.vocab_size, e}));
  *config = "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": " +
            std::to_string(e) + ", \"num_hidden_layers\": " + std::to_string(k.num_layers) +
            ", \"num_attention_heads\": " + std::to_string(h) +
            ", \"num_key_value_heads\": " + std::to_string(kv) +
            (hd != e / h ? ", \"head_dim\": " + std::to_string(hd) : std::string()) +
            ", \"intermediate_size\": " + std::to_string(f) +
            ", \"hidden_act\": \"silu\", \"rms_norm_eps\": " + num(k.norm_eps) +
            ", \"rope_theta\": " + num(k.rope_base) + ", \"rope_scaling\": null" +
            ", \"max_position_embeddings\": " + std::to_string(k.max_positions) +
            ", \"vocab_size\": " + std::to_string(k.vocab_size) +
            ", \"tie_word_embeddings\": " + (tied ? "true" : "false") + "}";
  return ts;
}

// max |y - expected| over max |expected|, after checking the shape [n, D].
double relative_error(const std::string& y_path, const model_golden::Case& c) {
  const attn::npy::Array a = attn::npy::parse(cli::slurp(y_path));
  CHECK(a.shape == std::vector<int64_t>{c.n, c.config.output_dim()});
  const std::vector<double> y = cli::npy_values(y_path);
  REQUIRE(y.size() == c.expected.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    err = std::max(err, std::isfinite(y[i]) ? std::fabs(y[i] - c.expected[i]) : HUGE_VAL);
    scale = std::max(scale, std::fabs(c.expected[i]));
  }
  REQUIRE(scale > 0);
  return err / scale;
}

}  // namespace

TEST_CASE("attn import + run of Hugging Face BERT and Llama checkpoints reproduce the golden float64 outputs",
          "[cli][golden_import]") {
  std::vector<std::string> covered;
  for (const std::string& dir : model_golden::list_cases()) {
    model_golden::Case c;
    std::string error;
    INFO(dir);
    REQUIRE(model_golden::load(dir, &c, &error));
    const bool bert = is_bert(c.config), llama = is_llama(c.config);
    if (!bert && !llama) continue;
    covered.push_back(c.name);
    TempDir tmp;
    std::string config;
    const std::vector<hf::StTensor> ts = bert ? bert_checkpoint(c, &config) : llama_checkpoint(c, &config);
    hf::write_safetensors(tmp / "model.safetensors", ts);
    cli::spit(tmp / "config.json", config);
    INFO(config);
    cli::run_ok("import " + quote(tmp / "model.safetensors") + " --config " + quote(tmp / "config.json") +
                    " -o " + quote(tmp / "m.attn"),
                tmp);
    cli::spit(tmp / "ids.npy",
              cli::ids_npy({c.n}, std::vector<int64_t>(c.tokens.begin(), c.tokens.end()), false));
    const std::string run = "run " + quote(tmp / "m.attn") + " --tokens " + quote(tmp / "ids.npy") + " -o ";
    cli::run_ok(run + quote(tmp / "y.npy"), tmp);
    const double err = relative_error(tmp / "y.npy", c);
    INFO(c.name << ": max|y - expected| / max|expected| = " << err);
    CHECK(err <= 1e-4);
    if (llama) {
      cli::run_ok(run + quote(tmp / "y_inc.npy") + " --incremental", tmp);
      const double inc = relative_error(tmp / "y_inc.npy", c);
      INFO(c.name << " --incremental: max|y - expected| / max|expected| = " << inc);
      CHECK(inc <= 1e-4);
    }
  }
  // The Hugging Face-shaped cases the golden set has; none may drop out unnoticed.
  CHECK(covered == std::vector<std::string>{"bert_e32_h4_l2", "bert_gelutanh_e24_h3_l1",
                                            "llama_gqa_untied_e32_h4_kv2_l2", "llama_mha_tied_e32_h4_l2",
                                            "llama_mqa_hd8_e24_h4_kv1_l3"});
}

#endif  // ATTN_CLI_PATH
