// attn/attention.h: multi-head attention, configured, planned, then run.
//
//   Q = X Wq^T + bq        X  [L, E]      Wq [D, E]       D   = heads * head_dim
//   K = Xk Wk^T + bk       Xk [S, kdim]   Wk [Dkv, kdim]  Dkv = kv_heads * head_dim
//   V = Xv Wv^T + bv       Xv [S, vdim]   Wv [Dkv, vdim]
//   (optional rotary embedding of Q rows at positions p0 + i, K rows at j)
//   P_h = softmax(Q_h K_g^T / sqrt(head_dim) + mask)  [L, S], g = h / (heads / kv_heads)
//   Y = concat_h(P_h V_h) Wo^T + bo        Wo [E, D]         Y [L, E]
//
// This is torch.nn.MultiheadAttention (batch_first, one batch item) when
// D == E. Weights are stored as PyTorch stores them, [out, in].
//
// Use:
//   attn::Plan plan;
//   ATTN_TRY(attn::plan_attention(config, attn::DType::kF32, L, S, &plan));
//   // plan.arena_bytes == attn::attention_arena_bytes(config, DType::kF32, L, S)
//   ATTN_TRY(arena.init(buffer, sizeof buffer));
//   ATTN_TRY(attn::forward_f32(plan, weights, mask, io, arena));
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/config.h"
#include "attn/parallel.h"
#include "attn/status.h"
#include "attn/tensor.h"

namespace attn {

struct AttentionConfig {
  int32_t embed_dim = 0;  // E: width of the query input and of the output
  int32_t num_heads = 0;  // H
  int32_t head_dim = 0;   // 0: E / H (then H must divide E)
  int32_t kdim = 0;       // width of the key input; 0: E
  int32_t vdim = 0;       // width of the value input; 0: E
  bool bias = true;       // bq, bk, bv, bo present
  // Grouped-query attention: K and V have num_kv_heads heads, each shared by
  // num_heads / num_kv_heads query heads (1: multi-query). 0: num_heads.
  int32_t num_kv_heads = 0;
  // Rotary position embedding on Q and K with this base (Llama: 10000), HF
  // Llama's half-split pairing (i, i + head_dim/2). 0: no rotary embedding.
  float rope_base = 0.0f;

  constexpr int32_t resolved_head_dim() const {
    return head_dim != 0 ? head_dim : (num_heads > 0 ? embed_dim / num_heads : 0);
  }
  constexpr int32_t resolved_kdim() const { return kdim != 0 ? kdim : embed_dim; }
  constexpr int32_t resolved_vdim() const { return vdim != 0 ? vdim : embed_dim; }
  constexpr int32_t resolved_kv_heads() const { return num_kv_heads != 0 ? num_kv_heads : num_heads; }
  // D: width of Q and of the concatenated heads.
  constexpr int32_t inner_dim() const { return num_heads * resolved_head_dim(); }
  // Dkv: width of K and V (D unless grouped-query).
  constexpr int32_t kv_dim() const { return resolved_kv_heads() * resolved_head_dim(); }
};

// Which scores take part in the softmax. All masks combine: a key takes part
// only if every mask allows it.
struct Mask {
  static constexpr int32_t kAllKeys = -1;

