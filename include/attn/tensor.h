// attn/tensor.h: non-owning views. Counts and strides are in elements.
#pragma once

#include <cstddef>
#include <cstdint>

// ATTN_ALWAYS_INLINE: for every inline function that an ISA kernel file
// (src/kernels/x86/*_avx2.cpp, *_avx512vnni.cpp) shares with the rest of the
// library: the views' accessors here, the fixed-point steps
// (src/kernels/fixed_point.h, kernels_model_fixed.h, kernels_fixed.h), the f32
// row helpers (kernels_f32.h).
// On x86-64 those files are compiled with their own ISA flags (-mavx2, the
// AVX-512 ones) and the rest for the baseline. An ordinary inline function
// that the compiler chooses not to inline (always at -O0, sometimes at -Os
// or with sanitizers) is emitted as a weak symbol in every object that uses
// it, and the linker keeps one copy: baseline code could then run the AVX2
// copy and fault on a CPU without AVX2. Forced inline, such a helper is
// compiled into each caller with the caller's flags and never emitted on its
// own, in every build type. port/cmake/check_isa_symbols.cmake fails the
// build when a weak function still appears in two ISA groups.
// Elsewhere every file has the same flags: plain inline, so the Cortex-M and
// Cortex-A code is the compiler's choice as before.
// clang's -fsanitize=function (part of -fsanitize=undefined) would still emit
// an unused copy of each, to type-check indirect calls that cannot happen to
// a function that is always inlined: no_sanitize("function") drops it.
#if defined(__x86_64__) && defined(__clang__)
#define ATTN_ALWAYS_INLINE inline __attribute__((always_inline, no_sanitize("function")))
#elif defined(__x86_64__) && defined(__GNUC__)
#define ATTN_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ATTN_ALWAYS_INLINE inline
#endif

namespace attn {

enum class DType : uint32_t {
  kF32 = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kS4 = 7,  // int4 weights, two per byte (attn/FORMAT.md): a tensor dtype only, never a block's
};

// Bytes per element; 0 for an unknown dtype and for kS4 (half a byte: a
// [rows, cols] int4 tensor holds rows * cols / 2 bytes, cols even).
ATTN_ALWAYS_INLINE constexpr size_t dtype_bytes(DType t) {
  return t == DType::kF32   ? 4
         : t == DType::kS8  ? 1
         : t == DType::kS16 ? 2
         : t == DType::kS32 ? 4
         : t == DType::kS64 ? 8
         : t == DType::kU8  ? 1
                            : 0;
}

// A row-major 2-D view: element (r, c) is data[r * stride + c], stride >= cols.
template <class T>
struct Matrix {
  T* data = nullptr;
  int32_t rows = 0;
  int32_t cols = 0;
  int32_t stride = 0;

  ATTN_ALWAYS_INLINE T* row(int32_t r) const { return data + static_cast<ptrdiff_t>(r) * stride; }
  // The same rows, columns [c0, c0 + n): how one head's slice of Q, K or V is seen.
  ATTN_ALWAYS_INLINE Matrix cols_slice(int32_t c0, int32_t n) const {
    return Matrix{data + c0, rows, n, stride};
  }
  // Rows [r0, r0 + n).
  ATTN_ALWAYS_INLINE Matrix rows_slice(int32_t r0, int32_t n) const {
    return Matrix{row(r0), n, cols, stride};
  }
  ATTN_ALWAYS_INLINE operator Matrix<const T>() const { return Matrix<const T>{data, rows, cols, stride}; }
};

// A dense [rows, cols] view.
template <class T>
ATTN_ALWAYS_INLINE constexpr Matrix<T> matrix(T* data, int32_t rows, int32_t cols) {
  return Matrix<T>{data, rows, cols, cols};
}

using MatF32 = Matrix<float>;
using ConstMatF32 = Matrix<const float>;

}  // namespace attn
