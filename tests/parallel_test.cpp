// parallel_test.cpp: the caller's parallel-for (attn/parallel.h). A forward
// or decode split into 2, 3 or 7 pieces gives exactly the numbers of one
// call on one thread: f32 bit for bit (plain and packed weights), s8 and s16
// byte for byte, through the C++ plans and the C handles. The hook here runs
// the pieces one after the other, last first (no threads needed: a piece
// must not depend on another's order), and counts them, so a build that
// stopped splitting fails too. Last, the same with the CLI's std::thread
// pool (tools/cli/thread_pool.cpp), which runs every piece exactly once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "attn/attn.h"
#include "attn/parallel.h"
#include "cli/thread_pool.h"
#include "int_model_helpers.h"

using namespace int_model;

namespace {

// Pieces the hook sees when it could take `workers`: none where the split is
// compiled out (ATTN_PARALLEL=0, attn/parallel.h).
int32_t expected_most(int32_t workers) { return ATTN_PARALLEL && workers > 1 ? workers : 0; }

struct Hook {
  int32_t calls = 0;  // products split
  int32_t most = 0;   // largest number of pieces asked for
};

void run_reversed(void* ctx, int32_t tasks, void (*task)(void* arg, int32_t index), void* arg) {
  Hook* h = static_cast<Hook*>(ctx);
  ++h->calls;
  h->most = std::max(h->most, tasks);
  for (int32_t i = tasks - 1; i >= 0; --i) task(arg, i);
}

attn::ParallelFor reversed(Hook* h, int32_t workers) {
  attn::ParallelFor p;
  p.run = run_reversed;
  p.ctx = h;
  p.workers = workers;
  return p;
}

// Large enough that one-token decode steps split too (a 320 x 720 FFN is
// 7 pieces' worth), with channel counts that are no multiple of 16 (FFN 720
// = 45 panels, vocab 1000 ends in a half panel).
TransformerConfig sized_for_pieces(TransformerConfig (*family)(int32_t, int32_t, int32_t, int32_t, int32_t,
                                                               int32_t)) {
  return family(/*vocab_size=*/1000, /*embed_dim=*/320, /*num_layers=*/2, /*num_heads=*/5, /*ffn_dim=*/720,
                /*max_positions=*/32);
}
std::vector<Case> split_cases() {
  TransformerConfig llama = sized_for_pieces(TransformerConfig::decoder);  // no biases, tied head
  TransformerConfig gpt = random_model::gpt_like(sized_for_pieces(TransformerConfig::sized));  // biases
  return {{"llama", llama}, {"gpt", gpt}};
}

constexpr int32_t kTokens = 20;   // the forward's
constexpr int32_t kPrefill = 12;  // then kSteps one-token decode steps
constexpr int32_t kSteps = 6;

// The forward of toks (all rows), then a prefill and one-token steps (the
// last row of each), one after the other in one vector: with `par`.
template <class W, class Out, class State>
std::vector<Out> outputs(const TransformerConfig& c, DType dt, const W& w, const std::vector<int32_t>& toks,
                         const attn::ParallelFor& par,
                         Status (*forward)(const attn::TransformerPlan&, const W&, const int32_t*, int32_t,
                                           attn::OutputRows, Out*, attn::Arena&),
                         Status (*init)(const attn::TransformerPlan&, int32_t, attn::Arena&, State*),
                         Status (*decode)(const attn::TransformerPlan&, const W&, State*, const int32_t*,
                                          int32_t, attn::OutputRows, Out*, attn::Arena&)) {
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(c, dt, kTokens, kTokens, &plan) == Status::kOk);
  plan.parallel = par;
  Buffer buf(plan.arena_bytes), sbuf(plan.state_bytes);
  attn::Arena a, sa;
  REQUIRE(a.init(buf.data, plan.arena_bytes) == Status::kOk);
  REQUIRE(sa.init(sbuf.data, plan.state_bytes) == Status::kOk);
  const size_t od = size_t(c.output_dim());
  std::vector<Out> out(size_t(kTokens + kPrefill + kSteps) * od);
  REQUIRE(forward(plan, w, toks.data(), kTokens, attn::OutputRows::kAll, out.data(), a) == Status::kOk);
  State st;
  REQUIRE(init(plan, 0, sa, &st) == Status::kOk);
  Out* o = out.data() + size_t(kTokens) * od;
  REQUIRE(decode(plan, w, &st, toks.data(), kPrefill, attn::OutputRows::kAll, o, a) == Status::kOk);
  o += size_t(kPrefill) * od;
  for (int32_t i = 0; i < kSteps; ++i, o += od) {
    REQUIRE(decode(plan, w, &st, &toks[size_t(kPrefill + i)], 1, attn::OutputRows::kLast, o, a) ==
            Status::kOk);
  }
  return out;
}