  // Query row i attends key j only if j <= i + causal_offset (top-left
  // aligned, as torch.triu(ones(L, S), 1) masks). causal_offset >= 0.
  bool causal = false;
  int32_t causal_offset = 0;
  // Sliding window (with causal only): query i also ignores keys
  // j <= i + causal_offset - window, keeping the last `window`. 0: no window.
  int32_t window = 0;
  // Key padding: keys at index >= key_length are ignored. kAllKeys: none.
  int32_t key_length = kAllKeys;
  // Optional additive float mask [L, S] with row stride additive_stride
  // (0: S), added to the scaled scores; -INFINITY removes a key.
  const float* additive = nullptr;
  int32_t additive_stride = 0;
};
// A query row whose every key is masked gets all-zero attention weights, so
// its output row is bo (PyTorch returns NaN there).

struct WeightsF32 {
  const float* wq = nullptr;  // [D, E]
  const float* wk = nullptr;  // [Dkv, kdim]
  const float* wv = nullptr;  // [Dkv, vdim]
  const float* wo = nullptr;  // [E, D]
  const float* bq = nullptr;  // [D]  (all four biases null when config.bias is false)
  const float* bk = nullptr;  // [Dkv]
  const float* bv = nullptr;  // [Dkv]
  const float* bo = nullptr;  // [E]
  // Optional: the same weights packed once by pack_weights_f32() (below).
  // null: the forward reads wq .. wo only.
  const float* packed = nullptr;
};

// Dense, row-major inputs and outputs of one forward.
struct IoF32 {
  const float* query = nullptr;   // [L, E]
  const float* key = nullptr;     // [S, kdim]; for self-attention pass query
  const float* value = nullptr;   // [S, vdim]; for self-attention pass query
  float* output = nullptr;        // [L, E]; must not overlap the inputs
  float* attn_weights = nullptr;  // optional [H, L, S]: softmax probabilities per head
  int32_t query_position = 0;     // rotary position of query row 0 (keys sit at 0 .. S-1)
};

// A validated configuration and shape, and the exact arena bytes it needs.
struct Plan {
  AttentionConfig config;  // head_dim, kdim and vdim resolved (never 0)
  DType dtype = DType::kF32;
  int32_t query_len = 0;  // L
  int32_t key_len = 0;    // S
  int32_t tile_rows = 0;  // T = min(requested tile rows, L)
  size_t arena_bytes = 0;
  bool decode = false;  // made by plan_decode() (attn/decode.h) for decode_f32/_s8/_s16()
  // The caller's parallel-for (attn/parallel.h): the four projections are
  // split over it when they are large enough. Not set by the planners (null:
  // inline); set it after planning. The outputs do not depend on it.
  ParallelFor parallel;
};

// Arena bytes of one forward; the same number plan_attention() reports, as a
// constant expression for sizing static buffers:
//   alignas(ATTN_ARENA_ALIGN) static uint8_t arena[attn::attention_arena_bytes(cfg, DType::kF32, 64, 64)];
// Returns 0 for a configuration plan_attention() rejects.
//
// f32 layout, each buffer rounded up to ATTN_ARENA_ALIGN bytes:
//   K [S, Dkv], V [S, Dkv], Q tile [T, D], scores [T, S], O tile [T, D].
constexpr size_t attention_arena_bytes(const AttentionConfig& c, DType dtype, int32_t L, int32_t S,
                                       int32_t tile_rows = ATTN_TILE_ROWS) {
  const int32_t hd = c.resolved_head_dim();
  if (c.embed_dim <= 0 || c.num_heads <= 0 || hd <= 0 || L <= 0 || S <= 0 || tile_rows <= 0) return 0;
  // 64-bit arithmetic: S * D alone can pass 2^32 within the caps on a 32-bit MCU.
  const uint64_t d = static_cast<uint64_t>(c.num_heads) * static_cast<uint64_t>(hd);
  const uint64_t dkv = static_cast<uint64_t>(c.resolved_kv_heads()) * static_cast<uint64_t>(hd);
  const uint64_t s = static_cast<uint64_t>(S);
  const uint64_t t = static_cast<uint64_t>(tile_rows < L ? tile_rows : L);
  const auto aligned = [](uint64_t n) -> uint64_t {
    return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  };
  uint64_t bytes = 0;
  if (dtype == DType::kF32) {
    bytes = 2 * aligned(s * dkv * 4)  // K, V      [S, Dkv] f32
            + aligned(t * d * 4)      // Q tile      [T, D] f32
            + aligned(t * s * 4)      // scores      [T, S] f32
            + aligned(t * d * 4);     // O tile      [T, D] f32
  } else if (dtype == DType::kS8 || dtype == DType::kS16) {
    // attn/attention_fixed.h; probabilities overwrite the scores in place.
    const uint64_t e = dtype == DType::kS8 ? 1 : 2;  // bytes per activation

    bytes = 2 * aligned(s * dkv * e)  // K, V      [S, Dkv]
            + aligned(t * d * e)      // Q tile      [T, D]
            + aligned(t * s * 4)      // scores      [T, S] int32 (probabilities in place)
            + aligned(t * d * e);     // O tile      [T, D]
  }
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Validate config and shape for `dtype` and fill *out. Errors: kNullArgument,
// kBadEmbedDim, kBadNumHeads, kBadHeadDim, kBadKeyDim, kBadValueDim,
// kBadKvHeads, kBadRope, kBadQueryLength, kBadKeyLength, kBadTileRows,
// kBadDtype, kSizeOverflow (the
// arena would not fit in size_t).
Status plan_attention(const AttentionConfig& config, DType dtype, int32_t L, int32_t S, Plan* out,
                      int32_t tile_rows = ATTN_TILE_ROWS);

// One float32 forward. Carves plan.arena_bytes from `arena` (checked before
// anything is written; kArenaTooSmall otherwise) and gives them back on
// return. Errors: kNullArgument (a required pointer; a bias pointer when
// config.bias), kBadDtype / kPlanMismatch (plan not for f32), kBadKeyPadding,
// kBadCausalOffset, kBadWindow, kBadPosition, kArenaTooSmall.
// NaN policy (PyTorch's, the same in every kernel variant): a query row whose
// visible scores (any head) contain a NaN, or +inf, gets NaN probabilities for
// that head and so a NaN output row; NaN in the weights or a key/value row the
// mask leaves visible spreads likewise. Keys the mask hides never contribute,
// NaN or not, and a fully masked row still gets all-zero probabilities (its
// output is bo).
Status forward_f32(const Plan& plan, const WeightsF32& weights, const Mask& mask, const IoF32& io,
                   Arena& arena);

// ---- weights packed once (optional; a host speed-up) ----------------------
// The x86 AVX2 kernels multiply by W^T in panels of 16 output columns, and
// without packed weights they transpose W into such panels on every
// projection (about a fifth of the projection's time at 16 rows). Packing
// does that once, into memory the caller owns:
//   size_t bytes = 0;
//   ATTN_TRY(attn::pack_weights_f32_storage_bytes(plan, &bytes));  // 0: nothing to pack in this build
//   ATTN_TRY(attn::pack_weights_f32(plan, weights, buffer, bytes, &weights));  // sets weights.packed
// forward_f32() and decode_f32() then read the panels where their kernels
// take them; wq .. bo stay required and in use (rows too few for panels read
// W as stored). Builds whose kernels read W as stored (ARM, Cortex-M, ref)
// report 0 bytes, and packing leaves weights.packed null. The buffer's
// layout belongs to this build; pack again after the weights change. Any
// f32 plan of the same config (forward or decode, any L and S) fits.

// Bytes pack_weights_f32() needs for plan.config. Errors: kNullArgument,
// kBadDtype (plan not f32), kPlanMismatch (plan not made by plan_attention()
// or plan_decode()), kSizeOverflow.
Status pack_weights_f32_storage_bytes(const Plan& plan, size_t* bytes);

// *packed = weights with .packed set to `buffer` (ATTN_ARENA_ALIGN-aligned,
// `bytes` long), filled with W^T panels of wq, wk, wv and wo. weights and
// *packed may be the same object. Errors: kNullArgument (out, a weight, a
// bias when config.bias, or the buffer when bytes are needed), kBadDtype,
// kPlanMismatch, kSizeOverflow, kArenaMisaligned (buffer),
// kBufferTooSmall (bytes < pack_weights_f32_storage_bytes()). On error *packed is
// unchanged.
Status pack_weights_f32(const Plan& plan, const WeightsF32& weights, void* buffer, size_t bytes,
                        WeightsF32* packed);

}  // namespace attn
