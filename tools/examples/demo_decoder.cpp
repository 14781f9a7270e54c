// attn_example_demo_decoder: a byte-level Llama, run whole by attn
// (tools/demo.sh, part 2).
//
// The model (tests/data/tiny_llama, trained by tools/train/train_tiny_llama.py on
// the licence texts of /usr/share/common-licenses) predicts the next byte.
// tools/demo.sh imports it (`attn import --config config.json --byte-vocab`:
// the file carries its tokenizer, the 256 byte pieces) and quantizes it
// (`attn quantize --calib-tokens`, windows of the training text from
// --write-calib). This program, for the f32, s8 and s16 models:
//
//   perplexity  the held-out text (heldout.txt) in chunks of max_positions
//               bytes, one transformer_forward_* per chunk (all rows' logits)
//   generation  the reference prompt as text, encoded by the model's
//               tokenizer (Model::tokenizer, Tokenizer::encode), then greedy
//               tokens: one transformer_decode_* prefill and one step per
//               token over the KV caches, the next token from sample /
//               sample_s32 (argmax), its text from Tokenizer::decode
//
// and compares with PyTorch's numbers (reference.json): the prompt's ids, the
// f32 perplexity, and the f32 continuation token by token.
//
//   attn_example_demo_decoder --f32 F32.attn [--s8 S8.attn] [--s16 S16.attn] [--data DIR]
//       [--bytes N (0: all)] [--steps N (64)] [--min-match N (all steps)] [--emit-mcu OUT.h]
//       [--timing-passes N (3; 0: no timing)] [--max-ppl-s8 PERCENT (5)] [--max-ppl-s16 PERCENT (1)]
//       [--s4 S4.attn (s8 activations, int4 FFN weights)] [--max-ppl-s4 PERCENT (5)]
//   attn_example_demo_decoder --write-calib OUT.npy [--licenses DIR] [--data DIR]
//
// DIR (tests/data): tiny_llama/heldout.txt, tiny_llama/reference.json.
// --bytes N: only the first N held-out bytes (N = reference.json's quick_bytes
// compares with perplexity_f32_quick). --write-calib: 32 windows of
// max_positions bytes, evenly spaced over the training text (the first 90%
// of each licence file, as the training script cut it), as int32 ids
// [32, 128]; exits. --emit-mcu: the prompt text and the text of the host's s8
// continuation, as C strings, for the Cortex-M image
// (port/cortex-m/demo/demo_decoder_s8.cpp), which encodes and decodes them
// with the same tokenizer.
// Exit code 0 if the checks pass (f32 perplexity within 1e-4 of PyTorch's
// when it has one for these bytes, the first --min-match f32 bytes equal to
// PyTorch's, s8 and s16 perplexity within --max-ppl-* percent of f32), 1 if
// not, 2 on errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/sampler.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "demo_common.h"

