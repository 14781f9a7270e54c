// json.h: a small JSON reader for config files (Hugging Face config.json):
// a whole document into a tree, RFC 8259's grammar (numbers included: no '+',
// no leading zeros, no NUL). Numbers keep their text, so integers are read
// exactly and floats as Python's json does (to double, then to float32 where
// wanted). Throws std::runtime_error with the byte offset.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn {
namespace json {

struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // the number's text, or the string
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // file order; a repeated key: the last wins in find()

  const Value* find(const std::string& key) const {
    const Value* v = nullptr;
    for (const auto& m : members)
      if (m.first == key) v = &m.second;
    return v;
  }
};

namespace detail {

// The lexical half of a JSON reader, shared with the safetensors header's
// (safetensors.h): white space, punctuation and strings. Errors throw
// std::runtime_error "bad <what> at byte <offset>: ...".
class Lexer {
 public:
  Lexer(const std::string& s, const char* what) : s_(s), what_(what) {}
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(std::string("bad ") + what_ + " at byte " + std::to_string(i_) + ": " + why);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  // After white space, is c next?
  bool peek(char c) {
    ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  // Consumes c if it comes next.
  bool eat(char c) {
    if (!peek(c)) return false;
    ++i_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      const char e = s_[i_++];
      const char* from = "\"\\/bfnrt";
      const char* to = "\"\\/\b\f\n\r\t";
      const char* at = e != '\0' ? std::strchr(from, e) : nullptr;
      if (at != nullptr) {
        out += to[at - from];
      } else if (e == 'u') {
        uint32_t cp = hex4();
        if (cp >= 0xD800 && cp < 0xDC00) {
          if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') fail("lone surrogate");
          i_ += 2;
          const uint32_t lo = hex4();
          if (lo < 0xDC00 || lo > 0xDFFF) fail("bad surrogate pair");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("lone surrogate");
        }
        utf8(cp, &out);
      } else {
        fail("bad escape");
      }
    }
  }
  bool at_end() {
    ws();
    return i_ == s_.size();
  }
  // A number as RFC 8259 spells it, its text: -? (0 | [1-9][0-9]*)
  // (.[0-9]+)? ([eE][+-]?[0-9]+)?. No '+', no leading zeros, no bare '.',
  // nothing after it that could continue it (NUL bytes included).
  std::string number() {
    ws();
    const size_t st = i_;
    const auto digit = [&] { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; };
    const auto digits = [&](const char* what) {
      if (!digit()) fail(std::string("a number needs a digit ") + what);
      while (digit()) ++i_;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
      if (digit()) fail("a number has a leading zero");
    } else {
      if (!digit()) {
        i_ = st;
        fail("expected a value");
      }
      digits("");
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      digits("after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits("in its exponent");
    }
    return s_.substr(st, i_ - st);
  }
  // true, false, null or a number: which one it was ('t', 'f', 'n' or '0'), the number's text in *text.
  char scalar(std::string* text) {
    ws();
    if (word("true")) return 't';
    if (word("false")) return 'f';
    if (word("null")) return 'n';
    *text = number();
    return '0';
  }

 protected:
  bool word(const char* w) {
    const std::string t(w);
    if (s_.compare(i_, t.size(), t) != 0) return false;
    i_ += t.size();
    return true;
  }
  uint32_t hex4() {
    if (i_ + 4 > s_.size()) fail("short \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return v;
  }
  static void utf8(uint32_t cp, std::string* o) {
    if (cp < 0x80) {
      *o += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *o += static_cast<char>(0xC0 | (cp >> 6));
      *o += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *o += static_cast<char>(0xE0 | (cp >> 12));
      *o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *o += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *o += static_cast<char>(0xF0 | (cp >> 18));
      *o += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *o += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  const std::string& s_;
  size_t i_ = 0;
  const char* what_;
};

// A whole document into a Value tree.
class Parser : public Lexer {
 public:
  explicit Parser(const std::string& s) : Lexer(s, "JSON") {}
  Value document() {
    Value v = value(0);
    if (!at_end()) fail("trailing characters after the JSON value");
    return v;
  }

 private:
  Value value(int depth) {
    if (depth > 64) fail("nested too deeply");
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    Value v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = Value::Type::kObject;
      if (eat('}')) return v;
      do {
        ws();
        std::string k = string();
        expect(':');
        v.members.emplace_back(std::move(k), value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Value::Type::kArray;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Value::Type::kString;
      v.text = string();
    } else {
      const char k = scalar(&v.text);
      v.type = k == '0' ? Value::Type::kNumber : k == 'n' ? Value::Type::kNull : Value::Type::kBool;
      v.boolean = k == 't';
    }
    return v;
  }
};

}  // namespace detail

inline Value parse(const std::string& text) { return detail::Parser(text).document(); }

// The number as an integer: Error unless it is one (no fraction, no exponent) in int64.
inline bool to_int64(const Value& v, int64_t* out) {
  if (v.type != Value::Type::kNumber || v.text.find_first_of(".eE") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = x;
  return true;
}

inline bool to_double(const Value& v, double* out) {
  if (v.type != Value::Type::kNumber) return false;
  *out = std::strtod(v.text.c_str(), nullptr);
  return true;
}

}  // namespace json
}  // namespace attn
