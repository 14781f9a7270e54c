// attn_bench_f32: single-thread float32 attention forward on the standard shapes.
//
//   attn_bench_f32            about 0.7 s per shape
//   attn_bench_f32 --quick    about 0.1 s per shape
//
// Self-attention (S = L), bias on, random inputs and weights. Each forward is
// timed on its own with std::chrono::steady_clock; the table gives the median.
// FLOPs per forward = 8*L*E^2 (four projections) + 4*L*S*E (scores and
// weighted sum), the usual count for one attention layer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "internal/kernels_f32.h"

namespace {

struct Shape {
  int32_t L, E, H;
};

constexpr Shape kShapes[] = {{16, 64, 4}, {64, 64, 4}, {128, 128, 4}, {256, 256, 8}, {512, 256, 8}};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<float> random_vector(std::mt19937& rng, size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Result {
  double median_us = 0;
  int runs = 0;
  size_t arena_bytes = 0;
};

// Runs the shape for about `target_s` seconds; false (with a message) on error.
bool bench(const Shape& sh, double target_s, Result* out) {
  const int32_t L = sh.L, S = sh.L, E = sh.E;
  attn::AttentionConfig cfg;
  cfg.embed_dim = E;
  cfg.num_heads = sh.H;
  attn::Plan plan;
  attn::Status st = attn::plan_attention(cfg, attn::DType::kF32, L, S, &plan);
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "plan_attention(L=%d E=%d H=%d): %s\n", L, E, sh.H, attn::status_name(st));
    return false;
  }
  const size_t e = static_cast<size_t>(E), l = static_cast<size_t>(L);
  std::mt19937 rng(1234u + static_cast<unsigned>(L * 1000 + E));
  const float ws = 1.0f / std::sqrt(static_cast<float>(E));
  const std::vector<float> wq = random_vector(rng, e * e, ws);   // [E, E]
  const std::vector<float> wk = random_vector(rng, e * e, ws);   // [E, E]
  const std::vector<float> wv = random_vector(rng, e * e, ws);   // [E, E]
  const std::vector<float> wo = random_vector(rng, e * e, ws);   // [E, E]
  const std::vector<float> b = random_vector(rng, 4 * e, 0.1f);  // bq, bk, bv, bo [E] each
  const std::vector<float> x = random_vector(rng, l * e, 1.0f);  // [L, E]
  std::vector<float> y(l * e);                                   // [L, E]

  attn::WeightsF32 w;
  w.wq = wq.data();
  w.wk = wk.data();
  w.wv = wv.data();
  w.wo = wo.data();
  w.bq = b.data();
  w.bk = b.data() + e;
  w.bv = b.data() + 2 * e;
  w.bo = b.data() + 3 * e;
  attn::IoF32 io;
  io.query = x.data();
  io.key = x.data();
  io.value = x.data();
  io.output = y.data();

  // 16-aligned arena of exactly the planned size.
  std::vector<unsigned char> storage(plan.arena_bytes + ATTN_ARENA_ALIGN);
  void* p = storage.data();
  size_t space = storage.size();
  std::align(ATTN_ARENA_ALIGN, plan.arena_bytes, p, space);
  attn::Arena arena;
  st = arena.init(p, plan.arena_bytes);
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "arena.init: %s\n", attn::status_name(st));
    return false;
  }
  const attn::Mask mask;
  auto run = [&]() { return attn::forward_f32(plan, w, mask, io, arena); };

  // Warm up (a tenth of the budget, at least two runs), then time single runs
  // until the budget is spent: at least 5, at most 1e6 samples.
  Clock::time_point t0 = Clock::now();
  for (int warm = 0; warm < 2 || seconds_since(t0) < 0.1 * target_s; ++warm) {
    st = run();
    if (st != attn::Status::kOk) {
      std::fprintf(stderr, "forward_f32: %s\n", attn::status_name(st));
      return false;
    }
  }
  std::vector<double> us;  // microseconds per forward
  t0 = Clock::now();
  while (us.size() < 5 || (seconds_since(t0) < target_s && us.size() < 1000000)) {
    const Clock::time_point a = Clock::now();
    (void)run();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  const size_t mid = us.size() / 2;
  std::nth_element(us.begin(), us.begin() + static_cast<ptrdiff_t>(mid), us.end());
  out->median_us = us[mid];
  out->runs = static_cast<int>(us.size());
  out->arena_bytes = plan.arena_bytes;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double target_s = 0.7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      target_s = 0.1;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  std::printf("attn f32 forward, self-attention (S = L), bias, single thread, kernels: %s, tile rows %d\n",
              attn::detail::kernel_set_f32(), ATTN_TILE_ROWS);
  char header[128];
  const int n = std::snprintf(header, sizeof header, "%5s %5s %3s | %12s %9s | %12s | %7s", "L", "E", "H",
                              "median us", "GFLOP/s", "arena bytes", "runs");
  std::printf("%s\n%s\n", header, std::string(static_cast<size_t>(n), '-').c_str());
  for (const Shape& sh : kShapes) {
    Result r;
    if (!bench(sh, target_s, &r)) return 1;
    const double L = sh.L, E = sh.E, S = sh.L;
    const double flops = 8.0 * L * E * E + 4.0 * L * S * E;
    std::printf("%5d %5d %3d | %12.1f %9.2f | %12zu | %7d\n", sh.L, sh.E, sh.H, r.median_us,
                flops / (r.median_us * 1e3), r.arena_bytes, r.runs);
    std::fflush(stdout);
  }
  return 0;
}
