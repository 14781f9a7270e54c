// kernel_set.cpp: attn::kernel_set(), row 0 of each op's kernel table.
#include "attn/kernel_set.h"

#include "internal/kernel_table.h"

namespace attn {
namespace {

// Row 0's ISA of each op's table; rotary embedding is ref everywhere.
template <class Linear, class Scores, class Softmax, class WeightedSum>
KernelSet row0(const Linear& linear, const Scores& scores, const Softmax& softmax, const WeightedSum& wsum) {
  KernelSet k;
  k.linear = linear[0].isa;
  k.scores = scores[0].isa;
  k.softmax = softmax[0].isa;
  k.weighted_sum = wsum[0].isa;
  k.rope = "ref";
  return k;
}

}  // namespace

Status kernel_set(DType dtype, KernelSet* set) {
  if (set == nullptr) return Status::kNullArgument;
  using namespace detail;
  switch (dtype) {
#if ATTN_WITH_F32
    case DType::kF32:
      *set = row0(kLinearF32, kScoresF32, kSoftmaxRowF32, kWeightedSumF32);
      return Status::kOk;
#endif
#if ATTN_WITH_S8
    case DType::kS8:  // the DSP targets' forward runs the V^T pair (kValuesTransposedS8)
      *set = kValuesTransposedS8 ? row0(kLinearS8, kScoresS8, kSoftmaxExps, kWeightedSumVtS8)
                                 : row0(kLinearS8, kScoresS8, kSoftmaxRows, kWeightedSumS8);
      return Status::kOk;
#endif
#if ATTN_WITH_S16
    case DType::kS16:
      *set = row0(kLinearS16, kScoresS16, kSoftmaxRows, kWeightedSumS16);
      return Status::kOk;
#endif
    default:
      return Status::kBadDtype;
  }
}

}  // namespace attn