// outputs() with no hook, then split into 2, 3 and 7 pieces: the same bytes.
template <class Run>
void check_every_split(Run run) {
  const auto one = run(attn::ParallelFor());
  for (const int32_t workers : {1, 2, 3, 7}) {
    INFO("workers " << workers);
    Hook h;
    const auto split = run(reversed(&h, workers));
    REQUIRE(split.size() == one.size());
    CHECK(std::memcmp(split.data(), one.data(), one.size() * sizeof(one[0])) == 0);
    // The prefill's products take every worker; one worker: run is never called.
    CHECK(h.most == expected_most(workers));
  }
}

}  // namespace

TEST_CASE("f32 models split over any number of pieces give the same bits", "[parallel][transformer]") {
  for (const Case& k : split_cases()) {
    INFO(k.name);
    const LoadedModel<attn::TransformerWeightsF32> m(f32_file(k.c, 31));
    const auto toks = sequences(1, kTokens, k.c.vocab_size, 5)[0];
    const auto run = [&](const attn::ParallelFor& par) {
      return outputs<attn::TransformerWeightsF32, float, attn::TransformerStateF32>(
          k.c, DType::kF32, m.weights.w, toks, par, attn::transformer_forward_f32,
          attn::transformer_state_init_f32, attn::transformer_decode_f32);
    };
    check_every_split(run);

    // The same with every projection packed into W^T panels (x86-64; elsewhere nothing to pack).
    attn::TransformerPlan plan;
    REQUIRE(attn::plan_transformer(k.c, DType::kF32, kTokens, kTokens, &plan) == Status::kOk);
    size_t bytes = 0;
    REQUIRE(attn::pack_transformer_weights_f32_storage_bytes(plan, &bytes) == Status::kOk);
    if (bytes == 0) continue;
    std::vector<attn::LayerWeightsF32> layers(m.weights.layers);
    Buffer panels(bytes);
    REQUIRE(attn::pack_transformer_weights_f32(plan, layers.data(), panels.data, bytes) == Status::kOk);
    attn::TransformerWeightsF32 packed = m.weights.w;
    packed.layers = layers.data();
    check_every_split([&](const attn::ParallelFor& par) {
      return outputs<attn::TransformerWeightsF32, float, attn::TransformerStateF32>(
          k.c, DType::kF32, packed, toks, par, attn::transformer_forward_f32,
          attn::transformer_state_init_f32, attn::transformer_decode_f32);
    });
  }
}

TEST_CASE("s8 and s16 models split over any number of pieces give the same bytes",
          "[parallel][transformer]") {
  for (const Case& k : split_cases()) {
    INFO(k.name);
    const LoadedModel<attn::TransformerWeightsF32> m(f32_file(k.c, 32));
    const auto cal = sequences(2, 8, k.c.vocab_size, 9);
    const auto toks = sequences(1, kTokens, k.c.vocab_size, 6)[0];
    const InMemory<attn::TransformerWeightsS8> q8 = quantize<attn::TransformerWeightsS8>(m.model, cal);
    check_every_split([&](const attn::ParallelFor& par) {
      return outputs<attn::TransformerWeightsS8, int32_t, attn::TransformerStateS8>(
          k.c, DType::kS8, q8.w, toks, par, attn::transformer_forward_s8, attn::transformer_state_init_s8,
          attn::transformer_decode_s8);
    });
    const InMemory<attn::TransformerWeightsS16> q16 = quantize<attn::TransformerWeightsS16>(m.model, cal);
    check_every_split([&](const attn::ParallelFor& par) {
      return outputs<attn::TransformerWeightsS16, int32_t, attn::TransformerStateS16>(
          k.c, DType::kS16, q16.w, toks, par, attn::transformer_forward_s16, attn::transformer_state_init_s16,
          attn::transformer_decode_s16);
    });
  }
}

