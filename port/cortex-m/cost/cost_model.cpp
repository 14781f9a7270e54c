// cost_model.cpp: instructions of whole s8 models on this board, for
// tools/bench/mcu-cost. Random integer weights and plausible constants made on the
// device (model_s8.h: no quantizer; the shapes drive the cost), the forward
// must return kOk and give outputs that are not constant. Built twice:
//
// ATTN_COST_MODEL_DECODER=0 (attn_cost_model_encoder): a BERT-style encoder,
//   2 layers, L = 64, E = 64, H = 4, FFN 256, post-norm LayerNorm (with
//   bias), GELU, learned positions, token types, embedding norm, no head;
//   one transformer_forward_s8 of 64 tokens (all rows out) is counted.
// ATTN_COST_MODEL_DECODER=1 (attn_cost_model_decoder): shaped like llama2.c's
//   stories260K: dim 64, 5 layers, 8 heads, 4 KV heads, FFN 172, vocab 512,
//   RMSNorm, SiLU gate, RoPE 10000, no biases, final norm, tied head; a
//   prefill to context 255 (calls of kChunk tokens), then ONE
//   transformer_decode_s8 step at context 256 (logits of that row) is counted.
// ATTN_COST_MODEL_S4=1 (attn_cost_model_decoder_s4, with the decoder): the
//   same decoder with int4 FFN weights (W1, W2, W3: model_s8.h's int4_ffn),
//   the other tensors int8. The lines carry weights=s8 or weights=s4, and
//   pool=N: the bytes of the model's tensors (weights, biases, constants,
//   tables) built on the device.
//
//   measure-model board=... dtype=s8 model=encoder weights=s8 L=64 E=64 H=4 F=256 layers=2 insns=N
//     arena=N pool=N kernels=... compiler=...
//   measure-model board=... dtype=s8 model=decoder weights=s8 dim=64 layers=5 heads=8 kv_heads=4 F=172
//     vocab=512 ctx=256 insns_per_token=N arena=N pool=N kernels=... compiler=...
//
// arena: the plan's arena bytes (+ state bytes, the KV caches, for the
// decoder). Before it, one `measure-model-part` line per part of the counted
// call, each kernel run on its shapes through the kernel table (attention:
// the block alone, per layer; the decoder's on a copy of each layer's cache,
// whose new row the counted step rewrites); after it `rest`, the counted
// total minus the parts (embeddings, checks, glue):
//
//   measure-model-part board=... model=encoder part=ffn_w1 insns=N
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attention/attend_fixed.h"
#include "attn/quantize.h"
#include "attn/transformer_fixed.h"
#include "cost_common.h"
#include "kernels/kernel_table.h"
#include "model/transformer_fixed_common.h"
#include "model_s8.h"
#include "port/kernel_tag.h"
#include "port/port.h"

#ifndef ATTN_COST_MODEL_DECODER
#define ATTN_COST_MODEL_DECODER 0
#endif
#ifndef ATTN_COST_MODEL_S4
#define ATTN_COST_MODEL_S4 0
#endif

