// tokenizer/build/from_wordpiece.cpp: a WordPiece tokenizer Spec from a
// vocabulary and BERT's options (host only).
#include <map>

#include "attn/tokenizer_build.h"

namespace attn {
namespace tokenizer_build {

bool spec_from_wordpiece(const std::vector<std::string>& vocab, const WordPieceOptions& options, Spec* spec,
                         std::string* error) {
  *spec = Spec();
  spec->algorithm = TokenizerAlgorithm::kWordPiece;
  if (options.max_input_chars_per_word == 0 ||
      options.max_input_chars_per_word > ATTN_TOKENIZER_MAX_WORD_CHARS) {
    *error = "max_input_chars_per_word " + std::to_string(options.max_input_chars_per_word) +
             " is not in 1.." + std::to_string(ATTN_TOKENIZER_MAX_WORD_CHARS);
    return false;
  }
  spec->max_word_chars = options.max_input_chars_per_word;
  spec->flags = (options.lowercase ? kTokLowercase : 0u) | (options.strip_accents ? kTokStripAccents : 0u) |
                (options.chinese_chars ? kTokChineseChars : 0u) | (options.clean_text ? kTokCleanText : 0u);
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const std::string& p = vocab[i];
    if (p.empty()) {
      *error = "vocabulary entry " + std::to_string(i) + " is empty";
      return false;
    }
    if (!index.emplace(p, static_cast<int32_t>(i)).second) {
      *error = "piece '" + p + "' occurs twice (ids " + std::to_string(index[p]) + " and " +
               std::to_string(i) + ")";
      return false;
    }
  }
  spec->pieces = vocab;
  spec->types.assign(vocab.size(), PieceType::kNormal);
  const auto unk = index.find(options.unk_token);
  if (unk == index.end()) {
    *error = "the unknown token '" + options.unk_token + "' is not in the vocabulary";
    return false;
  }
  spec->types[static_cast<size_t>(unk->second)] = PieceType::kUnknown;
  spec->specials[static_cast<size_t>(SpecialToken::kUnk)] = unk->second;
  const struct {
    const std::string* name;
    SpecialToken which;
  } named[] = {{&options.cls_token, SpecialToken::kCls},
               {&options.sep_token, SpecialToken::kSep},
               {&options.pad_token, SpecialToken::kPad},
               {&options.mask_token, SpecialToken::kMask}};
  for (const auto& s : named) {
    const auto it = index.find(*s.name);
    if (it == index.end()) continue;
    if (it->second == unk->second) {
      *error = "special token '" + *s.name + "' is also the unknown token";
      return false;
    }
    spec->types[static_cast<size_t>(it->second)] = PieceType::kControl;
    spec->specials[static_cast<size_t>(s.which)] = it->second;
  }
  for (const auto& c : options.control_tokens) {
    const auto it = index.find(c);
    if (it == index.end()) {
      *error = "control token '" + c + "' is not in the vocabulary";
      return false;
    }
    if (it->second != unk->second) spec->types[static_cast<size_t>(it->second)] = PieceType::kControl;
  }
  return true;
}

}  // namespace tokenizer_build
}  // namespace attn
