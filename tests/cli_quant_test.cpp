// cli_quant_test.cpp: `attn quantize` and `attn run` / `info` / `emit-c` on
// quantized files, run as a user would.
//  - tests/data/format/quant/quant_cases.txt (tools/fixtures/gen_quant_fixtures.py):
//    export (attn_export.py, through attn import) -> attn quantize -> attn run must reach the listed
//    SQNR against PyTorch's float64 output, in s8 and in s16;
//  - --raw int8/int16 I/O agrees with the float I/O;
//  - bad calibration input: one stderr line naming the file, exit 1, no output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/cli/npy.h"
#include "attn/attn.h"
#include "attn/model.h"
#include "attn/quantize.h"
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

namespace fs = std::filesystem;

namespace {

using namespace cli;

const std::string kQuant = kFormatDir + "quant/";

// `attn ARGS` (quoted already), run from the quantization fixtures.
Result attn_cli(const std::string& args, const TempDir& tmp) { return run(args, tmp, kQuant); }

void check_failure(const Result& r, const std::string& name, const std::string& problem) {
  check_error(r, std::vector<std::string>{name, problem});
}

struct QuantCase {
  std::string name;
  double min_s8 = 0, min_s16 = 0;
  std::string quantize_args, run_args;  // quoted
};

std::vector<QuantCase> quant_cases() {
  std::ifstream f(kQuant + "quant_cases.txt");
  std::vector<QuantCase> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    QuantCase c;
    is >> c.name >> c.min_s8 >> c.min_s16;
    std::string t;
    while (is >> t) {
      const bool calib = t.rfind("--calib", 0) == 0, io = t == "--kv" || t == "--value";
      std::string v;
      if (calib || io || t == "--key-length") is >> v;
      const std::string arg = " " + quote(t) + (v.empty() ? "" : " " + quote(v));
      if (!io) c.quantize_args += arg;
      if (!calib) c.run_args += arg;
    }
    out.push_back(c);
  }
  return out;
}

// A .attn file loaded in 16-byte aligned memory.
struct Loaded {
  explicit Loaded(const std::string& path) : bytes(slurp(path)) {
    buf.resize(bytes.size() / 16 + 1);
    std::memcpy(buf.data(), bytes.data(), bytes.size());
    status = attn::Model::load(buf.data(), bytes.size(), &model);
  }
  std::vector<uint8_t> bytes;
  struct alignas(16) Chunk {
    uint8_t b[16];
  };
  std::vector<Chunk> buf;
  attn::Model model;
  attn::Status status;
};

}  // namespace

TEST_CASE("export -> attn quantize -> attn run reaches the SQNR targets against PyTorch", "[cli][quant]") {
  const std::vector<QuantCase> cases = quant_cases();
  REQUIRE(cases.size() >= 2);
  TempDir tmp;
  for (const QuantCase& c : cases) {
    for (const char* dt : {"s8", "s16"}) {
      const std::string qf = tmp / (c.name + "." + dt + ".attn"), y = tmp / (c.name + "." + dt + ".y.npy");
      const Result rq =
          attn_cli("quantize " + quote(c.name + ".attn") + " --calib " + quote(c.name + ".calib.npy") +
                       c.quantize_args + " --dtype " + dt + " -o " + quote(qf),
                   tmp);
      INFO(c.name << " " << dt << "\n" << rq.out << rq.err);
      REQUIRE(rq.code == 0);
      CHECK(rq.out.find("output SQNR") != std::string::npos);
      CHECK(rq.out.find("weight SQNR") != std::string::npos);
      CHECK(rq.out.find("arena") != std::string::npos);
      const Result rr = attn_cli(
          "run " + quote(qf) + " --input " + quote(c.name + ".x.npy") + c.run_args + " -o " + quote(y), tmp);
      INFO(rr.err);
      REQUIRE(rr.code == 0);
      const double db = sqnr_db(npy_values(kQuant + c.name + ".y.npy"), npy_values(y));
      const double target = std::string(dt) == "s8" ? c.min_s8 : c.min_s16;
      std::printf("end to end %-10s %-3s SQNR %.2f dB (target %.0f)\n", c.name.c_str(), dt, db, target);
      CHECK(db >= target);
    }
  }
}

