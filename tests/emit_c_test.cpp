// emit_c_test.cpp: `attn emit-c` headers compile as pedantic C99 under GCC
// and clang, size the arena as the target's plan does, and keep paths and
// names from injecting code.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attn/attn.h"
#include "attn/model.h"
#include "attn/model_bytes.h"
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(ATTN_TEST_DATA_DIR) + "/format/";
const std::string kInclude = std::string(ATTN_TEST_DATA_DIR) + "/../../include";

using namespace cli;

// `attn ARGS` (quoted already): its exit code; stdout and stderr into *out.
int attn_cli(const std::string& args, const TempDir& dir, std::string* out = nullptr) {
  const Result r = run(args, dir);
  if (out != nullptr) *out = r.out + r.err;
  return r.code;
}

// The C compilers at hand (both are installed where the suite runs).
std::vector<std::string> compilers() {
  std::vector<std::string> out;
  for (const char* cc : {"gcc", "clang-14", "clang"}) {
    if (std::system(("command -v " + std::string(cc) + " >/dev/null 2>&1").c_str()) == 0) out.push_back(cc);
  }
  return out;
}

// Compile `src` as pedantic C99 with `defines`: 0 on success.
int compile_c99(const std::string& cc, const TempDir& dir, const std::string& src,
                const std::string& defines) {
  std::ofstream(dir / "use.c") << src;
  return std::system((cc + " -std=c99 -Wpedantic -Wall -Wextra -Werror " + defines + " -I" + quote(kInclude) +
                      " -I" + quote(dir.path.string()) + " -fsyntax-only " + quote(dir / "use.c") + " 2>" +
                      quote(dir / ".cc"))
                         .c_str());
}

// attn_plan_arena_bytes() of the largest block of `file` at L, S with tile_rows `tile`.
size_t plan_arena_bytes(const std::string& file, int32_t L, int32_t S, int32_t tile) {
  const std::string bytes = slurp_text(kData + file);
  alignas(16) static uint8_t blob[65536];
  REQUIRE(bytes.size() <= sizeof blob);
  std::copy(bytes.begin(), bytes.end(), blob);
  attn_model model;
  REQUIRE(attn_model_load(&model, blob, bytes.size()) == ATTN_OK);
  uint32_t blocks = 0;
  REQUIRE(attn_model_block_count(&model, &blocks) == ATTN_OK);
  size_t most = 0;
  for (uint32_t i = 0; i < blocks; ++i) {
    attn_block_info info;
    attn_plan plan;
    size_t need = 0;
    REQUIRE(attn_model_block(&model, i, &info) == ATTN_OK);
    REQUIRE(attn_plan_init(&plan, &info.config, info.dtype, L, S, tile) == ATTN_OK);
    REQUIRE(attn_plan_arena_bytes(&plan, &need) == ATTN_OK);
    most = need > most ? need : most;
  }
  return most;
}

}  // namespace

TEST_CASE("attn emit-c: ARENA_BYTES is the target's plan size, in pedantic C99 under GCC and clang",
          "[cli][emit]") {
  const std::vector<std::string> ccs = compilers();
  REQUIRE(ccs.size() >= 2);
  for (const std::string file : {"layers.attn", "quant/mha_self.s8.attn", "quant/mha_cross.s16.attn"}) {
    for (const int fixed_tile : {0, 5}) {
      TempDir dir;
      std::string args =
          "emit-c " + quote(kData + file) + " -o " + quote(dir / "m.h") + " --name m --max-L 7 --max-S 9";
      if (fixed_tile > 0) args += " --tile-rows " + std::to_string(fixed_tile);
      std::string out;
      REQUIRE(attn_cli(args, dir, &out) == 0);
      for (const int target_tile : {1, 4, 6, 48}) {
        const size_t want = plan_arena_bytes(file, 7, 9, fixed_tile > 0 ? fixed_tile : target_tile);
        const std::string src =
            "#include \"m.h\"\n"
            "typedef char arena_bytes_check[(M_ARENA_BYTES == (size_t)EXPECTED) ? 1 : -1];\n"
            "typedef char size_check[(sizeof m == M_SIZE) ? 1 : -1];\n"
            "int first(void) { return m[0]; }\n";
        for (const std::string& cc : ccs) {
          INFO(file << " --tile-rows " << fixed_tile << ", ATTN_TILE_ROWS=" << target_tile << ", " << cc
                    << ": " << slurp_text(dir / ".cc"));
          CHECK(compile_c99(cc, dir, src,
                            "-DATTN_TILE_ROWS=" + std::to_string(target_tile) +
                                " -DEXPECTED=" + std::to_string(want)) == 0);
        }
      }
    }
  }
}

