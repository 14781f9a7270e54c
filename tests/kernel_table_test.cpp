// The kernel table's choices (src/internal/kernel_table.h): row 0 is what
// attn::kernel_set() reports, every table ends in ref, and the weights are
// packed exactly where the build's linear reads W^T panels. The variants
// themselves are tested against ref in tests/variants_test.cpp.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "attn/kernel_set.h"
#include "internal/kernel_table.h"

namespace d = attn::detail;

TEST_CASE("kernel_set reports row 0 of every op's table", "[kernel_table]") {
  attn::KernelSet k;
#if ATTN_WITH_F32
  REQUIRE(attn::kernel_set(attn::DType::kF32, &k) == attn::Status::kOk);
  CHECK(std::string(k.linear) == d::kLinearF32[0].isa);
  CHECK(std::string(k.scores) == d::kScoresF32[0].isa);
  CHECK(std::string(k.softmax) == d::kSoftmaxRowF32[0].isa);
  CHECK(std::string(k.weighted_sum) == d::kWeightedSumF32[0].isa);
  CHECK(std::string(k.rope) == "ref");
#endif
#if ATTN_WITH_S8
  REQUIRE(attn::kernel_set(attn::DType::kS8, &k) == attn::Status::kOk);
  CHECK(std::string(k.linear) == d::kLinearS8[0].isa);
  CHECK(std::string(k.scores) == d::kScoresS8[0].isa);
  // V transposed (a row 0 other than ref in kWeightedSumVtS8): the softmax
  // leaves exps and P.V reads V^T.
  CHECK(std::string(k.softmax) == (d::kValuesTransposedS8 ? d::kSoftmaxExps[0].isa : d::kSoftmaxRows[0].isa));
  CHECK(std::string(k.weighted_sum) ==
        (d::kValuesTransposedS8 ? d::kWeightedSumVtS8[0].isa : d::kWeightedSumS8[0].isa));
  CHECK(std::string(k.rope) == "ref");
#endif
#if ATTN_WITH_S16
  REQUIRE(attn::kernel_set(attn::DType::kS16, &k) == attn::Status::kOk);
  CHECK(std::string(k.linear) == d::kLinearS16[0].isa);
  CHECK(std::string(k.scores) == d::kScoresS16[0].isa);
  CHECK(std::string(k.softmax) == d::kSoftmaxRows[0].isa);
  CHECK(std::string(k.weighted_sum) == d::kWeightedSumS16[0].isa);
  CHECK(std::string(k.rope) == "ref");
#endif
}

TEST_CASE("a ref-only build has only ref rows, an x86-64 AVX2 build puts avx2 first", "[kernel_table]") {
#if defined(ATTN_FORCE_REF)
  CHECK(std::string(d::kLinearS8[0].isa) == "ref");
  CHECK(sizeof d::kLinearS8 / sizeof d::kLinearS8[0] == 1);
#endif
#if ATTN_HAVE_AVX2
#if ATTN_WITH_F32
  CHECK(std::string(d::kLinearF32[0].isa) == "avx2");
#endif
#if ATTN_WITH_S8
  CHECK(std::string(d::kLinearS8[0].isa) == (ATTN_WITH_AVX512VNNI ? "avx512vnni" : "avx2"));
#endif
#endif
  SUCCEED();
}

#if ATTN_WITH_F32
// Weights packed once (pack_weights_f32) exactly where this build's linear
// takes W^T panels (the avx2 one), in its documented layout: ceil(N / 16)
// panels [K, 16].
TEST_CASE("f32 weights are packed where the linear reads W^T panels, in their layout", "[kernel_table]") {
  const bool packs = d::linear_panels_floats_f32(16, 8) > 0;
  INFO("linear: " << d::kLinearF32[0].isa);
  REQUIRE(packs == (std::string(d::kLinearF32[0].isa) == "avx2"));
  REQUIRE(packs == d::kPacksWeightsF32);
  for (int N : {1, 7, 15, 16, 17, 40})
    for (int K : {1, 7, 256, 300}) {
      INFO("N=" << N << " K=" << K);
      CHECK(d::linear_panels_floats_f32(N, K) == (packs ? uint64_t((N + 15) / 16) * 16 * uint64_t(K) : 0));
    }
}
#endif
