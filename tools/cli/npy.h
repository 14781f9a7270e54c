// npy.h: NumPy .npy files (format 1.0-3.0), little-endian float32/float64,
// C order. Header-only so tests can use it too.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attn {
namespace npy {

// v.resize(n) for a batch-sized buffer, asking Linux for transparent huge
// pages before its first touch (THP in "madvise" mode): one page fault per
// 2 MiB instead of per 4 KiB (a quarter of `attn run` on an 8 MiB batch).
template <class V>
void resize_huge(V& v, size_t n) {
  using T = typename V::value_type;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (n * sizeof(T) >= 2 * kHuge && v.capacity() < n) {
    v.reserve(n);
    const uintptr_t b = reinterpret_cast<uintptr_t>(v.data());
    const uintptr_t lo = (b + kHuge - 1) & ~(kHuge - 1), hi = (b + n * sizeof(T)) & ~(kHuge - 1);
    if (hi > lo)
      (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // a hint: errors ignored
  }
#endif
  v.resize(n);
}

// The allocator of batch-sized buffers (BatchVector): resize() leaves new
// values uninitialized, as they are read from a file or computed before any
// use (zero-filling 8 MiB first touched every page for nothing), and blocks of
// 4 MiB or more start on a 2 MiB boundary, so that resize_huge's huge pages
// cover them whole.
template <class T>
struct BatchAllocator {
  using value_type = T;
  BatchAllocator() = default;
  template <class U>
  BatchAllocator(const BatchAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): rebinding
  static std::align_val_t alignment(size_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    return std::align_val_t{n * sizeof(T) >= 2 * kHuge ? kHuge : alignof(std::max_align_t)};
  }
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment(n))); }
  void deallocate(T* p, size_t n) noexcept { ::operator delete(p, alignment(n)); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialized: no zero-fill
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  friend bool operator==(const BatchAllocator&, const BatchAllocator&) { return true; }
  friend bool operator!=(const BatchAllocator&, const BatchAllocator&) { return false; }
};
template <class T>
using BatchVector = std::vector<T, BatchAllocator<T>>;

