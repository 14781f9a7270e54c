// cmd_run.cpp: `attn run FILE.attn --input X.npy [--kv KV.npy] [--value V.npy]
// [--causal [--window W] [--incremental [--prefill N]]] [--key-length N] [--block I] -o Y.npy`
//
//   X  [L, E] or [B, L, E] float32          the query (and, without --kv, key and value)
//   KV [S, kdim] or [B, S, kdim] float32    key input of cross-attention (and value input
//                                           unless --value V [S, vdim] / [B, S, vdim])
//   Y  X's leading dims, last dim E         float32
// Without --block every block runs, in file order, each on the previous
// block's output. --causal masks key j > query i; --key-length N ignores keys
// at index >= N (key padding). --window W (with --causal) also masks keys
// j <= i - W: each query sees the last W positions, itself included.
//
// --incremental (self-attention blocks, with --causal) decodes X through a
// KV cache per block (attn/decode.h: decode_f32, decode_s8, decode_s16): the
// first N rows (--prefill, default 0) in one call, then one row at a time,
// each row through every block before the next row. With --window W the cache
// holds min(W, L) positions and drops the oldest. Y has the full forward's
// shape and its values: within the float tolerance for f32 blocks, bit for
// bit for s8/s16 blocks (also with --raw).
//
// f32 blocks run forward_f32 (decode_f32) on their weights packed once at
// load (pack_weights_f32), where this build's kernels take packed weights.
//
// Quantized (s8/s16) blocks run forward_s8 / forward_s16: float inputs are
// quantized with the block's I/O parameters (format::Role::kIoScale and the
// zero points of kQuantParams) and the output dequantized. Between blocks the
// values travel as float; for consecutive quantized blocks that is exact, as
// `attn quantize` gives block i+1's input the parameters of block i's output.
// --raw: X, KV, V and Y are int8 ('|i1', s8) or int16 ('<i2', s16) .npy in the
// first block's input / the last block's output quantization (both blocks must
// be quantized).
//
// A whole model (format v3) takes token ids instead: `attn run MODEL.attn
// --tokens IDS.npy [--incremental [--prefill N]] -o Y.npy` (run_model.cpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/quantize.h"
#include "cli/cli.h"
#include "cli/model_exec.h"
#include "cli/npy.h"
#include "cli/quant_util.h"
#include "cli/thread_pool.h"

