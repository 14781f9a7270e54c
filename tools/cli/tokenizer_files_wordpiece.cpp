// tokenizer_files_wordpiece.cpp: WordPiece (BERT, DistilBERT) tokenizers
// from a vocab.txt (with the tokenizer_config.json beside it, when there is
// one) or from a tokenizers tokenizer.json.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/tokenizer_files.h"

namespace attn {
namespace cli {

namespace {

std::string file_text(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// A boolean member of obj, `fallback` when absent; Error when of another type.
bool bool_member(const json::Value& obj, const char* key, bool fallback, const std::string& where) {
  const json::Value* v = obj.find(key);
  if (v == nullptr || v->type == json::Value::Type::kNull) return fallback;
  if (v->type != json::Value::Type::kBool) throw Error(where + ": \"" + key + "\" is not true or false");
  return v->boolean;
}

// A special token in a tokenizer_config.json: a string, or an object (an
// AddedToken) whose "content" is one.
bool token_member(const json::Value& obj, const char* key, std::string* out, const std::string& where) {
  const json::Value* v = obj.find(key);
  if (v == nullptr || v->type == json::Value::Type::kNull) return false;
  if (v->type == json::Value::Type::kObject) v = v->find("content");
  if (v == nullptr || v->type != json::Value::Type::kString) {
    throw Error(where + ": \"" + key + "\" is not a token (a string, or an object with \"content\")");
  }
  *out = v->text;
  return true;
}

json::Value parse_json(const std::string& path) {
  try {
    return json::parse(file_text(path));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(path + ": " + e.what());
  }
}

tokenizer_build::Spec build(const std::vector<std::string>& vocab,
                            const tokenizer_build::WordPieceOptions& options, const std::string& path) {
  tokenizer_build::Spec spec;
  std::string error;
  if (!tokenizer_build::spec_from_wordpiece(vocab, options, &spec, &error)) throw Error(path + ": " + error);
  return spec;
}

}  // namespace

tokenizer_build::Spec read_wordpiece_vocab(const std::string& vocab_txt) {
  // One piece a line, the line number its id; only the '\n' is cut off, as
  // BERT's load_vocab does.
  const std::string text = file_text(vocab_txt);
  std::vector<std::string> vocab;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    vocab.push_back(text.substr(at, end - at));
    if (vocab.back().empty()) {
      throw Error(vocab_txt + ": line " + std::to_string(vocab.size()) + " is empty (no piece for id " +
                  std::to_string(vocab.size() - 1) + ")");
    }
    at = end + 1;
  }
  if (vocab.empty()) throw Error(vocab_txt + ": no pieces");

