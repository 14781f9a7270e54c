// cli_runner.h: running the `attn` tools binary as a user would, for the CLI
// tests (cli_test.cpp, cli_quant_test.cpp, cli_hostile_test.cpp,
// emit_c_test.cpp): a scratch directory per test case, shell quoting, whole
// files in and out, one run's exit code and output, and the failure contract
// (exit 1, one line on stderr naming the problem).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/cli/npy.h"

#ifdef ATTN_CLI_PATH

namespace cli {

namespace fs = std::filesystem;

// The CLI fixtures (tools/fixtures/gen_format_fixtures.py): where a run starts by default.
inline const std::string kFormatDir = std::string(ATTN_TEST_DATA_DIR) + "/format/";

inline std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::string slurp_text(const std::string& path) {
  const std::vector<uint8_t> b = slurp(path);
  return std::string(b.begin(), b.end());
}

inline void spit(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline void spit(const std::string& path, const std::string& s) {
  spit(path, std::vector<uint8_t>(s.begin(), s.end()));
}

// `s` as one single-quoted shell word.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A scratch directory per test case, removed with its contents.
struct TempDir {
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("attn_cli_test." + std::to_string(::getpid()) + "." + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  // Files other than the ones the test made itself.
  size_t count() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
  fs::path path;
};

// Whether `tmp` holds nothing but the files `own` (else INFO names the first other one).
inline bool no_leftovers(const TempDir& tmp, const std::vector<std::string>& own) {
  for (const auto& e : fs::directory_iterator(tmp.path)) {
    const std::string n = e.path().filename().string();
    if (std::find(own.begin(), own.end(), n) == own.end()) {
      UNSCOPED_INFO("left behind: " << n);
      return false;
    }
  }
  return true;
}

struct Result {
  int code;
  std::string out, err;
  double seconds;
};

// `prefix` ATTN ARGS (ARGS quoted already) from `cwd`; prefix may start a
// pipeline ("cat x | "). stdout and stderr go through files in `tmp`, which are
// removed again.
// Whitespace-separated ids, as the tools print them.
inline std::vector<int32_t> parse_ids(const std::string& line) {
  std::istringstream in(line);
  std::vector<int32_t> v;
  int32_t x;
  while (in >> x) v.push_back(x);
  return v;
}

inline Result run(const std::string& args, const TempDir& tmp, const std::string& cwd = kFormatDir,
                  const std::string& prefix = "") {
  const std::string o = tmp / ".stdout", e = tmp / ".stderr";
  const std::string cmd = "cd " + quote(cwd) + " && " + prefix + quote(ATTN_CLI_PATH) + " " + args + " >" +
                          quote(o) + " 2>" + quote(e);
  const auto t0 = std::chrono::steady_clock::now();
  const int st = std::system(cmd.c_str());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Result r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp_text(o), slurp_text(e), secs};
  fs::remove(o);
  fs::remove(e);
  return r;
}

// run(), which must exit 0 (its stderr is shown if it does not).
inline Result run_ok(const std::string& args, const TempDir& tmp, const std::string& cwd = kFormatDir) {
  Result r = run(args, tmp, cwd);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r;
}

// The failure contract: exit 1, exactly one line on stderr, holding each of
// `parts` (empty ones say nothing), and never an "internal error".
inline void check_error(const Result& r, const std::vector<std::string>& parts) {
  INFO("stderr: " << r.err);
  CHECK(r.code == 1);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const std::string& p : parts) {
    if (!p.empty()) CHECK(r.err.find(p) != std::string::npos);
  }
  CHECK(r.err.find("internal error") == std::string::npos);
}

// An int32 or int64 .npy of token ids.
inline std::vector<uint8_t> ids_npy(const std::vector<int64_t>& shape, const std::vector<int64_t>& ids,
                                    bool i64) {
  std::vector<uint8_t> raw;
  for (int64_t v : ids) {
    if (i64) {
      raw.insert(raw.end(), reinterpret_cast<const uint8_t*>(&v), reinterpret_cast<const uint8_t*>(&v) + 8);
    } else {
      const int32_t x = int32_t(v);
      raw.insert(raw.end(), reinterpret_cast<const uint8_t*>(&x), reinterpret_cast<const uint8_t*>(&x) + 4);
    }
  }
  return attn::npy::serialize(shape, i64 ? "<i8" : "<i4", raw.data(), i64 ? 8 : 4);
}

// A .npy file's values (float, double or integer) as doubles.
inline std::vector<double> npy_values(const std::string& path) {
  const attn::npy::Array a = attn::npy::parse(slurp(path));
  if (!a.f64.empty()) return a.f64;
  if (!a.ints.empty()) return std::vector<double>(a.ints.begin(), a.ints.end());
  return std::vector<double>(a.f32.begin(), a.f32.end());
}

// 10 log10(sum want^2 / sum (got - want)^2); 300 dB when they are equal.
inline double sqnr_db(const std::vector<double>& want, const std::vector<double>& got) {
  REQUIRE(want.size() == got.size());
  double s = 0, n = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    s += want[i] * want[i];
    n += (got[i] - want[i]) * (got[i] - want[i]);
  }
  return n == 0 ? 300.0 : 10.0 * std::log10(s / n);
}

}  // namespace cli

#endif  // ATTN_CLI_PATH
