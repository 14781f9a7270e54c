// tokenizer_files_bbpe.cpp: byte-level BPE tokenizer files (GPT-2, Qwen2)
// read into a blob spec: GPT-2's vocab.json + merges.txt, or a Hugging Face
// tokenizer.json whose model is BPE over GPT-2's byte-to-unicode alphabet.
// Anything the run time would encode differently is refused by name.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/tokenizer_files.h"

namespace attn {
namespace cli {

namespace {

// The two pre-tokenizer regexes the run time implements by hand
// (src/tokenizer/encode_byte_level_bpe.cpp), spelled as tokenizer.json has them.
const char kGpt2Pattern[] = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char kQwen2Pattern[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char kEndOfText[] = "<|endoftext|>";

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error(path + ": read failed");
  return ss.str();
}

// model.vocab / vocab.json: {"piece": id, ...} as id -> piece.
std::vector<std::string> read_vocab(const json::Value& v, const std::string& where) {
  if (v.type != json::Value::Type::kObject) throw Error(where + ": the vocabulary is not a JSON object");
  std::vector<std::string> vocab;
  for (const auto& m : v.members) {
    int64_t id = -1;
    if (!json::to_int64(m.second, &id) || id < 0 || id >= ATTN_TOKENIZER_MAX_VOCAB) {
      throw Error(where + ": vocabulary piece '" + m.first + "' has no id in 0.." +
                  std::to_string(ATTN_TOKENIZER_MAX_VOCAB - 1));
    }
    const auto i = static_cast<size_t>(id);
    if (i >= vocab.size()) vocab.resize(i + 1);
    if (!vocab[i].empty())
      throw Error(where + ": id " + std::to_string(id) + " is given twice in the vocabulary");
    if (m.first.empty()) throw Error(where + ": an empty vocabulary piece");
    vocab[i] = m.first;
  }
  return vocab;
}

// "a b": the two sides of a merge (pieces in GPT-2's spelling hold no ' ').
std::pair<std::string, std::string> split_merge(const std::string& line, const std::string& where) {
  const size_t sp = line.find(' ');
  if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() ||
      line.find(' ', sp + 1) != std::string::npos) {
    throw Error(where + ": merge '" + line + "' is not two pieces separated by one space");
  }
  return {line.substr(0, sp), line.substr(sp + 1)};
}

tokenizer_build::Spec build(const std::vector<std::string>& vocab,
                            const std::vector<std::pair<std::string, std::string>>& merges,
                            const std::vector<tokenizer_build::ByteLevelAdded>& added,
                            tokenizer_build::ByteLevelOptions options, const std::string& where) {
  for (const auto& a : added) {
    if (a.content == kEndOfText) options.eos = kEndOfText;
  }
  tokenizer_build::Spec spec;
  std::string error;
  if (!tokenizer_build::spec_from_byte_level_bpe(vocab, merges, added, options, &spec, &error)) {
    throw Error(where + ": " + error);
  }
  return spec;
}

bool is_true(const json::Value* v) {
  return v != nullptr && v->type == json::Value::Type::kBool && v->boolean;
}
bool is_false_or_absent(const json::Value* v) {
  return v == nullptr || v->type == json::Value::Type::kNull ||
         (v->type == json::Value::Type::kBool && !v->boolean);
}
std::string string_or(const json::Value* v, const std::string& fallback) {
  return v != nullptr && v->type == json::Value::Type::kString ? v->text : fallback;
}

// A ByteLevel pre-tokenizer: its add_prefix_space and use_regex (both
// default true in Hugging Face's ByteLevel).
void byte_level_options(const json::Value& p, bool* add_prefix_space, bool* use_regex) {
  const json::Value* a = p.find("add_prefix_space");
  const json::Value* u = p.find("use_regex");
  *add_prefix_space = a == nullptr || is_true(a);
  *use_regex = u == nullptr || is_true(u);
}

}  // namespace

tokenizer_build::Spec read_byte_level_bpe_files(const std::string& vocab_json,
                                                const std::string& merges_txt) {
  json::Value root;
  try {
    root = json::parse(read_text(vocab_json));
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw Error(vocab_json + ": " + e.what());
  }
  const std::vector<std::string> vocab = read_vocab(root, vocab_json);
  std::vector<std::pair<std::string, std::string>> merges;
  std::istringstream lines(read_text(merges_txt));
  std::string line;
  for (size_t n = 1; std::getline(lines, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (n == 1 && line.compare(0, 9, "#version:") == 0)) continue;
    merges.push_back(split_merge(line, merges_txt + " line " + std::to_string(n)));
  }
  // GPT-2's vocab.json holds <|endoftext|> as an ordinary entry: it is its
  // end-of-text control token.
  std::vector<tokenizer_build::ByteLevelAdded> added;
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (vocab[i] == kEndOfText) added.push_back({static_cast<int32_t>(i), kEndOfText});
  }
  tokenizer_build::ByteLevelOptions options;
  options.split = ByteLevelSplit::kGpt2;
  return build(vocab, merges, added, options, vocab_json);
}

