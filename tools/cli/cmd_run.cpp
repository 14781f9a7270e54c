// cmd_run.cpp: `attn run FILE.attn --input X.npy [--kv KV.npy] [--value V.npy]
// [--causal] [--key-length N] [--block I] -o Y.npy`
//
//   X  [L, E] or [B, L, E] float32          the query (and, without --kv, key and value)
//   KV [S, kdim] or [B, S, kdim] float32    key input of cross-attention (and value input
//                                           unless --value V [S, vdim] / [B, S, vdim])
//   Y  X's leading dims, last dim E         float32
// Without --block every block runs, in file order, each on the previous
// block's output. --causal masks key j > query i; --key-length N ignores keys
// at index >= N (key padding).
#include <algorithm>
#include <cstdio>

#include "attn/attention.h"
#include "cli/cli.h"
#include "cli/npy.h"

namespace attn {
namespace {

struct Input {
  std::string path;
  int64_t batch = 0;  // 0: no batch dim
  int64_t rows = 0, cols = 0;
  std::vector<float> data;
  const float* item(int64_t b) const { return data.data() + b * rows * cols; }
};

Input read_input(const std::string& path, const char* what) {
  Input in;
  in.path = path;
  npy::Array a;
  try {
    a = npy::parse(cli::read_file(path));
  } catch (const std::runtime_error& e) {
    throw cli::Error(path + ": " + e.what());
  }
  if (a.descr != "<f4")
    throw cli::Error(path + ": " + what + " must be float32 ('<f4'), got '" + a.descr + "'");
  if (a.shape.size() == 2) {
    in.rows = a.shape[0];
    in.cols = a.shape[1];
  } else if (a.shape.size() == 3) {
    in.batch = a.shape[0];
    in.rows = a.shape[1];
    in.cols = a.shape[2];
    if (in.batch <= 0) throw cli::Error(path + ": empty batch");
  } else {
    throw cli::Error(path + ": " + what + " must have shape [L, E] or [B, L, E], got rank " +
                     std::to_string(a.shape.size()));
  }
  if (in.rows <= 0 || in.rows > ATTN_MAX_SEQ)
    throw cli::Error(path + ": sequence length " + std::to_string(in.rows) + " out of range");
  if (in.cols <= 0 || in.cols > ATTN_MAX_DIM)
    throw cli::Error(path + ": width " + std::to_string(in.cols) + " out of range");
  in.data = std::move(a.f32);
  return in;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const cli::Args args(
      argc, argv, {"--input", "--kv", "--value", "--key-length", "--block", "-o", "--output"}, {"--causal"});
  const std::string path = args.one_input("FILE.attn");
  const std::string out = args.has("-o") ? args.get("-o") : args.required("--output");
  const Input x = read_input(args.required("--input"), "the input");
  const bool cross = args.has("--kv");
  Input kv, v;
  if (cross) kv = read_input(args.get("--kv"), "--kv");
  if (args.has("--value") && !cross) throw cli::Error("--value needs --kv");
  if (args.has("--value")) {
    v = read_input(args.get("--value"), "--value");
  } else if (cross) {
    v = kv;
  }
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  const Model& m = lm.model;
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

  // Check every block's widths before running anything.
  int64_t width = x.cols;
  std::vector<Block> bl;
  std::vector<Plan> plans;
  size_t arena_bytes = 0;
  for (uint32_t i : blocks) {
    Block b;
    if (m.block(i, &b) != Status::kOk)
      throw cli::Error(path + ": block " + std::to_string(i) + " unreadable");
    const AttentionConfig& c = b.config;
    const std::string name = path + ": block " + std::to_string(i);
    if (b.dtype != DType::kF32)
      throw cli::Error(name + ": dtype " + cli::dtype_name(b.dtype) + " is not supported by run");
    if (width != c.embed_dim)
      throw cli::Error((i == blocks.front() ? x.path : name) + ": width " + std::to_string(width) +
                       " but block " + std::to_string(i) + " has E = " + std::to_string(c.embed_dim));
    if (cross) {
      if (kv.cols != c.kdim)
        throw cli::Error(kv.path + ": width " + std::to_string(kv.cols) + " but block " + std::to_string(i) +
                         " has kdim = " + std::to_string(c.kdim));
      if (v.cols != c.vdim)
        throw cli::Error(v.path + ": width " + std::to_string(v.cols) + " but block " + std::to_string(i) +
                         " has vdim = " + std::to_string(c.vdim));
    } else if (c.kdim != c.embed_dim || c.vdim != c.embed_dim) {
      throw cli::Error(name + " is cross-attention (kdim " + std::to_string(c.kdim) + ", vdim " +
                       std::to_string(c.vdim) + "): pass --kv");
    }
    Plan plan;
    const Status s = plan_attention(c, DType::kF32, static_cast<int32_t>(L), static_cast<int32_t>(S), &plan);
    if (s != Status::kOk) throw cli::Error(name + ": " + cli::describe(s));
    arena_bytes = std::max(arena_bytes, plan.arena_bytes);
    bl.push_back(b);
    plans.push_back(plan);
    width = c.embed_dim;
  }

  cli::AlignedBytes arena_buf(arena_bytes);
  Arena arena;
  if (arena.init(arena_buf.data(), arena_bytes == 0 ? 1 : arena_bytes) != Status::kOk)
    throw cli::Error("arena init failed");
  std::vector<float> y(static_cast<size_t>(B * L * width));
  std::vector<float> cur, next;
  for (int64_t b = 0; b < B; ++b) {
    cur.assign(x.item(b), x.item(b) + L * x.cols);
    for (size_t k = 0; k < bl.size(); ++k) {
      next.assign(static_cast<size_t>(L * bl[k].config.embed_dim), 0.0f);
      IoF32 io;
      io.query = cur.data();
      io.key = cross ? kv.item(kv.batch == 0 ? 0 : b) : cur.data();
      io.value = cross ? v.item(v.batch == 0 ? 0 : b) : cur.data();
      io.output = next.data();
      const Status s = forward_f32(plans[k], bl[k].f32, mask, io, arena);
      if (s != Status::kOk)
        throw cli::Error(path + ": block " + std::to_string(blocks[k]) +
                         ": forward failed: " + cli::describe(s));
      cur.swap(next);
    }
    std::copy(cur.begin(), cur.end(), y.begin() + b * L * width);
  }
  std::vector<int64_t> shape;
  if (x.batch != 0) shape.push_back(B);
  shape.push_back(L);
  shape.push_back(width);
  const std::vector<uint8_t> file = npy::serialize_f32(shape, y.data());
  cli::write_file_atomic(out, file.data(), file.size());
  return 0;
}

}  // namespace attn
