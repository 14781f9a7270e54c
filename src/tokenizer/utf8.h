// tokenizer/utf8.h: the few UTF-8 facts the tokenizers need.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {
namespace utf8 {

// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's visible space.
constexpr char kSpaceSymbol[] = "\xE2\x96\x81";

inline bool is_continuation(uint8_t b) { return (b & 0xC0u) == 0x80u; }

// The length of the sequence a first byte starts (1..4), 0 for a byte that
// cannot start one (a continuation byte, 0xC0, 0xC1, 0xF5..0xFF).
inline size_t sequence_length(uint8_t b) {
  if (b < 0x80u) return 1;
  if (b < 0xC2u) return 0;
  if (b < 0xE0u) return 2;
  if (b < 0xF0u) return 3;
  if (b < 0xF5u) return 4;
  return 0;
}

// Whether s[0, len) is one well-formed UTF-8 character (no overlong form,
// no surrogate, at most U+10FFFF).
inline bool valid_sequence(const uint8_t* s, size_t len) {
  if (len == 0 || sequence_length(s[0]) != len) return false;
  for (size_t i = 1; i < len; ++i) {
    if (!is_continuation(s[i])) return false;
  }
  if (len == 3) {
    if (s[0] == 0xE0u && s[1] < 0xA0u) return false;   // overlong
    if (s[0] == 0xEDu && s[1] >= 0xA0u) return false;  // surrogate
  }
  if (len == 4) {
    if (s[0] == 0xF0u && s[1] < 0x90u) return false;   // overlong
    if (s[0] == 0xF4u && s[1] >= 0x90u) return false;  // above U+10FFFF
  }
  return true;
}

// The length of the character at s[0, len) as SentencePiece splits text:
// its sequence length when all of it is there and well formed, else 1 (one
// byte, which then falls back to its byte piece).
inline size_t char_length(const char* s, size_t len) {
  const size_t n = sequence_length(static_cast<uint8_t>(s[0]));
  if (n <= 1 || n > len) return 1;
  return valid_sequence(reinterpret_cast<const uint8_t*>(s), n) ? n : 1;
}

}  // namespace utf8
}  // namespace attn