tokenizer_build::Spec read_byte_level_bpe_json(const json::Value& root, const std::string& path) {
  const json::Value* model = root.find("model");
  if (model == nullptr || model->type != json::Value::Type::kObject ||
      string_or(model->find("type"), "") != "BPE") {
    throw Error(path + ": model.type is not \"BPE\"");
  }
  if (is_true(model->find("byte_fallback"))) {
    throw Error(path + ": model.byte_fallback is set: a SentencePiece-style BPE, not byte-level BPE");
  }
  if (is_true(model->find("ignore_merges"))) {
    throw Error(path + ": model.ignore_merges is set (whole words looked up first): not supported");
  }
  const json::Value* dropout = model->find("dropout");
  if (dropout != nullptr && dropout->type != json::Value::Type::kNull) {
    double d = 0;
    if (!json::to_double(*dropout, &d) || d != 0.0)
      throw Error(path + ": model.dropout is set: not supported");
  }
  if (!string_or(model->find("continuing_subword_prefix"), "").empty() ||
      !string_or(model->find("end_of_word_suffix"), "").empty()) {
    throw Error(path + ": model.continuing_subword_prefix / end_of_word_suffix are set: not byte-level BPE");
  }
  // The normalizer: none, or NFC (Qwen2), which the run time does not apply:
  // text must be in NFC already, as most text is.
  const json::Value* norm = root.find("normalizer");
  if (norm != nullptr && norm->type != json::Value::Type::kNull &&
      string_or(norm->find("type"), "") != "NFC") {
    throw Error(path + ": normalizer " + string_or(norm->find("type"), "?") +
                ": only none or NFC (text given already in NFC) are supported");
  }
  // The pre-tokenizer: GPT-2's ByteLevel with its regex, or a Split by one of
  // the two known patterns followed by a ByteLevel without one.
  tokenizer_build::ByteLevelOptions options;
  const json::Value* pre = root.find("pre_tokenizer");
  const std::string pre_type = pre != nullptr ? string_or(pre->find("type"), "") : "";
  const std::string refused = path +
                              ": pre_tokenizer: only GPT-2's ByteLevel (use_regex) and Split(GPT-2 or "
                              "Qwen2 pattern, Isolated) + ByteLevel are supported";
  if (pre_type == "ByteLevel") {
    bool use_regex = true;
    byte_level_options(*pre, &options.add_prefix_space, &use_regex);
    if (!use_regex) throw Error(refused + " (this ByteLevel does not split)");
    options.split = ByteLevelSplit::kGpt2;
  } else if (pre_type == "Sequence") {
    const json::Value* list = pre->find("pretokenizers");
    if (list == nullptr || list->type != json::Value::Type::kArray || list->items.size() != 2) {
      throw Error(refused);
    }
    const json::Value& s = list->items[0];
    const json::Value& bl = list->items[1];
    const json::Value* pattern = s.find("pattern");
    const json::Value* regex = pattern != nullptr ? pattern->find("Regex") : nullptr;
    if (string_or(s.find("type"), "") != "Split" || regex == nullptr ||
        regex->type != json::Value::Type::kString || string_or(s.find("behavior"), "") != "Isolated" ||
        !is_false_or_absent(s.find("invert")) || string_or(bl.find("type"), "") != "ByteLevel") {
      throw Error(refused);
    }
    if (regex->text == kQwen2Pattern) {
      options.split = ByteLevelSplit::kQwen2;
    } else if (regex->text == kGpt2Pattern) {
      options.split = ByteLevelSplit::kGpt2;
    } else {
      throw Error(path + ": pre_tokenizer Split pattern " + regex->text +
                  " is neither GPT-2's nor Qwen2's (the run time implements those two by hand)");
    }
    bool add_prefix_space = false;
    bool use_regex = false;
    byte_level_options(bl, &add_prefix_space, &use_regex);
    if (add_prefix_space || use_regex) {
      throw Error(refused + " (the ByteLevel after a Split must have add_prefix_space and use_regex false)");
    }
  } else {
    throw Error(refused + " (found " + (pre_type.empty() ? std::string("none") : pre_type) + ")");
  }

  const json::Value* vocab_v = model->find("vocab");
  if (vocab_v == nullptr) throw Error(path + ": model.vocab is missing");
  const std::vector<std::string> vocab = read_vocab(*vocab_v, path + ": model.vocab");
  const json::Value* merges_v = model->find("merges");
  if (merges_v == nullptr || merges_v->type != json::Value::Type::kArray) {
    throw Error(path + ": model.merges is missing or not an array");
  }
  std::vector<std::pair<std::string, std::string>> merges;
  for (size_t r = 0; r < merges_v->items.size(); ++r) {
    const json::Value& m = merges_v->items[r];
    const std::string where = path + ": model.merges[" + std::to_string(r) + "]";
    if (m.type == json::Value::Type::kString) {
      merges.push_back(split_merge(m.text, where));
    } else if (m.type == json::Value::Type::kArray && m.items.size() == 2 &&
               m.items[0].type == json::Value::Type::kString &&
               m.items[1].type == json::Value::Type::kString) {
      merges.emplace_back(m.items[0].text, m.items[1].text);
    } else {
      throw Error(where + ": neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  // Added tokens (<|endoftext|>, <|im_start|>...): control pieces. The run
  // time never matches them in the text.
  std::vector<tokenizer_build::ByteLevelAdded> added;
  if (const json::Value* list = root.find("added_tokens")) {
    if (list->type != json::Value::Type::kArray) throw Error(path + ": added_tokens is not an array");
    for (const auto& a : list->items) {
      int64_t id = -1;
      const json::Value* idv = a.find("id");
      const std::string content = string_or(a.find("content"), "");
      if (idv == nullptr || !json::to_int64(*idv, &id) || id < 0 || id >= ATTN_TOKENIZER_MAX_VOCAB ||
          content.empty()) {
        throw Error(path + ": added_tokens: an entry without an id in range or without content");
      }
      added.push_back({static_cast<int32_t>(id), content});
    }
  }
  return build(vocab, merges, added, options, path);
}

}  // namespace cli
}  // namespace attn
