// thread_pool.h: the `attn` tools' threads (`--threads N`), given to the
// library as its parallel-for (attn/parallel.h). The library never starts a
// thread; this pool does, for the tools only: N - 1 workers, and the thread
// that calls run() takes pieces too.
//
// A job is its pieces' counter: one 64-bit word holding the job's number
// and the next piece, claimed by compare-and-swap, so a thread that arrives
// late (descheduled on a busy machine) finds the job taken or gone and
// claims nothing (the word is closed under the next job's number while that
// job's fields are written, so a stale word cannot claim a piece of it): the caller never waits for a thread
// that did not start, only for pieces that did. Between jobs the workers spin for a short while (a decode
// step hands over dozens of products, microseconds apart), then sleep on a condition variable until the next
// job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "attn/parallel.h"
#include "cli/cli.h"

namespace attn {
namespace cli {

class ThreadPool {
 public:
  // threads >= 1 in all (1: no worker; parallel_for() is then no hook).
  explicit ThreadPool(int32_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int32_t threads() const { return static_cast<int32_t>(workers_.size()) + 1; }
  // The hook for a plan (TransformerPlan::parallel): null with one thread.
  ParallelFor parallel_for();

  // ParallelFor::run: task(arg, i) for every i in [0, tasks), on the pool's
  // threads and the caller's; returns when all are done. One caller at a time.
  static void run(void* ctx, int32_t tasks, void (*task)(void* arg, int32_t index), void* arg);

 private:
  void work();
  // Claims and runs pieces of job `job` until none is left (or another job
  // replaced it).
  void help(uint32_t job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int32_t> sleepers_{0};
  std::atomic<bool> stop_{false};
  uint32_t job_ = 0;  // the last job's number (the caller's thread only)
  // The job: written before claim_ names it; read, then checked by the claim.
  std::atomic<void (*)(void*, int32_t)> task_{nullptr};
  std::atomic<void*> arg_{nullptr};
  std::atomic<int32_t> tasks_{0};
  alignas(64) std::atomic<uint64_t> claim_{0};  // job << 32 | next piece
  alignas(64) std::atomic<int32_t> done_{0};    // pieces finished
};

// --threads N (1..256), default the core count (std::thread::hardware_concurrency).
int32_t threads_option(const Args& args);

}  // namespace cli
}  // namespace attn
