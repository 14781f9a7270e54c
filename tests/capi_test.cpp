// capi_test.cpp: the C API (attn/attn.h) agrees with the C++ API it wraps.
// The numbers themselves are tested from C in c_api_test.c.
#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/attn.h"
#include "attn/quantize.h"

namespace {

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
  attn_config cfg = {};
  cfg.embed_dim = 8;
  cfg.num_heads = 4;
  cfg.num_kv_heads = 2;
  cfg.rope_base = 10000.0f;
  cfg.bias = 1;
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
  attn_mask m = {};
  m.causal = 1;
  m.causal_offset = 2;
  m.window = 3;
  m.key_padding = 1;
  m.key_length = 6;
  attn_io_f32 io = {x.data(), kv.data(), kv.data(), y_c.data(), p_c.data(), 1};
  REQUIRE(attn_forward_f32(&plan, &w, &m, &io, arena, sizeof arena) == ATTN_OK);

  attn::WeightsF32 cw{wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
  attn::Mask cm;
  cm.causal = true;
  cm.causal_offset = 2;
  cm.window = 3;
  cm.key_length = 6;
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

}  // namespace

TEST_CASE("C s8 and s16 forwards match the C++ ones bit for bit") {
  static QuantCase qc;
  constexpr int32_t L = QuantCase::kL, S = QuantCase::kS, E = QuantCase::kE;
  attn_config cfg = {};
  cfg.embed_dim = E;
  cfg.num_heads = QuantCase::kH;
  cfg.bias = 1;
  attn_mask m = {};
  m.causal = 1;
  m.causal_offset = 3;
  m.key_padding = 1;
  m.key_length = 8;
  m.window = 4;
  attn::Mask cm;
  cm.causal = true;
  cm.causal_offset = 3;
  cm.key_length = 8;
  cm.window = 4;
  alignas(ATTN_ARENA_ALIGN) static uint8_t arena[8192];

  SECTION("s8") {
    attn_plan plan;
    REQUIRE(attn_plan_init(&plan, &cfg, ATTN_DTYPE_S8, L, S, 0) == ATTN_OK);
    size_t bytes = 0;
    REQUIRE(attn_plan_arena_bytes(&plan, &bytes) == ATTN_OK);
    CHECK(bytes == ATTN_ARENA_BYTES_S8(E, E, L, S));
    std::vector<int8_t> x(L * E), kv(S * E), y_c(L * E, 0), y_cpp(L * E, 1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 37) % 255 - 127);
    for (size_t i = 0; i < kv.size(); ++i) kv[i] = static_cast<int8_t>((i * 53) % 255 - 127);
    const attn::WeightsS8& w = qc.s8;
    const attn_weights_s8 cw = {c_proj(w.q),          c_proj(w.k),          c_proj(w.v),
                                c_proj(w.o),          w.q_zero_point,       w.k_zero_point,
                                w.v_zero_point,       w.context_zero_point, w.output_zero_point,
                                c_softmax(w.softmax), w.context_multiplier, w.context_shift};
    const attn_io_s8 io = {x.data(), kv.data(), kv.data(), y_c.data()};
    REQUIRE(attn_forward_s8(&plan, &cw, &m, &io, arena, sizeof arena) == ATTN_OK);

    attn::Plan p;
    REQUIRE(attn::plan_attention(qc.cfg, attn::DType::kS8, L, S, &p) == attn::Status::kOk);
    attn::Arena a;
    REQUIRE(a.init(arena, sizeof arena) == attn::Status::kOk);
    attn::IoS8 cio;
    cio.query = x.data();
    cio.key = cio.value = kv.data();
    cio.output = y_cpp.data();
    REQUIRE(attn::forward_s8(p, w, cm, cio, a) == attn::Status::kOk);
    CHECK(y_c == y_cpp);

    // The errors of the integer path reach C: an additive mask, a float plan.
    const float additive[L * S] = {};
    m.additive = additive;
    CHECK(attn_forward_s8(&plan, &cw, &m, &io, arena, sizeof arena) == ATTN_ERR_UNSUPPORTED_MASK);
    m.additive = nullptr;
    attn_config rope = cfg;  // rotary embedding in fixed point: C++ only (attn::RopeTable)
    rope.rope_base = 10000.0f;
    attn_plan rope_plan;
    REQUIRE(attn_plan_init(&rope_plan, &rope, ATTN_DTYPE_S8, L, S, 0) == ATTN_OK);
    CHECK(attn_forward_s8(&rope_plan, &cw, &m, &io, arena, sizeof arena) == ATTN_ERR_NULL_ARGUMENT);
    attn_plan f32_plan;
    REQUIRE(attn_plan_init(&f32_plan, &cfg, ATTN_DTYPE_F32, L, S, 0) == ATTN_OK);
    CHECK(attn_forward_s8(&f32_plan, &cw, &m, &io, arena, sizeof arena) == ATTN_ERR_BAD_DTYPE);
    CHECK(attn_forward_s8(&plan, &cw, &m, &io, arena, bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
  }

  SECTION("s16") {
    attn_plan plan;
    REQUIRE(attn_plan_init(&plan, &cfg, ATTN_DTYPE_S16, L, S, 0) == ATTN_OK);
    size_t bytes = 0;
    REQUIRE(attn_plan_arena_bytes(&plan, &bytes) == ATTN_OK);
    CHECK(bytes == ATTN_ARENA_BYTES_S16(E, E, L, S));
    std::vector<int16_t> x(L * E), kv(S * E), y_c(L * E, 0), y_cpp(L * E, 1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int16_t>((i * 7919) % 65535 - 32767);
    for (size_t i = 0; i < kv.size(); ++i) kv[i] = static_cast<int16_t>((i * 104729) % 65535 - 32767);
    const attn::WeightsS16& w = qc.s16;
    const attn_weights_s16 cw = {c_proj(w.q),          c_proj(w.k),          c_proj(w.v),    c_proj(w.o),
                                 c_softmax(w.softmax), w.context_multiplier, w.context_shift};
    const attn_io_s16 io = {x.data(), kv.data(), kv.data(), y_c.data()};
    REQUIRE(attn_forward_s16(&plan, &cw, &m, &io, arena, sizeof arena) == ATTN_OK);

    attn::Plan p;
    REQUIRE(attn::plan_attention(qc.cfg, attn::DType::kS16, L, S, &p) == attn::Status::kOk);
    attn::Arena a;
    REQUIRE(a.init(arena, sizeof arena) == attn::Status::kOk);
    attn::IoS16 cio;
    cio.query = x.data();
    cio.key = cio.value = kv.data();
    cio.output = y_cpp.data();
    REQUIRE(attn::forward_s16(p, w, cm, cio, a) == attn::Status::kOk);
    CHECK(y_c == y_cpp);
  }
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
