// internal/attend_fixed.h: the two stages of the integer forwards, shared by
// forward_s8 / forward_s16 (attn/attention_fixed.h) and decode_s8 /
// decode_s16 (attn/decode.h), so that a decode step runs exactly the
// forward's arithmetic: project K and V rows, then attend query rows to K
// and V that are already projected. No checks in the stages: callers
// validate first (check_weights_* and their own shape checks).
#pragma once

#include <cstdint>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/kernels_fixed.h"

namespace attn {
namespace detail {

// Scratch carved by the caller from its arena (S: rows of K and V or more).
struct AttendScratchS8 {
  int8_t* q;   // [T, D]  query tile
  int32_t* s;  // [T, S]  int32 scores, then Q0.15 probabilities in place (row stride 2S int16)
  int8_t* o;   // [T, D]  context tile, heads concatenated
};
struct AttendScratchS16 {
  int16_t* q;  // [T, D]
  int32_t* s;  // [T, S]
  int16_t* o;  // [T, D]
};

// The weights' checks of forward_s8 / forward_s16 for a resolved config:
// kNullArgument, kBadQuantParams, kBadHeadDim (s8: head_dim >= 2^14).
Status check_weights_s8(const AttentionConfig& c, const WeightsS8& w);
Status check_weights_s16(const AttentionConfig& c, const WeightsS16& w);

// K [rows, Dkv] = key [rows, kdim] Wk^T + bk and V [rows, Dkv] = value
// [rows, vdim] Wv^T + bv, the K rows at positions k_pos .. k_pos + rows - 1.
// s8 with kVt (values transposed, detail::kValuesTransposedS8): V is V^T
// [Dkv, rows]. A template, not a flag, so that an image links only the
// layouts it uses (flash).
template <bool kVt>
void project_kv_s8(const AttentionConfig& c, const WeightsS8& w, const int8_t* key, const int8_t* value,
                   int32_t rows, int32_t k_pos, MatS8 K, MatS8 V);
void project_kv_s16(const AttentionConfig& c, const WeightsS16& w, const int16_t* key, const int16_t* value,
                    int32_t rows, int32_t k_pos, MatS16 K, MatS16 V);

// output [L, E] = attention of query [L, E] (row i at position q_pos + i)
// over K, V [S, Dkv] with `mask`; tile_rows rows at a time. s8 with
// kVt: V is V^T [Dkv, S], and the scores scratch holds int32 exps until P.V
// normalizes them (weighted_sum_vt_s8).
template <bool kVt>
void attend_s8(const AttentionConfig& c, int32_t tile_rows, const WeightsS8& w, const Mask& mask,
               const int8_t* query, int32_t L, int32_t q_pos, ConstMatS8 K, ConstMatS8 V, int8_t* output,
               const AttendScratchS8& scratch);
void attend_s16(const AttentionConfig& c, int32_t tile_rows, const WeightsS16& w, const Mask& mask,
                const int16_t* query, int32_t L, int32_t q_pos, ConstMatS16 K, ConstMatS16 V, int16_t* output,
                const AttendScratchS16& scratch);

}  // namespace detail
}  // namespace attn
