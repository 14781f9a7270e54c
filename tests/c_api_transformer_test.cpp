// c_api_transformer_test.cpp: the whole-model C API (attn/attn.h:
// attn_transformer_*, attn_model_transformer_config, the sampler) agrees
// with the C++ API it wraps, on small model files written here (f32 from
// random weights, s8 / s16 through the library's converter), and every
// entry's errors. The same from a C99 program: c_api_model_c99.c.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attn/attn.h"
#include "attn/sampler.h"
#include "capi/mirrors.h"
#include "int_model_helpers.h"

using namespace int_model;

namespace {

attn_model load_c(const Blob& b) {
  attn_model m;
  REQUIRE(attn_model_load(&m, b.p, b.n) == ATTN_OK);
  return m;
}

// The C++ f32 reference: one forward, or decoding one token at a time.
std::vector<float> cpp_f32(const attn::Model& m, const std::vector<int32_t>& toks, bool decode_steps,
                           attn::OutputRows rows = attn::OutputRows::kAll) {
  const ModelWeights<attn::TransformerWeightsF32> mw(m);
  const TransformerConfig& c = mw.config;
  const attn::TransformerWeightsF32& w = mw.w;
  const int32_t n = int32_t(toks.size());
  attn::TransformerPlan p;
  REQUIRE(attn::plan_transformer(c, DType::kF32, n, decode_steps ? n : 0, &p) == Status::kOk);
  Buffer buf(p.arena_bytes + p.state_bytes);
  attn::Arena a;
  REQUIRE(a.init(buf.data, p.arena_bytes + p.state_bytes) == Status::kOk);
  const size_t od = size_t(c.output_dim());
  std::vector<float> out(toks.size() * od);
  if (!decode_steps) {
    REQUIRE(attn::transformer_forward_f32(p, w, toks.data(), n, rows, out.data(), a) == Status::kOk);
  } else {
    attn::TransformerStateF32 s;
    REQUIRE(attn::transformer_state_init_f32(p, 0, a, &s) == Status::kOk);
    for (int32_t i = 0; i < n; ++i) {
      REQUIRE(attn::transformer_decode_f32(p, w, &s, &toks[size_t(i)], 1, attn::OutputRows::kAll,
                                           out.data() + size_t(i) * od, a) == Status::kOk);
    }
  }
  return out;
}

// A bound C model of `blob` for n tokens (capacity n when decoding).
struct CModel {
  attn_model model;
  attn_transformer tf;
  std::unique_ptr<Buffer> buf;
  size_t bytes = 0;
};
void bind(CModel* cm, const Blob& b, int32_t n, int32_t capacity, int32_t window = 0) {
  cm->model = load_c(b);
  REQUIRE(attn_transformer_init_arena_bytes(&cm->model, n, capacity, &cm->bytes) == ATTN_OK);
  cm->buf = std::make_unique<Buffer>(cm->bytes);
  // Exactly the reported bytes suffice (every call below runs in them).
  REQUIRE(attn_transformer_init(&cm->tf, &cm->model, n, capacity, window, cm->buf->data, cm->bytes) ==
          ATTN_OK);
}

template <class W>
std::vector<int32_t> cpp_int(const ModelWeights<W>& mw, const std::vector<int32_t>& toks, float* scale) {
  *scale = mw.w.output_scale;
  return run(mw.config, mw.w, toks);
}

// The integer C++ reference of a model file: forward of toks, int32.
std::vector<int32_t> cpp_int(const attn::Model& m, const std::vector<int32_t>& toks, DType dt, float* scale) {
  if (dt == DType::kS8) return cpp_int(ModelWeights<attn::TransformerWeightsS8>(m), toks, scale);
  return cpp_int(ModelWeights<attn::TransformerWeightsS16>(m), toks, scale);
}

std::vector<uint8_t> int_file(const TransformerConfig& c, DType dt, uint32_t seed) {
  const Blob f32(f32_file(c, seed));
  attn::Model fm;
  REQUIRE(attn::Model::load(f32.p, f32.n, &fm) == Status::kOk);
  const auto cal = sequences(3, 8, c.vocab_size, seed + 7);
  if (dt == DType::kS8) return fixed_file(c, quantize<attn::TransformerWeightsS8>(fm, cal).w);
  return fixed_file(c, quantize<attn::TransformerWeightsS16>(fm, cal).w);
}

// A config value's bits: floats compared exactly, ints as they are.
uint32_t field_bits(float x) { return bits(x); }
uint32_t field_bits(int32_t x) { return static_cast<uint32_t>(x); }

}  // namespace

TEST_CASE("C model config: every field of the file's TransformerConfig, its dtype, byte_vocab",
          "[c_api][transformer]") {
  for (const auto& k : cases()) {
    INFO(k.name);
    const Blob b(f32_file(k.c, 3));
    attn_model m = load_c(b);
    attn_transformer_config cc;
    attn_dtype dt = 0;
    REQUIRE(attn_model_transformer_config(&m, &cc, &dt) == ATTN_OK);
    CHECK(dt == ATTN_DTYPE_F32);
    // Against the file's config as the C++ loader reads it (head_dim and
    // num_kv_heads resolved), every field of the mirror's list (capi/mirrors.h,
    // whose static_asserts tie the list to the C struct); floats by their bits.
    attn::Model cm;
    REQUIRE(attn::Model::load(b.p, b.n, &cm) == Status::kOk);
    TransformerConfig f;
    REQUIRE(cm.transformer_config(&f) == Status::kOk);
    CHECK(cc.head_dim == f.embed_dim / f.num_heads);
    CHECK(cc.vocab_size == k.c.vocab_size);
#define ATTN_VALUE(name) CHECK(field_bits(cc.name) == field_bits(f.name));
#define ATTN_FLAG(name) CHECK(cc.name == int32_t(f.name));
#define ATTN_ENUM(name, E) CHECK(cc.name == int32_t(f.name));
    ATTN_TRANSFORMER_CONFIG_FIELDS(ATTN_VALUE, ATTN_FLAG, ATTN_ENUM)
#undef ATTN_VALUE
#undef ATTN_FLAG
#undef ATTN_ENUM
    int32_t bv = -1;
    REQUIRE(attn_model_byte_vocab(&m, &bv) == ATTN_OK);
    CHECK(bv == 0);
  }
  // A byte-vocab file says so.
  {
    TransformerConfig bc = llama(LmHead::kTied);
    bc.vocab_size = 256;  // ids 0..255 are the bytes
    tools::ModelSpec s;
    tools::add_transformer_f32(s, bc, true, random_weights(bc, 4));
    const Blob b(tools::write_model(s));
    attn_model m = load_c(b);
    int32_t bv = -1;
    REQUIRE(attn_model_byte_vocab(&m, &bv) == ATTN_OK);
    CHECK(bv == 1);
  }
  // The integer files report their dtype.
  for (DType dt : {DType::kS8, DType::kS16}) {
    const Blob b(int_file(bert(), dt, 5));
    attn_model m = load_c(b);
    attn_transformer_config cc;
    attn_dtype got = 0;
    REQUIRE(attn_model_transformer_config(&m, &cc, &got) == ATTN_OK);
    CHECK(got == attn_dtype(dt));
  }
  // attn_transformer_config_init: the C++ defaults.
  attn_transformer_config d;
  std::memset(&d, 0x5A, sizeof d);
  REQUIRE(attn_transformer_config_init(&d) == ATTN_OK);
  const TransformerConfig def;
  CHECK(d.vocab_size == 0);
  CHECK(d.causal == 0);
  CHECK(d.norm == int32_t(def.norm));
  CHECK(bits(d.norm_eps) == bits(def.norm_eps));
  CHECK(d.activation == int32_t(def.activation));
  CHECK(d.head == ATTN_HEAD_NONE);
  CHECK(d.attention_bias == 1);
  CHECK(d.ffn_bias == 1);
  CHECK(d.norm_bias == 1);
  CHECK(attn_transformer_config_init(nullptr) == ATTN_ERR_NULL_ARGUMENT);
}

