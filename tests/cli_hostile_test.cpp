// cli_hostile_test.cpp: the `attn` tools binary on hostile input, run as a
// user would: zero or huge dims, directories and devices where files belong,
// endless streams, outputs onto FIFOs, huge tensor counts, malformed headers,
// degenerate calibration, control bytes in names, and a model calibrated
// without the mask it runs with. Every failure: exit 1, one stderr line naming
// the problem, no output file left behind.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../tools/cli/npy.h"
#include "../tools/cli/safetensors.h"
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

namespace fs = std::filesystem;

namespace {

using namespace cli;

const std::string kFormat = kFormatDir;
const std::string kQuantDir = kFormatDir + "quant/";

struct StTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// A safetensors file of F32 tensors, packed in order; `data_bytes` (if not
// -1) overrides the data section's size; `extra` is spliced into the header
// object verbatim (after the tensors).
std::vector<uint8_t> safetensors_file(const std::vector<StTensor>& ts, const std::string& extra = "") {
  std::string h = "{";
  size_t off = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    size_t n = 1;
    std::string shape;
    for (size_t k = 0; k < ts[i].shape.size(); ++k) {
      n *= static_cast<size_t>(ts[i].shape[k]);
      shape += (k ? "," : "") + std::to_string(ts[i].shape[k]);
    }
    h += (i ? "," : "") + std::string("\"") + ts[i].name + "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
         "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + 4 * n) + "]}";
    off += 4 * n;
  }
  h += extra + "}";
  std::vector<uint8_t> b(8 + h.size() + off, 0);
  const uint64_t hl = h.size();
  std::memcpy(b.data(), &hl, 8);
  std::memcpy(b.data() + 8, h.data(), h.size());
  for (size_t i = 8 + h.size(); i < b.size(); i += 4) {
    const float v = 0.01f * static_cast<float>((i / 4) % 17);
    std::memcpy(b.data() + i, &v, 4);
  }
  return b;
}

// A .npy file with a hand-written header dict (padded as NumPy does).
std::vector<uint8_t> npy_with_header(const std::string& dict, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = attn::npy::header_bytes(dict);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

}  // namespace

TEST_CASE("attn import refuses zero and oversized dims before dividing by them or reading tensors", "[cli]") {
  TempDir tmp;
  const std::string out = tmp / "out.attn";
  // HF Llama with a q_proj of 0 rows: head_dim 0 (was a division by zero).
  spit(tmp / "hf0.safetensors", safetensors_file({{"l.self_attn.q_proj.weight", {0, 64}},
                                                  {"l.self_attn.k_proj.weight", {0, 64}},
                                                  {"l.self_attn.v_proj.weight", {0, 64}},
                                                  {"l.self_attn.o_proj.weight", {64, 0}}}));
  check_error(run("import " + quote(tmp / "hf0.safetensors") + " --heads 4 -o " + quote(out), tmp),
              {"hf0.safetensors", "= 0 is out of range"});
  // llama2.c layout with E = 0 (was a division by zero when permuting the rotary rows).
  spit(tmp / "l2c0.safetensors", safetensors_file({{"attention.wq.weight", {8, 0}},
                                                   {"attention.wk.weight", {8, 0}},
                                                   {"attention.wv.weight", {8, 0}},
                                                   {"attention.wo.weight", {0, 8}}}));
  check_error(run("import " + quote(tmp / "l2c0.safetensors") + " --heads 2 -o " + quote(out), tmp),
              {"l2c0.safetensors", "E = 0"});
  // E = 5000 > ATTN_MAX_DIM: 400 MB of (sparse) weights, refused from the header alone.
  {
    const int64_t E = 5000;
    std::vector<uint8_t> head = safetensors_file({});
    std::string h = "{\"in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(3 * E) + "," +
                    std::to_string(E) + "],\"data_offsets\":[0," + std::to_string(12 * E * E) +
                    "]},\"out_proj.weight\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(E) + "," +
                    std::to_string(E) + "],\"data_offsets\":[" + std::to_string(12 * E * E) + "," +
                    std::to_string(16 * E * E) + "]}}";
    std::vector<uint8_t> b(8 + h.size());
    const uint64_t hl = h.size();
    std::memcpy(b.data(), &hl, 8);
    std::memcpy(b.data() + 8, h.data(), h.size());
    spit(tmp / "big.safetensors", b);
    fs::resize_file(tmp / "big.safetensors", b.size() + static_cast<size_t>(16 * E * E));  // sparse
    const Result r = run("import " + quote(tmp / "big.safetensors") + " --heads 4 -o " + quote(out), tmp);
    check_error(r, {"big.safetensors", "E = 5000", "ATTN_MAX_DIM"});
    CHECK(r.seconds < 2.0);
  }
  CHECK(no_leftovers(tmp, {"hf0.safetensors", "l2c0.safetensors", "big.safetensors"}));
}

