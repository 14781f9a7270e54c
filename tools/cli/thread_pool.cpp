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

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int32_t threads) {
  for (int32_t i = 1; i < threads; ++i) slots_.push_back(std::make_unique<Slot>());
  for (auto& s : slots_) workers_.emplace_back([this, slot = s.get()] { work(slot); });
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
  if (slots_.empty()) return p;
  p.run = &ThreadPool::run;
  p.ctx = this;
  p.workers = threads();
  return p;
}

void ThreadPool::take() {
  for (int32_t i = next_.fetch_add(1, std::memory_order_relaxed); i < tasks_;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    task_(arg_, i);
  }
}

void ThreadPool::run(void* ctx, int32_t tasks, void (*task)(void* arg, int32_t index), void* arg) {
  ThreadPool* p = static_cast<ThreadPool*>(ctx);
  if (p->slots_.empty() || tasks <= 1) {
    for (int32_t i = 0; i < tasks; ++i) task(arg, i);
    return;
  }
  p->task_ = task;
  p->arg_ = arg;
  p->tasks_ = tasks;
  p->next_.store(0, std::memory_order_relaxed);
  const uint64_t job = ++p->job_;
  for (auto& s : p->slots_) s->go.store(job);  // seq_cst: ordered with sleepers_ below
  if (p->sleepers_.load() > 0) {
    const std::lock_guard<std::mutex> lock(p->mutex_);
    p->wake_.notify_all();
  }
  p->take();
  // Every worker has finished with this job (and read nothing of the next).
  for (auto& s : p->slots_) {
    while (s->done.load(std::memory_order_acquire) != job) relax();
  }
}

void ThreadPool::work(Slot* slot) {
  uint64_t seen = 0;
  for (;;) {
    // Spin a while for the next job, then sleep until it comes.
    const auto until = std::chrono::steady_clock::now() + kSpin;
    uint32_t spins = 0;
    while (slot->go.load(std::memory_order_acquire) == seen && !stop_.load(std::memory_order_relaxed)) {
      relax();
      if ((++spins & 1023) == 0 && std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);  // seq_cst: run() sees it, or this sees go
        wake_.wait(lock, [&] { return slot->go.load() != seen || stop_.load(); });
        sleepers_.fetch_sub(1);
      }
    }
    if (stop_.load()) return;
    seen = slot->go.load(std::memory_order_acquire);
    take();
    slot->done.store(seen, std::memory_order_release);
  }
}

int32_t threads_option(const Args& args) {
  const unsigned cores = std::thread::hardware_concurrency();
  const long long fallback = cores >= 1 && cores <= 256 ? static_cast<long long>(cores) : 1;
  return static_cast<int32_t>(args.get_int("--threads", fallback, 1, 256));
}

}  // namespace cli
}  // namespace attn