namespace {

#ifndef ATTN_TEST_DATA_DIR
#define ATTN_TEST_DATA_DIR "tests/data"
#endif

using demo::fail;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// ------------------------------------------------------- reference.json ---
// Just enough JSON for the reference file: a number, an array of integers or a
// string by key.

size_t json_value(const std::string& json, const std::string& key) {
  const size_t k = json.find("\"" + key + "\"");
  if (k == std::string::npos) return k;
  const size_t colon = json.find(':', k);
  return colon == std::string::npos ? colon : json.find_first_not_of(" \t\r\n", colon + 1);
}

double json_number(const std::string& json, const std::string& key) {
  const size_t v = json_value(json, key);
  return v == std::string::npos ? std::nan("") : std::strtod(json.c_str() + v, nullptr);
}

std::vector<int32_t> json_ints(const std::string& json, const std::string& key) {
  std::vector<int32_t> out;
  const size_t v = json_value(json, key);
  if (v == std::string::npos || json[v] != '[') return out;
  std::istringstream in(json.substr(v + 1, json.find(']', v) - v - 1));
  for (std::string item; std::getline(in, item, ',');) out.push_back(static_cast<int32_t>(std::stol(item)));
  return out;
}

// A string's text: the escapes \" \\ \/ \n \t (reference.json's prompt has no
// others); false if the key is missing, the string unterminated or another escape in it.
bool json_string(const std::string& json, const std::string& key, std::string* out) {
  size_t v = json_value(json, key);
  if (v == std::string::npos || json[v] != '"') return false;
  out->clear();
  for (++v; v < json.size() && json[v] != '"'; ++v) {
    char ch = json[v];
    if (ch == '\\') {
      if (++v == json.size()) return false;
      ch = json[v];
      if (ch == 'n' || ch == 't') {
        ch = ch == 'n' ? '\n' : '\t';
      } else if (ch != '"' && ch != '\\' && ch != '/') {
        return false;
      }
    }
    *out += ch;
  }
  return v < json.size();
}

// ---------------------------------------------------------- calibration ---
// The training text as tools/train/train_tiny_llama.py cuts it: per regular file of
// the licence directory, sorted by name, the first 90% up to a line start
// (the rest is held out).
bool licence_texts(const std::string& dir, std::string* train, std::string* held) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_symlink() && e.is_regular_file()) names.push_back(e.path().filename().string());
  }
  if (ec || names.empty()) return false;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string data = read_file(dir + "/" + name);
    size_t cut = static_cast<size_t>(static_cast<double>(data.size()) * (1 - 0.1));
    const size_t nl = cut == 0 ? std::string::npos : data.rfind('\n', cut - 1);
    if (nl != std::string::npos && nl > 0) cut = nl + 1;
    *train += data.substr(0, cut);
    *held += data.substr(cut);
  }
  return true;
}

// ----------------------------------------------------------------- model ---

struct Decoder : demo::ModelFile {
  // One plan for both uses: forwards of up to max_positions tokens, and a
  // KV-cache state of max_positions positions for generation.
  attn::TransformerPlan plan;
  std::vector<std::max_align_t> arena_buffer;
  attn::Arena arena;
  attn::TransformerStateF32 state_f32;
  attn::TransformerStateS8 state_s8;
  attn::TransformerStateS16 state_s16;
  std::vector<float> logits;      // [max_positions, vocab] f32
  std::vector<int32_t> logits_q;  // [max_positions, vocab] s8 / s16, real = scale * q
  float scale = 0.0f;             // s8 / s16 logit scale
  attn::Tokenizer tokenizer;      // the file's own (its model.tokenizer section)
};

bool load(const std::string& path, const char* name, attn::DType dtype, Decoder* m) {
  if (!demo::load_model_file(path, name, dtype, m) || !demo::check_c_buffers(*m)) return false;
  const attn::TransformerConfig& c = m->config;
  if (!c.causal || c.head == attn::LmHead::kNone || !m->model.byte_vocab()) {
    std::fprintf(stderr, "demo: %s: not a byte-level decoder with an LM head\n", path.c_str());
    return false;
  }
  attn::Status s = m->model.tokenizer(&m->tokenizer);
  if (s == attn::Status::kNotFound) {
    std::fprintf(stderr, "demo: %s has no tokenizer (`attn import --byte-vocab` writes one)\n", path.c_str());
    return false;
  }
  if (s != attn::Status::kOk) return fail("the model's tokenizer", s);
  if (dtype != attn::DType::kF32)
    m->scale = dtype == attn::DType::kS8 ? m->s8.output_scale : m->s16.output_scale;
  s = attn::plan_transformer(c, dtype, c.max_positions, c.max_positions, &m->plan);
  if (s != attn::Status::kOk) return fail("plan_transformer", s);
  const size_t bytes = m->plan.arena_bytes + m->plan.state_bytes;
  m->arena_buffer.assign(bytes / sizeof(std::max_align_t) + 1, std::max_align_t{});
  s = m->arena.init(m->arena_buffer.data(), bytes);
  if (s == attn::Status::kOk) {  // the state first: it stays carved; each call's scratch comes after it
    s = dtype == attn::DType::kF32  ? attn::transformer_state_init_f32(m->plan, 0, m->arena, &m->state_f32)
        : dtype == attn::DType::kS8 ? attn::transformer_state_init_s8(m->plan, 0, m->arena, &m->state_s8)
                                    : attn::transformer_state_init_s16(m->plan, 0, m->arena, &m->state_s16);
  }
  if (s != attn::Status::kOk) return fail("transformer_state_init", s);
  const size_t n = static_cast<size_t>(c.max_positions) * static_cast<size_t>(c.vocab_size);
  m->logits.resize(n);
  m->logits_q.resize(n);
  return true;
}