namespace {

using namespace attn;
using cost::kCompiler;
constexpr bool kInt4Ffn = ATTN_COST_MODEL_S4 != 0;
constexpr const char* kWeights = kInt4Ffn ? "s4" : "s8";

#if ATTN_COST_MODEL_DECODER
constexpr const char* kModel = "decoder";
constexpr int32_t kContext = 256;  // the counted token's context
constexpr int32_t kChunk = 8;      // prefill tokens per call
constexpr int32_t kMaxTokens = kChunk;
constexpr int32_t kCapacity = kContext;
TransformerConfig make_config() {
  TransformerConfig c =
      TransformerConfig::decoder(/*vocab_size=*/512, /*embed_dim=*/64, /*num_layers=*/5,
                                 /*num_heads=*/8, /*ffn_dim=*/172, /*max_positions=*/kContext);
  c.num_kv_heads = 4;
  return c;
}
constexpr size_t kPoolBytes = 304 * 1024;
constexpr size_t kArenaBytes = 100 * 1024;
#else
constexpr const char* kModel = "encoder";
constexpr int32_t kTokens = 64;
constexpr int32_t kMaxTokens = kTokens;
constexpr int32_t kCapacity = 0;
TransformerConfig make_config() {
  return TransformerConfig::encoder(/*vocab_size=*/512, /*embed_dim=*/64, /*num_layers=*/2, /*num_heads=*/4,
                                    /*ffn_dim=*/256, /*max_positions=*/kTokens);
}
constexpr size_t kPoolBytes = 160 * 1024;
constexpr size_t kArenaBytes = 64 * 1024;
#endif
const TransformerConfig kCfg = make_config();

alignas(ATTN_ARENA_ALIGN) uint8_t g_pool[kPoolBytes];    // weights, tables
alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[kArenaBytes];  // plan.arena_bytes (+ the decoder's state)
LayerWeightsS8 g_layers[8];
#if ATTN_COST_MODEL_DECODER
int32_t g_tokens[kChunk];
int32_t g_out[512];  // logits of the last row
#else
int32_t g_tokens[kTokens];
int32_t g_out[kTokens * 64];  // hidden state [L, E]
#endif

cost::Rng g_rng{4242u};

// The kernel table's choice per op: one ISA name if every op of the model
// runs the same one, else attention's tag and each model op's.
const char* kernels_tag() {
  static char tag[200];
  const char* att = port_kernel_tag(DType::kS8);
  using namespace detail;
  const char* w2 = kInt4Ffn ? kLinearResidualS4S8[best_row(kLinearResidualS4S8)].isa
                            : kLinearResidualS8[best_row(kLinearResidualS8)].isa;
  const char* w13 = kInt4Ffn ? kLinearS4S8[best_row(kLinearS4S8)].isa : att;
  const char* head = kLogitsS8[best_row(kLogitsS8)].isa;
  const char* norm = kNormS8[best_row(kNormS8)].isa;
  const char* norm32 = kNormS32[best_row(kNormS32)].isa;
  const char* gate = kActGateS8[best_row(kActGateS8)].isa;
  const char* table = kActTableS8[best_row(kActTableS8)].isa;
  const char* add = kResidualAddS8[best_row(kResidualAddS8)].isa;
  const char* to = kResidualToS8[best_row(kResidualToS8)].isa;
  const char* all[] = {w2, w13, head, norm, norm32, gate, table, add, to};
  bool same = true;
  for (const char* k : all) same = same && std::strcmp(k, att) == 0;
  if (same) return att;
  std::snprintf(tag, sizeof tag,
                "attention:%s,ffn_linear:%s,linear_residual:%s,logits:%s,norm:%s,norm_s32:%s,act_gate:%s,"
                "act_table:%s,residual_add:%s,residual_to:%s",
                att, w13, w2, head, norm, norm32, gate, table, add, to);
  return tag;
}

void part(const char* name, uint64_t insns) {
  std::printf("measure-model-part board=%s model=%s part=%s insns=%lu\n", port_board_name(), kModel, name,
              static_cast<unsigned long>(insns));
}

// Instructions of `calls` runs of f.
template <typename F>
uint64_t count(int32_t calls, F f) {
  port_counter_start();
  for (int32_t i = 0; i < calls; ++i) f();
  return port_counter_stop();
}

// Scratch for the parts (the arena's own buffers are given back after a call).
constexpr int32_t kRows = ATTN_COST_MODEL_DECODER ? 1 : 64;  // rows of one call
alignas(16) int32_t g_res[kRows * 64];
alignas(16) int8_t g_a[kRows * 64];
alignas(16) int8_t g_h1[kRows * 256];
alignas(16) int8_t g_h3[kRows * 256];

// The parts of the call counted next, kernel by kernel (printed); returns their sum.
uint64_t parts(const TransformerWeightsS8& w, const void* state, Arena& arena) {
  using namespace detail;
  const int32_t E = kCfg.embed_dim, F = kCfg.ffn_dim, Lyr = kCfg.num_layers;
#if ATTN_COST_MODEL_DECODER
  const int32_t n = 1;
#else
  const int32_t n = kTokens;
#endif
  for (int32_t i = 0; i < n * E; ++i) g_res[i] = g_rng.uniform(1 << 20);
  for (int32_t i = 0; i < n * E; ++i) g_a[i] = static_cast<int8_t>(g_rng.uniform(60));
  const MatS32 x = matrix(g_res, n, E);
  const MatS8 a = matrix(g_a, n, E);
  const MatS8 h1 = matrix(g_h1, n, F), h3 = matrix(g_h3, n, F);
  const LayerWeightsS8& L0 = w.layers[0];
  const FfnS8& f = L0.ffn;
  uint64_t sum = 0;
  const auto add = [&](const char* name, uint64_t insns) {
    part(name, insns);
    sum += insns;
  };
  // attention block, per layer
  uint64_t att = 0;
#if ATTN_COST_MODEL_DECODER
  {
    Plan dplan;
    (void)plan_decode(kCfg.attention(), DType::kS8, kMaxTokens, kCapacity, &dplan);
    const auto* st = static_cast<const TransformerStateS8*>(state);
    for (int32_t l = 0; l < Lyr; ++l) {
      KvCacheS8 c = st->caches[l];  // the step below writes the row the counted step then rewrites
      att += count(1, [&] { (void)decode_s8(dplan, w.layers[l].attention, &c, g_a, 1, g_h1, arena); });
    }
  }
#else
  (void)state;
  {
    Plan aplan;
    (void)plan_attention(kCfg.attention(), DType::kS8, n, n, &aplan);
    IoS8 io;
    io.query = io.key = io.value = g_a;
    io.output = g_h1;
    for (int32_t l = 0; l < Lyr; ++l)
      att += count(1, [&] { (void)forward_s8(aplan, w.layers[l].attention, Mask{}, io, arena); });
  }
#endif
  add("attention", att);
  // An FFN linear as the forward runs it: int8 or int4 weights (linear_split.h).
  const auto ffn_linear = [&](const ProjectionS8& pr, const LinearS8Params& p, const MatS8& y) {
    if (pr.weight_s4 != nullptr) {
      best(kLinearS4S8)(a, matrix_s4(pr.weight_s4, y.cols, E), pr.bias, p, y);
    } else {
      best(kLinearS8)(a, matrix(pr.weight, y.cols, E), pr.bias, p, y);
    }
  };
  const LinearS8Params p1 = FixedOps<int8_t>::linear_params(f.w1, f.h1_zero_point);
  add("ffn_w1", count(Lyr, [&] { ffn_linear(f.w1, p1, h1); }));
  if (kCfg.gated_ffn) {
    const LinearS8Params p3 = FixedOps<int8_t>::linear_params(f.w3, f.h3_zero_point);
    add("ffn_w3", count(Lyr, [&] { ffn_linear(f.w3, p3, h3); }));
    add("act_gate", count(Lyr, [&] {
          best(kActGateS8)(h1, h3, f.gate_table, f.h3_zero_point, f.gate_multiplier, f.gate_shift,
                           f.g_zero_point);
        }));
  } else {
    add("act_table", count(Lyr, [&] { best(kActTableS8)(h1, f.act_table); }));
  }
  add("ffn_w2", count(Lyr, [&] {
        if (f.w2.weight_s4 != nullptr) {
          best(kLinearResidualS4S8)(h1, matrix_s4(f.w2.weight_s4, E, F), f.w2.bias, f.w2.multiplier,
                                    f.w2.shift, x);
        } else {
          best(kLinearResidualS8)(h1, matrix(f.w2.weight, E, F), f.w2.bias, f.w2.multiplier, f.w2.shift, x);
        }
      }));
  if (kCfg.pre_norm) {
    add("norms", count(2 * Lyr, [&] { best(kNormS8)(x, kCfg.norm, L0.norm1, a); }) +
                     count(kCfg.final_norm ? 1 : 0, [&] { best(kNormS8)(x, kCfg.norm, w.final_norm, a); }));
    add("residual", count(Lyr, [&] { best(kResidualAddS8)(x, a, L0.attn_out); }));
  } else {
    add("norms",
        count(2 * Lyr + (kCfg.embedding_norm ? 1 : 0), [&] { best(kNormS32)(x, kCfg.norm, L0.norm1, x); }));
    add("residual", count(Lyr, [&] { best(kResidualAddS8)(x, a, L0.attn_out); }) +
                        count(2 * Lyr, [&] { best(kResidualToS8)(x, L0.attn_in, a); }));
  }
  if (kCfg.head != LmHead::kNone) {
    add("head", count(1, [&] {
          best(kLogitsS8)(a, matrix(w.head.weight, kCfg.vocab_size, E), w.head.bias, w.head.multiplier,
                          w.head.shift, matrix(g_out, n, kCfg.vocab_size));
        }));
  }
  return sum;
}

#if ATTN_COST_MODEL_DECODER
// RoPE tables for every position, shared by the layers.
alignas(ATTN_ARENA_ALIGN) uint8_t g_rope[2 * ((kContext * 4 * 2 + 15) / 16 * 16) + 64];
#endif

void fill_tokens(int32_t n) {
  for (int32_t i = 0; i < n; ++i) g_tokens[i] = static_cast<int32_t>(g_rng.next() >> 8) % kCfg.vocab_size;
}

bool varied(int32_t n) {
  for (int32_t i = 1; i < n; ++i)
    if (g_out[i] != g_out[0]) return true;
  return false;
}

}  // namespace

