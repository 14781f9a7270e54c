// attn/transformer_fixed.h: whole models (attn/transformer.h) in integers only.
//
// The s8 and s16 forwards of an encoder or decoder: no float instruction or
// library call at run time (a Cortex-M3 without FPU runs them). The
// converter (quantize_transformer_s8 / _s16, below; offline, in double)
// writes every constant. src/FIXED_POINT.md ("Whole models") has the
// arithmetic; in short, with real = scale * (q - zero_point):
//
//   residual stream  int32 on one grid per model (residual_scale, ~2^-24 of
//                    the calibrated max |x|); branch outputs are added with a
//                    multiplier, saturating.
//   matmul inputs    the activation type (s8: int8 asymmetric, s16: int16
//                    symmetric), per tensor: the attention input, the FFN
//                    input, the W2 input (the activation's output), the head
//                    input. Weights int8 symmetric per output channel.
//   attention        the integer block of attn/attention_fixed.h (forward_s8 /
//                    _s16, and decode_s8 / _s16 over per-layer KV caches).
//   norms            LayerNorm / RMSNorm on the int32 residual: int64 sums and
//                    an exact integer 1/sqrt per row, then 32-bit steps per
//                    element (weight and bias folded per channel).
//   activations      a table over the W1 output's integer domain: s8 256
//                    entries (exact), s16 1025 entries with linear
//                    interpolation; the gate product requantized once.
//   outputs          int32: logits on logit_scale (head), or the last hidden
//                    state on output_scale (no head); real = scale * q.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/status.h"
#include "attn/transformer.h"

