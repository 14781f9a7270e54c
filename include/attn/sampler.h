// attn/sampler.h: picking the next token from a model's logits.
//
// Greedy by default (argmax, the lowest id on ties: integer-only for integer
// logits). With a temperature, a draw from softmax(logits / T) restricted to
// the top_k largest logits, using random numbers from a generator the caller
// seeds: the same seed and logits give the same tokens. Nothing allocates.
// The draw uses float (expf) once per candidate: cheap next to a forward, and
// on an FPU-less core it is soft-float; greedy decoding of integer logits
// (sample_s32) uses no float at all.
#pragma once

#include <cstdint>

#include "attn/status.h"

namespace attn {

struct Sampler {
  float temperature = 0.0f;  // 0: greedy; else finite and > 0
  int32_t top_k = 0;         // 0: every token; else the k largest logits (ties at the k-th all kept)
};

// xorshift64* (Vigna): 64 bits of state, never 0.
struct Rng {
  uint64_t state = 0x9E3779B97F4A7C15ull;
};

// Seed a generator; any seed (0 included) gives a valid state.
Status rng_seed(uint64_t seed, Rng* rng);
// The next 32 random bits.
Status rng_next(Rng* rng, uint32_t* out);

// The next token from logits [n]. NaN and -inf logits are never drawn. A draw
// is never NaN: every logit equal to the largest weighs exactly 1, so a +inf
// logit is always drawn (several: one of them, uniformly), and a temperature
// so small that 1/T is +inf (below about 2.9e-39, subnormal) draws only among
// the largest logits (the T -> 0 limit: greedy, ties drawn uniformly).
// Errors: kNullArgument (logits, token; rng when temperature > 0), kBadShape
// (n <= 0), kBadSampler (temperature negative or not finite, top_k < 0 or
// above n, or no logit is drawable: all NaN or -inf).
Status sample(const float* logits, int32_t n, const Sampler& sampler, Rng* rng, int32_t* token);

// The same for integer logits, real = scale * logits[i] (scale finite and > 0;
// kBadQuantParams otherwise). Greedy reads only the integers; a draw weighs
// scale * (logits[i] - max) / T, so scale * logits[i] may exceed float's range.
Status sample_s32(const int32_t* logits, int32_t n, float scale, const Sampler& sampler, Rng* rng,
                  int32_t* token);

}  // namespace attn