TEST_CASE("attn quantize writes the committed bytes on every host: ref, AVX2 and AVX-512 builds alike",
          "[cli][quant]") {
  // The calibration's float forward is scalar with double sums, never the
  // dispatched kernels, so every build (host-ref, host-release on any x86-64
  // CPU, ARM) must write exactly the committed files (quant/README.md).
  TempDir tmp;
  const Result a = attn_cli(
      "quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --causal -o " + quote(tmp / "s8.attn"),
      tmp);
  INFO(a.err);
  REQUIRE(a.code == 0);
  CHECK(slurp(tmp / "s8.attn") == slurp(kQuant + "mha_self.causal.s8.attn"));
  const Result b = attn_cli(
      "quantize mha_cross.attn --calib mha_cross.calib.npy --calib-kv mha_cross.calib_kv.npy --calib-value "
      "mha_cross.calib_v.npy --dtype s16 -o " +
          quote(tmp / "s16.attn"),
      tmp);
  INFO(b.err);
  REQUIRE(b.code == 0);
  CHECK(slurp(tmp / "s16.attn") == slurp(kQuant + "mha_cross.nomask.s16.attn"));
}

TEST_CASE("attn run --raw: int8/int16 I/O in the file's quantization agrees with float I/O", "[cli][quant]") {
  TempDir tmp;
  for (const char* f : {"mha_self.s8.attn", "mha_cross.s16.attn"}) {
    Loaded m(kQuant + f);
    REQUIRE(m.status == attn::Status::kOk);
    attn::Block b;
    REQUIRE(m.model.block(0, &b) == attn::Status::kOk);
    const bool s8 = b.dtype == attn::DType::kS8;
    const std::string base = s8 ? "mha_self" : "mha_cross";
    const std::string extra = s8 ? " --causal" : " --kv mha_cross.kv.npy --value mha_cross.v.npy";
    // Float run.
    REQUIRE(attn_cli("run " + quote(f) + " --input " + quote(base + ".x.npy") + extra + " -o " +
                         quote(tmp / "yf.npy"),
                     tmp)
                .code == 0);
    // The same inputs quantized with the file's parameters, run with --raw.
    const auto quantize_file = [&](const std::string& in, int k, const std::string& out) {
      const attn::npy::Array a = attn::npy::parse(slurp(kQuant + in));
      const attn::QuantParams p{b.io.scale[k], b.io.zero_point[k]};
      std::vector<int8_t> i8;
      std::vector<int16_t> i16;
      for (float v : a.f32) {
        const int32_t iv = attn::quantize_value(v, p, b.dtype);
        i8.push_back(static_cast<int8_t>(iv));
        i16.push_back(static_cast<int16_t>(iv));
      }
      spit(out, s8 ? attn::npy::serialize(a.shape, "|i1", i8.data(), 1)
                   : attn::npy::serialize(a.shape, "<i2", i16.data(), 2));
    };
    quantize_file(base + ".x.npy", 0, tmp / "x.npy");
    std::string raw_extra = " --causal";
    if (!s8) {
      quantize_file("mha_cross.kv.npy", 1, tmp / "kv.npy");
      quantize_file("mha_cross.v.npy", 2, tmp / "v.npy");
      raw_extra = " --kv " + quote(tmp / "kv.npy") + " --value " + quote(tmp / "v.npy");
    }
    const Result r = attn_cli("run " + quote(f) + " --raw --input " + quote(tmp / "x.npy") + raw_extra +
                                  " -o " + quote(tmp / "yr.npy"),
                              tmp);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const attn::npy::Array yr = attn::npy::parse(slurp(tmp / "yr.npy"));
    CHECK(yr.descr == (s8 ? "|i1" : "<i2"));
    const std::vector<double> yf = npy_values(tmp / "yf.npy");
    REQUIRE(yr.ints.size() == yf.size());
    size_t same = 0;
    for (size_t i = 0; i < yf.size(); ++i) {
      const double deq = static_cast<double>(
          static_cast<float>(static_cast<double>(b.io.scale[3]) * (yr.ints[i] - b.io.zero_point[3])));
      same += deq == yf[i] ? 1 : 0;
    }
    CHECK(same == yf.size());
  }
}

