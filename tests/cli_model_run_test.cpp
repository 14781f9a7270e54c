// cli_model_run_test.cpp: `attn run --tokens` on whole model files (format
// v3) the test writes itself: f32 models against the library's forward,
// s8/s16 models against the integer forward times output_scale, and
// --incremental (the KV-cache decode) against the whole forward: bit for bit
// for s8/s16, within 1e-4 for f32. Bad inputs are named and leave no output.
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "int_model_helpers.h"

using namespace int_model;
using cli::ids_npy;
using cli::quote;
namespace fs = std::filesystem;

namespace {

std::vector<int64_t> flat(const std::vector<std::vector<int32_t>>& rows) {
  std::vector<int64_t> v;
  for (const auto& r : rows) v.insert(v.end(), r.begin(), r.end());
  return v;
}

// The library's f32 forward (weights as stored, not packed) of one sequence.
std::vector<float> f32_forward(const std::vector<uint8_t>& file, const std::vector<int32_t>& tokens) {
  const LoadedModel<attn::TransformerWeightsF32> m(file);
  const TransformerConfig& c = m.weights.config;
  const attn::TransformerWeightsF32& w = m.weights.w;
  const int32_t n = int32_t(tokens.size());
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(c, DType::kF32, n, 0, &plan) == Status::kOk);
  Buffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<float> out(size_t(n) * size_t(c.output_dim()));
  REQUIRE(attn::transformer_forward_f32(plan, w, tokens.data(), n, attn::OutputRows::kAll, out.data(),
                                        arena) == Status::kOk);
  return out;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// |got - want| <= tol * max |want|, element by element.
void close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  const double bound = tol * max_abs(want);
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= bound)) ++bad;
  INFO("bound " << bound);
  CHECK(bad == 0);
}

std::vector<uint32_t> float_bits(const std::string& npy_path) {
  const attn::npy::Array a = attn::npy::parse(cli::slurp(npy_path));
  REQUIRE(a.descr == "<f4");
  std::vector<uint32_t> b(a.f32.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = bits(a.f32[i]);
  return b;
}

std::vector<int64_t> shape_of(const std::string& npy_path) {
  return attn::npy::parse(cli::slurp(npy_path)).shape;
}

std::string run_cmd(const cli::TempDir& tmp, const std::string& model, const std::string& ids,
                    const std::string& out, const std::string& more = "") {
  return "run " + quote(tmp / model) + " --tokens " + quote(tmp / ids) + " -o " + quote(tmp / out) + more;
}

// The s8 or s16 model file of `c` (calibrated on random sequences) and its integer weights.
template <class W>
struct IntModel {
  InMemory<W> q;
  std::vector<uint8_t> file;
};
template <class W>
IntModel<W> int_model_of(const TransformerConfig& c, uint32_t seed) {
  const std::vector<uint8_t> f32 = f32_file(c, seed);
  const Blob fb(f32);
  attn::Model fm;
  REQUIRE(attn::Model::load(fb.p, fb.n, &fm) == Status::kOk);
  IntModel<W> m;
  m.q = quantize<W>(fm, sequences(3, c.max_positions, c.vocab_size, seed + 7));
  m.file = fixed_file(c, m.q.w);
  return m;
}

// Writes `file` as tmp/NAME and `count` random sequences of `len` token ids
// as tmp/ids.npy (int64 if `i64`, else int32), runs `attn run` on them into
// tmp/y.npy and checks its shape [count, len, output_dim]: the sequences.
std::vector<std::vector<int32_t>> run_on_sequences(const cli::TempDir& tmp, const std::string& name,
                                                   const std::vector<uint8_t>& file,
                                                   const TransformerConfig& c, int count, int len,
                                                   uint32_t seed, bool i64) {
  cli::spit(tmp / name, file);
  const auto seqs = sequences(count, len, c.vocab_size, seed);
  cli::spit(tmp / "ids.npy", ids_npy({count, len}, flat(seqs), i64));
  cli::run_ok(run_cmd(tmp, name, "ids.npy", "y.npy"), tmp);
  CHECK(shape_of(tmp / "y.npy") == std::vector<int64_t>{count, len, c.output_dim()});
  return seqs;
}

template <class W>
void check_int_model(const Case& k, cli::TempDir& tmp) {
  const TransformerConfig& c = k.c;
  const IntModel<W> m = int_model_of<W>(c, 21);
  const auto seqs = run_on_sequences(tmp, "q.attn", m.file, c, 2, 11, 5, true);
  // The integer forward, each value times output_scale as a float.
  std::vector<uint32_t> want;
  for (const auto& s : seqs) {
    const std::vector<int32_t> q = run(c, m.q.w, s);
    for (int32_t v : q)
      want.push_back(
          bits(static_cast<float>(static_cast<double>(m.q.w.output_scale) * static_cast<double>(v))));
  }
  CHECK(float_bits(tmp / "y.npy") == want);
  if (!c.causal) return;
  // The KV-cache decode: one token per call, and a prefill of 4 then one per call.
  for (const std::string more : {" --incremental", " --incremental --prefill 4"}) {
    INFO(more);
    cli::run_ok(run_cmd(tmp, "q.attn", "ids.npy", "yi.npy", more), tmp);
    CHECK(float_bits(tmp / "yi.npy") == want);
  }
}

}  // namespace

