// attn_bench_transformer: the float32 whole-model encoder forward
// (transformer_forward_f32), single thread, on the host.
//
//   attn_bench_transformer                       L=128 E=256 H=4 F=1024, 4 layers, post-norm, gelu
//   attn_bench_transformer --shape L E H F N     another shape (N layers)
//   attn_bench_transformer --pre-norm --relu     nn.TransformerEncoderLayer(norm_first=True) / relu
//   attn_bench_transformer --tile 16             tile rows (default ATTN_TILE_ROWS)
//   attn_bench_transformer --samples 31          samples per median (default 21)
//
// The model is nn.TransformerEncoder's: N encoder layers (attention with
// biases, LayerNorm eps 1e-5, FFN with biases), no embedding norm, no head;
// its input is the token embedding of L token ids (a gather, about 0.1% of
// the time). Weights are N(0, 1/fan_in), packed once with
// pack_transformer_weights_f32 as an application would (also timed unpacked).
// Prints one line per variant: the median of the samples' CPU time per forward
// (thread CPU time, attn_bench::median_cpu_us), GFLOP/s of the matrix
// products, arena bytes; tools/bench/bench_transformer_vs_torch.py runs it beside
// torch.nn.TransformerEncoder.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attn/kernel_set.h"
#include "attn/transformer.h"
#include "bench/cpu_time.h"
#include "host_helpers.h"

namespace {

struct Model {
  std::vector<std::vector<float>> store;
  std::vector<attn::LayerWeightsF32> layers;
  std::vector<AlignedBuffer> packed;
  attn::TransformerWeightsF32 w;

  const float* make(size_t n, std::mt19937& rng, float scale) {
    store.push_back(random_normal(n, rng, scale));
    return store.back().data();
  }
};

void build(const attn::TransformerConfig& c, Model* m) {
  std::mt19937 rng(1);
  const size_t E = size_t(c.embed_dim), F = size_t(c.ffn_dim), V = size_t(c.vocab_size);
  m->store.reserve(64 * size_t(c.num_layers) + 4);
  m->w.token_embedding = m->make(V * E, rng, 1.0f);
  m->layers.resize(size_t(c.num_layers));
  const float se = 1.0f / std::sqrt(float(E)), sf = 1.0f / std::sqrt(float(F));
  for (attn::LayerWeightsF32& l : m->layers) {
    attn::WeightsF32& a = l.attention;
    a.wq = m->make(E * E, rng, se), a.wk = m->make(E * E, rng, se), a.wv = m->make(E * E, rng, se);
    a.wo = m->make(E * E, rng, se);
    a.bq = m->make(E, rng, 0.1f), a.bk = m->make(E, rng, 0.1f), a.bv = m->make(E, rng, 0.1f);
    a.bo = m->make(E, rng, 0.1f);
    l.norm1 = {m->make(E, rng, 0.1f), m->make(E, rng, 0.1f)};
    l.norm2 = {m->make(E, rng, 0.1f), m->make(E, rng, 0.1f)};
    for (auto* nw : {&l.norm1, &l.norm2}) {
      float* wt = const_cast<float*>(nw->weight);
      for (size_t i = 0; i < E; ++i) wt[i] += 1.0f;
    }
    l.ffn.w1 = m->make(F * E, rng, se), l.ffn.b1 = m->make(F, rng, 0.1f);
    l.ffn.w2 = m->make(E * F, rng, sf), l.ffn.b2 = m->make(E, rng, 0.1f);
  }
  m->w.layers = m->layers.data();
}

// W^T panels of every layer's attention and FFN (a no-op where the build packs nothing).
bool pack(const attn::TransformerPlan& plan, Model* m) {
  size_t bytes = 0;
  if (attn::pack_transformer_weights_f32_storage_bytes(plan, &bytes) != attn::Status::kOk) return false;
  m->packed.clear();
  m->packed.emplace_back(bytes);
  return attn::pack_transformer_weights_f32(plan, m->layers.data(), m->packed.back().data, bytes) ==
         attn::Status::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  int32_t L = 128, E = 256, H = 4, F = 1024, N = 4;
  int samples = 21;
  int32_t tile = ATTN_TILE_ROWS;
  attn::TransformerConfig c;
  c.activation = attn::Activation::kGelu;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shape" && i + 5 < argc) {
      L = std::atoi(argv[++i]), E = std::atoi(argv[++i]), H = std::atoi(argv[++i]);
      F = std::atoi(argv[++i]), N = std::atoi(argv[++i]);
    } else if (a == "--pre-norm") {
      c.pre_norm = true;
    } else if (a == "--relu") {
      c.activation = attn::Activation::kRelu;
    } else if (a == "--tile" && i + 1 < argc) {
      tile = std::atoi(argv[++i]);
    } else if (a == "--samples" && i + 1 < argc) {
      samples = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--shape L E H F layers] [--pre-norm] [--relu] [--tile T] [--samples N]\n",
                   argv[0]);
      return 2;
    }
  }
  c.vocab_size = 1000, c.embed_dim = E, c.num_layers = N, c.num_heads = H, c.ffn_dim = F;
  c.max_positions = L, c.norm_eps = 1e-5f;
  attn::TransformerPlan plan;
  if (attn::plan_transformer(c, attn::DType::kF32, L, 0, &plan, tile) != attn::Status::kOk) {
    std::fprintf(stderr, "bad shape\n");
    return 1;
  }
  Model m;
  build(c, &m);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  if (arena.init(buf.data, plan.arena_bytes) != attn::Status::kOk) return 1;
  std::vector<int32_t> tokens(static_cast<size_t>(L));
  for (int32_t i = 0; i < L; ++i) tokens[size_t(i)] = (i * 7919) % c.vocab_size;
  std::vector<float> out(size_t(L) * size_t(E));
  auto forward = [&] {
    if (attn::transformer_forward_f32(plan, m.w, tokens.data(), L, attn::OutputRows::kAll, out.data(),
                                      arena) != attn::Status::kOk)
      std::abort();
  };
  // Multiply-adds x 2: Q, K, V, O (4 L E^2), scores and P.V (2 L^2 E), FFN (2 L E F), per layer.
  const double flops = 2.0 * N * (4.0 * L * E * E + 2.0 * L * L * E + 2.0 * L * E * F);
  attn::KernelSet ks;
  const bool have_ks = attn::kernel_set(attn::DType::kF32, &ks) == attn::Status::kOk;
  std::printf("transformer f32 encoder L=%d E=%d H=%d F=%d layers=%d %s %s, arena %zu bytes, kernels %s\n", L,
              E, H, F, N, c.pre_norm ? "pre-norm" : "post-norm",
              c.activation == attn::Activation::kRelu ? "relu" : "gelu", plan.arena_bytes,
              have_ks ? ks.linear : "?");
  const double unpacked = attn_bench::median_cpu_us(forward, samples);
  if (!pack(plan, &m)) return 1;
  const double packed = attn_bench::median_cpu_us(forward, samples);
  std::printf("unpacked_us=%.1f gflops=%.1f\n", unpacked, flops / unpacked * 1e-3);
  std::printf("packed_us=%.1f gflops=%.1f\n", packed, flops / packed * 1e-3);
  return 0;
}