// Logit of `token` in row `row` as a real number.
double logit(const Decoder& m, size_t row, int32_t token) {
  const size_t i = row * static_cast<size_t>(m.config.vocab_size) + static_cast<size_t>(token);
  return m.dtype == attn::DType::kF32 ? static_cast<double>(m.logits[i])
                                      : static_cast<double>(m.scale) * static_cast<double>(m.logits_q[i]);
}

// One forward of n tokens at positions 0..n-1: logits of every row.
attn::Status forward(Decoder& m, const int32_t* tokens, int32_t n) {
  const attn::OutputRows all = attn::OutputRows::kAll;
  switch (m.dtype) {
    case attn::DType::kF32:
      return attn::transformer_forward_f32(m.plan, m.f32, tokens, n, all, m.logits.data(), m.arena);
    case attn::DType::kS8:
      return attn::transformer_forward_s8(m.plan, m.s8, tokens, n, all, m.logits_q.data(), m.arena);
    default:
      return attn::transformer_forward_s16(m.plan, m.s16, tokens, n, all, m.logits_q.data(), m.arena);
  }
}

// Perplexity of `text` as reference.json defines it: consecutive chunks of
// max_positions bytes, each one forward; every byte after a chunk's first is
// predicted; exp(mean negative log-likelihood).
bool perplexity(Decoder& m, const std::vector<int32_t>& text, double* ppl) {
  const int32_t chunk = m.config.max_positions, V = m.config.vocab_size;
  double nll = 0;
  size_t predicted = 0;
  for (size_t start = 0; start < text.size(); start += static_cast<size_t>(chunk)) {
    const int32_t n = static_cast<int32_t>(std::min(text.size() - start, static_cast<size_t>(chunk)));
    if (n < 2) break;
    const attn::Status s = forward(m, &text[start], n);
    if (s != attn::Status::kOk) return fail("transformer_forward", s);
    for (int32_t i = 0; i + 1 < n; ++i) {
      double top = -INFINITY, sum = 0;
      for (int32_t v = 0; v < V; ++v) top = std::max(top, logit(m, static_cast<size_t>(i), v));
      for (int32_t v = 0; v < V; ++v) sum += std::exp(logit(m, static_cast<size_t>(i), v) - top);
      nll += top + std::log(sum) - logit(m, static_cast<size_t>(i), text[start + static_cast<size_t>(i) + 1]);
      ++predicted;
    }
  }
  *ppl = std::exp(nll / static_cast<double>(predicted));
  return predicted > 0;
}

// One decode call (prefill or step) appending n tokens: the last row's logits.
attn::Status decode(Decoder& m, const int32_t* tokens, int32_t n) {
  const attn::OutputRows last = attn::OutputRows::kLast;
  switch (m.dtype) {
    case attn::DType::kF32:
      return attn::transformer_decode_f32(m.plan, m.f32, &m.state_f32, tokens, n, last, m.logits.data(),
                                          m.arena);
    case attn::DType::kS8:
      return attn::transformer_decode_s8(m.plan, m.s8, &m.state_s8, tokens, n, last, m.logits_q.data(),
                                         m.arena);
    default:
      return attn::transformer_decode_s16(m.plan, m.s16, &m.state_s16, tokens, n, last, m.logits_q.data(),
                                          m.arena);
  }
}

