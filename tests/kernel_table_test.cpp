// The kernel table's choices (src/kernels/kernel_table.h): the row each
// table runs (best_row) is what attn::kernel_set() reports, on x86-64 it is
// the best row CPUID says this CPU runs, every table ends in ref, and the
// weights are packed exactly where the linear that runs reads W^T panels.
// The variants themselves are tested against ref in tests/variants_test.cpp.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "attn/kernel_set.h"
#include "kernels/kernel_table.h"

namespace d = attn::detail;

namespace {
template <typename Fn, size_t N>
const char* isa_run(const d::Kernel<Fn> (&rows)[N]) {
  return rows[d::best_row(rows)].isa;
}

// kernel_set(dt) names these rows for its ops (RoPE is ref only).
[[maybe_unused]] void check_kernel_set(attn::DType dt, const char* linear, const char* scores,
                                       const char* softmax, const char* weighted_sum) {
  attn::KernelSet k;
  REQUIRE(attn::kernel_set(dt, &k) == attn::Status::kOk);
  CHECK(std::string(k.linear) == linear);
  CHECK(std::string(k.scores) == scores);
  CHECK(std::string(k.softmax) == softmax);
  CHECK(std::string(k.weighted_sum) == weighted_sum);
  CHECK(std::string(k.rope) == "ref");
}
}  // namespace

TEST_CASE("kernel_set reports the row every op's table runs", "[kernel_table]") {
#if ATTN_WITH_F32
  check_kernel_set(attn::DType::kF32, isa_run(d::kLinearF32), isa_run(d::kScoresF32),
                   isa_run(d::kSoftmaxRowF32), isa_run(d::kWeightedSumF32));
#endif
#if ATTN_WITH_S8
  // V transposed (a row 0 other than ref in kWeightedSumVtS8): the softmax
  // leaves exps and P.V reads V^T.
  check_kernel_set(attn::DType::kS8, isa_run(d::kLinearS8), isa_run(d::kScoresS8),
                   d::kValuesTransposedS8 ? isa_run(d::kSoftmaxExps) : isa_run(d::kSoftmaxRows),
                   d::kValuesTransposedS8 ? isa_run(d::kWeightedSumVtS8) : isa_run(d::kWeightedSumS8));
#endif
#if ATTN_WITH_S16
  check_kernel_set(attn::DType::kS16, isa_run(d::kLinearS16), isa_run(d::kScoresS16),
                   isa_run(d::kSoftmaxRows), isa_run(d::kWeightedSumS16));
#endif
}

TEST_CASE("a ref-only build has only ref rows", "[kernel_table]") {
#if defined(ATTN_FORCE_REF)
  CHECK(std::string(isa_run(d::kLinearS8)) == "ref");
  CHECK(sizeof d::kLinearS8 / sizeof d::kLinearS8[0] == 1);
#endif
  SUCCEED();
}

#if ATTN_X86_64
// Any x86-64 build but a ref-only one carries the AVX2 kernels (their files
// compiled with their own flags, whatever the global flags), and runs the
// best row this CPU has the ISA of: CPUID read here through the compiler's
// builtins, not through the library's probe.
TEST_CASE("x86-64: the kernels that run are the best ones CPUID says this CPU has", "[kernel_table]") {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool vnni = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  INFO("CPU: avx2+fma " << avx2 << ", avx512 f/bw/vl/vnni " << vnni << "; library: avx512vnni rows "
                        << ATTN_WITH_AVX512VNNI << "; compiled for avx2 " << ATTN_HAVE_AVX2);
  REQUIRE(ATTN_WITH_AVX2 == 1);
  const std::string x86 = avx2 ? "avx2" : "ref";
  const std::string x86_s8 = ATTN_WITH_AVX512VNNI && vnni ? "avx512vnni" : x86;
  attn::KernelSet k;
  REQUIRE(attn::kernel_set(attn::DType::kF32, &k) == attn::Status::kOk);
  CHECK(k.linear == x86_s8);  // the f32 linear has an AVX-512 row in the avx512vnni tier
  CHECK(k.scores == x86);
  CHECK(k.softmax == x86);
  CHECK(k.weighted_sum == x86);
  REQUIRE(attn::kernel_set(attn::DType::kS8, &k) == attn::Status::kOk);
  CHECK(k.linear == x86_s8);
  CHECK(k.scores == x86_s8);
  CHECK(k.softmax == x86_s8);
  CHECK(k.weighted_sum == x86_s8);
  REQUIRE(attn::kernel_set(attn::DType::kS16, &k) == attn::Status::kOk);
  CHECK(k.linear == x86);
  CHECK(k.softmax == x86_s8);  // the fused softmax is shared with s8
  // The library calls the function of that row (a build without the avx512vnni rows has no such function).
#if ATTN_WITH_AVX512VNNI
  const auto f32_vnni = d::linear_f32_avx512vnni;
#else
  const auto f32_vnni = d::linear_f32_avx2;  // never chosen: x86_s8 is "avx512vnni" only with the rows
#endif
  CHECK(d::best(d::kLinearF32) == (x86_s8 == "avx512vnni" ? f32_vnni
                                   : avx2                 ? d::linear_f32_avx2
                                                          : d::linear_f32_ref));
  CHECK(d::best(d::kLinearS16) == (avx2 ? d::linear_s16_avx2 : d::linear_s16_ref));
}

