// tokenizer_files.cpp: which tokenizer file a path is, and the blob it makes
// (tokenizer_files.h). The readers of byte-level BPE and WordPiece files are
// tokenizer_files_bbpe.cpp and tokenizer_files_wordpiece.cpp; SentencePiece
// files (tokenizer.model, llama2.c tokenizer.bin, a tokenizer.json with
// byte fallback) are read here.
#include "cli/tokenizer_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/tokenizer.h"
#include "cli/cli.h"

namespace attn {
namespace cli {
namespace {

// Tokenizer files are megabytes (a 150k-piece vocabulary with its merges is
// about 10 MB of JSON); refuse what cannot be one before parsing it.
constexpr uint64_t kMaxTokenizerFileBytes = uint64_t{256} << 20;

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::char_traits<char>::length(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<uint8_t> read_tokenizer_file(const std::string& path) {
  return read_file(path, kMaxTokenizerFileBytes, "256 MiB a tokenizer file may have");
}

json::Value parse_json_file(const std::string& path) {
  const std::vector<uint8_t> text = read_tokenizer_file(path);
  try {
    return json::parse(std::string(text.begin(), text.end()));
  } catch (const std::runtime_error& e) {
    throw Error(path + ": " + e.what());
  }
}

const json::Value& member(const json::Value& v, const char* key, const std::string& where) {
  const json::Value* m = v.find(key);
  if (m == nullptr) throw Error(where + ": no \"" + key + "\"");
  return *m;
}

int32_t as_id(const json::Value& v, const std::string& where) {
  if (v.type != json::Value::Type::kNumber) throw Error(where + ": an id is not a number");
  char* end = nullptr;
  const long long id = std::strtoll(v.text.c_str(), &end, 10);
  if (*end != '\0' || id < 0 || id >= ATTN_TOKENIZER_MAX_VOCAB)
    throw Error(where + ": id " + v.text + " is not an integer in [0, " +
                std::to_string(ATTN_TOKENIZER_MAX_VOCAB) + ")");
  return static_cast<int32_t>(id);
}

// A SentencePiece BPE vocabulary in a Hugging Face tokenizer.json (Llama,
// Mistral: model.type "BPE" with "byte_fallback": true, the normalizer
// prepending U+2581 and replacing ' ' with it). SentencePiece merges the
// pair whose merged piece scores highest; the converter that wrote the file
// listed the merges in that order, so a piece scores minus the rank of the
// first merge that makes it. Added tokens are control pieces (<unk>: the
// unknown piece).
tokenizer_build::Spec read_spm_bpe_json(const json::Value& root, const std::string& path) {
  const json::Value& model = member(root, "model", path);
  const json::Value& vocab = member(model, "vocab", path + ": model");
  if (vocab.type != json::Value::Type::kObject) throw Error(path + ": model.vocab is not an object");
  std::vector<std::string> pieces(vocab.members.size());
  std::vector<bool> seen(vocab.members.size(), false);
  std::map<std::string, int32_t> id_of;
  for (const auto& kv : vocab.members) {
    const int32_t id = as_id(kv.second, path + ": model.vocab \"" + printable(kv.first) + "\"");
    if (static_cast<size_t>(id) >= pieces.size() || seen[static_cast<size_t>(id)])
      throw Error(path + ": model.vocab ids are not 0 .. " + std::to_string(pieces.size() - 1) +
                  ", each once");
    seen[static_cast<size_t>(id)] = true;
    pieces[static_cast<size_t>(id)] = kv.first;
    id_of[kv.first] = id;
  }
  tokenizer_build::Spec spec;
  spec.algorithm = TokenizerAlgorithm::kSentencePieceBpe;
  spec.flags = kTokAddDummyPrefix | kTokEscapeSpaces | kTokByteFallback;
  spec.pieces = pieces;
  spec.types.assign(pieces.size(), PieceType::kNormal);
  spec.scores.assign(pieces.size(), 0.0f);
  const json::Value& merges = member(model, "merges", path + ": model");
  if (merges.type != json::Value::Type::kArray) throw Error(path + ": model.merges is not an array");
  std::vector<bool> scored(pieces.size(), false);
  for (size_t rank = 0; rank < merges.items.size(); ++rank) {
    const json::Value& m = merges.items[rank];
    std::string left, right;
    if (m.type == json::Value::Type::kString) {
      const size_t sp = m.text.find(' ');
      if (sp == std::string::npos) throw Error(path + ": merge " + std::to_string(rank) + " is not \"a b\"");
      left = m.text.substr(0, sp);
      right = m.text.substr(sp + 1);
    } else if (m.type == json::Value::Type::kArray && m.items.size() == 2 &&
               m.items[0].type == json::Value::Type::kString &&
               m.items[1].type == json::Value::Type::kString) {
      left = m.items[0].text;
      right = m.items[1].text;
    } else {
      throw Error(path + ": merge " + std::to_string(rank) + " is neither \"a b\" nor [a, b]");
    }
    const auto it = id_of.find(left + right);
    if (it == id_of.end())
      throw Error(path + ": merge " + std::to_string(rank) + " makes \"" + printable(left + right) +
                  "\", which is not in the vocabulary");
    if (!scored[static_cast<size_t>(it->second)]) {
      scored[static_cast<size_t>(it->second)] = true;
      spec.scores[static_cast<size_t>(it->second)] = -static_cast<float>(rank);
    }
  }
  // A piece no merge makes (a character, a byte piece) never wins a merge: below every merge.
  for (size_t i = 0; i < pieces.size(); ++i)
    if (!scored[i]) spec.scores[i] = -static_cast<float>(merges.items.size()) - 1.0f;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string& p = pieces[i];
    if (p.size() == 6 && p.compare(0, 3, "<0x") == 0 && p[5] == '>') spec.types[i] = PieceType::kByte;
  }
  if (const json::Value* added = root.find("added_tokens")) {
    for (const json::Value& a : added->items) {
      const int32_t id = as_id(member(a, "id", path + ": added_tokens"), path + ": added_tokens");
      const std::string& content = member(a, "content", path + ": added_tokens").text;
      if (static_cast<size_t>(id) >= pieces.size() || pieces[static_cast<size_t>(id)] != content)
        throw Error(path + ": added token \"" + printable(content) + "\" is not piece " + std::to_string(id));
      spec.types[static_cast<size_t>(id)] = content == "<unk>" ? PieceType::kUnknown : PieceType::kControl;
    }
  }
  const auto special = [&](const char* piece, SpecialToken which) {
    const auto it = id_of.find(piece);
    if (it != id_of.end()) spec.specials[static_cast<size_t>(which)] = it->second;
  };
  special("<unk>", SpecialToken::kUnk);
  special("<s>", SpecialToken::kBos);
  special("</s>", SpecialToken::kEos);
  if (spec.specials[static_cast<size_t>(SpecialToken::kUnk)] >= 0)
    spec.types[static_cast<size_t>(spec.specials[static_cast<size_t>(SpecialToken::kUnk)])] =
        PieceType::kUnknown;
  for (SpecialToken s : {SpecialToken::kBos, SpecialToken::kEos})
    if (spec.specials[static_cast<size_t>(s)] >= 0)
      spec.types[static_cast<size_t>(spec.specials[static_cast<size_t>(s)])] = PieceType::kControl;
  return spec;
}

// A tokenizer.json: the model's type picks the reader.
tokenizer_build::Spec read_tokenizer_json(const std::string& path, std::string* kind) {
  const json::Value root = parse_json_file(path);
  const json::Value& model = member(root, "model", path);
  const json::Value* type = model.find("type");
  const std::string t = type != nullptr ? type->text : std::string();
  if (t == "WordPiece") {
    *kind = "WordPiece (tokenizer.json)";
    return read_wordpiece_json(root, path);
  }
  if (t == "BPE") {
    const json::Value* fallback = model.find("byte_fallback");
    if (fallback != nullptr && fallback->type == json::Value::Type::kBool && fallback->boolean) {
      *kind = "SentencePiece BPE (tokenizer.json)";
      return read_spm_bpe_json(root, path);
    }
    *kind = "byte-level BPE (tokenizer.json)";
    return read_byte_level_bpe_json(root, path);
  }
  throw Error(path + ": a tokenizer.json of model type \"" + printable(t) +
              "\": attn reads BPE (SentencePiece with byte fallback, or byte-level) and WordPiece");
}

}  // namespace

std::vector<uint8_t> tokenizer_blob(const std::string& path, int32_t vocab_size, std::string* kind) {
  const std::string name = base_name(path);
  tokenizer_build::Spec spec;
  std::string error;
  if (ends_with(name, ".json") && name.find("vocab") != std::string::npos) {
    // Its merges beside it: the name with "vocab" as "merges" and .txt (vocab.json: merges.txt).
    std::string merges_name = name.substr(0, name.size() - 5) + ".txt";
    merges_name.replace(merges_name.find("vocab"), 5, "merges");
    const std::string merges = dir_of(path) + "/" + merges_name;
    if (!is_file(merges))
      throw Error(path + ": a vocab.json needs its merges.txt beside it (" + merges + ")");
    *kind = "byte-level BPE (vocab.json + merges.txt)";
    spec = read_byte_level_bpe_files(path, merges);
  } else if (ends_with(name, ".json")) {
    spec = read_tokenizer_json(path, kind);
  } else if (ends_with(name, ".txt")) {
    *kind = "WordPiece (vocab.txt)";
    spec = read_wordpiece_vocab(path);
  } else if (ends_with(name, ".model")) {
    *kind = "SentencePiece BPE (tokenizer.model)";
    const std::vector<uint8_t> bytes = read_tokenizer_file(path);
    if (!tokenizer_build::spec_from_sentencepiece_model(bytes.data(), bytes.size(), &spec, &error))
      throw Error(path + ": " + error);
  } else if (ends_with(name, ".bin")) {
    *kind = "SentencePiece BPE (llama2.c tokenizer.bin)";
    const std::vector<uint8_t> bytes = read_tokenizer_file(path);
    if (!tokenizer_build::spec_from_llama2c(bytes.data(), bytes.size(), vocab_size, &spec, &error))
      throw Error(path + ": " + error);
  } else {
    throw Error(
        path +
        ": not a tokenizer file attn reads (tokenizer.json, tokenizer.model, a llama2.c tokenizer.bin, "
        "vocab.json with merges.txt, vocab.txt)");
  }
  if (vocab_size > 0 && static_cast<int32_t>(spec.pieces.size()) > vocab_size)
    throw Error(path + ": the tokenizer has " + std::to_string(spec.pieces.size()) +
                " pieces, more than the model's vocabulary of " + std::to_string(vocab_size) +
                " (kTokenizerVocabMismatch)");
  std::vector<uint8_t> blob;
  if (!tokenizer_build::write_blob(spec, &blob, &error)) throw Error(path + ": " + error);
  // The blob as the run time will see it: the loader's verdict now, not at the first encode.
  std::vector<uint32_t> aligned((blob.size() + 3) / 4);
  std::memcpy(aligned.data(), blob.data(), blob.size());
  Tokenizer t;
  const Status s = Tokenizer::load(aligned.data(), blob.size(), &t);
  if (s != Status::kOk) throw Error(path + ": the tokenizer blob does not load: " + describe(s));
  return blob;
}

std::vector<uint8_t> bytes_tokenizer_blob() {
  tokenizer_build::Spec spec;
  std::string error;
  std::vector<uint8_t> blob;
  if (!tokenizer_build::spec_bytes({}, &spec, &error) || !tokenizer_build::write_blob(spec, &blob, &error))
    throw Error("the byte tokenizer: " + error);
  return blob;
}

std::string tokenizer_beside(const std::string& config_path) {
  const std::string dir = dir_of(config_path);
  for (const char* name : {"tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt"}) {
    const std::string p = dir + "/" + name;
    if (is_file(p)) return p;
  }
  return std::string();
}

}  // namespace cli
}  // namespace attn