struct Array {
  std::string descr;           // "<f4" or "<f8"
  std::vector<int64_t> shape;  // C order
  std::vector<double> f64;     // filled for "<f8"
  std::vector<float> f32;      // filled for "<f4"
  std::vector<int32_t> ints;   // filled for "|i1" (int8) and "<i2" (int16)
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// What a .npy header says: dtype, shape, where the data starts and its item size.
struct Header {
  std::string descr;           // e.g. "<f4"; read data only for "<f4", "<f8", "|i1" and "<i2"
  std::vector<int64_t> shape;  // C order
  size_t data_at = 0;          // offset of the data in the file
  size_t item = 0;             // bytes per value; 0: a dtype attn does not read
  int64_t count = 0;           // product(shape)
  std::string shape_text;      // the header's "(2, 3)", for messages
};

// The longest header accepted (NumPy itself refuses headers over 10000 bytes by default).
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

// "float32", "uint8", ... for a NumPy descr ("<f4", "|u1"), for messages; the descr itself when unknown.
inline std::string dtype_name(const std::string& descr) {
  if (descr.size() < 3) return "'" + descr + "'";
  const char order = descr[0], kind = descr[1];
  const std::string bytes = descr.substr(2);
  std::string name;
  if (bytes.find_first_not_of("0123456789") != std::string::npos) return "'" + descr + "'";
  const int bits = std::atoi(bytes.c_str()) * 8;
  if (kind == 'b') {
    name = "bool";
  } else {
    static const char* const kKinds[][2] = {{"f", "float"}, {"i", "int"}, {"u", "uint"}, {"c", "complex"}};
    for (const auto& k : kKinds)
      if (kind == k[0][0]) name = k[1] + std::to_string(bits);
    if (name.empty()) return "'" + descr + "'";
  }
  if (order == '>' && bits > 8) name = "big-endian " + name;
  return name + " ('" + descr + "')";
}

namespace detail {

// The header dict, as NumPy writes it: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// then spaces and a newline. Exactly these three keys, each once; True/False spelled exactly.
struct HeaderDict {
  std::string descr, fortran, shape;
};
inline HeaderDict parse_dict(const std::string& h) {
  size_t p = 0;
  const auto bad = [&](const std::string& what) -> std::runtime_error {
    return std::runtime_error("bad .npy header at byte " + std::to_string(p) + ": " + what);
  };
  const auto ws = [&] {
    while (p < h.size() && (h[p] == ' ' || h[p] == '\t' || h[p] == '\n' || h[p] == '\r')) ++p;
  };
  ws();
  if (p >= h.size() || h[p] != '{') throw bad("expected '{'");
  ++p;
  HeaderDict d;
  bool have[3] = {false, false, false};
  while (true) {
    ws();
    if (p < h.size() && h[p] == '}') break;
    if (p >= h.size() || (h[p] != '\'' && h[p] != '"')) throw bad("expected a quoted key");
    const char qk = h[p];
    const size_t ke = h.find(qk, p + 1);
    if (ke == std::string::npos) throw bad("unterminated key");
    const std::string key = h.substr(p + 1, ke - p - 1);
    p = ke + 1;
    ws();
    if (p >= h.size() || h[p] != ':') throw bad("expected ':' after '" + key + "'");
    ++p;
    ws();
    const size_t vs = p;
    if (p < h.size() && (h[p] == '\'' || h[p] == '"')) {
      const size_t ve = h.find(h[p], p + 1);
      if (ve == std::string::npos) throw bad("unterminated string");
      p = ve + 1;
    } else if (p < h.size() && h[p] == '(') {
      const size_t ve = h.find(')', p + 1);
      if (ve == std::string::npos) throw bad("unterminated tuple");
      p = ve + 1;
    } else {
      while (p < h.size() && std::isalnum(static_cast<unsigned char>(h[p])) != 0) ++p;
    }
    const std::string value = h.substr(vs, p - vs);
    int k = -1;
    if (key == "descr") k = 0;
    if (key == "fortran_order") k = 1;
    if (key == "shape") k = 2;
    if (k < 0) throw bad("unexpected key '" + key + "'");
    if (have[k]) throw bad("key '" + key + "' appears twice");
    have[k] = true;
    (k == 0 ? d.descr : k == 1 ? d.fortran : d.shape) = value;
    ws();
    if (p < h.size() && h[p] == ',') {
      ++p;
      continue;
    }
    ws();
    if (p >= h.size() || h[p] != '}') throw bad("expected ',' or '}'");
  }
  ++p;  // '}'
  ws();
  if (p != h.size()) throw bad("trailing bytes after the header dict");
  static const char* const kKeys[3] = {"descr", "fortran_order", "shape"};
  for (int k = 0; k < 3; ++k)
    if (!have[k]) throw std::runtime_error(std::string(".npy header lacks ") + kKeys[k]);
  return d;
}

}  // namespace detail

// The header of a .npy file from its first `size` bytes (at least the whole
// header; the data may be absent); throws std::runtime_error with a message
// (without the file name). Does not check the data size. A dtype attn does not
// read gives item 0 (the caller names it with dtype_name).
inline Header parse_header(const uint8_t* b, size_t size) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(b, kMagic, 6) != 0) throw std::runtime_error("not a .npy file");
  const int major = b[6];
  size_t hlen = 0, start = 0;
  if (major == 1) {
    hlen = static_cast<size_t>(b[8]) | static_cast<size_t>(b[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw std::runtime_error("truncated .npy header");
    hlen = static_cast<size_t>(b[8]) | static_cast<size_t>(b[9]) << 8 | static_cast<size_t>(b[10]) << 16 |
           static_cast<size_t>(b[11]) << 24;
    start = 12;
  } else {
    throw std::runtime_error("unsupported .npy version " + std::to_string(major));
  }
  if (hlen > kMaxHeaderBytes)
    throw std::runtime_error(".npy header length " + std::to_string(hlen) + " exceeds the limit of " +
                             std::to_string(kMaxHeaderBytes) + " bytes");
  if (hlen > size - start) throw std::runtime_error("truncated .npy header");
  const detail::HeaderDict d =
      detail::parse_dict(std::string(reinterpret_cast<const char*>(b + start), hlen));
  Header a;
  if (d.descr.size() < 2) throw std::runtime_error("bad .npy descr");
  a.descr = d.descr.substr(1, d.descr.size() - 2);
  if (d.fortran == "True") throw std::runtime_error("Fortran-order arrays are not supported");
  if (d.fortran != "False")
    throw std::runtime_error("bad .npy header: 'fortran_order' is '" + d.fortran + "', not True or False");
  const std::string& shape = d.shape;
  if (shape.size() < 2 || shape.front() != '(')
    throw std::runtime_error("bad .npy shape '" + shape + "' (expected a tuple)");
  size_t p = 1;
  while (p < shape.size()) {
    while (p < shape.size() && shape[p] == ' ') ++p;
    if (p >= shape.size() || shape[p] == ')') break;
    size_t e = p;
    while (e < shape.size() && shape[e] >= '0' && shape[e] <= '9') ++e;
    if (e == p || e - p > 12) throw std::runtime_error("bad .npy shape " + shape);
    a.shape.push_back(std::stoll(shape.substr(p, e - p)));
    p = e;
    while (p < shape.size() && shape[p] == ' ') ++p;
    if (p < shape.size() && shape[p] == ',') {
      ++p;
    } else if (p < shape.size() && shape[p] != ')') {
      throw std::runtime_error("bad .npy shape " + shape);
    }
  }
  if (a.descr == "<f4") {
    a.item = 4;
  } else if (a.descr == "<f8") {
    a.item = 8;
  } else if (a.descr == "|i1") {
    a.item = 1;
  } else if (a.descr == "<i2") {
    a.item = 2;
  }
  int64_t n = 1;
  for (int64_t d : a.shape) {
    if (d > (int64_t{1} << 40) / (n == 0 ? 1 : n)) throw std::runtime_error("shape too large");
    n *= d;
  }
  a.count = n;
  a.shape_text = shape;
  a.data_at = start + hlen;
  return a;
}

// The data size check of a file of `file_size` bytes with header `h`.
inline void check_data_size(const Header& h, size_t file_size) {
  if (file_size - h.data_at != static_cast<size_t>(h.count) * h.item)
    throw std::runtime_error("data size " + std::to_string(file_size - h.data_at) +
                             " bytes disagrees with shape " + h.shape_text + " and dtype " + h.descr);
}

// n little-endian int8 (item 1) or int16 (item 2) values widened into *out.
inline void widen_ints(const uint8_t* data, size_t n, size_t item, std::vector<int32_t>* out) {
  out->resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (item == 1) {
      (*out)[i] = static_cast<int8_t>(data[i]);
    } else {
      int16_t v = 0;
      std::memcpy(&v, data + 2 * i, 2);
      (*out)[i] = v;
    }
  }
}

