// golden_reader.h: the malformed-file checks of the golden case reader
// (tests/golden.h), shared by golden_test.cpp (version 1 files) and
// golden_llama_test.cpp (version 2): one good file, patched.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "golden.h"

namespace golden {

struct Mutations {
  // The bytes of `path`, which must parse.
  explicit Mutations(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    std::string error;
    REQUIRE(parse(good, "good", &parsed, &error));
  }
  // The good bytes with a little-endian int32 / float32 `v` at `offset`.
  std::vector<unsigned char> with_i32(size_t offset, int32_t v) const {
    std::vector<unsigned char> b = good;
    for (size_t i = 0; i < 4; ++i)
      b[offset + i] = static_cast<unsigned char>(static_cast<uint32_t>(v) >> (8 * i));
    return b;
  }
  std::vector<unsigned char> with_f32(size_t offset, float v) const {
    uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    return with_i32(offset, static_cast<int32_t>(u));
  }
  // The reader refuses `bytes` and says why.
  void rejects(const std::vector<unsigned char>& bytes, const char* what) const {
    INFO(what);
    Case c;
    std::string error;
    CHECK_FALSE(parse(bytes, "bad", &c, &error));
    CHECK(!error.empty());
  }
  // Every truncation is rejected. A header byte (of the first `header_bytes`)
  // set to 0, 1, 0x7f, 0x80 or 0xff never crashes the reader (run under ASan
  // too); where `decides_size(i)` (the byte decides the file size) the change
  // must be rejected.
  void check_truncations_and_flips(size_t header_bytes,
                                   const std::function<bool(size_t)>& decides_size) const {
    Case c;
    std::string error;
    size_t accepted = 0;
    for (size_t n = 0; n < good.size(); ++n) {
      accepted += parse(std::vector<unsigned char>(good.begin(), good.begin() + static_cast<ptrdiff_t>(n)),
                        "cut", &c, &error);
    }
    CHECK(accepted == 0);
    for (size_t i = 0; i < header_bytes; ++i) {
      for (const unsigned char v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
        std::vector<unsigned char> b = good;
        b[i] = v;
        const bool ok = parse(b, "flip", &c, &error);
        if (decides_size(i)) {
          INFO("header byte " << i << " set to " << int{v});
          CHECK((!ok || b == good));
        }
      }
    }
  }
  std::vector<unsigned char> good;
  Case parsed;
};

}  // namespace golden
