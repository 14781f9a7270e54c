// thread_pool.cpp: the `attn` tools' std::thread pool (cli/thread_pool.h).
#include "cli/thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace attn {
namespace cli {
namespace {

// How long an idle worker spins before it sleeps: longer than the gaps
// between the products of one decode step and between two steps, far
// shorter than a prompt read from a terminal.
constexpr std::chrono::microseconds kSpin{2000};

// One wait step: a pause, and every 64th a yield, so that on a machine with
// more runnable threads than cores a spinning thread lets the others run.
inline void relax(uint32_t spins) {
  if ((spins & 63) == 63) return std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

inline uint32_t job_of(uint64_t claim) { return static_cast<uint32_t>(claim >> 32); }

// The piece half of claim_ while run() writes a job's fields: nothing can be claimed.
constexpr uint32_t kClosed = 0xFFFFFFFFu;

}  // namespace

ThreadPool::ThreadPool(int32_t threads) {
  for (int32_t i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ParallelFor ThreadPool::parallel_for() {
  ParallelFor p;
  if (workers_.empty()) return p;
  p.run = &ThreadPool::run;
  p.ctx = this;
  p.workers = threads();
  return p;
}

void ThreadPool::help(uint32_t job) {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  for (uint32_t spins = 0;; ++spins) {
    if (job_of(claim) != job) return;
    const auto piece = static_cast<uint32_t>(claim);
    if (piece == kClosed) {  // run() is writing the job: it opens it in a moment
      relax(spins);
      claim = claim_.load(std::memory_order_acquire);
      continue;
    }
    // Read before the claim, and written after the job was closed (acquire
    // pairs with those release stores): a claim that succeeds proves they are
    // this job's, since any later job closes claim_ first and fails it.
    void (*task)(void*, int32_t) = task_.load(std::memory_order_acquire);
    void* arg = arg_.load(std::memory_order_acquire);
    const auto tasks = static_cast<uint32_t>(tasks_.load(std::memory_order_acquire));
    if (piece >= tasks) return;
    if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) continue;
    task(arg, static_cast<int32_t>(piece));
    done_.fetch_add(1, std::memory_order_release);
    claim = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::run(void* ctx, int32_t tasks, void (*task)(void* arg, int32_t index), void* arg) {
  ThreadPool* p = static_cast<ThreadPool*>(ctx);
  if (p->workers_.empty() || tasks <= 1) {
    for (int32_t i = 0; i < tasks; ++i) task(arg, i);
    return;
  }
  // Close the word under the new job's number first: a thread that read the
  // last job's word (all its pieces taken) and then reads these fields can no
  // longer claim with it. Then the job, then open it at piece 0.
  const uint32_t job = ++p->job_;
  p->claim_.store(uint64_t{job} << 32 | kClosed);
  p->task_.store(task, std::memory_order_release);
  p->arg_.store(arg, std::memory_order_release);
  p->tasks_.store(tasks, std::memory_order_release);
  p->done_.store(0, std::memory_order_relaxed);
  p->claim_.store(uint64_t{job} << 32);  // seq_cst: publishes the job; ordered with sleepers_ below
  if (p->sleepers_.load() > 0) {
    const std::lock_guard<std::mutex> lock(p->mutex_);
    p->wake_.notify_all();
  }
  p->help(job);
  // Every piece was claimed; wait for those other threads are still running.
  for (uint32_t spins = 0; p->done_.load(std::memory_order_acquire) < tasks; ++spins) relax(spins);
}

void ThreadPool::work() {
  uint32_t seen = 0;
  for (;;) {
    // Spin a while for the next job, then sleep until it comes.
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (uint32_t spins = 0; job_of(claim_.load(std::memory_order_acquire)) == seen && !stop_.load();
         ++spins) {
      relax(spins);
      if ((spins & 1023) == 1023 && std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);  // seq_cst: run() sees it, or this sees the job
        wake_.wait(lock, [&] { return job_of(claim_.load()) != seen || stop_.load(); });
        sleepers_.fetch_sub(1);
      }
    }
    if (stop_.load()) return;
    seen = job_of(claim_.load(std::memory_order_acquire));
    help(seen);
  }
}

int32_t threads_option(const Args& args) {
  const unsigned cores = std::thread::hardware_concurrency();
  const long long fallback = cores >= 1 && cores <= 256 ? static_cast<long long>(cores) : 1;
  return static_cast<int32_t>(args.get_int("--threads", fallback, 1, 256));
}

}  // namespace cli
}  // namespace attn