TEST_CASE("attn: a directory or a huge sparse file where a file is needed is refused, not allocated",
          "[cli]") {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string dir = tmp / "adir";
  fs::create_directories(dir);
  for (const std::string& cmd :
       {"verify " + quote(dir), "info " + quote(dir),
        "run " + quote(dir) + " --input mha_packed.self.x.npy -o " + quote(out),
        "emit-c " + quote(dir) + " -o " + quote(out), "import " + quote(dir) + " --heads 4 -o " + quote(out),
        "run mha_packed.attn --input " + quote(dir) + " -o " + quote(out)})
    check_error(run(cmd, tmp), {"adir", "is a directory"});
  check_error(run("quantize " + quote(dir) + " --calib " + quote(kQuantDir + "mha_self.calib.npy") +
                      " --dtype s8 -o " + quote(out),
                  tmp),
              {"adir", "is a directory"});
  check_error(run("quantize " + quote(kQuantDir + "mha_self.attn") + " --calib " + quote(dir) +
                      " --dtype s8 -o " + quote(out),
                  tmp),
              {"adir", "is a directory"});
  // A 1 TiB sparse .npy whose header agrees with its size: [65536, 1024, 4096] float32.
  spit(tmp / "huge.npy", attn::npy::serialize({65536, 1024, 4096}, "<f4", nullptr, 0));
  fs::resize_file(tmp / "huge.npy", fs::file_size(tmp / "huge.npy") + (uintmax_t{1} << 40));
  check_error(run("run mha_packed.attn --input " + quote(tmp / "huge.npy") + " -o " + quote(out), tmp),
              {"huge.npy", "exceeds this machine's memory"});
  check_error(run("quantize " + quote(kQuantDir + "mha_self.attn") + " --calib " + quote(tmp / "huge.npy") +
                      " --dtype s8 -o " + quote(out),
                  tmp),
              {"huge.npy", "exceeds this machine's memory"});
  fs::remove(tmp / "huge.npy");
  CHECK(no_leftovers(tmp, {"adir"}));
}

TEST_CASE("attn run reads a piped .npy up to what its header declares, and refuses an endless stream",
          "[cli]") {
  TempDir tmp;
  const std::string x = kFormat + "mha_packed.self.x.npy";
  // The same result from a pipe as from the file.
  REQUIRE(run("run mha_packed.attn --input " + quote(x) + " -o " + quote(tmp / "a.npy"), tmp).code == 0);
  const Result piped = run("run mha_packed.attn --input /dev/stdin -o " + quote(tmp / "b.npy"), tmp, kFormat,
                           "cat " + quote(x) + " | ");
  INFO(piped.err);
  REQUIRE(piped.code == 0);
  CHECK(slurp(tmp / "a.npy") == slurp(tmp / "b.npy"));
  // The file, then 200 MB more: refused after the declared bytes, not read to the end.
  const Result endless = run("run mha_packed.attn --input /dev/stdin -o " + quote(tmp / "c.npy"), tmp,
                             kFormat, "(cat " + quote(x) + "; head -c 200000000 /dev/zero) | ");
  check_error(endless, {"/dev/stdin", "more data than shape"});
  // A stream that is not a .npy at all fails on its first bytes.
  check_error(run("run mha_packed.attn --input /dev/stdin -o " + quote(tmp / "c.npy"), tmp, kFormat,
                  "head -c 100000000 /dev/zero | "),
              {"/dev/stdin", "not a .npy file"});
  CHECK(no_leftovers(tmp, {"a.npy", "b.npy"}));
}

