// thread_pool.h: the `attn` tools' threads (`--threads N`), given to the
// library as its parallel-for (attn/parallel.h). The library never starts a
// thread; this pool does, for the tools only: N - 1 workers, and the thread
// that calls run() takes pieces too.
//
// A call hands each worker the job through its own flag and waits until
// every worker has seen it, so no worker ever reads the next job's fields
// half-written. Between jobs the workers spin for a short while (a decode
// step hands over about 50 products per token, microseconds apart), then
// sleep on a condition variable until the next job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
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

  int32_t threads() const { return static_cast<int32_t>(slots_.size()) + 1; }
  // The hook for a plan (TransformerPlan::parallel): null with one thread.
  ParallelFor parallel_for();

  // ParallelFor::run: task(arg, i) for every i in [0, tasks), on the pool's
  // threads and the caller's; returns when all are done. One caller at a time.
  static void run(void* ctx, int32_t tasks, void (*task)(void* arg, int32_t index), void* arg);

 private:
  struct alignas(64) Slot {         // one worker's flags, a cache line each
    std::atomic<uint64_t> go{0};    // the job it should join
    std::atomic<uint64_t> done{0};  // the last job it finished with
  };
  void work(Slot* slot);
  void take();  // run pieces until none is left

  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int32_t> sleepers_{0};
  std::atomic<bool> stop_{false};
  uint64_t job_ = 0;  // the current job's number (the caller's thread only)
  // The current job, written before any worker's go flag is set.
  void (*task_)(void*, int32_t) = nullptr;
  void* arg_ = nullptr;
  int32_t tasks_ = 0;
  std::atomic<int32_t> next_{0};  // the next piece to take
};

// --threads N (1..256), default the core count (std::thread::hardware_concurrency).
int32_t threads_option(const Args& args);

}  // namespace cli
}  // namespace attn
