// Int4 weights (ProjectionS8 / S16::weight_s4, FORMAT.md "Int4 weights"):
// the kernels are the int8-weight kernels on the unpacked values, the
// converter gives the projections it was asked to int4 weights, the file
// round-trips them, and every forward (whole sequence, prefill, decode step)
// of an int4 model equals the same model with its weights unpacked to int8.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "int_model_helpers.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels_model_fixed.h"
#include "quant/int4_weights.h"

using namespace int_model;
using attn::Int4Weights;
using attn::detail::ConstMatS4;

namespace {

// Packs int4 values (int8 in [-8, 7], an even count per row) two per byte, low nibble first.
std::vector<uint8_t> pack(const std::vector<int8_t>& v) {
  std::vector<uint8_t> b(v.size() / 2);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = uint8_t((uint8_t(v[2 * i]) & 15u) | (uint8_t(v[2 * i + 1]) & 15u) << 4);
  return b;
}

TEST_CASE("int4 kernels: the int8-weight kernels' results on the unpacked weights", "[int4]") {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> w4(-8, 7), x8(-128, 127), x16(-32768, 32767), sh(-12, 12);
  for (int iter = 0; iter < 60; ++iter) {
    const int32_t M = 1 + iter % 7, N = 1 + (iter * 7) % 37, K = 2 * (1 + (iter * 13) % 90);
    INFO("M " << M << " N " << N << " K " << K);
    std::vector<int8_t> w(size_t(N) * K), x(size_t(M) * K);
    std::vector<int16_t> xs(size_t(M) * K);
    for (auto& v : w) v = int8_t(w4(rng));
    for (auto& v : x) v = int8_t(x8(rng));
    for (auto& v : xs) v = int16_t(x16(rng));
    const std::vector<uint8_t> packed = pack(w);
    const size_t n_ch = size_t(N);
    std::vector<int32_t> mult(n_ch), shift(n_ch), bias(n_ch);
    std::vector<int64_t> bias64(n_ch);
    for (int32_t n = 0; n < N; ++n) {
      mult[size_t(n)] = 0x40000000 + int32_t(rng() & 0x3FFFFFFF);
      shift[size_t(n)] = sh(rng);
      bias[size_t(n)] = x16(rng) * 8;
      bias64[size_t(n)] = int64_t{bias[size_t(n)]} * 1000;
    }
    const attn::ConstMatS8 w8 = attn::matrix<const int8_t>(w.data(), N, K);
    const ConstMatS4 wp = attn::detail::matrix_s4(packed.data(), N, K);
    const attn::ConstMatS8 xm = attn::matrix<const int8_t>(x.data(), M, K);
    const attn::ConstMatS16 xm16 = attn::matrix<const int16_t>(xs.data(), M, K);
    // Requantized outputs, int8 and int16 activations; every row of the table.
    attn::LinearS8Params p8;
    p8.output_zero_point = 3;
    p8.multiplier = mult.data();
    p8.shift = shift.data();
    attn::LinearS16Params p16;
    p16.multiplier = mult.data();
    p16.shift = shift.data();
    std::vector<int8_t> y8(size_t(M) * N), want8(y8.size());
    std::vector<int16_t> y16(size_t(M) * N), want16(y16.size());
    attn::detail::linear_s8_ref(xm, w8, bias.data(), p8, attn::matrix(want8.data(), M, N));
    attn::detail::linear_s16_ref(xm16, w8, bias64.data(), p16, attn::matrix(want16.data(), M, N));
    for (const auto& row : attn::detail::kLinearS4S8) {
      if (!attn::detail::row_runs(row)) continue;
      std::fill(y8.begin(), y8.end(), int8_t(0x5A));
      row.fn(xm, wp, bias.data(), p8, attn::matrix(y8.data(), M, N));
      INFO(row.isa);
      CHECK(y8 == want8);
    }
    for (const auto& row : attn::detail::kLinearS4S16) {
      if (!attn::detail::row_runs(row)) continue;
      std::fill(y16.begin(), y16.end(), int16_t(0x5A5A));
      row.fn(xm16, wp, bias64.data(), p16, attn::matrix(y16.data(), M, N));
      INFO(row.isa);
      CHECK(y16 == want16);
    }
    // Int32 outputs: W2 into the residual and the logits.
    using Ref = attn::detail::Out32Rows<attn::detail::Isa::kRef>;
    std::vector<int32_t> r0(size_t(M) * N);
    for (auto& v : r0) v = int32_t(rng());
    std::vector<int32_t> want(r0), got(r0);
    Ref::linear_residual_s8(xm, w8, bias.data(), mult.data(), shift.data(), attn::matrix(want.data(), M, N));
    for (const auto& row : attn::detail::kLinearResidualS4S8) {
      if (!attn::detail::row_runs(row)) continue;
      got = r0;
      row.fn(xm, wp, bias.data(), mult.data(), shift.data(), attn::matrix(got.data(), M, N));
      CHECK(got == want);
    }
    Ref::logits_s16(xm16, w8, bias64.data(), mult.data(), shift.data(), attn::matrix(want.data(), M, N));
    for (const auto& row : attn::detail::kLogitsS4S16) {
      if (!attn::detail::row_runs(row)) continue;
      row.fn(xm16, wp, bias64.data(), mult.data(), shift.data(), attn::matrix(got.data(), M, N));
      CHECK(got == want);
    }
  }
}

// The model's int4 projections unpacked to int8 (weight set, weight_s4 null):
// the arrays live in `keep`.
template <class P>
int unpack_projection(P& p, int32_t out, int32_t in, std::vector<std::vector<int8_t>>& keep) {
  if (p.weight_s4 == nullptr) return 0;
  std::vector<int8_t> w(size_t(out) * size_t(in));
  for (size_t i = 0; i < w.size(); ++i) {
    const uint8_t b = p.weight_s4[i / 2];
    w[i] = int8_t(i % 2 == 0 ? attn::detail::s4_low(b) : attn::detail::s4_high(b));
  }
  keep.push_back(std::move(w));
  p.weight = keep.back().data();
  p.weight_s4 = nullptr;
  return 1;
}

// Unpacks every int4 projection of w (its layers copied into `layers`); returns how many there were.
template <class W, class Layer>
int unpack_model(const TransformerConfig& c, W& w, std::vector<Layer>& layers,
                 std::vector<std::vector<int8_t>>& keep) {
  keep.reserve(64);
  layers.assign(w.layers, w.layers + c.num_layers);
  const int32_t E = c.embed_dim, F = c.ffn_dim, D = c.attention().inner_dim(), Dkv = c.attention().kv_dim();
  int n = 0;
  for (Layer& L : layers) {
    n += unpack_projection(L.attention.q, D, E, keep) + unpack_projection(L.attention.k, Dkv, E, keep) +
         unpack_projection(L.attention.v, Dkv, E, keep) + unpack_projection(L.attention.o, E, D, keep);
    n += unpack_projection(L.ffn.w1, F, E, keep) + unpack_projection(L.ffn.w2, E, F, keep);
    if (c.gated_ffn) n += unpack_projection(L.ffn.w3, F, E, keep);
  }
  n += unpack_projection(w.head, c.vocab_size, E, keep);
  w.layers = layers.data();
  return n;
}

template <class W>
using LayerOf = std::remove_const_t<std::remove_pointer_t<decltype(W::layers)>>;

inline Status decode(const attn::TransformerPlan& p, const attn::TransformerWeightsS8& w,
                     attn::TransformerStateS8* s, const int32_t* t, int32_t n, int32_t* out, attn::Arena& a) {
  return attn::transformer_decode_s8(p, w, s, t, n, attn::OutputRows::kAll, out, a);
}
inline Status decode(const attn::TransformerPlan& p, const attn::TransformerWeightsS16& w,
                     attn::TransformerStateS16* s, const int32_t* t, int32_t n, int32_t* out,
                     attn::Arena& a) {
  return attn::transformer_decode_s16(p, w, s, t, n, attn::OutputRows::kAll, out, a);
}
inline Status state_init(const attn::TransformerPlan& p, attn::Arena& a, attn::TransformerStateS8* s) {
  return attn::transformer_state_init_s8(p, 0, a, s);
}
inline Status state_init(const attn::TransformerPlan& p, attn::Arena& a, attn::TransformerStateS16* s) {
  return attn::transformer_state_init_s16(p, 0, a, s);
}

// A prefill of all but the last token then one step: the rows of the whole forward.
template <class W, class State>
std::vector<int32_t> run_decode(const TransformerConfig& c, const W& w, const std::vector<int32_t>& t) {
  attn::TransformerPlan plan;
  const int32_t n = int32_t(t.size()), V = c.output_dim();
  REQUIRE(attn::plan_transformer_fixed(c, dtype_of<W>(), n, n, &plan) == Status::kOk);
  Buffer buf(plan.state_bytes + plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.state_bytes + plan.arena_bytes) == Status::kOk);
  State state;
  REQUIRE(state_init(plan, arena, &state) == Status::kOk);
  std::vector<int32_t> out(size_t(n) * size_t(V));
  REQUIRE(decode(plan, w, &state, t.data(), n - 1, out.data(), arena) == Status::kOk);
  REQUIRE(decode(plan, w, &state, t.data() + n - 1, 1, out.data() + size_t(n - 1) * size_t(V), arena) ==
          Status::kOk);
  return out;
}

