// attn/kernel_set.h: which kernel variant each op of a dtype runs in this
// build on this CPU, as the kernel table (src/kernels/kernel_table.h) picks
// it: at compile time, or on x86-64 at run time from CPUID (the best of the
// variants the library carries that the CPU runs): "ref" (portable scalar),
// "avx2", "avx512vnni", "neon",
// "neon-dotprod", "dsp" (Cortex-M SMLAD) or "mve" (Cortex-M55 Helium).
#pragma once

#include "attn/status.h"
#include "attn/tensor.h"

namespace attn {

struct KernelSet {
  const char* linear = nullptr;        // the projections
  const char* scores = nullptr;        // Q K^T
  const char* softmax = nullptr;       // the softmax over scores (fixed point: the fused softmax)
  const char* weighted_sum = nullptr;  // P V
  const char* rope = nullptr;          // rotary embedding
};

// The variants `dtype`'s forwards and decodes run. Errors: kNullArgument,
// kBadDtype (not f32, s8 or s16, or a dtype this build leaves out).
Status kernel_set(DType dtype, KernelSet* set);

}  // namespace attn