namespace attn {

// Fractional bits F of the normalized value inside the integer norms of rows
// of E values: F = 26 - ceil(log2(E) / 2) (E = 64: 23), so that
// |d / sigma| 2^F <= sqrt(E) 2^F < 2^27 and the row multiplier stays below 2^30.
ATTN_ALWAYS_INLINE constexpr int32_t norm_frac_bits(int32_t E) {
  int32_t half_log = 0;  // ceil(log2(E) / 2)
  while ((int64_t{1} << (2 * half_log)) < E) ++half_log;
  return 26 - half_log;
}
// Rows of the s16 activation table: input -32768 + 64 k for k in [0, 1024].
constexpr int32_t kActTableS16Entries = 1025;
constexpr int32_t kActTableS16Step = 64;

// One integer LayerNorm / RMSNorm of an int32 residual row x [E] (scale s_in)
// into the output type (int8 / int16 at the next matmul's input, or int32 on
// a residual / output grid s_out), 32-bit per element (src/FIXED_POINT.md):
//   LayerNorm: d_i = sat32(x_i - mean);  RMSNorm: d_i = x_i
//   n_i = d_i / sqrt(mean(d^2) + eps) in Q.F (F = norm_frac_bits(E)), from one
//         exact integer 1/sqrt per row: n_i = round(u_i R / 2^31), u_i = d_i 2^(29 - bits(max |d|))
//   y_i = clamp(zp + round((round(n_i weight_i / 2^31) + bias_i) / 2^shift))
// (shift <= 0: a saturating left shift). Real: y = n / 2^F * weight_i 2^(F - 31 - shift)
// + bias_i / 2^shift on the output grid.
struct NormFixed {
  const int32_t* weight = nullptr;  // [E] round(w_i / s_out * 2^(31 + shift - F))
  const int32_t* bias = nullptr;    // [E] round(b_i / s_out * 2^shift), |bias| < 2^29; null: none
  int64_t eps = 0;                  // round(eps / s_in^2), in [0, 2^62)
  int32_t shift = 0;                // [-31, 30]
  int32_t output_zero_point = 0;    // int8 outputs: [-128, 127]; 0 otherwise
};

// A rescale by a real ratio m * 2^(shift - 31) (m Q0.31 in [0, 2^31), shift
// in [-31, 30]), 32-bit: mh(a) = round(a m / 2^32) (SMMULR), then a rounding
// right shift (half up) or, for a negative one, a saturating left shift:
//   to the residual:   r = sat32(r + round(mh((q - zero_point) 2^L) / 2^(L - 1 - shift)))
//                      (L = 22 for int8, 14 for int16: |q - zp| 2^L <= 2^30)
//   to an activation:  q = clamp(zero_point + round(mh(r) / 2^(-1 - shift)))
struct RescaleFixed {
  int32_t multiplier = 0;
  int32_t shift = 0;
  int32_t zero_point = 0;  // int8 only; 0 for int16
};

// The FFN of one layer, int8. W1, W3: FFN input -> h1, h3 (int8, their own
// grids); W2: the activation output g -> straight into the int32 residual:
// r = sat32(r + round(acc[c] * multiplier[c] * 2^(shift[c] - 31))), the
// multiplier that of s_g * s_w[c] / residual_scale, shift in [-31, 30] (no
// int8 grid for the branch output: it would clip).
struct FfnS8 {
  ProjectionS8 w1;  // [F, E] (biases carry the input zero point, as in WeightsS8)
  ProjectionS8 w2;  // [E, F], to the residual grid
  ProjectionS8 w3;  // [F, E], gated only
  int32_t h1_zero_point = 0;
  int32_t h3_zero_point = 0;  // gated only
  int32_t g_zero_point = 0;   // W2 input
  // Plain: g = act_table[h1 + 128], act(h1) on g's grid (exact for int8 inputs).
  const int8_t* act_table = nullptr;  // [256], plain only
  // Gated: g = clamp(g_zp + round(gate_table[h1 + 128] * (h3 - h3_zp) * gate_multiplier * 2^(gate_shift -
  // 31))), gate_table = round(act(h1) / s_t) (int16, symmetric).
  const int16_t* gate_table = nullptr;  // [256], gated only
  int32_t gate_multiplier = 0;          // Q0.31 of s_t * s_h3 / s_g
  int32_t gate_shift = 0;               // [-31, 30]
};

// The FFN of one layer, int16 (symmetric activations, ProjectionS16).
// a = 64 table[k] + (table[k + 1] - table[k]) * f for h1 = -32768 + 64 k + f
// (act(h1) in units of s_t / 64), then
//   plain: g = clamp(round(a * act_multiplier * 2^(act_shift - 31)))  (int64 rescale)
//   gated: g = clamp(requantize_s64(a * h3, act_multiplier, act_shift))  (the 16x8 rounding)
// W2 goes straight into the residual as in FfnS8, with the 16x8 rounding:
// r = sat32(r + round(acc[c] * q15(multiplier[c]) * 2^(shift[c] - 15))), shift in [-31, 14].
struct FfnS16 {
  ProjectionS16 w1, w2, w3;            // w3: gated only
  const int32_t* act_table = nullptr;  // [kActTableS16Entries], |entry| <= 2^20
  int32_t act_multiplier = 0;          // plain: s_t / (64 s_g); gated: s_t s_h3 / (64 s_g)
  int32_t act_shift = 0;               // plain [-31, 30]; gated [-31, 14]
};

template <typename Attention, typename Ffn>
struct LayerWeightsFixed {
  Attention attention;     // the block (query = key = value: self-attention)
  NormFixed norm1, norm2;  // pre-norm: into the attention / FFN input; post-norm: int32 residual
  RescaleFixed attn_in;    // post-norm: residual -> attention input
  RescaleFixed attn_out;   // attention output -> residual (zero_point: the output's)
  RescaleFixed ffn_in;     // post-norm: residual -> FFN input
  Ffn ffn;
  // Not read by the forward (for the caller, and the model file's block I/O
  // scales): the attention's input and output grids, real = scale * (q - zp).
  float attention_input_scale = 0.0f;
  float attention_output_scale = 0.0f;
};
using LayerWeightsS8 = LayerWeightsFixed<WeightsS8, FfnS8>;
using LayerWeightsS16 = LayerWeightsFixed<WeightsS16, FfnS16>;

// Embedding rows (token, position) are int8 symmetric per row; row r goes to
// the residual grid with (multiplier[r], shift[r]) (s_row / residual_scale).
struct EmbeddingFixed {
  const int8_t* table = nullptr;        // [rows, E]
  const int32_t* multiplier = nullptr;  // [rows]
  const int32_t* shift = nullptr;       // [rows] [-31, 30]
};

template <typename Layer, typename Head>
struct TransformerWeightsFixed {
  EmbeddingFixed token_embedding;           // [vocab, E]
  EmbeddingFixed position_embedding;        // [max_positions, E] (learned_positions)
  const int32_t* type_embedding = nullptr;  // [E] row 0 on the residual grid (type_vocab_size > 0)
  NormFixed embedding_norm;                 // (embedding_norm) int32 -> residual
  NormFixed final_norm;                     // (final_norm) -> head input, or -> int32 output grid
  RescaleFixed head_in;                     // no final norm, a head: residual -> head input
  // logits[v] = sat32(round(acc[v] * multiplier[v] * 2^(shift[v] - 31))) with the
  // projection's accumulator (s8: int32, bias = -zp_in * sum_k w[v][k]; s16: int64,
  // no bias, and the multiplier reduced to Q0.15 as in requantize_s64).
  // Tied: weight is token_embedding.table.
  Head head;
  const Layer* layers = nullptr;  // [num_layers]
  // Not read by the forward (for the caller): real = scale * q.
  float residual_scale = 0.0f;  // the int32 residual grid
  float output_scale = 0.0f;    // the int32 outputs: logits (a head) or the last hidden state
};
using TransformerWeightsS8 = TransformerWeightsFixed<LayerWeightsS8, ProjectionS8>;
using TransformerWeightsS16 = TransformerWeightsFixed<LayerWeightsS16, ProjectionS16>;

// plan_transformer (attn/transformer.h) for s8 / s16 only: kBadDtype for
// any other dtype, else exactly plan_transformer's plan and statuses.
Status plan_transformer_fixed(const TransformerConfig& config, DType dtype, int32_t max_tokens,
                              int32_t capacity, TransformerPlan* out, int32_t tile_rows = ATTN_TILE_ROWS);

// Arena bytes of one s8 / s16 call of up to max_tokens tokens (capacity > 0:
// also a decode call over caches of that many positions), the number
// plan_transformer_fixed() reports, as a constant expression for sizing
// static buffers. 0 for another dtype or a shape that is not positive.
// Layout, each buffer rounded up to ATTN_ARENA_ALIGN bytes:
//   x [n, E] int32               the residual stream
//   h [n, E] of the dtype        the normed matmul input
//   then, one after the other in the same bytes:
//     the attention block's arena  (attention_arena_bytes(n, n); with capacity
//                                  also decode_arena_bytes(n, capacity))
//     the FFN tile  u [T, F]       (gated: and g [T, F]) of the dtype
// where n = max_tokens and T = min(tile_rows, max_tokens).
constexpr size_t transformer_fixed_arena_bytes(const TransformerConfig& c, DType dtype, int32_t max_tokens,
                                               int32_t capacity, int32_t tile_rows = ATTN_TILE_ROWS) {
  if ((dtype != DType::kS8 && dtype != DType::kS16) || c.embed_dim <= 0 || c.ffn_dim <= 0 ||
      max_tokens <= 0 || capacity < 0 || tile_rows <= 0) {
    return 0;
  }
  const auto aligned = [](uint64_t n) -> uint64_t {
    return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  };
  const AttentionConfig a = c.attention();
  const int32_t t = tile_rows < max_tokens ? tile_rows : max_tokens;
  const uint64_t n = static_cast<uint64_t>(max_tokens), e = static_cast<uint64_t>(c.embed_dim);
  const uint64_t elem = dtype_bytes(dtype);
  uint64_t phase = attention_arena_bytes(a, dtype, max_tokens, max_tokens, t);
  if (phase == 0) return 0;
  if (capacity > 0) {
    const uint64_t d = decode_arena_bytes(a, dtype, max_tokens, capacity, t);
    if (d == 0) return 0;
    phase = d > phase ? d : phase;
  }
  const uint64_t ffn =
      (c.gated_ffn ? 2 : 1) * aligned(static_cast<uint64_t>(t) * static_cast<uint64_t>(c.ffn_dim) * elem);
  phase = ffn > phase ? ffn : phase;
  const uint64_t bytes = aligned(n * e * 4) + aligned(n * e * elem) + phase;
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Bytes of the s8 / s16 decoding state (transformer_state_init_s8 / _s16):
// the KvCacheS8 / KvCacheS16 array, then each layer's K and V [capacity,
// Dkv]. 0 for capacity 0, another dtype, or a config that is not positive.
constexpr size_t transformer_fixed_state_bytes(const TransformerConfig& c, DType dtype, int32_t capacity) {
  if ((dtype != DType::kS8 && dtype != DType::kS16) || capacity <= 0 || c.num_layers <= 0) return 0;
  const uint64_t per_layer = kv_cache_arena_bytes(c.attention(), dtype, capacity);
  if (per_layer == 0) return 0;
  const uint64_t layers = static_cast<uint64_t>(c.num_layers);
  const uint64_t cache = dtype == DType::kS8 ? sizeof(KvCacheS8) : sizeof(KvCacheS16);
  const uint64_t array = (layers * cache + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  const uint64_t bytes = array + layers * per_layer;
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// The whole integer forward of n tokens at positions 0..n-1 (causal when the
// config says so). out: int32 [n or 1, output_dim] on weights.output_scale.
// Carves plan.arena_bytes from `arena` and gives them back. Errors:
// kNullArgument, kBadDtype / kPlanMismatch, kBadQueryLength (n < 1),
// kSequenceTooLong (n > max_tokens or max_positions), kTokenOutOfRange
// (checked before anything is written), kBadQuantParams, kBiasOutOfRange,
// kRopePositionOutOfRange (rope tables shorter than max_positions),
// kArenaTooSmall.
Status transformer_forward_s8(const TransformerPlan& plan, const TransformerWeightsS8& weights,
                              const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out, Arena& arena);
Status transformer_forward_s16(const TransformerPlan& plan, const TransformerWeightsS16& weights,
                               const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out, Arena& arena);

// Decoding state: one integer KV cache per layer, carved from the arena
// (plan.state_bytes).
template <typename Cache>
struct TransformerStateFixed {
  Cache* caches = nullptr;  // [num_layers], in the arena
  int32_t num_layers = 0;
  int32_t length = 0;  // tokens consumed; the next token sits at this position
};
using TransformerStateS8 = TransformerStateFixed<KvCacheS8>;
using TransformerStateS16 = TransformerStateFixed<KvCacheS16>;

// Errors: kNullArgument, kBadDtype, kPlanMismatch (capacity 0), kBadWindow, kArenaTooSmall.
Status transformer_state_init_s8(const TransformerPlan& plan, int32_t window, Arena& arena,
                                 TransformerStateS8* state);
Status transformer_state_init_s16(const TransformerPlan& plan, int32_t window, Arena& arena,
                                  TransformerStateS16* state);
Status transformer_state_reset(TransformerStateS8* state);
Status transformer_state_reset(TransformerStateS16* state);

// Append n tokens (prefill, or one step) at positions state->length .. and
// write their outputs: bit-identical to the forward over the whole sequence.
// Errors: those of the forward, and kCacheFull (nothing changed),
// kSequenceTooLong (past max_positions).
Status transformer_decode_s8(const TransformerPlan& plan, const TransformerWeightsS8& weights,
                             TransformerStateS8* state, const int32_t* tokens, int32_t n, OutputRows rows,
                             int32_t* out, Arena& arena);
Status transformer_decode_s16(const TransformerPlan& plan, const TransformerWeightsS16& weights,
                              TransformerStateS16* state, const int32_t* tokens, int32_t n, OutputRows rows,
                              int32_t* out, Arena& arena);

// ---- the converter (OFFLINE, host: double arithmetic; src/quant) -----------

// Calibration token sequences, concatenated: sequence i has lengths[i]
// tokens (each in [1, max_positions]).
struct TransformerCalibration {
  const int32_t* tokens = nullptr;
  const int32_t* lengths = nullptr;  // [count]
  int32_t count = 0;
};

// Which projections the converter gives int4 weights (ProjectionS8 /
// S16::weight_s4): none, the FFN's (W1, W2, W3), or every projection (the
// attention's Q, K, V, O too, and an untied LM head). Embedding tables, and
// so a tied head, stay int8.
enum class Int4Weights { kNone, kFfn, kAll };

struct TransformerQuantOptions {
  // Residual grid: residual_scale = max |residual| / 2^residual_bits over the
  // calibration (headroom 2^(31 - residual_bits)). Also the bits of the int32
  // hidden output and logit grids.
  int32_t residual_bits = 24;
  // Int4 weights (two per byte: half the flash of int8), each channel's scale
  // chosen by squared error over clip ratios. The projections' input widths
  // must be even (kBadShape). Storage: as int8 (the packed weights take the
  // first half of their room).
  Int4Weights int4 = Int4Weights::kNone;
  // Int4 FFN weights by error feedback (GPTQ): each weight column rounded in
  // turn, its error moved onto the columns not yet rounded through the
  // calibration inputs' second moments; false: round to nearest. Needs E and
  // ffn_dim <= 2048 (above: round to nearest) and more scratch
  // (quantize_transformer_scratch_bytes with these options).
  bool int4_error_feedback = true;
  // Report: run the integer forward on the calibration set and compare.
  bool report = true;
};

// What the converter measured: SQNR (dB) of the integer forward against the
// float forward on the calibration sequences, per stage.
struct TransformerQuantReport {
  int32_t num_layers = 0;
  double embedding_sqnr_db = 0.0;                  // residual after the embeddings (and their norm)
  double attention_sqnr_db[ATTN_MAX_LAYERS] = {};  // residual after layer i's attention (and its post-norm)
  double layer_sqnr_db[ATTN_MAX_LAYERS] = {};      // residual after layer i (its FFN, and its post-norm)
  double output_sqnr_db = 0.0;                     // the int32 output (logits or hidden state)
  float residual_max = 0.0f;                       // calibrated max |residual|
};

// Bytes the converter carves from `storage` (the integer model) and from
// `scratch` (calibration forwards of sequences up to max_len tokens; given
// back). Errors: the config's (as plan_transformer_fixed).
Status quantize_transformer_storage_bytes(const TransformerConfig& config, DType dtype,
                                          size_t* storage_bytes);
Status quantize_transformer_scratch_bytes(const TransformerConfig& config, DType dtype, int32_t max_len,
                                          size_t* scratch_bytes,
                                          const TransformerQuantOptions& options = TransformerQuantOptions());

// Calibrate the float model on the sequences (min/max of every quantized
// tensor; the float forward of attn/transformer.h's semantics, scalar, in
// this converter) and quantize it: every table of *out lives in `storage`.
// Errors: kNullArgument, the config's, kTokenOutOfRange, kSequenceTooLong,
// kBadQuantParams (non-finite weights or activations, an unrepresentable
// scale), kBiasOutOfRange, kArenaTooSmall.
Status quantize_transformer_s8(const TransformerConfig& config, const TransformerWeightsF32& weights,
                               const TransformerCalibration& calibration, Arena& storage, Arena& scratch,
                               TransformerWeightsS8* out, TransformerQuantReport* report = nullptr,
                               const TransformerQuantOptions& options = TransformerQuantOptions());
Status quantize_transformer_s16(const TransformerConfig& config, const TransformerWeightsF32& weights,
                                const TransformerCalibration& calibration, Arena& storage, Arena& scratch,
                                TransformerWeightsS16* out, TransformerQuantReport* report = nullptr,
                                const TransformerQuantOptions& options = TransformerQuantOptions());

}  // namespace attn
