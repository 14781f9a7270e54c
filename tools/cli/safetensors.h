// safetensors.h: reads .safetensors files: an 8-byte little-endian header
// length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [b, e]},
// "__metadata__": {...}}, then the raw data. Float tensors (F32, F64, F16,
// BF16) convert to float32 (F64 rounds to nearest, the others are exact).
// Header-only so tests can use it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "json.h"

namespace attn {
namespace safetensors {

struct Tensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the file's bytes
  size_t bytes = 0;
  size_t count() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
};

namespace detail {

// Just enough JSON (json.h's lexer): values are skipped or read as strings,
// integers, arrays and objects. Keys keep their file order.
class Json : public json::detail::Lexer {
 public:
  explicit Json(const std::string& s) : Lexer(s, "JSON header") {}
  int64_t integer() {
    ws();
    size_t st = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    const size_t digits = i_ - st - (s_[st] == '-' ? 1 : 0);
    i_ = st;  // the position of the number, for the messages
    if (digits == 0) fail("expected an integer");
    if (digits > 18) fail("integer too large");
    i_ = st + (s_[st] == '-' ? 1 : 0) + digits;
    return std::stoll(s_.substr(st, i_ - st));
  }
  void skip(int depth = 0) {
    if (depth > 64) fail("nested too deeply");
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '"') {
      string();
    } else if (c == '{') {
      ++i_;
      if (eat('}')) return;
      do {
        string();
        expect(':');
        skip(depth + 1);
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      if (eat(']')) return;
      do skip(depth + 1);
      while (eat(','));
      expect(']');
    } else {
      const size_t st = i_;
      while (i_ < s_.size() && std::strchr(",}] \n\r\t", s_[i_]) == nullptr) ++i_;
      if (i_ == st) fail("expected a value");
    }
  }
};

inline size_t dtype_bytes(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t man = h & 0x3FF;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(man), -24);  // zero or subnormal: exact
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u |= sign;
    std::memcpy(&f, &u, 4);
    return f;
  }
  uint32_t u = exp == 31 ? (sign | 0x7F800000u | (man << 13)) : (sign | ((exp + 112) << 23) | (man << 13));
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace detail

// Parse a whole file held in `bytes` (which must outlive the result).
// Throws std::runtime_error with a message (without the file name).
inline std::vector<Tensor> parse(const uint8_t* bytes, size_t size) {
  if (size < 8) throw std::runtime_error("not a safetensors file (shorter than 8 bytes)");
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);
  if (n > size - 8) throw std::runtime_error("header length " + std::to_string(n) + " runs past the end");
  const std::string h(reinterpret_cast<const char*>(bytes + 8), static_cast<size_t>(n));
  const uint8_t* data = bytes + 8 + n;
  const size_t data_bytes = size - 8 - static_cast<size_t>(n);
  detail::Json j(h);
  std::vector<Tensor> out;
  j.expect('{');
  if (!j.peek('}')) {
    do {
      const std::string name = j.string();
      j.expect(':');
      if (name == "__metadata__") {
        j.skip();
        continue;
      }
      Tensor t;
      t.name = name;
      bool have_dtype = false, have_shape = false, have_off = false;
      int64_t b = 0, e = 0;
      j.expect('{');
      if (!j.peek('}')) {
        do {
          const std::string k = j.string();
          j.expect(':');
          if (k == "dtype" || k == "shape" || k == "data_offsets") {
            if ((k == "dtype" && have_dtype) || (k == "shape" && have_shape) ||
                (k == "data_offsets" && have_off))
              throw std::runtime_error("tensor '" + name + "' has key '" + k + "' twice");
          }
          if (k == "dtype") {
            t.dtype = j.string();
            have_dtype = true;
          } else if (k == "shape") {
            j.expect('[');
            if (!j.peek(']')) {
              do {
                const int64_t d = j.integer();
                if (d < 0 || d > (int64_t{1} << 40))
                  throw std::runtime_error("tensor '" + name + "': bad dim");
                t.shape.push_back(d);
              } while (j.eat(','));
            }
            j.expect(']');
            have_shape = true;
          } else if (k == "data_offsets") {
            j.expect('[');
            b = j.integer();
            j.expect(',');
            e = j.integer();
            j.expect(']');
            have_off = true;
          } else {
            j.skip();
          }
        } while (j.eat(','));
      }
      j.expect('}');
      if (!have_dtype || !have_shape || !have_off)
        throw std::runtime_error("tensor '" + name + "' lacks dtype, shape or data_offsets");
      if (b < 0 || e < b || static_cast<uint64_t>(e) > data_bytes)
        throw std::runtime_error("tensor '" + name + "' lies outside the data section");
      const size_t item = detail::dtype_bytes(t.dtype);
      if (item == 0) throw std::runtime_error("tensor '" + name + "' has unknown dtype " + t.dtype);
      double elems = 1;
      for (int64_t d : t.shape) elems *= static_cast<double>(d);
      if (elems * static_cast<double>(item) != static_cast<double>(e - b))
        throw std::runtime_error("tensor '" + name + "' has " + std::to_string(e - b) +
                                 " bytes, which disagrees with its shape and dtype");
      t.data = data + b;
      t.bytes = static_cast<size_t>(e - b);
      out.push_back(std::move(t));
    } while (j.eat(','));
  }
  j.expect('}');
  if (!j.at_end()) j.fail("trailing bytes after the header object");
  // Names unique and data ranges disjoint: both checked on sorted orders, O(n log n).
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return out[a].name < out[b].name; });
  for (size_t i = 1; i < order.size(); ++i)
    if (out[order[i]].name == out[order[i - 1]].name)
      throw std::runtime_error("tensor '" + out[order[i]].name + "' appears twice");
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return out[a].data != out[b].data ? out[a].data < out[b].data : out[a].bytes < out[b].bytes;
  });
  const Tensor* prev = nullptr;  // the non-empty tensor that ends last so far
  for (size_t i : order) {
    const Tensor& t = out[i];
    if (t.bytes == 0) continue;  // an empty tensor occupies no bytes
    if (prev != nullptr && t.data < prev->data + prev->bytes)
      throw std::runtime_error("tensors '" + prev->name + "' and '" + t.name +
                               "' share bytes (overlapping data_offsets [" +
                               std::to_string(prev->data - data) + ", " +
                               std::to_string(prev->data - data + static_cast<ptrdiff_t>(prev->bytes)) +
                               ") and [" + std::to_string(t.data - data) + ", " +
                               std::to_string(t.data - data + static_cast<ptrdiff_t>(t.bytes)) + "))");
    if (prev == nullptr || t.data + t.bytes > prev->data + prev->bytes) prev = &t;
  }
  return out;
}
inline std::vector<Tensor> parse(const std::vector<uint8_t>& bytes) {
  return parse(bytes.data(), bytes.size());
}

// The tensor as float32 values. Throws for non-float dtypes.
inline std::vector<float> to_f32(const Tensor& t) {
  const size_t n = t.count();
  std::vector<float> v(n);
  if (t.dtype == "F32") {
    if (n) std::memcpy(v.data(), t.data, n * 4);
  } else if (t.dtype == "F64") {
    for (size_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, t.data + 8 * i, 8);
      v[i] = static_cast<float>(d);
    }
  } else if (t.dtype == "F16" || t.dtype == "BF16") {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, t.data + 2 * i, 2);
      if (t.dtype == "F16") {
        v[i] = detail::half_to_float(h);
      } else {
        const uint32_t u = static_cast<uint32_t>(h) << 16;
        std::memcpy(&v[i], &u, 4);
      }
    }
  } else {
    throw std::runtime_error("tensor '" + t.name + "' has dtype " + t.dtype + ", not a float type");
  }
  return v;
}

}  // namespace safetensors
}  // namespace attn
