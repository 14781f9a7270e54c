// cost_decode.cpp: instructions per decoded token on this board, for
// tools/bench/mcu-cost. stories260K-class attention (llama2.c): dim 64, 8 heads,
// 4 KV heads (head_dim 8), no biases, RoPE theta 10000 (s8: the converter's
// Q1.14 tables, made here by attn::rope_table before counting). Random
// weights and tokens; s8 and s16 constants chosen as in cost_fixed.cpp so
// every stage holds a realistic spread. Built per dtype: ATTN_COST_DECODE_F32=1
// (attn_cost_decode_f32, FPU boards), else ATTN_COST_DECODE_BITS=8
// (attn_cost_decode_s8) or 16 (attn_cost_decode_s16).
//
// One cache of capacity kMaxContext is filled in one pass: prefill calls of
// up to kChunk rows bring it to C - 1 positions, then one decode call of one
// row -- the token at context C -- is counted. Prints per context C:
//
//   measure-decode board=mps3-an547 dtype=s8 ctx=256 E=64 H=8 KVH=4 insns_per_token=N cache=N step=N
//   kernels=mve compiler=...
//
// cache: kv_cache_arena_bytes at capacity kMaxContext; step: the plan's
// arena bytes of one decode call. Exits non-zero if a call fails or the
// outputs are constant (saturated).
#include <cstdint>
#include <cstdio>

#include "attn/decode.h"
#include "attn/quantize.h"
#include "cost_common.h"
#include "kernels/kernels_f32.h"
#include "kernels/kernels_fixed.h"
#include "port/kernel_tag.h"
#include "port/port.h"

#ifndef ATTN_COST_DECODE_F32
#define ATTN_COST_DECODE_F32 0
#endif
#ifndef ATTN_COST_DECODE_BITS
#define ATTN_COST_DECODE_BITS 8
#endif

namespace {

using cost::kCompiler;

constexpr int32_t kContexts[] = {64, 256, 1024};
constexpr int32_t kMaxContext = 1024;
constexpr int32_t kChunk = 32;  // rows per prefill call

constexpr attn::AttentionConfig config() {
  attn::AttentionConfig c;
  c.embed_dim = 64;
  c.num_heads = 8;
  c.num_kv_heads = 4;
  c.bias = false;
  c.rope_base = 10000.0f;
  return c;
}
constexpr attn::AttentionConfig kCfg = config();
constexpr int32_t kE = kCfg.embed_dim;
constexpr size_t kD = static_cast<size_t>(kCfg.inner_dim());
constexpr size_t kDkv = static_cast<size_t>(kCfg.kv_dim());

#if ATTN_COST_DECODE_F32
using Act = float;
using Weights = attn::WeightsF32;
using Cache = attn::KvCacheF32;
constexpr attn::DType kDType = attn::DType::kF32;
constexpr const char* kName = "f32";
constexpr auto kCacheInit = attn::kv_cache_init_f32;
constexpr auto kDecode = attn::decode_f32;
#elif ATTN_COST_DECODE_BITS == 8
using Act = int8_t;
using Bias = int32_t;
using Weights = attn::WeightsS8;
using Cache = attn::KvCacheS8;
constexpr attn::DType kDType = attn::DType::kS8;
constexpr const char* kName = "s8";
constexpr auto kCacheInit = attn::kv_cache_init_s8;
constexpr auto kDecode = attn::decode_s8;
#else
using Act = int16_t;
using Bias = int64_t;
using Weights = attn::WeightsS16;
using Cache = attn::KvCacheS16;
constexpr attn::DType kDType = attn::DType::kS16;
constexpr const char* kName = "s16";
constexpr auto kCacheInit = attn::kv_cache_init_s16;
constexpr auto kDecode = attn::decode_s16;
#endif

constexpr size_t kCacheBytes = attn::kv_cache_arena_bytes(kCfg, kDType, kMaxContext);
constexpr size_t kStepBytes = attn::decode_arena_bytes(kCfg, kDType, kChunk, kMaxContext);
static_assert(kCacheBytes > 0 && kStepBytes > 0, "the probe's config must plan");

alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[kCacheBytes + kStepBytes];
Act g_x[static_cast<size_t>(kChunk) * kE];  // [kChunk, E] the rows of one call
Act g_y[static_cast<size_t>(kChunk) * kE];  // [kChunk, E]

cost::Rng g_rng{12345u};

#if ATTN_COST_DECODE_F32
float g_w[4 * kD * static_cast<size_t>(kE)];  // wq [D, E], wk wv [Dkv, E], wo [E, D]
float uniform_f(float scale) { return scale * static_cast<float>(g_rng.uniform(1000)) / 1000.0f; }
Weights make_weights() {
  for (float& w : g_w) w = uniform_f(0.125f);  // ~ 1 / sqrt(E)
  Weights w;
  w.wq = g_w;
  w.wk = g_w + kD * kE;
  w.wv = w.wk + kDkv * kE;
  w.wo = w.wv + kDkv * kE;
  return w;
}
Act input_value() { return uniform_f(1.0f); }
#else
// Projections: weights [out, E], biases (zero-point folds only, as the
// converter writes them for a bias-free block), multipliers, shifts.
cost::Projections<Bias, 4 * kD* static_cast<size_t>(kE), 3 * kD + kE> g_proj;
// RoPE tables [kMaxContext, head_dim / 2] cos and sin, Q1.14.
alignas(ATTN_ARENA_ALIGN) uint8_t
    g_rope[2 * ((static_cast<size_t>(kMaxContext) * (static_cast<size_t>(kCfg.resolved_head_dim()) / 2) * 2 +
                 15) /
                16 * 16)];
Weights make_weights() {
  // shift -9: acc ~ sqrt(E) 40 * 64 -> ~ +-30
  g_proj.fill(g_rng, sizeof g_proj.weight, sizeof g_proj.bias / sizeof g_proj.bias[0], -9);
  Weights w;
  using Proj = decltype(w.q);
  w.q = g_proj.at<Proj>(0, 0);
  w.k = g_proj.at<Proj>(kD * kE, kD);
  w.v = g_proj.at<Proj>(kD * kE + kDkv * kE, kD + kDkv);
  w.o = g_proj.at<Proj>(kD * kE + 2 * kDkv * kE, kD + 2 * kDkv);
#if ATTN_COST_DECODE_BITS == 8
  w.q_zero_point = 3;
  w.k_zero_point = -2;
  w.v_zero_point = 1;
  w.context_zero_point = -1;
  w.output_zero_point = 2;
  w.softmax.exp_multiplier = 3150000000u;  // t = u * 47 / 2^16 per score step
  w.softmax.exp_shift = 6;
  w.softmax.diff_limit = 22000;  // t < 2^20
  w.softmax.score_shift = 0;
  w.context_multiplier = 0x50000000;
  w.context_shift = -14;
#else  // cost_fixed.cpp's s16 constants
  w.softmax.exp_multiplier = 3400000000u;  // t ~ 0.8 u
  w.softmax.exp_shift = 0;
  w.softmax.diff_limit = 1300000;  // t < 2^20
  w.softmax.score_shift = 10;      // head_dim < 2^10
  w.context_multiplier = 0x50000000;
  w.context_shift = -15;
#endif
  attn::Arena tables;
  if (tables.init(g_rope, sizeof g_rope) != attn::Status::kOk ||
      attn::rope_table(kCfg.rope_base, kCfg.resolved_head_dim(), kMaxContext, tables, &w.rope) !=
          attn::Status::kOk) {
    w.rope = attn::RopeTable();  // decode then fails with kNullArgument
  }
  return w;
}
Act input_value() { return static_cast<Act>(g_rng.uniform(ATTN_COST_DECODE_BITS == 8 ? 40 : 10000)); }
#endif

void fill_rows(int32_t n) {
  for (size_t i = 0; i < static_cast<size_t>(n) * kE; ++i) g_x[i] = input_value();
}

}  // namespace

