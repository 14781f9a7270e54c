// speed: median microseconds per float32 self-attention forward, GFLOP/s and
// arena bytes on the standard shapes of issue 5. Single thread.
//
//   attn_bench_speed [--min-ms N] [--tile-rows T] [L E H ...]
//
// FLOPs per forward = 8*L*E^2 + 4*L*S*E (S = L): four projections and the two
// attention products, multiply-adds counted as 2. Each sample times enough
// forwards to last about 2 ms; the medians over the samples are printed, of
// wall time and of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: on a
// shared, loaded machine it leaves out the time other processes held the
// core; GFLOP/s is computed from it). The header names the kernel set.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "attn/attention.h"
#include "internal/kernels_f32.h"

namespace {

struct Shape {
  int L, E, H;
};

double cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}

struct Result {
  double median_us;  // wall
  double median_cpu_us;
  double gflops;
  size_t arena_bytes;
  int tile_rows;
};

std::vector<float> random_vec(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

Result run(const Shape& s, int tile_rows, double min_ms) {
  const attn::AttentionConfig cfg{s.E, s.H};
  const size_t E = size_t(s.E), L = size_t(s.L);
  std::mt19937 rng(1234);
  const float ws = 1.0f / std::sqrt(float(s.E));
  auto wq = random_vec(E * E, rng, ws), wk = random_vec(E * E, rng, ws), wv = random_vec(E * E, rng, ws),
       wo = random_vec(E * E, rng, ws);
  auto bq = random_vec(E, rng, 0.1f), bk = random_vec(E, rng, 0.1f), bv = random_vec(E, rng, 0.1f),
       bo = random_vec(E, rng, 0.1f);
  auto x = random_vec(L * E, rng, 1.0f);
  std::vector<float> y(L * E);

  attn::Plan plan;
  attn::Status st = tile_rows > 0 ? attn::plan_attention(cfg, attn::DType::kF32, s.L, s.L, &plan, tile_rows)
                                  : attn::plan_attention(cfg, attn::DType::kF32, s.L, s.L, &plan);
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "plan failed: %s\n", attn::status_name(st));
    std::exit(1);
  }
  std::vector<unsigned char> storage(plan.arena_bytes + ATTN_ARENA_ALIGN);
  void* base =
      storage.data() +
      (ATTN_ARENA_ALIGN - reinterpret_cast<uintptr_t>(storage.data()) % ATTN_ARENA_ALIGN) % ATTN_ARENA_ALIGN;
  attn::Arena arena;
  if (arena.init(base, plan.arena_bytes) != attn::Status::kOk) std::exit(1);
  const attn::WeightsF32 w{wq.data(), wk.data(), wv.data(), wo.data(),
                           bq.data(), bk.data(), bv.data(), bo.data()};
  const attn::IoF32 io{x.data(), x.data(), x.data(), y.data()};
  const attn::Mask mask;

  using clock = std::chrono::steady_clock;
  auto once = [&] {
    if (attn::forward_f32(plan, w, mask, io, arena) != attn::Status::kOk) std::exit(1);
  };
  // Calibrate: forwards per sample so that one sample lasts about 2 ms.
  once();
  int inner = 1;
  for (;;) {
    const auto t0 = clock::now();
    for (int i = 0; i < inner; ++i) once();
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (ms >= 2.0 || inner >= (1 << 20)) break;
    inner *= 2;
  }
  std::vector<double> wall, cpu;
  const auto start = clock::now();
  while (wall.size() < 15 ||
         std::chrono::duration<double, std::milli>(clock::now() - start).count() < min_ms) {
    const auto t0 = clock::now();
    const double c0 = cpu_us();
    for (int i = 0; i < inner; ++i) once();
    cpu.push_back((cpu_us() - c0) / inner);
    wall.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count() / inner);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  const double med = wall[wall.size() / 2], med_cpu = cpu[cpu.size() / 2];
  const double flops = 8.0 * s.L * s.E * s.E + 4.0 * s.L * s.L * s.E;
  return {med, med_cpu, flops / med_cpu * 1e-3, plan.arena_bytes, plan.tile_rows};
}

}  // namespace

int main(int argc, char** argv) {
  double min_ms = 300.0;
  int tile_rows = 0;  // 0: the default ATTN_TILE_ROWS
  std::vector<Shape> shapes;
  std::vector<int> dims;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--min-ms") == 0 && i + 1 < argc) {
      min_ms = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--tile-rows") == 0 && i + 1 < argc) {
      tile_rows = std::atoi(argv[++i]);
    } else {
      dims.push_back(std::atoi(argv[i]));
    }
  }
  for (size_t i = 0; i + 2 < dims.size(); i += 3) shapes.push_back({dims[i], dims[i + 1], dims[i + 2]});
  if (shapes.empty()) shapes = {{16, 64, 4}, {64, 64, 4}, {128, 128, 4}, {256, 256, 8}, {512, 256, 8}};

  std::printf("# attn f32 forward, self-attention (S = L), single thread, kernels=%s\n",
              attn::detail::kernel_set_f32());
  std::printf("%6s %6s %4s %6s %12s %12s %10s %12s\n", "L", "E", "H", "tile", "wall_us", "cpu_us", "GFLOP/s",
              "arena_bytes");
  for (const Shape& s : shapes) {
    const Result r = run(s, tile_rows, min_ms);
    std::printf("%6d %6d %4d %6d %12.2f %12.2f %10.2f %12zu\n", s.L, s.E, s.H, r.tile_rows, r.median_us,
                r.median_cpu_us, r.gflops, r.arena_bytes);
    std::fflush(stdout);
  }
  return 0;
}
