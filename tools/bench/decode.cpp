// attn_bench_decode: per-token cost of incremental decoding over a KV cache
// against recomputing, in float32, int8 and int16, single thread, on the host.
//
//   attn_bench_decode            about 3 s per context and dtype
//   attn_bench_decode --quick    about 0.6 s per context and dtype
//   attn_bench_decode --wall     wall-clock time instead of thread CPU time
//   attn_bench_decode --dtype s8 one dtype only (f32, s8 or s16)
//
// Config: stories260K-class attention (llama2.c): dim 64, 8 heads, 4 KV
// heads (head_dim 8), RoPE theta 10000, no biases. s8 / s16: the same float
// weights quantized by the library's converter (calibrated on the tokens,
// RoPE tables of 1024 positions).
//
// At context C, one "token" is the step that makes position C - 1 attend
// over C positions:
//   decode     the cache holds the C - 1 earlier positions (one prefill
//              call); decode_f32 appends one row and attends it. A decode
//              call without a window writes only cache rows >= length, so
//              restoring the cache handle (KvCacheF32 is a plain struct)
//              after each timed step puts the cache back to C - 1 rows:
//              every sample runs at exactly context C.
//   recompute  what a decoder without a cache does for the same token: one
//              causal forward_f32 over all C rows.
//   kv-only    the cheapest recompute: K and V of all C rows again, one query
//              row (forward_f32 with L = 1, S = C, causal_offset = C - 1).
// Each sample is timed on its own, by default in CPU time of the calling
// thread (CLOCK_THREAD_CPUTIME_ID): on a shared, oversubscribed host the wall
// time of a long sample (a full recompute takes 100+ ms) counts the time
// other processes ran; --wall uses std::chrono::steady_clock. The table
// gives medians. The decode output is checked against row C - 1 of the full
// forward (golden bound; s8 / s16: bit-exact), so the timed step computes
// the right thing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/quantize.h"
#include "bench/cpu_time.h"
#include "bench/kernel_names.h"
#include "fixed_dtypes.h"
#include "host_helpers.h"
#include "kernels/kernels_f32.h"
#include "kernels/kernels_fixed.h"