TEST_CASE("attn run --incremental on s8/s16 files equals the causal forward bit for bit",
          "[cli][quant][decode]") {
  TempDir tmp;
  // An s16 single block and an s8 two-block chain, made here with attn quantize.
  REQUIRE(attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s16 --causal --any-mask -o " +
                       quote(tmp / "self16.attn"),
                   tmp)
              .code == 0);
  REQUIRE(
      attn_cli("quantize two_layers.attn --calib two_layers.calib.npy --dtype s8 --causal --any-mask -o " +
                   quote(tmp / "two8.attn"),
               tmp)
          .code == 0);
  const std::vector<std::pair<std::string, std::string>> files = {{"mha_self.s8.attn", "mha_self.x.npy"},
                                                                  {tmp / "self16.attn", "mha_self.x.npy"},
                                                                  {tmp / "two8.attn", "two_layers.x.npy"}};
  const auto run_y = [&](const std::string& args) {
    const Result r = attn_cli("run " + args + " -o " + quote(tmp / "y.npy"), tmp);
    INFO(args << ": " << r.err);
    REQUIRE(r.code == 0);
    const attn::npy::Array y = attn::npy::parse(slurp(tmp / "y.npy"));
    fs::remove(tmp / "y.npy");
    return y;
  };
  for (const auto& f : files) {
    for (const char* window : {"", " --window 3"}) {
      const std::string base = quote(f.first) + " --input " + quote(f.second) + " --causal" + window;
      const attn::npy::Array full = run_y(base);
      REQUIRE(!full.f32.empty());
      for (const char* inc : {" --incremental", " --incremental --prefill 1", " --incremental --prefill 5"}) {
        CAPTURE(base, inc);
        const attn::npy::Array y = run_y(base + inc);
        CHECK(y.shape == full.shape);
        CHECK(y.f32 == full.f32);  // bit for bit: the same integers, dequantized alike
      }
    }
  }
  // --raw: int8 in, int8 out, identical to the forward's.
  Loaded m(kQuant + "mha_self.s8.attn");
  REQUIRE(m.status == attn::Status::kOk);
  attn::Block b;
  REQUIRE(m.model.block(0, &b) == attn::Status::kOk);
  const attn::npy::Array xf = attn::npy::parse(slurp(kQuant + "mha_self.x.npy"));
  std::vector<int8_t> xi;
  for (float v : xf.f32)
    xi.push_back(static_cast<int8_t>(attn::quantize_value(v, {b.io.scale[0], b.io.zero_point[0]}, b.dtype)));
  spit(tmp / "x8.npy", attn::npy::serialize(xf.shape, "|i1", xi.data(), 1));
  const std::string raw = "mha_self.s8.attn --raw --input " + quote(tmp / "x8.npy") + " --causal";
  const attn::npy::Array full = run_y(raw);
  const attn::npy::Array inc = run_y(raw + " --incremental --prefill 2");
  CHECK(inc.descr == "|i1");
  CHECK(inc.shape == full.shape);
  CHECK(inc.ints == full.ints);
  // The incremental run is not trivially equal to anything: a windowed run differs.
  CHECK(run_y(raw + " --incremental --window 2").ints != full.ints);
}

