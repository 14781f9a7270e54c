// import_model.cpp: whole models for `attn import` (see import_model.h).
#include "cli/import_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <map>
#include <set>

#include "cli/cli.h"

namespace attn {
namespace cli {
namespace {

// The safetensors file: tensors by name, which ones the model used.
struct Source {
  std::string src;
  const std::vector<safetensors::Tensor>* tensors = nullptr;
  std::map<std::string, size_t> index;
  std::set<std::string> used;

  bool has(const std::string& k) const { return index.count(k) != 0; }
  const safetensors::Tensor& at(const std::string& k) const {
    const auto it = index.find(k);
    if (it == index.end()) throw Error(src + ": missing tensor '" + k + "'");
    return (*tensors)[it->second];
  }
  static std::string shape_str(const std::vector<int64_t>& s) {
    std::string o = "[";
    for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
    return o + "]";
  }
  // Tensor `k` as float32, which must have shape `want` (`why` names the config fields behind it).
  std::vector<float> get(const std::string& k, const std::vector<int64_t>& want, const std::string& why) {
    const safetensors::Tensor& t = at(k);
    if (t.shape != want)
      throw Error(src + ": '" + k + "' has shape " + shape_str(t.shape) + ", expected " + shape_str(want) +
                  " (" + why + ")");
    used.insert(k);
    try {
      return safetensors::to_f32(t);
    } catch (const std::runtime_error& e) {
      throw Error(src + ": " + e.what());
    }
  }
};

bool float_dtype(const std::string& d) { return d == "F32" || d == "F64" || d == "F16" || d == "BF16"; }

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// config.json fields.
struct Config {
  std::string src;
  const json::Value* v = nullptr;

