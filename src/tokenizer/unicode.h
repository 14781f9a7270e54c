// tokenizer/unicode.h: the Unicode character classes the pre-tokenizers
// split on (GPT-2's \p{L}, \p{N}, \s...; BERT's punctuation and marks).
// The table is generated from Python's unicodedata by
// tools/tokenizer/gen_unicode_tables.py (unicode.cpp records the version).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {
namespace tok {

// The major class of a code point's Unicode general category.
enum class CharClass : uint8_t {
  kOther = 0,    // Cs, Co, Cn: surrogates, private use, unassigned; above U+10FFFF
  kLetter = 1,   // L*
  kMark = 2,     // M*
  kNumber = 3,   // N*
  kPunct = 4,    // P*
  kSymbol = 5,   // S*
  kSpace = 6,    // Z*, and every code point Python's str.isspace() accepts (tab, line feed, U+0085...)
  kControl = 7,  // Cc, Cf that are not white space
};

// A binary search over a const table of runs (a few KB, flash on a target).
CharClass char_class(uint32_t cp);

// The Unicode version the table was generated from, e.g. "14.0.0".
const char* unicode_version();

// The size of the table, in bytes.
size_t char_class_table_bytes();

}  // namespace tok
}  // namespace attn
