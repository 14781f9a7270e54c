// text.cpp: text in and text out through a tokenizer (text.h).
#include "cli/text.h"

#include <cstring>

#include "attn/arena.h"
#include "cli/cli.h"
#include "cli/tokenizer_files.h"

namespace attn {
namespace cli {

bool Text::from_model(const Model& model) {
  const Status s = model.tokenizer(&tok_);
  if (s == Status::kNotFound) return false;
  if (s != Status::kOk) throw Error("the model's tokenizer: " + describe(s));
  what_ = "the model's tokenizer";
  return true;
}

void Text::from_file(const std::string& path) {
  std::string kind;
  const std::vector<uint8_t> blob = tokenizer_blob(path, 0, &kind);
  own_.assign((blob.size() + 3) / 4, 0);
  std::memcpy(own_.data(), blob.data(), blob.size());
  const Status s = Tokenizer::load(own_.data(), blob.size(), &tok_);
  if (s != Status::kOk) throw Error(path + ": " + describe(s));
  what_ = kind;
}

std::vector<int32_t> Text::encode(const std::string& text, bool specials) const {
  const size_t cap = tok_.max_ids(text.size()), scratch = tok_.tokenize_scratch_bytes(text.size());
  if (cap == SIZE_MAX || scratch == SIZE_MAX)
    throw Error("a text of " + std::to_string(text.size()) + " bytes is too long to encode");
  AlignedBytes buf(scratch);
  Arena arena;
  if (arena.init(buf.data(), scratch) != Status::kOk) throw Error("tokenizer scratch: arena init failed");
  std::vector<int32_t> ids(cap + 2);
  size_t n = 0;
  const bool wordpiece = tok_.algorithm() == TokenizerAlgorithm::kWordPiece;
  const int32_t first = wordpiece ? tok_.special(SpecialToken::kCls) : tok_.special(SpecialToken::kBos);
  const int32_t last = wordpiece ? tok_.special(SpecialToken::kSep) : -1;
  const size_t at = specials && first >= 0 ? 1 : 0;
  const Status s = tok_.encode(text.data(), text.size(), ids.data() + at, cap, &arena, &n);
  if (s != Status::kOk) throw Error("encoding the text: " + describe(s));
  if (at == 1) ids[0] = first;
  n += at;
  if (specials && last >= 0) ids[n++] = last;
  ids.resize(n);
  return ids;
}

std::string Text::decode_one(int32_t id, TokenizerDecodeState* state) const {
  const char* bytes = nullptr;
  size_t len = 0;
  PieceType type = PieceType::kNormal;
  if (tok_.piece(id, &bytes, &len, &type) != Status::kOk)
    throw Error("token id " + std::to_string(id) + " is outside the tokenizer's vocabulary of " +
                std::to_string(tok_.vocab_size()) + " (kTokenOutOfRange)");
  std::string out(tok_.max_decode_bytes(), '\0');
  size_t n = 0;
  const Status s = tok_.decode(id, state, &out[0], out.size(), &n);
  if (s != Status::kOk) throw Error("decoding id " + std::to_string(id) + ": " + describe(s));
  out.resize(n);
  return out;
}

std::string Text::decode_flush(TokenizerDecodeState* state) const {
  std::string out(tok_.max_decode_bytes(), '\0');
  size_t n = 0;
  const Status s = tok_.decode_flush(state, &out[0], out.size(), &n);
  if (s != Status::kOk) throw Error("decoding: " + describe(s));
  out.resize(n);
  return out;
}

std::string Text::decode(const std::vector<int32_t>& ids) const {
  TokenizerDecodeState state{};
  std::string text;
  for (int32_t id : ids) text += decode_one(id, &state);
  return text + decode_flush(&state);
}

bool Text::ends_text(int32_t id) const {
  return id == tok_.special(SpecialToken::kEos) || id == tok_.special(SpecialToken::kBos);
}

}  // namespace cli
}  // namespace attn
