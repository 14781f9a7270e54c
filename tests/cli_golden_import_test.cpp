// cli_golden_import_test.cpp: `attn import` and `attn run` reproduce the
// float64 references of the golden whole models (tests/data/golden_models).
// Every case that is a Hugging Face BERT, Llama, Qwen2 or GPT-2 is written as
// the checkpoint Hugging Face would save (safetensors under BertModel /
// LlamaForCausalLM / Qwen2ForCausalLM / GPT2LMHeadModel key names, plus
// config.json; the BERT cases once more as RobertaModel and, with erf GELU and eps
// 1e-12, as DistilBertModel, the Llama cases as
// MistralForCausalLM with a sliding window as long as the tokens), imported, and run on the case's tokens:
// the output must be within 1e-4 max|expected| of the float64 output, for the causal cases also with
// --incremental (the KV-cache decode).
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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

// Llama's shape; with attention biases it is Qwen2's (whose o_proj has none: the case's bo must be zero).
bool is_llama_shaped(const attn::TransformerConfig& c) {
  return c.pre_norm && c.causal && c.gated_ffn && c.norm == attn::NormKind::kRmsNorm && !c.ffn_bias &&
         !c.learned_positions && !c.embedding_norm && c.final_norm && c.rope_base > 0.0f &&
         c.activation == attn::Activation::kSilu && c.head != attn::LmHead::kNone && c.type_vocab_size == 0;
}

