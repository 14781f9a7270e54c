// kernels/arch.h: which SIMD ISAs this translation unit may use, from the
// compiler's own feature macros. ATTN_FORCE_REF (CMake -DATTN_KERNELS=ref)
// turns every one off, leaving the portable scalar kernels.
#pragma once

#if !defined(ATTN_FORCE_REF) && defined(__AVX2__) && defined(__FMA__)
#define ATTN_HAVE_AVX2 1
#else
#define ATTN_HAVE_AVX2 0
#endif

// AVX-512 VNNI with 256/512-bit integer ops (vpdpbusd, vpdpwssd): the
// integer kernels' x86-64 tier above AVX2.
#if ATTN_HAVE_AVX2 && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__)
#define ATTN_HAVE_AVX512VNNI 1
#else
#define ATTN_HAVE_AVX512VNNI 0
#endif

// x86-64 with GCC or clang: the kernel table (kernels/kernel_table.h) may
// choose rows at run time, from CPUID.
#if !defined(ATTN_FORCE_REF) && defined(__x86_64__) && defined(__GNUC__)
#define ATTN_X86_64 1
#else
#define ATTN_X86_64 0
#endif

// ATTN_HAVE_<ISA>: this translation unit is compiled for the ISA (the kernel
// files' own bodies). ATTN_WITH_<ISA>: the library has the ISA's kernels, so
// the kernel table lists them in every unit: either the whole library is
// compiled for the ISA, or the build compiles only that ISA's kernel files
// with its flags (CMake and port/make/attn.mk do, on x86-64) and defines
// ATTN_AVX2_KERNELS=1 / ATTN_AVX512VNNI_KERNELS=1 for every unit.
#if ATTN_HAVE_AVX2 || (ATTN_X86_64 && defined(ATTN_AVX2_KERNELS) && ATTN_AVX2_KERNELS)
#define ATTN_WITH_AVX2 1
#else
#define ATTN_WITH_AVX2 0
#endif
#if ATTN_HAVE_AVX512VNNI || (ATTN_WITH_AVX2 && defined(ATTN_AVX512VNNI_KERNELS) && ATTN_AVX512VNNI_KERNELS)
#define ATTN_WITH_AVX512VNNI 1
#else
#define ATTN_WITH_AVX512VNNI 0
#endif

// The table carries a row above what this unit's flags guarantee: best()
// asks the CPU (CPUID, once) which rows it runs. Elsewhere (ref-only builds,
// ARM, Cortex-M, or x86 compiled for every ISA it carries) row 0 is a
// compile-time constant and there is no dispatch code.
#if (ATTN_WITH_AVX2 && !ATTN_HAVE_AVX2) || (ATTN_WITH_AVX512VNNI && !ATTN_HAVE_AVX512VNNI)
#define ATTN_X86_RUNTIME_CHOICE 1
#else
#define ATTN_X86_RUNTIME_CHOICE 0
#endif

#if !defined(ATTN_FORCE_REF) && defined(__ARM_NEON) && defined(__aarch64__)
#define ATTN_HAVE_NEON64 1
#else
#define ATTN_HAVE_NEON64 0
#endif

#if !defined(ATTN_FORCE_REF) && defined(__ARM_NEON) && !defined(__aarch64__)
#define ATTN_HAVE_NEON32 1
#else
#define ATTN_HAVE_NEON32 0
#endif

// NEON on either: the kernels are one file per op (kernels/neon/neon_*.h picks
// block sizes by ATTN_HAVE_NEON64 where the register count matters).
#define ATTN_HAVE_NEON (ATTN_HAVE_NEON64 || ATTN_HAVE_NEON32)

#if !defined(ATTN_FORCE_REF) && defined(__ARM_FEATURE_DOTPROD)
#define ATTN_HAVE_DOTPROD 1
#else
#define ATTN_HAVE_DOTPROD 0
#endif

// Cortex-M DSP extension (M4, M7, M33): SMLAD and friends.
#if !defined(ATTN_FORCE_REF) && defined(__ARM_FEATURE_DSP) && !defined(__ARM_NEON) && \
    !defined(__ARM_FEATURE_MVE)
#define ATTN_HAVE_DSP 1
#else
#define ATTN_HAVE_DSP 0
#endif

// Cortex-M55/M85 Helium: bit 0 of __ARM_FEATURE_MVE is integer, bit 1 float.
#if !defined(ATTN_FORCE_REF) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define ATTN_HAVE_MVE 1
#else
#define ATTN_HAVE_MVE 0
#endif
#if !defined(ATTN_FORCE_REF) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define ATTN_HAVE_MVE_FP 1
#else
#define ATTN_HAVE_MVE_FP 0
#endif

// Compile the function that follows for size: run-once code (planning,
// validation) in flash-bound Cortex-M images. GCC only (clang has no
// per-function optimization level; there it is nothing).
#if defined(__GNUC__) && !defined(__clang__)
#define ATTN_COLD_CODE __attribute__((optimize("Os")))
#else
#define ATTN_COLD_CODE
#endif

// ATTN_COLD_CODE with every call in the function inlined where possible
// (GCC's flatten): for run-once entries whose helpers are inline functions of
// headers, which would otherwise be emitted out of line at the unit's -O3
// (flash). GCC only, like ATTN_COLD_CODE.
#if defined(__GNUC__) && !defined(__clang__)
#define ATTN_COLD_FLAT __attribute__((optimize("Os"), flatten))
#else
#define ATTN_COLD_FLAT
#endif

// Keep the function out of line: one copy for its callers (flash), or out
// of a flattened caller (ATTN_COLD_FLAT).
#if defined(__GNUC__)
#define ATTN_NOINLINE __attribute__((noinline))
#else
#define ATTN_NOINLINE
#endif

// Fully unroll the loop that follows (its bound a template constant), so that
// a SIMD kernel's accumulator arrays live in registers, not on the stack.
#if defined(__clang__)
#define ATTN_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define ATTN_UNROLL _Pragma("GCC unroll 16")
#else
#define ATTN_UNROLL
#endif

// Keep the loop that follows rolled: unrolling a Helium channel loop only
// spills registers (clang-14). GCC does not unroll these loops at -O2.
#if defined(__clang__)
#define ATTN_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define ATTN_NO_UNROLL
#endif
