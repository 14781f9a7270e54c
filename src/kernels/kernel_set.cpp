// kernel_set.cpp: attn::kernel_set(), row 0 of each op's kernel table.
#include "attn/kernel_set.h"

#include "internal/kernel_table.h"

namespace attn {

Status kernel_set(DType dtype, KernelSet* set) {
  if (set == nullptr) return Status::kNullArgument;
  using namespace detail;
  KernelSet k;
  switch (dtype) {
#if ATTN_WITH_F32
    case DType::kF32:
      k.linear = kLinearF32[0].isa;
      k.scores = kScoresF32[0].isa;
      k.softmax = kSoftmaxRowF32[0].isa;
      k.weighted_sum = kWeightedSumF32[0].isa;
      k.rope = "ref";
      break;
#endif
#if ATTN_WITH_S8
    case DType::kS8:
      k.linear = kLinearS8[0].isa;
      k.scores = kScoresS8[0].isa;
      k.softmax = kValuesTransposedS8 ? kSoftmaxExps[0].isa : kSoftmaxRows[0].isa;
      k.weighted_sum = kValuesTransposedS8 ? kWeightedSumVtS8[0].isa : kWeightedSumS8[0].isa;
      k.rope = "ref";
      break;
#endif
#if ATTN_WITH_S16
    case DType::kS16:
      k.linear = kLinearS16[0].isa;
      k.scores = kScoresS16[0].isa;
      k.softmax = kSoftmaxRows[0].isa;
      k.weighted_sum = kWeightedSumS16[0].isa;
      k.rope = "ref";
      break;
#endif
    default:
      return Status::kBadDtype;
  }
  *set = k;
  return Status::kOk;
}

}  // namespace attn