  // The options: BertTokenizer's from the tokenizer_config.json beside the
  // vocabulary; without one, BERT's defaults (uncased, as bert-base-uncased).
  tokenizer_build::WordPieceOptions options;
  const std::string config_path = directory_of(vocab_txt) + "tokenizer_config.json";
  if (exists(config_path)) {
    const json::Value config = parse_json(config_path);
    if (config.type != json::Value::Type::kObject) throw Error(config_path + ": not a JSON object");
    options.lowercase = bool_member(config, "do_lower_case", true, config_path);
    options.strip_accents = bool_member(config, "strip_accents", options.lowercase, config_path);
    options.chinese_chars = bool_member(config, "tokenize_chinese_chars", true, config_path);
    token_member(config, "unk_token", &options.unk_token, config_path);
    token_member(config, "cls_token", &options.cls_token, config_path);
    token_member(config, "sep_token", &options.sep_token, config_path);
    token_member(config, "pad_token", &options.pad_token, config_path);
    token_member(config, "mask_token", &options.mask_token, config_path);
  }
  return build(vocab, options, vocab_txt);
}

tokenizer_build::Spec read_wordpiece_json(const json::Value& root, const std::string& path) {
  using Type = json::Value::Type;
  const json::Value* model = root.find("model");
  if (model == nullptr || model->type != Type::kObject) throw Error(path + ": no \"model\" object");
  const json::Value* type = model->find("type");
  if (type == nullptr || type->type != Type::kString || type->text != "WordPiece") {
    throw Error(path + ": model.type is not \"WordPiece\"");
  }
  tokenizer_build::WordPieceOptions options;
  const json::Value* unk = model->find("unk_token");
  if (unk == nullptr || unk->type != Type::kString) throw Error(path + ": model.unk_token is not a string");
  options.unk_token = unk->text;
  if (const json::Value* prefix = model->find("continuing_subword_prefix")) {
    if (prefix->type != Type::kString || prefix->text != "##") {
      throw Error(path +
                  ": model.continuing_subword_prefix is not \"##\" (the only prefix the run time reads)");
    }
  }
  if (const json::Value* m = model->find("max_input_chars_per_word")) {
    int64_t v = 0;
    if (!json::to_int64(*m, &v) || v < 1 || v > ATTN_TOKENIZER_MAX_WORD_CHARS) {
      throw Error(path + ": model.max_input_chars_per_word is not an integer in 1.." +
                  std::to_string(ATTN_TOKENIZER_MAX_WORD_CHARS));
    }
    options.max_input_chars_per_word = static_cast<uint32_t>(v);
  }

  // The vocabulary: piece -> id, the ids 0..V-1 each once.
  const json::Value* vocab_obj = model->find("vocab");
  if (vocab_obj == nullptr || vocab_obj->type != Type::kObject || vocab_obj->members.empty()) {
    throw Error(path + ": model.vocab is not a non-empty object");
  }
  const size_t n = vocab_obj->members.size();
  std::vector<std::string> vocab(n);
  std::vector<bool> seen(n, false);
  for (const auto& m : vocab_obj->members) {
    int64_t id = -1;
    if (!json::to_int64(m.second, &id) || id < 0 || static_cast<uint64_t>(id) >= n ||
        seen[static_cast<size_t>(id)]) {
      throw Error(path + ": model.vocab gives '" + m.first + "' an id that is not one of 0.." +
                  std::to_string(n - 1) + " exactly once");
    }
    seen[static_cast<size_t>(id)] = true;
    vocab[static_cast<size_t>(id)] = m.first;
  }

  // The normalizer: BertNormalizer (strip_accents null follows lowercase),
  // or none at all.
  const json::Value* norm = root.find("normalizer");
  if (norm == nullptr || norm->type == Type::kNull) {
    options.lowercase = options.strip_accents = options.chinese_chars = options.clean_text = false;
  } else {
    const json::Value* nt = norm->type == Type::kObject ? norm->find("type") : nullptr;
    if (nt == nullptr || nt->type != Type::kString || nt->text != "BertNormalizer") {
      throw Error(path + ": the normalizer is not a BertNormalizer (the only one the run time does)");
    }
    const std::string where = path + ": normalizer";
    options.lowercase = bool_member(*norm, "lowercase", true, where);
    options.strip_accents = bool_member(*norm, "strip_accents", options.lowercase, where);
    options.chinese_chars = bool_member(*norm, "handle_chinese_chars", true, where);
    options.clean_text = bool_member(*norm, "clean_text", true, where);
  }
  const json::Value* pre = root.find("pre_tokenizer");
  const json::Value* pt = pre != nullptr && pre->type == Type::kObject ? pre->find("type") : nullptr;
  if (pt == nullptr || pt->type != Type::kString || pt->text != "BertPreTokenizer") {
    throw Error(path + ": the pre_tokenizer is not a BertPreTokenizer (the only one the run time does)");
  }

  // Added tokens: special ones (in the vocabulary, at their id) become
  // control pieces; the run time does not match others in text.
  if (const json::Value* added = root.find("added_tokens")) {
    if (added->type != Type::kArray) throw Error(path + ": added_tokens is not an array");
    for (const auto& t : added->items) {
      const json::Value* content = t.type == Type::kObject ? t.find("content") : nullptr;
      const json::Value* id = t.type == Type::kObject ? t.find("id") : nullptr;
      int64_t k = -1;
      if (content == nullptr || content->type != Type::kString || id == nullptr || !json::to_int64(*id, &k)) {
        throw Error(path + ": an added token without a string \"content\" and an integer \"id\"");
      }
      if (k < 0 || static_cast<uint64_t>(k) >= n || vocab[static_cast<size_t>(k)] != content->text) {
        throw Error(path + ": added token '" + content->text + "' is not the vocabulary's piece " +
                    std::to_string(k));
      }
      if (!bool_member(t, "special", false, path + ": added token '" + content->text + "'")) {
        throw Error(path + ": added token '" + content->text +
                    "' is not special (the run time matches only vocabulary pieces in text)");
      }
      if (content->text != options.unk_token) options.control_tokens.push_back(content->text);
    }
  }
  // [CLS] and [SEP] by the post-processor's names when it is BertProcessing.
  if (const json::Value* post = root.find("post_processor")) {
    const json::Value* pp = post->type == Type::kObject ? post->find("type") : nullptr;
    if (pp != nullptr && pp->type == Type::kString && pp->text == "BertProcessing") {
      for (const auto& key : {std::string("cls"), std::string("sep")}) {
        const json::Value* pair = post->find(key);
        if (pair != nullptr && pair->type == Type::kArray && !pair->items.empty() &&
            pair->items[0].type == Type::kString) {
          (key == "cls" ? options.cls_token : options.sep_token) = pair->items[0].text;
        }
      }
    }
  }
  return build(vocab, options, path);
}

}  // namespace cli
}  // namespace attn