TEST_CASE("attn -o onto a FIFO is refused and leaves the FIFO in place, and an empty -o is refused",
          "[cli]") {
  TempDir tmp;
  const std::string fifo = tmp / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::vector<std::string> cmds = {
      "run mha_packed.attn --input mha_packed.self.x.npy -o " + quote(fifo),
      "import mha_packed.safetensors --heads 4 -o " + quote(fifo), "emit-c mha_packed.attn -o " + quote(fifo),
      "quantize " + quote(kQuantDir + "mha_self.attn") + " --calib " +
          quote(kQuantDir + "mha_self.calib.npy") + " --dtype s8 -o " + quote(fifo)};
  for (const std::string& c : cmds) {
    check_error(run(c, tmp), {"fifo", "not a regular file"});
    CHECK(fs::is_fifo(fifo));
  }
  check_error(run("run mha_packed.attn --input mha_packed.self.x.npy -o ''", tmp), {"-o", "empty"});
  check_error(run("emit-c mha_packed.attn --output=", tmp), {"--output", "empty"});
  check_error(run("verify ''", tmp), {"empty file name"});
  CHECK(no_leftovers(tmp, {"fifo"}));
}

TEST_CASE("attn import: 100k tensors parse in O(n log n), and duplicates, overlaps and bad numbers are named",
          "[cli]") {
  TempDir tmp;
  const std::string out = tmp / "out.attn";
  std::vector<StTensor> many;
  for (int i = 0; i < 100000; ++i) many.push_back({"t" + std::to_string(i), {1}});
  spit(tmp / "many.safetensors", safetensors_file(many));
  const Result r = run("import " + quote(tmp / "many.safetensors") + " --heads 4 -o " + quote(out), tmp);
  check_error(r, {"many.safetensors", "no attention weights found"});
  CHECK(r.seconds < 3.0);  // the pairwise name check took 11.7 s
  many.push_back({"t77777", {1}});
  spit(tmp / "dup.safetensors", safetensors_file(many));
  const Result d = run("import " + quote(tmp / "dup.safetensors") + " --heads 4 -o " + quote(out), tmp);
  check_error(d, {"dup.safetensors", "'t77777' appears twice"});
  CHECK(d.seconds < 3.0);
  // Two tensors on the same bytes, and two that overlap.
  const std::string ov =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[%B,%E]}}";
  for (const auto& be : {std::make_pair(0, 8), std::make_pair(4, 12)}) {
    std::string h = ov;
    h.replace(h.find("%B"), 2, std::to_string(be.first));
    h.replace(h.find("%E"), 2, std::to_string(be.second));
    std::vector<uint8_t> b(8 + h.size() + 12, 0);
    const uint64_t hl = h.size();
    std::memcpy(b.data(), &hl, 8);
    std::memcpy(b.data() + 8, h.data(), h.size());
    spit(tmp / "ov.safetensors", b);
    check_error(run("import " + quote(tmp / "ov.safetensors") + " --heads 4 -o " + quote(out), tmp),
                {"ov.safetensors", "share bytes"});
  }
  // "shape":[-]: a parse error with its position, not "stoll".
  const std::string bad = "{\"a\":{\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,4]}}";
  std::vector<uint8_t> b(8 + bad.size() + 4, 0);
  const uint64_t hl = bad.size();
  std::memcpy(b.data(), &hl, 8);
  std::memcpy(b.data() + 8, bad.data(), bad.size());
  spit(tmp / "minus.safetensors", b);
  const Result m = run("import " + quote(tmp / "minus.safetensors") + " --heads 4 -o " + quote(out), tmp);
  check_error(m, {"minus.safetensors", "bad JSON header at byte 29", "expected an integer"});
  CHECK(m.err.find("stoll") == std::string::npos);
  CHECK(no_leftovers(tmp, {"many.safetensors", "dup.safetensors", "ov.safetensors", "minus.safetensors"}));
}