bool is_gpt2(const attn::TransformerConfig& c) {
  return c.pre_norm && c.causal && !c.gated_ffn && c.norm == attn::NormKind::kLayerNorm && c.norm_bias &&
         c.attention_bias && c.ffn_bias && c.learned_positions && !c.embedding_norm && c.final_norm &&
         c.head != attn::LmHead::kNone && c.rope_base == 0.0f && c.type_vocab_size == 0 &&
         c.activation == attn::Activation::kGeluTanh;
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

// One BERT-style encoder layer `l` under Hugging Face names: `hf` holds, after
// the layer prefix p, the modules of wq, wk, wv, wo, norm1, ffn_w1, ffn_w2 and
// norm2 in that order, each a .weight and a .bias.
void push_encoder_layer(const model_golden::Case& c, int32_t l, const std::string& p, const char* const hf[8],
                        std::vector<hf::StTensor>* ts) {
  const int64_t e = c.config.embed_dim, f = c.config.ffn_dim;
  const std::string b = "block" + std::to_string(l) + "_";
  struct Pair {
    const char *weight, *bias;
    std::vector<int64_t> weight_shape, bias_shape;
  };
  const Pair pairs[8] = {{"wq", "bq", {e, e}, {e}},
                         {"wk", "bk", {e, e}, {e}},
                         {"wv", "bv", {e, e}, {e}},
                         {"wo", "bo", {e, e}, {e}},
                         {"norm1_weight", "norm1_bias", {e}, {e}},
                         {"ffn_w1", "ffn_b1", {f, e}, {f}},
                         {"ffn_w2", "ffn_b2", {e, f}, {e}},
                         {"norm2_weight", "norm2_bias", {e}, {e}}};
  for (int i = 0; i < 8; ++i) {
    ts->push_back(tensor(c, b + pairs[i].weight, p + hf[i] + ".weight", pairs[i].weight_shape));
    ts->push_back(tensor(c, b + pairs[i].bias, p + hf[i] + ".bias", pairs[i].bias_shape));
  }
}

// BertModel's keys (no prefix) and config.json; `roberta`: RobertaModel's, whose positions start at
// pad_token_id + 1 = 2 (two rows the import must drop: they are set to a value far out).
std::vector<hf::StTensor> bert_checkpoint(const model_golden::Case& c, std::string* config,
                                          bool roberta = false) {
  const attn::TransformerConfig& k = c.config;
  const int64_t e = k.embed_dim, f = k.ffn_dim, first = roberta ? 2 : 0;
  std::vector<hf::StTensor> ts;
  ts.push_back(tensor(c, "token_embedding", "embeddings.word_embeddings.weight", {k.vocab_size, e}));
  hf::StTensor pos =
      tensor(c, "position_embedding", "embeddings.position_embeddings.weight", {k.max_positions, e});
  pos.values.insert(pos.values.begin(), static_cast<size_t>(first * e), 1e3f);
  pos.shape[0] += first;
  ts.push_back(pos);
  ts.push_back(
      tensor(c, "type_embedding", "embeddings.token_type_embeddings.weight", {k.type_vocab_size, e}));
  ts.push_back(tensor(c, "embedding_norm_weight", "embeddings.LayerNorm.weight", {e}));
  ts.push_back(tensor(c, "embedding_norm_bias", "embeddings.LayerNorm.bias", {e}));
  static const char* const kBertLayer[8] = {
      "attention.self.query",       "attention.self.key", "attention.self.value", "attention.output.dense",
      "attention.output.LayerNorm", "intermediate.dense", "output.dense",         "output.LayerNorm"};
  for (int32_t l = 0; l < k.num_layers; ++l)
    push_encoder_layer(c, l, "encoder.layer." + std::to_string(l) + ".", kBertLayer, &ts);
  const std::string act = k.activation == attn::Activation::kGelu ? "gelu" : "gelu_new";
  *config =
      std::string(roberta ? "{\"architectures\": [\"RobertaModel\"], \"model_type\": \"roberta\", "
                            "\"pad_token_id\": 1, "
                          : "{\"architectures\": [\"BertModel\"], \"model_type\": \"bert\", ") +
      "\"hidden_size\": " + std::to_string(e) + ", \"num_hidden_layers\": " + std::to_string(k.num_layers) +
      ", \"num_attention_heads\": " + std::to_string(k.num_heads) +
      ", \"intermediate_size\": " + std::to_string(f) + ", \"hidden_act\": \"" + act +
      "\", \"layer_norm_eps\": " + num(k.norm_eps) +
      ", \"max_position_embeddings\": " + std::to_string(k.max_positions + first) +
      ", \"type_vocab_size\": " + std::to_string(k.type_vocab_size) +
      ", \"vocab_size\": " + std::to_string(k.vocab_size) + ", \"position_embedding_type\": \"absolute\"}";
  return ts;
}

// LlamaForCausalLM's keys and config.json; with attention biases, Qwen2ForCausalLM's (q/k/v biases);
// `mistral_window` > 0: MistralForCausalLM's config with that sliding_window.
std::vector<hf::StTensor> llama_checkpoint(const model_golden::Case& c, std::string* config,
                                           int32_t mistral_window = 0) {
  const attn::TransformerConfig& k = c.config;
  const bool qwen2 = k.attention_bias;
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
    if (qwen2) {
      ts.push_back(tensor(c, b + "bq", p + "self_attn.q_proj.bias", {h * hd}));
      ts.push_back(tensor(c, b + "bk", p + "self_attn.k_proj.bias", {kv * hd}));
      ts.push_back(tensor(c, b + "bv", p + "self_attn.v_proj.bias", {kv * hd}));
      const std::vector<float>& bo = c.t.at(b + "bo");
      REQUIRE(std::all_of(bo.begin(), bo.end(), [](float x) { return x == 0.0f; }));
    }
    ts.push_back(tensor(c, b + "ffn_w1", p + "mlp.gate_proj.weight", {f, e}));
    ts.push_back(tensor(c, b + "ffn_w3", p + "mlp.up_proj.weight", {f, e}));
    ts.push_back(tensor(c, b + "ffn_w2", p + "mlp.down_proj.weight", {e, f}));
    ts.push_back(tensor(c, b + "norm1_weight", p + "input_layernorm.weight", {e}));
    ts.push_back(tensor(c, b + "norm2_weight", p + "post_attention_layernorm.weight", {e}));
  }
  ts.push_back(tensor(c, "final_norm_weight", "model.norm.weight", {e}));
  if (!tied) ts.push_back(tensor(c, "lm_head", "lm_head.weight", {k.vocab_size, e}));
  const std::string arch = qwen2                ? "Qwen2ForCausalLM"
                           : mistral_window > 0 ? "MistralForCausalLM"
                                                : "LlamaForCausalLM";
  const std::string type = qwen2 ? "qwen2" : mistral_window > 0 ? "mistral" : "llama";
  *config =
      "{\"architectures\": [\"" + arch + "\"], \"model_type\": \"" + type +
      "\", \"hidden_size\": " + std::to_string(e) +
      ", \"num_hidden_layers\": " + std::to_string(k.num_layers) +
      ", \"num_attention_heads\": " + std::to_string(h) + ", \"num_key_value_heads\": " + std::to_string(kv) +
      (hd != e / h ? ", \"head_dim\": " + std::to_string(hd) : std::string()) +
      ", \"intermediate_size\": " + std::to_string(f) +
      ", \"hidden_act\": \"silu\", \"rms_norm_eps\": " + num(k.norm_eps) +
      ", \"rope_theta\": " + num(k.rope_base) + ", \"rope_scaling\": null" +
      ", \"max_position_embeddings\": " + std::to_string(k.max_positions) +
      ", \"vocab_size\": " + std::to_string(k.vocab_size) +
      ", \"tie_word_embeddings\": " + (tied ? "true" : "false") +
      (mistral_window > 0 ? ", \"sliding_window\": " + std::to_string(mistral_window) : std::string()) + "}";
  return ts;
}

