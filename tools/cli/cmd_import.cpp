// cmd_import.cpp: `attn import MODEL.safetensors --heads H|PREFIX=H... [--prefix P]
// [--extra NAME=KEY]... -o OUT.attn` (attention blocks), and whole models:
//   attn import MODEL.safetensors --config config.json [--byte-vocab] -o OUT.attn   (HF models, attn layout;
//                                                                  its "blocks" form: a block file)
//   attn import MODEL.bin [--byte-vocab] -o OUT.attn                                 (llama2.c)
// --byte-vocab: ids 0..255 are the bytes (the model record's flag), and the file carries that
// tokenizer (a kBytes section of the 256 byte pieces, no special tokens).
// (import_model.cpp reads those). The one importer: tools/export/attn_export.py writes a PyTorch
// module's weights as safetensors and runs this. Block import finds these layouts:
//   P in_proj_weight [3E, E] (+ in_proj_bias, out_proj.*)     nn.MultiheadAttention, packed
//   P q_proj_weight / k_proj_weight / v_proj_weight            nn.MultiheadAttention, kdim/vdim != E
//   P self.query/key/value.* + P output.dense.*                 BERT-style self-attention
//   P self_attn.q_proj/k_proj/v_proj/o_proj.weight              HF Llama (GQA, RoPE)
//   P attention.wq/wk/wv/wo.weight                              llama2.c / Meta Llama (GQA, RoPE)
// Llama blocks: G = k_proj rows / head_dim (--kv-heads checks it), RoPE base
// 10000 unless --rope-base (0: none); llama2.c's interleaved rotary pairs are
// turned into HF's half-split ones by permuting wq/wk rows per head.
// (TransformerEncoderLayer's self_attn is the first kind under "...self_attn.").
// Blocks are ordered by their prefix, digit runs compared as numbers. --heads H
// is every block's heads, --heads PREFIX=H the block's under PREFIX (a module
// whose blocks differ: tools/export/attn_export.py passes each nn.MultiheadAttention's).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "cli/cli.h"
#include "cli/import_model.h"
#include "cli/json.h"
#include "cli/safetensors.h"
#include "cli/tokenizer_files.h"
#include "format/writer.h"