TEST_CASE("attn info --roles: the role list, one line per role", "[cli]") {
  TempDir tmp;
  const Result r = attn_cli("info --roles", tmp);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    int value = 0;
    std::string name, scope, owners, cpp_name, c_name;
    REQUIRE(fields >> value >> name >> scope >> owners >> cpp_name >> c_name);
    INFO(line);
    const char* want = attn::format::role_name(static_cast<attn::format::Role>(value));
    REQUIRE(want != nullptr);
    CHECK(name == want);
    CHECK(c_name.rfind("ATTN_ROLE_", 0) == 0);
    ++rows;
  }
  CHECK(rows == 82);
  CHECK(r.out.find("\n1 wq block f32,s8,s16 kWq ATTN_ROLE_WQ\n") != std::string::npos);
  CHECK(r.out.find("\n24 quant_params block s8,s16 kQuantParams ATTN_ROLE_QUANT_PARAMS\n") !=
        std::string::npos);
  CHECK(r.out.find("\n28 norm1_weight layer f32 kNorm1Weight ATTN_ROLE_NORM1_WEIGHT\n") != std::string::npos);
  CHECK(r.out.find("\n87 head_bias model s8 kHeadBias ATTN_ROLE_HEAD_BIAS\n") != std::string::npos);
  CHECK(r.out.find("\n15 user user - kUser ATTN_ROLE_USER\n") != std::string::npos);
  CHECK(attn_cli("info --roles mha_self.s8.attn", tmp).code != 0);
}

TEST_CASE("attn info and emit-c on quantized files", "[cli][quant]") {
  TempDir tmp;
  Result r = attn_cli("info mha_self.s8.attn --L 12", tmp);
  REQUIRE(r.code == 0);
  CHECK(r.out.find(".attn v2") != std::string::npos);
  CHECK(r.out.find("block 0: s8") != std::string::npos);
  CHECK(r.out.find("s8 arena(L=12,S=12)") != std::string::npos);
  CHECK(r.out.find("quantized I/O") != std::string::npos);
  CHECK(r.out.find("softmax: exp_multiplier") != std::string::npos);
  CHECK(r.out.find("quant_params") != std::string::npos);
  r = attn_cli("emit-c mha_cross.s16.attn --max-L 8 --max-S 10 -o " + quote(tmp / "m.h"), tmp);
  REQUIRE(r.code == 0);
  const std::vector<uint8_t> h = slurp(tmp / "m.h");
  const std::string hs(h.begin(), h.end());
  // The macro is the s16 plan's arena bytes at the given shapes.
  Loaded m(kQuant + "mha_cross.s16.attn");
  REQUIRE(m.status == attn::Status::kOk);
  attn::Block b;
  REQUIRE(m.model.block(0, &b) == attn::Status::kOk);
  attn::Plan plan;
  REQUIRE(attn::plan_attention(b.config, attn::DType::kS16, 8, 10, &plan) == attn::Status::kOk);
  // As an expression over attn.h's macros for the target's tile (its value: tests/emit_c_test.cpp).
  CHECK(plan.arena_bytes ==
        ATTN_ARENA_BYTES(2, b.config.inner_dim(), b.config.kv_dim(), 8, 10, ATTN_TILE_ROWS));
  CHECK(hs.find("#define ATTN_MODEL_ARENA_BYTES ATTN_ARENA_BYTES(2, 24, 24, 8, 10, ATTN_TILE_ROWS)") !=
        std::string::npos);
  CHECK(hs.find("block 0: s16") != std::string::npos);
}

