// internal/tile_scratch.h: the query-tile scratch that every forward and
// decode carves from its arena, f32 and fixed point alike.
#pragma once

#include <cstddef>

#include "attn/arena.h"

namespace attn {
namespace detail {

// Act: the activation type (float, int8_t, int16_t); Score: float, or int32_t
// for the integer forwards (whose probabilities are int16 over the scores).
template <typename Act, typename Score>
struct TileScratch {
  Act* q;    // [T, D]  query tile
  Score* s;  // [T, S]  scores, then probabilities in place
  Act* o;    // [T, D]  context tile, heads concatenated
};

// Carves the three buffers for tiles of T rows, D = heads * head_dim, S keys.
// Errors: those of Arena::alloc_array (the caller releases on failure).
template <typename Act, typename Score>
Status carve_tile_scratch(Arena& arena, size_t T, size_t D, size_t S, TileScratch<Act, Score>* scratch) {
  ATTN_TRY(arena.alloc_array(T * D, &scratch->q));
  ATTN_TRY(arena.alloc_array(T * S, &scratch->s));
  return arena.alloc_array(T * D, &scratch->o);
}

}  // namespace detail
}  // namespace attn