namespace {

constexpr int32_t kContexts[] = {64, 256, 1024};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool g_wall = false;  // --wall: time samples with steady_clock instead of thread CPU time

// A timestamp in microseconds, of the clock samples are timed with.
double now_us() {
  if (g_wall) return std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count();
  return attn_bench::cpu_us();
}

std::vector<float> random_vector(std::mt19937& rng, size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

bool ok(attn::Status st, const char* what) {
  if (st == attn::Status::kOk) return true;
  std::fprintf(stderr, "%s: %s\n", what, attn::status_name(st));
  return false;
}

// Median microseconds of `sample` (which times itself and returns us, or a
// negative value on error) over about `target_s` seconds, at least 5 samples.
double median_us(const std::function<double()>& sample, double target_s, int* runs) {
  std::vector<double> us;
  Clock::time_point t0 = Clock::now();
  for (int warm = 0; warm < 2 || seconds_since(t0) < 0.1 * target_s; ++warm) {
    if (sample() < 0) return -1;
  }
  t0 = Clock::now();
  while (us.size() < 5 || (seconds_since(t0) < target_s && us.size() < 1000000)) {
    const double t = sample();
    if (t < 0) return -1;
    us.push_back(t);
  }
  const size_t mid = us.size() / 2;
  std::nth_element(us.begin(), us.begin() + static_cast<ptrdiff_t>(mid), us.end());
  *runs = static_cast<int>(us.size());
  return us[mid];
}

struct Row {
  int32_t context = 0;
  double decode_us = 0, recompute_us = 0, kv_only_us = 0;
  int decode_runs = 0, recompute_runs = 0, kv_only_runs = 0;
  size_t cache_bytes = 0, step_bytes = 0;
  double check_rel = 0;  // max |decode - forward| / max |forward| over the step's row
};

attn::AttentionConfig stories_config(bool rope) {
  attn::AttentionConfig cfg;
  cfg.embed_dim = 64;
  cfg.num_heads = 8;
  cfg.num_kv_heads = 4;
  cfg.bias = false;
  cfg.rope_base = rope ? 10000.0f : 0.0f;
  return cfg;
}

// Random float weights and C tokens of the bench config.
struct FloatCase {
  attn::AttentionConfig cfg;
  std::vector<float> wq, wk, wv, wo, x;  // [D, E], [Dkv, E], [Dkv, E], [E, D], [C, E]
  attn::WeightsF32 weights() const { return weights_f32(wq, wk, wv, wo); }
};

FloatCase make_case(const attn::AttentionConfig& cfg, int32_t C) {
  const size_t E = static_cast<size_t>(cfg.embed_dim), D = static_cast<size_t>(cfg.inner_dim());
  const size_t Dkv = static_cast<size_t>(cfg.kv_dim()), c = static_cast<size_t>(C);
  std::mt19937 rng(4321u + static_cast<unsigned>(C));
  const float ws = 1.0f / std::sqrt(static_cast<float>(E));
  FloatCase fc;
  fc.cfg = cfg;
  fc.wq = random_vector(rng, D * E, ws);
  fc.wk = random_vector(rng, Dkv * E, ws);
  fc.wv = random_vector(rng, Dkv * E, ws);
  fc.wo = random_vector(rng, E * D, ws);
  fc.x = random_vector(rng, c * E, 1.0f);
  return fc;
}

// The float dtype's entries in the shape of dtypes::S8 / S16 (fixed_dtypes.h),
// so that one timing body serves all three dtypes.
struct F32 {
  using T = float;
  using Weights = attn::WeightsF32;
  using Io = attn::IoF32;
  using Cache = attn::KvCacheF32;
  static constexpr attn::DType kDtype = attn::DType::kF32;
  static constexpr const char* kName = "f32";
  static attn::Status forward(const attn::Plan& p, const Weights& w, const attn::Mask& m, const Io& io,
                              attn::Arena& a) {
    return attn::forward_f32(p, w, m, io, a);
  }
  static attn::Status init(const attn::Plan& p, int32_t window, attn::Arena& a, Cache* c) {
    return attn::kv_cache_init_f32(p, window, a, c);
  }
  static attn::Status decode(const attn::Plan& p, const Weights& w, Cache* c, const T* x, int32_t n, T* y,
                             attn::Arena& a) {
    return attn::decode_f32(p, w, c, x, n, y, a);
  }
};

// Self-attention inputs q (rows from query_position on) over keys and values kv, into y.
template <class DT>
typename DT::Io self_io(const typename DT::T* q, const typename DT::T* kv, typename DT::T* y,
                        int32_t query_position = 0) {
  typename DT::Io io;
  io.query = q;
  io.key = io.value = kv;
  io.output = y;
  io.query_position = query_position;
  return io;
}

// What the three timed ways give for the tokens: the C - 1 prefill rows, the
// decode step of row C - 1, the full forward's C rows, the kv-only row C - 1.
template <class T>
struct Outputs {
  std::vector<T> prefill, step, full, kv_only;
};

// The three measurements of one dtype on tokens x [C, E]: decode (a cache of C
// rows, C - 1 prefilled, one step timed), the full causal recompute over C rows,
// and the kv-only recompute of the last query row. Sets out's times, runs,
// context and bytes; the outputs in *y.
template <class DT>
bool time_three(const attn::AttentionConfig& cfg, const typename DT::Weights& w,
                const std::vector<typename DT::T>& x, int32_t C, double target_s, Row* out,
                Outputs<typename DT::T>* y) {
  using T = typename DT::T;
  const size_t E = static_cast<size_t>(cfg.embed_dim), c = static_cast<size_t>(C);
  const T* last = x.data() + (c - 1) * E;  // [1, E]: token C - 1

  // --- decode
  attn::Plan dplan;
  if (!ok(attn::plan_decode(cfg, DT::kDtype, C - 1 > 0 ? C - 1 : 1, C, &dplan), "plan_decode")) return false;
  const size_t cache_bytes = attn::kv_cache_arena_bytes(cfg, DT::kDtype, C);
  AlignedBuffer dbuf(cache_bytes + dplan.arena_bytes);
  attn::Arena darena;
  if (!ok(darena.init(dbuf.data, cache_bytes + dplan.arena_bytes), "arena.init")) return false;
  typename DT::Cache cache;
  if (!ok(DT::init(dplan, 0, darena, &cache), "kv_cache_init")) return false;
  y->prefill.resize(c * E);  // [C - 1, E]
  if (C > 1 && !ok(DT::decode(dplan, w, &cache, x.data(), C - 1, y->prefill.data(), darena), "prefill"))
    return false;
  const typename DT::Cache at_c_minus_1 = cache;  // the handle of the cache holding C - 1 rows
  y->step.resize(E);                              // [1, E]
  out->decode_us = median_us(
      [&]() -> double {
        cache = at_c_minus_1;
        const double a = now_us();
        const attn::Status st = DT::decode(dplan, w, &cache, last, 1, y->step.data(), darena);
        const double us = now_us() - a;
        return ok(st, "decode") && cache.length == C ? us : -1.0;
      },
      target_s, &out->decode_runs);
  if (out->decode_us < 0) return false;

  // One forward of `rows` query rows over all C rows (query row 0 at `first`),
  // planned and timed: its median microseconds, -1 on failure.
  const auto time_forward = [&](int32_t rows, int32_t first, std::vector<T>* yo, const char* what,
                                int* runs) {
    attn::Plan plan;
    if (!ok(attn::plan_attention(cfg, DT::kDtype, rows, C, &plan), "plan_attention")) return -1.0;
    AlignedBuffer buf(plan.arena_bytes);
    attn::Arena arena;
    if (!ok(arena.init(buf.data, plan.arena_bytes), "arena.init")) return -1.0;
    yo->resize(static_cast<size_t>(rows) * E);
    attn::Mask mask;
    mask.causal = true;
    mask.causal_offset = first;
    const typename DT::Io io =
        self_io<DT>(x.data() + static_cast<size_t>(first) * E, x.data(), yo->data(), first);
    return median_us(
        [&]() -> double {
          const double a = now_us();
          const attn::Status st = DT::forward(plan, w, mask, io, arena);
          const double us = now_us() - a;
          return ok(st, what) ? us : -1.0;
        },
        target_s, runs);
  };
  // --- recompute: one causal forward over C rows.
  out->recompute_us = time_forward(C, 0, &y->full, "forward", &out->recompute_runs);
  if (out->recompute_us < 0) return false;
  // --- kv-only recompute: K, V of all C rows, the last query row only.
  out->kv_only_us = time_forward(1, C - 1, &y->kv_only, "forward (kv-only)", &out->kv_only_runs);
  if (out->kv_only_us < 0) return false;
  out->context = C;
  out->cache_bytes = cache_bytes;
  out->step_bytes = dplan.arena_bytes;
  return true;
}

bool bench(int32_t C, double target_s, Row* out) {
  const FloatCase fc = make_case(stories_config(true), C);
  const attn::AttentionConfig& cfg = fc.cfg;
  const size_t E = static_cast<size_t>(cfg.embed_dim), c = static_cast<size_t>(C);
  const std::vector<float>& x = fc.x;
  const attn::WeightsF32 w = fc.weights();

  Outputs<float> y;
  if (!time_three<F32>(cfg, w, x, C, target_s, out, &y)) return false;
  const std::vector<float>&y_step = y.step, &y_full = y.full, &y_kv = y.kv_only;

  // The timed decode step and the kv-only row must equal row C - 1 of the full forward.
  double err = 0, err_kv = 0, ref = 0;
  for (size_t j = 0; j < E; ++j) {
    const double want = y_full[(c - 1) * E + j];
    ref = std::max(ref, std::fabs(want));
    err = std::max(err, std::fabs(static_cast<double>(y_step[j]) - want));
    err_kv = std::max(err_kv, std::fabs(static_cast<double>(y_kv[j]) - want));
  }
  if (!(err <= 1e-5 * ref + 1e-6) || !(err_kv <= 1e-5 * ref + 1e-6)) {
    std::fprintf(stderr,
                 "context %d: decode differs from the full forward (err %.3g, kv-only %.3g, max %.3g)\n", C,
                 err, err_kv, ref);
    return false;
  }
  out->check_rel = ref > 0 ? std::max(err, err_kv) / ref : 0;
  return true;
}

using dtypes::S16;
using dtypes::S8;

// The same three measurements in fixed point: the float case quantized by
// the library's converter, calibrated on its own tokens (causal).
template <class DT>
bool bench_fixed(int32_t C, double target_s, Row* out) {
  using T = typename DT::T;
  const FloatCase fc = make_case(stories_config(true), C);
  const attn::AttentionConfig& cfg = fc.cfg;
  const size_t E = static_cast<size_t>(cfg.embed_dim), c = static_cast<size_t>(C);

  // Calibrate and quantize (RoPE tables for the largest context).
  attn::Plan cplan;
  if (!ok(attn::plan_attention(cfg, attn::DType::kF32, C, C, &cplan), "plan_attention")) return false;
  const size_t cal_bytes = attn::calibrate_attention_arena_bytes(cfg, C, C);
  AlignedBuffer cbuf(cal_bytes);
  attn::Arena carena;
  if (!ok(carena.init(cbuf.data, cal_bytes), "arena.init")) return false;
  attn::Mask causal;
  causal.causal = true;
  attn::CalibrationRanges ranges;
  attn::IoF32 cio;
  cio.query = cio.key = cio.value = fc.x.data();
  if (!ok(attn::calibrate_attention(cplan, fc.weights(), causal, cio, carena, &ranges), "calibrate"))
    return false;
  attn::QuantizeOptions options;
  options.max_positions = kContexts[sizeof kContexts / sizeof kContexts[0] - 1];
  const size_t st_bytes = attn::quantize_attention_storage_bytes(cfg, DT::kDtype, options);
  AlignedBuffer sbuf(st_bytes);
  attn::Arena storage;
  if (!ok(storage.init(sbuf.data, st_bytes), "arena.init")) return false;
  typename DT::Weights w;
  attn::ActivationQuant act;
  if (!ok(DT::quantize(cfg, fc.weights(), ranges, storage, &w, &act, options), "quantize")) return false;
  std::vector<T> x(c * E);  // [C, E]
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<T>(attn::quantize_value(fc.x[i], act.query, DT::kDtype));

  Outputs<T> y;
  if (!time_three<DT>(cfg, w, x, C, target_s, out, &y)) return false;
  const std::vector<T>&y_step = y.step, &y_full = y.full, &y_kv = y.kv_only, &yp = y.prefill;

  // Bit-exact: the decode step, the kv-only row and the prefill rows against the full forward.
  const bool step_same =
      std::equal(y_step.begin(), y_step.end(), y_full.begin() + static_cast<ptrdiff_t>((c - 1) * E));
  const bool kv_same =
      std::equal(y_kv.begin(), y_kv.end(), y_full.begin() + static_cast<ptrdiff_t>((c - 1) * E));
  const bool prefill_same =
      std::equal(yp.begin(), yp.begin() + static_cast<ptrdiff_t>((c - 1) * E), y_full.begin());
  if (!step_same || !kv_same || !prefill_same) {
    std::fprintf(stderr,
                 "context %d: %s decode differs from the full forward (step %d, kv-only %d, prefill %d)\n", C,
                 DT::kName, step_same, kv_same, prefill_same);
    return false;
  }
  out->check_rel = 0;
  return true;
}

void print_header(const char* dtype) {
  char header[200];
  const int n =
      std::snprintf(header, sizeof header, "%4s %6s | %10s %11s | %13s %8s | %11s %8s | %9s %9s | %8s", "",
                    "C", "decode us", "ns/position", "recompute us", "x decode", "kv-only us", "x decode",
                    "cache B", "step B", "dec runs");
  std::printf("%s\n%s\n", header, std::string(static_cast<size_t>(n), '-').c_str());
  (void)dtype;
}

void print_row(const char* dtype, const Row& r) {
  std::printf("%4s %6d | %10.2f %11.2f | %13.1f %8.1f | %11.2f %8.1f | %9zu %9zu | %8d\n", dtype, r.context,
              r.decode_us, 1e3 * r.decode_us / r.context, r.recompute_us, r.recompute_us / r.decode_us,
              r.kv_only_us, r.kv_only_us / r.decode_us, r.cache_bytes, r.step_bytes, r.decode_runs);
  std::fflush(stdout);
}

// Linear in C: the slope between successive contexts (marginal cost of one
// more cached position) should stay about constant, while the full
// recompute grows about quadratically.
void print_slopes(const char* dtype, const std::vector<Row>& rows) {
  std::printf("%s: marginal decode cost per added cached position (slope between contexts):\n", dtype);
  for (size_t i = 1; i < rows.size(); ++i) {
    const Row& a = rows[i - 1];
    const Row& b = rows[i];
    const double slope_ns = 1e3 * (b.decode_us - a.decode_us) / (b.context - a.context);
    std::printf("  C %4d -> %4d: decode %+.2f ns/position (x%.2f time for x%.0f context), recompute x%.1f\n",
                a.context, b.context, slope_ns, b.decode_us / a.decode_us,
                static_cast<double>(b.context) / a.context, b.recompute_us / a.recompute_us);
  }
  const Row& lo = rows.front();
  const Row& hi = rows.back();
  const double slope = (hi.decode_us - lo.decode_us) / (hi.context - lo.context);
  std::printf("  fit decode_us ~= %.2f + %.4f * C (from C = %d and %d)\n", lo.decode_us - slope * lo.context,
              slope, lo.context, hi.context);
}

}  // namespace

int main(int argc, char** argv) {
  double target_s = 1.0;  // per measured quantity: three per context
  bool run_f32 = true, run_s8 = true, run_s16 = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      target_s = 0.2;
    } else if (std::strcmp(argv[i], "--wall") == 0) {
      g_wall = true;
    } else if (std::strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
      const std::string d = argv[++i];
      run_f32 = d == "f32";
      run_s8 = d == "s8";
      run_s16 = d == "s16";
      if (!run_f32 && !run_s8 && !run_s16) {
        std::fprintf(stderr, "--dtype: f32, s8 or s16\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--wall] [--dtype f32|s8|s16]\n", argv[0]);
      return 2;
    }
  }
  std::printf(
      "attn incremental decoding, stories260K-class attention: dim 64, 8 heads, 4 KV heads (head_dim 8),\n"
      "no bias, RoPE theta 10000 (s8/s16: the converter's tables); single thread,\n"
      "kernels %s, tile rows %d.\n"
      "Medians per token at context C, in %s.\n",
      attn_bench::all_kernel_names().c_str(), ATTN_TILE_ROWS,
      g_wall ? "wall-clock time" : "thread CPU time (--wall for wall-clock)");
  print_header("");
  std::vector<Row> f32_rows, s8_rows, s16_rows;
  for (const int32_t C : kContexts) {
    Row r;
    if (run_f32) {
      if (!bench(C, target_s, &r)) return 1;
      print_row("f32", r);
      f32_rows.push_back(r);
    }
    if (run_s8) {
      if (!bench_fixed<S8>(C, target_s, &r)) return 1;
      print_row("s8", r);
      s8_rows.push_back(r);
    }
    if (run_s16) {
      if (!bench_fixed<S16>(C, target_s, &r)) return 1;
      print_row("s16", r);
      s16_rows.push_back(r);
    }
  }
  std::printf("\n");
  if (run_f32) print_slopes("f32", f32_rows);
  if (run_s8) print_slopes("s8", s8_rows);
  if (run_s16) print_slopes("s16", s16_rows);
  if (run_f32) {
    double worst = 0;
    for (const Row& r : f32_rows) worst = std::max(worst, r.check_rel);
    std::printf("f32 decode step output vs the full forward's last row: max rel err %.2g (bound 1e-5)\n",
                worst);
  }
  if (run_s8 || run_s16)
    std::printf("s8/s16 decode step and prefill outputs == the full forward's: bit-exact\n");
  return 0;
}