// Other CPUs, by overwriting the library's probed feature word (restored
// after): a row needs every feature of its ISA, rows the unit's flags
// guarantee need none, and without AVX2 nothing is packed.
TEST_CASE("x86-64: on a CPU without an ISA, its rows are skipped", "[kernel_table]") {
  const uint32_t probed = d::cpu_x86();
  REQUIRE((probed & d::kCpuProbed) != 0);
  struct Restore {
    uint32_t f;
    ~Restore() { d::g_cpu_x86.store(f); }
  } restore{probed};
  const bool avx2_fixed = ATTN_HAVE_AVX2;  // compiled for AVX2: no check
  auto s8_linear = [] {
    attn::KernelSet k;
    REQUIRE(attn::kernel_set(attn::DType::kS8, &k) == attn::Status::kOk);
    return std::string(k.linear);
  };
  // AVX2 and AVX-512 but no VNNI: the AVX2 rows.
  d::g_cpu_x86.store(probed & ~d::kCpuAvx512vnni);
  CHECK(s8_linear() == (ATTN_WITH_AVX2 ? "avx2" : "ref"));
  // No FMA: an AVX2 row needs both.
  d::g_cpu_x86.store(d::kCpuProbed | d::kCpuAvx2);
  CHECK(s8_linear() == (avx2_fixed ? "avx2" : "ref"));
  // The baseline only (SSE2): ref everywhere, and W read as stored.
  d::g_cpu_x86.store(d::kCpuProbed);
  CHECK(s8_linear() == (avx2_fixed ? "avx2" : "ref"));
  CHECK(std::string(isa_run(d::kLinearF32)) == (avx2_fixed ? "avx2" : "ref"));
  CHECK(std::string(isa_run(d::kSoftmaxRows)) == (avx2_fixed ? "avx2" : "ref"));
  CHECK((d::linear_panels_floats_f32(16, 8) > 0) == avx2_fixed);
  // VNNI without AVX-512 BW: not the VNNI rows.
  d::g_cpu_x86.store(probed & ~d::kCpuAvx512bw);
  CHECK(s8_linear() == (ATTN_WITH_AVX2 ? "avx2" : "ref"));
}
#endif

#if ATTN_WITH_F32
// Weights packed once (pack_weights_f32) exactly where this build's linear
// takes W^T panels (the avx2 and avx512vnni ones), in their documented
// layout: ceil(N / 16) panels [K, 16].
TEST_CASE("f32 weights are packed where the linear reads W^T panels, in their layout", "[kernel_table]") {
  const bool packs = d::linear_panels_floats_f32(16, 8) > 0;
  INFO("linear: " << isa_run(d::kLinearF32));
  const std::string linear = isa_run(d::kLinearF32);
  REQUIRE(packs == (linear == "avx2" || linear == "avx512vnni"));
  REQUIRE(packs == d::kPacksWeightsF32);
  for (int N : {1, 7, 15, 16, 17, 40})
    for (int K : {1, 7, 256, 300}) {
      INFO("N=" << N << " K=" << K);
      CHECK(d::linear_panels_floats_f32(N, K) == (packs ? uint64_t((N + 15) / 16) * 16 * uint64_t(K) : 0));
    }
}
#endif
