// speed: median microseconds per self-attention forward in float32, int8 and
// int16 (forward_f32 / forward_s8 / forward_s16, the int8/int16 blocks
// quantized from the same float weights, calibrated on the same input),
// GFLOP/s of the f32 forward and its arena bytes, on the standard host shapes
// (tools/bench/README.md). Single thread.
//
//   attn_bench_speed [--min-ms N] [--tile-rows T] [L E H ...]
//
// FLOPs per forward = 8*L*E^2 + 4*L*S*E (S = L): four projections and the two
// attention products, multiply-adds counted as 2. Each sample times enough
// forwards to last about 2 ms; the medians over the samples are printed, of
// wall time and of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: on a
// shared, loaded machine it leaves out the time other processes held the
// core; GFLOP/s is computed from it). The header names the kernel set.
//
// The f32 columns time forward_f32 on weights packed once (pack_weights_f32,
// as a host application would run it); unpacked_us times it on the weights
// as stored. The samples of the four forwards (f32 packed, f32 as stored, s8,
// s16) alternate, so that f32 / s8 compares samples taken side by side.

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "bench/cpu_time.h"
#include "bench/kernel_names.h"
#include "kernels/kernels_f32.h"
#include "kernels/kernels_fixed.h"

namespace {

struct Shape {
  int L, E, H;
};

using attn_bench::cpu_us;

struct Result {
  double median_us;  // wall
  double median_cpu_us;
  double gflops;
  size_t arena_bytes;
  int tile_rows;
  double s8_cpu_us;        // median CPU us of forward_s8
  double s16_cpu_us;       // median CPU us of forward_s16
  double unpacked_cpu_us;  // median CPU us of forward_f32 on weights not packed
};

struct Times {
  double wall_us, cpu_us;  // medians per call
};

// Median wall and thread-CPU microseconds per call of each of once[0 .. n):
// their samples alternate, so a noisy neighbour slows them alike.
template <class F, size_t n>
std::array<Times, n> time_alternating(const std::array<F, n>& once, double min_ms) {
  using clock = std::chrono::steady_clock;
  // Calibrate on the first: calls per sample so that one sample lasts about 2 ms.
  for (const F& f : once) f();
  int inner = 1;
  for (;;) {
    const auto t0 = clock::now();
    for (int i = 0; i < inner; ++i) once[0]();
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (ms >= 2.0 || inner >= (1 << 20)) break;
    inner *= 2;
  }
  std::array<std::vector<double>, n> wall, cpu;
  const auto start = clock::now();
  while (wall[0].size() < 15 ||
         std::chrono::duration<double, std::milli>(clock::now() - start).count() < min_ms * n) {
    for (size_t k = 0; k < n; ++k) {
      const auto t0 = clock::now();
      const double c0 = cpu_us();
      for (int i = 0; i < inner; ++i) once[k]();
      cpu[k].push_back((cpu_us() - c0) / inner);
      wall[k].push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count() / inner);
    }
  }
  std::array<Times, n> t{};
  for (size_t k = 0; k < n; ++k) {
    std::sort(wall[k].begin(), wall[k].end());
    std::sort(cpu[k].begin(), cpu[k].end());
    t[k] = {wall[k][wall[k].size() / 2], cpu[k][cpu[k].size() / 2]};
  }
  return t;
}

// n bytes of `storage` at an ATTN_ARENA_ALIGN-aligned address.
void* aligned_bytes(std::vector<unsigned char>& storage, size_t n) {
  storage.assign(n + ATTN_ARENA_ALIGN, 0);
  return storage.data() +
         (ATTN_ARENA_ALIGN - reinterpret_cast<uintptr_t>(storage.data()) % ATTN_ARENA_ALIGN) %
             ATTN_ARENA_ALIGN;
}

// An arena of n bytes over `storage`.
attn::Arena make_arena(std::vector<unsigned char>& storage, size_t n) {
  void* base = aligned_bytes(storage, n);
  attn::Arena arena;
  if (arena.init(base, n) != attn::Status::kOk) std::exit(1);
  return arena;
}

void check(attn::Status st, const char* what) {
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "%s failed: %s\n", what, attn::status_name(st));
    std::exit(1);
  }
}

// forward_s8 (dt kS8) or forward_s16 on x, the block quantized from w:
// call() runs one forward. Owns its buffers (not copyable: the views point into them).
struct FixedForward {
  attn::DType dt;
  attn::Plan plan;
  std::vector<unsigned char> store_mem, arena_mem;
  attn::Arena arena;
  attn::WeightsS8 w8;
  attn::WeightsS16 w16;
  std::vector<int8_t> x8, y8;
  std::vector<int16_t> x16, y16;

