// tests/golden.h: reader for the golden attention vectors in tests/data/golden
// (format: tests/data/golden/README.md, writer: tools/fixtures/gen_golden.py).
//
//   std::vector<std::string> files = golden::list_cases(ATTN_TEST_DATA_DIR "/golden");
//   golden::Case c;
//   std::string error;
//   if (!golden::load(files[0], &c, &error)) { ... error says why ... }
//   attn::AttentionConfig cfg = c.config();
//
// Header-only, standard library plus the attn public headers. A malformed
// file is rejected with a message (never a crash or an exception escaping).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "host_helpers.h"

namespace golden {

constexpr char kMagic[8] = {'A', 'T', 'T', 'N', 'G', 'O', 'L', 'D'};
constexpr char kEndMagic[4] = {'E', 'N', 'D', '.'};
// Version 1: 64-byte header (multi-head attention). Version 2: 80 bytes, the
// version-1 fields then num_kv_heads, rope_base, window and a reserved 0. Both
// are read; the generator writes version 1 when the new fields are defaults.
constexpr uint32_t kVersion = 2;  // newest
constexpr size_t kHeaderBytesV1 = 64;
constexpr size_t kHeaderBytesV2 = 80;
constexpr size_t kHeaderBytes = kHeaderBytesV1;  // the smallest header
// Sanity caps, far above what the generator writes: they keep a corrupt
// header from asking for gigabytes.
constexpr int32_t kMaxDim = 4096;
constexpr int32_t kMaxSeq = 4096;
constexpr uint64_t kMaxElements = uint64_t{1} << 26;

// One golden case: config, shape, mask, inputs (float32) and the float64
// PyTorch outputs. Vectors are row-major.
struct Case {
  std::string name;  // file name without folder and ".bin"
  int32_t E = 0, H = 0, head_dim = 0, kdim = 0, vdim = 0;
  bool bias = false;
  int32_t L = 0, S = 0;
  bool causal = false;
  int32_t causal_offset = 0;
  int32_t key_length = -1;  // -1: no key padding
  bool has_additive = false;
  bool self_attention = false;  // key and value are the query (also stored in key/value)
  // Version 2 fields (version 1: H, 0, 0).
  uint32_t version = 1;
  int32_t kv_heads = 0;  // K/V heads, dividing H (grouped-query; 1: multi-query)
  float rope_base = 0;   // rotary embedding base, 0: none (HF Llama half-split pairs)
  int32_t window = 0;    // sliding window with causal: the last `window` keys, 0: none

  std::vector<float> wq, wk, wv, wo;  // [D, E], [Dkv, kdim], [Dkv, vdim], [E, D]
  std::vector<float> bq, bk, bv, bo;  // [D], [Dkv], [Dkv], [E]; empty without bias
  std::vector<float> query;           // [L, E]
  std::vector<float> key;             // [S, kdim]
  std::vector<float> value;           // [S, vdim]
  std::vector<float> additive;        // [L, S]; empty without an additive mask
  std::vector<double> y;              // expected output [L, E]
  std::vector<double> attn;           // expected attention weights [H, L, S]

  int32_t D() const { return H * head_dim; }
  int32_t Dkv() const { return kv_heads * head_dim; }
  // A Llama-style case (version 2): expected values from the HF-LlamaAttention
  // reference of tools/fixtures/gen_golden.py (llama_torch), in float64 torch.
  bool llama() const { return version >= 2; }

  // Query rows whose every key is masked: their expected weights are all 0.
  bool has_fully_masked_row() const {
    const size_t s = static_cast<size_t>(S);
    for (size_t r = 0; r + s <= attn.size(); r += s) {
      if (std::all_of(attn.begin() + static_cast<ptrdiff_t>(r), attn.begin() + static_cast<ptrdiff_t>(r + s),
                      [](double v) { return v == 0.0; })) {
        return true;
      }
    }
    return false;
  }
  // Whether nn.MultiheadAttention made the expected values; otherwise the
  // float64 reference of tools/fixtures/gen_golden.py did (D != E or fully masked rows).
  bool from_torch() const { return !llama() && D() == E && !has_fully_masked_row(); }

