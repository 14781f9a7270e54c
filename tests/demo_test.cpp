// The block demo model (tests/data/demo/demo.attn, tools/train/train_demo.py) through `attn quantize
// --residual`: block 1 must be calibrated on x + block0(x), the input it sees
// when the model runs, and not on block0(x) alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/cli/npy.h"
#include "attn/model.h"
#include "attn/quantize.h"

#ifdef ATTN_CLI_PATH

namespace {

const std::string kDemo = std::string(ATTN_TEST_DATA_DIR) + "/demo/";

// A file in a 16-byte aligned buffer, loaded as a Model.
struct LoadedFile {
  std::vector<std::max_align_t> buffer;
  attn::Model model;
};

void load(const std::string& path, LoadedFile* f) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  REQUIRE(in);
  const size_t size = static_cast<size_t>(in.tellg());
  f->buffer.assign(size / sizeof(std::max_align_t) + 1, std::max_align_t{});
  in.seekg(0);
  REQUIRE(in.read(reinterpret_cast<char*>(f->buffer.data()), static_cast<std::streamsize>(size)));
  REQUIRE(attn::Model::load(f->buffer.data(), size, &f->model) == attn::Status::kOk);
}

const float* user(const attn::Model& m, const char* name) {
  attn::TensorView t;
  REQUIRE(m.find_tensor(name, &t) == attn::Status::kOk);
  return static_cast<const float*>(t.data);
}

}  // namespace

TEST_CASE("attn quantize --residual calibrates block 1 on x + block0(x)", "[demo][cli]") {
  LoadedFile f32;
  load(kDemo + "demo.attn", &f32);
  attn::Block b0;
  REQUIRE(f32.model.block(0, &b0) == attn::Status::kOk);
  const int32_t E = b0.config.embed_dim, L = 32;
  const float* tok = user(f32.model, "tok_emb");  // [V, E]
  const float* pos = user(f32.model, "pos_emb");  // [L, E]

  // Block 0's inputs for the first 64 calibration sequences: tok_emb[ids] + pos_emb.
  std::ifstream calib(kDemo + "calib.txt");
  std::vector<float> x;  // [N, L, E]
  int64_t n = 0;
  for (std::string line; n < 64 && std::getline(calib, line); ++n) {
    std::istringstream in(line);
    int label = 0, id = 0;
    in >> label;
    for (int32_t i = 0; i < L && in >> id; ++i) {
      for (int32_t e = 0; e < E; ++e) x.push_back(tok[id * E + e] + pos[i * E + e]);
    }
  }
  REQUIRE(x.size() == static_cast<size_t>(n * L * E));

  // What block 1 sees when the model runs: x + block0(x); its range and s8 parameters.
  attn::Plan plan;
  REQUIRE(attn::plan_attention(b0.config, attn::DType::kF32, L, L, &plan) == attn::Status::kOk);
  std::vector<std::max_align_t> arena_buf(plan.arena_bytes / sizeof(std::max_align_t) + 1);
  attn::Arena arena;
  REQUIRE(arena.init(arena_buf.data(), plan.arena_bytes) == attn::Status::kOk);
  attn::Range residual, plain;  // of x + block0(x), and of block0(x)
  std::vector<float> y(static_cast<size_t>(L * E));
  for (int64_t k = 0; k < n; ++k) {
    const float* xk = &x[static_cast<size_t>(k * L * E)];
    REQUIRE(attn::forward_f32(plan, b0.f32, attn::Mask{}, attn::IoF32{xk, xk, xk, y.data(), nullptr},
                              arena) == attn::Status::kOk);
    for (size_t i = 0; i < y.size(); ++i) {
      residual.min = std::min(residual.min, xk[i] + y[i]);
      residual.max = std::max(residual.max, xk[i] + y[i]);
      plain.min = std::min(plain.min, y[i]);
      plain.max = std::max(plain.max, y[i]);
    }
  }
  const attn::QuantParams want = attn::choose_activation_quant(residual, attn::DType::kS8);
  const attn::QuantParams without = attn::choose_activation_quant(plain, attn::DType::kS8);
  REQUIRE(want.scale != without.scale);  // the test can tell the two apart

  const std::string dir = std::filesystem::temp_directory_path().string() + "/attn_demo_test";
  std::filesystem::create_directories(dir);
  const std::vector<uint8_t> npy = attn::npy::serialize_f32({n, L, E}, x.data());
  std::ofstream(dir + "/calib.npy", std::ios::binary)
      .write(reinterpret_cast<const char*>(npy.data()), static_cast<std::streamsize>(npy.size()));
  for (const bool with_residual : {true, false}) {
    const std::string out = dir + (with_residual ? "/residual.s8.attn" : "/plain.s8.attn");
    const std::string cmd = std::string("'") + ATTN_CLI_PATH + "' quantize '" + kDemo +
                            "demo.attn' --calib '" + dir + "/calib.npy' --dtype s8 " +
                            (with_residual ? "--residual " : "") + "-o '" + out + "' >/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    LoadedFile q;
    load(out, &q);
    attn::Block b1;
    REQUIRE(q.model.block(1, &b1) == attn::Status::kOk);
    REQUIRE(b1.dtype == attn::DType::kS8);
    const attn::QuantParams expect = with_residual ? want : without;
    CHECK(b1.io.scale[0] == Approx(expect.scale).epsilon(1e-6));  // query input
    CHECK(b1.io.zero_point[0] == expect.zero_point);
  }
}

#endif  // ATTN_CLI_PATH