// Greedy generation: the prompt in one prefill, then `steps` bytes, each the
// argmax of the last logits (sample / sample_s32 with the default sampler),
// fed back as the next step. gaps (optional): per byte, the best logit minus
// the runner-up's.
attn::Status generate(Decoder& m, const std::vector<int32_t>& prompt, int32_t steps,
                      std::vector<int32_t>* out, std::vector<double>* gaps = nullptr) {
  out->clear();
  if (gaps != nullptr) gaps->clear();
  ATTN_TRY(m.dtype == attn::DType::kF32  ? attn::transformer_state_reset(&m.state_f32)
           : m.dtype == attn::DType::kS8 ? attn::transformer_state_reset(&m.state_s8)
                                         : attn::transformer_state_reset(&m.state_s16));
  const int32_t V = m.config.vocab_size;
  const attn::Sampler greedy;  // temperature 0: argmax
  ATTN_TRY(decode(m, prompt.data(), static_cast<int32_t>(prompt.size())));
  for (int32_t k = 0; k < steps; ++k) {
    int32_t token = 0;
    ATTN_TRY(m.dtype == attn::DType::kF32
                 ? attn::sample(m.logits.data(), V, greedy, nullptr, &token)
                 : attn::sample_s32(m.logits_q.data(), V, m.scale, greedy, nullptr, &token));
    out->push_back(token);
    if (gaps != nullptr) {
      double second = -INFINITY;
      for (int32_t v = 0; v < V; ++v) {
        if (v != token) second = std::max(second, logit(m, 0, v));
      }
      gaps->push_back(logit(m, 0, token) - second);
    }
    if (k + 1 < steps) ATTN_TRY(decode(m, &token, 1));
  }
  return attn::Status::kOk;
}

// Text as a C string literal, the way the Cortex-M image prints it: printable
// ASCII as it is, \n, \" and \\ escaped, any other byte as \ooo (octal: three
// digits, so the character after it never joins the escape).
std::string c_literal(const std::string& text) {
  std::string s;
  for (const char ch : text) {
    const unsigned b = static_cast<unsigned char>(ch);
    if (ch == '\n') {
      s += "\\n";
    } else if (ch == '"' || ch == '\\') {
      s += '\\';
      s += ch;
    } else if (b >= 32 && b < 127) {
      s += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", b);
      s += buf;
    }
  }
  return "\"" + s + "\"";
}

// Text -> ids with the model's tokenizer: scratch from an arena of
// tokenize_scratch_bytes, room for max_ids ids (no BOS: the model has none).
bool encode(const attn::Tokenizer& tok, const std::string& text, std::vector<int32_t>* ids) {
  const size_t scratch = tok.tokenize_scratch_bytes(text.size()), cap = tok.max_ids(text.size());
  if (scratch == SIZE_MAX || cap == SIZE_MAX) return fail("encode", attn::Status::kArenaTooSmall);
  std::vector<std::max_align_t> buffer(scratch / sizeof(std::max_align_t) + 1);
  attn::Arena arena;
  attn::Status s = arena.init(buffer.data(), buffer.size() * sizeof(std::max_align_t));
  ids->assign(cap, 0);
  size_t n = 0;
  if (s == attn::Status::kOk) s = tok.encode(text.data(), text.size(), ids->data(), cap, &arena, &n);
  if (s != attn::Status::kOk) return fail("encode", s);
  ids->resize(n);
  return true;
}

// Ids -> text with the model's tokenizer, one id at a time as the Cortex-M
// image does it (decode, then decode_flush at the end).
bool decode_text(const attn::Tokenizer& tok, const std::vector<int32_t>& ids, std::string* text) {
  attn::TokenizerDecodeState state{};
  char buf[ATTN_TOKENIZER_MAX_PIECE + 16];  // a piece's text, a space, U+FFFDs
  size_t n = 0;
  text->clear();
  for (const int32_t id : ids) {
    const attn::Status s = tok.decode(id, &state, buf, sizeof buf, &n);
    if (s != attn::Status::kOk) return fail("decode", s);
    text->append(buf, n);
  }
  const attn::Status s = tok.decode_flush(&state, buf, sizeof buf, &n);
  if (s != attn::Status::kOk) return fail("decode_flush", s);
  text->append(buf, n);
  return true;
}

