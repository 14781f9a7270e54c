// demo_common.h: small helpers shared by the two demo programs of
// tools/demo.sh (demo_encoder.cpp, demo_decoder.cpp): reading a model file
// into an aligned buffer, writing .npy files and C++ arrays for the
// Cortex-M images, and timing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "attn/status.h"
#include "cli/npy.h"

namespace demo {

// A whole file in a 16-byte aligned buffer, as attn::Model::load wants it
// (on a microcontroller the blob is a const array in flash: `attn emit-c`).
struct Blob {
  std::vector<std::max_align_t> storage;
  size_t size = 0;
  const void* data() const { return storage.data(); }
};

inline bool read_blob(const std::string& path, Blob* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  out->size = static_cast<size_t>(f.tellg());
  out->storage.assign(out->size / sizeof(std::max_align_t) + 1, std::max_align_t{});
  f.seekg(0);
  return static_cast<bool>(
      f.read(reinterpret_cast<char*>(out->storage.data()), static_cast<std::streamsize>(out->size)));
}

inline bool fail(const char* what, attn::Status s) {
  std::fprintf(stderr, "demo: %s: %s\n", what, attn::status_name(s));
  return false;
}

// Token ids [rows, cols] as an int32 .npy (the --calib-tokens of `attn quantize`).
inline bool write_ids_npy(const std::string& path, const std::vector<int32_t>& ids, int64_t rows,
                          int64_t cols) {
  const std::vector<uint8_t> bytes = attn::npy::serialize({rows, cols}, "<i4", ids.data(), 4);
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

// `const TYPE NAME[n] = {...};` for a firmware header.
template <class T>
void emit_array(std::ofstream& f, const char* type, const char* name, const T* v, size_t n) {
  f << "const " << type << " " << name << "[" << n << "] = {";
  for (size_t i = 0; i < n; ++i) {
    if (i % 20 == 0) f << "\n ";
    f << " " << static_cast<long long>(v[i]) << ",";
  }
  f << "\n};\n";
}

// Microseconds per call of fn(): the best of `passes` runs of `calls` calls
// (the machine may be busy); 0 when passes is 0.
template <class F>
double best_us(int passes, size_t calls, F fn) {
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < calls; ++i) fn(i);
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    const double us = dt.count() / static_cast<double>(calls);
    best = pass == 0 ? us : (us < best ? us : best);
  }
  return best;
}

}  // namespace demo
