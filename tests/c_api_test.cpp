// c_api_test.cpp: the C API (attn/attn.h) agrees with the C++ API it wraps.
// The numbers themselves are tested from C in c_api_c99.c (a C99 program).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/attn.h"
#include "attn/decode.h"
#include "attn/quantize.h"
#include "fixed_dtypes.h"

namespace {

// A C config with biases: embed_dim e, num_heads h, num_kv_heads kv (0: h), rope_base (0: no rotary).
attn_config c_config(int32_t e, int32_t h, int32_t kv, float rope_base) {
  attn_config cfg = {};
  cfg.embed_dim = e;
  cfg.num_heads = h;
  cfg.num_kv_heads = kv;
  cfg.rope_base = rope_base;
  cfg.bias = 1;
  return cfg;
}

// A causal mask shifted by offset, a sliding window, keys from key_length on
// padded: in C (first) and in C++ (second).
std::pair<attn_mask, attn::Mask> causal_masks(int32_t offset, int32_t window, int32_t key_length) {
  attn_mask m = {};
  m.causal = 1;
  m.causal_offset = offset;
  m.window = window;
  m.key_padding = 1;
  m.key_length = key_length;
  attn::Mask cm;
  cm.causal = true;
  cm.causal_offset = offset;
  cm.window = window;
  cm.key_length = key_length;
  return {m, cm};
}

// "kArenaTooSmall" -> "ATTN_ERR_ARENA_TOO_SMALL" ("kOk" -> "ATTN_OK").
std::string c_name_of(const std::string& cpp) {
  if (cpp == "kOk") return "ATTN_OK";
  std::string out = "ATTN_ERR";
  for (size_t i = 1; i < cpp.size(); ++i) {
    const char ch = cpp[i];
    if (std::isupper(static_cast<unsigned char>(ch))) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return out;
}

}  // namespace

TEST_CASE("every attn::Status has its ATTN_ERR_* code in attn.h, and no other code exists") {
  // A new code in status.h needs its line in attn.h and attn_c.cpp: this fails until it has one.
  int codes = 0;
  for (int32_t v = -8; v < 512; ++v) {
    const std::string cpp = attn::status_name(static_cast<attn::Status>(v));
    const std::string c = attn_status_name(v);
    if (cpp == "kUnknownStatus") {
      CHECK(c == "ATTN_ERR_UNKNOWN");
    } else {
      ++codes;
      CHECK(c == c_name_of(cpp));
    }
  }
  CHECK(codes > 50);
}

TEST_CASE("ATTN_ARENA_BYTES_F32 is attention_arena_bytes with the default tile") {
  struct Shape {
    int32_t e, h, hd, kv, L, S;
  };
  const Shape shapes[] = {{2, 1, 0, 0, 1, 2},
                          {64, 4, 0, 0, 64, 64},
                          {48, 8, 0, 2, 7, 130},
                          {30, 3, 12, 0, 3, 1},
                          {8, 2, 5, 1, 100, 9}};
  for (const Shape& s : shapes) {
    attn::AttentionConfig c;
    c.embed_dim = s.e;
    c.num_heads = s.h;
    c.head_dim = s.hd;
    c.num_kv_heads = s.kv;
    const size_t want = attn::attention_arena_bytes(c, attn::DType::kF32, s.L, s.S);
    CHECK(want == ATTN_ARENA_BYTES_F32(c.inner_dim(), c.kv_dim(), s.L, s.S));
  }
  // And as a constant expression, which is what it is for.
  constexpr attn::AttentionConfig kCfg{64, 4};
  static_assert(
      ATTN_ARENA_BYTES_F32(64, 64, 64, 64) == attn::attention_arena_bytes(kCfg, attn::DType::kF32, 64, 64),
      "C and C++ arena sizes");
}

TEST_CASE("C plan and forward match the C++ ones bit for bit, with GQA, rope and a sliding window") {
  const attn_config cfg = c_config(8, 4, 2, 10000.0f);
  constexpr int32_t L = 5, S = 7;
  attn_plan plan;
  REQUIRE(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, L, S, 2) == ATTN_OK);

  attn::AttentionConfig cc;
  cc.embed_dim = 8;
  cc.num_heads = 4;
  cc.num_kv_heads = 2;
  cc.rope_base = 10000.0f;
  attn::Plan cpp_plan;
  REQUIRE(attn::plan_attention(cc, attn::DType::kF32, L, S, &cpp_plan, 2) == attn::Status::kOk);
  size_t bytes = 0;
  REQUIRE(attn_plan_arena_bytes(&plan, &bytes) == ATTN_OK);
  CHECK(bytes == cpp_plan.arena_bytes);

  // Deterministic data: D = 8, Dkv = 4.
  std::vector<float> wq(64), wk(32), wv(32), wo(64), bq(8), bk(4), bv(4), bo(8), x(L * 8), kv(S * 8);
  float seed = 0.1f;
  for (auto* v : {&wq, &wk, &wv, &wo, &bq, &bk, &bv, &bo, &x, &kv}) {
    for (float& f : *v) {
      seed = seed * 1.7f + 0.3f;
      seed -= static_cast<float>(static_cast<int>(seed));
      f = seed - 0.5f;
    }
  }
  std::vector<float> y_c(L * 8), y_cpp(L * 8), p_c(4 * L * S), p_cpp(4 * L * S);
  alignas(ATTN_ARENA_ALIGN) static uint8_t arena[4096];
  REQUIRE(bytes <= sizeof arena);

  attn_weights_f32 w = {wq.data(), wk.data(), wv.data(), wo.data(),
                        bq.data(), bk.data(), bv.data(), bo.data()};
  auto masks = causal_masks(2, 3, 6);
  attn_mask& m = masks.first;
  const attn::Mask& cm = masks.second;
  attn_io_f32 io = {x.data(), kv.data(), kv.data(), y_c.data(), p_c.data(), 1};
  REQUIRE(attn_forward_f32(&plan, &w, &m, &io, arena, sizeof arena) == ATTN_OK);

  attn::WeightsF32 cw{wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
  attn::IoF32 cio;
  cio.query = x.data();
  cio.key = cio.value = kv.data();
  cio.output = y_cpp.data();
  cio.attn_weights = p_cpp.data();
  cio.query_position = 1;
  attn::Arena a;
  REQUIRE(a.init(arena, sizeof arena) == attn::Status::kOk);
  REQUIRE(attn::forward_f32(cpp_plan, cw, cm, cio, a) == attn::Status::kOk);
  CHECK(y_c == y_cpp);
  CHECK(p_c == p_cpp);

  // The rope and GQA fields reach the C++ config: a window without causal is rejected there too.
  m.causal = 0;
  CHECK(attn_forward_f32(&plan, &w, &m, &io, arena, sizeof arena) == ATTN_ERR_BAD_WINDOW);
}

#if ATTN_WITH_S8 && ATTN_WITH_S16

namespace {

// A small random float block, quantized by the C++ converter for both integer forwards.
struct QuantCase {
  static constexpr int32_t kE = 12, kH = 3, kL = 6, kS = 9;
  attn::AttentionConfig cfg;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  alignas(16) uint8_t storage[16384];
  attn::WeightsS8 s8;
  attn::WeightsS16 s16;

