// attn/transformer.h: whole models around the attention block.
//
// One description covers the encoders (BERT, nn.TransformerEncoder) and the
// decoders (Llama): token embedding, optional learned position and token-type
// embeddings, an optional embedding norm, N identical layers, an optional
// final norm and an optional LM head. A layer is
//
//   post-norm (BERT, nn.TransformerEncoderLayer(norm_first=False)):
//     x = N1(x + Attn(x));  x = N2(x + FFN(x))
//   pre-norm (Llama, nn.TransformerEncoderLayer(norm_first=True)):
//     x = x + Attn(N1(x));  x = x + FFN(N2(x))
//
//   FFN(n) = W2 act(W1 n + b1) + b2                 (plain)
//   FFN(n) = W2 (act(W1 n + b1) * (W3 n + b3)) + b2 (gated: Llama's gate_proj = W1,
//                                                    up_proj = W3, down_proj = W2)
//
// N is LayerNorm (weight, optional bias) or RMSNorm (weight only), both with
// the model's eps. Attention is the block of attn/attention.h (self-attention,
// optional GQA and RoPE, causal for decoders).
//
// Memory: nothing allocates. plan_transformer() gives the exact arena bytes
// of one call (scratch, given back on return) and of the KV-cache state
// (carved once by transformer_state_init_*, kept until the arena is reset).
// The state and the calls may share one Arena or have one each: nothing in a
// call's arena is kept from one call to the next, so it may sit in tightly
// coupled RAM and serve other code between calls, the state in SRAM or PSRAM
// (port/README.md, "Memory placement"; C: attn_transformer_init_split).
// Weights are read in place (from the .attn blob or from the caller's arrays).
//
// The integer models (s8, s16) are in attn/transformer_fixed.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/decode.h"
#include "attn/parallel.h"
#include "attn/status.h"
#include "attn/tensor.h"

#ifndef ATTN_MAX_LAYERS
#define ATTN_MAX_LAYERS 64  // layers per model (loader and planner cap)
#endif

namespace attn {

enum class NormKind : uint8_t {
  kLayerNorm = 1,  // (x - mean) / sqrt(var + eps) * weight + bias (bias optional)
  kRmsNorm = 2,    // x / sqrt(mean(x^2) + eps) * weight
};

enum class Activation : uint8_t {
  kGelu = 1,      // x/2 (1 + erf(x / sqrt 2)): HF "gelu", torch's default GELU
  kGeluTanh = 2,  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): HF "gelu_new" / "gelu_pytorch_tanh"
  kRelu = 3,      // max(x, 0)
  kSilu = 4,      // x sigmoid(x): Llama's gate
};

enum class LmHead : uint8_t {
  kNone = 0,    // output: the last hidden state [n, E]
  kTied = 1,    // logits [n, vocab] = x token_embedding^T
  kUntied = 2,  // logits [n, vocab] = x lm_head^T
};

struct TransformerConfig {
  int32_t vocab_size = 0;       // rows of the token embedding
  int32_t embed_dim = 0;        // E (hidden size)
  int32_t num_layers = 0;       // 1..ATTN_MAX_LAYERS
  int32_t num_heads = 0;        // H
  int32_t num_kv_heads = 0;     // 0: H (else divides H: grouped-query attention)
  int32_t head_dim = 0;         // 0: E / H
  int32_t ffn_dim = 0;          // F (intermediate size)
  int32_t max_positions = 0;    // positions a sequence may reach (learned table rows; RoPE tables)
  int32_t type_vocab_size = 0;  // rows of the token-type embedding (BERT: 2; type 0 is added); 0: none
  NormKind norm = NormKind::kLayerNorm;
  float norm_eps = 1e-5f;
  Activation activation = Activation::kGelu;
  LmHead head = LmHead::kNone;
  float rope_base = 0.0f;          // 0: no rotary embedding
  bool pre_norm = false;           // false: post-norm (BERT)
  bool gated_ffn = false;          // W3 present (Llama)
  bool attention_bias = true;      // bq, bk, bv, bo
  bool ffn_bias = true;            // b1, b2 (and b3 when gated)
  bool norm_bias = true;           // LayerNorm bias (ignored for RMSNorm, which has none)
  bool learned_positions = false;  // position embedding [max_positions, E] added to the token embedding
  bool embedding_norm = false;     // a norm on the embeddings (BERT)
  bool final_norm = false;         // a norm after the last layer (Llama)
  bool causal = false;             // decoder: each token attends itself and earlier tokens