// DistilBertModel's keys and config.json: BERT's layer under other names, no token types (the case's
// type 0 row is added to the positions, which is what BERT computes for tokens of type 0).
std::vector<hf::StTensor> distilbert_checkpoint(const model_golden::Case& c, std::string* config) {
  const attn::TransformerConfig& k = c.config;
  const int64_t e = k.embed_dim, f = k.ffn_dim;
  std::vector<hf::StTensor> ts;
  ts.push_back(tensor(c, "token_embedding", "embeddings.word_embeddings.weight", {k.vocab_size, e}));
  hf::StTensor pos =
      tensor(c, "position_embedding", "embeddings.position_embeddings.weight", {k.max_positions, e});
  const std::vector<float>& type = c.t.at("type_embedding");
  for (size_t i = 0; i < pos.values.size(); ++i) pos.values[i] += type[i % static_cast<size_t>(e)];
  ts.push_back(pos);
  ts.push_back(tensor(c, "embedding_norm_weight", "embeddings.LayerNorm.weight", {e}));
  ts.push_back(tensor(c, "embedding_norm_bias", "embeddings.LayerNorm.bias", {e}));
  static const char* const kDistilBertLayer[8] = {"attention.q_lin",   "attention.k_lin",  "attention.v_lin",
                                                  "attention.out_lin", "sa_layer_norm",    "ffn.lin1",
                                                  "ffn.lin2",          "output_layer_norm"};
  for (int32_t l = 0; l < k.num_layers; ++l)
    push_encoder_layer(c, l, "transformer.layer." + std::to_string(l) + ".", kDistilBertLayer, &ts);
  *config = "{\"architectures\": [\"DistilBertModel\"], \"model_type\": \"distilbert\", \"dim\": " +
            std::to_string(e) + ", \"n_layers\": " + std::to_string(k.num_layers) +
            ", \"n_heads\": " + std::to_string(k.num_heads) + ", \"hidden_dim\": " + std::to_string(f) +
            ", \"activation\": \"gelu\", \"max_position_embeddings\": " + std::to_string(k.max_positions) +
            ", \"vocab_size\": " + std::to_string(k.vocab_size) + "}";
  return ts;
}

// Columns [c0, c0 + rows) of GPT-2's Conv1D weight [in, out] are the case's [rows, in] weight `key`.
void conv1d_columns(const model_golden::Case& c, const std::string& key, int64_t in, int64_t out, int64_t c0,
                    std::vector<float>* w) {
  const std::vector<float>& t = c.t.at(key);
  const int64_t rows = static_cast<int64_t>(t.size()) / in;
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t i = 0; i < in; ++i)
      (*w)[static_cast<size_t>(i * out + c0 + o)] = t[static_cast<size_t>(o * in + i)];
}