TEST_CASE(
    "attn emit-c: a whole model's ARENA_BYTES and STATE_BYTES are model_bytes() for the target compiling "
    "them",
    "[cli][emit]") {
  // s8 and s16 decoders, an s8 encoder, an f32 decoder.
  struct Case {
    std::string file;
    int32_t tokens, capacity;
  };
  const std::string ints = std::string(ATTN_TEST_DATA_DIR) + "/int_models/";
  const std::vector<Case> cases = {{ints + "llama1_tied.s8.attn", 8, 12},
                                   {ints + "llama1_tied.s16.attn", 3, 12},
                                   {ints + "bert1.s8.attn", 6, 0},
                                   {std::string(ATTN_TEST_DATA_DIR) + "/model/llama_tied.attn", 4, 16}};
  const std::vector<std::string> ccs = compilers();
  REQUIRE(ccs.size() >= 2);
  const bool arm = std::system("command -v arm-none-eabi-gcc >/dev/null 2>&1") == 0;
  for (const Case& k : cases) {
    INFO(k.file);
    const std::string bytes = slurp_text(k.file);
    std::vector<uint64_t> words((bytes.size() + 7) / 8);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    attn::Model m;
    REQUIRE(attn::Model::load(words.data(), bytes.size(), &m) == attn::Status::kOk);
    attn::TransformerConfig c;
    attn::format::ModelRecord rec;
    REQUIRE(m.transformer_config(&c) == attn::Status::kOk);
    REQUIRE(m.model_record(&rec) == attn::Status::kOk);
    const auto dtype = static_cast<attn::DType>(rec.dtype);
    TempDir dir;
    REQUIRE(attn_cli("emit-c " + quote(k.file) + " -o " + quote(dir / "m.h") +
                         " --name m --tokens-per-call " + std::to_string(k.tokens) + " --capacity " +
                         std::to_string(k.capacity),
                     dir) == 0);
    // This host's numbers are what the runtime asks for here.
    attn_model cm;
    size_t state = 0, scratch = 0;
    REQUIRE(attn_model_load(&cm, words.data(), bytes.size()) == ATTN_OK);
    REQUIRE(attn_transformer_init_split_bytes(&cm, k.tokens, k.capacity, &state, &scratch) == ATTN_OK);
    const attn::ModelBytes here = attn::model_bytes(c, dtype, k.tokens, k.capacity);
    CHECK((here.arena == scratch && here.state == state));
    CHECK((k.capacity > 0) == (state > 0));
    const std::string src =
        "#include \"m.h\"\n"
        "typedef char arena_check[(M_ARENA_BYTES == ARENA) ? 1 : -1];\n"
        "typedef char state_check[(M_STATE_BYTES == STATE) ? 1 : -1];\n"
        "static unsigned char scratch[M_ARENA_BYTES], state[M_STATE_BYTES + 1];\n"
        "int first(void) { return m[0] + scratch[0] + state[0] + M_TOKENS_PER_CALL + M_CAPACITY + M_WINDOW; "
        "}\n";
    for (const int32_t tile : {4, 48}) {
      // 64-bit hosts, and 32-bit Arm (arm-none-eabi-gcc).
      std::vector<std::pair<std::string, size_t>> targets;
      for (const std::string& cc : ccs) targets.emplace_back(cc, 8);
      if (arm) targets.emplace_back("arm-none-eabi-gcc -mcpu=cortex-m4", 4);
      for (const auto& t : targets) {
        const attn::ModelBytes want = attn::model_bytes(c, dtype, k.tokens, k.capacity, tile, t.second);
        REQUIRE(want.arena > 0);
        INFO(t.first << " ATTN_TILE_ROWS=" << tile << ": " << slurp_text(dir / ".cc"));
        CHECK(compile_c99(t.first, dir, src,
                          "-DATTN_TILE_ROWS=" + std::to_string(tile) +
                              " -DARENA=" + std::to_string(want.arena) +
                              "u -DSTATE=" + std::to_string(want.state) + "u") == 0);
      }
    }
    // attn info --target prints the same two numbers for a target.
    for (const auto& t : {std::make_pair("cortex-m4", 4), std::make_pair("cortex-a-64", 48)}) {
      std::string info;
      REQUIRE(attn_cli("info " + quote(k.file) + " --target " + t.first + " --tokens-per-call " +
                           std::to_string(k.tokens) + " --capacity " + std::to_string(k.capacity),
                       dir, &info) == 0);
      const attn::ModelBytes want = attn::model_bytes(c, dtype, k.tokens, k.capacity, t.second,
                                                      std::string(t.first) == "cortex-m4" ? 4 : 8);
      INFO(info);
      CHECK(info.find("scratch " + std::to_string(want.arena) + " bytes") != std::string::npos);
      CHECK(info.find("state " + std::to_string(want.state) + " bytes") != std::string::npos);
    }
    // Another tile: the header says to emit for it, it does not guess.
    CHECK(compile_c99(ccs[0], dir, src, "-DATTN_TILE_ROWS=7 -DARENA=0 -DSTATE=0") != 0);
    CHECK(slurp_text(dir / ".cc").find("--tile-rows") != std::string::npos);
  }
  // A model file needs --tokens-per-call, never gets a block's arena, and a
  // capacity past max_positions or a window past the capacity is named.
  TempDir dir;
  const std::string f = quote(ints + "llama1_tied.s8.attn") + " -o " + quote(dir / "m.h");
  std::string out;
  CHECK(attn_cli("emit-c " + f, dir, &out) == 1);
  CHECK(out.find("--tokens-per-call") != std::string::npos);
  CHECK(attn_cli("emit-c " + f + " --max-L 8", dir, &out) == 1);
  CHECK(out.find("whole model") != std::string::npos);
  CHECK(attn_cli("emit-c " + f + " --tokens-per-call 4 --capacity 13", dir, &out) == 1);
  CHECK(out.find("kCapacityPastPositions") != std::string::npos);
  CHECK(attn_cli("emit-c " + f + " --tokens-per-call 4 --capacity 8 --window 9", dir, &out) == 1);
  CHECK(out.find("--window 9") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "m.h"));
  CHECK(attn_cli(
            "emit-c " + quote(kData + "layers.attn") + " -o " + quote(dir / "b.h") + " --tokens-per-call 4",
            dir, &out) == 1);
  CHECK(out.find("whole models") != std::string::npos);
}

