// attn/tensor.h: non-owning views. Counts and strides are in elements.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

enum class DType : uint32_t {
  kF32 = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
};

// Bytes per element; 0 for an unknown dtype.
constexpr size_t dtype_bytes(DType t) {
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

  T* row(int32_t r) const { return data + static_cast<ptrdiff_t>(r) * stride; }
  // The same rows, columns [c0, c0 + n): how one head's slice of Q, K or V is seen.
  Matrix cols_slice(int32_t c0, int32_t n) const { return Matrix{data + c0, rows, n, stride}; }
  // Rows [r0, r0 + n).
  Matrix rows_slice(int32_t r0, int32_t n) const { return Matrix{row(r0), n, cols, stride}; }
  operator Matrix<const T>() const { return Matrix<const T>{data, rows, cols, stride}; }
};

// A dense [rows, cols] view.
template <class T>
constexpr Matrix<T> matrix(T* data, int32_t rows, int32_t cols) {
  return Matrix<T>{data, rows, cols, cols};
}

using MatF32 = Matrix<float>;
using ConstMatF32 = Matrix<const float>;

}  // namespace attn
