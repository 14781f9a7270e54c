// kernels/x86/cpu_x86.h: the x86-64 CPU features the kernel table's rows need,
// read from CPUID once, on first use (no static constructor: a relaxed
// atomic word, 0 until probed; two threads probing at once store the same
// value). Elsewhere only x86_needs, a constexpr, exists.
#pragma once

#include <cstdint>

#include "kernels/arch.h"

#if ATTN_X86_64
#include <atomic>
#endif

namespace attn {
namespace detail {

// Feature bits of a row (Kernel::needs) and of the CPU.
constexpr uint32_t kCpuAvx2 = 1u << 0;
constexpr uint32_t kCpuFma = 1u << 1;
constexpr uint32_t kCpuAvx512f = 1u << 2;
constexpr uint32_t kCpuAvx512bw = 1u << 3;
constexpr uint32_t kCpuAvx512vl = 1u << 4;
constexpr uint32_t kCpuAvx512vnni = 1u << 5;
constexpr uint32_t kCpuPclmul = 1u << 6;   // PCLMULQDQ: format/crc32.cpp's CRC-32, not a kernel row
constexpr uint32_t kCpuProbed = 1u << 31;  // set once CPUID was read

constexpr bool isa_is(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
// What a row of ISA `isa` needs: the flags its kernel files are compiled with.
constexpr uint32_t x86_needs(const char* isa) {
  return isa_is(isa, "avx2") ? kCpuAvx2 | kCpuFma
         : isa_is(isa, "avx512vnni")
             ? kCpuAvx2 | kCpuFma | kCpuAvx512f | kCpuAvx512bw | kCpuAvx512vl | kCpuAvx512vnni
             : 0u;
}

#if ATTN_X86_64
// What this unit's compiler flags already guarantee: no check for those.
constexpr uint32_t kCpuBaseline =
    (ATTN_HAVE_AVX2 ? x86_needs("avx2") : 0u) | (ATTN_HAVE_AVX512VNNI ? x86_needs("avx512vnni") : 0u);

// kCpuProbed | features, or 0 before the first probe; constant-initialized
// in src/kernels/x86/cpu_x86.cpp (no static constructor runs).
extern std::atomic<uint32_t> g_cpu_x86;  // NOLINT(bugprone-dynamic-static-initializers)
uint32_t probe_cpu_x86();                // reads CPUID, stores g_cpu_x86 (src/kernels/x86/cpu_x86.cpp)

// The CPU's feature bits (kCpuProbed set).
inline uint32_t cpu_x86() {
  const uint32_t f = g_cpu_x86.load(std::memory_order_relaxed);
  return f != 0 ? f : probe_cpu_x86();
}
// Whether this CPU has every feature in `needs`.
inline bool x86_runs(uint32_t needs) { return (needs & ~kCpuBaseline) == 0 || (cpu_x86() & needs) == needs; }
#endif

}  // namespace detail
}  // namespace attn