  FixedForward(attn::DType dt_, const attn::AttentionConfig& cfg, const attn::WeightsF32& w, int L,
               const std::vector<float>& x)
      : dt(dt_) {
    // Calibrate on x, quantize the block and the input.
    attn::Plan fplan;
    check(attn::plan_attention(cfg, attn::DType::kF32, L, L, &fplan), "plan f32");
    std::vector<unsigned char> cal_mem;
    attn::Arena cal = make_arena(cal_mem, attn::calibrate_attention_arena_bytes(cfg, L, L));
    attn::CalibrationRanges ranges;
    std::vector<float> y(x.size());
    check(attn::calibrate_attention(fplan, w, attn::Mask(), {x.data(), x.data(), x.data(), y.data()}, cal,
                                    &ranges),
          "calibrate");
    attn::Arena store = make_arena(store_mem, attn::quantize_attention_storage_bytes(cfg, dt));
    attn::ActivationQuant act;
    if (dt == attn::DType::kS8) {
      check(attn::quantize_attention_s8(cfg, w, ranges, store, &w8, &act), "quantize s8");
    } else {
      check(attn::quantize_attention_s16(cfg, w, ranges, store, &w16, &act), "quantize s16");
    }
    check(attn::plan_attention(cfg, dt, L, L, &plan), "plan fixed");
    arena = make_arena(arena_mem, plan.arena_bytes);
    x8.resize(x.size()), y8.resize(x.size()), x16.resize(x.size()), y16.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x8[i] = static_cast<int8_t>(attn::quantize_value(x[i], act.query, attn::DType::kS8));
      x16[i] = static_cast<int16_t>(attn::quantize_value(x[i], act.query, attn::DType::kS16));
    }
  }
  FixedForward(const FixedForward&) = delete;
  FixedForward& operator=(const FixedForward&) = delete;

  void call() {
    const attn::Mask mask;
    if (dt == attn::DType::kS8) {
      const attn::IoS8 io{x8.data(), x8.data(), x8.data(), y8.data()};
      check(attn::forward_s8(plan, w8, mask, io, arena), "forward_s8");
    } else {
      const attn::IoS16 io{x16.data(), x16.data(), x16.data(), y16.data()};
      check(attn::forward_s16(plan, w16, mask, io, arena), "forward_s16");
    }
  }
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
  std::vector<unsigned char> storage;
  attn::Arena arena = make_arena(storage, plan.arena_bytes);
  const attn::WeightsF32 w{wq.data(), wk.data(), wv.data(), wo.data(),
                           bq.data(), bk.data(), bv.data(), bo.data()};
  const attn::IoF32 io{x.data(), x.data(), x.data(), y.data()};
  const attn::Mask mask;

  // The f32 forward as a host application runs it, with the weights packed
  // once (pack_weights_f32), and with the weights as stored.
  size_t packed_bytes = 0;
  check(attn::pack_weights_f32_storage_bytes(plan, &packed_bytes), "pack_weights_f32_storage_bytes");
  std::vector<unsigned char> packed_mem;
  void* packed_buf = packed_bytes > 0 ? aligned_bytes(packed_mem, packed_bytes) : nullptr;
  attn::WeightsF32 wp;
  check(attn::pack_weights_f32(plan, w, packed_buf, packed_bytes, &wp), "pack_weights_f32");
  FixedForward s8(attn::DType::kS8, cfg, w, s.L, x), s16(attn::DType::kS16, cfg, w, s.L, x);
  // Samples of the four alternate (a noisy neighbour slows them alike).
  const std::array<std::function<void()>, 4> forwards{
      [&] { check(attn::forward_f32(plan, wp, mask, io, arena), "forward_f32 packed"); },
      [&] { check(attn::forward_f32(plan, w, mask, io, arena), "forward_f32"); }, [&] { s8.call(); },
      [&] { s16.call(); }};
  const std::array<Times, 4> t = time_alternating(forwards, min_ms);
  const double med = t[0].wall_us, med_cpu = t[0].cpu_us;
  const double flops = 8.0 * s.L * s.E * s.E + 4.0 * s.L * s.L * s.E;
  const double s8_us = t[2].cpu_us, s16_us = t[3].cpu_us;
  return {med, med_cpu, flops / med_cpu * 1e-3, plan.arena_bytes, plan.tile_rows, s8_us, s16_us, t[1].cpu_us};
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

  std::printf(
      "# wall_us/cpu_us/GFLOP/s/arena_bytes: f32, packed weights; s8_us, s16_us: CPU us; f32/s8: cpu_us / "
      "s8_us;"
      " unpacked_us: f32 CPU us, weights as stored\n");
  // Last header line: tools/bench/bench_vs_torch.py prints it.
  std::printf("# attn forwards, self-attention (S = L), single thread, kernels %s\n",
              attn_bench::all_kernel_names().c_str());
  std::printf("%6s %6s %4s %6s %12s %12s %10s %12s %12s %12s %8s %12s\n", "L", "E", "H", "tile", "wall_us",
              "cpu_us", "GFLOP/s", "arena_bytes", "s8_us", "s16_us", "f32/s8", "unpacked_us");
  for (const Shape& s : shapes) {
    const Result r = run(s, tile_rows, min_ms);
    std::printf("%6d %6d %4d %6d %12.2f %12.2f %10.2f %12zu %12.2f %12.2f %8.2f %12.2f\n", s.L, s.E, s.H,
                r.tile_rows, r.median_us, r.median_cpu_us, r.gflops, r.arena_bytes, r.s8_cpu_us, r.s16_cpu_us,
                r.median_cpu_us / r.s8_cpu_us, r.unpacked_cpu_us);
    std::fflush(stdout);
  }
  return 0;
}