  // AttentionConfig's fields in their order (attn/attention.h).
  attn::AttentionConfig config() const { return {E, H, head_dim, kdim, vdim, bias, kv_heads, rope_base}; }
  attn::Mask mask() const {
    attn::Mask m;
    m.causal = causal;
    m.causal_offset = causal_offset;
    m.key_length = key_length;
    m.window = window;
    m.additive = has_additive ? additive.data() : nullptr;
    return m;
  }
  attn::WeightsF32 weights() const {
    attn::WeightsF32 w = weights_f32(wq, wk, wv, wo);
    if (bias) {
      w.bq = bq.data();
      w.bk = bk.data();
      w.bv = bv.data();
      w.bo = bo.data();
    }
    return w;
  }
  // One line: "cross E=40 H=4 head_dim=10 kdim=40 vdim=40 bias L=16 S=24 causal+3 key_length=11 additive".
  std::string describe() const {
    std::string s = self_attention ? "self" : "cross";
    s += " E=" + std::to_string(E) + " H=" + std::to_string(H) + " head_dim=" + std::to_string(head_dim) +
         " kdim=" + std::to_string(kdim) + " vdim=" + std::to_string(vdim) + (bias ? " bias" : " no-bias") +
         " L=" + std::to_string(L) + " S=" + std::to_string(S);
    if (causal) s += causal_offset ? " causal+" + std::to_string(causal_offset) : std::string(" causal");
    if (key_length >= 0) s += " key_length=" + std::to_string(key_length);
    if (has_additive) s += " additive";
    if (kv_heads != H) s += " kv_heads=" + std::to_string(kv_heads);
    if (rope_base != 0) {
      char base[32];
      std::snprintf(base, sizeof base, "%g", static_cast<double>(rope_base));
      s += std::string(" rope_base=") + base;
    }
    if (window != 0) s += " window=" + std::to_string(window);
    return s;
  }
};

namespace detail {

// Sequential little-endian reader over a byte buffer; every read checks bounds.
class Reader {
 public:
  explicit Reader(const std::vector<unsigned char>& b) : b_(b) {}
  size_t pos() const { return pos_; }
  size_t left() const { return b_.size() - pos_; }