TEST_CASE("attn: .npy headers with duplicate keys or a bad fortran_order are refused, and dtypes are named",
          "[cli]") {
  TempDir tmp;
  const std::string out = tmp / "out.npy";
  std::vector<uint8_t> data(4 * 5 * 16, 0);  // mha_packed's input: [5, 16] float32
  const std::string shape = "(5, 16)";
  spit(tmp / "dup.npy",
       npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", 'shape': (80,), }",
                       data));
  check_error(run("run mha_packed.attn --input " + quote(tmp / "dup.npy") + " -o " + quote(out), tmp),
              {"dup.npy", "'shape' appears twice"});
  spit(tmp / "falsey.npy",
       npy_with_header("{'descr': '<f4', 'fortran_order': Falsey, 'shape': " + shape + ", }", data));
  check_error(run("run mha_packed.attn --input " + quote(tmp / "falsey.npy") + " -o " + quote(out), tmp),
              {"falsey.npy", "'fortran_order' is 'Falsey'"});
  spit(tmp / "fortran.npy",
       npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': " + shape + ", }", data));
  check_error(run("run mha_packed.attn --input " + quote(tmp / "fortran.npy") + " -o " + quote(out), tmp),
              {"fortran.npy", "Fortran-order"});
  // uint8 data: named as uint8, with what is expected.
  spit(tmp / "u8.npy", npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': " + shape + ", }",
                                       std::vector<uint8_t>(80, 1)));
  check_error(run("run mha_packed.attn --input " + quote(tmp / "u8.npy") + " -o " + quote(out), tmp),
              {"u8.npy", "uint8 ('|u1')", "float32"});
  check_error(run("run " + quote(kQuantDir + "mha_self.s8.attn") + " --raw --input " + quote(tmp / "u8.npy") +
                      " -o " + quote(out),
                  tmp),
              {"u8.npy", "uint8 ('|u1')", "int8 ('|i1')"});
  CHECK(no_leftovers(tmp, {"dup.npy", "falsey.npy", "fortran.npy", "u8.npy"}));
}

TEST_CASE("attn: --flag=value, --rope-base underflow, and a failed write say what is wrong", "[cli]") {
  TempDir tmp;
  const std::string out = tmp / "out";
  check_error(run("run mha_packed.attn --input mha_packed.self.x.npy --causal=1 -o " + quote(out), tmp),
              {"--causal", "takes no value"});
  // --opt=value works for valued options.
  CHECK(run("run mha_packed.attn --input=mha_packed.self.x.npy --output=" + quote(out), tmp).code == 0);
  fs::remove(out);
  // 1e-50 is 0 as float32: was written as a model without rotary embedding.
  for (const char* base : {"1e-50", "1e-45", "-0.5", "nan"})
    check_error(
        run(std::string("import llama_hf.safetensors --heads 4 --rope-base ") + base + " -o " + quote(out),
            tmp),
        {"--rope-base"});
  CHECK(run("import llama_hf.safetensors --heads 4 --rope-base 0 -o " + quote(out), tmp).code == 0);
  fs::remove(out);
  // A file size limit of 1 KiB (SIGXFSZ ignored: write() fails with EFBIG): the reason is given.
  const Result r = run("import mha_packed.safetensors --heads 4 -o " + quote(out), tmp, kFormat,
                       "trap '' XFSZ; ulimit -f 1; ");
  check_error(r, {"out", "write failed (File too large)"});
  CHECK(no_leftovers(tmp, {}));
}