TEST_CASE("attn quantize: bad calibration input and other errors leave no output", "[cli][quant]") {
  TempDir tmp;
  const std::string out = tmp / "out.attn";
  const auto quantize = [&](const std::string& calib, const std::string& more = "") {
    return attn_cli("quantize mha_self.attn --calib " + quote(calib) + " --dtype s8 -o " + quote(out) + more,
                    tmp);
  };
  const attn::npy::Array good = attn::npy::parse(slurp(kQuant + "mha_self.calib.npy"));
  std::vector<float> v = good.f32;

  SECTION("wrong shape") {
    spit(tmp / "rank2.npy",
         attn::npy::serialize_f32({good.shape[0] * good.shape[1], good.shape[2]}, v.data()));
    check_failure(quantize(tmp / "rank2.npy"), "rank2.npy", "[N, L, width]");
    spit(tmp / "wide.npy",
         attn::npy::serialize_f32({good.shape[0], good.shape[1] * 2, good.shape[2] / 2}, v.data()));
    check_failure(quantize(tmp / "wide.npy"), "wide.npy", "E = 32");
  }
  SECTION("NaN and Inf") {
    v[100] = std::numeric_limits<float>::quiet_NaN();
    spit(tmp / "nan.npy", attn::npy::serialize_f32(good.shape, v.data()));
    check_failure(quantize(tmp / "nan.npy"), "nan.npy", "not finite (nan)");
    v[100] = 0.0f;
    v[v.size() - 1] = -std::numeric_limits<float>::infinity();
    spit(tmp / "inf.npy", attn::npy::serialize_f32(good.shape, v.data()));
    check_failure(quantize(tmp / "inf.npy"), "inf.npy", "not finite (inf)");
  }
  SECTION("truncated file, wrong dtype, not a .npy, missing") {
    std::vector<uint8_t> b = slurp(kQuant + "mha_self.calib.npy");
    b.resize(b.size() - 7);
    spit(tmp / "short.npy", b);
    check_failure(quantize(tmp / "short.npy"), "short.npy", "disagrees");
    std::vector<int16_t> i(v.size(), 3);
    spit(tmp / "i16.npy", attn::npy::serialize(good.shape, "<i2", i.data(), 2));
    check_failure(quantize(tmp / "i16.npy"), "i16.npy", "float32");
    spit(tmp / "junk.npy", std::vector<uint8_t>{1, 2, 3});
    check_failure(quantize(tmp / "junk.npy"), "junk.npy", "not a .npy file");
    check_failure(quantize(tmp / "missing.npy"), "missing.npy", "cannot open");
  }
  SECTION("cross-attention needs --calib-kv of matching shape") {
    check_failure(
        attn_cli("quantize mha_cross.attn --calib mha_cross.calib.npy --dtype s16 -o " + quote(out), tmp),
        "mha_cross.attn", "--calib-kv");
    check_failure(
        attn_cli("quantize mha_cross.attn --calib mha_cross.calib.npy --calib-kv mha_cross.calib_v.npy "
                 "--dtype s16 -o " +
                     quote(out),
                 tmp),
        "mha_cross.calib_v.npy", "kdim = 16");
  }
  SECTION("usage: dtype, an already quantized file") {
    check_failure(
        attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s4 -o " + quote(out), tmp),
        "--dtype", "s8 or s16");
    check_failure(
        attn_cli("quantize mha_self.s8.attn --calib mha_self.calib.npy --dtype s8 -o " + quote(out), tmp),
        "mha_self.s8.attn", "already s8");
    check_failure(attn_cli("run mha_self.attn --raw --input mha_self.x.npy -o " + quote(out), tmp),
                  "mha_self.attn", "--raw needs quantized");
    check_failure(attn_cli("run mha_self.s8.attn --raw --input mha_self.x.npy -o " + quote(out), tmp),
                  "mha_self.x.npy", "int8");
  }
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(tmp.path)) {
    INFO(e.path());
    CHECK(e.path().extension() == ".npy");  // only the test's own inputs; no temp or output file
  }
}

#endif  // ATTN_CLI_PATH