namespace attn {
namespace {

struct Input {
  std::string path;
  int64_t batch = 0;  // 0: no batch dim
  int64_t rows = 0, cols = 0;
  npy::BatchVector<float> data;  // [batch or 1, rows, cols]
  std::vector<int32_t> ints;     // --raw
  const float* item(int64_t b) const { return data.data() + b * rows * cols; }
};

QuantParams io_params(const Block& b, int k) { return QuantParams{b.io.scale[k], b.io.zero_point[k]}; }

// --raw: the int8/int16 values of `in` as float, dequantized with the block's I/O parameter k.
void dequantize_input(Input& in, const Block& b, int k) {
  const QuantParams p = io_params(b, k);
  in.data.resize(in.ints.size());
  for (size_t i = 0; i < in.ints.size(); ++i)
    in.data[i] =
        static_cast<float>(static_cast<double>(p.scale) * static_cast<double>(in.ints[i] - p.zero_point));
}

template <class T>
std::vector<T> quantize_rows(const float* x, size_t n, QuantParams p) {
  std::vector<T> q(n);
  tools::quantize_values(x, n, p, q.data());
  return q;
}

bool same_params(QuantParams a, QuantParams b) { return a.scale == b.scale && a.zero_point == b.zero_point; }

// The integer query, key and value inputs of one quantized forward: a key or
// value input that is the query's own data with its parameters (self-attention)
// is quantized once and shared.
template <class T>
struct QuantIo {
  std::vector<T> q, k, v;
  const T *pk = nullptr, *pv = nullptr;
  QuantIo(const Block& b, const float* xq, const float* xk, const float* xv, size_t nq, size_t nk, size_t nv)
      : q(quantize_rows<T>(xq, nq, io_params(b, 0))) {
    const auto one = [&](const float* x, size_t n, int i, std::vector<T>* own) -> const T* {
      if (x == xq && n == nq && same_params(io_params(b, i), io_params(b, 0))) return q.data();
      *own = quantize_rows<T>(x, n, io_params(b, i));
      return own->data();
    };
    pk = one(xk, nk, 1, &k);
    pv = one(xv, nv, 2, &v);
  }
};

// --stats: the saturation counts of one block's forwards (a build with
// ATTN_SATURATION_COUNTERS; without it there is nothing to count).
#if ATTN_SATURATION_COUNTERS
using Counts = SaturationCounts;
constexpr bool kCounts = true;
#else
struct Counts {};
constexpr bool kCounts = false;
#endif

// quantize -> forward (forward_s8 or forward_s16) -> dequantize with `out`.
template <class T, class Io, class Weights>
Status run_quantized(const Plan& plan, const Weights& w,
                     Status (*forward)(const Plan&, const Weights&, const Mask&, const Io&, Arena&),
                     const Block& b, const Mask& mask, const float* q, const float* k, const float* v,
                     float* y, const QuantParams& out, size_t nq, size_t nk, size_t nv, Arena& arena,
                     Counts* counts) {
  (void)counts;
  const QuantIo<T> in(b, q, k, v, nq, nk, nv);
  std::vector<T> iy(nq);
  Io io{in.q.data(), in.pk, in.pv, iy.data()};
#if ATTN_SATURATION_COUNTERS
  io.saturation = counts;
#endif
  const Status s = forward(plan, w, mask, io, arena);
  tools::dequantize_values(iy.data(), nq, out, y);
  return s;
}

// One block on float inputs: forward_f32, or quantize -> forward_s8/s16 ->
// dequantize, adding its saturation counts to *counts (null: none).
Status run_block(const Plan& plan, const Block& b, const Mask& mask, const float* q, const float* k,
                 const float* v, float* y, Arena& arena, Counts* counts) {
  if (b.dtype == DType::kF32) {
    IoF32 io;
    io.query = q;
    io.key = k;
    io.value = v;
    io.output = y;
    return forward_f32(plan, b.f32, mask, io, arena);
  }
  const size_t nq = static_cast<size_t>(plan.query_len) * static_cast<size_t>(b.config.embed_dim);
  const size_t nk = static_cast<size_t>(plan.key_len) * static_cast<size_t>(b.config.resolved_kdim());
  const size_t nv = static_cast<size_t>(plan.key_len) * static_cast<size_t>(b.config.resolved_vdim());
  const QuantParams out = io_params(b, 3);
  if (b.dtype == DType::kS8) {
    return run_quantized<int8_t, IoS8>(plan, b.s8, forward_s8, b, mask, q, k, v, y, out, nq, nk, nv, arena,
                                       counts);
  }
  // s16 outputs are symmetric.
  return run_quantized<int16_t, IoS16>(plan, b.s16, forward_s16, b, mask, q, k, v, y,
                                       QuantParams{out.scale, 0}, nq, nk, nv, arena, counts);
}

// A block's KV cache: the one of its dtype is used.
struct BlockCache {
  KvCacheF32 f32;
  KvCacheS8 s8;
  KvCacheS16 s16;

