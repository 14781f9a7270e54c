// kernel_names.h: the benchmark programs' line of which kernel variant each
// op runs (attn::kernel_set), so that every printed figure names its kernels.
#pragma once

#include <string>

#include "attn/kernel_set.h"

namespace attn_bench {

// "linear=avx2 scores=avx2 softmax=avx2 weighted_sum=avx2" for one dtype.
inline std::string kernel_names(attn::DType dtype) {
  attn::KernelSet k;
  if (attn::kernel_set(dtype, &k) != attn::Status::kOk) return "none";
  return std::string("linear=") + k.linear + " scores=" + k.scores + " softmax=" + k.softmax +
         " weighted_sum=" + k.weighted_sum;
}

// "f32[...] s8[...] s16[...]": every dtype's kernels.
inline std::string all_kernel_names() {
  return "f32[" + kernel_names(attn::DType::kF32) + "] s8[" + kernel_names(attn::DType::kS8) + "] s16[" +
         kernel_names(attn::DType::kS16) + "]";
}

}  // namespace attn_bench