#ifdef ATTN_CLI_PATH
TEST_CASE("attn quantize --per-tensor: one weight scale per projection", "[cli][quant]") {
  TempDir tmp;
  for (const bool per_tensor : {false, true}) {
    const std::string out = tmp / (per_tensor ? "pt.attn" : "pc.attn");
    const Result r = attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --causal -o " +
                                  quote(out) + (per_tensor ? " --per-tensor" : ""),
                              tmp);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK((r.out.find("per-tensor int8") != std::string::npos) == per_tensor);
    Loaded m(out);
    REQUIRE(m.status == attn::Status::kOk);
    attn::Block b;
    REQUIRE(m.model.block(0, &b) == attn::Status::kOk);
    // Same input and output scales for every channel: the multipliers and shifts
    // of a per-tensor projection are all equal; per channel they differ.
    const int32_t D = b.config.inner_dim();
    bool all_equal = true;
    for (int32_t c = 1; c < D; ++c)
      all_equal =
          all_equal && b.s8.q.multiplier[c] == b.s8.q.multiplier[0] && b.s8.q.shift[c] == b.s8.q.shift[0];
    CHECK(all_equal == per_tensor);
  }
}
#endif  // ATTN_CLI_PATH

#ifdef ATTN_CLI_PATH
namespace {

// Every tensor of two quantized block files byte for byte, but entry `skip` of
// each quant params table (-1: none).
bool same_tensors(const Loaded& a, const Loaded& b, int skip) {
  if (a.model.tensor_count() != b.model.tensor_count()) return false;
  for (uint32_t i = 0; i < a.model.tensor_count(); ++i) {
    attn::TensorView x, y;
    if (a.model.tensor(i, &x) != attn::Status::kOk || b.model.tensor(i, &y) != attn::Status::kOk)
      return false;
    if (x.role != y.role || x.byte_size != y.byte_size || std::string(x.name) != y.name) return false;
    std::vector<uint8_t> u(static_cast<const uint8_t*>(x.data),
                           static_cast<const uint8_t*>(x.data) + x.byte_size);
    std::vector<uint8_t> v(static_cast<const uint8_t*>(y.data),
                           static_cast<const uint8_t*>(y.data) + y.byte_size);
    if (x.role == attn::format::Role::kQuantParams && skip >= 0) {
      std::fill_n(u.begin() + 4 * skip, 4, uint8_t{0});
      std::fill_n(v.begin() + 4 * skip, 4, uint8_t{0});
    }
    if (u != v) return false;
  }
  return true;
}

int32_t coverage_of(const Loaded& m, int entry) {
  attn::TensorView qp;
  REQUIRE(m.model.find_block_tensor(0, attn::format::Role::kQuantParams, &qp) == attn::Status::kOk);
  return static_cast<const int32_t*>(qp.data)[entry];
}

}  // namespace