TEST_CASE("C transformer plan: the C++ plan's bytes and errors", "[c_api][transformer]") {
  for (const auto& k : cases()) {
    for (DType dt : {DType::kF32, DType::kS8, DType::kS16}) {
      INFO(k.name << " dtype " << int(dt));
      attn_transformer_config cc;
      {
        const Blob b(f32_file(k.c, 3));
        attn_model m = load_c(b);
        attn_dtype d = 0;
        REQUIRE(attn_model_transformer_config(&m, &cc, &d) == ATTN_OK);
      }
      const int32_t cap = k.c.causal ? 12 : 0;
      for (int32_t tile : {0, 3}) {
        attn_transformer_plan p;
        REQUIRE(attn_transformer_plan_init(&p, &cc, attn_dtype(dt), 8, cap, tile) == ATTN_OK);
        attn::TransformerPlan want;
        REQUIRE(attn::plan_transformer(k.c, dt, 8, cap, &want, tile == 0 ? ATTN_TILE_ROWS : tile) ==
                Status::kOk);
        size_t call = 0, state = 0, total = 0;
        REQUIRE(attn_transformer_plan_arena_bytes(&p, &call, &state) == ATTN_OK);
        CHECK(call == want.arena_bytes);
        CHECK(state == want.state_bytes);
        REQUIRE(attn_transformer_init_plan_arena_bytes(&p, &total) == ATTN_OK);
        CHECK(total >= call + state);
      }
    }
  }
  attn_transformer_config cc;
  REQUIRE(attn_transformer_config_init(&cc) == ATTN_OK);
  attn_transformer_plan p;
  size_t a = 1, s = 1;
  CHECK(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_F32, 4, 0, 0) == ATTN_ERR_BAD_NUM_LAYERS);
  CHECK(attn_transformer_plan_arena_bytes(&p, &a, &s) == ATTN_ERR_BAD_HANDLE);  // failed init: unusable
  CHECK((a == 0 && s == 0));
  CHECK(attn_transformer_plan_init(nullptr, &cc, ATTN_DTYPE_F32, 4, 0, 0) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_plan_init(&p, nullptr, ATTN_DTYPE_F32, 4, 0, 0) == ATTN_ERR_NULL_ARGUMENT);
  // Start from a valid Llama config and break one thing at a time.
  {
    const Blob b(f32_file(llama(LmHead::kTied), 3));
    attn_model m = load_c(b);
    attn_dtype d = 0;
    REQUIRE(attn_model_transformer_config(&m, &cc, &d) == ATTN_OK);
  }
  REQUIRE(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_S8, 4, 8, 0) == ATTN_OK);
  struct Bad {
    void (*mutate)(attn_transformer_config*);
    attn_status want;
  };
  const Bad bad[] = {
      {[](attn_transformer_config* c) { c->vocab_size = 0; }, ATTN_ERR_BAD_VOCAB},
      {[](attn_transformer_config* c) { c->ffn_dim = 0; }, ATTN_ERR_BAD_FFN_DIM},
      {[](attn_transformer_config* c) { c->max_positions = 0; }, ATTN_ERR_BAD_MAX_POSITIONS},
      {[](attn_transformer_config* c) { c->norm = 3; }, ATTN_ERR_BAD_NORM},
      {[](attn_transformer_config* c) { c->norm = 0x101; }, ATTN_ERR_BAD_NORM},  // no truncation to 1
      {[](attn_transformer_config* c) { c->norm_eps = 0.0f; }, ATTN_ERR_BAD_NORM},
      {[](attn_transformer_config* c) { c->activation = 5; }, ATTN_ERR_BAD_ACTIVATION},
      {[](attn_transformer_config* c) { c->head = 3; }, ATTN_ERR_BAD_HEAD},
      {[](attn_transformer_config* c) { c->head = 0x100; }, ATTN_ERR_BAD_HEAD},
      {[](attn_transformer_config* c) { c->embed_dim = 0; }, ATTN_ERR_BAD_EMBED_DIM},
      {[](attn_transformer_config* c) { c->num_kv_heads = 3; }, ATTN_ERR_BAD_KV_HEADS},
      {[](attn_transformer_config* c) { c->causal = 0; }, ATTN_ERR_NOT_CAUSAL},
  };
  for (const Bad& x : bad) {
    attn_transformer_config c = cc;
    x.mutate(&c);
    CHECK(attn_transformer_plan_init(&p, &c, ATTN_DTYPE_S8, 4, 8, 0) == x.want);
  }
  CHECK(attn_transformer_plan_init(&p, &cc, 9, 4, 8, 0) == ATTN_ERR_BAD_DTYPE);
  CHECK(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_S8, 0, 8, 0) == ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_S8, cc.max_positions + 1, 8, 0) ==
        ATTN_ERR_SEQUENCE_TOO_LONG);
  CHECK(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_S8, 4, -1, 0) == ATTN_ERR_BAD_KEY_LENGTH);
  CHECK(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_S8, 4, 8, -1) == ATTN_ERR_BAD_TILE_ROWS);
  CHECK(attn_transformer_plan_arena_bytes(nullptr, &a, &s) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_plan_arena_bytes(&p, nullptr, &s) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_init_plan_arena_bytes(&p, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  attn_transformer_plan zero = {};
  CHECK(attn_transformer_init_plan_arena_bytes(&zero, &a) == ATTN_ERR_BAD_HANDLE);
}

TEST_CASE("C f32 models: forward and decode are the C++ ones, bit for bit", "[c_api][transformer]") {
  for (const auto& k : cases()) {
    INFO(k.name);
    const Blob b(f32_file(k.c, 11));
    attn::Model m;
    REQUIRE(attn::Model::load(b.p, b.n, &m) == Status::kOk);
    const auto toks = sequences(1, 7, k.c.vocab_size, 2)[0];
    const int32_t n = int32_t(toks.size());
    const size_t od = size_t(k.c.output_dim());
    const std::vector<float> want = cpp_f32(m, toks, false);
    CModel cm;
    bind(&cm, b, n, k.c.causal ? n : 0);
    attn_dtype dt = 0;
    int32_t width = 0;
    REQUIRE(attn_transformer_shape(&cm.tf, &dt, &width) == ATTN_OK);
    CHECK(dt == ATTN_DTYPE_F32);
    CHECK(width == int32_t(od));
    std::vector<float> got(want.size(), -7.0f);
    REQUIRE(attn_transformer_forward(&cm.tf, toks.data(), n, 0, got.data()) == ATTN_OK);
    CHECK(std::memcmp(got.data(), want.data(), want.size() * 4) == 0);
    std::vector<float> last(od, -7.0f);
    REQUIRE(attn_transformer_forward(&cm.tf, toks.data(), n, 1, last.data()) == ATTN_OK);
    // (The C++ f32 forward's last row alone may round differently from its all-rows run: compare like with
    // like.)
    const std::vector<float> want_last = cpp_f32(m, toks, false, attn::OutputRows::kLast);
    CHECK(std::memcmp(last.data(), want_last.data(), od * 4) == 0);
    std::vector<float> first(od, -7.0f);
    REQUIRE(attn_transformer_forward(&cm.tf, toks.data(), n, ATTN_ROWS_FIRST, first.data()) == ATTN_OK);
    const std::vector<float> want_first = cpp_f32(m, toks, false, attn::OutputRows::kFirst);
    CHECK(std::memcmp(first.data(), want_first.data(), od * 4) == 0);
    CHECK(attn_transformer_forward(&cm.tf, toks.data(), n, -1, first.data()) == ATTN_ERR_BAD_SHAPE);
    int32_t q = 0;
    float sc = 0;
    CHECK(attn_transformer_forward_s32(&cm.tf, toks.data(), n, 0, &q, &sc) == ATTN_ERR_BAD_DTYPE);
    if (!k.c.causal) {
      CHECK(attn_transformer_decode(&cm.tf, toks.data(), 1, 0, got.data()) == ATTN_ERR_PLAN_MISMATCH);
      CHECK(attn_transformer_reset(&cm.tf) == ATTN_ERR_PLAN_MISMATCH);
      continue;
    }
    // Decoding one token at a time: the C++ decode's numbers.
    const std::vector<float> want_dec = cpp_f32(m, toks, true);
    std::vector<float> dec(want.size(), -7.0f);
    for (int32_t i = 0; i < n; ++i) {
      int32_t len = -1;
      REQUIRE(attn_transformer_length(&cm.tf, &len) == ATTN_OK);
      CHECK(len == i);
      REQUIRE(attn_transformer_decode(&cm.tf, &toks[size_t(i)], 1, 0, dec.data() + size_t(i) * od) ==
              ATTN_OK);
    }
    CHECK(std::memcmp(dec.data(), want_dec.data(), want.size() * 4) == 0);
    CHECK(attn_transformer_decode(&cm.tf, toks.data(), 1, 1, dec.data()) == ATTN_ERR_CACHE_FULL);
    REQUIRE(attn_transformer_reset(&cm.tf) == ATTN_OK);
    int32_t len = -1;
    REQUIRE(attn_transformer_length(&cm.tf, &len) == ATTN_OK);
    CHECK(len == 0);
  }
}

TEST_CASE("C f32 raw-weights route: the caller's arrays give the file's numbers", "[c_api][transformer]") {
  for (const auto& k : cases()) {
    INFO(k.name);
    const LoadedModel<attn::TransformerWeightsF32> lm(f32_file(k.c, 13));
    const Blob& b = lm.blob;
    const std::vector<attn::LayerWeightsF32>& layers = lm.weights.layers;
    const attn::TransformerWeightsF32& w = lm.weights.w;
    std::vector<attn_layer_weights_f32> cl(layers.size());
    for (size_t l = 0; l < layers.size(); ++l) {
      const attn::LayerWeightsF32& L = layers[l];
      cl[l].attention = {L.attention.wq, L.attention.wk, L.attention.wv, L.attention.wo,
                         L.attention.bq, L.attention.bk, L.attention.bv, L.attention.bo};
      cl[l].norm1 = {L.norm1.weight, L.norm1.bias};
      cl[l].norm2 = {L.norm2.weight, L.norm2.bias};
      cl[l].ffn = {L.ffn.w1, L.ffn.b1, L.ffn.w2, L.ffn.b2, L.ffn.w3, L.ffn.b3};
    }
    attn_transformer_weights_f32 cw;
    cw.token_embedding = w.token_embedding;
    cw.position_embedding = w.position_embedding;
    cw.type_embedding = w.type_embedding;
    cw.embedding_norm = {w.embedding_norm.weight, w.embedding_norm.bias};
    cw.final_norm = {w.final_norm.weight, w.final_norm.bias};
    cw.lm_head = w.lm_head;
    cw.layers = cl.data();
    attn_model cm = load_c(b);
    attn_transformer_config cc;
    attn_dtype dt = 0;
    REQUIRE(attn_model_transformer_config(&cm, &cc, &dt) == ATTN_OK);
    const auto toks = sequences(1, 6, k.c.vocab_size, 4)[0];
    const int32_t n = int32_t(toks.size());
    attn_transformer_plan p;
    REQUIRE(attn_transformer_plan_init(&p, &cc, ATTN_DTYPE_F32, n, 0, 0) == ATTN_OK);
    size_t bytes = 0;
    REQUIRE(attn_transformer_init_plan_arena_bytes(&p, &bytes) == ATTN_OK);
    Buffer buf(bytes);
    attn_transformer tf;
    CHECK(attn_transformer_init_f32(&tf, &p, &cw, 0, buf.data, bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
    CHECK(attn_transformer_init_f32(&tf, &p, &cw, 1, buf.data, bytes) == ATTN_ERR_BAD_WINDOW);
    CHECK(attn_transformer_init_f32(&tf, &p, nullptr, 0, buf.data, bytes) == ATTN_ERR_NULL_ARGUMENT);
    CHECK(attn_transformer_init_f32(&tf, &p, &cw, 0, buf.data + 4, bytes) == ATTN_ERR_ARENA_MISALIGNED);
    // Each pointer the config needs, missing: kNullArgument before anything runs.
    {
      attn_transformer_weights_f32 x = cw;
      x.token_embedding = nullptr;
      CHECK(attn_transformer_init_f32(&tf, &p, &x, 0, buf.data, bytes) == ATTN_ERR_NULL_ARGUMENT);
      std::vector<attn_layer_weights_f32> xl = cl;
      xl.back().ffn.w2 = nullptr;
      x = cw;
      x.layers = xl.data();
      CHECK(attn_transformer_init_f32(&tf, &p, &x, 0, buf.data, bytes) == ATTN_ERR_NULL_ARGUMENT);
      xl = cl;
      xl[0].norm2.weight = nullptr;
      CHECK(attn_transformer_init_f32(&tf, &p, &x, 0, buf.data, bytes) == ATTN_ERR_NULL_ARGUMENT);
    }
    REQUIRE(attn_transformer_init_f32(&tf, &p, &cw, 0, buf.data, bytes) == ATTN_OK);
    cl.assign(cl.size(), attn_layer_weights_f32());  // the table was copied: the caller's may go
    std::vector<float> got(toks.size() * size_t(k.c.output_dim()));
    REQUIRE(attn_transformer_forward(&tf, toks.data(), n, 0, got.data()) == ATTN_OK);
    const std::vector<float> want = cpp_f32(lm.model, toks, false);
    CHECK(std::memcmp(got.data(), want.data(), want.size() * 4) == 0);
    attn_transformer_plan p8;
    REQUIRE(attn_transformer_plan_init(&p8, &cc, ATTN_DTYPE_S8, n, 0, 0) == ATTN_OK);
    CHECK(attn_transformer_init_f32(&tf, &p8, &cw, 0, buf.data, bytes) == ATTN_ERR_BAD_DTYPE);
    CHECK(attn_transformer_forward(&tf, toks.data(), n, 0, got.data()) == ATTN_ERR_BAD_HANDLE);
  }
}

TEST_CASE("C s8/s16 models: int32 and float outputs, decode = forward, bit for bit", "[c_api][transformer]") {
  for (const auto& k : cases()) {
    for (DType dt : {DType::kS8, DType::kS16}) {
      INFO(k.name << " dtype " << int(dt));
      const Blob b(int_file(k.c, dt, 21));
      attn::Model m;
      REQUIRE(attn::Model::load(b.p, b.n, &m) == Status::kOk);
      const auto toks = sequences(1, 9, k.c.vocab_size, 8)[0];
      const int32_t n = int32_t(toks.size());
      const size_t od = size_t(k.c.output_dim());
      float scale = 0.0f;
      const std::vector<int32_t> want = cpp_int(m, toks, dt, &scale);
      CModel cm;
      bind(&cm, b, n, k.c.causal ? n : 0);
      std::vector<int32_t> got(want.size(), 0x5A5A5A5A);
      float got_scale = 0.0f;
      REQUIRE(attn_transformer_forward_s32(&cm.tf, toks.data(), n, 0, got.data(), &got_scale) == ATTN_OK);
      CHECK(got == want);
      CHECK(bits(got_scale) == bits(scale));
      // Float outputs: each integer times the scale, one rounding from double.
      std::vector<float> f(want.size(), -7.0f);
      REQUIRE(attn_transformer_forward(&cm.tf, toks.data(), n, 0, f.data()) == ATTN_OK);
      size_t same = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        same += bits(f[i]) == bits(static_cast<float>(double(want[i]) * double(scale))) ? 1 : 0;
      }
      CHECK(same == want.size());
      std::vector<int32_t> last(od);
      REQUIRE(attn_transformer_forward_s32(&cm.tf, toks.data(), n, 1, last.data(), &got_scale) == ATTN_OK);
      CHECK(std::equal(last.begin(), last.end(), want.end() - std::ptrdiff_t(od)));
      // ATTN_ROWS_FIRST: row 0 alone (an encoder's [CLS]), int32 and float.
      std::vector<int32_t> first(od + 1, 0x5A5A5A5A);
      REQUIRE(attn_transformer_forward_s32(&cm.tf, toks.data(), n, ATTN_ROWS_FIRST, first.data(),
                                           &got_scale) == ATTN_OK);
      CHECK(std::equal(want.begin(), want.begin() + std::ptrdiff_t(od), first.begin()));
      CHECK(first[od] == 0x5A5A5A5A);
      std::vector<float> ff(od + 1, -7.0f);
      REQUIRE(attn_transformer_forward(&cm.tf, toks.data(), n, ATTN_ROWS_FIRST, ff.data()) == ATTN_OK);
      CHECK(std::memcmp(ff.data(), f.data(), od * 4) == 0);
      CHECK(ff[od] == -7.0f);
      CHECK(attn_transformer_forward_s32(&cm.tf, toks.data(), n, 3, first.data(), &got_scale) ==
            ATTN_ERR_BAD_SHAPE);
      if (!k.c.causal) continue;
      // Prefill 4, then steps: the forward's rows, byte for byte.
      std::vector<int32_t> dec(want.size(), 0x5A5A5A5A);
      REQUIRE(attn_transformer_decode_s32(&cm.tf, toks.data(), 4, 0, dec.data(), &got_scale) == ATTN_OK);
      for (int32_t i = 4; i < n; ++i) {
        REQUIRE(attn_transformer_decode_s32(&cm.tf, &toks[size_t(i)], 1, 1, dec.data() + size_t(i) * od,
                                            &got_scale) == ATTN_OK);
      }
      CHECK(dec == want);
      int32_t len = 0;
      REQUIRE(attn_transformer_length(&cm.tf, &len) == ATTN_OK);
      CHECK(len == n);
      CHECK(attn_transformer_decode_s32(&cm.tf, toks.data(), 1, 1, dec.data(), &got_scale) ==
            ATTN_ERR_CACHE_FULL);
      // The float decode after a reset: the float forward's numbers.
      REQUIRE(attn_transformer_reset(&cm.tf) == ATTN_OK);
      std::vector<float> fd(want.size(), -7.0f);
      REQUIRE(attn_transformer_decode(&cm.tf, toks.data(), n, 0, fd.data()) == ATTN_OK);
      CHECK(std::memcmp(fd.data(), f.data(), f.size() * 4) == 0);
    }
  }
}

TEST_CASE("C bound model: arena bytes are exact, and every error", "[c_api][transformer]") {
  const TransformerConfig c = llama(LmHead::kUntied);
  const Blob b(int_file(c, DType::kS8, 31));
  attn_model m = load_c(b);
  size_t bytes = 0;
  REQUIRE(attn_transformer_init_arena_bytes(&m, 8, 12, &bytes) == ATTN_OK);
  {
    attn_transformer_config cc;
    attn_dtype dt = 0;
    REQUIRE(attn_model_transformer_config(&m, &cc, &dt) == ATTN_OK);
    attn_transformer_plan p;
    REQUIRE(attn_transformer_plan_init(&p, &cc, dt, 8, 12, 0) == ATTN_OK);
    size_t pb = 0;
    REQUIRE(attn_transformer_init_plan_arena_bytes(&p, &pb) == ATTN_OK);
    CHECK(pb == bytes);
  }
  Buffer buf(bytes + 64);
  attn_transformer tf;
  CHECK(attn_transformer_init(&tf, &m, 8, 12, 0, buf.data, bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
  int32_t len = -1;
  CHECK(attn_transformer_length(&tf, &len) == ATTN_ERR_BAD_HANDLE);  // failed init: unusable
  CHECK(attn_transformer_init(&tf, &m, 8, 12, 0, buf.data + 8, bytes) == ATTN_ERR_ARENA_MISALIGNED);
  CHECK(attn_transformer_init(&tf, &m, 8, 12, 0, nullptr, bytes) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_init(&tf, &m, 8, 12, 13, buf.data, bytes) == ATTN_ERR_BAD_WINDOW);
  CHECK(attn_transformer_init(&tf, &m, 8, 12, -1, buf.data, bytes) == ATTN_ERR_BAD_WINDOW);
  CHECK(attn_transformer_init(&tf, &m, 8, 0, 1, buf.data, bytes) == ATTN_ERR_BAD_WINDOW);
  CHECK(attn_transformer_init(&tf, &m, 0, 12, 0, buf.data, bytes) == ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK(attn_transformer_init(&tf, &m, c.max_positions + 1, 12, 0, buf.data, bytes) ==
        ATTN_ERR_SEQUENCE_TOO_LONG);
  CHECK(attn_transformer_init(&tf, &m, 8, -1, 0, buf.data, bytes) == ATTN_ERR_BAD_KEY_LENGTH);
  CHECK(attn_transformer_init(nullptr, &m, 8, 12, 0, buf.data, bytes) == ATTN_ERR_NULL_ARGUMENT);
  attn_model zero_model = {};
  CHECK(attn_transformer_init(&tf, &zero_model, 8, 12, 0, buf.data, bytes) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_transformer_init(&tf, nullptr, 8, 12, 0, buf.data, bytes) == ATTN_ERR_NULL_ARGUMENT);
  size_t nb = 1;
  CHECK(attn_transformer_init_arena_bytes(&zero_model, 8, 12, &nb) == ATTN_ERR_BAD_HANDLE);
  CHECK(nb == 0);
  CHECK(attn_transformer_init_arena_bytes(&m, 8, 12, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  nb = 1;
  CHECK(attn_transformer_init_arena_bytes(&m, 99, 12, &nb) == ATTN_ERR_SEQUENCE_TOO_LONG);
  CHECK(nb == 0);
  // An encoder cannot decode.
  {
    const Blob eb(int_file(bert(), DType::kS16, 3));
    attn_model em = load_c(eb);
    CHECK(attn_transformer_init_arena_bytes(&em, 4, 4, &nb) == ATTN_ERR_NOT_CAUSAL);
  }
  // A block file is not a model.
  {
    std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/format/quant/mha_self.s8.attn", std::ios::binary);
    REQUIRE(in.good());
    const Blob bb(
        std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    attn_model bm = load_c(bb);
    attn_transformer_config cc;
    attn_dtype dt = 5;
    CHECK(attn_model_transformer_config(&bm, &cc, &dt) == ATTN_ERR_NOT_A_MODEL);
    CHECK(dt == 0);
    CHECK(attn_transformer_init_arena_bytes(&bm, 4, 0, &nb) == ATTN_ERR_NOT_A_MODEL);
    CHECK(attn_transformer_init(&tf, &bm, 4, 0, 0, buf.data, bytes) == ATTN_ERR_NOT_A_MODEL);
    int32_t bv = 0;
    CHECK(attn_model_byte_vocab(&bm, &bv) == ATTN_ERR_NOT_A_MODEL);
    CHECK(attn_model_transformer_config(&bm, nullptr, &dt) == ATTN_ERR_NULL_ARGUMENT);
    CHECK(attn_model_transformer_config(&bm, &cc, nullptr) == ATTN_ERR_NULL_ARGUMENT);
    CHECK(attn_model_byte_vocab(&bm, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  }

  // A good one, with a window of 5: runs past its capacity.
  REQUIRE(attn_transformer_init(&tf, &m, 8, 12, 5, buf.data, bytes) == ATTN_OK);
  std::vector<int32_t> out(8 * size_t(c.vocab_size));
  float scale = 0;
  const std::vector<int32_t> toks = sequences(1, 8, c.vocab_size, 1)[0];
  std::vector<int32_t> bad = toks;
  bad[3] = c.vocab_size;
  CHECK(attn_transformer_forward_s32(&tf, bad.data(), 8, 0, out.data(), &scale) ==
        ATTN_ERR_TOKEN_OUT_OF_RANGE);
  bad[3] = -1;
  CHECK(attn_transformer_decode_s32(&tf, bad.data(), 8, 0, out.data(), &scale) ==
        ATTN_ERR_TOKEN_OUT_OF_RANGE);
  REQUIRE(attn_transformer_length(&tf, &len) == ATTN_OK);
  CHECK(len == 0);  // nothing appended on error
  CHECK(attn_transformer_forward_s32(&tf, toks.data(), 0, 0, out.data(), &scale) ==
        ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK(attn_transformer_forward_s32(&tf, toks.data(), 9, 0, out.data(), &scale) ==
        ATTN_ERR_SEQUENCE_TOO_LONG);
  CHECK(attn_transformer_forward_s32(&tf, nullptr, 8, 0, out.data(), &scale) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_forward_s32(&tf, toks.data(), 8, 0, nullptr, &scale) == ATTN_ERR_NULL_ARGUMENT);
  // out_scale NULL: the caller does not want it; the same outputs.
  {
    std::vector<int32_t> with(out.size(), 1), without(out.size(), 2);
    REQUIRE(attn_transformer_forward_s32(&tf, toks.data(), 8, 0, with.data(), &scale) == ATTN_OK);
    REQUIRE(attn_transformer_forward_s32(&tf, toks.data(), 8, 0, without.data(), nullptr) == ATTN_OK);
    CHECK(with == without);
    REQUIRE(attn_transformer_decode_s32(&tf, toks.data(), 8, 0, with.data(), &scale) == ATTN_OK);
    REQUIRE(attn_transformer_reset(&tf) == ATTN_OK);
    REQUIRE(attn_transformer_decode_s32(&tf, toks.data(), 8, 0, without.data(), nullptr) == ATTN_OK);
    CHECK(with == without);
    REQUIRE(attn_transformer_reset(&tf) == ATTN_OK);
  }
  CHECK(attn_transformer_forward(&tf, toks.data(), 8, 0, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_decode(nullptr, toks.data(), 1, 0, reinterpret_cast<float*>(out.data())) ==
        ATTN_ERR_NULL_ARGUMENT);
  attn_transformer zero = {};
  CHECK(attn_transformer_forward_s32(&zero, toks.data(), 8, 0, out.data(), &scale) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_transformer_reset(&zero) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_transformer_reset(nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_transformer_length(&tf, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  attn_dtype dt = 0;
  int32_t width = 0;
  CHECK(attn_transformer_shape(&zero, &dt, &width) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_transformer_shape(&tf, nullptr, &width) == ATTN_ERR_NULL_ARGUMENT);
  REQUIRE(attn_transformer_shape(&tf, &dt, &width) == ATTN_OK);
  CHECK((dt == ATTN_DTYPE_S8 && width == c.vocab_size));
  // The sliding window keeps decoding past the capacity; positions stop at max_positions.
  int32_t steps = 0;
  attn_status st = ATTN_OK;
  for (; steps < c.max_positions + 1 && st == ATTN_OK; ++steps) {
    st = attn_transformer_decode_s32(&tf, &toks[size_t(steps % 8)], 1, 1, out.data(), &scale);
  }
  CHECK(st == ATTN_ERR_SEQUENCE_TOO_LONG);
  CHECK(steps == c.max_positions + 1);
  // The core lives in the arena: a clobbered arena is a bad handle, not a crash.
  std::memset(buf.data, 0, 16);
  CHECK(attn_transformer_forward_s32(&tf, toks.data(), 8, 0, out.data(), &scale) == ATTN_ERR_BAD_HANDLE);
}

namespace {

// A decoder bound in two buffers: prefill `prefill` tokens, then one step per
// token, every output row written to out [n, od]. Before every call `scratch`
// is filled with `poison` (a changing byte, or 0): the scratch holds nothing
// from one call to the next.
attn_status decode_all(attn_transformer* tf, const std::vector<int32_t>& toks, int32_t prefill, size_t od,
                       uint8_t* scratch, size_t scratch_bytes, bool poison, std::vector<float>* out) {
  attn_status st = attn_transformer_reset(tf);
  for (int32_t i = 0; st == ATTN_OK && i < int32_t(toks.size()); i += (i == 0 ? prefill : 1)) {
    if (poison) std::memset(scratch, 0xA5 ^ (i * 37), scratch_bytes);
    const int32_t n = i == 0 ? prefill : 1;
    st = attn_transformer_decode(tf, &toks[size_t(i)], n, 0, out->data() + size_t(i) * od);
  }
  return st;
}

}  // namespace

TEST_CASE(
    "C two buffers: state and scratch give the one-buffer outputs, exact sizes, a scratch that keeps nothing",
    "[c_api][transformer]") {
  const TransformerConfig c = llama(LmHead::kUntied);
  for (DType dt : {DType::kS8, DType::kS16, DType::kF32}) {
    INFO("dtype " << int(dt));
    const Blob b(dt == DType::kF32 ? f32_file(c, 41) : int_file(c, dt, 41));
    const auto toks = sequences(1, 10, c.vocab_size, 4)[0];
    const int32_t n = int32_t(toks.size()), cap = 12;
    const size_t od = size_t(c.output_dim());
    // The one-buffer reference: prefill 4, then 6 steps.
    CModel one;
    bind(&one, b, 4, cap);
    std::vector<float> want(toks.size() * od, -7.0f);
    REQUIRE(decode_all(&one.tf, toks, 4, od, nullptr, 0, false, &want) == ATTN_OK);

    attn_model m = load_c(b);
    size_t state_bytes = 0, scratch_bytes = 0;
    REQUIRE(attn_transformer_init_split_bytes(&m, 4, cap, &state_bytes, &scratch_bytes) == ATTN_OK);
    CHECK(state_bytes + scratch_bytes == one.bytes);  // the same bytes, cut in two
    size_t call = 0, kv = 0;
    {
      attn_transformer_config cc;
      attn_dtype d = 0;
      REQUIRE(attn_model_transformer_config(&m, &cc, &d) == ATTN_OK);
      attn_transformer_plan p;
      REQUIRE(attn_transformer_plan_init(&p, &cc, d, 4, cap, 0) == ATTN_OK);
      REQUIRE(attn_transformer_plan_arena_bytes(&p, &call, &kv) == ATTN_OK);
    }
    CHECK(state_bytes >= kv);                  // the KV caches,
    CHECK(state_bytes - kv <= 32);             // and the state's position: one small struct
    CHECK(scratch_bytes > call);               // the handle's bookkeeping, then one call's scratch
    const size_t keep = scratch_bytes - call;  // the bookkeeping: scratch's first bytes

    Buffer state(state_bytes + 64), scratch(scratch_bytes + 64);
    attn_transformer tf;
    // One byte fewer of either is refused, as is a misaligned or missing buffer.
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, 0, state.data, state_bytes - 1, scratch.data,
                                      scratch_bytes) == ATTN_ERR_ARENA_TOO_SMALL);
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, 0, state.data, state_bytes, scratch.data,
                                      scratch_bytes - 1) == ATTN_ERR_ARENA_TOO_SMALL);
    int32_t len = -1;
    CHECK(attn_transformer_length(&tf, &len) == ATTN_ERR_BAD_HANDLE);
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, 0, state.data + 8, state_bytes, scratch.data,
                                      scratch_bytes) == ATTN_ERR_ARENA_MISALIGNED);
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, 0, state.data, state_bytes, scratch.data + 4,
                                      scratch_bytes) == ATTN_ERR_ARENA_MISALIGNED);
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, 0, nullptr, state_bytes, scratch.data,
                                      scratch_bytes) ==
          ATTN_ERR_NULL_ARGUMENT);  // a decoder needs its caches
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, 0, state.data, state_bytes, nullptr, scratch_bytes) ==
          ATTN_ERR_NULL_ARGUMENT);
    CHECK(attn_transformer_init_split(&tf, &m, 4, cap, cap + 1, state.data, state_bytes, scratch.data,
                                      scratch_bytes) == ATTN_ERR_BAD_WINDOW);
    size_t sb = 1, cb = 1;
    CHECK(attn_transformer_init_split_bytes(&m, 4, cap, nullptr, &cb) == ATTN_ERR_NULL_ARGUMENT);
    CHECK(attn_transformer_init_split_bytes(&m, c.max_positions + 1, cap, &sb, &cb) ==
          ATTN_ERR_SEQUENCE_TOO_LONG);
    CHECK((sb == 0 && cb == 0));
    // Exactly the reported sizes: every call below runs in them. Both buffers
    // hold garbage before init (uninitialized RAM, a NOLOAD section).
    std::memset(state.data, 0xC3, state_bytes);
    std::memset(scratch.data, 0x3C, scratch_bytes);
    REQUIRE(attn_transformer_init_split(&tf, &m, 4, cap, 0, state.data, state_bytes, scratch.data,
                                        scratch_bytes) == ATTN_OK);
    std::vector<float> got(want.size(), -7.0f);
    REQUIRE(decode_all(&tf, toks, 4, od, scratch.data + keep, call, false, &got) == ATTN_OK);
    CHECK(std::memcmp(got.data(), want.data(), want.size() * 4) == 0);
    // The call's scratch overwritten before every call: the same outputs.
    std::vector<float> poisoned(want.size(), -7.0f);
    REQUIRE(decode_all(&tf, toks, 4, od, scratch.data + keep, call, true, &poisoned) == ATTN_OK);
    CHECK(std::memcmp(poisoned.data(), want.data(), want.size() * 4) == 0);
    // Everything decoding keeps is in `state`: a copy of it after the prefill,
    // put back after more steps, rewinds the model to the prefill (the
    // caches hold their own lengths).
    REQUIRE(attn_transformer_reset(&tf) == ATTN_OK);
    REQUIRE(attn_transformer_decode(&tf, toks.data(), 4, 0, got.data()) == ATTN_OK);
    const std::vector<uint8_t> saved(state.data, state.data + state_bytes);
    for (int32_t i = 4; i < 7; ++i)
      REQUIRE(attn_transformer_decode(&tf, &toks[size_t(i)], 1, 1, got.data()) == ATTN_OK);
    std::memcpy(state.data, saved.data(), state_bytes);
    REQUIRE(attn_transformer_length(&tf, &len) == ATTN_OK);
    CHECK(len == 4);
    std::memset(scratch.data + keep, 0x5A, call);
    for (int32_t i = 4; i < n; ++i) {
      REQUIRE(attn_transformer_decode(&tf, &toks[size_t(i)], 1, 0, got.data() + size_t(i) * od) == ATTN_OK);
    }
    CHECK(std::memcmp(got.data() + 4 * od, want.data() + 4 * od, (toks.size() - 4) * od * 4) == 0);
    // And the bookkeeping is scratch's first bytes: clobbering them breaks the handle.
    std::memset(scratch.data, 0, 16);
    CHECK(attn_transformer_decode(&tf, toks.data(), 1, 0, got.data()) == ATTN_ERR_BAD_HANDLE);
  }
  // An encoder (no capacity): no state at all (NULL, 0), the forward the one-buffer one.
  const Blob eb(int_file(bert(), DType::kS8, 5));
  attn_model em = load_c(eb);
  size_t state_bytes = 1, scratch_bytes = 0;
  REQUIRE(attn_transformer_init_split_bytes(&em, 6, 0, &state_bytes, &scratch_bytes) == ATTN_OK);
  CHECK(state_bytes == 0);
  size_t one_bytes = 0;
  REQUIRE(attn_transformer_init_arena_bytes(&em, 6, 0, &one_bytes) == ATTN_OK);
  CHECK(scratch_bytes == one_bytes);
  Buffer scratch(scratch_bytes);
  attn_transformer tf;
  REQUIRE(attn_transformer_init_split(&tf, &em, 6, 0, 0, nullptr, 0, scratch.data, scratch_bytes) == ATTN_OK);
  CModel one;
  bind(&one, eb, 6, 0);
  const auto toks = sequences(1, 6, bert().vocab_size, 9)[0];
  std::vector<int32_t> want(6 * size_t(bert().output_dim())), got(want.size(), 7);
  float s1 = 0, s2 = 0;
  REQUIRE(attn_transformer_forward_s32(&one.tf, toks.data(), 6, 0, want.data(), &s1) == ATTN_OK);
  size_t call = 0, kv = 1;  // the call's scratch, scratch's last bytes: overwritten, the same outputs
  {
    attn_transformer_config cc;
    attn_dtype d = 0;
    REQUIRE(attn_model_transformer_config(&em, &cc, &d) == ATTN_OK);
    attn_transformer_plan p;
    REQUIRE(attn_transformer_plan_init(&p, &cc, d, 6, 0, 0) == ATTN_OK);
    REQUIRE(attn_transformer_plan_arena_bytes(&p, &call, &kv) == ATTN_OK);
  }
  CHECK(kv == 0);
  REQUIRE(call < scratch_bytes);
  std::memset(scratch.data + (scratch_bytes - call), 0xEE, call);
  REQUIRE(attn_transformer_forward_s32(&tf, toks.data(), 6, 0, got.data(), &s2) == ATTN_OK);
  CHECK(got == want);
  CHECK(bits(s1) == bits(s2));
}

TEST_CASE("C init refuses a bad capacity, window or size before writing a byte of either buffer",
          "[c_api][transformer]") {
  const TransformerConfig c = llama(LmHead::kTied);
  const Blob b(int_file(c, DType::kS8, 43));
  attn_model m = load_c(b);
  size_t one = 0, state_bytes = 0, scratch_bytes = 0;
  REQUIRE(attn_transformer_init_arena_bytes(&m, 4, c.max_positions, &one) == ATTN_OK);
  REQUIRE(attn_transformer_init_split_bytes(&m, 4, c.max_positions, &state_bytes, &scratch_bytes) == ATTN_OK);
  Buffer arena(one), state(state_bytes), scratch(scratch_bytes);
  const auto untouched = [](const Buffer& buf, size_t n) {
    return std::all_of(buf.data, buf.data + n, [](uint8_t v) { return v == 0xC3; });
  };
  struct Bad {
    int32_t capacity, window;
    size_t less;  // bytes short of the size
    attn_status want;
  };
  for (const Bad& k : {Bad{c.max_positions + 1, 0, 0, ATTN_ERR_CAPACITY_PAST_POSITIONS},
                       Bad{ATTN_MAX_SEQ, 0, 0, ATTN_ERR_CAPACITY_PAST_POSITIONS},
                       Bad{c.max_positions, c.max_positions + 1, 0, ATTN_ERR_BAD_WINDOW},
                       Bad{c.max_positions, 0, 1, ATTN_ERR_ARENA_TOO_SMALL}}) {
    INFO("capacity " << k.capacity << " window " << k.window << " less " << k.less);
    std::memset(arena.data, 0xC3, one);
    std::memset(state.data, 0xC3, state_bytes);
    std::memset(scratch.data, 0xC3, scratch_bytes);
    attn_transformer tf;
    CHECK(attn_transformer_init(&tf, &m, 4, k.capacity, k.window, arena.data, one - k.less) == k.want);
    CHECK(untouched(arena, one));
    CHECK(attn_transformer_init_split(&tf, &m, 4, k.capacity, k.window, state.data, state_bytes - k.less,
                                      scratch.data, scratch_bytes) == k.want);
    CHECK(attn_transformer_init_split(&tf, &m, 4, k.capacity, k.window, state.data, state_bytes, scratch.data,
                                      scratch_bytes - k.less) == k.want);
    CHECK(untouched(state, state_bytes));
    CHECK(untouched(scratch, scratch_bytes));
  }
  size_t bytes = 1, sb = 1, cb = 1;
  CHECK(attn_transformer_init_arena_bytes(&m, 4, c.max_positions + 1, &bytes) ==
        ATTN_ERR_CAPACITY_PAST_POSITIONS);
  CHECK(attn_transformer_init_split_bytes(&m, 4, c.max_positions + 1, &sb, &cb) ==
        ATTN_ERR_CAPACITY_PAST_POSITIONS);
  CHECK((bytes == 0 && sb == 0 && cb == 0));
}

TEST_CASE("C sampler: the C++ sampler's tokens and generator, and its errors",
          "[c_api][transformer][sampler]") {
  std::mt19937 g(5);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> logits(50);
  std::vector<int32_t> ilog(50);
  for (size_t i = 0; i < logits.size(); ++i) {
    logits[i] = d(g);
    ilog[i] = int32_t(std::lround(logits[i] * 1000.0f));
  }
  ilog[40] = ilog[7] = *std::max_element(ilog.begin(), ilog.end()) + 1;  // a tie: the lowest id wins
  attn_rng r;
  attn::Rng cr;
  REQUIRE(attn_rng_seed(&r, 1234) == ATTN_OK);
  REQUIRE(attn::rng_seed(1234, &cr) == Status::kOk);
  for (int i = 0; i < 20; ++i) {
    const float temp = i % 3 == 0 ? 0.0f : 0.7f;
    const int32_t top_k = i % 2 == 0 ? 0 : 5;
    attn::Sampler s;
    s.temperature = temp;
    s.top_k = top_k;
    int32_t t = -2, want = -3;
    REQUIRE(attn_sample(logits.data(), 50, temp, top_k, &r, &t) == ATTN_OK);
    REQUIRE(attn::sample(logits.data(), 50, s, &cr, &want) == Status::kOk);
    CHECK(t == want);
    REQUIRE(attn_sample_s32(ilog.data(), 50, 0.001f, temp, top_k, &r, &t) == ATTN_OK);
    REQUIRE(attn::sample_s32(ilog.data(), 50, 0.001f, s, &cr, &want) == Status::kOk);
    CHECK(t == want);
  }
  uint32_t x = 0;
  uint32_t y = 0;
  REQUIRE(attn_rng_next(&r, &x) == ATTN_OK);
  REQUIRE(attn::rng_next(&cr, &y) == Status::kOk);
  CHECK(x == y);
  int32_t t = 0, want = 0;
  REQUIRE(attn_sample_greedy_s32(ilog.data(), 50, &t) == ATTN_OK);
  REQUIRE(attn::sample_s32(ilog.data(), 50, 1.0f, attn::Sampler(), nullptr, &want) == Status::kOk);
  CHECK(t == want);
  CHECK(t == 7);
  REQUIRE(attn_sample(logits.data(), 50, 0.0f, 0, nullptr, &t) == ATTN_OK);  // greedy: no generator
  // Errors.
  attn_rng zero = {};
  CHECK(attn_rng_next(&zero, &x) == ATTN_ERR_BAD_HANDLE);
  CHECK(attn_rng_next(nullptr, &x) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_rng_next(&r, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_rng_seed(nullptr, 1) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_sample(logits.data(), 50, 0.5f, 0, &zero, &t) == ATTN_ERR_BAD_HANDLE);
  CHECK(t == -1);
  CHECK(attn_sample(logits.data(), 50, 0.5f, 0, nullptr, &t) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_sample(nullptr, 50, 0.0f, 0, nullptr, &t) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_sample(logits.data(), 50, 0.0f, 0, nullptr, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_sample(logits.data(), 0, 0.0f, 0, nullptr, &t) == ATTN_ERR_BAD_SHAPE);
  CHECK(attn_sample(logits.data(), 50, -1.0f, 0, &r, &t) == ATTN_ERR_BAD_SAMPLER);
  CHECK(attn_sample(logits.data(), 50, 0.5f, 51, &r, &t) == ATTN_ERR_BAD_SAMPLER);
  CHECK(attn_sample_s32(ilog.data(), 50, 0.0f, 0.0f, 0, nullptr, &t) == ATTN_ERR_BAD_QUANT_PARAMS);
  CHECK(attn_sample_greedy_s32(ilog.data(), 0, &t) == ATTN_ERR_BAD_SHAPE);
  CHECK(t == -1);
  CHECK(attn_sample_greedy_s32(nullptr, 5, &t) == ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_sample_greedy_s32(ilog.data(), 5, nullptr) == ATTN_ERR_NULL_ARGUMENT);
}
