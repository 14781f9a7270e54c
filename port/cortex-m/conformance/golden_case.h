// golden_case.h: one embedded golden case, as tools/fixtures/golden_to_c.py writes it
// (the format of tests/data/golden/README.md, with pointers instead of file
// offsets). Arrays are row-major; D = H * head_dim.
#pragma once

#include <cstdint>

#include "attn/attention.h"

// Where the case arrays go: the linker scripts put .golden in bulk memory
// (flash on MPS2; DDR on mps3-an547, whose 512 KiB ITCM cannot hold them).
#ifndef ATTN_GOLDEN_SECTION
#define ATTN_GOLDEN_SECTION __attribute__((section(".golden")))
#endif

// Config and shape only, so that buffers can be sized at compile time.
struct GoldenShape {
  int32_t E, H, head_dim, kdim, vdim;
  bool bias;
  int32_t L, S;

  // AttentionConfig's fields in their order (attn/attention.h).
  constexpr attn::AttentionConfig config() const { return {E, H, head_dim, kdim, vdim, bias}; }
};

struct GoldenCaseF32 {
  const char* name;
  GoldenShape shape;
  bool causal;
  int32_t causal_offset;
  int32_t key_length;     // -1: no key padding
  bool self_attention;    // key and value point at query
  const float* wq;        // [D, E]
  const float* wk;        // [D, kdim]
  const float* wv;        // [D, vdim]
  const float* wo;        // [E, D]
  const float* bq;        // [D]; null without bias (bk, bv likewise)
  const float* bk;        // [D]
  const float* bv;        // [D]
  const float* bo;        // [E]
  const float* query;     // [L, E]
  const float* key;       // [S, kdim]
  const float* value;     // [S, vdim]
  const float* additive;  // [L, S] or null
  const double* y;        // expected output [L, E], float64 PyTorch
  const double* attn;     // expected attention weights [H, L, S]
};