// GPT2LMHeadModel's keys (Conv1D weights [in, out], q/k/v as one c_attn) and config.json.
std::vector<hf::StTensor> gpt2_checkpoint(const model_golden::Case& c, std::string* config) {
  const attn::TransformerConfig& k = c.config;
  const int64_t e = k.embed_dim, f = k.ffn_dim;
  std::vector<hf::StTensor> ts;
  ts.push_back(tensor(c, "token_embedding", "transformer.wte.weight", {k.vocab_size, e}));
  ts.push_back(tensor(c, "position_embedding", "transformer.wpe.weight", {k.max_positions, e}));
  for (int32_t l = 0; l < k.num_layers; ++l) {
    const std::string b = "block" + std::to_string(l) + "_", p = "transformer.h." + std::to_string(l) + ".";
    std::vector<float> qkv(static_cast<size_t>(e * 3 * e)), proj(static_cast<size_t>(e * e));
    std::vector<float> fc(static_cast<size_t>(e * f)), down(static_cast<size_t>(f * e));
    conv1d_columns(c, b + "wq", e, 3 * e, 0, &qkv);
    conv1d_columns(c, b + "wk", e, 3 * e, e, &qkv);
    conv1d_columns(c, b + "wv", e, 3 * e, 2 * e, &qkv);
    conv1d_columns(c, b + "wo", e, e, 0, &proj);
    conv1d_columns(c, b + "ffn_w1", e, f, 0, &fc);
    conv1d_columns(c, b + "ffn_w2", f, e, 0, &down);
    std::vector<float> qkv_b = c.t.at(b + "bq");
    for (const char* n : {"bk", "bv"}) qkv_b.insert(qkv_b.end(), c.t.at(b + n).begin(), c.t.at(b + n).end());
    ts.push_back({p + "attn.c_attn.weight", {e, 3 * e}, qkv});
    ts.push_back({p + "attn.c_attn.bias", {3 * e}, qkv_b});
    ts.push_back({p + "attn.c_proj.weight", {e, e}, proj});
    ts.push_back(tensor(c, b + "bo", p + "attn.c_proj.bias", {e}));
    ts.push_back(tensor(c, b + "norm1_weight", p + "ln_1.weight", {e}));
    ts.push_back(tensor(c, b + "norm1_bias", p + "ln_1.bias", {e}));
    ts.push_back(tensor(c, b + "norm2_weight", p + "ln_2.weight", {e}));
    ts.push_back(tensor(c, b + "norm2_bias", p + "ln_2.bias", {e}));
    ts.push_back({p + "mlp.c_fc.weight", {e, f}, fc});
    ts.push_back(tensor(c, b + "ffn_b1", p + "mlp.c_fc.bias", {f}));
    ts.push_back({p + "mlp.c_proj.weight", {f, e}, down});
    ts.push_back(tensor(c, b + "ffn_b2", p + "mlp.c_proj.bias", {e}));
  }
  ts.push_back(tensor(c, "final_norm_weight", "transformer.ln_f.weight", {e}));
  ts.push_back(tensor(c, "final_norm_bias", "transformer.ln_f.bias", {e}));
  REQUIRE(k.head == attn::LmHead::kTied);
  *config = "{\"architectures\": [\"GPT2LMHeadModel\"], \"model_type\": \"gpt2\", \"n_embd\": " +
            std::to_string(e) + ", \"n_layer\": " + std::to_string(k.num_layers) +
            ", \"n_head\": " + std::to_string(k.num_heads) + ", \"n_inner\": " + std::to_string(f) +
            ", \"activation_function\": \"gelu_new\", \"layer_norm_epsilon\": " + num(k.norm_eps) +
            ", \"n_positions\": " + std::to_string(k.max_positions) +
            ", \"vocab_size\": " + std::to_string(k.vocab_size) + ", \"scale_attn_weights\": true}";
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

// Imports checkpoint `ts` with `config`, runs the case's tokens (and, for a causal model, once more
// through the KV cache), and checks both against the float64 output.
void import_and_run(const model_golden::Case& c, const std::string& label,
                    const std::vector<hf::StTensor>& ts, const std::string& config) {
  TempDir tmp;
  hf::write_safetensors(tmp / "model.safetensors", ts);
  cli::spit(tmp / "config.json", config);
  INFO(label << ": " << config);
  cli::run_ok("import " + quote(tmp / "model.safetensors") + " --config " + quote(tmp / "config.json") +
                  " -o " + quote(tmp / "m.attn"),
              tmp);
  cli::spit(tmp / "ids.npy",
            cli::ids_npy({c.n}, std::vector<int64_t>(c.tokens.begin(), c.tokens.end()), false));
  const std::string run = "run " + quote(tmp / "m.attn") + " --tokens " + quote(tmp / "ids.npy") + " -o ";
  cli::run_ok(run + quote(tmp / "y.npy"), tmp);
  const double err = relative_error(tmp / "y.npy", c);
  INFO(label << ": max|y - expected| / max|expected| = " << err);
  CHECK(err <= 1e-4);
  if (c.config.causal) {
    cli::run_ok(run + quote(tmp / "y_inc.npy") + " --incremental", tmp);
    const double inc = relative_error(tmp / "y_inc.npy", c);
    INFO(label << " --incremental: max|y - expected| / max|expected| = " << inc);
    CHECK(inc <= 1e-4);
  }
}

}  // namespace

