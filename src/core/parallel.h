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
// caller's thread. The splitting itself is out of line, one copy for every
// product (flash on a microcontroller): a build that never sets a hook pays
// one pointer check and two calls per product.
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
int32_t parallel_pieces(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth);

// body(ctx, n0, nc) over contiguous ranges covering [0, channels): one call
// body(ctx, 0, channels) on this thread, or parallel_pieces() ranges through
// par.run, each piece a contiguous run of 16-channel units, as even as whole units allow.
using ChannelsFn = void (*)(const void* ctx, int32_t n0, int32_t nc);
void split_output_channels(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth,
                           ChannelsFn body, const void* ctx);

template <class Body>
void for_output_channels(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth,
                         const Body& body) {
#if ATTN_PARALLEL
  const ChannelsFn fn = [](const void* ctx, int32_t n0, int32_t nc) {
    (*static_cast<const Body*>(ctx))(n0, nc);
  };
  split_output_channels(par, rows, channels, depth, fn, &body);
#else
  (void)par, (void)rows, (void)depth;
  body(0, channels);  // the split compiled out (attn/parallel.h)
#endif
}

}  // namespace detail
}  // namespace attn
