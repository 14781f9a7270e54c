// kernel_set.cpp: attn::kernel_set(), the row each op's kernel table runs
// (best_row: row 0, or on x86-64 the first row this CPU runs).
#include "attn/kernel_set.h"

#include "kernels/kernel_table.h"

namespace attn {
namespace {

template <typename Fn, size_t N>
const char* isa_run(const detail::Kernel<Fn> (&rows)[N]) {
  return rows[detail::best_row(rows)].isa;
}

// The ISA of the row each op's table runs; rotary embedding is ref everywhere.
template <class Linear, class Scores, class Softmax, class WeightedSum>
KernelSet runs(const Linear& linear, const Scores& scores, const Softmax& softmax, const WeightedSum& wsum) {
  KernelSet k;
  k.linear = isa_run(linear);
  k.scores = isa_run(scores);
  k.softmax = isa_run(softmax);
  k.weighted_sum = isa_run(wsum);
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
      *set = runs(kLinearF32, kScoresF32, kSoftmaxRowF32, kWeightedSumF32);
      return Status::kOk;
#endif
#if ATTN_WITH_S8
    case DType::kS8:  // the DSP targets' forward runs the V^T pair (kValuesTransposedS8)
      *set = kValuesTransposedS8 ? runs(kLinearS8, kScoresS8, kSoftmaxExps, kWeightedSumVtS8)
                                 : runs(kLinearS8, kScoresS8, kSoftmaxRows, kWeightedSumS8);
      return Status::kOk;
#endif
#if ATTN_WITH_S16
    case DType::kS16:
      *set = runs(kLinearS16, kScoresS16, kSoftmaxRows, kWeightedSumS16);
      return Status::kOk;
#endif
    default:
      return Status::kBadDtype;
  }
}

}  // namespace attn
