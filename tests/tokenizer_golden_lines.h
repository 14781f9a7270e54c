// tokenizer_golden_lines.h: the committed tokenizer golden files
// (tests/data/tokenizers/*.golden) parsed, for the host tests
// (tokenizer_helpers.h) and for the boards' generator
// (tools/fixtures/tokenizer_goldens/tokenizer_goldens_to_c.cpp). No test
// framework: the callers say what a malformed file means.
//
// A line: the text as hex, a tab, the ids (space-separated); WordPiece's have
// a tab and the decoded text as hex after them.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/utf8.h"

namespace tokenizer_golden {

struct Line {
  std::string text;
  std::vector<int32_t> ids;
  std::string decoded;  // WordPiece: what decode gives (has_decoded)
  bool has_decoded = false;
};

inline std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// The lines of a golden file's contents; false for a line without a tab.
inline bool parse(const std::string& contents, std::vector<Line>* out) {
  std::istringstream f(contents);
  std::string s;
  out->clear();
  while (std::getline(f, s)) {
    const size_t a = s.find('\t');
    if (a == std::string::npos) return false;
    const size_t b = s.find('\t', a + 1);
    Line l;
    l.text = unhex(s.substr(0, a));
    std::istringstream ids(s.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1));
    int32_t id = 0;
    while (ids >> id) l.ids.push_back(id);
    if (b != std::string::npos) {
      l.decoded = unhex(s.substr(b + 1));
      l.has_decoded = true;
    }
    out->push_back(l);
  }
  return true;
}

// Valid UTF-8 as the library reads it: byte-level BPE goldens of other
// bytes decode to U+FFFDs, which the references do not say.
inline bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t l = attn::utf8::char_length(s.data() + i, s.size() - i);
    if (l == 1 && static_cast<uint8_t>(s[i]) >= 0x80) return false;
    i += l;
  }
  return true;
}

}  // namespace tokenizer_golden