size_t same_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// The prompt text and the text of the host's s8 continuation (steps tokens)
// for the Cortex-M image, which embeds the s8 model file itself (`attn
// emit-c`) and with it the tokenizer that encodes and decodes them.
bool emit_mcu(const std::string& path, const std::string& prompt, int32_t steps, const std::string& s8_text) {
  std::ofstream f(path);
  f << "// Generated by attn_example_demo_decoder --emit-mcu: the prompt text and the text of the host's\n"
       "// greedy s8 continuation, for the Cortex-M image port/cortex-m/demo/demo_decoder_s8.cpp.\n"
       "#pragma once\n#include <cstddef>\n\nnamespace demo_data {\n\n";
  f << "constexpr char kPrompt[] = " << c_literal(prompt) << ";\n";
  f << "constexpr size_t kPromptBytes = " << prompt.size() << ";  // without the terminating NUL\n";
  f << "constexpr int kSteps = " << steps << ";  // tokens generated\n";
  f << "constexpr char kHostS8Text[] = " << c_literal(s8_text) << ";\n";
  f << "constexpr size_t kHostS8TextBytes = " << s8_text.size() << ";\n";
  f << "static_assert(sizeof kPrompt == kPromptBytes + 1 && sizeof kHostS8Text == kHostS8TextBytes + 1, "
       "\"\");\n";
  f << "\n}  // namespace demo_data\n";
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  demo::Options opt;
  opt.data = ATTN_TEST_DATA_DIR;
  std::string licenses = "/usr/share/common-licenses";
  size_t bytes = 0;
  int32_t steps = 64, min_match = -1;
  double max_ppl[demo::kModels] = {0.0, 5.0, 1.0, 5.0};  // percent above f32
  if (!demo::parse_options(argc, argv, &opt,
                           {{"--bytes", &bytes},
                            {"--steps", &steps},
                            {"--min-match", &min_match},
                            {"--licenses", &licenses},
                            {"--max-ppl-s8", &max_ppl[1]},
                            {"--max-ppl-s16", &max_ppl[2]},
                            {"--max-ppl-s4", &max_ppl[3]}})) {
    std::fprintf(stderr,
                 "usage: %s --f32 F32.attn [--s8 S8.attn] [--s16 S16.attn] [--data DIR] [--bytes N] "
                 "[--steps N] [--min-match N] [--emit-mcu OUT.h] [--timing-passes N] [--max-ppl-s8 PERCENT] "
                 "[--max-ppl-s16 PERCENT] [--s4 S4.attn] [--max-ppl-s4 PERCENT]\n       %s --write-calib "
                 "OUT.npy [--licenses DIR] [--data DIR]\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string dir = opt.data + "/tiny_llama";
  const std::string heldout = read_file(dir + "/heldout.txt");
  const std::string reference = read_file(dir + "/reference.json");
  if (heldout.empty() || reference.empty()) {
    std::fprintf(stderr, "demo: cannot read %s/heldout.txt and reference.json\n", dir.c_str());
    return 2;
  }
  const int32_t chunk = static_cast<int32_t>(json_number(reference, "chunk"));

  // Calibration ids for `attn quantize --calib-tokens`: windows of the training text.
  if (!opt.calib_path.empty()) {
    std::string train, held;
    if (!licence_texts(licenses, &train, &held) || train.size() < static_cast<size_t>(chunk) || chunk <= 0) {
      std::fprintf(stderr, "demo: no licence texts in %s (Debian's base-files installs them)\n",
                   licenses.c_str());
      return 2;
    }
    if (held != heldout) {
      std::printf(
          "demo: note: the held-out slice of %s differs from %s/heldout.txt (other licence texts "
          "than the model's); calibrating on its training slice anyway\n",
          licenses.c_str(), dir.c_str());
    }
    const int64_t windows = 32;
    std::vector<int32_t> ids;
    for (int64_t w = 0; w < windows; ++w) {
      const size_t start =
          static_cast<size_t>(w) * (train.size() - static_cast<size_t>(chunk)) / (windows - 1);
      for (int32_t i = 0; i < chunk; ++i)
        ids.push_back(static_cast<uint8_t>(train[start + static_cast<size_t>(i)]));
    }
    if (!demo::write_ids_npy(opt.calib_path, ids, windows, chunk)) {
      std::fprintf(stderr, "demo: cannot write %s\n", opt.calib_path.c_str());
      return 2;
    }
    std::printf("wrote %s [%lld, %d] int32: windows of the %zu training bytes in %s\n",
                opt.calib_path.c_str(), static_cast<long long>(windows), chunk, train.size(),
                licenses.c_str());
    return 0;
  }
  if (opt.paths[0].empty()) {
    std::fprintf(stderr, "demo: --f32 MODEL.attn is required (attn import of tests/data/tiny_llama)\n");
    return 2;
  }

  static Decoder models[demo::kModels];  // f32, s8, s16, s4
  const char* const* names = demo::kModelNames;
  for (int k = 0; k < demo::kModels; ++k) {
    if (!opt.paths[k].empty() && !load(opt.paths[k], names[k], demo::kModelDtypes[k], &models[k])) return 2;
  }
  const attn::TransformerConfig& c = models[0].config;
  if (chunk != c.max_positions) {
    std::fprintf(stderr, "demo: reference.json's chunk %d is not the model's %d positions\n", chunk,
                 c.max_positions);
    return 2;
  }
  std::vector<int32_t> text(heldout.begin(), heldout.end());
  for (int32_t& t : text) t = static_cast<uint8_t>(t);
  if (bytes != 0 && bytes < text.size()) text.resize(bytes);
  // The prompt as text, encoded by the model's tokenizer: the ids PyTorch was given.
  std::string prompt_text;
  if (!json_string(reference, "prompt", &prompt_text)) {
    std::fprintf(stderr, "demo: %s/reference.json has no prompt string\n", dir.c_str());
    return 2;
  }
  std::vector<int32_t> prompt;
  if (!encode(models[0].tokenizer, prompt_text, &prompt)) return 2;
  if (prompt != json_ints(reference, "prompt_ids")) {
    std::fprintf(stderr, "demo: the tokenizer's ids of the prompt are not reference.json's prompt_ids\n");
    return 2;
  }
  const std::vector<int32_t> torch_text = json_ints(reference, "greedy_ids");
  if (prompt.empty() || static_cast<int32_t>(prompt.size()) + steps > c.max_positions || steps < 1) {
    std::fprintf(stderr, "demo: the prompt (%zu tokens) and %d steps must fit in %d positions\n",
                 prompt.size(), steps, c.max_positions);
    return 2;
  }

  std::printf(
      "tiny Llama: byte-level, %d layers, E=%d, %d heads (%d K/V), FFN %d, vocab %d, "
      "whole in attn\n",
      c.num_layers, c.embed_dim, c.num_heads, c.num_kv_heads, c.ffn_dim, c.vocab_size);
  std::printf(
      "perplexity of %zu held-out bytes (chunks of %d); greedy generation of %d tokens after the prompt\n\n",
      text.size(), chunk, steps);
  std::printf("  %-6s %10s %9s %13s %12s %12s\n", "model", "perplexity", "vs f32", "us/token", "arena bytes",
              "model bytes");
  bool ok = true;
  double ppl[demo::kModels] = {0, 0, 0, 0};
  std::vector<int32_t> texts[demo::kModels];
  std::vector<double> gaps;  // f32's top-2 logit gaps along its generation
  for (int k = 0; k < demo::kModels; ++k) {
    if (opt.paths[k].empty()) continue;
    Decoder& m = models[k];
    if (!perplexity(m, text, &ppl[k])) return 2;
    attn::Status s = generate(m, prompt, steps, &texts[k], k == 0 ? &gaps : nullptr);
    if (s != attn::Status::kOk) return fail("generate", s);
    std::vector<int32_t> scratch;
    const double us =
        demo::best_us(opt.timing_passes, 1, [&](size_t) { s = generate(m, prompt, steps, &scratch); }) /
        static_cast<double>(steps);
    char us_text[32] = "-";  // not timed with --timing-passes 0
    if (opt.timing_passes > 0) std::snprintf(us_text, sizeof us_text, "%.1f", us);
    char rel[32] = "";
    if (k > 0) std::snprintf(rel, sizeof rel, "%+.2f%%", 100.0 * (ppl[k] / ppl[0] - 1.0));
    std::printf("  %-6s %10.4f %9s %13s %12zu %12zu\n", m.name, ppl[k], rel, us_text,
                m.plan.arena_bytes + m.plan.state_bytes, m.blob.size);
  }
  std::printf(
      "  (us/token: prefill of the %zu-token prompt and %d steps, per generated token; arena: one call's\n"
      "  scratch + the KV caches of %d positions)\n\n",
      prompt.size(), steps, c.max_positions);

  // Checks: PyTorch's perplexity (all bytes, or its quick_bytes), the targets.
  const double quick_bytes = json_number(reference, "quick_bytes");
  const double torch_ppl = text.size() == heldout.size() ? json_number(reference, "perplexity_f32")
                           : static_cast<double>(text.size()) == quick_bytes
                               ? json_number(reference, "perplexity_f32_quick")
                               : std::nan("");
  if (!std::isnan(torch_ppl)) {
    const double diff = std::fabs(ppl[0] / torch_ppl - 1.0);
    std::printf("  f32 perplexity vs PyTorch's %.6f: relative diff %.1e (%s)\n", torch_ppl, diff,
                diff <= 1e-4 ? "ok" : "FAIL");
    ok = ok && diff <= 1e-4;
  }
  for (int k = 1; k < demo::kModels; ++k) {
    if (opt.paths[k].empty()) continue;
    const double rel = 100.0 * (ppl[k] / ppl[0] - 1.0);
    const bool within = rel <= max_ppl[k];
    std::printf("  %s perplexity %+.2f%% vs f32 (target: within %.0f%%): %s\n", names[k], rel, max_ppl[k],
                within ? "ok" : "FAIL");
    ok = ok && within;
  }

  // The texts, each model's ids through its own tokenizer (PyTorch's through f32's).
  std::printf("\nprompt   %s\n", c_literal(prompt_text).c_str());
  std::vector<int32_t> torch_part(torch_text.begin(),
                                  torch_text.begin() + std::min<size_t>(torch_text.size(), steps));
  std::string torch_str, strs[demo::kModels];
  if (!decode_text(models[0].tokenizer, torch_part, &torch_str)) return 2;
  std::printf("PyTorch  %s\n", c_literal(torch_str).c_str());
  for (int k = 0; k < demo::kModels; ++k) {
    if (opt.paths[k].empty()) continue;
    if (!decode_text(models[k].tokenizer, texts[k], &strs[k])) return 2;
    const std::vector<int32_t>& want = k == 0 ? torch_part : texts[0];
    const size_t same = same_prefix(texts[k], want);
    std::printf("%-8s %s  (%s: %zu of %d tokens)\n", names[k], c_literal(strs[k]).c_str(),
                k == 0 ? "= PyTorch" : "= f32", same, steps);
  }
  const size_t same = same_prefix(texts[0], torch_part);
  const size_t need =
      min_match < 0 ? torch_part.size() : std::min<size_t>(static_cast<size_t>(min_match), torch_part.size());
  if (same < torch_part.size()) {
    std::printf("  f32 leaves PyTorch's text at token %zu, where its best two logits are %.4f apart\n", same,
                gaps[same]);
  }
  if (same < need) {
    std::printf("  FAIL: the f32 text must equal PyTorch's for the first %zu tokens\n", need);
    ok = false;
  }
  if (!opt.mcu_path.empty()) {
    if (opt.paths[1].empty() || !emit_mcu(opt.mcu_path, prompt_text, steps, strs[1])) {
      std::fprintf(stderr, "demo: cannot write %s (needs --s8)\n", opt.mcu_path.c_str());
      return 2;
    }
  }
  return ok ? 0 : 1;
}