template <class W, class State>
void check_int4_model(const Case& k, Int4Weights which) {
  INFO(k.name << (std::is_same<W, attn::TransformerWeightsS8>::value ? " s8" : " s16")
              << (which == Int4Weights::kAll ? " all" : " ffn"));
  const TransformerConfig& c = k.c;
  const std::vector<uint8_t> f = f32_file(c, 3);
  const Blob fb(f);
  attn::Model f32;
  REQUIRE(attn::Model::load(fb.p, fb.n, &f32) == Status::kOk);
  const auto cal = sequences(4, 12, c.vocab_size, 7);
  attn::TransformerQuantOptions o;
  o.int4 = which;
  InMemory<W> q = quantize<W>(f32, cal, o);
  const auto tokens = sequences(1, 12, c.vocab_size, 9)[0];
  const std::vector<int32_t> got = run(c, q.w, tokens);
  // The projections asked for hold int4 weights, and nothing else does.
  const W& w = q.w;
  CHECK(w.layers[0].ffn.w1.weight_s4 != nullptr);
  CHECK(w.layers[0].ffn.w2.weight_s4 != nullptr);
  CHECK((w.layers[0].attention.q.weight_s4 != nullptr) == (which == Int4Weights::kAll));
  CHECK((w.head.weight_s4 != nullptr) == (which == Int4Weights::kAll && c.head == LmHead::kUntied));
  CHECK(w.token_embedding.table != nullptr);

  // The file: int4 tensors round-trip, and the loaded model runs the same.
  const std::vector<uint8_t> bytes = fixed_file(c, w);
  const Blob b(bytes);
  attn::Model m;
  REQUIRE(attn::Model::load(b.p, b.n, &m) == Status::kOk);
  std::vector<LayerOf<W>> fl(size_t(c.num_layers));
  W lw;
  REQUIRE(weights_of(m, fl.data(), c.num_layers, &lw) == Status::kOk);
  CHECK(lw.layers[0].ffn.w1.weight_s4 != nullptr);
  CHECK(lw.layers[0].ffn.w1.weight == nullptr);
  CHECK(inside(lw.layers[0].ffn.w1.weight_s4, b));
  CHECK(run(c, lw, tokens) == got);
  CHECK(fixed_file(c, lw) == bytes);  // canonical

  // The int8-weight model of the same values computes the same bits, in a
  // whole forward and in a prefill and a decode step.
  W unpacked = w;
  std::vector<LayerOf<W>> layers;
  std::vector<std::vector<int8_t>> keep;
  const int int4_count = unpack_model(c, unpacked, layers, keep);
  const int per_layer = c.gated_ffn ? 3 : 2;
  CHECK(int4_count == c.num_layers * (per_layer + (which == Int4Weights::kAll ? 4 : 0)) +
                          (which == Int4Weights::kAll && c.head == LmHead::kUntied ? 1 : 0));
  CHECK(run(c, unpacked, tokens) == got);
  if (c.causal) {
    CHECK(run_decode<W, State>(c, w, tokens) == got);
  }
  // The int8 file of the same values is larger by the int4 weights' half.
  const std::vector<uint8_t> bytes8 = fixed_file(c, unpacked);
  CHECK(bytes8.size() > bytes.size());
}

