// cli_test.cpp: the `attn` tools binary, run as a user would.
//  - tests/data/format/cases.txt (from tools/fixtures/gen_format_fixtures.py, PyTorch):
//    `attn import` must write the committed bytes, and `attn run` must
//    reproduce torch.nn.MultiheadAttention (float64) within
//    max|y - y_ref| <= 1e-5 max|y_ref| + 1e-6, for every layout;
//  - every error path: non-zero exit, one line on stderr naming the file,
//    no output file left behind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/cli/npy.h"
#include "attn/attention.h"
#include "attn/model.h"
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

namespace fs = std::filesystem;

namespace {

using namespace cli;

const std::string kData = kFormatDir;

// The lines of cases.txt that start with `kind` ("import" or "run"), as words.
std::vector<std::vector<std::string>> cases(const std::string& kind) {
  std::ifstream f(kData + "cases.txt");
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    std::vector<std::string> w;
    std::string t;
    while (is >> t) w.push_back(t);
    if (w[0] == kind) out.push_back(w);
  }
  return out;
}

std::string join_quoted(const std::vector<std::string>& w, size_t from) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i) s += " " + quote(w[i]);
  return s;
}

// The failure contract, naming `name` (and `problem`, if given).
void check_error(const Result& r, const std::string& name, const std::string& problem = "") {
  cli::check_error(r, std::vector<std::string>{name, problem});
}

}  // namespace

TEST_CASE("attn import writes the committed fixtures' bytes", "[cli]") {
  TempDir tmp;
  const auto imports = cases("import");
  for (const auto& w : imports) {
    CAPTURE(w[1]);
    run_ok("import " + quote(w[2]) + join_quoted(w, 3) + " -o " + quote(tmp / "out.attn"), tmp);
    const std::vector<uint8_t> want = slurp(kData + w[1]), got = slurp(tmp / "out.attn");
    REQUIRE(!want.empty());
    CHECK(got == want);
  }
  CHECK(imports.size() >= 5);  // packed, f16 weights, cross, encoder layer, BERT (one and several layers)
}

TEST_CASE("attn run reproduces torch.nn.MultiheadAttention for every layout", "[cli]") {
  TempDir tmp;
  const auto runs = cases("run");
  for (const auto& w : runs) {
    CAPTURE(w[2]);
    const std::string out = tmp / "y.npy";
    run_ok("run " + quote(w[1]) + join_quoted(w, 3) + " -o " + quote(out), tmp);
    const attn::npy::Array y = attn::npy::parse(slurp(out));
    const attn::npy::Array ref = attn::npy::parse(slurp(kData + w[2]));
    REQUIRE(y.descr == "<f4");
    REQUIRE(ref.descr == "<f8");
    REQUIRE(y.shape == ref.shape);
    double err = 0, peak = 0;
    for (size_t i = 0; i < ref.f64.size(); ++i) {
      err = std::max(err, std::fabs(static_cast<double>(y.f32[i]) - ref.f64[i]));
      peak = std::max(peak, std::fabs(ref.f64[i]));
    }
    CAPTURE(err, peak);
    CHECK(peak > 0.0);
    CHECK(err <= 1e-5 * peak + 1e-6);
  }
  CHECK(runs.size() >= 15);
}

