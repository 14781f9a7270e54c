// core/parallel.cpp: a product's output channels cut into pieces for the
// caller's parallel-for (core/parallel.h).
#include "core/parallel.h"

#if ATTN_PARALLEL

static_assert(attn::kParallelMinTaskMacs == int64_t{1} << 15, "parallel_pieces shifts by 15");

namespace attn {
namespace detail {

int32_t parallel_pieces(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth) {
  if (par.run == nullptr || par.workers < 2) return 1;
  // A shift, not a division (kParallelMinTaskMacs is 2^15): no 64-bit division routine on a Cortex-M.
  int64_t pieces = (int64_t{rows} * channels * depth) >> 15;
  const int64_t units = (int64_t{channels} + kParallelChannels - 1) / kParallelChannels;
  if (pieces > units) pieces = units;
  if (pieces > par.workers) pieces = par.workers;
  return pieces > 1 ? static_cast<int32_t>(pieces) : 1;
}

namespace {

struct Job {
  ChannelsFn body;
  const void* ctx;
  int32_t channels;
  int32_t base, extra;  // units per piece, and how many first pieces take one more
};

// Piece i of a Job: contiguous units, the first `extra` pieces one more than
// the rest (32-bit arithmetic: no division routine linked on a Cortex-M).
void run_piece(void* arg, int32_t i) {
  const Job& j = *static_cast<const Job*>(arg);
  const int32_t u0 = i * j.base + (i < j.extra ? i : j.extra);
  const int32_t u1 = u0 + j.base + (i < j.extra ? 1 : 0);
  const int32_t n0 = u0 * kParallelChannels;
  const int32_t n1 = u1 * kParallelChannels < j.channels ? u1 * kParallelChannels : j.channels;
  if (n1 > n0) j.body(j.ctx, n0, n1 - n0);
}

}  // namespace

void split_output_channels(const ParallelFor& par, int32_t rows, int32_t channels, int32_t depth,
                           ChannelsFn body, const void* ctx) {
  const int32_t pieces = parallel_pieces(par, rows, channels, depth);
  if (pieces <= 1) return body(ctx, 0, channels);
  const int32_t units = (channels + kParallelChannels - 1) / kParallelChannels;
  Job job{body, ctx, channels, units / pieces, units % pieces};
  par.run(par.ctx, pieces, run_piece, &job);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_PARALLEL