  Status init(const Plan& plan, int32_t window, Arena& arena) {
    switch (plan.dtype) {
      case DType::kS8:
        return kv_cache_init_s8(plan, window, arena, &s8);
      case DType::kS16:
        return kv_cache_init_s16(plan, window, arena, &s16);
      default:
        return kv_cache_init_f32(plan, window, arena, &f32);
    }
  }
  void reset() {
    (void)kv_cache_reset(&f32);
    (void)kv_cache_reset(&s8);
    (void)kv_cache_reset(&s16);
  }
};

// n rows of one block through its cache, on float rows: decode_f32, or
// quantize -> decode_s8/s16 -> dequantize (as run_block does for the forward).
Status decode_block(const Plan& plan, const Block& b, BlockCache& cache, const float* x, int32_t n, float* y,
                    Arena& arena) {
  if (b.dtype == DType::kF32) return decode_f32(plan, b.f32, &cache.f32, x, n, y, arena);
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(b.config.embed_dim);
  const QuantParams out = io_params(b, 3);
  if (b.dtype == DType::kS8) {
    const std::vector<int8_t> ix = quantize_rows<int8_t>(x, count, io_params(b, 0));
    std::vector<int8_t> iy(count);
    ATTN_TRY(decode_s8(plan, b.s8, &cache.s8, ix.data(), n, iy.data(), arena));
    tools::dequantize_values(iy.data(), count, out, y);
    return Status::kOk;
  }
  const std::vector<int16_t> ix = quantize_rows<int16_t>(x, count, io_params(b, 0));
  std::vector<int16_t> iy(count);
  ATTN_TRY(decode_s16(plan, b.s16, &cache.s16, ix.data(), n, iy.data(), arena));
  tools::dequantize_values(iy.data(), count, QuantParams{out.scale, 0}, y);  // s16: symmetric
  return Status::kOk;
}

// --incremental: rows [0, L) of one batch item through the blocks' KV caches
// (reset first): rows [0, prefill) in one decode call per block, then one
// row at a time. x [L, E0] -> y [L, E_last].
void run_incremental(const std::string& path, const std::vector<uint32_t>& ids, const std::vector<Block>& bl,
                     const std::vector<Plan>& plans, std::vector<BlockCache>& caches, const float* x,
                     int64_t L, int64_t prefill, float* y, Arena& arena) {
  std::vector<float> cur, next;
  int64_t r = 0;
  while (r < L) {
    const int64_t n = r == 0 && prefill > 0 ? prefill : 1;  // rows in this call
    cur.assign(x + r * bl.front().config.embed_dim, x + (r + n) * bl.front().config.embed_dim);
    for (size_t k = 0; k < bl.size(); ++k) {
      next.assign(static_cast<size_t>(n * bl[k].config.embed_dim), 0.0f);
      const Status s =
          decode_block(plans[k], bl[k], caches[k], cur.data(), static_cast<int32_t>(n), next.data(), arena);
      if (s != Status::kOk)
        throw cli::Error(path + ": block " + std::to_string(ids[k]) + ": decode failed at row " +
                         std::to_string(r) + ": " + cli::describe(s));
      cur.swap(next);
    }
    std::copy(cur.begin(), cur.end(), y + r * bl.back().config.embed_dim);
    r += n;
  }
}

Input read_input(const std::string& path, const char* what, const char* raw_descr = nullptr) {
  Input in;
  in.path = path;
  cli::NpyInput a = cli::read_npy(path);
  const npy::Header& h = a.header;
  if (raw_descr != nullptr && h.descr != raw_descr)
    throw cli::Error(path + ": " + what + " is " + npy::dtype_name(h.descr) + ", but with --raw it must be " +
                     npy::dtype_name(raw_descr) + " (the first block's integer type)");
  if (raw_descr == nullptr && h.descr != "<f4")
    throw cli::Error(path + ": " + what + " is " + npy::dtype_name(h.descr) +
                     ", but must be float32 ('<f4') (int8/int16 inputs need --raw and a quantized model)");
  if (h.shape.size() == 2) {
    in.rows = h.shape[0];
    in.cols = h.shape[1];
  } else if (h.shape.size() == 3) {
    in.batch = h.shape[0];
    in.rows = h.shape[1];
    in.cols = h.shape[2];
    if (in.batch <= 0) throw cli::Error(path + ": empty batch");
  } else {
    throw cli::Error(path + ": " + what + " must have shape [L, E] or [B, L, E], got rank " +
                     std::to_string(h.shape.size()));
  }
  if (in.rows <= 0 || in.rows > ATTN_MAX_SEQ)
    throw cli::Error(path + ": sequence length " + std::to_string(in.rows) + " out of range");
  if (in.cols <= 0 || in.cols > ATTN_MAX_DIM)
    throw cli::Error(path + ": width " + std::to_string(in.cols) + " out of range");
  in.data = std::move(a.f32);
  in.ints = std::move(a.ints);
  return in;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  cli::PhaseTimes times("run");
#if defined(__GLIBC__)
  // Batch files and outputs are megabytes: keep such buffers on the heap
  // instead of fresh mmaps, so that a freed one (the file bytes, once parsed)
  // is reused without a page fault per 4 KiB page.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  const cli::Args args(argc, argv,
                       {"--input", "--kv", "--value", "--key-length", "--block", "--window", "--prefill",
                        "-o", "--output", "--tokens", "--text", "--threads"},
                       {"--causal", "--raw", "--incremental", "--stats"});
  const std::string path = args.one_input("FILE.attn");
  const std::string out = args.output();
  if (args.has("--tokens") || args.has("--text"))
    return cli::run_model(args, path, out);  // a whole model on token ids, or text
  const bool incremental = args.has("--incremental");
  if (args.has("--window") && !args.has("--causal")) throw cli::Error("--window needs --causal");
  if (incremental && !args.has("--causal"))
    throw cli::Error("--incremental needs --causal (decoding attends each row over the rows before it)");
  if (args.has("--prefill") && !incremental) throw cli::Error("--prefill needs --incremental");
  const bool stats = args.has("--stats");
  if (stats && incremental) throw cli::Error("--stats counts forwards, not --incremental decodes");
  if (stats && !kCounts) {
    throw cli::Error(
        "--stats needs saturation counters: this attn was built without them "
        "(configure with -DATTN_SATURATION_COUNTERS=ON)");
  }
  if (incremental) {
    for (const char* opt : {"--kv", "--value", "--key-length"})
      if (args.has(opt)) throw cli::Error(std::string("--incremental does not take ") + opt);
  }
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  times.done("load");
  const Model& m = lm.model;
  if (m.is_model())
    throw cli::Error(path +
                     " is a whole model: pass --tokens IDS.npy (token ids, int32 or int64, [B, L] or [L]); "
                     "--input is for block files");
  const bool raw = args.has("--raw");
  // --raw: the first and last blocks run decide the integer I/O dtypes.
  Block first_b, last_b;
  const char* raw_in = nullptr;
  const char* raw_out = nullptr;
  if (raw) {
    uint32_t fi = 0, li = m.block_count() == 0 ? 0 : m.block_count() - 1;
    if (args.has("--block")) fi = li = static_cast<uint32_t>(args.get_int("--block", 0, 0, 0xFFFFFFFFll));
    if (fi >= m.block_count() || m.block(fi, &first_b) != Status::kOk || m.block(li, &last_b) != Status::kOk)
      throw cli::Error(path + ": no such block");
    if (first_b.dtype == DType::kF32 || last_b.dtype == DType::kF32)
      throw cli::Error(path + ": --raw needs quantized (s8/s16) blocks; block " +
                       std::to_string(first_b.dtype == DType::kF32 ? fi : li) + " is f32");
    raw_in = first_b.dtype == DType::kS8 ? "|i1" : "<i2";
    raw_out = last_b.dtype == DType::kS8 ? "|i1" : "<i2";
  }
  Input x = read_input(args.required("--input"), "the input", raw_in);
  const bool cross = args.has("--kv");
  Input kv, v;
  if (cross) kv = read_input(args.get("--kv"), "--kv", raw_in);
  if (args.has("--value") && !cross) throw cli::Error("--value needs --kv");
  if (args.has("--value")) {
    v = read_input(args.get("--value"), "--value", raw_in);
  } else if (cross) {
    v = kv;
  }
  if (raw) {
    dequantize_input(x, first_b, 0);
    if (cross) {
      dequantize_input(kv, first_b, 1);
      if (args.has("--value")) {
        dequantize_input(v, first_b, 2);
      } else {
        v = kv;
        dequantize_input(v, first_b, 2);  // the same integers, read as the value input
      }
    }
  }
  times.done("read");
  std::vector<uint32_t> blocks;
  if (args.has("--block")) {
    const long long i = args.get_int("--block", 0, 0, 0xFFFFFFFFll);
    if (i >= m.block_count())
      throw cli::Error(path + ": --block " + std::to_string(i) + " but the file has " +
                       std::to_string(m.block_count()) + " block(s)");
    blocks.push_back(static_cast<uint32_t>(i));
  } else {
    for (uint32_t i = 0; i < m.block_count(); ++i) blocks.push_back(i);
  }
  if (blocks.empty()) throw cli::Error(path + ": the file has no attention blocks");