namespace attn {
namespace {

using cli::Error;

// Digit runs compare as numbers ("layers.2" < "layers.10").
struct Token {
  bool digits;
  std::string text;  // digits without leading zeros, or the text
};
std::vector<Token> tokens(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const bool d = s[i] >= '0' && s[i] <= '9';
    size_t j = i;
    while (j < s.size() && (s[j] >= '0' && s[j] <= '9') == d) ++j;
    std::string t = s.substr(i, j - i);
    if (d) {
      const size_t nz = t.find_first_not_of('0');
      t = nz == std::string::npos ? "0" : t.substr(nz);
    }
    out.push_back({d, t});
    i = j;
  }
  return out;
}
bool natural_less(const std::string& a, const std::string& b) {
  const std::vector<Token> x = tokens(a), y = tokens(b);
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const Token &p = x[i], &q = y[i];
    if (p.digits != q.digits) return p.digits;  // a number sorts before text
    if (p.digits) {
      if (p.text.size() != q.text.size()) return p.text.size() < q.text.size();
      if (p.text != q.text) return p.text < q.text;
    } else if (p.text != q.text) {
      return p.text < q.text;
    }
  }
  return x.size() < y.size();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct State {
  std::string src;
  std::vector<safetensors::Tensor> tensors;
  std::map<std::string, size_t> index;

  bool has(const std::string& k) const { return index.count(k) != 0; }
  const safetensors::Tensor& at(const std::string& k) const {
    auto it = index.find(k);
    if (it == index.end()) throw Error(src + ": missing tensor '" + k + "'");
    return tensors[it->second];
  }
  std::vector<float> f32(const std::string& k) const {
    try {
      return safetensors::to_f32(at(k));
    } catch (const std::runtime_error& e) {
      throw Error(src + ": " + e.what());
    }
  }
  std::string shape_str(const std::string& k) const {
    std::string s = "[";
    for (size_t i = 0; i < at(k).shape.size(); ++i) s += (i ? ", " : "") + std::to_string(at(k).shape[i]);
    return s + "]";
  }
  // Shape of `k` must be `want`.
  void expect_shape(const std::string& k, const std::vector<int64_t>& want) const {
    if (at(k).shape != want) {
      std::string w = "[";
      for (size_t i = 0; i < want.size(); ++i) w += (i ? ", " : "") + std::to_string(want[i]);
      throw Error(src + ": '" + k + "' has shape " + shape_str(k) + ", expected " + w + "]");
    }
  }
};

// A dimension of a weight: Error unless it is in [1, ATTN_MAX_DIM] (the
// library's limit, include/attn/config.h). Checked before any tensor is read.
int64_t check_dim(const State& st, const std::string& p, const char* what, int64_t v) {
  if (v < 1 || v > ATTN_MAX_DIM)
    throw Error(st.src + ": '" + p + "': " + what + " = " + std::to_string(v) + " is out of range (1 .. " +
                std::to_string(ATTN_MAX_DIM) + ", the library's ATTN_MAX_DIM)");
  return v;
}

struct Found {
  std::string prefix;
  std::string kind;  // mha_packed, mha_separate, bert
};

std::vector<Found> find_blocks(const State& st, const std::string* prefix) {
  static const std::pair<const char*, const char*> kSuffixes[] = {{"in_proj_weight", "mha_packed"},
                                                                  {"q_proj_weight", "mha_separate"},
                                                                  {"self.query.weight", "bert"},
                                                                  {"self_attn.q_proj.weight", "llama_hf"},
                                                                  {"attention.wq.weight", "llama2c"}};
  std::vector<Found> found;
  std::map<std::string, size_t> seen;  // prefix -> index in found
  for (const safetensors::Tensor& t : st.tensors) {
    for (const auto& sk : kSuffixes) {
      if (!ends_with(t.name, sk.first)) continue;
      const std::string p = t.name.substr(0, t.name.size() - std::strlen(sk.first));
      if (!p.empty() && p.back() != '.') continue;
      const auto at = seen.find(p);  // a map: files with many tensors stay O(n log n)
      if (at != seen.end()) {
        const Found& it = found[at->second];
        if (it.kind != sk.second)
          throw Error(st.src + ": '" + p + "' holds both " + it.kind + " and " + sk.second + " weights");
        continue;
      }
      seen.emplace(p, found.size());
      found.push_back({p, sk.second});
    }
  }
  std::vector<Found> kept;
  for (const Found& f : found)
    if (prefix == nullptr || f.prefix.compare(0, prefix->size(), *prefix) == 0) kept.push_back(f);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Found& a, const Found& b) { return natural_less(a.prefix, b.prefix); });
  if (kept.empty()) {
    const std::string where = prefix ? " under prefix '" + *prefix + "'" : "";
    throw Error(st.src + ": no attention weights found" + where +
                " (looked for *in_proj_weight, *q_proj_weight, *self.query.weight, *self_attn.q_proj.weight, "
                "*attention.wq.weight)");
  }
  return kept;
}

using cli::interleaved_to_half_split;

struct LlamaOptions {
  int64_t kv_heads = -1;       // -1: from k_proj's rows
  float rope_base = 10000.0f;  // 0: no rotary embedding
};