TEST_CASE("attn info escapes control bytes in tensor names", "[cli]") {
  TempDir tmp;
  const std::string model = tmp / "m.attn";
  const std::string name = "evil\x1b[2J\rfake line\nnext";
  const Result imp = run("import mha_packed.safetensors --heads 4 --extra " + quote(name + "=in_proj_bias") +
                             " -o " + quote(model),
                         tmp);
  INFO(imp.err);
  REQUIRE(imp.code == 0);
  const Result r = run("info " + quote(model), tmp);
  REQUIRE(r.code == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find('\r') == std::string::npos);
  CHECK(r.out.find("fake line\n") == std::string::npos);
  CHECK(r.out.find("evil\\x1b[2J\\x0dfake line\\x0anext") != std::string::npos);
}

TEST_CASE("attn quantize names the stage that cannot be quantized, and refuses degenerate calibration",
          "[cli][quant]") {
  TempDir tmp;
  const std::string out = tmp / "out.attn";
  const attn::npy::Array good = attn::npy::parse(slurp(kQuantDir + "mha_self.calib.npy"));
  const auto quantize = [&](const std::vector<float>& v, const std::string& dt) {
    spit(tmp / "c.npy", attn::npy::serialize_f32(good.shape, v.data()));
    return run(
        "quantize mha_self.attn --calib " + quote(tmp / "c.npy") + " --dtype " + dt + " -o " + quote(out),
        tmp, kQuantDir);
  };
  for (const double scale : {1e10, 1e18}) {
    std::vector<float> v(good.f32.begin(), good.f32.end());
    for (float& x : v) x = static_cast<float>(x * scale);
    for (const char* dt : {"s8", "s16"})
      check_error(quantize(v, dt), {"block 0", "stage scores", "too wide"});
  }
  std::vector<float> tiny(good.f32.begin(), good.f32.end());
  for (float& x : tiny) x = static_cast<float>(x * 1e-30);
  for (const char* dt : {"s8", "s16"})
    check_error(quantize(tiny, dt), {"block 0", "stage scores", "too small"});
  std::vector<float> outlier(good.f32.begin(), good.f32.end());
  outlier[5] = 1e6f;
  check_error(quantize(outlier, "s8"), {"block 0", "stage scores", "outlier"});
  const std::vector<float> zero(good.f32.size(), 0.0f);
  for (const char* dt : {"s8", "s16"}) check_error(quantize(zero, dt), {"block 0", "degenerate calibration"});
  CHECK(no_leftovers(tmp, {"c.npy"}));
}

