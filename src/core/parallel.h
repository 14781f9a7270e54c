// core/parallel.h: a product split over its output channels through the
// caller's ParallelFor (attn/parallel.h).
//
//   for_output_channels(par, M, N, K, [&](int32_t n0, int32_t nc) {
//     ... y[:, n0 .. n0 + nc) = x w[n0 .. n0 + nc)^T + bias[n0 .. n0 + nc) ...
//   });
//
// The body computes channels [n0, n0 + nc) of every row: every output is the
// same sum as in one call over all N, only the range of channels differs.
// Without a hook (or for a small product) it is one call body(0, N) on the
// caller's thread, so a build that never sets a hook pays one pointer check.
#pragma once

#include <cstdint>

#include "attn/parallel.h"

namespace attn {
namespace detail {

// Channels per unit of a split: the f32 kernels' panel width, so every piece
// but the last starts and ends on a panel (and on every SIMD block).
constexpr int32_t kParallelChannels = 16;

// Pieces a product of rows x channels x depth multiply-adds is cut into: at
// most par.workers and one per kParallelChannels channels, each of at least
// kParallelMinTaskMacs; 1 without a hook.
inline int32_t parallel_pieces(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth) {
  if (par.run == nullptr || par.workers < 2) return 1;
  const int64_t macs = int64_t{rows} * channels * depth;
  int64_t pieces = macs / kParallelMinTaskMacs;
  const int64_t units = (int64_t{channels} + kParallelChannels - 1) / kParallelChannels;
  if (pieces > units) pieces = units;
  if (pieces > par.workers) pieces = par.workers;
  return pieces > 1 ? static_cast<int32_t>(pieces) : 1;
}

template <class Body>
void for_output_channels(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth,
                         const Body& body) {
  const int32_t pieces = parallel_pieces(par, rows, channels, depth);
  if (pieces <= 1) return body(0, channels);
  struct Job {
    const Body* body;
    int32_t channels, units, pieces;
  };
  Job job{&body, channels, (channels + kParallelChannels - 1) / kParallelChannels, pieces};
  // Piece i: units [i U / P, (i + 1) U / P), contiguous, as even as whole units allow.
  const auto piece = [](void* arg, int32_t i) {
    const Job& j = *static_cast<const Job*>(arg);
    const int32_t u0 = static_cast<int32_t>(int64_t{i} * j.units / j.pieces);
    const int32_t u1 = static_cast<int32_t>(int64_t{i + 1} * j.units / j.pieces);
    const int32_t n0 = u0 * kParallelChannels;
    const int32_t n1 = u1 * kParallelChannels < j.channels ? u1 * kParallelChannels : j.channels;
    if (n1 > n0) (*j.body)(n0, n1 - n0);
  };
  par.run(par.ctx, pieces, piece, &job);
}

}  // namespace detail
}  // namespace attn