  const json::Value* field(const char* k) const {
    const json::Value* f = v->find(k);
    return f != nullptr && f->type != json::Value::Type::kNull ? f : nullptr;
  }
  [[noreturn]] void bad(const char* k, const std::string& what) const {
    throw Error(src + ": '" + k + "' " + what);
  }
  // An integer in [lo, hi]; `fallback` when absent (required when fallback < lo).
  int64_t integer(const char* k, int64_t lo, int64_t hi, int64_t fallback) const {
    const json::Value* f = field(k);
    if (f == nullptr) {
      if (fallback < lo) bad(k, "is missing");
      return fallback;
    }
    int64_t x = 0;
    if (!json::to_int64(*f, &x)) bad(k, "must be an integer");
    if (x < lo || x > hi)
      bad(k, "= " + std::to_string(x) + " is out of range (" + std::to_string(lo) + " .. " +
                 std::to_string(hi) + ")");
    return x;
  }
  double number(const char* k, double fallback) const {
    const json::Value* f = field(k);
    if (f == nullptr) return fallback;
    double x = 0;
    if (!json::to_double(*f, &x)) bad(k, "must be a number");
    return x;
  }
  bool boolean(const char* k, bool fallback) const {
    const json::Value* f = field(k);
    if (f == nullptr) return fallback;
    if (f->type != json::Value::Type::kBool) bad(k, "must be true or false");
    return f->boolean;
  }
  std::string string(const char* k, const std::string& fallback) const {
    const json::Value* f = field(k);
    if (f == nullptr) return fallback;
    if (f->type != json::Value::Type::kString) bad(k, "must be a string");
    return f->text;
  }
  // A norm eps: finite, > 0, < 1 as float32.
  float eps(const char* k, double fallback) const {
    const float e = static_cast<float>(number(k, fallback));
    if (!(e > 0.0f && e < 1.0f)) bad(k, "must be a number in (0, 1)");
    return e;
  }
};

constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxTypeVocab = int64_t{1} << 16;

// The model family: config.json's model_type, else its architectures, else the keys.
// "bert", "roberta" and "distilbert"; "llama" and its layout-sharing relatives "mistral" and "qwen2"; "gpt2".
std::string model_kind(const Source& s, const Config& c) {
  std::string t = c.string("model_type", "");
  if (t.empty()) {
    const json::Value* a = c.field("architectures");
    if (a != nullptr && a->type == json::Value::Type::kArray)
      for (const json::Value& x : a->items) {
        if (x.type != json::Value::Type::kString) continue;
        if (starts_with(x.text, "Bert")) t = "bert";
        if (starts_with(x.text, "Roberta")) t = "roberta";
        if (starts_with(x.text, "DistilBert")) t = "distilbert";
        if (starts_with(x.text, "Llama")) t = "llama";
        if (starts_with(x.text, "Mistral")) t = "mistral";
        if (starts_with(x.text, "Qwen2")) t = "qwen2";
        if (starts_with(x.text, "GPT2")) t = "gpt2";
        if (!t.empty()) break;
      }
  }
  if (t.empty()) {
    for (const safetensors::Tensor& x : *s.tensors) {
      if (ends_with(x.name, "embeddings.word_embeddings.weight")) t = "bert";
      if (x.name == "model.embed_tokens.weight") t = "llama";
      if (x.name == "wte.weight" || x.name == "transformer.wte.weight") t = "gpt2";
      if (!t.empty()) break;
    }
  }
  if (t.empty())
    throw Error(
        c.src + ": cannot tell the model type: no 'model_type' or 'architectures', and " + s.src +
        " has none of 'embeddings.word_embeddings.weight' (BERT), 'model.embed_tokens.weight' (Llama), "
        "'wte.weight' (GPT-2)");
  if (t != "bert" && t != "roberta" && t != "distilbert" && t != "llama" && t != "mistral" && t != "qwen2" &&
      t != "gpt2")
    throw Error(c.src + ": model_type '" + t +
                "' is not supported (bert, roberta, distilbert, llama, mistral, qwen2, gpt2)");
  return t;
}

// One activation name a config may give and attn's activation of it.
struct ActivationName {
  const char* name;
  Activation activation;
};

// The activation under `key` (default `fallback`): one of `accepted`, or an
// error that lists them.
Activation read_activation(const Config& c, const char* key, const char* fallback,
                           std::initializer_list<ActivationName> accepted) {
  const std::string a = c.string(key, fallback);
  std::string names;
  for (const ActivationName& n : accepted) {
    if (a == n.name) return n.activation;
    names += (names.empty() ? "" : ", ") + std::string(n.name);
  }
  c.bad(key, "= '" + a + "' is not supported (" + names + ")");
}

Activation bert_activation(const Config& c) {
  return read_activation(c, "hidden_act", "gelu",
                         {{"gelu", Activation::kGelu},
                          {"gelu_new", Activation::kGeluTanh},
                          {"gelu_pytorch_tanh", Activation::kGeluTanh},
                          {"relu", Activation::kRelu}});
}

// Tensor `t` of the file as a user tensor under its own name.
UserTensor user_tensor(Source& s, const safetensors::Tensor& t) {
  if (t.name.empty() || t.name.size() >= format::kNameBytes)
    throw Error(s.src + ": '" + t.name + "' cannot be stored as a user tensor (names have 1..63 bytes)");
  if (t.shape.empty() || t.shape.size() > 4)
    throw Error(s.src + ": '" + t.name + "' cannot be stored as a user tensor (rank " +
                std::to_string(t.shape.size()) + ", not 1..4)");
  UserTensor u;
  u.name = t.name;
  for (int64_t d : t.shape) {
    if (d < 1 || d > int64_t{ATTN_MAX_TENSOR_DIM})
      throw Error(s.src + ": '" + t.name + "' has a dim out of range for a user tensor");
    u.dims.push_back(static_cast<uint32_t>(d));
  }
  try {
    u.values = safetensors::to_f32(t);
  } catch (const std::runtime_error& e) {
    throw Error(s.src + ": " + e.what());
  }
  s.used.insert(t.name);
  return u;
}

// Keys the model did not use: float tensors outside the layers become user
// tensors (sorted by name); a layer key the model does not know is an error.
void leftovers(Source& s, const std::string& layer_prefix, const std::string& what, ImportedModel* m) {
  for (const safetensors::Tensor& t : *s.tensors) {
    if (s.used.count(t.name) != 0) continue;
    if (ends_with(t.name, "rotary_emb.inv_freq")) continue;  // derived from rope_theta
    if (starts_with(t.name, layer_prefix))
      throw Error(s.src + ": '" + t.name + "' is not a tensor of " + what +
                  " (a layer beyond num_hidden_layers, or a layout attn does not know)");
    if (!float_dtype(t.dtype)) continue;  // e.g. BERT's position_ids buffer
    m->user.push_back(user_tensor(s, t));
  }
  std::sort(m->user.begin(), m->user.end(),
            [](const UserTensor& a, const UserTensor& b) { return a.name < b.name; });
}

// LayerNorm weight and bias under `p` (HF names them weight/bias, older BERT checkpoints gamma/beta).
void layer_norm(Source& s, const std::string& p, int64_t e, const std::string& why, std::vector<float>* w,
                std::vector<float>* b) {
  const bool old = !s.has(p + "weight") && s.has(p + "gamma");
  *w = s.get(p + (old ? "gamma" : "weight"), {e}, why);
  *b = s.get(p + (old ? "beta" : "bias"), {e}, why);
}

// The key names of a post-norm encoder layer (BERT's, or DistilBERT's for the same tensors): layer i is
// under `layers`i., each linear has .weight and .bias, each LayerNorm .weight/.bias (or .gamma/.beta).
struct EncoderKeys {
  const char* layers;
  const char *q, *k, *v, *o, *norm1, *w1, *w2, *norm2;
  const char *embed, *ffn;  // the config fields behind E and F, for the shape errors
};
constexpr EncoderKeys kBertKeys = {
    "encoder.layer.",        "attention.self.query.",   "attention.self.key.",
    "attention.self.value.", "attention.output.dense.", "attention.output.LayerNorm.",
    "intermediate.dense.",   "output.dense.",           "output.LayerNorm.",
    "hidden_size",           "intermediate_size"};
constexpr EncoderKeys kDistilBertKeys = {
    "transformer.layer.", "attention.q_lin.", "attention.k_lin.", "attention.v_lin.",   "attention.out_lin.",
    "sa_layer_norm.",     "ffn.lin1.",        "ffn.lin2.",        "output_layer_norm.", "dim",
    "hidden_dim"};

// The `n` layers under `prefix` named by `keys`, E = e, F = f.
void encoder_layers(Source& s, const std::string& prefix, const EncoderKeys& keys, int32_t n, int64_t e,
                    int64_t f, tools::TransformerTensorsF32* w) {
  const std::string E = keys.embed, F = std::string(keys.ffn) + ", " + keys.embed;
  const std::string EF = E + ", " + keys.ffn;
  for (int32_t l = 0; l < n; ++l) {
    const std::string p = prefix + keys.layers + std::to_string(l) + ".";
    tools::LayerTensorsF32 L;
    L.wq = s.get(p + keys.q + "weight", {e, e}, E);
    L.wk = s.get(p + keys.k + "weight", {e, e}, E);
    L.wv = s.get(p + keys.v + "weight", {e, e}, E);
    L.wo = s.get(p + keys.o + "weight", {e, e}, E);
    L.bq = s.get(p + keys.q + "bias", {e}, E);
    L.bk = s.get(p + keys.k + "bias", {e}, E);
    L.bv = s.get(p + keys.v + "bias", {e}, E);
    L.bo = s.get(p + keys.o + "bias", {e}, E);
    layer_norm(s, p + keys.norm1, e, E, &L.norm1_weight, &L.norm1_bias);
    L.w1 = s.get(p + keys.w1 + "weight", {f, e}, F);
    L.b1 = s.get(p + keys.w1 + "bias", {f}, keys.ffn);
    L.w2 = s.get(p + keys.w2 + "weight", {e, f}, EF);
    L.b2 = s.get(p + keys.w2 + "bias", {e}, E);
    layer_norm(s, p + keys.norm2, e, E, &L.norm2_weight, &L.norm2_bias);
    w->layers.push_back(std::move(L));
  }
}

// The prefix of the one `embeddings.word_embeddings.weight` in the file ("" or "bert.", "roberta.", ...).
std::string embeddings_prefix(const Source& s, const char* what) {
  std::string prefix;
  bool found = false;
  const std::string emb = "embeddings.word_embeddings.weight";
  for (const safetensors::Tensor& t : *s.tensors) {
    if (!ends_with(t.name, emb)) continue;
    const std::string p = t.name.substr(0, t.name.size() - emb.size());
    if (!p.empty() && p.back() != '.') continue;
    if (found && p != prefix)
      throw Error(s.src + ": two models in one file ('" + prefix + emb + "' and '" + t.name + "')");
    prefix = p;
    found = true;
  }
  if (!found) throw Error(s.src + ": missing tensor '" + emb + "' (" + what + "'s token embedding)");
  return prefix;
}

// The width (config key `dim`), layers and heads (which must divide the width)
// of a BERT-like or GPT-2 config into *k; the width.
int64_t read_sizes(const Config& c, const char* dim, const char* layers, const char* heads,
                   TransformerConfig* k) {
  const int64_t e = c.integer(dim, 1, ATTN_MAX_DIM, -1);
  k->embed_dim = static_cast<int32_t>(e);
  k->num_layers = static_cast<int32_t>(c.integer(layers, 1, ATTN_MAX_LAYERS, -1));
  k->num_heads = static_cast<int32_t>(c.integer(heads, 1, ATTN_MAX_HEADS, -1));
  if (e % k->num_heads != 0)
    c.bad(heads, "= " + std::to_string(k->num_heads) + " does not divide " + dim + " " + std::to_string(e));
  return e;
}

// BertModel; `roberta`: RobertaModel, BERT's keys with positions that start after pad_token_id.
ImportedModel import_bert(Source& s, const Config& c, bool roberta) {
  const std::string prefix = embeddings_prefix(s, roberta ? "a RobertaModel" : "a BertModel");
  ImportedModel m;
  m.kind = roberta ? "roberta" : "bert";
  TransformerConfig& k = m.config;
  const int64_t e = read_sizes(c, "hidden_size", "num_hidden_layers", "num_attention_heads", &k);
  const int64_t f = c.integer("intermediate_size", 1, ATTN_MAX_DIM, -1);
  k.ffn_dim = static_cast<int32_t>(f);
  k.activation = bert_activation(c);
  k.norm = NormKind::kLayerNorm;
  k.norm_eps = c.eps("layer_norm_eps", 1e-12);
  const int64_t pos = c.integer("max_position_embeddings", 1, ATTN_MAX_SEQ, -1);
  // RoBERTa numbers a sequence without padding tokens from pad_token_id + 1: the rows before are not used.
  const int64_t first = roberta ? c.integer("pad_token_id", 0, ATTN_MAX_SEQ, 1) + 1 : 0;
  if (first >= pos)
    c.bad(
        "max_position_embeddings",
        "= " + std::to_string(pos) + " leaves no position after pad_token_id + 1 = " + std::to_string(first));
  k.max_positions = static_cast<int32_t>(pos - first);
  const int64_t types = c.integer("type_vocab_size", 0, kMaxTypeVocab, 2);
  k.type_vocab_size = static_cast<int32_t>(types);
  const int64_t v = c.integer("vocab_size", 1, kMaxVocab, -1);
  k.vocab_size = static_cast<int32_t>(v);
  const std::string pe = c.string("position_embedding_type", "absolute");
  if (pe != "absolute") c.bad("position_embedding_type", "= '" + pe + "' is not supported (absolute)");
  k.pre_norm = false;
  k.attention_bias = k.ffn_bias = k.norm_bias = true;
  k.learned_positions = k.embedding_norm = true;
  k.final_norm = k.causal = k.gated_ffn = false;
  k.head = LmHead::kNone;

  tools::TransformerTensorsF32& w = m.weights;
  const std::string pp = prefix + "embeddings.";
  w.token_embedding = s.get(pp + "word_embeddings.weight", {v, e}, "vocab_size, hidden_size");
  w.position_embedding =
      s.get(pp + "position_embeddings.weight", {pos, e}, "max_position_embeddings, hidden_size");
  w.position_embedding.erase(w.position_embedding.begin(), w.position_embedding.begin() + first * e);
  if (types > 0)
    w.type_embedding = s.get(pp + "token_type_embeddings.weight", {types, e}, "type_vocab_size, hidden_size");
  layer_norm(s, pp + "LayerNorm.", e, "hidden_size", &w.embedding_norm_weight, &w.embedding_norm_bias);
  encoder_layers(s, prefix, kBertKeys, k.num_layers, e, f, &w);
  leftovers(s, prefix + kBertKeys.layers,
            std::string(roberta ? "a RobertaModel" : "a BertModel") +
                " with num_hidden_layers = " + std::to_string(k.num_layers),
            &m);
  return m;
}

// DistilBertModel (keys under "distilbert." or none): BERT's post-norm layer under other names and
// config keys, no token types, LayerNorm eps 1e-12.
ImportedModel import_distilbert(Source& s, const Config& c) {
  const std::string prefix = embeddings_prefix(s, "a DistilBertModel");
  ImportedModel m;
  m.kind = "distilbert";
  TransformerConfig& k = m.config;
  const int64_t e = read_sizes(c, "dim", "n_layers", "n_heads", &k);
  const int64_t f = c.integer("hidden_dim", 1, ATTN_MAX_DIM, -1);
  k.ffn_dim = static_cast<int32_t>(f);
  k.activation =
      read_activation(c, "activation", "gelu", {{"gelu", Activation::kGelu}, {"relu", Activation::kRelu}});
  k.norm = NormKind::kLayerNorm;
  k.norm_eps = 1e-12f;  // DistilBERT builds its LayerNorms with eps=1e-12, not from the config
  const int64_t pos = c.integer("max_position_embeddings", 1, ATTN_MAX_SEQ, -1);
  k.max_positions = static_cast<int32_t>(pos);
  const int64_t v = c.integer("vocab_size", 1, kMaxVocab, -1);
  k.vocab_size = static_cast<int32_t>(v);
  k.type_vocab_size = 0;
  k.pre_norm = false;
  k.attention_bias = k.ffn_bias = k.norm_bias = true;
  k.learned_positions = k.embedding_norm = true;  // sinusoidal_pos_embds too: the table is in the file
  k.final_norm = k.causal = k.gated_ffn = false;
  k.head = LmHead::kNone;

  tools::TransformerTensorsF32& w = m.weights;
  const std::string pp = prefix + "embeddings.";
  w.token_embedding = s.get(pp + "word_embeddings.weight", {v, e}, "vocab_size, dim");
  w.position_embedding = s.get(pp + "position_embeddings.weight", {pos, e}, "max_position_embeddings, dim");
  layer_norm(s, pp + "LayerNorm.", e, "dim", &w.embedding_norm_weight, &w.embedding_norm_bias);
  encoder_layers(s, prefix, kDistilBertKeys, k.num_layers, e, f, &w);
  leftovers(s, prefix + kDistilBertKeys.layers,
            "a DistilBertModel with n_layers = " + std::to_string(k.num_layers), &m);
  return m;
}

// A sliding attention window of `window` keys (each query sees itself and the window - 1 keys before
// it) changes nothing while a sequence has at most `window` tokens: the model keeps its window by
// holding max_positions at or below it.
void clamp_to_window(const Config& c, const char* key, ImportedModel* m) {
  const int64_t w = c.integer(key, 1, INT32_MAX, INT32_MAX);
  if (w >= m->config.max_positions) return;
  m->notes.push_back("max_positions " + std::to_string(m->config.max_positions) + " -> " + std::to_string(w) +
                     ": the " + key + " of " + std::to_string(w) +
                     " tokens is exact for sequences up to that length");
  m->config.max_positions = static_cast<int32_t>(w);
}

// LlamaForCausalLM, and the families that share its keys: MistralForCausalLM (a sliding window),
// Qwen2ForCausalLM (q/k/v biases without an o_proj bias, an optional sliding window).
ImportedModel import_llama(Source& s, const Config& c, const std::string& family) {
  ImportedModel m;
  m.kind = family;
  const bool qwen2 = family == "qwen2";
  TransformerConfig& k = m.config;
  const int64_t e = c.integer("hidden_size", 1, ATTN_MAX_DIM, -1);
  k.embed_dim = static_cast<int32_t>(e);
  k.num_layers = static_cast<int32_t>(c.integer("num_hidden_layers", 1, ATTN_MAX_LAYERS, -1));
  const int64_t h = c.integer("num_attention_heads", 1, ATTN_MAX_HEADS, -1);
  k.num_heads = static_cast<int32_t>(h);
  const int64_t kv = c.integer("num_key_value_heads", 1, h, h);
  if (h % kv != 0)
    c.bad("num_key_value_heads",
          "= " + std::to_string(kv) + " does not divide num_attention_heads " + std::to_string(h));
  k.num_kv_heads = static_cast<int32_t>(kv);
  if (c.field("head_dim") == nullptr && e % h != 0)
    c.bad("num_attention_heads",
          "= " + std::to_string(h) + " does not divide hidden_size " + std::to_string(e));
  const int64_t hd = c.integer("head_dim", 1, ATTN_MAX_DIM / h, e / h);
  k.head_dim = static_cast<int32_t>(hd);
  const int64_t f = c.integer("intermediate_size", 1, ATTN_MAX_DIM, -1);
  k.ffn_dim = static_cast<int32_t>(f);
  const std::string act = c.string("hidden_act", "silu");
  if (act != "silu") c.bad("hidden_act", "= '" + act + "' is not supported for Llama (silu)");
  k.activation = Activation::kSilu;
  k.norm = NormKind::kRmsNorm;
  k.norm_eps = c.eps("rms_norm_eps", 1e-6);
  const float theta = static_cast<float>(c.number("rope_theta", 10000.0));
  if (!(theta > 0.0f && theta <= 1e30f)) c.bad("rope_theta", "must be a number in (0, 1e30]");
  if (hd % 2 != 0) c.bad("head_dim", "= " + std::to_string(hd) + " is odd: rotary embeddings need it even");
  if (c.field("rope_scaling") != nullptr) c.bad("rope_scaling", "is not supported (only plain RoPE: null)");
  k.rope_base = theta;
  k.max_positions = static_cast<int32_t>(c.integer("max_position_embeddings", 1, ATTN_MAX_SEQ, -1));
  const int64_t v = c.integer("vocab_size", 1, kMaxVocab, -1);
  k.vocab_size = static_cast<int32_t>(v);
  if (family == "mistral") clamp_to_window(c, "sliding_window", &m);
  if (qwen2 && c.boolean("use_sliding_window", false)) clamp_to_window(c, "sliding_window", &m);
  k.attention_bias = qwen2 || c.boolean("attention_bias", false);
  k.ffn_bias = !qwen2 && c.boolean("mlp_bias", false);
  const bool tied = c.boolean("tie_word_embeddings", false);
  k.head = tied ? LmHead::kTied : LmHead::kUntied;
  k.pre_norm = k.gated_ffn = k.final_norm = k.causal = true;
  k.norm_bias = k.learned_positions = k.embedding_norm = false;
  k.type_vocab_size = 0;

  tools::TransformerTensorsF32& w = m.weights;
  const int64_t d = h * hd, dkv = kv * hd;
  w.token_embedding = s.get("model.embed_tokens.weight", {v, e}, "vocab_size, hidden_size");
  for (int32_t l = 0; l < k.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    tools::LayerTensorsF32 L;
    const std::string a = p + "self_attn.";
    const std::string heads = "num_attention_heads * head_dim, hidden_size";
    const std::string kvs = "num_key_value_heads * head_dim, hidden_size";
    L.wq = s.get(a + "q_proj.weight", {d, e}, heads);
    L.wk = s.get(a + "k_proj.weight", {dkv, e}, kvs);
    L.wv = s.get(a + "v_proj.weight", {dkv, e}, kvs);
    L.wo = s.get(a + "o_proj.weight", {e, d}, "hidden_size, num_attention_heads * head_dim");
    if (k.attention_bias) {
      const std::string why = qwen2 ? "Qwen2 has q/k/v biases" : "attention_bias";
      L.bq = s.get(a + "q_proj.bias", {d}, why);
      L.bk = s.get(a + "k_proj.bias", {dkv}, why);
      L.bv = s.get(a + "v_proj.bias", {dkv}, why);
      // Qwen2's o_proj has no bias: a zero one adds nothing.
      L.bo = qwen2 ? std::vector<float>(static_cast<size_t>(e), 0.0f) : s.get(a + "o_proj.bias", {e}, why);
    }
    L.norm1_weight = s.get(p + "input_layernorm.weight", {e}, "hidden_size");
    L.norm2_weight = s.get(p + "post_attention_layernorm.weight", {e}, "hidden_size");
    L.w1 = s.get(p + "mlp.gate_proj.weight", {f, e}, "intermediate_size, hidden_size");
    L.w3 = s.get(p + "mlp.up_proj.weight", {f, e}, "intermediate_size, hidden_size");
    L.w2 = s.get(p + "mlp.down_proj.weight", {e, f}, "hidden_size, intermediate_size");
    if (k.ffn_bias) {
      L.b1 = s.get(p + "mlp.gate_proj.bias", {f}, "mlp_bias");
      L.b3 = s.get(p + "mlp.up_proj.bias", {f}, "mlp_bias");
      L.b2 = s.get(p + "mlp.down_proj.bias", {e}, "mlp_bias");
    }
    w.layers.push_back(std::move(L));
  }
  w.final_norm_weight = s.get("model.norm.weight", {e}, "hidden_size");
  if (!tied) {
    w.lm_head = s.get("lm_head.weight", {v, e}, "vocab_size, hidden_size; tie_word_embeddings is false");
  } else if (s.has("lm_head.weight")) {
    // A tied checkpoint may still store the head: it must be the embedding.
    if (s.get("lm_head.weight", {v, e}, "vocab_size, hidden_size") != w.token_embedding)
      throw Error(s.src + ": 'lm_head.weight' differs from 'model.embed_tokens.weight' but " + c.src +
                  " says tie_word_embeddings");
  }
  const std::string arch = family == "llama"     ? "LlamaForCausalLM"
                           : family == "mistral" ? "MistralForCausalLM"
                                                 : "Qwen2ForCausalLM";
  leftovers(s, "model.layers.", "a " + arch + " with num_hidden_layers = " + std::to_string(k.num_layers),
            &m);
  return m;
}

// GPT-2's Conv1D weight [in, out] (y = x W + b), columns [c0, c0 + n), as attn's [n, in].
std::vector<float> conv1d_columns(const std::vector<float>& w, int64_t in, int64_t out, int64_t c0,
                                  int64_t n) {
  std::vector<float> t(static_cast<size_t>(n * in));
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < in; ++i)
      t[static_cast<size_t>(o * in + i)] = w[static_cast<size_t>(i * out + c0 + o)];
  return t;
}

// Whether config.json's architectures name `arch`.
bool names_architecture(const Config& c, const char* arch) {
  const json::Value* a = c.field("architectures");
  if (a == nullptr || a->type != json::Value::Type::kArray) return false;
  for (const json::Value& x : a->items)
    if (x.type == json::Value::Type::kString && x.text == arch) return true;
  return false;
}

// GPT2Model (the last hidden state after ln_f) or GPT2LMHeadModel (the tied
// head's logits): pre-norm LayerNorm, learned positions, causal attention,
// Conv1D weights. GPT2LMHeadModel's keys are under "transformer." as
// save_pretrained writes them, or without the prefix as the hub's published
// gpt2 weights are: there the head is told by architectures (or an
// lm_head.weight), not by the keys.
ImportedModel import_gpt2(Source& s, const Config& c) {
  const bool prefixed = s.has("transformer.wte.weight");
  const std::string prefix = prefixed ? "transformer." : "";
  if (!prefixed && !s.has("wte.weight"))
    throw Error(s.src +
                ": missing tensor 'wte.weight' or 'transformer.wte.weight' (GPT-2's token embedding)");
  const bool by_arch = names_architecture(c, "GPT2LMHeadModel");
  const bool lm = prefixed || by_arch || s.has("lm_head.weight");
  ImportedModel m;
  m.kind = "gpt2";
  if (lm && !prefixed)
    m.notes.push_back(s.src + " has GPT-2's keys without 'transformer.' (the hub's layout)" +
                      (by_arch ? std::string(" and ") + c.src + " names GPT2LMHeadModel"
                               : std::string(" and an lm_head.weight")) +
                      ": imported with its LM head");
  TransformerConfig& k = m.config;
  const int64_t e = read_sizes(c, "n_embd", "n_layer", "n_head", &k);
  const int64_t f = c.integer("n_inner", 1, ATTN_MAX_DIM, 4 * e);
  if (f > ATTN_MAX_DIM)
    c.bad("n_inner", "is missing, and 4 * n_embd is beyond " + std::to_string(ATTN_MAX_DIM));
  k.ffn_dim = static_cast<int32_t>(f);
  k.activation = read_activation(c, "activation_function", "gelu_new",
                                 {{"gelu_new", Activation::kGeluTanh},
                                  {"gelu_pytorch_tanh", Activation::kGeluTanh},
                                  {"gelu_fast", Activation::kGeluTanh},
                                  {"gelu", Activation::kGelu},
                                  {"relu", Activation::kRelu}});
  k.norm = NormKind::kLayerNorm;
  k.norm_eps = c.eps("layer_norm_epsilon", 1e-5);
  if (!c.boolean("scale_attn_weights", true))
    c.bad("scale_attn_weights", "is false: attn always scales the scores by 1/sqrt(head_dim)");
  if (c.boolean("scale_attn_by_inverse_layer_idx", false))
    c.bad("scale_attn_by_inverse_layer_idx", "is true: not supported");
  const int64_t pos = c.integer("n_positions", 1, ATTN_MAX_SEQ, -1);
  k.max_positions = static_cast<int32_t>(pos);
  const int64_t v = c.integer("vocab_size", 1, kMaxVocab, -1);
  k.vocab_size = static_cast<int32_t>(v);
  const bool tied = c.boolean("tie_word_embeddings", true);
  k.head = !lm ? LmHead::kNone : tied ? LmHead::kTied : LmHead::kUntied;
  k.pre_norm = k.causal = k.final_norm = k.learned_positions = true;
  k.attention_bias = k.ffn_bias = k.norm_bias = true;
  k.embedding_norm = k.gated_ffn = false;
  k.type_vocab_size = 0;

  tools::TransformerTensorsF32& w = m.weights;
  w.token_embedding = s.get(prefix + "wte.weight", {v, e}, "vocab_size, n_embd");
  w.position_embedding = s.get(prefix + "wpe.weight", {pos, e}, "n_positions, n_embd");
  for (int32_t l = 0; l < k.num_layers; ++l) {
    const std::string p = prefix + "h." + std::to_string(l) + ".";
    tools::LayerTensorsF32 L;
    const std::vector<float> qkv = s.get(p + "attn.c_attn.weight", {e, 3 * e}, "n_embd, 3 * n_embd");
    const std::vector<float> qkv_b = s.get(p + "attn.c_attn.bias", {3 * e}, "3 * n_embd");
    L.wq = conv1d_columns(qkv, e, 3 * e, 0, e);
    L.wk = conv1d_columns(qkv, e, 3 * e, e, e);
    L.wv = conv1d_columns(qkv, e, 3 * e, 2 * e, e);
    L.bq.assign(qkv_b.begin(), qkv_b.begin() + e);
    L.bk.assign(qkv_b.begin() + e, qkv_b.begin() + 2 * e);
    L.bv.assign(qkv_b.begin() + 2 * e, qkv_b.end());
    L.wo = conv1d_columns(s.get(p + "attn.c_proj.weight", {e, e}, "n_embd"), e, e, 0, e);
    L.bo = s.get(p + "attn.c_proj.bias", {e}, "n_embd");
    L.norm1_weight = s.get(p + "ln_1.weight", {e}, "n_embd");
    L.norm1_bias = s.get(p + "ln_1.bias", {e}, "n_embd");
    L.norm2_weight = s.get(p + "ln_2.weight", {e}, "n_embd");
    L.norm2_bias = s.get(p + "ln_2.bias", {e}, "n_embd");
    L.w1 = conv1d_columns(s.get(p + "mlp.c_fc.weight", {e, f}, "n_embd, n_inner"), e, f, 0, f);
    L.b1 = s.get(p + "mlp.c_fc.bias", {f}, "n_inner");
    L.w2 = conv1d_columns(s.get(p + "mlp.c_proj.weight", {f, e}, "n_inner, n_embd"), f, e, 0, e);
    L.b2 = s.get(p + "mlp.c_proj.bias", {e}, "n_embd");
    // The causal-mask buffers some checkpoints store: attn's attention is causal by itself.
    for (const char* buffer : {"attn.bias", "attn.masked_bias"})
      if (s.has(p + buffer)) s.used.insert(p + buffer);
    w.layers.push_back(std::move(L));
  }
  w.final_norm_weight = s.get(prefix + "ln_f.weight", {e}, "n_embd");
  w.final_norm_bias = s.get(prefix + "ln_f.bias", {e}, "n_embd");
  if (k.head == LmHead::kUntied) {
    w.lm_head = s.get("lm_head.weight", {v, e}, "vocab_size, n_embd; tie_word_embeddings is false");
  } else if (k.head == LmHead::kTied && s.has("lm_head.weight")) {
    if (s.get("lm_head.weight", {v, e}, "vocab_size, n_embd") != w.token_embedding)
      throw Error(s.src + ": 'lm_head.weight' differs from '" + prefix + "wte.weight' but " + c.src +
                  " says tie_word_embeddings");
  }
  leftovers(s, prefix + "h.",
            std::string(lm ? "a GPT2LMHeadModel" : "a GPT2Model") +
                " with n_layer = " + std::to_string(k.num_layers),
            &m);
  return m;
}
// config.json string field `k` as one of `names` (index into `values`), `fallback` when absent.
template <class T, size_t N>
T choice(const Config& c, const char* k, const char* const (&names)[N], const T (&values)[N], T fallback) {
  const json::Value* f = c.field(k);
  if (f == nullptr) return fallback;
  std::string all;
  for (size_t i = 0; i < N; ++i) {
    if (f->type == json::Value::Type::kString && f->text == names[i]) return values[i];
    all += (i ? ", " : "") + std::string(names[i]);
  }
  c.bad(k, "must be one of " + all);
}

// The attn layout's user tensors, after the model's or blocks' own were taken: those
// "user_tensors" lists, in its order; without it every other tensor, by name. `beyond` says what an
// unknown name under "block." or "model." may be.
void attn_user_tensors(Source& s, const Config& c, const std::string& beyond, std::vector<UserTensor>* out) {
  if (const json::Value* list = c.field("user_tensors")) {
    if (list->type != json::Value::Type::kArray) c.bad("user_tensors", "must be an array of tensor names");
    for (const json::Value& n : list->items) {
      if (n.type != json::Value::Type::kString) c.bad("user_tensors", "must be an array of tensor names");
      if (s.used.count(n.text) != 0)
        c.bad("user_tensors", "names '" + n.text + "' twice, or a tensor of the model");
      out->push_back(user_tensor(s, s.at(n.text)));
    }
  }
  const bool listed = c.field("user_tensors") != nullptr;
  std::vector<UserTensor> rest;
  for (const safetensors::Tensor& t : *s.tensors) {
    if (s.used.count(t.name) != 0) continue;
    if (starts_with(t.name, "block.") || starts_with(t.name, "model."))
      throw Error(s.src + ": '" + t.name + "' is not a tensor of this model (" + c.src + ": " + beyond +
                  ", or a name attn does not know)");
    if (listed)
      throw Error(s.src + ": '" + t.name + "' is neither a tensor of the model nor in user_tensors");
    rest.push_back(user_tensor(s, t));
  }
  std::sort(rest.begin(), rest.end(),
            [](const UserTensor& a, const UserTensor& b) { return a.name < b.name; });
  for (UserTensor& u : rest) out->push_back(std::move(u));
}

// The attn layout (model_type "attn"): config.json holds TransformerConfig's own fields, the tensors
// have the names they have in a .attn file (block.<i>.wq, ..., model.token_embedding, ...), every
// other tensor is a user tensor (in the order of "user_tensors", else sorted by name).
ImportedModel import_attn(Source& s, const Config& c) {
  static const char* const kFields[] = {
      "model_type",     "user_tensors", "vocab_size", "embed_dim",         "num_layers",      "num_heads",
      "num_kv_heads",   "head_dim",     "ffn_dim",    "max_positions",     "type_vocab_size", "norm",
      "norm_eps",       "activation",   "head",       "rope_base",         "pre_norm",        "gated_ffn",
      "attention_bias", "ffn_bias",     "norm_bias",  "learned_positions", "embedding_norm",  "final_norm",
      "causal"};
  for (const auto& member : c.v->members)
    if (std::find_if(std::begin(kFields), std::end(kFields),
                     [&](const char* f) { return member.first == f; }) == std::end(kFields))
      throw Error(c.src + ": '" + member.first + "' is not a field of the attn layout (TransformerConfig's)");
  ImportedModel m;
  m.kind = "attn";
  TransformerConfig& k = m.config;
  const int64_t v = c.integer("vocab_size", 1, kMaxVocab, -1),
                e = c.integer("embed_dim", 1, ATTN_MAX_DIM, -1);
  k.vocab_size = static_cast<int32_t>(v);
  k.embed_dim = static_cast<int32_t>(e);
  k.num_layers = static_cast<int32_t>(c.integer("num_layers", 1, ATTN_MAX_LAYERS, -1));
  k.num_heads = static_cast<int32_t>(c.integer("num_heads", 1, ATTN_MAX_HEADS, -1));
  k.num_kv_heads = static_cast<int32_t>(c.integer("num_kv_heads", 0, k.num_heads, 0));
  k.head_dim = static_cast<int32_t>(c.integer("head_dim", 0, ATTN_MAX_DIM, 0));
  if (k.head_dim == 0 && e % k.num_heads != 0)
    c.bad("num_heads", "= " + std::to_string(k.num_heads) + " does not divide embed_dim (head_dim is 0)");
  const int64_t f = c.integer("ffn_dim", 1, ATTN_MAX_DIM, -1);
  k.ffn_dim = static_cast<int32_t>(f);
  const int64_t pos = c.integer("max_positions", 1, ATTN_MAX_SEQ, -1);
  k.max_positions = static_cast<int32_t>(pos);
  const int64_t types = c.integer("type_vocab_size", 0, kMaxTypeVocab, 0);
  k.type_vocab_size = static_cast<int32_t>(types);
  k.norm = choice(c, "norm", {"layer_norm", "rms_norm"}, {NormKind::kLayerNorm, NormKind::kRmsNorm}, k.norm);
  k.norm_eps = c.eps("norm_eps", static_cast<double>(k.norm_eps));
  k.activation =
      choice(c, "activation", {"gelu", "gelu_tanh", "relu", "silu"},
             {Activation::kGelu, Activation::kGeluTanh, Activation::kRelu, Activation::kSilu}, k.activation);
  k.head =
      choice(c, "head", {"none", "tied", "untied"}, {LmHead::kNone, LmHead::kTied, LmHead::kUntied}, k.head);
  const double rope = c.number("rope_base", 0.0);
  k.rope_base = static_cast<float>(rope);
  if (rope != 0.0 && !(k.rope_base > 0.0f && k.rope_base <= 1e30f))
    c.bad("rope_base", "must be 0 or in (0, 1e30]");
  using K = TransformerConfig;
  const std::pair<const char*, bool K::*> flags[] = {{"pre_norm", &K::pre_norm},
                                                     {"gated_ffn", &K::gated_ffn},
                                                     {"attention_bias", &K::attention_bias},
                                                     {"ffn_bias", &K::ffn_bias},
                                                     {"norm_bias", &K::norm_bias},
                                                     {"learned_positions", &K::learned_positions},
                                                     {"embedding_norm", &K::embedding_norm},
                                                     {"final_norm", &K::final_norm},
                                                     {"causal", &K::causal}};
  for (const auto& flag : flags) k.*flag.second = c.boolean(flag.first, k.*flag.second);

  // Each tensor the config names, with its shape; one it does not name must be absent.
  const int64_t hd = k.head_dim != 0 ? k.head_dim : e / k.num_heads;
  const int64_t d = k.num_heads * hd, dkv = (k.num_kv_heads != 0 ? k.num_kv_heads : k.num_heads) * hd;
  const bool nb = k.norm == NormKind::kLayerNorm && k.norm_bias, fb = k.ffn_bias, g = k.gated_ffn;
  const auto take = [&](const std::string& name, bool present, const char* why, std::vector<int64_t> shape,
                        std::vector<float>* out) {
    if (present) {
      *out = s.get(name, shape, "the config's dims");
    } else if (s.has(name)) {
      throw Error(s.src + ": '" + name + "' is given but the config has none (" + why + ")");
    }
  };
  using L = tools::LayerTensorsF32;
  const struct {
    const char* name;
    std::vector<float> L::*field;
    bool present;
    const char* why;
    std::vector<int64_t> shape;
  } layer[] = {{"wq", &L::wq, true, "", {d, e}},
               {"wk", &L::wk, true, "", {dkv, e}},
               {"wv", &L::wv, true, "", {dkv, e}},
               {"wo", &L::wo, true, "", {e, d}},
               {"bq", &L::bq, k.attention_bias, "attention_bias", {d}},
               {"bk", &L::bk, k.attention_bias, "attention_bias", {dkv}},
               {"bv", &L::bv, k.attention_bias, "attention_bias", {dkv}},
               {"bo", &L::bo, k.attention_bias, "attention_bias", {e}},
               {"norm1_weight", &L::norm1_weight, true, "", {e}},
               {"norm1_bias", &L::norm1_bias, nb, "norm_bias with layer_norm", {e}},
               {"norm2_weight", &L::norm2_weight, true, "", {e}},
               {"norm2_bias", &L::norm2_bias, nb, "norm_bias with layer_norm", {e}},
               {"ffn_w1", &L::w1, true, "", {f, e}},
               {"ffn_b1", &L::b1, fb, "ffn_bias", {f}},
               {"ffn_w2", &L::w2, true, "", {e, f}},
               {"ffn_b2", &L::b2, fb, "ffn_bias", {e}},
               {"ffn_w3", &L::w3, g, "gated_ffn", {f, e}},
               {"ffn_b3", &L::b3, g && fb, "gated_ffn and ffn_bias", {f}}};
  tools::TransformerTensorsF32& w = m.weights;
  w.layers.resize(static_cast<size_t>(k.num_layers));
  for (int32_t i = 0; i < k.num_layers; ++i)
    for (const auto& t : layer)
      take(tools::block_tensor_name(static_cast<size_t>(i), t.name), t.present, t.why, t.shape,
           &(w.layers[static_cast<size_t>(i)].*t.field));
  take("model.token_embedding", true, "", {v, e}, &w.token_embedding);
  take("model.position_embedding", k.learned_positions, "learned_positions", {pos, e}, &w.position_embedding);
  take("model.type_embedding", types > 0, "type_vocab_size", {types, e}, &w.type_embedding);
  take("model.embedding_norm_weight", k.embedding_norm, "embedding_norm", {e}, &w.embedding_norm_weight);
  take("model.embedding_norm_bias", k.embedding_norm && nb, "embedding_norm and norm_bias", {e},
       &w.embedding_norm_bias);
  take("model.final_norm_weight", k.final_norm, "final_norm", {e}, &w.final_norm_weight);
  take("model.final_norm_bias", k.final_norm && nb, "final_norm and norm_bias", {e}, &w.final_norm_bias);
  take("model.lm_head", k.head == LmHead::kUntied, "head untied", {v, e}, &w.lm_head);

  attn_user_tensors(s, c, "a layer beyond num_layers = " + std::to_string(k.num_layers), &m.user);
  return m;
}
// The attn layout of attention blocks (a block file): "blocks" lists each block's num_heads,
// num_kv_heads (0: num_heads) and rope_base (0: none); the rest comes from the shapes of
// block.<i>.wq [H * head_dim, E], wk [G * head_dim, kdim], wv [G * head_dim, vdim], wo [E, H * head_dim]
// and, all or none, bq bk bv bo.
tools::ModelSpec import_attn_blocks(Source& s, const Config& c) {
  for (const auto& member : c.v->members)
    if (member.first != "model_type" && member.first != "blocks" && member.first != "user_tensors")
      throw Error(c.src + ": '" + member.first + "' is not a field of the attn layout of blocks (blocks, " +
                  "user_tensors)");
  const json::Value* blocks = c.field("blocks");
  if (blocks == nullptr || blocks->type != json::Value::Type::kArray || blocks->items.empty() ||
      blocks->items.size() > ATTN_MAX_BLOCKS)
    c.bad("blocks", "must be an array of 1.." + std::to_string(ATTN_MAX_BLOCKS) + " objects");
  tools::ModelSpec spec;
  for (size_t i = 0; i < blocks->items.size(); ++i) {
    const std::string at = "blocks[" + std::to_string(i) + "]";
    Config b{c.src + ": " + at, &blocks->items[i]};
    if (b.v->type != json::Value::Type::kObject) c.bad("blocks", "must hold objects");
    for (const auto& member : b.v->members)
      if (member.first != "num_heads" && member.first != "num_kv_heads" && member.first != "rope_base")
        b.bad(member.first.c_str(), "is not a field of a block (num_heads, num_kv_heads, rope_base)");
    const int64_t h = b.integer("num_heads", 1, ATTN_MAX_HEADS, -1);
    const int64_t g = b.integer("num_kv_heads", 0, h, 0);
    const double rope = b.number("rope_base", 0.0);
    const auto name = [&](const char* role) { return tools::block_tensor_name(i, role); };
    const safetensors::Tensor& q = s.at(name("wq"));
    if (q.shape.size() != 2 || q.shape[0] < 1 || q.shape[0] > ATTN_MAX_DIM || q.shape[1] < 1 ||
        q.shape[1] > ATTN_MAX_DIM || q.shape[0] % h != 0)
      throw Error(s.src + ": '" + name("wq") + "' has shape " + Source::shape_str(q.shape) + ", not [" +
                  std::to_string(h) + " * head_dim, E] (E, head_dim in 1.." + std::to_string(ATTN_MAX_DIM) +
                  ")");
    const int64_t d = q.shape[0], e = q.shape[1], hd = d / h, dkv = (g != 0 ? g : h) * hd;
    if (rope != 0.0 && !(rope > 0.0 && rope <= 1e30 && hd % 2 == 0))
      b.bad("rope_base", "must be 0, or in (0, 1e30] with an even head_dim (" + std::to_string(hd) + ")");
    const auto in_dim = [&](const char* role) {
      const safetensors::Tensor& t = s.at(name(role));
      if (t.shape.size() != 2 || t.shape[1] < 1 || t.shape[1] > ATTN_MAX_DIM)
        throw Error(s.src + ": '" + name(role) + "' has shape " + Source::shape_str(t.shape) + ", not [" +
                    std::to_string(dkv) + ", 1.." + std::to_string(ATTN_MAX_DIM) + "]");
      return t.shape[1];
    };
    const int64_t kdim = in_dim("wk"), vdim = in_dim("wv");
    std::vector<std::vector<float>> w = {s.get(name("wq"), {d, e}, at), s.get(name("wk"), {dkv, kdim}, at),
                                         s.get(name("wv"), {dkv, vdim}, at), s.get(name("wo"), {e, d}, at)};
    const char* const biases[] = {"bq", "bk", "bv", "bo"};
    const int64_t rows[] = {d, dkv, dkv, e};
    const bool bias = s.has(name("bq")) || s.has(name("bk")) || s.has(name("bv")) || s.has(name("bo"));
    for (size_t r = 0; r < 4 && bias; ++r)
      w.push_back(s.get(name(biases[r]), {rows[r]}, at + ": all four biases or none"));
    tools::BlockSpec block;
    block.embed_dim = static_cast<uint32_t>(e);
    block.num_heads = static_cast<uint32_t>(h);
    block.head_dim = static_cast<uint32_t>(hd);
    block.kdim = static_cast<uint32_t>(kdim);
    block.vdim = static_cast<uint32_t>(vdim);
    block.bias = bias;
    block.n_kv_heads = static_cast<uint32_t>(g);
    block.rope_base = static_cast<float>(rope);
    std::vector<const std::vector<float>*> ptrs;
    for (const auto& x : w) ptrs.push_back(&x);
    tools::add_block_f32(spec, block, ptrs);
  }
  std::vector<UserTensor> user;
  attn_user_tensors(s, c, "a block beyond the " + std::to_string(blocks->items.size()) + " of blocks", &user);
  for (UserTensor& u : user) {
    tools::TensorSpec t;
    t.name = u.name;
    t.dims = u.dims;
    t.bytes = tools::f32_bytes(u.values);
    spec.tensors.push_back(std::move(t));
  }
  return spec;
}
}  // namespace

// Rows of each of `heads` heads of w [rows, cols] reordered (2i, 2i+1) -> (i, i + hd/2):
// HF's convert_llama_weights_to_hf permute, so that half-split RoPE computes llama2.c's interleaved one.
std::vector<float> interleaved_to_half_split(const std::vector<float>& w, int64_t heads, int64_t cols) {
  const int64_t rows = static_cast<int64_t>(w.size()) / cols, hd = rows / heads;
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < hd / 2; ++i)
      for (int64_t parity = 0; parity < 2; ++parity) {
        const auto from = static_cast<size_t>((h * hd + 2 * i + parity) * cols);
        const auto to = static_cast<size_t>((h * hd + parity * (hd / 2) + i) * cols);
        std::copy(w.begin() + static_cast<ptrdiff_t>(from), w.begin() + static_cast<ptrdiff_t>(from + cols),
                  out.begin() + static_cast<ptrdiff_t>(to));
      }
  return out;
}