  // The two families most models are, with the given sizes; change a field
  // after for a variant (GQA heads, another eps, head, ...). The sizes are
  // all int32_t: name them at the call, /*vocab_size=*/ ..., which
  // clang-tidy's bugprone-argument-comment checks.
  //
  // A Llama-style decoder: pre-norm RMSNorm (eps 1e-5), a SiLU-gated FFN,
  // RoPE (base 10000), no biases, a final norm, causal, a tied head.
  static constexpr TransformerConfig decoder(int32_t vocab_size, int32_t embed_dim, int32_t num_layers,
                                             int32_t num_heads, int32_t ffn_dim, int32_t max_positions) {
    TransformerConfig c = sized(vocab_size, embed_dim, num_layers, num_heads, ffn_dim, max_positions);
    c.norm = NormKind::kRmsNorm;
    c.activation = Activation::kSilu;
    c.head = LmHead::kTied;
    c.rope_base = 10000.0f;
    c.pre_norm = c.gated_ffn = c.final_norm = c.causal = true;
    c.attention_bias = c.ffn_bias = c.norm_bias = false;
    return c;
  }
  // A BERT-style encoder: post-norm LayerNorm (eps 1e-12), GELU, biases
  // everywhere, learned positions, two token types, an embedding norm, no head.
  static constexpr TransformerConfig encoder(int32_t vocab_size, int32_t embed_dim, int32_t num_layers,
                                             int32_t num_heads, int32_t ffn_dim, int32_t max_positions) {
    TransformerConfig c = sized(vocab_size, embed_dim, num_layers, num_heads, ffn_dim, max_positions);
    c.norm_eps = 1e-12f;
    c.type_vocab_size = 2;
    c.learned_positions = c.embedding_norm = true;
    return c;
  }
  // The defaults above (a post-norm LayerNorm GELU encoder with biases, no
  // positions, no head) with the given sizes.
  static constexpr TransformerConfig sized(int32_t vocab_size, int32_t embed_dim, int32_t num_layers,
                                           int32_t num_heads, int32_t ffn_dim, int32_t max_positions) {
    TransformerConfig c;
    c.vocab_size = vocab_size;
    c.embed_dim = embed_dim;
    c.num_layers = num_layers;
    c.num_heads = num_heads;
    c.ffn_dim = ffn_dim;
    c.max_positions = max_positions;
    return c;
  }

  // The attention block of every layer: self-attention of width E with the
  // model's heads, K/V heads, head_dim, rope_base and attention_bias.
  constexpr AttentionConfig attention() const {
    AttentionConfig a;
    a.embed_dim = embed_dim;
    a.num_heads = num_heads;
    a.head_dim = head_dim;
    a.bias = attention_bias;
    a.num_kv_heads = num_kv_heads;
    a.rope_base = rope_base;
    return a;
  }
  // Width of the output rows: E without a head, vocab_size with one.
  int32_t output_dim() const { return head == LmHead::kNone ? embed_dim : vocab_size; }
};

struct NormWeightsF32 {
  const float* weight = nullptr;  // [E]
  const float* bias = nullptr;    // [E]; LayerNorm with norm_bias only
};

struct FfnWeightsF32 {
  const float* w1 = nullptr;  // [F, E]
  const float* b1 = nullptr;  // [F]   (ffn_bias)
  const float* w2 = nullptr;  // [E, F]
  const float* b2 = nullptr;  // [E]   (ffn_bias)
  const float* w3 = nullptr;  // [F, E] (gated_ffn)
  const float* b3 = nullptr;  // [F]   (gated_ffn and ffn_bias)
  // Optional: W1, W3 and W2 packed once by pack_transformer_weights_f32()
  // (below). null: the forward reads w1, w3, w2 as stored.
  const float* packed = nullptr;
};

struct LayerWeightsF32 {
  WeightsF32 attention;  // self-attention, config.attention()
  NormWeightsF32 norm1;  // before (pre-norm) or after (post-norm) the attention
  NormWeightsF32 norm2;  // before or after the FFN
  FfnWeightsF32 ffn;
};

struct TransformerWeightsF32 {
  const float* token_embedding = nullptr;     // [vocab, E]
  const float* position_embedding = nullptr;  // [max_positions, E] (learned_positions)
  const float* type_embedding = nullptr;      // [type_vocab, E]; row 0 is added (type_vocab_size > 0)
  NormWeightsF32 embedding_norm;              // (embedding_norm)
  NormWeightsF32 final_norm;                  // (final_norm)
  const float* lm_head = nullptr;             // [vocab, E] (head == kUntied)
  const LayerWeightsF32* layers = nullptr;    // [num_layers], the caller's array
};

// Which output rows a call writes.
enum class OutputRows : uint8_t {
  kAll = 0,    // out [n, output_dim]
  kLast = 1,   // out [1, output_dim]: the last token's row only (generation)
  kFirst = 2,  // out [1, output_dim]: the first token's row only (an encoder's [CLS])
};