TEST_CASE(
    "attn import + run of Hugging Face BERT, Llama, Mistral, Qwen2 and GPT-2 checkpoints reproduce the "
    "golden float64 outputs",
    "[cli][golden_import]") {
  std::vector<std::string> covered;
  bool distilled = false;
  for (const std::string& dir : model_golden::list_cases()) {
    model_golden::Case c;
    std::string error;
    INFO(dir);
    REQUIRE(model_golden::load(dir, &c, &error));
    std::string config;
    if (is_bert(c.config)) {
      const std::vector<hf::StTensor> ts = bert_checkpoint(c, &config);
      import_and_run(c, c.name, ts, config);
      const std::vector<hf::StTensor> rs = bert_checkpoint(c, &config, true);
      import_and_run(c, c.name + " as RobertaModel", rs, config);
      if (c.config.activation == attn::Activation::kGelu &&
          c.config.norm_eps == 1e-12f) {  // DistilBERT's own
        const std::vector<hf::StTensor> ds = distilbert_checkpoint(c, &config);
        import_and_run(c, c.name + " as DistilBertModel", ds, config);
        distilled = true;
      }
    } else if (is_gpt2(c.config)) {
      const std::vector<hf::StTensor> ts = gpt2_checkpoint(c, &config);
      import_and_run(c, c.name + " as GPT2LMHeadModel", ts, config);
      // The hub's layout of the same model (the published gpt2 weights): no "transformer." prefix.
      std::vector<hf::StTensor> hub = ts;
      for (hf::StTensor& t : hub) {
        REQUIRE(t.name.rfind("transformer.", 0) == 0);
        t.name.erase(0, std::strlen("transformer."));
      }
      import_and_run(c, c.name + " as GPT2LMHeadModel in the hub's layout", hub, config);
    } else if (is_llama_shaped(c.config)) {
      const std::vector<hf::StTensor> ts = llama_checkpoint(c, &config);
      import_and_run(c, c.name, ts, config);
      if (!c.config.attention_bias) {
        // A window as long as the tokens: the import holds max_positions at it, nothing else changes.
        const std::vector<hf::StTensor> ms = llama_checkpoint(c, &config, static_cast<int32_t>(c.n));
        import_and_run(c, c.name + " as MistralForCausalLM", ms, config);
      }
    } else {
      continue;
    }
    covered.push_back(c.name);
  }
  // The Hugging Face-shaped cases the golden set has; none may drop out unnoticed.
  CHECK(distilled);
  CHECK(covered == std::vector<std::string>{"bert_e32_h4_l2", "bert_gelutanh_e24_h3_l1",
                                            "gpt2_causal_e24_h2_l2", "llama_gqa_untied_e32_h4_kv2_l2",
                                            "llama_mha_tied_e32_h4_l2", "llama_mqa_hd8_e24_h4_kv1_l3",
                                            "qwen2_qkvbias_e32_h4_kv2_l2"});
}

#endif  // ATTN_CLI_PATH
