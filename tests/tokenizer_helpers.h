// tokenizer_helpers.h: what the tokenizer tests share: the committed data,
// blobs in 4-byte aligned storage, golden files, and encode / decode with
// exactly the sizes the tokenizer asks for.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attn/arena.h"
#include "attn/tokenizer.h"
#include "attn/tokenizer_build.h"
#include "host_helpers.h"
#include "tokenizer_golden_lines.h"

namespace tokenizer_tests {

// The hostile-text bound: 100 KB of one character (or a few) encodes in
// under 200 ms natively, where a quadratic encoder takes seconds. Under an
// emulator (qemu-user: cross builds define ATTN_TESTS_EMULATED) code runs 10
// to 30 times slower, so the bound there is 20 times larger: a quadratic
// encoder still takes minutes.
#if defined(ATTN_TESTS_EMULATED) && ATTN_TESTS_EMULATED
constexpr double kHostileTextMs = 4000.0;
#else
constexpr double kHostileTextMs = 200.0;
#endif

inline std::string data_path(const std::string& name) {
  return std::string(ATTN_TEST_DATA_DIR) + "/tokenizers/" + name;
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  const std::string s = read_text(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

using tokenizer_golden::unhex;
using tokenizer_golden::valid_utf8;

// A blob copied to 4-byte aligned storage, as it would sit in flash.
struct Blob {
  std::vector<uint32_t> words;
  size_t size = 0;
  explicit Blob(const std::vector<uint8_t>& bytes) : words((bytes.size() + 3) / 4 + 1), size(bytes.size()) {
    std::memcpy(words.data(), bytes.data(), bytes.size());
  }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words.data()); }
  void set_u32(size_t at, uint32_t v) { std::memcpy(bytes() + at, &v, 4); }
  uint32_t u32(size_t at) const {
    uint32_t v = 0;
    std::memcpy(&v, reinterpret_cast<const uint8_t*>(words.data()) + at, 4);
    return v;
  }
  attn::Status load(attn::Tokenizer* t) const { return attn::Tokenizer::load(words.data(), size, t); }
};

inline std::vector<uint8_t> blob_of(const attn::tokenizer_build::Spec& spec) {
  std::vector<uint8_t> blob;
  std::string error;
  const bool ok = attn::tokenizer_build::write_blob(spec, &blob, &error);
  INFO(error);
  REQUIRE(ok);
  return blob;
}

// The golden file `name` (tokenizer_golden_lines.h).
using Golden = tokenizer_golden::Line;
inline std::vector<Golden> read_golden(const std::string& name) {
  std::vector<Golden> out;
  REQUIRE(tokenizer_golden::parse(read_text(data_path(name)), &out));
  return out;
}

// encode() with exactly tokenize_scratch_bytes() of arena and max_ids() of output.
inline attn::Status encode(const attn::Tokenizer& tok, const std::string& text, std::vector<int32_t>* ids) {
  const size_t scratch = tok.tokenize_scratch_bytes(text.size());
  AlignedBuffer buf(scratch);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, scratch) == attn::Status::kOk);
  ids->assign(tok.max_ids(text.size()), -1);
  size_t n = 0;
  const attn::Status st = tok.encode(text.data(), text.size(), ids->data(), ids->size(), &arena, &n);
  CHECK(arena.used() == 0);
  ids->resize(n);
  return st;
}

// decode() one id at a time into a buffer of `cap` bytes (0: exactly
// max_decode_bytes(), which must always suffice), then decode_flush().
inline std::string decode(const attn::Tokenizer& tok, const std::vector<int32_t>& ids, size_t cap = 0) {
  attn::TokenizerDecodeState state{};
  std::string text;
  std::vector<char> buf(cap != 0 ? cap : tok.max_decode_bytes());
  for (const int32_t id : ids) {
    size_t n = 0;
    REQUIRE(tok.decode(id, &state, buf.data(), buf.size(), &n) == attn::Status::kOk);
    text.append(buf.data(), n);
  }
  size_t n = 0;
  REQUIRE(tok.decode_flush(&state, buf.data(), buf.size(), &n) == attn::Status::kOk);
  text.append(buf.data(), n);
  return text;
}

}  // namespace tokenizer_tests