TEST_CASE("attn quantize without the run's mask stays within 1 dB of quantizing with it", "[cli][quant]") {
  TempDir tmp;
  // mha_self: self-attention, the reference y is PyTorch's causal float64 output.
  // Key padding and a window: the reference is the float32 model's own output.
  struct Case {
    std::string model, calib, x, run_mask, ref;
  };
  REQUIRE(run("run mha_self.attn --input mha_self.x.npy --causal --key-length 5 -o " + quote(tmp / "pad.npy"),
              tmp, kQuantDir)
              .code == 0);
  REQUIRE(run("run mha_self.attn --input mha_self.x.npy --causal --window 2 -o " + quote(tmp / "win.npy"),
              tmp, kQuantDir)
              .code == 0);
  const std::vector<Case> cases = {
      {"mha_self.attn", "mha_self.calib.npy", "mha_self.x.npy", "--causal", kQuantDir + "mha_self.y.npy"},
      {"mha_self.attn", "mha_self.calib.npy", "mha_self.x.npy", "--causal --key-length 5", tmp / "pad.npy"},
      {"mha_self.attn", "mha_self.calib.npy", "mha_self.x.npy", "--causal --window 2", tmp / "win.npy"}};
  for (const Case& c : cases) {
    const std::vector<double> ref = npy_values(c.ref);
    for (const char* dt : {"s8", "s16"}) {
      double db[2] = {0, 0};
      for (int with_mask = 0; with_mask < 2; ++with_mask) {
        const std::string q = tmp / "q.attn";
        const std::string calib_mask = with_mask != 0 ? " " + c.run_mask : "";
        // Without the mask: the default records "no mask" and the run is refused
        // (kMaskNotCalibrated); --any-mask ranges must hold within 1 dB. A window
        // has no coverage of its own: calibrated causal, it needs --any-mask too.
        // Causal key padding has none either: attn quantize asks for --any-mask.
        const bool window = calib_mask.find("--window") != std::string::npos;
        const bool padded = calib_mask.find("--key-length") != std::string::npos;
        if (with_mask == 0) {
          const Result rd =
              run("quantize " + c.model + " --calib " + c.calib + " --dtype " + dt + " -o " + quote(q), tmp,
                  kQuantDir);
          REQUIRE(rd.code == 0);
          const Result rr =
              run("run " + quote(q) + " --input " + c.x + " " + c.run_mask + " -o " + quote(tmp / "y.npy"),
                  tmp, kQuantDir);
          CHECK(rr.code != 0);
          CHECK(rr.err.find("kMaskNotCalibrated") != std::string::npos);
        }
        const std::string qa = "quantize " + c.model + " --calib " + c.calib + " --dtype " + dt +
                               (window ? std::string(" --causal") : calib_mask) +
                               (with_mask == 0 || window || padded ? " --any-mask" : "") + " -o " + quote(q);
        const Result rq = run(qa, tmp, kQuantDir);
        INFO(qa << "\n" << rq.err);
        REQUIRE(rq.code == 0);
        const Result rr =
            run("run " + quote(q) + " --input " + c.x + " " + c.run_mask + " -o " + quote(tmp / "y.npy"), tmp,
                kQuantDir);
        INFO(rr.err);
        REQUIRE(rr.code == 0);
        db[with_mask] = sqnr_db(ref, npy_values(tmp / "y.npy"));
      }
      INFO(c.run_mask << " " << dt << ": calibrated without the mask " << db[0] << " dB, with it " << db[1]);
      CHECK(db[0] >= db[1] - 1.0);
    }
  }
}

TEST_CASE("attn import: a config.json over 1 MiB is refused by its size, before it is read", "[cli]") {
  TempDir tmp;
  const std::string model = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  const std::string out = tmp / "out.attn";
  // A valid config padded past 1 MiB (one long string member): refused, though it would parse.
  std::string cfg = slurp_text(model + "llama.config.json");
  const size_t brace = cfg.find('{');
  REQUIRE(brace != std::string::npos);
  cfg.insert(brace + 1, "\"padding\": \"" + std::string((size_t{1} << 20), 'x') + "\",");
  spit(tmp / "padded.json", cfg);
  const std::string import = "import " + quote(model + "llama.safetensors") + " --config ";
  check_error(run(import + quote(tmp / "padded.json") + " -o " + quote(out), tmp),
              {"padded.json", std::to_string(cfg.size()) + " bytes", "1 MiB (1048576 bytes)"});
  // 100 MB (sparse): refused at once, not read and parsed (40 s and 6 GB).
  spit(tmp / "huge.json", std::string("{"));
  fs::resize_file(tmp / "huge.json", 100000000);
  const Result r = run(import + quote(tmp / "huge.json") + " -o " + quote(out), tmp);
  check_error(r, {"huge.json", "100000000 bytes", "1 MiB"});
  CHECK(r.seconds < 2.0);
  // Exactly at the bound is still read (and then judged as JSON).
  spit(tmp / "edge.json", std::string((size_t{1} << 20), ' '));
  check_error(run(import + quote(tmp / "edge.json") + " -o " + quote(out), tmp), {"edge.json", "bad JSON"});
  CHECK(no_leftovers(tmp, {"padded.json", "huge.json", "edge.json"}));
}