void add_llama_block(const State& st, const Found& f, int64_t heads, const LlamaOptions& opt,
                     tools::ModelSpec* spec) {
  const std::string& p = f.prefix;
  const bool hf = f.kind == "llama_hf";
  std::vector<std::string> names, bias_keys;
  for (const char* n : {"q", "k", "v", "o"}) {
    names.push_back(hf ? p + "self_attn." + n + "_proj.weight" : p + "attention.w" + n + ".weight");
    bias_keys.push_back(hf ? p + "self_attn." + n + "_proj.bias" : p + "attention.w" + n + ".bias");
  }
  if (st.at(names[0]).shape.size() != 2) throw Error(st.src + ": '" + names[0] + "' must be 2-D");
  const int64_t d =
      check_dim(st, p, "the query projection's rows (heads * head_dim)", st.at(names[0]).shape[0]);
  const int64_t e = check_dim(st, p, "E", st.at(names[0]).shape[1]);
  if (d % heads != 0)
    throw Error(st.src + ": " + std::to_string(heads) + " heads do not divide the width " +
                std::to_string(d) + " of '" + p + "'");
  const int64_t hd = d / heads;
  const auto& ks = st.at(names[1]).shape;
  if (ks.size() != 2 || ks[1] != e || ks[0] < 1 || ks[0] % hd != 0)
    throw Error(st.src + ": '" + names[1] + "' has shape " + st.shape_str(names[1]) +
                ", expected [n_kv_heads * " + std::to_string(hd) + ", " + std::to_string(e) + "]");
  const int64_t kv = ks[0] / hd;
  if (opt.kv_heads >= 0 && opt.kv_heads != kv)
    throw Error(st.src + ": --kv-heads " + std::to_string(opt.kv_heads) + " but '" + names[1] + "' has " +
                std::to_string(ks[0]) + " rows = " + std::to_string(kv) + " heads of " + std::to_string(hd));
  if (kv == 0 || heads % kv != 0)
    throw Error(st.src + ": " + std::to_string(kv) + " K/V heads do not divide the " + std::to_string(heads) +
                " heads of '" + p + "'");
  st.expect_shape(names[2], {kv * hd, e});
  st.expect_shape(names[3], {e, d});
  const bool rope = opt.rope_base != 0.0f;
  if (rope && hd % 2 != 0)
    throw Error(st.src + ": rotary embeddings need an even head_dim, '" + p + "' has " + std::to_string(hd));
  size_t present = 0;
  std::string missing;
  for (const std::string& k : bias_keys) {
    if (st.has(k)) {
      ++present;
    } else {
      missing += (missing.empty() ? "" : ", ") + k;
    }
  }
  if (present != 0 && present != bias_keys.size())
    throw Error(st.src + ": '" + p + "' has some biases but not " + missing);
  const bool bias = present != 0;
  std::vector<std::vector<float>> w = {st.f32(names[0]), st.f32(names[1]), st.f32(names[2]),
                                       st.f32(names[3])};
  const bool permute = !hf && rope;
  if (permute) {
    w[0] = interleaved_to_half_split(w[0], heads, e);
    w[1] = interleaved_to_half_split(w[1], kv, e);
  }
  if (bias) {
    const int64_t n[4] = {d, kv * hd, kv * hd, e};
    for (size_t i = 0; i < 4; ++i) {
      st.expect_shape(bias_keys[i], {n[i]});
      w.push_back(st.f32(bias_keys[i]));
    }
    if (permute) {
      w[4] = interleaved_to_half_split(w[4], heads, 1);
      w[5] = interleaved_to_half_split(w[5], kv, 1);
    }
  }
  tools::BlockSpec b;
  b.embed_dim = static_cast<uint32_t>(e);
  b.num_heads = static_cast<uint32_t>(heads);
  b.head_dim = static_cast<uint32_t>(hd);
  b.kdim = b.vdim = static_cast<uint32_t>(e);
  b.bias = bias;
  b.n_kv_heads = static_cast<uint32_t>(kv);
  b.rope_base = opt.rope_base;
  if (e <= 0 || e > 0xFFFFFFFF || hd <= 0) throw Error(st.src + ": '" + p + "': E out of range");
  std::vector<const std::vector<float>*> ptrs;
  for (const auto& x : w) ptrs.push_back(&x);
  tools::add_block_f32(*spec, b, ptrs);
}