TEST_CASE("attn run --tokens: f32 models give the library's forward, also incrementally",
          "[cli][model_run]") {
  cli::TempDir tmp;
  for (const Case& k : cases()) {
    INFO(k.name);
    const TransformerConfig& c = k.c;
    const std::vector<uint8_t> file = f32_file(c, 3);
    const auto seqs = run_on_sequences(tmp, "m.attn", file, c, 3, 9, 17, false);
    std::vector<double> want;
    for (const auto& s : seqs) {
      const std::vector<float> y = f32_forward(file, s);
      want.insert(want.end(), y.begin(), y.end());
    }
    const std::vector<double> got = cli::npy_values(tmp / "y.npy");
    close(got, want, 1e-5);
    // One sequence [L] (int64): [L, D].
    cli::spit(tmp / "one.npy", ids_npy({9}, std::vector<int64_t>(seqs[1].begin(), seqs[1].end()), true));
    cli::run_ok(run_cmd(tmp, "m.attn", "one.npy", "y1.npy"), tmp);
    CHECK(shape_of(tmp / "y1.npy") == std::vector<int64_t>{9, c.output_dim()});
    close(cli::npy_values(tmp / "y1.npy"),
          std::vector<double>(want.begin() + 9 * c.output_dim(), want.begin() + 18 * c.output_dim()), 1e-5);
    if (!c.causal) continue;
    for (const std::string more : {" --incremental", " --incremental --prefill 5"}) {
      INFO(more);
      cli::run_ok(run_cmd(tmp, "m.attn", "ids.npy", "yi.npy", more), tmp);
      close(cli::npy_values(tmp / "yi.npy"), got, 1e-4);
    }
  }
}

TEST_CASE("attn run --tokens: s8 / s16 models give the integer forward, --incremental bit for bit",
          "[cli][model_run]") {
  cli::TempDir tmp;
  for (const Case& k : cases()) {
    INFO(k.name);
    SECTION(std::string(k.name) + " s8") { check_int_model<attn::TransformerWeightsS8>(k, tmp); }
    SECTION(std::string(k.name) + " s16") { check_int_model<attn::TransformerWeightsS16>(k, tmp); }
  }
}

TEST_CASE("attn run --tokens: bad inputs are named, exit 1 and leave no output", "[cli][model_run]") {
  cli::TempDir tmp;
  const TransformerConfig c = llama(LmHead::kTied);  // vocab 48, max_positions 16
  cli::spit(tmp / "m.attn", f32_file(c, 4));
  cli::spit(tmp / "bert.attn", f32_file(bert(), 4));
  const std::vector<std::string> own = {"m.attn", "bert.attn", "ids.npy"};
  const auto fails = [&](const std::string& args, const std::vector<std::string>& parts) {
    INFO(args);
    const cli::Result r = cli::run(args, tmp);
    cli::check_error(r, parts);
    CHECK(cli::no_leftovers(tmp, own));
  };
  // A token outside the vocabulary: the id and its position.
  cli::spit(tmp / "ids.npy", ids_npy({2, 5}, {1, 2, 3, 4, 5, 6, 7, 48, 9, 10}, false));
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy"), {"ids.npy", "token id 48", "[1, 2]", "kTokenOutOfRange"});
  cli::spit(tmp / "ids.npy", ids_npy({3}, {0, -1, 2}, true));
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy"), {"token id -1", "position 1", "[0, 48)"});
  // Longer than max_positions.
  cli::spit(tmp / "ids.npy", ids_npy({17}, std::vector<int64_t>(17, 1), false));
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy"), {"17 tokens", "max_positions 16", "kSequenceTooLong"});
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy", " --incremental"), {"17 tokens", "max_positions 16"});
  // Not token ids.
  cli::spit(tmp / "ids.npy", attn::npy::serialize_f32({4}, std::vector<float>(4, 1.0f).data()));
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy"), {"ids.npy", "float32", "int32"});
  cli::spit(tmp / "ids.npy", ids_npy({1, 2, 2}, {1, 2, 3, 4}, false));
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy"), {"ids.npy", "[B, L] or [L]", "rank 3"});
  cli::spit(tmp / "ids.npy", ids_npy({4}, {1, 2, 3, 4}, false));
  // A block file given token ids, a model file given block inputs.
  fails("run " + quote(cli::kFormatDir + "layers.attn") + " --tokens " + quote(tmp / "ids.npy") + " -o " +
            quote(tmp / "y.npy"),
        {"layers.attn", "not a whole model", "--input"});
  fails("run " + quote(tmp / "m.attn") + " --input " + quote(cli::kFormatDir + "layers.chain.x.npy") +
            " -o " + quote(tmp / "y.npy"),
        {"m.attn", "whole model", "--tokens"});
  // Block options with tokens; --incremental of an encoder.
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy", " --causal"), {"--causal", "block files"});
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy", " --prefill 2"), {"--prefill needs --incremental"});
  fails(run_cmd(tmp, "bert.attn", "ids.npy", "y.npy", " --incremental"), {"bert.attn", "kNotCausal"});
  fails(run_cmd(tmp, "m.attn", "ids.npy", "y.npy", " --incremental --prefill 5"), {"--prefill", "[0, 4]"});
}

