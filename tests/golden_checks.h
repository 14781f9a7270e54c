// golden_checks.h: the checks shared by golden_test.cpp (version 1 files) and
// golden_llama_test.cpp (version 2): outputs against PyTorch's, and the
// reader (tests/golden.h) on one good file, patched.
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

// One property the case files must cover: some case has it.
struct Coverage {
  const char* what;
  std::function<bool(const Case&)> has;
};

// Each property of `needs` holds for at least one of `cases`.
inline void check_covers(const std::vector<Case>& cases, const std::vector<Coverage>& needs) {
  for (const Coverage& n : needs) {
    INFO("some case has: " << n.what);
    bool found = false;
    for (const Case& c : cases) found = found || n.has(c);
    CHECK(found);
  }
}

// The largest relative error seen, and the case it came from.
struct Worst {
  double relative = 0;
  std::string name;
  void see(const Error& e, const std::string& case_name) {
    if (e.relative() > relative) {
      relative = e.relative();
      name = case_name;
    }
  }
};

// A forward's output y and attention weights p against PyTorch's, within the
// golden bound (NaN, an entry never written, fails it).
inline void check_against_torch(const Case& c, const std::vector<float>& y, const std::vector<float>& p,
                                Worst* worst_y, Worst* worst_p) {
  const Error ey = compare(y.data(), c.y);
  const Error ep = compare(p.data(), c.attn);
  INFO("y: max abs err " << ey.max_abs << ", bound " << ey.bound() << ", max|y_torch| " << ey.max_want);
  INFO("weights: max abs err " << ep.max_abs << ", bound " << ep.bound());
  CHECK(ey.ok());
  CHECK(ep.ok());
  worst_y->see(ey, c.name);
  worst_p->see(ep, c.name);
}

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
