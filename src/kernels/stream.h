// kernels/stream.h: when a product of a few rows (decoding a token) reads its
// weights one row at a time.
//
// The dot-product paths of the linears read blocks of 4 weight rows (2 x 4 in
// int8) with the K loop innermost: 4 streams a row apart. That is fastest while
// the matrix sits in cache (4 independent accumulator chains), but from
// memory it got about two thirds of the read bandwidth that reading one row
// after the other gets (attn_bench_matvec, tools/bench/README.md "Decoding at
// the memory-bandwidth limit": the 32000 x 288 f32 head at 17 GB/s against
// 25-27; software prefetch of the next block of 4 rows got 18). So from
// kStreamBytes of weights on, the few-row paths read one weight row at a
// time: the reads are one sequential stream, which the hardware prefetchers
// follow. Each output is the same chain of multiply-adds in k order and the
// same horizontal sum either way: only the speed changes, never the bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {
namespace detail {

// A matrix this large is read from memory (or the last level) in a decode
// step of any model that has one: the model's other matrices pass between two
// reads of it. The stories15M int8 projections (288 x 288, 81 KiB) from
// memory: 7.2 us in blocks of 4 rows, 4.2 us one row at a time; in cache one
// row at a time costs more (3.7 against 2.7 us in blocks), which is why the
// tiny models (stories260K's 64-wide matrices, 16 KiB in f32) keep the blocks.
// A piece of a product split over threads (core/parallel.h) is judged by its
// own rows: at two threads the halves of those int8 projections (41 KiB) take
// the blocks.
constexpr int64_t kStreamBytes = int64_t{64} * 1024;
constexpr int32_t kStreamMaxRows = 3;  // rows of x: a decode step, the few-row paths

// Whether a product of `rows` rows of x against n x k weights of `elem`
// bytes reads the weights one row at a time.
inline bool stream_weights(int32_t rows, int32_t n, int32_t k, size_t elem) {
  return rows <= kStreamMaxRows && int64_t{n} * int64_t{k} * static_cast<int64_t>(elem) >= kStreamBytes;
}

}  // namespace detail
}  // namespace attn