TEST_CASE("attn run --tokens and perplexity: token ids through a pipe or FIFO", "[cli][model_run]") {
  // `attn --help`: .npy inputs may be pipes, read only up to what their header declares.
  cli::TempDir tmp;
  const TransformerConfig c = llama(LmHead::kTied);  // vocab 48, max_positions 16
  cli::spit(tmp / "m.attn", f32_file(c, 4));
  const std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  for (const bool i64 : {false, true}) {
    INFO((i64 ? "int64" : "int32"));
    cli::spit(tmp / "ids.npy", ids_npy({2, 5}, ids, i64));
    cli::run_ok(run_cmd(tmp, "m.attn", "ids.npy", "file.npy"), tmp);
    // /dev/stdin, a pipe.
    const cli::Result piped =
        cli::run("run " + quote(tmp / "m.attn") + " --tokens /dev/stdin -o " + quote(tmp / "pipe.npy"), tmp,
                 cli::kFormatDir, "cat " + quote(tmp / "ids.npy") + " | ");
    INFO(piped.err);
    REQUIRE(piped.code == 0);
    CHECK(cli::slurp(tmp / "pipe.npy") == cli::slurp(tmp / "file.npy"));
    // A FIFO, with a writer beside it.
    const std::string fifo = tmp / "ids.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const cli::Result ff = cli::run(
        "run " + quote(tmp / "m.attn") + " --tokens " + quote(fifo) + " -o " + quote(tmp / "fifo.npy"), tmp,
        cli::kFormatDir, "(cat " + quote(tmp / "ids.npy") + " >" + quote(fifo) + " &) && ");
    INFO(ff.err);
    REQUIRE(ff.code == 0);
    CHECK(cli::slurp(tmp / "fifo.npy") == cli::slurp(tmp / "file.npy"));
    fs::remove(fifo);
    // perplexity reads its ids the same way.
    const cli::Result p_file =
        cli::run_ok("perplexity " + quote(tmp / "m.attn") + " --tokens " + quote(tmp / "ids.npy"), tmp);
    const cli::Result p_pipe = cli::run("perplexity " + quote(tmp / "m.attn") + " --tokens /dev/stdin", tmp,
                                        cli::kFormatDir, "cat " + quote(tmp / "ids.npy") + " | ");
    INFO(p_pipe.err);
    REQUIRE(p_pipe.code == 0);
    CHECK(p_pipe.out == p_file.out);
  }
  // A stream longer than its header declares is refused after the declared bytes.
  cli::check_error(
      cli::run("run " + quote(tmp / "m.attn") + " --tokens /dev/stdin -o " + quote(tmp / "x.npy"), tmp,
               cli::kFormatDir, "(cat " + quote(tmp / "ids.npy") + "; head -c 100000000 /dev/zero) | "),
      {"/dev/stdin", "more data than shape"});
  // A short one: the declared size is named.
  cli::check_error(
      cli::run("run " + quote(tmp / "m.attn") + " --tokens /dev/stdin -o " + quote(tmp / "x.npy"), tmp,
               cli::kFormatDir, "head -c 140 " + quote(tmp / "ids.npy") + " | "),
      {"/dev/stdin", "disagrees with shape"});
  CHECK(!fs::exists(tmp / "x.npy"));
}