bool is_attn_blocks(const json::Value& config) {
  const json::Value* t = config.find("model_type");
  return config.type == json::Value::Type::kObject && t != nullptr && t->type == json::Value::Type::kString &&
         t->text == "attn" && config.find("blocks") != nullptr;
}

tools::ModelSpec import_attn_blocks(const std::string& src, const std::vector<safetensors::Tensor>& tensors,
                                    const std::string& config_src, const json::Value& config) {
  Source s;
  s.src = src;
  s.tensors = &tensors;
  for (size_t i = 0; i < tensors.size(); ++i) s.index[tensors[i].name] = i;
  return import_attn_blocks(s, Config{config_src, &config});
}

ImportedModel import_hf(const std::string& src, const std::vector<safetensors::Tensor>& tensors,
                        const std::string& config_src, const json::Value& config) {
  if (config.type != json::Value::Type::kObject) throw Error(config_src + ": not a JSON object");
  Source s;
  s.src = src;
  s.tensors = &tensors;
  for (size_t i = 0; i < tensors.size(); ++i) s.index[tensors[i].name] = i;
  Config c;
  c.src = config_src;
  c.v = &config;
  if (c.string("model_type", "") == "attn") return import_attn(s, c);
  const std::string kind = model_kind(s, c);
  if (kind == "bert" || kind == "roberta") return import_bert(s, c, kind == "roberta");
  if (kind == "distilbert") return import_distilbert(s, c);
  if (kind == "gpt2") return import_gpt2(s, c);
  return import_llama(s, c, kind);
}

