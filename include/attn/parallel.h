// attn/parallel.h: the caller's parallel-for, the library's only route to
// more than one core. The library never creates a thread, takes a lock or
// keeps a pool: it cuts a large product into pieces and hands them to a hook
// the caller supplies (a std::thread pool on a host, an RTOS's tasks on a
// multi-core part), which runs them wherever it likes.
//
//   attn::ParallelFor par;
//   par.run = my_run;      // see the contract below
//   par.ctx = &my_pool;
//   par.workers = 2;       // pieces my_run can run at once
//   plan.parallel = par;   // an attn::Plan or attn::TransformerPlan
//
// C: attn_plan_set_parallel, attn_transformer_set_parallel (attn/attn.h).
//
// What run must do: call task(arg, i) exactly once for every i in
// [0, tasks), in any order, on any threads (the calling one included), and
// return only when every call has returned. The pieces write disjoint
// memory, so run needs no locking of its own beyond waiting for them; it
// must not call back into the library for the same plan while they run.
//
// What the library does: a forward or decode splits a product only across
// its output channels, in contiguous ranges of whole multiples of 16 channels
// (the panels of the f32 kernels), and never across a sum: every output is
// the same sum in the same order whatever the split, so the outputs do not
// depend on the hook or on `workers` (integers byte for byte, f32 bit for bit).
// A product is split only when it is large enough to pay for a hand-off: at
// least kParallelMinTaskMacs multiply-adds per piece (rows x channels x
// depth), into at most `workers` pieces. What is split: the attention
// block's four projections (attn/attention.h, attn/decode.h), the FFN's W1,
// W3 and W2, and the LM head, in every dtype.
//
// A null run (the default) or workers below 2: everything runs inline on the
// caller's thread, at the cost of one pointer check per product.
//
// ATTN_PARALLEL=0 (CMake -DATTN_PARALLEL=OFF; the default of bare-metal
// builds, CMAKE_SYSTEM_NAME Generic, since most Cortex-M parts have one core)
// compiles the split out (kParallelBuilt false): a C++ plan's hook is never
// called, the C API's set functions refuse one (kParallelNotBuilt), and
// no byte of flash is spent on it. Firmware for a multi-core part builds the
// library with -DATTN_PARALLEL=ON.
#pragma once

#include <cstdint>

#ifndef ATTN_PARALLEL
#define ATTN_PARALLEL 1
#endif

namespace attn {

// Whether this build splits products over a plan's hook (ATTN_PARALLEL).
constexpr bool kParallelBuilt = ATTN_PARALLEL != 0;

// Multiply-adds one piece of a split product does at least: for one decoded
// token, 32 KiB of int8 or 128 KiB of f32 weights, microseconds of one core,
// well above a spinning pool's hand-off (well under one). A stories15M-sized
// decode step (E 288, F 768) splits every projection in two.
constexpr int64_t kParallelMinTaskMacs = int64_t{1} << 15;

struct ParallelFor {
  // Runs task(arg, i) for every i in [0, tasks) and returns when all are done.
  void (*run)(void* ctx, int32_t tasks, void (*task)(void* arg, int32_t index), void* arg) = nullptr;
  void* ctx = nullptr;  // passed to run as is
  int32_t workers = 0;  // pieces run can run at once (threads, cores); below 2: no split
};

}  // namespace attn