TEST_CASE("attn run --tokens / perplexity: outputs past the machine's memory are refused, not allocated",
          "[cli][model_run]") {
  // A 2^24-token vocabulary (E = 1: a 64 MiB file): each output row is 64
  // MiB of logits, so a 1 MiB ids file asks run for 2^44 bytes and a 65536
  // token window asks perplexity for 2^42. Both are named before anything
  // is allocated (it was std::bad_alloc, "internal error", or under ASan an abort).
  cli::TempDir tmp;
  TransformerConfig c;
  c.vocab_size = 1 << 24;
  c.embed_dim = 1;
  c.num_layers = 1;
  c.num_heads = 1;
  c.ffn_dim = 1;
  c.max_positions = 65536;
  c.norm = attn::NormKind::kRmsNorm;
  c.activation = attn::Activation::kSilu;
  c.head = LmHead::kTied;
  c.pre_norm = c.final_norm = c.causal = true;
  c.attention_bias = c.ffn_bias = c.norm_bias = false;
  cli::spit(tmp / "big.attn", f32_file(c, 2));
  cli::spit(tmp / "ids.npy", ids_npy({4, 65536}, std::vector<int64_t>(4 * 65536, 7), false));
  cli::spit(tmp / "one.npy", ids_npy({65536}, std::vector<int64_t>(65536, 7), false));
  const std::vector<std::string> own = {"big.attn", "ids.npy", "one.npy"};
  cli::check_error(cli::run(run_cmd(tmp, "big.attn", "ids.npy", "y.npy"), tmp),
                   {"y.npy", "the output", "17592186044416 bytes", "exceeds this machine's memory"});
  CHECK(cli::no_leftovers(tmp, own));
  cli::check_error(
      cli::run("perplexity " + quote(tmp / "big.attn") + " --tokens " + quote(tmp / "one.npy"), tmp),
      {"big.attn", "logits", "4398046511104 bytes", "exceeds this machine's memory", "--context"});
  CHECK(cli::no_leftovers(tmp, own));
}

TEST_CASE("attn info of a model file: the arena bytes of a forward and of decoding", "[cli][model_run]") {
  cli::TempDir tmp;
  for (const Case& k : cases()) {
    const TransformerConfig& c = k.c;
    const std::vector<uint8_t> f32 = f32_file(c, 6);
    const IntModel<attn::TransformerWeightsS16> q = int_model_of<attn::TransformerWeightsS16>(c, 6);
    for (const DType dt : {DType::kF32, DType::kS16}) {
      INFO(k.name << " dtype " << int(dt));
      cli::spit(tmp / "m.attn", dt == DType::kF32 ? f32 : q.file);
      const cli::Result r = cli::run_ok("info " + quote(tmp / "m.attn"), tmp);
      INFO(r.out);
      const int32_t P = c.max_positions;
      attn::TransformerPlan fp, step, pre;
      REQUIRE(attn::plan_transformer(c, dt, P, 0, &fp) == Status::kOk);
      CHECK(r.out.find("arena bytes: forward of up to " + std::to_string(P) + " tokens " +
                       std::to_string(fp.arena_bytes) + "\n") != std::string::npos);
      const bool decodes = r.out.find("decoding with capacity") != std::string::npos;
      CHECK(decodes == c.causal);
      if (!c.causal) continue;
      REQUIRE(attn::plan_transformer(c, dt, 1, P, &step) == Status::kOk);
      REQUIRE(attn::plan_transformer(c, dt, P, P, &pre) == Status::kOk);
      CHECK(step.state_bytes > 0);
      const auto sum = [](const attn::TransformerPlan& p) {
        return "state " + std::to_string(p.state_bytes) + " + arena " + std::to_string(p.arena_bytes);
      };
      CHECK(r.out.find("decoding with capacity " + std::to_string(P) + ": " + sum(step) +
                       " (1 token per call) = " + std::to_string(step.state_bytes + step.arena_bytes) +
                       " bytes") != std::string::npos);
      CHECK(r.out.find("prefills of up to " + std::to_string(P) + " tokens: " + sum(pre) + " = " +
                       std::to_string(pre.state_bytes + pre.arena_bytes) + " bytes") != std::string::npos);
    }
  }
}

#endif  // ATTN_CLI_PATH