struct TransformerPlan {
  TransformerConfig config;
  DType dtype = DType::kF32;
  int32_t max_tokens = 0;  // n per call, 1..max_tokens
  int32_t capacity = 0;    // KV-cache positions (decoders); 0: forward only
  int32_t tile_rows = 0;   // rows of the FFN and attention tiles
  size_t arena_bytes = 0;  // scratch of one call
  size_t state_bytes = 0;  // the KV-cache state (0 when capacity is 0)
  // The caller's parallel-for (attn/parallel.h): each call splits its large
  // products (attention projections, FFN, LM head) over it. Not set by
  // plan_transformer (null: everything inline); set it after planning. The
  // outputs do not depend on it: integers byte for byte, f32 bit for bit.
  ParallelFor parallel;
};

// Arena bytes of one f32 call (transformer_forward_f32 or _decode_f32) of up
// to max_tokens tokens, the number plan_transformer() reports, as a constant
// expression for sizing static buffers; capacity > 0 also covers a decode
// call over a cache of that many positions. 0 for another dtype (the integer
// models size theirs in attn/transformer_fixed.h) or a shape that is not
// positive. Layout, each buffer rounded up to ATTN_ARENA_ALIGN bytes:
//   x, h, y [n, E]                 hidden state, normed input, block output
//   then, one after the other in the same bytes:
//     the attention block's arena  (attention_arena_bytes(n, n); with capacity
//                                  also decode_arena_bytes(n, capacity))
//     the FFN tile  u [T, F]       (gated: and g [T, F])
// where n = max_tokens and T = min(tile_rows, max_tokens).
constexpr size_t transformer_arena_bytes(const TransformerConfig& c, DType dtype, int32_t max_tokens,
                                         int32_t capacity, int32_t tile_rows = ATTN_TILE_ROWS) {
  if (dtype != DType::kF32 || c.embed_dim <= 0 || c.ffn_dim <= 0 || max_tokens <= 0 || capacity < 0 ||
      tile_rows <= 0) {
    return 0;
  }
  const auto aligned = [](uint64_t n) -> uint64_t {
    return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  };
  const AttentionConfig a = c.attention();
  const uint64_t n = static_cast<uint64_t>(max_tokens);
  const uint64_t e = static_cast<uint64_t>(c.embed_dim);
  const uint64_t t = static_cast<uint64_t>(tile_rows < max_tokens ? tile_rows : max_tokens);
  const uint64_t hidden = 3 * aligned(n * e * 4);                                                  // x, h, y
  const uint64_t ffn = (c.gated_ffn ? 2 : 1) * aligned(t * static_cast<uint64_t>(c.ffn_dim) * 4);  // u, g
  uint64_t block = attention_arena_bytes(a, DType::kF32, max_tokens, max_tokens, tile_rows);
  if (block == 0) return 0;
  if (capacity > 0) {
    const uint64_t d = decode_arena_bytes(a, DType::kF32, max_tokens, capacity, tile_rows);
    if (d == 0) return 0;
    block = d > block ? d : block;
  }
  const uint64_t bytes = hidden + (ffn > block ? ffn : block);
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Bytes of the f32 decoding state (transformer_state_init_f32): the
// KvCacheF32 array, then each layer's K and V [capacity, Dkv]. 0 for
// capacity 0, another dtype, or a config that is not positive.
constexpr size_t transformer_state_bytes(const TransformerConfig& c, DType dtype, int32_t capacity) {
  if (dtype != DType::kF32 || capacity <= 0 || c.num_layers <= 0) return 0;
  const uint64_t per_layer = kv_cache_arena_bytes(c.attention(), DType::kF32, capacity);
  if (per_layer == 0) return 0;
  const uint64_t layers = static_cast<uint64_t>(c.num_layers);
  const uint64_t array =
      (layers * sizeof(KvCacheF32) + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  const uint64_t bytes = array + layers * per_layer;
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Validate a config and size the arena for calls of up to max_tokens tokens;
// capacity > 0 also plans the KV-cache state (causal configs only).
// Checks, in this order: kNullArgument (out); kBadNumLayers, kBadVocab
// (vocab_size outside [1, 2^24], type_vocab_size outside [0, 2^16]),
// kBadFfnDim, kBadMaxPositions, kBadNorm (kind, or eps not finite in (0, 1)),
// kBadActivation, kBadHead; the attention part as plan_attention() checks it
// for max_tokens queries and keys (kBadEmbedDim, kBadNumHeads, kBadHeadDim,
// kBadKvHeads, kBadRope, kBadQueryLength for max_tokens, kBadTileRows);
// kSequenceTooLong (max_tokens > max_positions); kBadKeyLength (capacity
// negative or above ATTN_MAX_SEQ); kNotCausal (capacity > 0 without causal);
// kCapacityPastPositions (capacity > max_positions: rows no position reaches);
// kBadDtype (no whole-model runtime for dtype in this build); kSizeOverflow.
// out->tile_rows = min(tile_rows, max_tokens).
Status plan_transformer(const TransformerConfig& config, DType dtype, int32_t max_tokens, int32_t capacity,
                        TransformerPlan* out, int32_t tile_rows = ATTN_TILE_ROWS);

// The whole forward of n tokens at positions 0..n-1 (causal when the config
// says so). tokens: [n] in [0, vocab). out: see OutputRows. Everything is
// checked before anything is written: kBadDtype / kPlanMismatch (plan not
// made by plan_transformer for f32), kNullArgument (tokens, out, a weight
// the config needs), kBadQueryLength (n <= 0), kSequenceTooLong (n above
// max_tokens or max_positions), kBadShape (rows not an OutputRows),
// kTokenOutOfRange, kArenaTooSmall (fewer than plan.arena_bytes free).
// The arena is given back on return. Attention weights packed with
// pack_weights_f32() (WeightsF32::packed) are used.
Status transformer_forward_f32(const TransformerPlan& plan, const TransformerWeightsF32& weights,
                               const int32_t* tokens, int32_t n, OutputRows rows, float* out, Arena& arena);

// ---- weights packed once (optional; a host speed-up) ----------------------
// As pack_weights_f32() does for one attention block (attn/attention.h): the
// x86 AVX2 kernels multiply by W^T panels, which they otherwise make on every
// call (and for a depth above 256, the FFN's W2 at F > 256, they take a
// slower path without panels). Packing makes the panels of every layer's
// attention and FFN once, into memory the caller owns:
//   size_t bytes = 0;
//   ATTN_TRY(attn::pack_transformer_weights_f32_storage_bytes(plan, &bytes));  // 0: nothing to pack in this
//   build ATTN_TRY(attn::pack_transformer_weights_f32(plan, layers, buffer, bytes));  // sets .packed of each
//   layer
// The forward and the decode then read the panels; the weights stay required
// and in use. Builds whose kernels read W as stored (ARM, Cortex-M, ref)
// report 0 bytes and leave every .packed null. Any f32 plan of the same
// config fits; pack again after the weights change.

// Bytes pack_transformer_weights_f32() needs for plan.config. Errors:
// kNullArgument, those of the plan check (kBadDtype, kPlanMismatch), kSizeOverflow.
Status pack_transformer_weights_f32_storage_bytes(const TransformerPlan& plan, size_t* bytes);

// Packs layers [plan.config.num_layers] in place: each layer's
// attention.packed and ffn.packed point into `buffer` (ATTN_ARENA_ALIGN-aligned,
// `bytes` long), which must outlive their use. Errors: kNullArgument (layers,
// a weight the config needs, the buffer when bytes are needed), kBadDtype,
// kPlanMismatch, kSizeOverflow, kArenaMisaligned, kBufferTooSmall. On error
// the layers are unchanged.
Status pack_transformer_weights_f32(const TransformerPlan& plan, LayerWeightsF32* layers, void* buffer,
                                    size_t bytes);

// Decoding state: one KV cache per layer, carved from the arena.
struct TransformerStateF32 {
  KvCacheF32* caches = nullptr;  // [num_layers], in the arena
  int32_t num_layers = 0;
  int32_t length = 0;  // tokens consumed; the next token sits at this position
};

// Carve plan.state_bytes from `arena` (which must outlive the state): the
// cache array and one cache per layer, each with `window` (0: keep every
// position; W: keep the last W, as KvCache). Errors: kNullArgument,
// kBadDtype / kPlanMismatch (plan; also a plan without capacity),
// kBadWindow (window outside [0, capacity]), kArenaTooSmall (nothing kept).
Status transformer_state_init_f32(const TransformerPlan& plan, int32_t window, Arena& arena,
                                  TransformerStateF32* state);
// Forget every position (the caches stay carved). Errors: kNullArgument.
Status transformer_state_reset(TransformerStateF32* state);

// Append n tokens (a prompt: prefill; one token: a step) and write their
// outputs: the same numbers as transformer_forward_f32 over the whole sequence.
// The tokens sit at positions state->length ... Checked before anything is
// written or appended: those of transformer_forward_f32, and
// kNullArgument (state or its caches), kPlanMismatch (a plan without
// capacity, or a state made for another plan), kSequenceTooLong (n above
// max_tokens, or positions past max_positions), kCacheFull (a cache without
// a window would overflow).
Status transformer_decode_f32(const TransformerPlan& plan, const TransformerWeightsF32& weights,
                              TransformerStateF32* state, const int32_t* tokens, int32_t n, OutputRows rows,
                              float* out, Arena& arena);

}  // namespace attn