TEST_CASE("attn run --incremental equals the full causal forward, with and without a window",
          "[cli][decode]") {
  TempDir tmp;
  // model, input, then options common to both runs
  const std::vector<std::vector<std::string>> runs = {
      {"llama_hf.attn", "llama_hf.causal.x.npy"},
      {"llama_hf.attn", "llama_hf.causal.x.npy", "--window", "2"},
      {"llama_hf.attn", "llama_hf.batch.x.npy", "--window", "4"},
      {"llama2c.attn", "llama2c.causal.x.npy", "--window", "5"},
      {"mha_packed.attn", "mha_packed.self.x.npy"},  // batched, with bias
      {"bert_all.attn", "bert_all.chain.x.npy", "--window", "3"},
      {"layers.attn", "layers.chain.x.npy", "--window", "1"},
  };
  const auto load_y = [&](const std::string& args) {
    const std::string out = tmp / "y.npy";
    run_ok("run " + args + " -o " + quote(out), tmp);
    const attn::npy::Array y = attn::npy::parse(slurp(out));
    fs::remove(out);
    return y;
  };
  for (const auto& w : runs) {
    const std::string model = w[0], input = w[1];
    // The full forward's input: --input before the model's options.
    const std::string base = quote(model) + " --input " + quote(input) + join_quoted(w, 2) + " --causal";
    const attn::npy::Array full = load_y(base);
    for (const char* inc : {" --incremental", " --incremental --prefill 1", " --incremental --prefill 3"}) {
      CAPTURE(base, inc);
      const attn::npy::Array y = load_y(base + inc);
      REQUIRE(y.shape == full.shape);
      double err = 0, peak = 0;
      for (size_t i = 0; i < full.f32.size(); ++i) {
        err = std::max(err, std::fabs(static_cast<double>(y.f32[i]) - static_cast<double>(full.f32[i])));
        peak = std::max(peak, std::fabs(static_cast<double>(full.f32[i])));
      }
      CAPTURE(err, peak);
      CHECK(peak > 0.0);
      CHECK(err <= 1e-5 * peak + 1e-6);
    }
  }
  // Quantized grouped-query blocks (HF Llama, 4 heads, 2 KV heads), without and with RoPE: s8 and
  // s16 decode gives the forward's outputs bit for bit. --any-mask: the ranges hold for the windowed
  // runs too (a causal calibration alone refuses a window: kMaskNotCalibrated).
  REQUIRE(
      run("import llama_hf.safetensors --heads 4 --rope-base 0 -o " + quote(tmp / "gqa.attn"), tmp).code ==
      0);
  for (const std::string& src : {std::string(tmp / "gqa.attn"), std::string("llama_hf.attn")}) {
    for (const char* dt : {"s8", "s16"}) {
      const std::string qf = tmp / (std::string("q.") + dt + ".attn");
      REQUIRE(run("quantize " + quote(src) + " --calib llama_hf.batch.x.npy --causal --any-mask --dtype " +
                      dt + " -o " + quote(qf),
                  tmp)
                  .code == 0);
      for (const char* window : {"", " --window 2"}) {
        const std::string base = quote(qf) + " --input llama_hf.batch.x.npy --causal" + window;
        const attn::npy::Array full = load_y(base);
        for (const char* inc : {" --incremental", " --incremental --prefill 3"}) {
          CAPTURE(src, base, inc);
          const attn::npy::Array y = load_y(base + inc);
          CHECK(y.shape == full.shape);
          CHECK(y.f32 == full.f32);
        }
      }
    }
  }
  // The window matters: a windowed run differs from the unwindowed one.
  const attn::npy::Array a = load_y("llama_hf.attn --input llama_hf.causal.x.npy --causal --incremental");
  const attn::npy::Array b =
      load_y("llama_hf.attn --input llama_hf.causal.x.npy --causal --incremental --window 2");
  double diff = 0;
  for (size_t i = 0; i < a.f32.size(); ++i)
    diff = std::max(diff, std::fabs(double{a.f32[i]} - double{b.f32[i]}));
  CHECK(diff > 1e-2);
}

TEST_CASE("attn verify and info on a valid file", "[cli]") {
  TempDir tmp;
  Result r = run("verify layers.attn", tmp);
  CHECK(r.code == 0);
  CHECK(r.out.find("3 blocks") != std::string::npos);
  r = run("info mha_cross.attn --L 5 --S 7", tmp);
  CHECK(r.code == 0);
  CHECK(r.out.find("kdim=12 vdim=10") != std::string::npos);
  attn::AttentionConfig c;
  c.embed_dim = 16;
  c.num_heads = 2;
  c.kdim = 12;
  c.vdim = 10;
  const size_t bytes = attn::attention_arena_bytes(c, attn::DType::kF32, 5, 7);
  CHECK(r.out.find("arena(L=5,S=7)=" + std::to_string(bytes) + " bytes") != std::string::npos);
}