void add_block(const State& st, const Found& f, int64_t heads, tools::ModelSpec* spec) {
  const std::string& p = f.prefix;
  std::vector<std::vector<float>> w;  // wq wk wv wo (bq bk bv bo)
  int64_t e = 0, d = 0, kdim = 0, vdim = 0;
  std::vector<std::string> bias_keys;
  if (f.kind == "bert") {
    const std::string q = p + "self.query.weight", k = p + "self.key.weight", v = p + "self.value.weight",
                      o = p + "output.dense.weight";
    if (st.at(q).shape.size() != 2) throw Error(st.src + ": '" + q + "' must be 2-D");
    d = check_dim(st, p, "the query projection's rows", st.at(q).shape[0]);
    e = check_dim(st, p, "E", st.at(q).shape[1]);
    kdim = vdim = e;
    st.expect_shape(k, {d, e});
    st.expect_shape(v, {d, e});
    st.expect_shape(o, {e, d});
    w = {st.f32(q), st.f32(k), st.f32(v), st.f32(o)};
    bias_keys = {p + "self.query.bias", p + "self.key.bias", p + "self.value.bias", p + "output.dense.bias"};
  } else {
    if (st.has(p + "bias_k") || st.has(p + "bias_v"))
      throw Error(st.src + ": '" + p + "' uses add_bias_kv, which attn does not support");
    const std::string o = p + "out_proj.weight";
    const auto& os = st.at(o).shape;
    if (os.size() != 2 || os[0] != os[1]) throw Error(st.src + ": '" + o + "' must be square [E, E]");
    e = d = check_dim(st, p, "E", os[0]);
    if (f.kind == "mha_packed") {
      const std::string in = p + "in_proj_weight";
      st.expect_shape(in, {3 * e, e});
      const std::vector<float> all = st.f32(in);
      const auto n = static_cast<ptrdiff_t>(e * e);
      w = {std::vector<float>(all.begin(), all.begin() + n),
           std::vector<float>(all.begin() + n, all.begin() + 2 * n),
           std::vector<float>(all.begin() + 2 * n, all.end())};
      kdim = vdim = e;
    } else {
      const std::string q = p + "q_proj_weight", k = p + "k_proj_weight", v = p + "v_proj_weight";
      st.expect_shape(q, {e, e});
      if (st.at(k).shape.size() != 2 || st.at(k).shape[0] != e)
        throw Error(st.src + ": '" + k + "' must be [E, kdim] with E = " + std::to_string(e));
      if (st.at(v).shape.size() != 2 || st.at(v).shape[0] != e)
        throw Error(st.src + ": '" + v + "' must be [E, vdim] with E = " + std::to_string(e));
      kdim = check_dim(st, p, "kdim", st.at(k).shape[1]);
      vdim = check_dim(st, p, "vdim", st.at(v).shape[1]);
      w = {st.f32(q), st.f32(k), st.f32(v)};
    }
    w.push_back(st.f32(o));
    bias_keys = {p + "in_proj_bias", p + "out_proj.bias"};
  }
  size_t present = 0;
  std::vector<std::string> missing;
  for (const std::string& k : bias_keys) {
    if (st.has(k)) {
      ++present;
    } else {
      missing.push_back(k);
    }
  }
  if (present != 0 && present != bias_keys.size()) {
    std::string m;
    for (const std::string& k : missing) m += (m.empty() ? "" : ", ") + k;
    throw Error(st.src + ": '" + p + "' has some biases but not " + m);
  }
  const bool bias = present != 0;
  if (bias) {
    if (f.kind == "bert") {
      const int64_t n[4] = {d, d, d, e};
      for (int i = 0; i < 4; ++i) {
        st.expect_shape(bias_keys[static_cast<size_t>(i)], {n[i]});
        w.push_back(st.f32(bias_keys[static_cast<size_t>(i)]));
      }
    } else {
      st.expect_shape(bias_keys[0], {3 * d});
      st.expect_shape(bias_keys[1], {e});
      const std::vector<float> b = st.f32(bias_keys[0]);
      const auto n = static_cast<ptrdiff_t>(d);
      w.emplace_back(b.begin(), b.begin() + n);
      w.emplace_back(b.begin() + n, b.begin() + 2 * n);
      w.emplace_back(b.begin() + 2 * n, b.end());
      w.push_back(st.f32(bias_keys[1]));
    }
  }
  if (d % heads != 0)
    throw Error(st.src + ": " + std::to_string(heads) + " heads do not divide the width " +
                std::to_string(d) + " of '" + p + "'");
  auto u32 = [&](int64_t v, const char* what) {
    if (v <= 0 || v > 0xFFFFFFFF) throw Error(st.src + ": '" + p + "': " + what + " out of range");
    return static_cast<uint32_t>(v);
  };
  tools::BlockSpec b;
  b.embed_dim = u32(e, "E");
  b.num_heads = u32(heads, "heads");
  b.head_dim = u32(d / heads, "head_dim");
  b.kdim = u32(kdim, "kdim");
  b.vdim = u32(vdim, "vdim");
  b.bias = bias;
  std::vector<const std::vector<float>*> ptrs;
  for (const auto& x : w) ptrs.push_back(&x);
  tools::add_block_f32(*spec, b, ptrs);
}