TEST_CASE("int4 models: the forward is the int8-weight forward of the same values, and files round-trip",
          "[int4]") {
  for (const Case& k : cases()) {
    for (Int4Weights which : {Int4Weights::kFfn, Int4Weights::kAll}) {
      check_int4_model<attn::TransformerWeightsS8, attn::TransformerStateS8>(k, which);
      check_int4_model<attn::TransformerWeightsS16, attn::TransformerStateS16>(k, which);
    }
  }
}

TEST_CASE("int4 models: the loader refuses int4 where it does not belong and a half-byte row", "[int4]") {
  const TransformerConfig c = llama(LmHead::kUntied);
  const std::vector<uint8_t> f = f32_file(c, 3);
  const Blob fb(f);
  attn::Model f32;
  REQUIRE(attn::Model::load(fb.p, fb.n, &f32) == Status::kOk);
  attn::TransformerQuantOptions o;
  o.int4 = Int4Weights::kAll;
  const InMemory<attn::TransformerWeightsS8> q =
      quantize<attn::TransformerWeightsS8>(f32, sequences(2, 8, c.vocab_size, 7), o);
  const std::vector<uint8_t> good = fixed_file(c, q.w);
  REQUIRE(load_bytes(good) == Status::kOk);
  using attn::format::Header;
  using attn::format::TensorDesc;
  const auto desc = [&](const std::vector<uint8_t>& v, const char* name) {
    const Header h = peek<Header>(v, 0);
    for (uint32_t i = 0; i < h.tensor_count; ++i) {
      const size_t at = size_t(h.tensors_offset) + i * sizeof(TensorDesc);
      if (std::strcmp(reinterpret_cast<const char*>(v.data() + at), name) == 0) return at;
    }
    FAIL("no tensor " << name);
    return size_t{0};
  };
  const auto load_fixed = [](std::vector<uint8_t> v) {
    tools::fix_crc(v);
    return load_bytes(v);
  };
  // An int4 token embedding (a table, not a projection): same bytes, wrong dtype.
  {
    std::vector<uint8_t> v = good;
    const size_t at = desc(v, "model.token_embedding");
    const auto t = peek<TensorDesc>(v, at);
    poke(v, at + offsetof(TensorDesc, dtype), uint16_t(attn::DType::kS4));
    poke(v, at + offsetof(TensorDesc, byte_size), uint64_t(t.byte_size / 2));
    CHECK(load_fixed(v) == Status::kDtypeMismatch);
  }
  // An int4 projection declared int8: its byte size no longer agrees.
  {
    std::vector<uint8_t> v = good;
    poke(v, desc(v, "block.0.ffn_w1") + offsetof(TensorDesc, dtype), uint16_t(attn::DType::kS8));
    CHECK(load_fixed(v) == Status::kBadByteSize);
  }
  // An odd row of int4 values (half a byte), and a byte size off by one.
  {
    std::vector<uint8_t> v = good;
    const size_t at = desc(v, "block.0.wq");
    poke(v, at + offsetof(TensorDesc, dims) + 4, uint32_t(c.embed_dim - 1));
    CHECK(load_fixed(v) == Status::kBadDims);
    v = good;
    poke(v, at + offsetof(TensorDesc, byte_size), peek<TensorDesc>(v, at).byte_size + 1);
    CHECK(load_fixed(v) == Status::kBadByteSize);
  }
  // A hand-built projection with neither int8 nor int4 weights is refused by the forward.
  attn::TransformerWeightsS8 w = q.w;
  std::vector<attn::LayerWeightsS8> layers(q.w.layers, q.w.layers + c.num_layers);
  w.layers = layers.data();
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer_fixed(c, DType::kS8, 4, 0, &plan) == Status::kOk);
  Buffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<int32_t> out(size_t(4) * size_t(c.vocab_size));
  const int32_t t[4] = {1, 2, 3, 4};
  CHECK(forward(plan, w, t, 4, out.data(), arena) == Status::kOk);
  layers[0].ffn.w1.weight_s4 = nullptr;
  layers[0].ffn.w1.weight = nullptr;
  CHECK(forward(plan, w, t, 4, out.data(), arena) == Status::kNullArgument);
}