ImportedModel import_llama2c(const std::string& src, const uint8_t* data, size_t size) {
  // Version 0 (legacy): seven int32 (a negative vocab_size: an untied
  // classifier), then the weights in run.c's order with RoPE's freq_cis
  // tables. Version 1 (export.py --version 1): "ak42", int32 version, the
  // seven int32, a byte "shared classifier", zeros to 256 bytes; the weights
  // in another order and no freq_cis. Version 2 (Q8_0) is refused.
  constexpr size_t kLegacyHeader = 7 * sizeof(int32_t), kV1Header = 256;
  constexpr uint32_t kMagic = 0x616b3432u;  // "ak42"
  if (size < kLegacyHeader)
    throw Error(src + ": " + std::to_string(size) + " bytes, shorter than llama2.c's 28-byte header");
  uint32_t magic = 0;
  std::memcpy(&magic, data, sizeof magic);
  int version = 0;
  int32_t hd[7];
  bool shared = false;
  size_t header = kLegacyHeader;
  if (magic == kMagic) {
    if (size < kV1Header)
      throw Error(src + ": " + std::to_string(size) +
                  " bytes, shorter than llama2.c's 256-byte version 1 header");
    int32_t ver = 0;
    std::memcpy(&ver, data + 4, sizeof ver);
    if (ver == 2)
      throw Error(
          src +
          ": a llama2.c version 2 export (Q8_0 weights, group-wise float scales): attn imports float "
          "checkpoints and quantizes them itself; export with --version 1 or 0 and run attn quantize");
    if (ver != 1)
      throw Error(src + ": a llama2.c export of version " + std::to_string(ver) + " (attn reads 0 and 1)");
    std::memcpy(hd, data + 8, sizeof hd);
    if (data[36] > 1)
      throw Error(src + ": llama2.c version 1 header: shared_classifier is " + std::to_string(data[36]));
    shared = data[36] == 1;
    for (size_t i = 37; i < kV1Header; ++i)
      if (data[i] != 0)
        throw Error(src + ": llama2.c version 1 header: byte " + std::to_string(i) + " is not 0");
    if (hd[5] < 1)
      throw Error(src + ": llama2.c version 1 header: vocab_size " + std::to_string(hd[5]) + " < 1");
    version = 1;
    header = kV1Header;
  } else {
    std::memcpy(hd, data, sizeof hd);
    shared = hd[5] > 0;
  }
  const char* names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  const int64_t caps[7] = {ATTN_MAX_DIM,   ATTN_MAX_DIM, ATTN_MAX_LAYERS, ATTN_MAX_HEADS,
                           ATTN_MAX_HEADS, kMaxVocab,    ATTN_MAX_SEQ};
  int64_t v[7];
  for (int i = 0; i < 7; ++i) {
    v[i] = i == 5 ? std::llabs(static_cast<long long>(hd[i])) : hd[i];  // a negative vocab: untied classifier
    if (v[i] < 1 || v[i] > caps[i])
      throw Error(src + ": llama2.c header " + names[i] + " = " + std::to_string(hd[i]) +
                  " is out of range (1 .. " + std::to_string(caps[i]) + ")");
  }
  const int64_t dim = v[0], hidden = v[1], layers = v[2], heads = v[3], kv = v[4], vocab = v[5], seq = v[6];
  if (dim % heads != 0 || heads % kv != 0 || (dim / heads) % 2 != 0)
    throw Error(src + ": llama2.c header: n_heads " + std::to_string(heads) + " must divide dim " +
                std::to_string(dim) + " into an even head size, and n_kv_heads " + std::to_string(kv) +
                " must divide n_heads");
  const int64_t hs = dim / heads, kvd = kv * hs;
  // Floats in the file; everything is below 2^63 with the caps above.
  const int64_t want = vocab * dim +
                       layers * (dim + dim * dim + 2 * kvd * dim + dim * dim + dim + 3 * hidden * dim) + dim +
                       (version == 0 ? seq * hs : 0) + (shared ? 0 : vocab * dim);
  const uint64_t want_bytes = header + static_cast<uint64_t>(want) * 4;
  if (size != want_bytes)
    throw Error(src + ": " + std::to_string(size) + " bytes, but a llama2.c version " +
                std::to_string(version) + " checkpoint with dim " + std::to_string(dim) + ", hidden_dim " +
                std::to_string(hidden) + ", n_layers " + std::to_string(layers) + ", n_heads " +
                std::to_string(heads) + ", n_kv_heads " + std::to_string(kv) + ", vocab_size " +
                std::to_string(hd[5]) + ", seq_len " + std::to_string(seq) + " has " +
                std::to_string(want_bytes) + (size < want_bytes ? " (truncated)" : ""));
  const uint8_t* p = data + header;
  const auto take = [&](int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    std::memcpy(out.data(), p, out.size() * 4);
    p += out.size() * 4;
    return out;
  };
  ImportedModel m;
  m.kind = "llama2.c";
  TransformerConfig& k = m.config;
  k.vocab_size = static_cast<int32_t>(vocab);
  k.embed_dim = static_cast<int32_t>(dim);
  k.num_layers = static_cast<int32_t>(layers);
  k.num_heads = static_cast<int32_t>(heads);
  k.num_kv_heads = static_cast<int32_t>(kv);
  k.head_dim = static_cast<int32_t>(hs);
  k.ffn_dim = static_cast<int32_t>(hidden);
  k.max_positions = static_cast<int32_t>(seq);
  k.norm = NormKind::kRmsNorm;
  k.norm_eps = 1e-5f;
  k.activation = Activation::kSilu;
  k.head = shared ? LmHead::kTied : LmHead::kUntied;
  k.rope_base = 10000.0f;
  k.pre_norm = k.gated_ffn = k.final_norm = k.causal = true;
  k.attention_bias = k.ffn_bias = k.norm_bias = k.learned_positions = k.embedding_norm = false;
  tools::TransformerTensorsF32& w = m.weights;
  w.layers.resize(static_cast<size_t>(layers));
  const auto attention = [&] {
    for (auto& L : w.layers) L.wq = interleaved_to_half_split(take(dim * dim), heads, dim);
    for (auto& L : w.layers) L.wk = interleaved_to_half_split(take(kvd * dim), kv, dim);
    for (auto& L : w.layers) L.wv = take(kvd * dim);
    for (auto& L : w.layers) L.wo = take(dim * dim);
  };
  if (version == 0) {
    w.token_embedding = take(vocab * dim);
    for (auto& L : w.layers) L.norm1_weight = take(dim);
    attention();
    for (auto& L : w.layers) L.norm2_weight = take(dim);
  } else {
    for (auto& L : w.layers) L.norm1_weight = take(dim);
    for (auto& L : w.layers) L.norm2_weight = take(dim);
    w.final_norm_weight = take(dim);
    w.token_embedding = take(vocab * dim);
    attention();
  }
  for (auto& L : w.layers) L.w1 = take(hidden * dim);
  for (auto& L : w.layers) L.w2 = take(dim * hidden);
  for (auto& L : w.layers) L.w3 = take(hidden * dim);
  if (version == 0) {
    w.final_norm_weight = take(dim);
    p += static_cast<size_t>(seq * hs) * 4;  // freq_cis_real, freq_cis_imag: attn computes its own
  }
  if (!shared) w.lm_head = take(vocab * dim);
  return m;
}