// --heads: H for every block, PREFIX=H for the block under that prefix (which wins), repeatable.
class Heads {
 public:
  explicit Heads(const std::vector<std::string>& values) {
    for (const std::string& v : values) {
      const size_t eq = v.rfind('=');
      const std::string n = eq == std::string::npos ? v : v.substr(eq + 1);
      char* end = nullptr;
      const long long h = std::strtoll(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || h < 1 || h > ATTN_MAX_HEADS)
        throw Error("--heads " + v + ": expected H or PREFIX=H with H in 1.." +
                    std::to_string(ATTN_MAX_HEADS));
      if (eq == std::string::npos) {
        if (all_ > 0) throw Error("--heads H given twice (PREFIX=H sets one block's)");
        all_ = h;
      } else if (!by_prefix_.emplace(v.substr(0, eq), h).second) {
        throw Error("--heads " + v + ": the prefix is given twice");
      }
    }
  }
  // The heads of the block under prefix p.
  int64_t of(const std::string& p) {
    const auto it = by_prefix_.find(p);
    if (it != by_prefix_.end()) {
      used_.insert(p);
      return it->second;
    }
    if (all_ < 0)
      throw Error("no --heads for the attention block '" + p + "' (--heads H for every block, or --heads " +
                  p + "=H)");
    return all_;
  }
  // Every PREFIX=H named a block: a misspelled prefix is an error, not ignored.
  void check_all_used() const {
    for (const auto& ph : by_prefix_)
      if (used_.count(ph.first) == 0)
        throw Error("--heads " + ph.first + "=" + std::to_string(ph.second) +
                    ": no attention block has prefix '" + ph.first + "'");
  }

 private:
  int64_t all_ = -1;
  std::map<std::string, int64_t> by_prefix_;
  std::set<std::string> used_;
};

// The block and tensor counts of a model file.
struct Counts {
  uint32_t blocks, tensors;
};

// Writes `file` (converted from `in`) to `out` after loading it as the loader
// would: never write what the loader would reject.
Counts check_and_write(const std::string& in, const std::string& out, const std::vector<uint8_t>& file) {
  cli::AlignedBytes check(file.size());
  std::memcpy(check.data(), file.data(), file.size());
  Model m;
  const Status s = Model::load(check.data(), check.size(), &m);
  if (s != Status::kOk) throw Error(in + ": the converted model is invalid: " + cli::describe(s));
  cli::write_file_atomic(out, file.data(), file.size());
  return {m.block_count(), m.tensor_count()};
}