// tr(D H D^T) for D = w - scales * q: the layer's squared output error on the inputs of H.
double output_error(const std::vector<float>& w, const std::vector<int8_t>& q,
                    const std::vector<double>& scales, const std::vector<double>& h, int32_t out,
                    int32_t in) {
  double e = 0.0;
  std::vector<double> d(static_cast<size_t>(in));
  for (int32_t r = 0; r < out; ++r) {
    for (int32_t k = 0; k < in; ++k)
      d[size_t(k)] =
          w[size_t(r) * size_t(in) + size_t(k)] - scales[size_t(r)] * q[size_t(r) * size_t(in) + size_t(k)];
    for (int32_t i = 0; i < in; ++i)
      for (int32_t j = 0; j < in; ++j)
        e += d[size_t(i)] * h[size_t(i) * size_t(in) + size_t(j)] * d[size_t(j)];
  }
  return e;
}

TEST_CASE("int4 error feedback: less output error than rounding to nearest on correlated inputs", "[int4]") {
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int32_t out = 24, in = 48, samples = 400;
  std::vector<float> w(static_cast<size_t>(out) * static_cast<size_t>(in));
  for (float& v : w) v = nd(rng);
  // Inputs with a few large channels and correlations between neighbours.
  std::vector<double> h(size_t(in) * size_t(in), 0.0);
  std::vector<float> x(static_cast<size_t>(in));
  for (int32_t t = 0; t < samples; ++t) {
    float prev = 0.0f;
    for (int32_t k = 0; k < in; ++k) {
      prev = 0.7f * prev + nd(rng) * (k % 11 == 3 ? 8.0f : 1.0f);
      x[size_t(k)] = prev;
    }
    attn::detail::accumulate_second_moments(x.data(), in, h.data());
  }
  std::vector<double> scales(static_cast<size_t>(out));
  std::vector<int8_t> rtn(w.size()), fb(w.size());
  for (int32_t r = 0; r < out; ++r) {
    const float* row = w.data() + size_t(r) * size_t(in);
    double amax = 0.0;
    for (int32_t k = 0; k < in; ++k) amax = std::max(amax, double(std::fabs(row[k])));
    scales[size_t(r)] = attn::detail::int4_row_scale(row, in, amax);
    for (int32_t k = 0; k < in; ++k)
      rtn[size_t(r) * size_t(in) + size_t(k)] = int8_t(attn::detail::int4_value(row[k], scales[size_t(r)]));
  }
  std::vector<uint8_t> buf(attn::detail::gptq_scratch_bytes(in) + 64);
  attn::Arena scratch;
  REQUIRE(scratch.init(buf.data(), buf.size()) == Status::kOk);
  const std::vector<double> h_before = h;
  REQUIRE(attn::detail::gptq_int4_rows(w.data(), out, in, scales.data(), h.data(), scratch, fb.data()) ==
          Status::kOk);
  CHECK(h == h_before);  // kept
  CHECK(scratch.used() == 0);
  for (int8_t v : fb) CHECK((v >= -8 && v <= 7));
  const double e_rtn = output_error(w, rtn, scales, h, out, in),
               e_fb = output_error(w, fb, scales, h, out, in);
  INFO("round to nearest " << e_rtn << ", error feedback " << e_fb);
  CHECK(e_fb < 0.8 * e_rtn);
}

}  // namespace