TEST_CASE("attn emit-c writes a header holding the blob, its size and the arena bytes", "[cli]") {
  TempDir tmp;
  const std::string h = tmp / "model.h";
  const Result r =
      run("emit-c mha_packed.attn -o " + quote(h) + " --name my_model --max-L 32 --max-S 48", tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::vector<uint8_t> hb = slurp(h);
  const std::string text(hb.begin(), hb.end());
  const std::vector<uint8_t> blob = slurp(kData + "mha_packed.attn");
  CHECK(text.find("#define MY_MODEL_SIZE " + std::to_string(blob.size()) + "u") != std::string::npos);
  attn::AttentionConfig c;
  c.embed_dim = 16;
  c.num_heads = 4;
  // The arena bytes are an expression over attn.h's macros (tests/emit_c_test.cpp checks its value).
  CHECK(text.find("#define MY_MODEL_ARENA_BYTES ATTN_ARENA_BYTES(4, 16, 16, 32, 48, ATTN_TILE_ROWS)") !=
        std::string::npos);
  CHECK(text.find("MY_MODEL_ALIGN static const uint8_t my_model[MY_MODEL_SIZE]") != std::string::npos);
  // The array's bytes are the file's bytes.
  std::vector<uint8_t> parsed;
  const std::regex hex("0x([0-9a-f]{2}),");
  const size_t body = text.find("= {");
  REQUIRE(body != std::string::npos);
  const std::string arr = text.substr(body);
  for (std::sregex_iterator it(arr.begin(), arr.end(), hex), end; it != end; ++it)
    parsed.push_back(static_cast<uint8_t>(std::stoi((*it)[1].str(), nullptr, 16)));
  CHECK(parsed == blob);
  // It compiles as C and as C++ (when a compiler is at hand, as in CI).
  if (std::system("command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1") == 0) {
    spit(tmp / "use.c", std::vector<uint8_t>{});
    const std::string src =
        "#include \"model.h\"\nint f(void) { return (int)sizeof my_model + my_model[0]; }\n";
    spit(tmp / "use.c", std::vector<uint8_t>(src.begin(), src.end()));
    const std::string inc = " -I" + quote(std::string(ATTN_TEST_DATA_DIR) + "/../../include") + " ";
    CHECK(std::system(("cc -std=c11 -Wall -Werror -fsyntax-only" + inc + quote(tmp / "use.c")).c_str()) == 0);
    CHECK(std::system(
              ("c++ -std=c++17 -Wall -Werror -fsyntax-only -x c++" + inc + quote(tmp / "use.c")).c_str()) ==
          0);
  }
}

TEST_CASE("attn error paths: one line naming the file, non-zero exit, no output", "[cli]") {
  TempDir tmp;
  const std::string out = tmp / "out";  // must never appear
  // `attn ARGS -o OUT`, which must fail naming `name` (and `problem`).
  const auto fails = [&](const std::string& args, const std::string& name, const std::string& problem = "") {
    check_error(run(args + " -o " + quote(out), tmp), name, problem);
  };
  auto no_output = [&] {
    CHECK_FALSE(fs::exists(out));
    CHECK(tmp.count() == 0);
  };

  SECTION("missing input files") {
    check_error(run("verify " + quote(tmp / "nope.attn"), tmp), "nope.attn", "cannot open");
    fails("run " + quote(tmp / "nope.attn") + " --input mha_packed.self.x.npy", "nope.attn");
    fails("run mha_packed.attn --input nope.npy", "nope.npy");
    fails("import nope.safetensors --heads 4", "nope.safetensors");
    no_output();
  }
  SECTION("a file that fails validation") {
    std::vector<uint8_t> b = slurp(kData + "mha_packed.attn");
    b[b.size() / 2] ^= 0x40;
    spit(tmp / "bad.attn", b);
    check_error(run("verify " + quote(tmp / "bad.attn"), tmp), "bad.attn", "kCrcMismatch");
    fails("run " + quote(tmp / "bad.attn") + " --input mha_packed.self.x.npy", "bad.attn", "kCrcMismatch");
    fails("emit-c " + quote(tmp / "bad.attn"), "bad.attn");
    b.resize(100);
    spit(tmp / "bad.attn", b);
    check_error(run("info " + quote(tmp / "bad.attn"), tmp), "bad.attn", "kTruncated");
    // An empty file (mapped, it has no pages) is a truncated model too.
    b.clear();
    spit(tmp / "bad.attn", b);
    check_error(run("verify " + quote(tmp / "bad.attn"), tmp), "bad.attn", "kTruncated");
    check_error(run("generate " + quote(tmp / "bad.attn") + " --prompt-tokens 1 --steps 1", tmp), "bad.attn",
                "kTruncated");
    fs::remove(tmp / "bad.attn");
    no_output();
  }
  SECTION("bad .npy inputs") {
    spit(tmp / "junk.npy", std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    fails("run mha_packed.attn --input " + quote(tmp / "junk.npy"), "junk.npy", "not a .npy file");
    // float64 data, a rank-1 array, a truncated data section.
    const std::vector<float> v(16, 1.0f);
    std::vector<uint8_t> f = attn::npy::serialize_f32({16}, v.data());
    spit(tmp / "r1.npy", f);
    fails("run mha_packed.attn --input " + quote(tmp / "r1.npy"), "r1.npy", "shape");
    f = attn::npy::serialize_f32({1, 16}, v.data());
    f.resize(f.size() - 4);
    spit(tmp / "short.npy", f);
    fails("run mha_packed.attn --input " + quote(tmp / "short.npy"), "short.npy", "disagrees");
    f = attn::npy::serialize_f32({2, 8}, v.data());
    const std::string hdr(f.begin(), f.begin() + 60);
    const size_t at = hdr.find("<f4");
    f[at + 2] = '8';  // claims float64: 16 elements of 8 bytes, but only 64 bytes follow
    spit(tmp / "f8.npy", f);
    fails("run mha_packed.attn --input " + quote(tmp / "f8.npy"), "f8.npy");
    fs::remove(tmp / "junk.npy");
    fs::remove(tmp / "r1.npy");
    fs::remove(tmp / "short.npy");
    fs::remove(tmp / "f8.npy");
    no_output();
  }
  SECTION("shapes that disagree with the model") {
    // mha_cross's inputs (width 16, kv 12) into mha_packed's blocks and vice versa.
    fails("run mha_packed.attn --input mha_cross.plain.kv.npy", "mha_cross.plain.kv.npy", "E = 16");
    fails("run mha_cross.attn --input mha_cross.plain.x.npy", "mha_cross.attn", "--kv");
    fails("run mha_cross.attn --input mha_cross.plain.x.npy --kv mha_cross.plain.v.npy",
          "mha_cross.plain.v.npy", "kdim = 12");
    fails(
        "run mha_cross.attn --input mha_cross.plain.x.npy --kv mha_cross.plain.kv.npy --value "
        "mha_cross.batch.v.npy",
        "mha_cross.batch.v.npy");
    fails("run layers.attn --input layers.chain.x.npy --block 3", "layers.attn", "--block 3");
    fails("run layers.attn --input layers.chain.x.npy --key-length 8", "--key-length");
    no_output();
  }
  SECTION("import problems") {
    fails("import mha_packed.safetensors --heads 4 --extra x=no.such.key", "mha_packed.safetensors",
          "no.such.key");
    fails("import mha_packed.safetensors --heads 3", "mha_packed.safetensors", "3 heads");
    fails("import mha_packed.safetensors", "--heads");
    fails("import bert.safetensors --heads 4 --prefix decoder.", "bert.safetensors", "decoder.");
    fails("import mha_packed.attn --heads 4", "mha_packed.attn");
    // Llama layouts: --kv-heads must match k_proj's rows; the RoPE base must be a float in (0, 1e30] or 0.
    fails("import llama2c.safetensors --heads 4 --kv-heads 1", "llama2c.safetensors", "--kv-heads 1");
    fails("import llama_hf.safetensors --heads 3", "llama_hf.safetensors", "3 heads");
    for (const char* base : {"-1", "nan", "inf", "1e31", "x"})
      fails(std::string("import llama_hf.safetensors --heads 4 --rope-base ") + base, "--rope-base");
    // A header length past the end of the file.
    std::vector<uint8_t> st = slurp(kData + "mha_packed.safetensors");
    st.resize(40);
    spit(tmp / "cut.safetensors", st);
    fails("import " + quote(tmp / "cut.safetensors") + " --heads 4", "cut.safetensors");
    fs::remove(tmp / "cut.safetensors");
    no_output();
  }
  SECTION("grouped-query RoPE blocks quantize and run; positions past the rope table are refused") {
    for (const char* dt : {"s8", "s16"}) {
      const std::string qf = tmp / (std::string("llama.") + dt + ".attn");
      const Result rq = run("quantize llama_hf.attn --calib llama_hf.batch.x.npy --causal --dtype " +
                                std::string(dt) + " -o " + quote(qf),
                            tmp);
      INFO(rq.out << rq.err);
      REQUIRE(rq.code == 0);
      CHECK(rq.out.find("kv_heads=2") != std::string::npos);
      CHECK(rq.out.find("positions 0 .. 4") != std::string::npos);  // default: the calibration length 5
      // The test input has 7 rows: positions 5 and 6 have no table row.
      fails("run " + quote(qf) + " --input llama_hf.causal.x.npy --causal", "kRopePositionOutOfRange",
            "--max-positions");
      REQUIRE(run("quantize llama_hf.attn --calib llama_hf.batch.x.npy --causal --max-positions 7 --dtype " +
                      std::string(dt) + " -o " + quote(qf),
                  tmp)
                  .code == 0);
      const Result rr =
          run("run " + quote(qf) + " --input llama_hf.causal.x.npy --causal -o " + quote(tmp / "y.npy"), tmp);
      INFO(rr.err);
      CHECK(rr.code == 0);
      fails(
          "quantize llama_hf.attn --calib llama_hf.batch.x.npy --max-positions 0 --dtype " + std::string(dt),
          "--max-positions");
      fs::remove(qf);
      fs::remove(tmp / "y.npy");
    }
    no_output();
  }
  SECTION("--incremental and --window misuse") {
    const std::string x = " --input llama_hf.causal.x.npy";
    fails("run llama_hf.attn --incremental" + x, "--incremental", "--causal");
    fails("run llama_hf.attn --window 2" + x, "--window", "--causal");
    fails("run llama_hf.attn --causal --prefill 2" + x, "--prefill", "--incremental");
    fails("run llama_hf.attn --causal --incremental --prefill 8" + x, "--prefill");
    fails("run llama_hf.attn --causal --incremental --key-length 3" + x, "--key-length");
    fails("run mha_cross.attn --input mha_cross.plain.x.npy --causal --incremental", "mha_cross.attn",
          "cross-attention");
    fails(
        "run mha_cross.attn --input mha_cross.plain.x.npy --kv mha_cross.plain.kv.npy --causal "
        "--incremental",
        "--incremental", "--kv");
    fails("run llama_hf.attn --causal --incremental --raw" + x, "--raw", "quantized");
    no_output();
  }
  SECTION("usage errors and unwritable outputs") {
    fails("run mha_packed.attn --input mha_packed.self.x.npy --frobnicate", "--frobnicate");
    fails("emit-c mha_packed.attn --name 9lives", "9lives");
    check_error(
        run("run mha_packed.attn --input mha_packed.self.x.npy -o " + quote(tmp / "no/such/dir/y.npy"), tmp),
        "y.npy");
    Result r = run("frobnicate", tmp);
    CHECK(r.code != 0);
    no_output();
  }
}

// --stats: per s8/s16 block, the values at the integer limits after each
// stage (a build with saturation counters, as the host-ref preset); without
// the counters, a one-line error and no output.
TEST_CASE("attn run --stats: saturation counts per block, or an error without counters", "[cli]") {
  cli::TempDir tmp;
  const std::string y = tmp / "y.npy";
  const cli::Result r =
      cli::run("run quant/mha_self.s8.attn --input quant/mha_self.x.npy --stats -o " + cli::quote(y), tmp);
#if ATTN_SATURATION_COUNTERS
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("saturation block=0 q=0 k=0 v=0 context=0 output=0") != std::string::npos);
  // The same input 10x beyond its calibration: values clip, and the counts show it.
  attn::npy::Array x = attn::npy::parse(cli::slurp(cli::kFormatDir + "quant/mha_self.x.npy"));
  for (float& v : x.f32) v *= 10.0f;
  cli::spit(tmp / "x10.npy", attn::npy::serialize_f32(x.shape, x.f32.data()));
  const cli::Result r10 = cli::run(
      "run quant/mha_self.s8.attn --input " + cli::quote(tmp / "x10.npy") + " --stats -o " + cli::quote(y),
      tmp);
  INFO(r10.err);
  REQUIRE(r10.code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(
      r10.out, m, std::regex("saturation block=0 q=(\\d+) k=(\\d+) v=(\\d+) context=(\\d+) output=(\\d+)")));
  CHECK(std::stoull(m[1]) + std::stoull(m[2]) + std::stoull(m[3]) > 0);
#else
  cli::check_error(r, {"--stats", "ATTN_SATURATION_COUNTERS"});
  CHECK(!fs::exists(y));
#endif
}

#endif  // ATTN_CLI_PATH