TEST_CASE("attn import: a model with 200k extra tensors is refused at once, naming the 4096-tensor cap",
          "[cli]") {
  TempDir tmp;
  const std::string model = std::string(ATTN_TEST_DATA_DIR) + "/model/";
  // The Llama fixture's tensors (their shapes; the values do not matter here)
  // and 200k more float tensors, each of which would become a user tensor.
  std::vector<StTensor> ts;
  for (const attn::safetensors::Tensor& t : attn::safetensors::parse(slurp(model + "llama.safetensors")))
    ts.push_back({t.name, t.shape});
  const size_t own = ts.size();
  for (int i = 0; i < 200000; ++i) ts.push_back({"extra." + std::to_string(i), {1}});
  spit(tmp / "many.safetensors", safetensors_file(ts));
  const Result r = run("import " + quote(tmp / "many.safetensors") + " --config " +
                           quote(model + "llama.config.json") + " -o " + quote(tmp / "out.attn"),
                       tmp);
  check_error(r, {"many.safetensors", "200000 other float tensors", "4096", "ATTN_MAX_TENSORS"});
  // Wall time, on a machine that may be busy: linear takes about 1 s idle; the
  // pairwise name check that ran before the cap took 72 s for 200k names.
  CHECK(r.seconds < 30.0);
  // The same model without the extras imports.
  ts.resize(own);
  spit(tmp / "few.safetensors", safetensors_file(ts));
  run_ok("import " + quote(tmp / "few.safetensors") + " --config " + quote(model + "llama.config.json") +
             " -o " + quote(tmp / "out.attn"),
         tmp);
  CHECK(no_leftovers(tmp, {"many.safetensors", "few.safetensors", "out.attn"}));
}

TEST_CASE("attn -o: a symlink or FIFO planted at the old temporary name PATH.tmp.<pid> is not followed",
          "[cli]") {
  TempDir tmp;
  // `exec` keeps the shell's pid ($$) for attn: the old name was predictable.
  const std::string out = tmp / "out.attn";
  const std::string victim = tmp / "victim.txt";
  spit(victim, std::string("precious\n"));
  const std::string import = "import mha_packed.safetensors --heads 4 -o " + quote(out);
  const std::string plant_link = "ln -s " + quote(victim) + " " + quote(out) + ".tmp.$$ && exec ";
  const Result r = run(import, tmp, kFormat, plant_link);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp_text(victim) == "precious\n");  // the symlink's target is untouched
  CHECK(!fs::is_symlink(out));                // the output is a file of its own
  CHECK(fs::is_regular_file(out));
  CHECK(slurp(out) == slurp(kFormat + "mha_packed.attn"));
  size_t links = 0;
  for (const auto& e : fs::directory_iterator(tmp.path)) links += fs::is_symlink(e.symlink_status()) ? 1 : 0;
  CHECK(links == 1);  // the planted link is still there, not renamed over the output
  // A FIFO at the old name (a reader beside it, so that an old attn would not
  // block forever): not written into, and the output is a regular file.
  for (const auto& e : fs::directory_iterator(tmp.path))
    if (fs::is_symlink(e.symlink_status())) fs::remove(e.path());
  fs::remove(out);
  const std::string plant_fifo = "mkfifo " + quote(out) + ".tmp.$$ && (timeout 5 cat " + quote(out) +
                                 ".tmp.$$ >" + quote(tmp / "drained") + " 2>/dev/null &) && exec ";
  const Result f = run(import, tmp, kFormat, plant_fifo);
  INFO(f.err);
  REQUIRE(f.code == 0);
  REQUIRE(fs::is_regular_file(out));  // not a FIFO, which the reads below would wait on forever
  CHECK(slurp(out) == slurp(kFormat + "mha_packed.attn"));
  size_t fifos = 0;
  for (const auto& e : fs::directory_iterator(tmp.path)) fifos += fs::is_fifo(e.symlink_status()) ? 1 : 0;
  CHECK(fifos == 1);
  // No temporary file is left beside the output.
  for (const auto& e : fs::directory_iterator(tmp.path)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("out.attn.tmp.", 0) == 0) CHECK(fs::is_fifo(e.symlink_status()));
  }
}

#endif  // ATTN_CLI_PATH