// Write the block file of `spec` (imported from `in`) to `out`, if the loader accepts it.
int write_checked(const std::string& in, const std::string& out, const tools::ModelSpec& spec) {
  // The file's cap first: the names' check below is then over at most ATTN_MAX_TENSORS.
  if (spec.tensors.size() > ATTN_MAX_TENSORS)
    throw Error(in + ": " + std::to_string(spec.tensors.size()) + " tensors, more than the " +
                std::to_string(ATTN_MAX_TENSORS) + " a .attn file holds (ATTN_MAX_TENSORS)");
  for (size_t i = 0; i < spec.tensors.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (spec.tensors[i].name == spec.tensors[j].name)
        throw Error("tensor name '" + spec.tensors[i].name + "' used twice");
  std::vector<uint8_t> file;
  try {
    file = tools::write_model(spec);
  } catch (const std::runtime_error& e) {
    throw Error(in + ": " + e.what());
  }
  const Counts n = check_and_write(in, out, file);
  std::printf("attn import: wrote %s (%zu bytes, %u blocks, %u tensors)\n", out.c_str(), file.size(),
              n.blocks, n.tensors);
  return 0;
}

// The largest config.json read: Hugging Face configs are a few kilobytes.
constexpr uint64_t kMaxConfigBytes = uint64_t{1} << 20;

// A whole model: HF safetensors with --config, or a llama2.c .bin.
int import_whole_model(const cli::Args& args, const std::string& in, const std::string& out) {
  for (const char* o : {"--heads", "--kv-heads", "--rope-base", "--prefix", "--extra"})
    if (args.has(o))
      throw Error(
          std::string(o) +
          " is for attention blocks; a whole model takes its shape from --config or the llama2.c header");
  const cli::MappedFile file_map(in);
  cli::ImportedModel m;
  if (args.has("--config")) {
    const std::string cfg_path = args.get("--config");
    // A config is kilobytes; a huge one would only cost minutes and gigabytes to parse.
    const std::vector<uint8_t> text =
        cli::read_file(cfg_path, kMaxConfigBytes, "1 MiB (1048576 bytes) a config.json may have");
    json::Value cfg;
    try {
      cfg = json::parse(std::string(text.begin(), text.end()));
    } catch (const std::runtime_error& e) {
      throw Error(cfg_path + ": " + e.what());
    }
    std::vector<safetensors::Tensor> tensors;
    try {
      tensors = safetensors::parse(file_map.data(), file_map.size());
    } catch (const std::runtime_error& e) {
      throw Error(in + ": " + e.what());
    }
    if (cli::is_attn_blocks(cfg)) {
      for (const char* o : {"--byte-vocab", "--tokenizer"})
        if (args.has(o)) throw Error(std::string(o) + " is for whole models, not the blocks of " + cfg_path);
      return write_checked(in, out, cli::import_attn_blocks(in, tensors, cfg_path, cfg));
    }
    m = cli::import_hf(in, tensors, cfg_path, cfg);
  } else {
    m = cli::import_llama2c(in, file_map.data(), file_map.size());
  }
  const bool byte_vocab = args.has("--byte-vocab");
  if (byte_vocab && m.config.vocab_size < 256)
    throw Error("--byte-vocab: the vocabulary has " + std::to_string(m.config.vocab_size) +
                " tokens, fewer than the 256 bytes");
  // The tokenizer: --tokenizer PATH, else one beside config.json.
  if (args.has("--tokenizer") && (byte_vocab || args.has("--no-tokenizer")))
    throw Error(std::string("--tokenizer and ") + (byte_vocab ? "--byte-vocab" : "--no-tokenizer") +
                " exclude each other");
  std::string tok_path = args.has("--tokenizer") ? args.get("--tokenizer") : std::string();
  bool picked_up = false;
  if (tok_path.empty() && args.has("--config") && !args.has("--no-tokenizer") && !byte_vocab) {
    tok_path = cli::tokenizer_beside(args.get("--config"));
    picked_up = !tok_path.empty();
  }
  std::vector<uint8_t> tokenizer;
  std::string tok_kind;
  if (!tok_path.empty()) tokenizer = cli::tokenizer_blob(tok_path, m.config.vocab_size, &tok_kind);
  // A byte vocabulary carries its tokenizer too (the 256 byte pieces), so text goes in and out of
  // the file through Model::tokenizer() like any other model's, on the host and on a device.
  if (byte_vocab) tokenizer = cli::bytes_tokenizer_blob();
  std::vector<uint8_t> file;
  try {
    file = cli::write_imported(m, byte_vocab, tokenizer);
  } catch (const std::runtime_error& e) {
    throw Error(in + ": " + e.what());
  }
  const Counts n = check_and_write(in, out, file);
  if (!tok_path.empty())
    std::printf("attn import: tokenizer: %s, %s%s (%zu bytes)\n", tok_kind.c_str(), tok_path.c_str(),
                picked_up ? ", found beside the config (--no-tokenizer leaves it out)" : "",
                tokenizer.size());
  if (byte_vocab)
    std::printf("attn import: tokenizer: bytes (--byte-vocab: ids 0..255 are the bytes; %zu bytes)\n",
                tokenizer.size());
  for (const std::string& note : m.notes) std::printf("attn import: note: %s\n", note.c_str());
  std::printf("attn import: wrote %s (%zu bytes, %s model, %d layers, %u tensors)\n", out.c_str(),
              file.size(), m.kind.c_str(), m.config.num_layers, n.tensors);
  return 0;
}

}  // namespace