int main() {
  Arena pool;
  Status st = pool.init(g_pool, sizeof g_pool);
  model_s8::Builder b(pool, 777u, kInt4Ffn);
  TransformerWeightsS8 w = b.build(kCfg, g_layers);
  if (st == Status::kOk) st = b.status();
#if ATTN_COST_MODEL_DECODER
  RopeTable rope;
  Arena tables;
  if (st == Status::kOk) st = tables.init(g_rope, sizeof g_rope);
  if (st == Status::kOk)
    st = rope_table(kCfg.rope_base, kCfg.embed_dim / kCfg.num_heads, kContext, tables, &rope);
  for (int32_t l = 0; l < kCfg.num_layers; ++l) g_layers[l].attention.rope = rope;
#endif
  TransformerPlan plan;
  if (st == Status::kOk) st = plan_transformer_fixed(kCfg, DType::kS8, kMaxTokens, kCapacity, &plan);
  Arena arena;
  if (st == Status::kOk) st = arena.init(g_arena, sizeof g_arena);
  uint64_t insns = 0;
  bool ok = false;
#if ATTN_COST_MODEL_DECODER
  TransformerStateS8 state;
  if (st == Status::kOk) st = transformer_state_init_s8(plan, 0, arena, &state);
  while (st == Status::kOk && state.length < kContext - 1) {
    const int32_t left = kContext - 1 - state.length;
    const int32_t n = left < kChunk ? left : kChunk;
    fill_tokens(n);
    st = transformer_decode_s8(plan, w, &state, g_tokens, n, OutputRows::kLast, g_out, arena);
  }
  fill_tokens(1);
  uint64_t sum = 0;
  if (st == Status::kOk) sum = parts(w, &state, arena);
  if (st == Status::kOk) {
    port_counter_start();
    st = transformer_decode_s8(plan, w, &state, g_tokens, 1, OutputRows::kLast, g_out, arena);
    insns = port_counter_stop();
  }
  ok = st == Status::kOk && varied(kCfg.vocab_size);
  if (ok) {
    std::printf(
        "measure-model board=%s dtype=s8 model=decoder weights=%s dim=%ld layers=%ld heads=%ld kv_heads=%ld "
        "F=%ld vocab=%ld ctx=%ld insns_per_token=%lu arena=%lu pool=%lu kernels=%s compiler=%s\n",
        port_board_name(), kWeights, static_cast<long>(kCfg.embed_dim), static_cast<long>(kCfg.num_layers),
        static_cast<long>(kCfg.num_heads), static_cast<long>(kCfg.num_kv_heads),
        static_cast<long>(kCfg.ffn_dim), static_cast<long>(kCfg.vocab_size), static_cast<long>(kContext),
        static_cast<unsigned long>(insns), static_cast<unsigned long>(plan.arena_bytes + plan.state_bytes),
        static_cast<unsigned long>(pool.used()), kernels_tag(), kCompiler);
    part("rest", insns > sum ? insns - sum : 0);
  }
#else
  fill_tokens(kTokens);
  uint64_t sum = 0;
  if (st == Status::kOk) sum = parts(w, nullptr, arena);
  if (st == Status::kOk) {
    port_counter_start();
    st = transformer_forward_s8(plan, w, g_tokens, kTokens, OutputRows::kAll, g_out, arena);
    insns = port_counter_stop();
  }
  ok = st == Status::kOk && varied(kTokens * kCfg.embed_dim);
  if (ok) {
    std::printf(
        "measure-model board=%s dtype=s8 model=encoder weights=%s L=%ld E=%ld H=%ld F=%ld layers=%ld "
        "insns=%lu arena=%lu pool=%lu kernels=%s compiler=%s\n",
        port_board_name(), kWeights, static_cast<long>(kTokens), static_cast<long>(kCfg.embed_dim),
        static_cast<long>(kCfg.num_heads), static_cast<long>(kCfg.ffn_dim),
        static_cast<long>(kCfg.num_layers), static_cast<unsigned long>(insns),
        static_cast<unsigned long>(plan.arena_bytes), static_cast<unsigned long>(pool.used()), kernels_tag(),
        kCompiler);
    part("rest", insns > sum ? insns - sum : 0);
  }
#endif
  if (!ok) {
    std::printf("cost model %s failed: %s%s (pool %lu of %lu bytes, arena %lu + %lu of %lu)\n", kModel,
                status_name(st), st == Status::kOk ? " (constant output)" : "",
                static_cast<unsigned long>(pool.used()), static_cast<unsigned long>(sizeof g_pool),
                static_cast<unsigned long>(plan.arena_bytes), static_cast<unsigned long>(plan.state_bytes),
                static_cast<unsigned long>(sizeof g_arena));
    return 1;
  }
  std::printf("pool %lu bytes\n", static_cast<unsigned long>(pool.used()));
  return 0;
}