  const int64_t L = x.rows;
  const int64_t S = cross ? kv.rows : L;
  const int64_t B = x.batch == 0 ? 1 : x.batch;
  if (cross) {
    for (const Input* in : {&kv, &v}) {
      if (in->batch != 0 && in->batch != B)
        throw cli::Error(in->path + ": batch " + std::to_string(in->batch) + " != the input's " +
                         std::to_string(B));
      if (in->rows != S)
        throw cli::Error(in->path + ": " + std::to_string(in->rows) + " rows, but --kv has " +
                         std::to_string(S));
    }
  }
  Mask mask;
  mask.causal = args.has("--causal");
  if (args.has("--key-length")) mask.key_length = static_cast<int32_t>(args.get_int("--key-length", 0, 0, S));
  if (args.has("--window")) mask.window = static_cast<int32_t>(args.get_int("--window", 0, 1, ATTN_MAX_SEQ));
  const int64_t prefill = args.get_int("--prefill", 0, 0, L);
  // The caches: every position, or with a window the last min(W, L).
  const int32_t capacity = static_cast<int32_t>(mask.window > 0 && mask.window < L ? mask.window : L);
  const int32_t window = mask.window > 0 ? capacity : 0;

  // Check every block's widths before running anything.
  int64_t width = x.cols;
  std::vector<Block> bl;
  std::vector<Plan> plans;
  size_t arena_bytes = 0, cache_bytes = 0;
  cli::ThreadPool pool(cli::threads_option(args));
  for (uint32_t i : blocks) {
    Block b;
    if (m.block(i, &b) != Status::kOk)
      throw cli::Error(path + ": block " + std::to_string(i) + " unreadable");
    const AttentionConfig& c = b.config;
    const std::string name = path + ": block " + std::to_string(i);
    if (incremental && (c.kdim != c.embed_dim || c.vdim != c.embed_dim))
      throw cli::Error(name + " is cross-attention (kdim " + std::to_string(c.kdim) + ", vdim " +
                       std::to_string(c.vdim) + "): --incremental needs self-attention");
    cli::check_block_inputs(c, i, name, i == blocks.front() ? x.path : name, width, cross, kv.path, kv.cols,
                            v.path, v.cols, "--kv");
    Plan plan;
    const Status s =
        incremental
            ? plan_decode(c, b.dtype, static_cast<int32_t>(std::max<int64_t>(prefill, 1)), capacity, &plan)
            : plan_attention(c, b.dtype, static_cast<int32_t>(L), static_cast<int32_t>(S), &plan);
    if (s != Status::kOk) throw cli::Error(name + ": " + cli::describe(s));
    arena_bytes = std::max(arena_bytes, plan.arena_bytes);
    if (incremental) cache_bytes += kv_cache_arena_bytes(plan.config, b.dtype, capacity);
    plan.parallel = pool.parallel_for();
    bl.push_back(b);
    plans.push_back(plan);
    width = c.embed_dim;
  }