  QuantCase() {
    cfg.embed_dim = kE;
    cfg.num_heads = kH;
    float seed = 0.37f;
    const auto fill = [&seed](std::vector<float>& v, size_t n) {
      v.resize(n);
      for (float& f : v) {
        seed = seed * 3.1f + 0.17f;
        seed -= static_cast<float>(static_cast<int>(seed));
        f = seed - 0.5f;
      }
    };
    fill(wq, kE * kE), fill(wk, kE * kE), fill(wv, kE * kE), fill(wo, kE * kE);
    fill(bq, kE), fill(bk, kE), fill(bv, kE), fill(bo, kE);
    const attn::WeightsF32 w{wq.data(), wk.data(), wv.data(), wo.data(),
                             bq.data(), bk.data(), bv.data(), bo.data()};
    attn::CalibrationRanges r;
    r.query = r.key = r.value = {-0.5f, 0.5f};
    r.q = r.k = r.v = {-2.0f, 2.0f};
    r.context = {-1.5f, 1.5f};
    r.output = {-2.0f, 2.0f};
    attn::Arena a;
    attn::ActivationQuant act;
    REQUIRE(a.init(storage, sizeof storage) == attn::Status::kOk);
    REQUIRE(attn::quantize_attention_s8(cfg, w, r, a, &s8, &act) == attn::Status::kOk);
    REQUIRE(attn::quantize_attention_s16(cfg, w, r, a, &s16, &act) == attn::Status::kOk);
  }
};

attn_projection_s8 c_proj(const attn::ProjectionS8& p) { return {p.weight, p.bias, p.multiplier, p.shift}; }
attn_projection_s16 c_proj(const attn::ProjectionS16& p) { return {p.weight, p.bias, p.multiplier, p.shift}; }
attn_softmax_fixed c_softmax(const attn::FusedSoftmaxParams& s) {
  return {s.exp_multiplier, s.exp_shift, s.diff_limit, s.score_shift};
}

// The C view of the C++ weights, field by field (independently of attn_c.cpp's copy).
attn_weights_s8 c_weights(const attn::WeightsS8& w, const attn::RopeTable& t) {
  return {c_proj(w.q),
          c_proj(w.k),
          c_proj(w.v),
          c_proj(w.o),
          w.q_zero_point,
          w.k_zero_point,
          w.v_zero_point,
          w.context_zero_point,
          w.output_zero_point,
          c_softmax(w.softmax),
          w.context_multiplier,
          w.context_shift,
          attn_rope_table{t.cos, t.sin, t.positions},
          static_cast<int32_t>(w.mask_coverage),
          w.mask_key_length};
}
attn_weights_s16 c_weights(const attn::WeightsS16& w, const attn::RopeTable& t) {
  return {c_proj(w.q),
          c_proj(w.k),
          c_proj(w.v),
          c_proj(w.o),
          c_softmax(w.softmax),
          w.context_multiplier,
          w.context_shift,
          attn_rope_table{t.cos, t.sin, t.positions},
          static_cast<int32_t>(w.mask_coverage),
          w.mask_key_length};
}

// The C entry points of integer dtype dt (upper-case name DT, C++ side
// dtypes::DT), for the forward and decode tests below: the same names with
// another suffix.
#define ATTN_TEST_DTYPE_ENTRIES(dt, DT)                                                                   \
  using Cpp = dtypes::DT; /* the C++ side: types and entries */                                           \
  static constexpr attn_dtype kCDtype = ATTN_DTYPE_##DT;                                                  \
  using T = Cpp::T;                                                                                       \
  static constexpr attn::DType kDtype = Cpp::kDtype;                                                      \
  static const attn::Weights##DT& weights(const QuantCase& qc) { return qc.dt; }                          \
  static constexpr size_t arena_macro(int32_t e, int32_t l, int32_t s) {                                  \
    return ATTN_ARENA_BYTES_##DT(e, e, l, s);                                                             \
  }                                                                                                       \
  using Cache = attn_kv_cache_##dt;                                                                       \
  using CWeights = attn_weights_##dt;                                                                     \
  using CIo = attn_io_##dt;                                                                               \
  static attn_status init(Cache* c, const attn_plan* p, int32_t w, void* b, size_t n) {                   \
    return attn_kv_cache_init_##dt(c, p, w, b, n);                                                        \
  }                                                                                                       \
  static attn_status reset(Cache* c) { return attn_kv_cache_reset_##dt(c); }                              \
  static attn_status length(const Cache* c, int32_t* l, int32_t* n) {                                     \
    return attn_kv_cache_length_##dt(c, l, n);                                                            \
  }                                                                                                       \
  static attn_status decode(const attn_plan* p, const CWeights* w, Cache* c, const T* x, int32_t n, T* y, \
                            void* a, size_t b) {                                                          \
    return attn_decode_##dt(p, w, c, x, n, y, a, b);                                                      \
  }                                                                                                       \
  static attn_status forward(const attn_plan* p, const CWeights* w, const attn_mask* m, const CIo* io,    \
                             void* a, size_t b) {                                                         \
    return attn_forward_##dt(p, w, m, io, a, b);                                                          \
  }                                                                                                       \
  static attn_status forward(const attn_plan* p, const CWeights* w, const attn_mask* m, const T* x, T* y, \
                             void* a, size_t b) {                                                         \
    const CIo io = {x, x, x, y, 0};                                                                       \
    return forward(p, w, m, &io, a, b);                                                                   \
  }

struct S8Api {
  ATTN_TEST_DTYPE_ENTRIES(s8, S8)
  static T input(size_t i) { return static_cast<T>((i * 37) % 255 - 127); }
  static T kv_input(size_t i) { return static_cast<T>((i * 53) % 255 - 127); }
};

struct S16Api {
  ATTN_TEST_DTYPE_ENTRIES(s16, S16)
  static T input(size_t i) { return static_cast<T>((i * 7919) % 65535 - 32767); }
  static T kv_input(size_t i) { return static_cast<T>((i * 104729) % 65535 - 32767); }
};
#undef ATTN_TEST_DTYPE_ENTRIES

// One forward through C and through C++ with the same mask: the same bytes,
// also with rotary embedding; the integer path's errors reach C.
template <class Api>
void check_c_forward(const QuantCase& qc) {
  using T = typename Api::T;
  constexpr int32_t L = QuantCase::kL, S = QuantCase::kS, E = QuantCase::kE;
  const attn_config cfg = c_config(E, QuantCase::kH, 0, 0.0f);
  auto masks = causal_masks(3, 4, 8);
  attn_mask& m = masks.first;
  const attn::Mask& cm = masks.second;
  alignas(ATTN_ARENA_ALIGN) static uint8_t arena[8192];

  attn_plan plan;
  REQUIRE(attn_plan_init(&plan, &cfg, Api::kCDtype, L, S, 0) == ATTN_OK);
  size_t bytes = 0;
  REQUIRE(attn_plan_arena_bytes(&plan, &bytes) == ATTN_OK);
  CHECK(bytes == Api::arena_macro(E, L, S));
  std::vector<T> x(L * E), kv(S * E), y_c(L * E, 0), y_cpp(L * E, 1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = Api::input(i);
  for (size_t i = 0; i < kv.size(); ++i) kv[i] = Api::kv_input(i);
  const auto& w = Api::weights(qc);
  const typename Api::CWeights cw = c_weights(w, attn::RopeTable{});
  const typename Api::CIo io = {x.data(), kv.data(), kv.data(), y_c.data(), 0};
  REQUIRE(Api::forward(&plan, &cw, &m, &io, arena, sizeof arena) == ATTN_OK);

  attn::Plan p;
  REQUIRE(attn::plan_attention(qc.cfg, Api::kDtype, L, S, &p) == attn::Status::kOk);
  attn::Arena a;
  REQUIRE(a.init(arena, sizeof arena) == attn::Status::kOk);
  typename Api::Cpp::Io cio;
  cio.query = x.data();
  cio.key = cio.value = kv.data();
  cio.output = y_cpp.data();
  REQUIRE(Api::Cpp::forward(p, w, cm, cio, a) == attn::Status::kOk);
  CHECK(y_c == y_cpp);

  // The errors of the integer path reach C: an additive mask, a float plan.
  const float additive[L * S] = {};
  m.additive = additive;
  CHECK(Api::forward(&plan, &cw, &m, &io, arena, sizeof arena) == ATTN_ERR_UNSUPPORTED_MASK);
  m.additive = nullptr;
  // Rotary embedding: the converter's tables through C give the C++ bytes.
  attn_config rope = cfg;
  rope.rope_base = 10000.0f;
  attn_plan rope_plan;
  REQUIRE(attn_plan_init(&rope_plan, &rope, Api::kCDtype, L, S, 0) == ATTN_OK);
  CHECK(Api::forward(&rope_plan, &cw, &m, &io, arena, sizeof arena) == ATTN_ERR_NULL_ARGUMENT);
  alignas(16) static uint8_t table_mem[4096];
  attn::Arena tables;
  REQUIRE(tables.init(table_mem, sizeof table_mem) == attn::Status::kOk);
  attn::RopeTable t;
  REQUIRE(attn::rope_table(10000.0f, qc.cfg.resolved_head_dim(), S, tables, &t) == attn::Status::kOk);
  typename Api::CWeights rw = cw;
  rw.rope = attn_rope_table{t.cos, t.sin, t.positions};
  typename Api::CIo rio = io;
  rio.query_position = S - L;  // query rows at S - L .. S - 1, keys at 0 .. S - 1
  REQUIRE(Api::forward(&rope_plan, &rw, &m, &rio, arena, sizeof arena) == ATTN_OK);
  attn::AttentionConfig rcfg = qc.cfg;
  rcfg.rope_base = 10000.0f;
  REQUIRE(attn::plan_attention(rcfg, Api::kDtype, L, S, &p) == attn::Status::kOk);
  auto rwc = w;
  rwc.rope = t;
  cio.query_position = S - L;
  REQUIRE(Api::Cpp::forward(p, rwc, cm, cio, a) == attn::Status::kOk);
  CHECK(y_c == y_cpp);
  rio.query_position = S - L + 1;  // the last query row passes the table
  CHECK(Api::forward(&rope_plan, &rw, &m, &rio, arena, sizeof arena) == ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE);
  attn_plan f32_plan;
  REQUIRE(attn_plan_init(&f32_plan, &cfg, ATTN_DTYPE_F32, L, S, 0) == ATTN_OK);
  CHECK(Api::forward(&f32_plan, &cw, &m, &io, arena, sizeof arena) == ATTN_ERR_BAD_DTYPE);
  CHECK(Api::forward(&plan, &cw, &m, &io, arena, bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
}

}  // namespace

TEST_CASE("C s8 and s16 forwards match the C++ ones bit for bit") {
  static QuantCase qc;
  SECTION("s8") { check_c_forward<S8Api>(qc); }
  SECTION("s16") { check_c_forward<S16Api>(qc); }
}

namespace {

// L rows decoded through C in chunks of up to 4, through C++ in the same
// chunks, and one causal C forward over the L rows: three identical byte
// strings. With rope_base != 0 the converter's tables rotate Q and K; with a
// window the cache keeps the last `window` positions (capacity window + 1).
template <class Api>
void check_c_decode(const QuantCase& qc, float rope_base, int32_t window) {
  using T = typename Api::T;
  constexpr int32_t L = 11, E = QuantCase::kE, kChunk = 4;
  const int32_t capacity = window > 0 ? window + 1 : L;
  const attn_config cfg = c_config(E, QuantCase::kH, 0, rope_base);
  attn::AttentionConfig ccfg = qc.cfg;
  ccfg.rope_base = rope_base;
  alignas(16) static uint8_t table_mem[4096];
  attn::Arena tables;
  REQUIRE(tables.init(table_mem, sizeof table_mem) == attn::Status::kOk);
  attn::RopeTable t;
  if (rope_base != 0.0f) {
    REQUIRE(attn::rope_table(rope_base, ccfg.resolved_head_dim(), L, tables, &t) == attn::Status::kOk);
  }
  auto w = Api::weights(qc);
  w.rope = t;
  const typename Api::CWeights cw = c_weights(w, t);

  std::vector<T> x(L * E), y_c(L * E, 0), y_cpp(L * E, 1), y_fwd(L * E, 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = Api::input(i);
  alignas(ATTN_ARENA_ALIGN) static uint8_t arena[8192];
  alignas(ATTN_ARENA_ALIGN) static uint8_t cache_buf[4096];
  alignas(ATTN_ARENA_ALIGN) static uint8_t cpp_cache_buf[4096];

  attn_plan plan;
  REQUIRE(attn_plan_init_decode(&plan, &cfg, Api::kCDtype, kChunk, capacity, 0) == ATTN_OK);
  size_t arena_bytes = 0, cache_bytes = 0;
  REQUIRE(attn_plan_arena_bytes(&plan, &arena_bytes) == ATTN_OK);
  REQUIRE(attn_kv_cache_arena_bytes(&plan, &cache_bytes) == ATTN_OK);
  CHECK(arena_bytes == attn::decode_arena_bytes(ccfg, Api::kDtype, kChunk, capacity));
  CHECK(cache_bytes == attn::kv_cache_arena_bytes(ccfg, Api::kDtype, capacity));
  REQUIRE(arena_bytes <= sizeof arena);
  REQUIRE(cache_bytes <= sizeof cache_buf);
  typename Api::Cache cache;
  REQUIRE(Api::init(&cache, &plan, window, cache_buf, cache_bytes) == ATTN_OK);

  attn::Plan p;
  REQUIRE(attn::plan_decode(ccfg, Api::kDtype, kChunk, capacity, &p) == attn::Status::kOk);
  attn::Arena cache_arena, step_arena;
  REQUIRE(cache_arena.init(cpp_cache_buf, sizeof cpp_cache_buf) == attn::Status::kOk);
  REQUIRE(step_arena.init(arena, sizeof arena) == attn::Status::kOk);
  typename Api::Cpp::Cache cpp_cache;
  REQUIRE(Api::Cpp::init(p, window, cache_arena, &cpp_cache) == attn::Status::kOk);

  for (int32_t row = 0; row < L; row += kChunk) {
    const int32_t n = L - row < kChunk ? L - row : kChunk;
    const size_t at = static_cast<size_t>(row) * E;
    REQUIRE(Api::decode(&plan, &cw, &cache, x.data() + at, n, y_c.data() + at, arena, arena_bytes) ==
            ATTN_OK);
    REQUIRE(Api::Cpp::decode(p, w, &cpp_cache, x.data() + at, n, y_cpp.data() + at, step_arena) ==
            attn::Status::kOk);
  }
  CHECK(y_c == y_cpp);

  attn_plan fwd_plan;
  REQUIRE(attn_plan_init(&fwd_plan, &cfg, Api::kCDtype, L, L, 0) == ATTN_OK);
  attn_mask m = {};
  m.causal = 1;
  m.window = window;
  REQUIRE(Api::forward(&fwd_plan, &cw, &m, x.data(), y_fwd.data(), arena, sizeof arena) == ATTN_OK);
  CHECK(y_c == y_fwd);
  // Not all one value: the comparison could tell two decoders apart.
  CHECK(std::count(y_c.begin(), y_c.end(), y_c[0]) < static_cast<long>(y_c.size()));

  int32_t length = -1, next = -1;
  REQUIRE(Api::length(&cache, &length, &next) == ATTN_OK);
  CHECK(next == L);
  CHECK(length == (window > 0 ? std::min(capacity, L) : L));
  REQUIRE(Api::reset(&cache) == ATTN_OK);
  REQUIRE(Api::length(&cache, &length, &next) == ATTN_OK);
  CHECK((length == 0 && next == 0));
  // After a reset the same rows give the same bytes again.
  std::vector<T> again(static_cast<size_t>(kChunk) * E, 3);
  REQUIRE(Api::decode(&plan, &cw, &cache, x.data(), kChunk, again.data(), arena, arena_bytes) == ATTN_OK);
  CHECK(std::equal(again.begin(), again.end(), y_c.begin()));
}

// Each misuse gets its code, and a refused call leaves the cache as it was.
template <class Api>
void check_c_decode_errors(const QuantCase& qc) {
  using T = typename Api::T;
  constexpr int32_t E = QuantCase::kE, kCap = 3;
  attn_config cfg = {};
  cfg.embed_dim = E;
  cfg.num_heads = QuantCase::kH;
  cfg.bias = 1;
  const typename Api::CWeights cw = c_weights(Api::weights(qc), attn::RopeTable{});
  alignas(ATTN_ARENA_ALIGN) static uint8_t arena[8192];
  alignas(ATTN_ARENA_ALIGN) static uint8_t cache_buf[4096];
  std::vector<T> x(4 * E), y(4 * E);
  for (size_t i = 0; i < x.size(); ++i) x[i] = Api::input(i);

  attn_plan plan, f32_plan, other_plan, fwd_plan;
  REQUIRE(attn_plan_init_decode(&plan, &cfg, Api::kCDtype, 2, kCap, 0) == ATTN_OK);
  REQUIRE(attn_plan_init_decode(&f32_plan, &cfg, ATTN_DTYPE_F32, 2, kCap, 0) == ATTN_OK);
  REQUIRE(attn_plan_init_decode(&other_plan, &cfg,
                                Api::kCDtype == ATTN_DTYPE_S8 ? ATTN_DTYPE_S16 : ATTN_DTYPE_S8, 2, kCap,
                                0) == ATTN_OK);
  REQUIRE(attn_plan_init(&fwd_plan, &cfg, Api::kCDtype, 2, kCap, 0) == ATTN_OK);
  size_t cache_bytes = 0, bytes = 0;
  REQUIRE(attn_kv_cache_arena_bytes(&plan, &cache_bytes) == ATTN_OK);
  REQUIRE(attn_plan_arena_bytes(&plan, &bytes) == ATTN_OK);
  CHECK(attn_kv_cache_arena_bytes(&fwd_plan, &cache_bytes) == ATTN_ERR_PLAN_MISMATCH);
  REQUIRE(attn_kv_cache_arena_bytes(&plan, &cache_bytes) == ATTN_OK);

  typename Api::Cache cache;
  // Wrong dtype, a forward plan, bad window, small or misaligned buffer, null args.
  CHECK(Api::init(&cache, &f32_plan, 0, cache_buf, cache_bytes) == ATTN_ERR_BAD_DTYPE);
  CHECK(Api::init(&cache, &other_plan, 0, cache_buf, cache_bytes) == ATTN_ERR_BAD_DTYPE);
  CHECK(Api::init(&cache, &fwd_plan, 0, cache_buf, cache_bytes) == ATTN_ERR_PLAN_MISMATCH);
  CHECK(Api::init(&cache, &plan, kCap + 1, cache_buf, cache_bytes) == ATTN_ERR_BAD_WINDOW);
  CHECK(Api::init(&cache, &plan, -1, cache_buf, cache_bytes) == ATTN_ERR_BAD_WINDOW);
  CHECK(Api::init(&cache, &plan, 0, cache_buf, cache_bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
  CHECK(Api::init(&cache, &plan, 0, cache_buf + 4, cache_bytes) == ATTN_ERR_ARENA_MISALIGNED);
  CHECK(Api::init(&cache, &plan, 0, nullptr, cache_bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::init(&cache, nullptr, 0, cache_buf, cache_bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::init(nullptr, &plan, 0, cache_buf, cache_bytes) == ATTN_ERR_NULL_ARGUMENT);
  // A failed init leaves no usable cache.
  int32_t length = -1, next = -1;
  CHECK(Api::length(&cache, &length, &next) == ATTN_ERR_BAD_HANDLE);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_BAD_HANDLE);
  CHECK(Api::reset(&cache) == ATTN_ERR_BAD_HANDLE);
  CHECK(Api::reset(nullptr) == ATTN_ERR_NULL_ARGUMENT);

  REQUIRE(Api::init(&cache, &plan, 0, cache_buf, cache_bytes) == ATTN_OK);
  CHECK(Api::length(&cache, nullptr, &next) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::length(&cache, &length, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::length(nullptr, &length, &next) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(nullptr, &cw, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(&plan, nullptr, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(&plan, &cw, nullptr, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(&plan, &cw, &cache, nullptr, 1, y.data(), arena, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 1, nullptr, arena, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 1, y.data(), nullptr, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 0, y.data(), arena, bytes) == ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 3, y.data(), arena, bytes) == ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 1, y.data(), arena, bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 1, y.data(), arena + 4, bytes) ==
        ATTN_ERR_ARENA_MISALIGNED);
  // The cache's own dtype is checked against the plan's.
  CHECK(Api::decode(&f32_plan, &cw, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_BAD_DTYPE);
  CHECK(Api::decode(&other_plan, &cw, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_BAD_DTYPE);
  CHECK(Api::decode(&fwd_plan, &cw, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_PLAN_MISMATCH);
  // Broken constants reach C as their code.
  typename Api::CWeights bad = cw;
  bad.softmax.exp_multiplier = 1;
  CHECK(Api::decode(&plan, &bad, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_BAD_QUANT_PARAMS);
  REQUIRE(Api::length(&cache, &length, &next) == ATTN_OK);
  CHECK((length == 0 && next == 0));  // every refusal above left the cache empty

  // Full: 2 + 1 rows fill it, the next row is refused and changes nothing.
  REQUIRE(Api::decode(&plan, &cw, &cache, x.data(), 2, y.data(), arena, bytes) == ATTN_OK);
  REQUIRE(Api::decode(&plan, &cw, &cache, x.data() + 2 * E, 1, y.data(), arena, bytes) == ATTN_OK);
  CHECK(Api::decode(&plan, &cw, &cache, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_CACHE_FULL);
  REQUIRE(Api::length(&cache, &length, &next) == ATTN_OK);
  CHECK((length == kCap && next == kCap));

  // A zeroed handle and another dtype's handle are no cache of this dtype.
  typename Api::Cache zero = {};
  CHECK(Api::decode(&plan, &cw, &zero, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_BAD_HANDLE);
  attn_kv_cache_f32 f32_cache;
  alignas(ATTN_ARENA_ALIGN) static uint8_t f32_buf[4096];
  size_t f32_bytes = 0;
  REQUIRE(attn_kv_cache_arena_bytes(&f32_plan, &f32_bytes) == ATTN_OK);
  REQUIRE(attn_kv_cache_init_f32(&f32_cache, &f32_plan, 0, f32_buf, f32_bytes) == ATTN_OK);
  static_assert(sizeof f32_cache == sizeof zero, "cache handles share one size");
  typename Api::Cache cast;
  std::memcpy(&cast, &f32_cache, sizeof cast);
  CHECK(Api::decode(&plan, &cw, &cast, x.data(), 1, y.data(), arena, bytes) == ATTN_ERR_BAD_HANDLE);
  CHECK(Api::length(&cast, &length, &next) == ATTN_ERR_BAD_HANDLE);
}

}  // namespace

TEST_CASE("C s8 and s16 decoding gives the C++ decode's and one causal forward's bytes") {
  static QuantCase qc;
  SECTION("s8") { check_c_decode<S8Api>(qc, 0.0f, 0); }
  SECTION("s8 with rope") { check_c_decode<S8Api>(qc, 10000.0f, 0); }
  SECTION("s8 with a sliding window") { check_c_decode<S8Api>(qc, 0.0f, 5); }
  SECTION("s16") { check_c_decode<S16Api>(qc, 0.0f, 0); }
  SECTION("s16 with rope and a sliding window") { check_c_decode<S16Api>(qc, 10000.0f, 5); }
}

TEST_CASE("C s8 and s16 decoding: misuse gets its error code") {
  static QuantCase qc;
  SECTION("s8") { check_c_decode_errors<S8Api>(qc); }
  SECTION("s16") { check_c_decode_errors<S16Api>(qc); }
}

TEST_CASE("ATTN_ARENA_BYTES_S8 / _S16 are attention_arena_bytes") {
  constexpr attn::AttentionConfig kCfg{64, 4};
  static_assert(
      ATTN_ARENA_BYTES_S8(64, 64, 64, 128) == attn::attention_arena_bytes(kCfg, attn::DType::kS8, 64, 128),
      "s8 arena");
  static_assert(
      ATTN_ARENA_BYTES_S16(64, 64, 3, 77) == attn::attention_arena_bytes(kCfg, attn::DType::kS16, 3, 77),
      "s16 arena");
  constexpr attn::AttentionConfig kGqa{32, 8, 0, 0, 0, true, 2};
  static_assert(
      ATTN_ARENA_BYTES_S8(32, 8, 9, 40) == attn::attention_arena_bytes(kGqa, attn::DType::kS8, 9, 40),
      "s8 arena with grouped-query attention");
  SUCCEED();
}
#endif  // ATTN_WITH_S8 && ATTN_WITH_S16

#if ATTN_WITH_F32 && ATTN_WITH_S8 && ATTN_WITH_S16
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "attn/model.h"

namespace {

// A committed .attn file, 16-byte aligned, and its C++ model.
struct ModelFile {
  alignas(16) uint8_t bytes[16384];
  size_t size = 0;
  attn::Model cpp;
  attn_model c;
  explicit ModelFile(const std::string& name) {
    std::ifstream f(std::string(ATTN_TEST_DATA_DIR) + "/format/" + name, std::ios::binary);
    const std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE((!data.empty() && data.size() <= sizeof bytes));
    std::memcpy(bytes, data.data(), data.size());
    size = data.size();
    REQUIRE(attn::Model::load(bytes, size, &cpp) == attn::Status::kOk);
    REQUIRE(attn_model_load(&c, bytes, size) == ATTN_OK);
  }
};

}  // namespace

TEST_CASE("C model API: s8/s16 block weights are the C++ Block's, and their errors") {
  static ModelFile s8("quant/mha_self.s8.attn"), s16("quant/mha_cross.s16.attn"), f32("bert.attn");
  attn::Block b8, b16;
  REQUIRE(s8.cpp.block(0, &b8) == attn::Status::kOk);
  REQUIRE(s16.cpp.block(0, &b16) == attn::Status::kOk);

  attn_weights_s8 w8;
  REQUIRE(attn_model_block_weights_s8(&s8.c, 0, &w8) == ATTN_OK);
  const attn_weights_s8 want8 = c_weights(b8.s8, b8.s8.rope);
  CHECK(std::memcmp(&w8.q, &want8.q, 4 * sizeof w8.q) == 0);  // the four projections
  CHECK((w8.q_zero_point == want8.q_zero_point && w8.k_zero_point == want8.k_zero_point &&
         w8.v_zero_point == want8.v_zero_point && w8.context_zero_point == want8.context_zero_point &&
         w8.output_zero_point == want8.output_zero_point));
  CHECK((w8.softmax.exp_multiplier == want8.softmax.exp_multiplier &&
         w8.softmax.exp_shift == want8.softmax.exp_shift &&
         w8.softmax.diff_limit == want8.softmax.diff_limit &&
         w8.softmax.score_shift == want8.softmax.score_shift));
  CHECK((w8.context_multiplier == want8.context_multiplier && w8.context_shift == want8.context_shift));
  CHECK((w8.rope.cos == want8.rope.cos && w8.rope.sin == want8.rope.sin &&
         w8.rope.positions == want8.rope.positions));
  CHECK(w8.q.weight != nullptr);

  attn_weights_s16 w16;
  REQUIRE(attn_model_block_weights_s16(&s16.c, 0, &w16) == ATTN_OK);
  const attn_weights_s16 want16 = c_weights(b16.s16, b16.s16.rope);
  CHECK(std::memcmp(&w16.q, &want16.q, 4 * sizeof w16.q) == 0);
  CHECK((w16.softmax.exp_multiplier == want16.softmax.exp_multiplier &&
         w16.softmax.score_shift == want16.softmax.score_shift &&
         w16.context_multiplier == want16.context_multiplier && w16.context_shift == want16.context_shift));

  // Errors, each leaving *weights zeroed.
  const attn_weights_s8 zero8 = {};
  const auto zeroed8 = [&] { return std::memcmp(&w8, &zero8, sizeof w8) == 0; };
  CHECK(attn_model_block_weights_s8(&s8.c, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_model_block_weights_s8(nullptr, 0, &w8) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(zeroed8());
  REQUIRE(attn_model_block_weights_s8(&s8.c, 0, &w8) == ATTN_OK);
  CHECK(attn_model_block_weights_s8(&s8.c, 1, &w8) == ATTN_ERR_BLOCK_INDEX);
  CHECK(zeroed8());
  CHECK(attn_model_block_weights_s8(&s16.c, 0, &w8) == ATTN_ERR_BAD_DTYPE);
  CHECK(attn_model_block_weights_s8(&f32.c, 0, &w8) == ATTN_ERR_BAD_DTYPE);
  attn_model none = {};
  CHECK(attn_model_block_weights_s8(&none, 0, &w8) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_model_block_weights_s16(&s8.c, 0, &w16) == ATTN_ERR_BAD_DTYPE);
  CHECK(attn_model_block_weights_s16(&f32.c, 0, &w16) == ATTN_ERR_BAD_DTYPE);
  CHECK(attn_model_block_weights_s16(&s16.c, 1, &w16) == ATTN_ERR_BLOCK_INDEX);
  CHECK(attn_model_block_weights_s16(&s16.c, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_model_block_weights_s16(&none, 0, &w16) == ATTN_ERR_BAD_HANDLE);
  attn_weights_f32 wf;
  CHECK(attn_model_block_weights_f32(&s8.c, 0, &wf) == ATTN_ERR_BAD_DTYPE);
  CHECK(attn_model_block_weights_f32(&s16.c, 0, &wf) == ATTN_ERR_BAD_DTYPE);
}

TEST_CASE("C model API: block I/O quantization, tensors by index and role, file info, and their errors") {
  static ModelFile s8("quant/mha_self.s8.attn"), s16("quant/mha_cross.s16.attn"), f32("bert.attn");
  for (ModelFile* m : {&s8, &s16}) {
    attn::Block b;
    REQUIRE(m->cpp.block(0, &b) == attn::Status::kOk);
    attn_block_io io;
    REQUIRE(attn_model_block_io(&m->c, 0, &io) == ATTN_OK);
    const float scales[4] = {io.query_scale, io.key_scale, io.value_scale, io.output_scale};
    const int32_t zps[4] = {io.query_zero_point, io.key_zero_point, io.value_zero_point,
                            io.output_zero_point};
    for (int k = 0; k < 4; ++k) {
      CHECK(scales[k] == b.io.scale[k]);
      CHECK(zps[k] == b.io.zero_point[k]);
    }
  }
  attn_block_io io;
  REQUIRE(attn_model_block_io(&f32.c, 0, &io) == ATTN_OK);
  CHECK(
      (io.query_scale == 1.0f && io.key_scale == 1.0f && io.value_scale == 1.0f && io.output_scale == 1.0f));
  CHECK((io.query_zero_point == 0 && io.output_zero_point == 0));
  CHECK(attn_model_block_io(&s8.c, 1, &io) == ATTN_ERR_BLOCK_INDEX);
  CHECK(io.query_scale == 0.0f);
  CHECK(attn_model_block_io(&s8.c, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_model_block_io(nullptr, 0, &io) == ATTN_ERR_NULL_ARGUMENT);

  // Tensors by index and by (block, role); the file's header.
  uint32_t count = 0;
  REQUIRE(attn_model_tensor_count(&s8.c, &count) == ATTN_OK);
  CHECK(count == s8.cpp.tensor_count());
  attn_tensor_info t, by_name;
  for (uint32_t i = 0; i < count; ++i) {
    REQUIRE(attn_model_tensor(&s8.c, i, &t) == ATTN_OK);
    REQUIRE(attn_model_find_tensor(&s8.c, t.name, &by_name) == ATTN_OK);
    CHECK((t.data == by_name.data && t.role == by_name.role && t.byte_size == by_name.byte_size));
    attn_tensor_info by_role;
    REQUIRE(attn_model_find_block_tensor(&s8.c, t.block, t.role, &by_role) == ATTN_OK);
    CHECK(by_role.data == t.data);
  }
  CHECK(attn_model_tensor(&s8.c, count, &t) == ATTN_ERR_TENSOR_INDEX);
  CHECK(t.data == nullptr);
  CHECK(attn_model_tensor(&s8.c, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_model_tensor_count(&s8.c, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_model_find_block_tensor(&s8.c, 1, 1, &t) == ATTN_ERR_BLOCK_INDEX);
  CHECK(attn_model_find_block_tensor(&s8.c, 0, 99, &t) == ATTN_ERR_NOT_FOUND);
  CHECK(attn_model_find_block_tensor(&s8.c, 0, 0, &t) == ATTN_ERR_NOT_FOUND);
  CHECK(attn_model_find_block_tensor(&f32.c, 0, 24, &t) == ATTN_ERR_NOT_FOUND);  // no quant params in f32

  attn_file_info fi;
  REQUIRE(attn_model_file_info(&s16.c, &fi) == ATTN_OK);
  CHECK((fi.version == s16.cpp.version() && fi.crc32 == s16.cpp.crc() &&
         fi.data_align == s16.cpp.data_align() && fi.block_count == 1 &&
         fi.tensor_count == s16.cpp.tensor_count() && fi.size == s16.size));
  CHECK(attn_model_file_info(&s16.c, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  attn_model none = {};
  CHECK(attn_model_file_info(&none, &fi) == ATTN_ERR_BAD_HANDLE);
  // Integrity after load: a flipped bit in the weights (the last byte) or in the header's CRC field.
  CHECK(attn_model_verify(&s16.c) == ATTN_OK);
  for (size_t at : {s16.size - 1, size_t{8}, size_t{12}}) {
    s16.bytes[at] ^= 0x10;
    CHECK(attn_model_verify(&s16.c) == ATTN_ERR_CRC_MISMATCH);
    s16.bytes[at] ^= 0x10;
  }
  CHECK(attn_model_verify(&s16.c) == ATTN_OK);
  CHECK(attn_model_verify(&none) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_model_verify(nullptr) == ATTN_ERR_NULL_ARGUMENT);
  size_t size = 0;
  CHECK(attn_model_file_bytes(s16.bytes, sizeof s16.bytes, &size) == ATTN_OK);
  CHECK(size == s16.size);
  CHECK(attn_model_file_bytes(s16.bytes, s16.size - 1, &size) == ATTN_ERR_TRUNCATED);
  CHECK(attn_model_file_bytes(s16.bytes, s16.size, nullptr) == ATTN_ERR_NULL_ARGUMENT);
}

TEST_CASE("attn_quantize_s8/_s16 are attn::quantize_value bit for bit, dequantize rounds once") {
  const float scales[] = {0.0294614f, 0.5f, 1.0f, 3.0e-5f, 7.0f};
  std::vector<float> x;
  for (int i = -700; i <= 700; ++i) x.push_back(static_cast<float>(i) * 0.25f);  // ties included
  for (int i = 0; i < 2000; ++i) x.push_back(std::sin(static_cast<float>(i)) * 9.0f);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(3.0e38f);
  x.push_back(-3.0e38f);
  for (const float s : scales) {
    for (const int32_t zp : {-128, -6, 0, 5, 127}) {
      std::vector<int8_t> q8(x.size());
      REQUIRE(attn_quantize_s8(x.data(), x.size(), s, zp, q8.data()) == ATTN_OK);
      std::vector<int16_t> q16(x.size());
      REQUIRE(attn_quantize_s16(x.data(), x.size(), s, zp, q16.data()) == ATTN_OK);
      for (size_t i = 0; i < x.size(); ++i) {
        INFO("x = " << x[i] << ", scale = " << s << ", zero point = " << zp);
        REQUIRE(q8[i] == attn::quantize_value(x[i], attn::QuantParams{s, zp}, attn::DType::kS8));
        REQUIRE(q16[i] == attn::quantize_value(x[i], attn::QuantParams{s, zp}, attn::DType::kS16));
      }
      std::vector<float> y(x.size());
      REQUIRE(attn_dequantize_s8(q8.data(), q8.size(), s, zp, y.data()) == ATTN_OK);
      for (size_t i = 0; i < x.size(); ++i)
        REQUIRE(y[i] == static_cast<float>(static_cast<double>(s) * static_cast<double>(q8[i] - zp)));
      REQUIRE(attn_dequantize_s16(q16.data(), q16.size(), s, zp, y.data()) == ATTN_OK);
      for (size_t i = 0; i < x.size(); ++i)
        REQUIRE(y[i] == static_cast<float>(static_cast<double>(s) * static_cast<double>(q16[i] - zp)));
    }
  }
  // NaN is the real 0: the zero point.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int8_t q = 0;
  REQUIRE(attn_quantize_s8(&nan, 1, 0.5f, -7, &q) == ATTN_OK);
  CHECK(q == -7);
  // Errors write nothing.
  int8_t out[2] = {42, 42};
  const float two[2] = {1.0f, 2.0f};
  CHECK(attn_quantize_s8(two, 2, 0.0f, 0, out) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s8(two, 2, -1.0f, 0, out) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s8(two, 2, nan, 0, out) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s8(two, 2, std::numeric_limits<float>::infinity(), 0, out) ==
        ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s8(two, 2, 1.0f, 128, out) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s8(two, 2, 1.0f, -129, out) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s8(nullptr, 2, 1.0f, 0, out) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_quantize_s8(two, 2, 1.0f, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK((out[0] == 42 && out[1] == 42));
  CHECK(attn_quantize_s8(nullptr, 0, 1.0f, 0, nullptr) == ATTN_OK);  // nothing to do
  int16_t out16[2] = {42, 42};
  CHECK(attn_quantize_s16(two, 2, 1.0f, 32768, out16) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_quantize_s16(two, 2, 0.0f, 0, out16) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK((out16[0] == 42 && out16[1] == 42));
  float y[2] = {5.0f, 5.0f};
  CHECK(attn_dequantize_s8(out, 2, 0.0f, 0, y) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_dequantize_s16(out16, 2, 1.0f, 40000, y) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_dequantize_s8(nullptr, 2, 1.0f, 0, y) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_dequantize_s16(out16, 2, 1.0f, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK((y[0] == 5.0f && y[1] == 5.0f));
}
#endif  // ATTN_WITH_F32 && ATTN_WITH_S8 && ATTN_WITH_S16

TEST_CASE("ATTN_ARENA_BYTES equals attn_plan_arena_bytes over shapes, dtypes and tile sizes") {
  struct Shape {
    int32_t e, h, hd, kv;
  };
  const Shape shapes[] = {{2, 1, 0, 0},   {64, 4, 0, 0}, {48, 8, 0, 2},
                          {30, 3, 12, 0}, {8, 2, 5, 1},  {96, 12, 0, 4}};
  const int32_t lengths[] = {1, 2, 3, 5, 7, 16, 33, 100, 1000};
  const int32_t tiles[] = {1, 2, 3, 4, 6, 8, 48, 64, 5000};
  const attn_dtype dtypes[] = {ATTN_DTYPE_F32, ATTN_DTYPE_S8, ATTN_DTYPE_S16};
  int plans = 0;
  for (const Shape& s : shapes) {
    attn_config cfg = {};
    cfg.embed_dim = s.e;
    cfg.num_heads = s.h;
    cfg.head_dim = s.hd;
    cfg.num_kv_heads = s.kv;
    const int32_t hd = s.hd != 0 ? s.hd : s.e / s.h;
    const size_t d = static_cast<size_t>(s.h) * hd, dkv = static_cast<size_t>(s.kv != 0 ? s.kv : s.h) * hd;
    for (const attn_dtype dt : dtypes) {
      const size_t eb = dt == ATTN_DTYPE_F32 ? 4 : dt == ATTN_DTYPE_S8 ? 1 : 2;
      for (const int32_t L : lengths) {
        for (const int32_t S : lengths) {
          for (const int32_t T : tiles) {
            attn_plan plan;
            size_t got = 0;
            REQUIRE(attn_plan_init(&plan, &cfg, dt, L, S, T) == ATTN_OK);
            REQUIRE(attn_plan_arena_bytes(&plan, &got) == ATTN_OK);
            INFO("E " << s.e << " H " << s.h << " dtype " << dt << " L " << L << " S " << S << " T " << T);
            REQUIRE(ATTN_ARENA_BYTES(eb, d, dkv, L, S, T) == got);
            ++plans;
          }
          attn_plan plan;
          size_t got = 0;
          REQUIRE(attn_plan_init(&plan, &cfg, dt, L, S, 0) == ATTN_OK);  // the default tile
          REQUIRE(attn_plan_arena_bytes(&plan, &got) == ATTN_OK);
          REQUIRE(ATTN_ARENA_BYTES(eb, d, dkv, L, S, ATTN_TILE_ROWS) == got);
        }
      }
    }
  }
  CHECK(plans == 6 * 3 * 9 * 9 * 9);
}

#if ATTN_SATURATION_COUNTERS
// Saturation counters through the C API (a build with ATTN_SATURATION_COUNTERS,
// as the host-ref preset): the counts of the C++ forward on the same bytes,
// added to what the caller's struct held; inputs at the int8 limits saturate.
TEST_CASE("C saturation counters are the C++ forward's, added to the caller's") {
  static ModelFile s8("quant/mha_self.s8.attn");
  attn::Block b;
  REQUIRE(s8.cpp.block(0, &b) == attn::Status::kOk);
  const int32_t L = 5, E = b.config.embed_dim;
  std::vector<int8_t> x(size_t(L) * size_t(E)), y_cpp(x.size()), y_c(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 2) != 0 ? int8_t{127} : int8_t{-128};

  attn::Plan plan;
  REQUIRE(attn::plan_attention(b.config, attn::DType::kS8, L, L, &plan) == attn::Status::kOk);
  std::vector<unsigned char> raw(plan.arena_bytes + ATTN_ARENA_ALIGN);
  unsigned char* buf =
      raw.data() +
      (ATTN_ARENA_ALIGN - reinterpret_cast<uintptr_t>(raw.data()) % ATTN_ARENA_ALIGN) % ATTN_ARENA_ALIGN;
  attn::Arena arena;
  REQUIRE(arena.init(buf, plan.arena_bytes) == attn::Status::kOk);
  attn::SaturationCounts want;
  attn::IoS8 io{x.data(), x.data(), x.data(), y_cpp.data()};
  io.saturation = &want;
  REQUIRE(attn::forward_s8(plan, b.s8, attn::Mask{}, io, arena) == attn::Status::kOk);
  CHECK(want.q + want.k + want.v + want.context + want.output > 0);

  attn_block_info info;
  REQUIRE(attn_model_block(&s8.c, 0, &info) == ATTN_OK);
  attn_plan cplan;
  REQUIRE(attn_plan_init(&cplan, &info.config, ATTN_DTYPE_S8, L, L, 0) == ATTN_OK);
  attn_weights_s8 w;
  REQUIRE(attn_model_block_weights_s8(&s8.c, 0, &w) == ATTN_OK);
  attn_saturation_counts got = {1, 2, 3, 4, 5};
  const attn_io_s8 cio = {x.data(), x.data(), x.data(), y_c.data(), 0, &got};
  REQUIRE(attn_forward_s8(&cplan, &w, nullptr, &cio, buf, plan.arena_bytes) == ATTN_OK);
  CHECK(y_c == y_cpp);  // counting changes no output
  CHECK(got.q == 1 + want.q);
  CHECK(got.k == 2 + want.k);
  CHECK(got.v == 3 + want.v);
  CHECK(got.context == 4 + want.context);
  CHECK(got.output == 5 + want.output);

  attn_io_s8 none = cio;  // no counters: the same forward
  none.saturation = nullptr;
  REQUIRE(attn_forward_s8(&cplan, &w, nullptr, &none, buf, plan.arena_bytes) == ATTN_OK);
  CHECK(y_c == y_cpp);
}
#endif

TEST_CASE("every tensor role has its ATTN_ROLE_* constant and name, and the writers use the names") {
  // C and C++ names come from one list (attn/role_list.h): the same for every number.
  int roles = 0;
  for (int32_t v = -2; v < 300; ++v) {
    const char* c = attn_role_name(v);
    const char* cpp = v >= 0 ? attn::format::role_name(static_cast<attn::format::Role>(v)) : nullptr;
    REQUIRE((c == nullptr) == (cpp == nullptr));
    if (c == nullptr) continue;
    ++roles;
    CHECK(std::string(c) == cpp);
  }
  CHECK(roles == 82);  // 1..8, 15, 16..27, 28..37, 40..62, 64..71, 72..91 (FORMAT.md)
  // The numbers are the file format's (FORMAT.md, "Roles"): they never change.
  CHECK((ATTN_ROLE_WQ == 1 && ATTN_ROLE_BO == 8 && ATTN_ROLE_USER == 15 && ATTN_ROLE_QUANT_PARAMS == 24 &&
         ATTN_ROLE_ROPE_SIN == 27 && ATTN_ROLE_NORM1_WEIGHT == 28 && ATTN_ROLE_FFN_B3 == 37 &&
         ATTN_ROLE_INT_NORM1_WEIGHT == 40 && ATTN_ROLE_FFN_CONSTS == 62 && ATTN_ROLE_TOKEN_EMBEDDING == 64 &&
         ATTN_ROLE_LM_HEAD == 71 && ATTN_ROLE_INT_TOKEN_EMBEDDING == 72 && ATTN_ROLE_MODEL_SCALES == 90));
  CHECK(std::string(attn_role_name(ATTN_ROLE_Q_MULTIPLIER)) == "q_multiplier");
  // Every non-user tensor of the committed files (written by attn import, attn quantize and
  // the export script) is named block.<i>.<role name> or model.<role name>.
  for (const char* name :
       {"format/quant/mha_self.s8.attn", "format/quant/mha_cross.s16.attn", "format/bert.attn",
        "model/llama.attn", "model/bert_cls.attn", "model/llama1.s8.attn", "model/bert1.s16.attn"}) {
    INFO(name);
    std::ifstream f(std::string(ATTN_TEST_DATA_DIR) + "/" + name, std::ios::binary);
    const std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE(!data.empty());
    std::vector<uint8_t> buf(data.size() + 16);
    uint8_t* p = buf.data() + (16 - reinterpret_cast<uintptr_t>(buf.data()) % 16) % 16;
    std::memcpy(p, data.data(), data.size());
    attn::Model m;
    REQUIRE(attn::Model::load(p, data.size(), &m) == attn::Status::kOk);
    int named = 0;
    for (uint32_t i = 0; i < m.tensor_count(); ++i) {
      attn::TensorView t;
      REQUIRE(m.tensor(i, &t) == attn::Status::kOk);
      if (t.role == attn::format::Role::kUser) continue;
      const std::string want =
          (t.block == attn::format::kNoBlock ? std::string("model.")
                                             : "block." + std::to_string(t.block) + ".") +
          attn::format::role_name(t.role);
      CHECK(t.name == want);
      ++named;
    }
    CHECK(named > 0);
  }
}
