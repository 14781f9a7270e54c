// tokenizer/build/from_sentencepiece.cpp: tokenizer Specs from a
// SentencePiece tokenizer.model (its protobuf read by hand) and from a
// llama2.c tokenizer.bin (host only).
#include <cstring>

#include "attn/tokenizer_build.h"

namespace attn {
namespace tokenizer_build {

namespace {

// A protobuf wire-format reader: just what ModelProto needs.
class Proto {
 public:
  Proto(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  bool done() const { return p_ == end_; }
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      *v |= uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80u) == 0) return true;
    }
    return false;
  }
  // The next field: its number, wire type, and (length-delimited) bytes or
  // (varint / fixed) value.
  bool field(uint32_t* number, uint32_t* wire, const uint8_t** bytes, size_t* len, uint64_t* value) {
    uint64_t key = 0;
    if (!varint(&key)) return false;
    *number = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<uint32_t>(key & 7);
    switch (*wire) {
      case 0:
        return varint(value);
      case 1:
        if (end_ - p_ < 8) return false;
        std::memcpy(value, p_, 8);
        p_ += 8;
        return true;
      case 5: {
        if (end_ - p_ < 4) return false;
        uint32_t v32 = 0;
        std::memcpy(&v32, p_, 4);
        *value = v32;
        p_ += 4;
        return true;
      }
      case 2: {
        uint64_t n = 0;
        if (!varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
        *bytes = p_;
        *len = static_cast<size_t>(n);
        p_ += n;
        return true;
      }
      default:
        return false;
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// ModelProto.SentencePiece.Type
enum SpType { kSpNormal = 1, kSpUnknown = 2, kSpControl = 3, kSpUserDefined = 4, kSpUnused = 5, kSpByte = 6 };

bool fail(std::string* error, const std::string& why) {
  *error = why;
  return false;
}

}  // namespace

bool spec_from_sentencepiece_model(const uint8_t* data, size_t size, Spec* spec, std::string* error) {
  *spec = Spec();
  spec->algorithm = TokenizerAlgorithm::kSentencePieceBpe;
  // Defaults of sentencepiece_model.proto.
  int64_t model_type = 1;  // UNIGRAM
  bool byte_fallback = false;
  bool whitespace_suffix = false;
  int64_t bos_id = 1, eos_id = 2, pad_id = -1;
  bool add_dummy_prefix = true, remove_extra_ws = true, escape_ws = true;
  bool charsmap = false;

  Proto top(data, size);
  uint32_t num = 0, wire = 0;
  const uint8_t* bytes = nullptr;
  size_t len = 0;
  uint64_t value = 0;
  while (!top.done()) {
    if (!top.field(&num, &wire, &bytes, &len, &value))
      return fail(error, "tokenizer.model: malformed protobuf");
    if (num == 1 && wire == 2) {  // pieces
      Proto sp(bytes, len);
      std::string piece;
      float score = 0.0f;
      int64_t type = kSpNormal;
      while (!sp.done()) {
        if (!sp.field(&num, &wire, &bytes, &len, &value))
          return fail(error, "tokenizer.model: malformed piece");
        if (num == 1 && wire == 2) piece.assign(reinterpret_cast<const char*>(bytes), len);
        if (num == 2 && wire == 5) {
          const auto v32 = static_cast<uint32_t>(value);
          std::memcpy(&score, &v32, 4);
        }
        if (num == 3 && wire == 0) type = static_cast<int64_t>(value);
      }
      PieceType t = PieceType::kNormal;
      switch (type) {
        case kSpNormal:
          t = PieceType::kNormal;
          break;
        case kSpUnknown:
          t = PieceType::kUnknown;
          break;
        case kSpControl:
          t = PieceType::kControl;
          break;
        case kSpByte:
          t = PieceType::kByte;
          break;
        default:
          return fail(error,
                      "tokenizer.model: piece '" + piece + "' is user-defined or unused (not supported yet)");
      }
      spec->pieces.push_back(piece);
      spec->scores.push_back(score);
      spec->types.push_back(t);
    } else if (num == 2 && wire == 2) {  // trainer_spec
      Proto ts(bytes, len);
      while (!ts.done()) {
        if (!ts.field(&num, &wire, &bytes, &len, &value))
          return fail(error, "tokenizer.model: malformed trainer_spec");
        if (wire != 0) continue;
        const auto iv = static_cast<int64_t>(static_cast<int32_t>(value));
        if (num == 3) model_type = iv;
        if (num == 24) whitespace_suffix = value != 0;
        if (num == 35) byte_fallback = value != 0;
        if (num == 41) bos_id = iv;
        if (num == 42) eos_id = iv;
        if (num == 43) pad_id = iv;
      }
    } else if (num == 3 && wire == 2) {  // normalizer_spec
      Proto ns(bytes, len);
      while (!ns.done()) {
        if (!ns.field(&num, &wire, &bytes, &len, &value)) {
          return fail(error, "tokenizer.model: malformed normalizer_spec");
        }
        if (num == 2 && wire == 2) charsmap = len > 0;
        if (num == 3 && wire == 0) add_dummy_prefix = value != 0;
        if (num == 4 && wire == 0) remove_extra_ws = value != 0;
        if (num == 5 && wire == 0) escape_ws = value != 0;
      }
    }
  }
  if (spec->pieces.empty()) return fail(error, "tokenizer.model: no pieces");
  if (model_type != 2)
    return fail(error, "tokenizer.model: not a BPE model (only SentencePiece BPE is supported)");
  if (charsmap)
    return fail(error, "tokenizer.model: a normalization rule other than identity (not supported yet)");
  if (remove_extra_ws) return fail(error, "tokenizer.model: remove_extra_whitespaces (not supported yet)");
  if (whitespace_suffix) return fail(error, "tokenizer.model: treat_whitespace_as_suffix (not supported)");
  spec->flags = (add_dummy_prefix ? kTokAddDummyPrefix : 0u) | (escape_ws ? kTokEscapeSpaces : 0u) |
                (byte_fallback ? kTokByteFallback : 0u);
  const auto n = static_cast<int64_t>(spec->pieces.size());
  for (size_t i = 0; i < spec->pieces.size(); ++i) {
    if (spec->types[i] == PieceType::kUnknown) {
      if (spec->specials[0] >= 0) return fail(error, "tokenizer.model: two unknown pieces");
      spec->specials[0] = static_cast<int32_t>(i);
    }
  }
  const int64_t ids[3] = {bos_id, eos_id, pad_id};
  for (int k = 0; k < 3; ++k) {
    if (ids[k] < 0) continue;
    if (ids[k] >= n || spec->types[static_cast<size_t>(ids[k])] != PieceType::kControl) {
      return fail(error, "tokenizer.model: bos/eos/pad id out of range or not a control piece");
    }
    spec->specials[k + 1] = static_cast<int32_t>(ids[k]);
  }
  return true;
}

bool spec_from_llama2c(const uint8_t* data, size_t size, int32_t vocab_size, Spec* spec, std::string* error) {
  *spec = Spec();
  spec->algorithm = TokenizerAlgorithm::kSentencePieceBpe;
  spec->flags = kTokAddDummyPrefix | kTokByteFallback;  // spaces stay ' ', as the pieces spell them
  if (size < 4) return fail(error, "tokenizer.bin: shorter than its header");
  int32_t max_len = 0;
  std::memcpy(&max_len, data, 4);
  size_t at = 4;
  while (at < size && (vocab_size <= 0 || static_cast<int32_t>(spec->pieces.size()) < vocab_size)) {
    float score = 0.0f;
    int32_t len = 0;
    if (size - at < 8) return fail(error, "tokenizer.bin: truncated token record");
    std::memcpy(&score, data + at, 4);
    std::memcpy(&len, data + at + 4, 4);
    at += 8;
    if (len <= 0 || len > max_len || static_cast<size_t>(len) > size - at) {
      return fail(error, "tokenizer.bin: token " + std::to_string(spec->pieces.size()) +
                             " has a length outside [1, max_token_length] or past the end");
    }
    std::string piece(reinterpret_cast<const char*>(data + at), static_cast<size_t>(len));
    at += static_cast<size_t>(len);
    const size_t id = spec->pieces.size();
    PieceType type = PieceType::kNormal;
    if (id == 0) {
      type = PieceType::kUnknown;
    } else if (id == 1 || id == 2) {
      type = PieceType::kControl;
    } else if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>') {
      type = PieceType::kByte;
    }
    spec->pieces.push_back(piece);
    spec->scores.push_back(score);
    spec->types.push_back(type);
  }
  if (vocab_size > 0 && static_cast<int32_t>(spec->pieces.size()) != vocab_size) {
    return fail(error, "tokenizer.bin: fewer tokens than vocab_size");
  }
  if (spec->pieces.size() < 3) return fail(error, "tokenizer.bin: fewer than 3 tokens");
  spec->specials[0] = 0;
  spec->specials[1] = 1;
  spec->specials[2] = 2;
  return true;
}

}  // namespace tokenizer_build
}  // namespace attn
