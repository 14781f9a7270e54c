// attn_bench_decode: per-token cost of incremental decoding over a KV cache
// against recomputing, float32, single thread, on the host.
//
//   attn_bench_decode            about 3 s per context
//   attn_bench_decode --quick    about 0.6 s per context
//   attn_bench_decode --wall     wall-clock time instead of thread CPU time
//
// Config: stories260K-class attention (llama2.c): dim 64, 8 heads, 4 KV
// heads (head_dim 8), RoPE theta 10000, no biases.
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
// forward (golden bound), so the timed step computes the right thing.
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

#include <time.h>

#include "attn/attention.h"
#include "attn/decode.h"
#include "internal/kernels_f32.h"

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
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

std::vector<float> random_vector(std::mt19937& rng, size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// `bytes` usable bytes at an ATTN_ARENA_ALIGN-aligned address.
struct AlignedBuffer {
  std::vector<unsigned char> raw;
  unsigned char* data = nullptr;
  explicit AlignedBuffer(size_t bytes) : raw(bytes + ATTN_ARENA_ALIGN) {
    void* p = raw.data();
    size_t space = raw.size();
    data = static_cast<unsigned char*>(std::align(ATTN_ARENA_ALIGN, bytes, p, space));
  }
};

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

bool bench(int32_t C, double target_s, Row* out) {
  attn::AttentionConfig cfg;
  cfg.embed_dim = 64;
  cfg.num_heads = 8;
  cfg.num_kv_heads = 4;
  cfg.bias = false;
  cfg.rope_base = 10000.0f;
  const size_t E = static_cast<size_t>(cfg.embed_dim), D = static_cast<size_t>(cfg.inner_dim());
  const size_t Dkv = static_cast<size_t>(cfg.kv_dim()), c = static_cast<size_t>(C);

  std::mt19937 rng(4321u + static_cast<unsigned>(C));
  const float ws = 1.0f / std::sqrt(static_cast<float>(E));
  const std::vector<float> wq = random_vector(rng, D * E, ws);    // [D, E]
  const std::vector<float> wk = random_vector(rng, Dkv * E, ws);  // [Dkv, E]
  const std::vector<float> wv = random_vector(rng, Dkv * E, ws);  // [Dkv, E]
  const std::vector<float> wo = random_vector(rng, E * D, ws);    // [E, D]
  const std::vector<float> x = random_vector(rng, c * E, 1.0f);   // [C, E]: the tokens
  attn::WeightsF32 w;
  w.wq = wq.data();
  w.wk = wk.data();
  w.wv = wv.data();
  w.wo = wo.data();
  const float* last = x.data() + (c - 1) * E;  // [1, E]: token C - 1

  // --- decode: cache of C rows, C - 1 prefilled, one step timed.
  attn::Plan dplan;
  if (!ok(attn::plan_decode(cfg, attn::DType::kF32, C - 1 > 0 ? C - 1 : 1, C, &dplan), "plan_decode"))
    return false;
  const size_t cache_bytes = attn::kv_cache_arena_bytes(cfg, attn::DType::kF32, C);
  AlignedBuffer dbuf(cache_bytes + dplan.arena_bytes);
  attn::Arena darena;
  if (!ok(darena.init(dbuf.data, cache_bytes + dplan.arena_bytes), "arena.init")) return false;
  attn::KvCacheF32 cache;
  if (!ok(attn::kv_cache_init_f32(dplan, 0, darena, &cache), "kv_cache_init_f32")) return false;
  std::vector<float> yp(c * E);  // [C - 1, E] prefill outputs (unused)
  if (C > 1 && !ok(attn::decode_f32(dplan, w, &cache, x.data(), C - 1, yp.data(), darena), "prefill"))
    return false;
  const attn::KvCacheF32 at_c_minus_1 = cache;  // the handle of the cache holding C - 1 rows
  std::vector<float> y_step(E);                 // [1, E]
  out->decode_us = median_us(
      [&]() -> double {
        cache = at_c_minus_1;
        const double a = now_us();
        const attn::Status st = attn::decode_f32(dplan, w, &cache, last, 1, y_step.data(), darena);
        const double us = now_us() - a;
        return ok(st, "decode_f32") && cache.length == C ? us : -1.0;
      },
      target_s, &out->decode_runs);
  if (out->decode_us < 0) return false;

  // --- recompute: one causal forward over C rows per token.
  attn::Plan fplan;
  if (!ok(attn::plan_attention(cfg, attn::DType::kF32, C, C, &fplan), "plan_attention")) return false;
  AlignedBuffer fbuf(fplan.arena_bytes);
  attn::Arena farena;
  if (!ok(farena.init(fbuf.data, fplan.arena_bytes), "arena.init")) return false;
  std::vector<float> y_full(c * E);  // [C, E]
  attn::Mask causal;
  causal.causal = true;
  attn::IoF32 fio;
  fio.query = fio.key = fio.value = x.data();
  fio.output = y_full.data();
  out->recompute_us = median_us(
      [&]() -> double {
        const double a = now_us();
        const attn::Status st = attn::forward_f32(fplan, w, causal, fio, farena);
        const double us = now_us() - a;
        return ok(st, "forward_f32") ? us : -1.0;
      },
      target_s, &out->recompute_runs);
  if (out->recompute_us < 0) return false;

  // --- kv-only recompute: K, V of all C rows, the last query row only.
  attn::Plan kplan;
  if (!ok(attn::plan_attention(cfg, attn::DType::kF32, 1, C, &kplan), "plan_attention")) return false;
  AlignedBuffer kbuf(kplan.arena_bytes);
  attn::Arena karena;
  if (!ok(karena.init(kbuf.data, kplan.arena_bytes), "arena.init")) return false;
  std::vector<float> y_kv(E);  // [1, E]
  attn::Mask last_row;
  last_row.causal = true;
  last_row.causal_offset = C - 1;
  attn::IoF32 kio;
  kio.query = last;
  kio.key = kio.value = x.data();
  kio.output = y_kv.data();
  kio.query_position = C - 1;
  out->kv_only_us = median_us(
      [&]() -> double {
        const double a = now_us();
        const attn::Status st = attn::forward_f32(kplan, w, last_row, kio, karena);
        const double us = now_us() - a;
        return ok(st, "forward_f32 (kv-only)") ? us : -1.0;
      },
      target_s, &out->kv_only_runs);
  if (out->kv_only_us < 0) return false;

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
  out->context = C;
  out->cache_bytes = cache_bytes;
  out->step_bytes = dplan.arena_bytes;
  out->check_rel = ref > 0 ? std::max(err, err_kv) / ref : 0;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double target_s = 1.0;  // per measured quantity: three per context
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      target_s = 0.2;
    } else if (std::strcmp(argv[i], "--wall") == 0) {
      g_wall = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--wall]\n", argv[0]);
      return 2;
    }
  }
  std::printf(
      "attn f32 incremental decoding, stories260K-class attention: dim 64, 8 heads, 4 KV heads (head_dim "
      "8),\n"
      "RoPE theta 10000, no bias; single thread, kernels: %s, tile rows %d.\n"
      "Medians per token at context C, in %s.\n",
      attn::detail::kernel_set_f32(), ATTN_TILE_ROWS,
      g_wall ? "wall-clock time" : "thread CPU time (--wall for wall-clock)");
  char header[200];
  const int n = std::snprintf(header, sizeof header, "%6s | %10s %11s | %13s %8s | %11s %8s | %9s %9s | %8s",
                              "C", "decode us", "ns/position", "recompute us", "x decode", "kv-only us",
                              "x decode", "cache B", "step B", "dec runs");
  std::printf("%s\n%s\n", header, std::string(static_cast<size_t>(n), '-').c_str());
  std::vector<Row> rows;
  for (const int32_t C : kContexts) {
    Row r;
    if (!bench(C, target_s, &r)) return 1;
    std::printf("%6d | %10.2f %11.2f | %13.1f %8.1f | %11.2f %8.1f | %9zu %9zu | %8d\n", C, r.decode_us,
                1e3 * r.decode_us / C, r.recompute_us, r.recompute_us / r.decode_us, r.kv_only_us,
                r.kv_only_us / r.decode_us, r.cache_bytes, r.step_bytes, r.decode_runs);
    std::fflush(stdout);
    rows.push_back(r);
  }
  // Linear in C: the slope between successive contexts (marginal cost of one
  // more cached position) should stay about constant, while the full
  // recompute grows about quadratically.
  std::printf("\nmarginal decode cost per added cached position (slope between contexts):\n");
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
  double worst = 0;
  for (const Row& r : rows) worst = std::max(worst, r.check_rel);
  std::printf("decode step output vs the full forward's last row: max rel err %.2g (bound 1e-5)\n", worst);
  return 0;
}
