// emit_c_test.cpp: `attn emit-c` headers compile as pedantic C99 under GCC
// and clang, size the arena as the target's plan does, and keep paths and
// names from injecting code.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attn/attn.h"
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
  for (const char* flag : {"-o", "--output", "--name", "--max-L", "--max-S", "--tile-rows", "--help"}) {
    INFO(flag);
    CHECK(line.substr(0, line.find('\n')).find(flag) != std::string::npos);
    CHECK(sub.find(flag) != std::string::npos);
  }
}

#endif  // ATTN_CLI_PATH
