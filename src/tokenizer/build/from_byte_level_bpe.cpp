// tokenizer/build/from_byte_level_bpe.cpp: a byte-level BPE (GPT-2, Qwen2)
// Spec from its vocabulary and merges in GPT-2's unicode spelling (host
// only). The blob holds raw bytes: each piece's characters are mapped back
// through GPT-2's bytes_to_unicode() table.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "attn/tokenizer_build.h"

namespace attn {
namespace tokenizer_build {

namespace {

// GPT-2 encoder.py's bytes_to_unicode(): '!'..'~', U+00A1..U+00AC and
// U+00AE..U+00FF stand for themselves, every other byte b for U+0100 + its
// position among those others. Returns the byte a code point stands for, or -1.
int unicode_to_byte(uint32_t cp) {
  auto printable = [](uint32_t b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; };
  if (cp < 256) return printable(cp) ? static_cast<int>(cp) : -1;
  uint32_t extra = 256;  // the others, in byte order, from U+0100
  for (uint32_t b = 0; b < 256; ++b) {
    if (printable(b)) continue;
    if (extra++ == cp) return static_cast<int>(b);
  }
  return -1;
}

// The raw bytes a piece in GPT-2's spelling stands for; false if it holds
// a character outside the 256 of bytes_to_unicode() or is not UTF-8.
bool unmap(const std::string& piece, std::string* out) {
  out->clear();
  for (size_t i = 0; i < piece.size();) {
    const auto c = static_cast<uint8_t>(piece[i]);
    uint32_t cp = 0;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < piece.size() &&
               (static_cast<uint8_t>(piece[i + 1]) & 0xC0) == 0x80) {
      cp = (uint32_t{c & 0x1Fu} << 6) | (static_cast<uint8_t>(piece[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return false;  // every mapped character is below U+0144: one or two bytes
    }
    const int b = unicode_to_byte(cp);
    if (b < 0) return false;
    out->push_back(static_cast<char>(b));
  }
  return !out->empty();
}

}  // namespace

bool spec_from_byte_level_bpe(const std::vector<std::string>& vocab,
                              const std::vector<std::pair<std::string, std::string>>& merges,
                              const std::vector<ByteLevelAdded>& added, const ByteLevelOptions& options,
                              Spec* spec, std::string* error) {
  *spec = Spec();
  spec->algorithm = TokenizerAlgorithm::kByteLevelBpe;
  spec->split = options.split;
  spec->add_prefix_space = options.add_prefix_space;
  if (options.split != ByteLevelSplit::kGpt2 && options.split != ByteLevelSplit::kQwen2) {
    *error = "unknown byte-level split";
    return false;
  }
  size_t size = vocab.size();
  for (const auto& a : added) {
    if (a.id < 0 || a.content.empty()) {
      *error = "added token '" + a.content + "' has a negative id or no text";
      return false;
    }
    size = std::max(size, static_cast<size_t>(a.id) + 1);
  }
  if (size == 0 || size > ATTN_TOKENIZER_MAX_VOCAB) {
    *error = "the vocabulary is empty or larger than ATTN_TOKENIZER_MAX_VOCAB";
    return false;
  }
  spec->pieces.assign(size, std::string());
  spec->types.assign(size, PieceType::kNormal);
  std::unordered_map<std::string, int32_t> ids;  // GPT-2 spelling -> id
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (vocab[i].empty()) continue;
    if (!unmap(vocab[i], &spec->pieces[i])) {
      *error = "vocabulary piece '" + vocab[i] + "' (id " + std::to_string(i) +
               ") is not spelled in GPT-2's byte-to-unicode characters";
      return false;
    }
    if (!ids.emplace(vocab[i], static_cast<int32_t>(i)).second) {
      *error = "vocabulary piece '" + vocab[i] + "' occurs twice";
      return false;
    }
  }
  for (const auto& a : added) {
    const auto id = static_cast<size_t>(a.id);
    if (!spec->pieces[id].empty() && spec->pieces[id] != a.content) {
      *error = "added token '" + a.content + "' takes id " + std::to_string(id) +
               ", which the vocabulary spells '" + vocab[id] + "'";
      return false;
    }
    spec->pieces[id] = a.content;
    spec->types[id] = PieceType::kControl;
  }
  for (size_t i = 0; i < size; ++i) {
    if (spec->pieces[i].empty()) {
      *error = "id " + std::to_string(i) + " is neither in the vocabulary nor an added token";
      return false;
    }
  }
  // Every byte needs its piece: that is where encoding starts.
  std::vector<bool> have(256, false);
  for (size_t i = 0; i < size; ++i) {
    if (spec->types[i] == PieceType::kNormal && spec->pieces[i].size() == 1) {
      have[static_cast<uint8_t>(spec->pieces[i][0])] = true;
    }
  }
  for (int b = 0; b < 256; ++b) {
    if (!have[static_cast<size_t>(b)]) {
      *error =
          "the vocabulary has no piece for byte " + std::to_string(b) + " (byte-level BPE needs all 256)";
      return false;
    }
  }
  // Merges: ids of both sides and of the result; a repeated pair keeps its
  // last rank (a dict built from the list, as GPT-2 and Hugging Face do).
  auto id_of = [&](const std::string& p, int32_t* id) {
    const auto it = ids.find(p);
    if (it == ids.end() || spec->types[static_cast<size_t>(it->second)] != PieceType::kNormal) return false;
    *id = it->second;
    return true;
  };
  std::map<std::pair<int32_t, int32_t>, size_t> last;
  std::vector<Spec::Merge> all;
  for (size_t r = 0; r < merges.size(); ++r) {
    Spec::Merge m{};
    if (!id_of(merges[r].first, &m.left) || !id_of(merges[r].second, &m.right) ||
        !id_of(merges[r].first + merges[r].second, &m.result)) {
      *error = "merge " + std::to_string(r) + " '" + merges[r].first + " " + merges[r].second +
               "': a side or the merged piece is not in the vocabulary";
      return false;
    }
    last[{m.left, m.right}] = r;
    all.push_back(m);
  }
  for (size_t r = 0; r < all.size(); ++r) {
    if (last[{all[r].left, all[r].right}] == r) spec->merges.push_back(all[r]);
  }
  // Specials by content.
  auto special = [&](const std::string& content, SpecialToken which) {
    if (content.empty()) return true;
    for (size_t i = 0; i < size; ++i) {
      if (spec->types[i] == PieceType::kControl && spec->pieces[i] == content) {
        spec->specials[static_cast<size_t>(which)] = static_cast<int32_t>(i);
        return true;
      }
    }
    *error = "special token '" + content + "' is not an added token";
    return false;
  };
  return special(options.bos, SpecialToken::kBos) && special(options.eos, SpecialToken::kEos) &&
         special(options.pad, SpecialToken::kPad);
}

}  // namespace tokenizer_build
}  // namespace attn