  bool u32(uint32_t* v) {
    if (left() < 4) return false;
    *v = 0;
    for (int i = 3; i >= 0; --i) *v = (*v << 8) | b_[pos_ + static_cast<size_t>(i)];
    pos_ += 4;
    return true;
  }
  bool i32(int32_t* v) {
    uint32_t u = 0;
    if (!u32(&u)) return false;
    std::memcpy(v, &u, 4);
    return true;
  }
  bool bytes(void* dst, size_t n) {
    if (left() < n) return false;
    std::memcpy(dst, b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool f32s(size_t n, std::vector<float>* out) {
    if (left() / 4 < n) return false;
    out->resize(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t u = 0;
      u32(&u);
      std::memcpy(&(*out)[i], &u, 4);
    }
    return true;
  }
  bool f64s(size_t n, std::vector<double>* out) {
    if (left() / 8 < n) return false;
    out->resize(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t lo = 0, hi = 0;
      u32(&lo);
      u32(&hi);
      const uint64_t u = (uint64_t{hi} << 32) | lo;
      std::memcpy(&(*out)[i], &u, 8);
    }
    return true;
  }

 private:
  const std::vector<unsigned char>& b_;
  size_t pos_ = 0;
};

inline bool fail(std::string* error, const std::string& msg) {
  if (error) *error = msg;
  return false;
}

inline bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}
inline bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace detail

// Parse one case from the bytes of a file. On failure returns false, sets
// *error (if not null) and leaves *out unspecified.
inline bool parse(const std::vector<unsigned char>& bytes, const std::string& name, Case* out,
                  std::string* error) {
  using detail::fail;
  const std::string where = name + ": ";
  if (out == nullptr) return fail(error, where + "null output");
  Case c;
  c.name = name;
  detail::Reader r(bytes);
  char magic[8] = {};
  uint32_t version = 0;
  if (bytes.size() < kHeaderBytesV1 + sizeof kEndMagic) {
    return fail(error, where + "file too short for a header (" + std::to_string(bytes.size()) + " bytes)");
  }
  r.bytes(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) return fail(error, where + "bad magic (want ATTNGOLD)");
  r.u32(&version);
  if (version != 1 && version != 2)
    return fail(error, where + "unsupported version " + std::to_string(version));
  c.version = version;
  const size_t header_bytes = version == 1 ? kHeaderBytesV1 : kHeaderBytesV2;

  int32_t f[13] = {};
  for (int32_t& v : f) r.i32(&v);
  c.E = f[0];
  c.H = f[1];
  c.head_dim = f[2];
  c.kdim = f[3];
  c.vdim = f[4];
  const int32_t bias = f[5];
  c.L = f[6];
  c.S = f[7];
  const int32_t causal = f[8];
  c.causal_offset = f[9];
  c.key_length = f[10];
  const int32_t additive = f[11];
  const int32_t self_attention = f[12];
  c.kv_heads = c.H;
  if (version >= 2) {
    if (bytes.size() < kHeaderBytesV2 + sizeof kEndMagic)
      return fail(error, where + "file too short for a v2 header");
    uint32_t rope_bits = 0;
    int32_t reserved = 0;
    r.i32(&c.kv_heads);
    r.u32(&rope_bits);
    std::memcpy(&c.rope_base, &rope_bits, 4);
    r.i32(&c.window);
    r.i32(&reserved);
    if (reserved != 0) return fail(error, where + "reserved header field is not 0");
  }

  auto in = [](int32_t v, int32_t lo, int32_t hi) { return v >= lo && v <= hi; };
  if (!in(c.E, 1, kMaxDim) || !in(c.H, 1, kMaxDim) || !in(c.head_dim, 1, kMaxDim) ||
      !in(c.kdim, 1, kMaxDim) || !in(c.vdim, 1, kMaxDim) ||
      static_cast<int64_t>(c.H) * c.head_dim > kMaxDim) {
    return fail(error, where + "dimension out of range");
  }
  if (!in(c.L, 1, kMaxSeq) || !in(c.S, 1, kMaxSeq)) return fail(error, where + "L or S out of range");
  if (!in(bias, 0, 1) || !in(causal, 0, 1) || !in(additive, 0, 1) || !in(self_attention, 0, 1)) {
    return fail(error, where + "a flag is not 0 or 1");
  }
  if (c.causal_offset < 0 || (causal == 0 && c.causal_offset != 0)) {
    return fail(error, where + "bad causal_offset " + std::to_string(c.causal_offset));
  }
  if (!in(c.key_length, -1, c.S)) return fail(error, where + "key_length outside [-1, S]");
  if (!in(c.kv_heads, 1, c.H) || c.H % c.kv_heads != 0) {
    return fail(error, where + "kv_heads " + std::to_string(c.kv_heads) + " does not divide H");
  }
  if (!std::isfinite(c.rope_base) || c.rope_base < 0 || (c.rope_base > 0 && c.head_dim % 2 != 0)) {
    return fail(error, where + "bad rope_base (negative, not finite, or odd head_dim)");
  }
  if (c.window < 0 || (c.window > 0 && causal == 0)) return fail(error, where + "bad window (needs causal)");
  c.bias = bias != 0;
  c.causal = causal != 0;
  c.has_additive = additive != 0;
  c.self_attention = self_attention != 0;
  if (c.self_attention && (c.S != c.L || c.kdim != c.E || c.vdim != c.E)) {
    return fail(error, where + "self_attention needs S == L and kdim == vdim == E");
  }

  // Element counts; dims are capped above, so these products fit in 64 bits.
  const uint64_t E = static_cast<uint64_t>(c.E), D = static_cast<uint64_t>(c.D());
  const uint64_t L = static_cast<uint64_t>(c.L), S = static_cast<uint64_t>(c.S);
  const uint64_t kd = static_cast<uint64_t>(c.kdim), vd = static_cast<uint64_t>(c.vdim);
  const uint64_t H = static_cast<uint64_t>(c.H), Dkv = static_cast<uint64_t>(c.Dkv());
  const uint64_t n_f32 = D * E + Dkv * kd + Dkv * vd + E * D + (c.bias ? D + 2 * Dkv + E : 0) + L * E +
                         S * kd + S * vd + (c.has_additive ? L * S : 0);
  const uint64_t n_f64 = L * E + H * L * S;
  if (n_f32 > kMaxElements || n_f64 > kMaxElements) return fail(error, where + "arrays too large");
  const uint64_t want = header_bytes + 4 * n_f32 + 8 * n_f64 + sizeof kEndMagic;
  if (bytes.size() != want) {
    return fail(error, where + "file is " + std::to_string(bytes.size()) + " bytes, header says " +
                           std::to_string(want));
  }

  auto n = [](uint64_t v) { return static_cast<size_t>(v); };
  bool ok = r.f32s(n(D * E), &c.wq) && r.f32s(n(Dkv * kd), &c.wk) && r.f32s(n(Dkv * vd), &c.wv) &&
            r.f32s(n(E * D), &c.wo);
  if (ok && c.bias) {
    ok = r.f32s(n(D), &c.bq) && r.f32s(n(Dkv), &c.bk) && r.f32s(n(Dkv), &c.bv) && r.f32s(n(E), &c.bo);
  }
  ok = ok && r.f32s(n(L * E), &c.query) && r.f32s(n(S * kd), &c.key) && r.f32s(n(S * vd), &c.value);
  if (ok && c.has_additive) ok = r.f32s(n(L * S), &c.additive);
  ok = ok && r.f64s(n(L * E), &c.y) && r.f64s(n(H * L * S), &c.attn);
  char end[4] = {};
  ok = ok && r.bytes(end, sizeof end) && r.left() == 0;
  if (!ok) return fail(error, where + "truncated arrays");
  if (std::memcmp(end, kEndMagic, sizeof end) != 0) return fail(error, where + "bad end marker (want END.)");

  using detail::all_finite;
  if (!all_finite(c.wq) || !all_finite(c.wk) || !all_finite(c.wv) || !all_finite(c.wo) || !all_finite(c.bq) ||
      !all_finite(c.bk) || !all_finite(c.bv) || !all_finite(c.bo) || !all_finite(c.query) ||
      !all_finite(c.key) || !all_finite(c.value) || !all_finite(c.y) || !all_finite(c.attn)) {
    return fail(error, where + "a weight, input or expected value is not finite");
  }
  for (float m : c.additive) {
    if (std::isnan(m) || m == INFINITY) return fail(error, where + "additive mask holds NaN or +inf");
  }
  *out = std::move(c);
  return true;
}

// Load one case file. On failure returns false and sets *error.
inline bool load(const std::string& path, Case* out, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return detail::fail(error, path + ": cannot open");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return detail::fail(error, path + ": read error");
  return parse(bytes, std::filesystem::path(path).stem().string(), out, error);
}

#ifdef ATTN_TEST_DATA_DIR
// The committed cases: ATTN_TEST_DATA_DIR "/golden" (defined by tests/ and tools/ CMake).
inline std::string default_dir() { return ATTN_TEST_DATA_DIR "/golden"; }
#endif

// Paths of every "*.bin" file in `dir`, sorted; empty if the folder is missing.
inline std::vector<std::string> list_cases(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".bin") out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- fixed-point sidecar: quant/<case>.bin (README.md, "Fixed-point sidecar") ----
constexpr char kQuantMagic[8] = {'A', 'T', 'T', 'N', 'G', 'Q', 'N', 'T'};
constexpr uint32_t kQuantVersion = 1;
constexpr size_t kQuantHeaderBytes = 40;

// N calibration inputs drawn like the case's test input, and the SQNR (dB,
// against Case::y) of the ideal float64 fake-quantized forward of attn's scheme.
struct QuantCalib {
  int32_t n = 0;
  double ideal_s8 = 0, ideal_s16 = 0;
  std::vector<float> query;  // [n, L, E]
  std::vector<float> key;    // [n, S, kdim]; = query for self-attention
  std::vector<float> value;  // [n, S, vdim]; = query for self-attention

