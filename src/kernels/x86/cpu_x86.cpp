// cpu_x86.cpp: the x86-64 CPU features of the kernel table's rows
// (kernels/x86/cpu_x86.h), from GCC's and clang's CPUID builtins, which also
// check that the OS saves the AVX / AVX-512 registers (XGETBV).
#include "kernels/x86/cpu_x86.h"

#if ATTN_X86_64
namespace attn {
namespace detail {

std::atomic<uint32_t> g_cpu_x86{0};  // constant-initialized: no static constructor

uint32_t probe_cpu_x86() {
  __builtin_cpu_init();  // the builtins' data, should this run before libgcc's constructor
  uint32_t f = kCpuProbed;
  if (__builtin_cpu_supports("avx2")) f |= kCpuAvx2;
  if (__builtin_cpu_supports("fma")) f |= kCpuFma;
  if (__builtin_cpu_supports("avx512f")) f |= kCpuAvx512f;
  if (__builtin_cpu_supports("avx512bw")) f |= kCpuAvx512bw;
  if (__builtin_cpu_supports("avx512vl")) f |= kCpuAvx512vl;
  if (__builtin_cpu_supports("avx512vnni")) f |= kCpuAvx512vnni;
  if (__builtin_cpu_supports("pclmul")) f |= kCpuPclmul;
  g_cpu_x86.store(f, std::memory_order_relaxed);
  return f;
}

}  // namespace detail
}  // namespace attn
#endif