namespace {

// A bound C model of `file`: a forward of toks, then decoding them one at a
// time, with the hook set through attn_transformer_set_parallel (none: no call).
std::vector<float> c_outputs(const std::vector<uint8_t>& file, const std::vector<int32_t>& toks, Hook* h,
                             int32_t workers) {
  const Blob b(file);
  attn_model model;
  REQUIRE(attn_model_load(&model, b.p, b.n) == ATTN_OK);
  const int32_t n = int32_t(toks.size());
  size_t bytes = 0;
  REQUIRE(attn_transformer_init_arena_bytes(&model, n, n, &bytes) == ATTN_OK);
  Buffer buf(bytes);
  attn_transformer tf;
  REQUIRE(attn_transformer_init(&tf, &model, n, n, 0, buf.data, bytes) == ATTN_OK);
  if (h != nullptr) REQUIRE(attn_transformer_set_parallel(&tf, run_reversed, h, workers) == ATTN_OK);
  attn_dtype dt = 0;
  int32_t od = 0;
  REQUIRE(attn_transformer_shape(&tf, &dt, &od) == ATTN_OK);
  std::vector<float> out(size_t(2 * n) * size_t(od));
  REQUIRE(attn_transformer_forward(&tf, toks.data(), n, ATTN_ROWS_ALL, out.data()) == ATTN_OK);
  for (int32_t i = 0; i < n; ++i) {
    REQUIRE(attn_transformer_decode(&tf, &toks[size_t(i)], 1, ATTN_ROWS_LAST,
                                    out.data() + size_t(n + i) * size_t(od)) == ATTN_OK);
  }
  return out;
}

}  // namespace

TEST_CASE("C: attn_transformer_set_parallel splits f32 and s8 models, same numbers", "[parallel][c_api]") {
  const Case k = split_cases()[1];
  const std::vector<uint8_t> f32 = f32_file(k.c, 33);
  const LoadedModel<attn::TransformerWeightsF32> m(f32);
  const InMemory<attn::TransformerWeightsS8> q8 =
      quantize<attn::TransformerWeightsS8>(m.model, sequences(2, 8, k.c.vocab_size, 9));
  const auto toks = sequences(1, 9, k.c.vocab_size, 7)[0];
  for (const std::vector<uint8_t>& file : {f32, fixed_file(k.c, q8.w)}) {
    const std::vector<float> one = c_outputs(file, toks, nullptr, 0);
    for (const int32_t workers : {2, 3, 7}) {
      INFO("workers " << workers);
      Hook h;
      const std::vector<float> split = c_outputs(file, toks, &h, workers);
      CHECK(std::memcmp(split.data(), one.data(), one.size() * 4) == 0);
      CHECK(h.most == expected_most(workers));
    }
  }
  // Errors: no handle, an unbound one; clearing the hook is fine.
  CHECK(attn_transformer_set_parallel(nullptr, run_reversed, nullptr, 2) == ATTN_ERR_NULL_ARGUMENT);
  attn_transformer zero;
  std::memset(&zero, 0, sizeof zero);
  CHECK(attn_transformer_set_parallel(&zero, run_reversed, nullptr, 2) == ATTN_ERR_BAD_HANDLE);
}