TEST_CASE("attn emit-c: a path cannot inject lines, --name must be a usable C identifier", "[cli][emit]") {
  TempDir dir;
  const std::string evil_dir = dir / "x\n#error injected\nint a; /*";
  fs::create_directories(evil_dir);
  fs::copy_file(kData + "mha_packed.attn", evil_dir + "/m.attn");
  REQUIRE(attn_cli("emit-c " + quote(evil_dir + "/m.attn") + " -o " + quote(dir / "m.h") + " --name m",
                   dir) == 0);
  const std::string h = slurp_text(dir / "m.h");
  CHECK(h.find("\n#error injected") == std::string::npos);
  CHECK(h.find("%0A#error injected%0Aint a; /%2A") != std::string::npos);
  for (const std::string& cc : compilers()) {
    INFO(cc << ": " << slurp_text(dir / ".cc"));
    CHECK(compile_c99(cc, dir, "#include \"m.h\"\nint first(void) { return m[0]; }\n", "") == 0);
  }
  for (const std::string bad :
       {"int", "class", "_Bool", "__x", "_Upper", "9lives", "a-b", "typeof", "char8_t"}) {
    INFO(bad);
    std::string out;
    CHECK(attn_cli("emit-c " + quote(kData + "mha_packed.attn") + " -o " + quote(dir / "bad.h") + " --name " +
                       quote(bad),
                   dir, &out) == 1);
    CHECK(out.find(bad) != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "bad.h"));
  }
}

TEST_CASE("attn --help and attn emit-c --help list every emit-c flag", "[cli][emit]") {
  TempDir dir;
  std::string top, sub;
  REQUIRE(attn_cli("--help", dir, &top) == 0);
  REQUIRE(attn_cli("emit-c --help", dir, &sub) == 0);
  const std::string line = top.substr(top.find("attn emit-c"));
  for (const char* flag : {"-o", "--output", "--name", "--max-L", "--max-S", "--tile-rows",
                           "--tokens-per-call", "--capacity", "--window", "--help"}) {
    INFO(flag);
    CHECK(line.substr(0, line.find('\n')).find(flag) != std::string::npos);
    CHECK(sub.find(flag) != std::string::npos);
  }
}

#endif  // ATTN_CLI_PATH
