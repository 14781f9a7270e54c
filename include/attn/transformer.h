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
// Weights are read in place (from the .attn blob or from the caller's arrays).
//
// The integer models (s8, s16) are in attn/transformer_fixed.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/decode.h"
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

  // The attention block of every layer.
  AttentionConfig attention() const;
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
  kAll = 0,   // out [n, output_dim]
  kLast = 1,  // out [1, output_dim]: the last token's row only (generation)
};

struct TransformerPlan {
  TransformerConfig config;
  DType dtype = DType::kF32;
  int32_t max_tokens = 0;  // n per call, 1..max_tokens
  int32_t capacity = 0;    // KV-cache positions (decoders); 0: forward only
  int32_t tile_rows = 0;   // rows of the FFN and attention tiles
  size_t arena_bytes = 0;  // scratch of one call
  size_t state_bytes = 0;  // the KV-cache state (0 when capacity is 0)
};

// Validate a config and size the arena for calls of up to max_tokens tokens;
// capacity > 0 also plans the KV-cache state (causal configs only).
// Errors: kNullArgument, kBadConfig-class statuses of plan_attention() for the
// attention part, and the model statuses of attn/status.h for the rest.
Status plan_transformer(const TransformerConfig& config, DType dtype, int32_t max_tokens, int32_t capacity,
                        TransformerPlan* out, int32_t tile_rows = ATTN_TILE_ROWS);

// The whole forward of n tokens at positions 0..n-1 (causal when the config
// says so). tokens: [n] in [0, vocab). out: see OutputRows.
Status transformer_forward_f32(const TransformerPlan& plan, const TransformerWeightsF32& weights,
                               const int32_t* tokens, int32_t n, OutputRows rows, float* out, Arena& arena);

// Decoding state: one KV cache per layer, carved from the arena.
struct TransformerStateF32 {
  KvCacheF32* caches = nullptr;  // [num_layers], in the arena
  int32_t num_layers = 0;
  int32_t length = 0;  // tokens consumed; the next token sits at this position
};

Status transformer_state_init_f32(const TransformerPlan& plan, int32_t window, Arena& arena,
                                  TransformerStateF32* state);
Status transformer_state_reset(TransformerStateF32* state);

// Append n tokens (a prompt: prefill; one token: a step) and write their
// outputs: the same numbers as transformer_forward_f32 over the whole sequence.
Status transformer_decode_f32(const TransformerPlan& plan, const TransformerWeightsF32& weights,
                              TransformerStateF32* state, const int32_t* tokens, int32_t n, OutputRows rows,
                              float* out, Arena& arena);

}  // namespace attn
