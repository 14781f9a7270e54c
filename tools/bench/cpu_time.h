// cpu_time.h: the benchmark programs' kernel timer. Thread CPU time
// (CLOCK_THREAD_CPUTIME_ID), so that on a shared machine the time other
// processes hold the core is left out.
#pragma once

#include <time.h>

#include <algorithm>
#include <vector>

namespace attn_bench {

inline double cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}

// Median CPU microseconds per call of f over `samples` samples of about 2 ms
// each (calls per sample calibrated first).
template <class F>
double median_cpu_us(const F& f, int samples = 21) {
  f();
  int inner = 1;
  for (;;) {
    const double t0 = cpu_us();
    for (int i = 0; i < inner; ++i) f();
    if (cpu_us() - t0 > 2000 || inner > (1 << 20)) break;
    inner *= 2;
  }
  std::vector<double> s;
  for (int k = 0; k < samples; ++k) {
    const double t0 = cpu_us();
    for (int i = 0; i < inner; ++i) f();
    s.push_back((cpu_us() - t0) / inner);
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace attn_bench