// Parse; throws std::runtime_error with a message (without the file name).
inline Array parse(const std::vector<uint8_t>& b) {
  const Header h = parse_header(b.data(), b.size());
  if (h.item == 0)
    throw std::runtime_error("dtype " + dtype_name(h.descr) +
                             " is not supported: expected float32 ('<f4'), float64 ('<f8'), int8 ('|i1') or "
                             "int16 ('<i2')");
  check_data_size(h, b.size());
  Array a;
  a.descr = h.descr;
  a.shape = h.shape;
  const size_t item = h.item, data_at = h.data_at;
  const int64_t n = h.count;
  if (item == 1 || item == 2) {
    widen_ints(b.data() + data_at, static_cast<size_t>(n), item, &a.ints);
  } else if (item == 4) {
    resize_huge(a.f32, static_cast<size_t>(n));
    if (n) std::memcpy(a.f32.data(), b.data() + data_at, static_cast<size_t>(n) * 4);
  } else {
    a.f64.resize(static_cast<size_t>(n));
    if (n) std::memcpy(a.f64.data(), b.data() + data_at, static_cast<size_t>(n) * 8);
  }
  return a;
}

// The magic, version 1.0 and the header dict `dict`, padded with spaces and
// a newline to a multiple of 64 bytes as NumPy does: a .npy file up to its data.
inline std::vector<uint8_t> header_bytes(std::string dict) {
  const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<uint8_t> out(10 + dict.size());
  std::memcpy(out.data(), "\x93NUMPY\x01\x00", 8);
  out[8] = static_cast<uint8_t>(dict.size() & 0xFF);
  out[9] = static_cast<uint8_t>(dict.size() >> 8);
  std::memcpy(out.data() + 10, dict.data(), dict.size());
  return out;
}

// A .npy file of `descr` ("<f4", "|i1", "<i2"), version 1.0, header padded
// to 64 bytes as NumPy does; `data` holds product(shape) items of that dtype.
inline std::vector<uint8_t> serialize(const std::vector<int64_t>& shape, const std::string& descr,
                                      const void* data, size_t item) {
  // NumPy writes "(3, 4)" and "(5,)": commas followed by a space except the trailing one.
  std::string pretty = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    pretty += std::to_string(shape[i]);
    if (shape.size() == 1) pretty += ",";
    if (i + 1 < shape.size()) pretty += ", ";
  }
  pretty += ")";
  std::vector<uint8_t> out =
      header_bytes("{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + pretty + ", }");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const size_t bytes = static_cast<size_t>(n) * item;
  out.resize(out.size() + bytes);
  if (bytes) std::memcpy(out.data() + out.size() - bytes, data, bytes);
  return out;
}

inline std::vector<uint8_t> serialize_f32(const std::vector<int64_t>& shape, const float* data) {
  return serialize(shape, "<f4", data, 4);
}

}  // namespace npy
}  // namespace attn