int main() {
  const Weights w = make_weights();
  attn::Plan plan;
  attn::Status st = attn::plan_decode(kCfg, kDType, kChunk, kMaxContext, &plan);
  attn::Arena arena;
  if (st == attn::Status::kOk) st = arena.init(g_arena, sizeof g_arena);
  Cache cache;
  if (st == attn::Status::kOk) st = kCacheInit(plan, 0, arena, &cache);
  bool varied = false;
  for (const int32_t C : kContexts) {
    // Prefill to C - 1 positions, kChunk rows per call.
    while (st == attn::Status::kOk && cache.next_position() < C - 1) {
      const int32_t left = C - 1 - cache.next_position();
      const int32_t n = left < kChunk ? left : kChunk;
      fill_rows(n);
      st = kDecode(plan, w, &cache, g_x, n, g_y, arena);
    }
    if (st != attn::Status::kOk) break;
    // The token at context C.
    fill_rows(1);
    port_counter_start();
    st = kDecode(plan, w, &cache, g_x, 1, g_y, arena);
    const uint64_t insns = port_counter_stop();
    if (st != attn::Status::kOk) break;
    for (int32_t i = 1; i < kE; ++i) varied = varied || g_y[i] != g_y[0];
    std::printf(
        "measure-decode board=%s dtype=%s ctx=%ld E=%ld H=%ld KVH=%ld insns_per_token=%lu cache=%lu step=%lu "
        "kernels=%s compiler=%s\n",
        port_board_name(), kName, static_cast<long>(C), static_cast<long>(kE),
        static_cast<long>(kCfg.num_heads), static_cast<long>(kCfg.num_kv_heads),
        static_cast<unsigned long>(insns), static_cast<unsigned long>(kCacheBytes),
        static_cast<unsigned long>(plan.arena_bytes), port_kernel_tag(kDType), kCompiler);
  }
  if (st != attn::Status::kOk || !varied) {
    std::printf("cost decode %s failed: %s%s\n", kName, attn::status_name(st),
                varied ? "" : " (constant output)");
    return 1;
  }
  return 0;
}
