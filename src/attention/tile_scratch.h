// attention/tile_scratch.h: the query-tile scratch that every forward and
// decode carves from its arena, f32 and fixed point alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"

namespace attn {
namespace detail {

// Act: the activation type (float, int8_t, int16_t); Score: float, or int32_t
// for the integer forwards (whose probabilities are int16 over the scores).
template <typename Act, typename Score>
struct TileScratch {
  Act* q;              // [T, D]  query tile
  Score* s;            // [R, S]  scores, then probabilities in place (R = score_rows)
  Act* o;              // [T, D]  context tile, heads concatenated
  int32_t score_rows;  // R: T, or more for a decode (attn/decode.h, decode_arena_bytes)
};

// Carves the three buffers for tiles of T rows, D = heads * head_dim, S keys,
// and R = max(T, score_rows) rows of scores.
// Errors: those of Arena::alloc_array (the caller releases on failure).
template <typename Act, typename Score>
Status carve_tile_scratch(Arena& arena, size_t T, size_t D, size_t S, TileScratch<Act, Score>* scratch,
                          size_t score_rows = 0) {
  const size_t R = score_rows > T ? score_rows : T;
  scratch->score_rows = static_cast<int32_t>(R);
  ATTN_TRY(arena.alloc_array(T * D, &scratch->q));
  ATTN_TRY(arena.alloc_array(R * S, &scratch->s));
  return arena.alloc_array(T * D, &scratch->o);
}

}  // namespace detail
}  // namespace attn