std::vector<uint8_t> write_imported(const ImportedModel& m, bool byte_vocab,
                                    const std::vector<uint8_t>& tokenizer) {
  tools::ModelSpec spec;
  tools::add_transformer_f32(spec, m.config, byte_vocab, m.weights);
  if (!tokenizer.empty()) tools::add_tokenizer(spec, tokenizer);
  // The file's cap first: the names' check below is then over at most 4096.
  const size_t count = spec.tensors.size() + m.user.size();
  if (count > ATTN_MAX_TENSORS)
    throw Error(std::to_string(count) + " tensors (" + std::to_string(spec.tensors.size()) +
                " of the model, " + std::to_string(m.user.size()) +
                " other float tensors kept as user tensors) is more than the " +
                std::to_string(ATTN_MAX_TENSORS) + " a .attn file holds (ATTN_MAX_TENSORS)");
  for (const UserTensor& u : m.user) {
    tools::TensorSpec t;
    t.name = u.name;
    t.dims = u.dims;
    t.bytes = tools::f32_bytes(u.values);
    spec.tensors.push_back(std::move(t));
  }
  for (size_t i = 0; i < spec.tensors.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (spec.tensors[i].name == spec.tensors[j].name)
        throw Error("tensor name '" + spec.tensors[i].name + "' used twice");
  return tools::write_model(spec);
}

}  // namespace cli
}  // namespace attn