  // f32 blocks: weights packed once for the kernels that multiply by W^T
  // panels (pack_weights_f32; 0 bytes where the kernels read W as stored).
  std::vector<cli::AlignedBytes> packed(bl.size());
  for (size_t k = 0; k < bl.size(); ++k) {
    if (bl[k].dtype != DType::kF32) continue;
    size_t n = 0;
    Status s = pack_weights_f32_storage_bytes(plans[k], &n);
    if (s == Status::kOk && n > 0) {
      packed[k] = cli::AlignedBytes(n);
      s = pack_weights_f32(plans[k], bl[k].f32, packed[k].data(), n, &bl[k].f32);
    }
    if (s != Status::kOk)
      throw cli::Error(path + ": block " + std::to_string(blocks[k]) +
                       ": packing weights: " + cli::describe(s));
  }
  times.done("pack");

  cli::AlignedBytes arena_buf(arena_bytes);
  Arena arena;
  if (arena.init(arena_buf.data(), arena_bytes == 0 ? 1 : arena_bytes) != Status::kOk)
    throw cli::Error("arena init failed");
  // Y [B, L, width]. width == x.cols (every block maps E to E), so without
  // --incremental Y takes over x's storage: item b of x is copied into `cur`
  // before item b of Y is written, and no other item is touched.
  npy::BatchVector<float> y;
  const bool y_is_x = !incremental && static_cast<size_t>(B * L * width) == x.data.size();
  if (y_is_x) {
    y = std::move(x.data);
  } else {
    y.assign(static_cast<size_t>(B * L * width), 0.0f);
  }
  std::vector<float> cur, next;
  // --incremental: one KV cache per block, carved once, reset per batch item.
  cli::AlignedBytes cache_buf(cache_bytes);
  Arena cache_arena;
  std::vector<BlockCache> caches(incremental ? bl.size() : 0);
  if (incremental) {
    if (cache_arena.init(cache_buf.data(), cache_bytes == 0 ? 1 : cache_bytes) != Status::kOk)
      throw cli::Error("arena init failed");
    for (size_t k = 0; k < bl.size(); ++k) {
      const Status s = caches[k].init(plans[k], window, cache_arena);
      if (s != Status::kOk)
        throw cli::Error(path + ": block " + std::to_string(blocks[k]) + ": KV cache: " + cli::describe(s));
    }
  }
  for (int64_t b = 0; b < B && incremental; ++b) {
    for (BlockCache& c : caches) c.reset();
    run_incremental(path, blocks, bl, plans, caches, x.item(b), L, prefill, y.data() + b * L * width, arena);
  }
  std::vector<Counts> counts(bl.size());  // --stats: per block, over the batch
  for (int64_t b = 0; b < B && !incremental; ++b) {
    const float* xb = y_is_x ? y.data() + b * L * x.cols : x.item(b);  // x item b
    cur.assign(xb, xb + L * x.cols);
    for (size_t k = 0; k < bl.size(); ++k) {
      // The last block writes item b of Y in place (every forward writes all of its output).
      const bool last = k + 1 == bl.size();
      if (!last) next.resize(static_cast<size_t>(L * bl[k].config.embed_dim));
      float* out_b = last ? y.data() + b * L * width : next.data();
      const float* key = cross ? kv.item(kv.batch == 0 ? 0 : b) : cur.data();
      const float* value = cross ? v.item(v.batch == 0 ? 0 : b) : cur.data();
      const Status s = run_block(plans[k], bl[k], mask, cur.data(), key, value, out_b, arena,
                                 stats ? &counts[k] : nullptr);
      if (s != Status::kOk)
        throw cli::Error(path + ": block " + std::to_string(blocks[k]) +
                         ": forward failed: " + cli::describe(s));
      if (!last) cur.swap(next);
    }
  }
  times.done("forwards");
#if ATTN_SATURATION_COUNTERS
  for (size_t k = 0; stats && k < bl.size(); ++k) {
    if (bl[k].dtype == DType::kF32) continue;
    const Counts& c = counts[k];
    std::printf("saturation block=%u q=%llu k=%llu v=%llu context=%llu output=%llu\n", blocks[k],
                static_cast<unsigned long long>(c.q), static_cast<unsigned long long>(c.k),
                static_cast<unsigned long long>(c.v), static_cast<unsigned long long>(c.context),
                static_cast<unsigned long long>(c.output));
  }
#endif
  std::vector<int64_t> shape;
  if (x.batch != 0) shape.push_back(B);
  shape.push_back(L);
  shape.push_back(width);
  std::vector<uint8_t> file;
  if (raw) {
    const QuantParams p = io_params(last_b, 3);
    if (last_b.dtype == DType::kS8) {
      const std::vector<int8_t> q = quantize_rows<int8_t>(y.data(), y.size(), p);
      file = npy::serialize(shape, "|i1", q.data(), 1);
    } else {
      const std::vector<int16_t> q = quantize_rows<int16_t>(y.data(), y.size(), p);
      file = npy::serialize(shape, "<i2", q.data(), 2);
    }
  } else {  // the header, then Y's floats straight from y
    file = npy::serialize(shape, "<f4", nullptr, 0);
    cli::write_file_atomic(out, file.data(), file.size(), y.data(), y.size() * sizeof(float));
    times.done("write");
    return 0;
  }
  cli::write_file_atomic(out, file.data(), file.size());
  times.done("write");
  return 0;
}

}  // namespace attn