  // The float inputs of calibration example i of case c.
  attn::IoF32 io(const Case& c, int32_t i) const {
    const size_t k = static_cast<size_t>(i);
    attn::IoF32 r;
    r.query = query.data() + k * static_cast<size_t>(c.L) * static_cast<size_t>(c.E);
    r.key = key.data() + k * static_cast<size_t>(c.S) * static_cast<size_t>(c.kdim);
    r.value = value.data() + k * static_cast<size_t>(c.S) * static_cast<size_t>(c.vdim);
    return r;
  }
};

// The sidecar of case `c` (path: <dir>/quant/<c.name>.bin). False with *error if
// missing or malformed.
inline bool load_quant(const std::string& dir, const Case& c, QuantCalib* out, std::string* error) {
  const std::string path = dir + "/quant/" + c.name + ".bin";
  std::ifstream f(path, std::ios::binary);
  if (!f) return detail::fail(error, path + ": cannot open");
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  detail::Reader r(b);
  char magic[8];
  uint32_t version = 0;
  int32_t n = 0, self = 0, reserved = 0;
  std::vector<double> ideal;
  if (!r.bytes(magic, 8) || std::memcmp(magic, kQuantMagic, 8) != 0)
    return detail::fail(error, path + ": bad magic");
  if (!r.u32(&version) || version != kQuantVersion) return detail::fail(error, path + ": unknown version");
  if (!r.i32(&n) || !r.i32(&self) || !r.i32(&reserved) || !r.f64s(2, &ideal))
    return detail::fail(error, path + ": truncated header");
  if (n < 1 || n > 1024 || reserved != 0 || (self != 0) != c.self_attention)
    return detail::fail(error, path + ": header disagrees with the case");
  QuantCalib q;
  q.n = n;
  q.ideal_s8 = ideal[0];
  q.ideal_s16 = ideal[1];
  const size_t N = static_cast<size_t>(n);
  if (!r.f32s(N * static_cast<size_t>(c.L) * static_cast<size_t>(c.E), &q.query))
    return detail::fail(error, path + ": truncated");
  if (c.self_attention) {
    q.key = q.query;
    q.value = q.query;
  } else if (!r.f32s(N * static_cast<size_t>(c.S) * static_cast<size_t>(c.kdim), &q.key) ||
             !r.f32s(N * static_cast<size_t>(c.S) * static_cast<size_t>(c.vdim), &q.value)) {
    return detail::fail(error, path + ": truncated");
  }
  char end[4];
  if (!r.bytes(end, 4) || std::memcmp(end, kEndMagic, 4) != 0 || r.left() != 0)
    return detail::fail(error, path + ": bad end marker or trailing bytes");
  if (!detail::all_finite(q.query) || !detail::all_finite(q.key) || !detail::all_finite(q.value) ||
      !detail::all_finite(ideal))
    return detail::fail(error, path + ": not finite");
  *out = std::move(q);
  return true;
}

// The test bound: max|got - want| <= kRel * max|want| + kAbs.
constexpr double kRel = 1e-5;
constexpr double kAbs = 1e-6;

// max|got - want| and max|want| over two arrays of the same length.
struct Error {
  double max_abs = 0;   // max |got - want|
  double max_want = 0;  // max |want|
  double bound() const { return kRel * max_want + kAbs; }
  bool ok() const { return max_abs <= bound(); }
  double relative() const { return max_want > 0 ? max_abs / max_want : max_abs; }
};

inline Error compare(const float* got, const std::vector<double>& want) {
  Error e;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    // A NaN in got must fail: NaN compares false, so count it as infinite error.
    e.max_abs = std::isnan(d) ? INFINITY : std::max(e.max_abs, d);
    e.max_want = std::max(e.max_want, std::fabs(want[i]));
  }
  return e;
}

}  // namespace golden