TEST_CASE("attn quantize records the calibration mask, attn run refuses another one", "[cli][quant][mask]") {
  TempDir tmp;
  using attn::format::kQpMaskCoverage;
  using attn::format::kQpMaskKeyLength;
  // The committed quantized fixtures hold coverage 0 (written before the field);
  // the default now records the calibration mask.
  const std::string self8 = tmp / "self8.attn", cross16 = tmp / "cross16.attn", any8 = tmp / "any8.attn",
                    pad8 = tmp / "pad8.attn";
  REQUIRE(attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --causal -o " + quote(self8),
                   tmp)
              .code == 0);
  REQUIRE(attn_cli("quantize mha_cross.attn --calib mha_cross.calib.npy --calib-kv mha_cross.calib_kv.npy "
                   "--calib-value mha_cross.calib_v.npy --dtype s16 -o " +
                       quote(cross16),
                   tmp)
              .code == 0);
  const Loaded old8(kQuant + "mha_self.s8.attn"), old16(kQuant + "mha_cross.s16.attn"), new8(self8),
      new16(cross16);
  REQUIRE(new8.status == attn::Status::kOk);
  REQUIRE(new16.status == attn::Status::kOk);
  CHECK(coverage_of(old8, kQpMaskCoverage) == 0);
  CHECK(coverage_of(new8, kQpMaskCoverage) == static_cast<int32_t>(attn::MaskCoverage::kCausal));
  CHECK(coverage_of(new16, kQpMaskCoverage) == static_cast<int32_t>(attn::MaskCoverage::kNoMask));
  CHECK_FALSE(same_tensors(old8, new8, -1));

  // --any-mask: widened ranges (other context and output scales), coverage 0.
  REQUIRE(attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --causal --any-mask -o " +
                       quote(any8),
                   tmp)
              .code == 0);
  const Loaded a8(any8);
  REQUIRE(a8.status == attn::Status::kOk);
  CHECK(coverage_of(a8, kQpMaskCoverage) == 0);
  CHECK_FALSE(same_tensors(a8, new8, kQpMaskCoverage));
  check_failure(
      attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --any-mask --exact-mask -o " +
                   quote(tmp / "x.attn"),
               tmp),
      "--any-mask", "--exact-mask");

  // Causal key padding is recorded as such, with its length.
  const std::string cpad8 = tmp / "cpad8.attn";
  REQUIRE(
      attn_cli("quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --causal --key-length 5 -o " +
                   quote(cpad8),
               tmp)
          .code == 0);
  const Loaded cp8(cpad8);
  REQUIRE(cp8.status == attn::Status::kOk);
  CHECK(coverage_of(cp8, kQpMaskCoverage) == static_cast<int32_t>(attn::MaskCoverage::kCausalKeyLength));
  CHECK(coverage_of(cp8, kQpMaskKeyLength) == 5);
  // Key padding is recorded with its length.
  REQUIRE(attn_cli(
              "quantize mha_self.attn --calib mha_self.calib.npy --dtype s8 --key-length 5 -o " + quote(pad8),
              tmp)
              .code == 0);
  const Loaded p8(pad8);
  REQUIRE(p8.status == attn::Status::kOk);
  CHECK(coverage_of(p8, kQpMaskCoverage) == static_cast<int32_t>(attn::MaskCoverage::kKeyLength));
  CHECK(coverage_of(p8, kQpMaskKeyLength) == 5);

  // attn run: the calibration mask runs; another is refused with the remedy.
  const std::string y = quote(tmp / "y.npy");
  CHECK(attn_cli("run " + quote(self8) + " --input mha_self.x.npy --causal -o " + y, tmp).code == 0);
  CHECK(attn_cli("run " + quote(self8) + " --input mha_self.x.npy --causal --window 3 -o " + y, tmp).code !=
        0);
  const Result r = attn_cli("run " + quote(self8) + " --input mha_self.x.npy -o " + y, tmp);
  INFO(r.out << r.err);
  CHECK(r.code != 0);
  CHECK(r.err.find("--any-mask") != std::string::npos);
  CHECK(r.err.find("--causal") != std::string::npos);
  CHECK(attn_cli("run " + quote(pad8) + " --input mha_self.x.npy --key-length 5 -o " + y, tmp).code == 0);
  CHECK(attn_cli("run " + quote(pad8) + " --input mha_self.x.npy --key-length 6 -o " + y, tmp).code != 0);
  CHECK(
      attn_cli("run " + quote(cpad8) + " --input mha_self.x.npy --causal --key-length 5 -o " + y, tmp).code ==
      0);
  CHECK(attn_cli("run " + quote(cpad8) + " --input mha_self.x.npy --causal -o " + y, tmp).code != 0);
  CHECK(attn_cli("run " + quote(cpad8) + " --input mha_self.x.npy --key-length 5 -o " + y, tmp).code != 0);
  // Files from before the field (coverage 0), and --any-mask files, run every mask.
  for (const std::string& f : {kQuant + "mha_self.s8.attn", any8}) {
    for (const char* mask : {"", " --causal", " --key-length 4"}) {
      INFO(f << mask);
      CHECK(attn_cli("run " + quote(f) + " --input mha_self.x.npy" + mask + " -o " + y, tmp).code == 0);
    }
  }
}
#endif  // ATTN_CLI_PATH