int cmd_import(int argc, char** argv) {
  const cli::Args args(argc, argv,
                       {"--heads", "--prefix", "--kv-heads", "--rope-base", "--extra", "--config",
                        "--tokenizer", "-o", "--output"},
                       {"--byte-vocab", "--no-tokenizer"});
  const std::string in = args.one_input("MODEL.safetensors");
  const std::string out = args.output();
  if (args.has("--config") || (!args.has("--heads") && ends_with(in, ".bin")))
    return import_whole_model(args, in, out);
  for (const char* o : {"--byte-vocab", "--tokenizer", "--no-tokenizer"})
    if (args.has(o)) throw Error(std::string(o) + " is for whole models (--config, or a llama2.c .bin)");
  if (!args.has("--heads"))
    throw Error(
        "missing option --heads (safetensors files do not record the number of heads), or --config for a "
        "whole "
        "model");
  Heads heads(args.all("--heads"));

  LlamaOptions llama;
  llama.kv_heads = args.get_int("--kv-heads", -1, 1, ATTN_MAX_HEADS);
  if (args.has("--rope-base")) {
    // 0 exactly: no rotary embedding. Anything else must be a finite float32
    // in (0, 1e30] that does not round to 0 (or a subnormal) as float32.
    const std::string r = args.get("--rope-base");
    char* end = nullptr;
    const double v = std::strtod(r.c_str(), &end);
    const float fv = static_cast<float>(v);
    const bool zero = v == 0.0 && *end == '\0';
    if (r.empty() || *end != '\0' ||
        !(zero || (std::isfinite(v) && v > 0.0 && std::isnormal(fv) && fv <= 1e30f)))
      throw Error(
          "--rope-base " + r +
          ": must be a number > 0 and <= 1e30 that float32 represents (at least 1.2e-38), or 0 for no "
          "rotary embedding");
    llama.rope_base = zero ? 0.0f : fv;
  }

  State st;
  st.src = in;
  // Mapped, not read: the header and the dims are checked before any tensor's bytes are touched.
  const cli::MappedFile file_map(in);
  try {
    st.tensors = safetensors::parse(file_map.data(), file_map.size());
  } catch (const std::runtime_error& e) {
    throw Error(in + ": " + e.what());
  }
  for (size_t i = 0; i < st.tensors.size(); ++i) st.index[st.tensors[i].name] = i;

  const std::string prefix = args.get("--prefix");
  tools::ModelSpec spec;
  for (const Found& f : find_blocks(st, args.has("--prefix") ? &prefix : nullptr)) {
    if (f.kind == "llama_hf" || f.kind == "llama2c") {
      add_llama_block(st, f, heads.of(f.prefix), llama, &spec);
    } else {
      add_block(st, f, heads.of(f.prefix), &spec);
    }
  }
  heads.check_all_used();
  for (const std::string& ex : args.all("--extra")) {
    const size_t eq = ex.find('=');
    if (eq == std::string::npos) throw Error("--extra '" + ex + "': expected NAME=KEY");
    const std::string name = ex.substr(0, eq), key = ex.substr(eq + 1);
    if (!st.has(key)) throw Error(in + ": --extra " + ex + ": no tensor '" + key + "'");
    const safetensors::Tensor& t = st.at(key);
    if (t.shape.empty() || t.shape.size() > 4)
      throw Error(in + ": --extra " + ex + ": rank must be 1..4, got " + std::to_string(t.shape.size()));
    tools::TensorSpec ts;
    ts.name = name;
    for (int64_t v : t.shape) {
      if (v <= 0 || v > int64_t{ATTN_MAX_TENSOR_DIM})
        throw Error(in + ": --extra " + ex + ": dim out of range");
      ts.dims.push_back(static_cast<uint32_t>(v));
    }
    ts.bytes = tools::f32_bytes(st.f32(key));
    spec.tensors.push_back(std::move(ts));
  }
  return write_checked(in, out, spec);
}

}  // namespace attn