TEST_CASE("C: attn_plan_set_parallel splits an attention block's forward and decode", "[parallel][c_api]") {
  attn_config cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.embed_dim = 320;
  cfg.num_heads = 5;
  cfg.bias = 1;
  cfg.rope_base = 10000.0f;
  const int32_t L = 12, E = cfg.embed_dim;
  std::mt19937 rng(3);
  const std::vector<float> wq = normal(size_t(E) * E, rng, 0.05f), wk = normal(size_t(E) * E, rng, 0.05f),
                           wv = normal(size_t(E) * E, rng, 0.05f), wo = normal(size_t(E) * E, rng, 0.05f),
                           b = normal(size_t(E), rng, 0.1f), x = normal(size_t(L) * E, rng, 1.0f);
  const attn_weights_f32 w{wq.data(), wk.data(), wv.data(), wo.data(),
                           b.data(),  b.data(),  b.data(),  b.data()};
  const auto run = [&](Hook* h, int32_t workers) {
    attn_plan plan, dplan;
    REQUIRE(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, L, L, 0) == ATTN_OK);
    REQUIRE(attn_plan_init_decode(&dplan, &cfg, ATTN_DTYPE_F32, L, L, 0) == ATTN_OK);
    if (h != nullptr) {
      REQUIRE(attn_plan_set_parallel(&plan, run_reversed, h, workers) == ATTN_OK);
      REQUIRE(attn_plan_set_parallel(&dplan, run_reversed, h, workers) == ATTN_OK);
    }
    size_t bytes = 0, dbytes = 0, cbytes = 0;
    REQUIRE(attn_plan_arena_bytes(&plan, &bytes) == ATTN_OK);
    REQUIRE(attn_plan_arena_bytes(&dplan, &dbytes) == ATTN_OK);
    REQUIRE(attn_kv_cache_arena_bytes(&dplan, &cbytes) == ATTN_OK);
    Buffer arena(std::max(bytes, dbytes)), cache_buf(cbytes);
    std::vector<float> y(size_t(2 * L) * size_t(E));
    const attn_io_f32 io{x.data(), x.data(), x.data(), y.data(), nullptr, 0};
    attn_mask mask;
    std::memset(&mask, 0, sizeof mask);
    mask.causal = 1;
    REQUIRE(attn_forward_f32(&plan, &w, &mask, &io, arena.data, bytes) == ATTN_OK);
    attn_kv_cache_f32 cache;
    REQUIRE(attn_kv_cache_init_f32(&cache, &dplan, 0, cache_buf.data, cbytes) == ATTN_OK);
    REQUIRE(attn_decode_f32(&dplan, &w, &cache, x.data(), L, y.data() + size_t(L) * E, arena.data, dbytes) ==
            ATTN_OK);
    return y;
  };
  const std::vector<float> one = run(nullptr, 0);
  for (const int32_t workers : {2, 3, 7}) {
    INFO("workers " << workers);
    Hook h;
    const std::vector<float> split = run(&h, workers);
    CHECK(std::memcmp(split.data(), one.data(), one.size() * 4) == 0);
    CHECK(h.most == expected_most(workers));
  }
  CHECK(attn_plan_set_parallel(nullptr, run_reversed, nullptr, 2) == ATTN_ERR_NULL_ARGUMENT);
  attn_plan zero;
  std::memset(&zero, 0, sizeof zero);
  CHECK(attn_plan_set_parallel(&zero, run_reversed, nullptr, 2) == ATTN_ERR_BAD_HANDLE);
}

TEST_CASE("The CLI's thread pool runs every piece once, and an f32 and s8 decode gives the same numbers",
          "[parallel][cli]") {
  attn::cli::ThreadPool pool(3);
  const attn::ParallelFor par = pool.parallel_for();
  REQUIRE(par.run != nullptr);
  CHECK(par.workers == 3);
  CHECK(attn::cli::ThreadPool(1).parallel_for().run == nullptr);  // one thread: no hook
  // Many jobs in a row, of 1 to 9 pieces: each piece exactly once per job (a job
  // with more pieces than the last once let a stale claim run one twice).
  struct Count {
    std::atomic<int32_t> hits[9];
  };
  for (int32_t job = 0; job < 20000; ++job) {
    const int32_t tasks = 1 + job % 9;
    Count c;
    for (auto& h : c.hits) h.store(0);
    par.run(
        par.ctx, tasks, [](void* arg, int32_t i) { static_cast<Count*>(arg)->hits[i].fetch_add(1); }, &c);
    for (int32_t i = 0; i < 9; ++i) REQUIRE(c.hits[i].load() == (i < tasks ? 1 : 0));
  }
  const Case k = split_cases()[0];
  const LoadedModel<attn::TransformerWeightsF32> m(f32_file(k.c, 34));
  const auto toks = sequences(1, kTokens, k.c.vocab_size, 8)[0];
  const auto f32 = [&](const attn::ParallelFor& p) {
    return outputs<attn::TransformerWeightsF32, float, attn::TransformerStateF32>(
        k.c, DType::kF32, m.weights.w, toks, p, attn::transformer_forward_f32,
        attn::transformer_state_init_f32, attn::transformer_decode_f32);
  };
  const std::vector<float> one = f32(attn::ParallelFor()), pooled = f32(par);
  CHECK(std::memcmp(one.data(), pooled.data(), one.size() * 4) == 0);
  const InMemory<attn::TransformerWeightsS8> q8 =
      quantize<attn::TransformerWeightsS8>(m.model, sequences(2, 8, k.c.vocab_size, 9));
  const auto s8 = [&](const attn::ParallelFor& p) {
    return outputs<attn::TransformerWeightsS8, int32_t, attn::TransformerStateS8>(
        k.c, DType::kS8, q8.w, toks, p, attn::transformer_forward_s8, attn::transformer_state_init_s8,
        attn::transformer_decode_s8);
  };
  CHECK(s8(attn::ParallelFor()) == s8(par));
}
