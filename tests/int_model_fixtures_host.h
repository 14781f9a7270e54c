// int_model_fixtures_host.h: the host side of the integer model fixtures
// (tests/data/int_models): the manifest, the token ids of each fixture, and
// the expected file's bytes as the running build computes them. The
// generator (int_model_fixtures_gen.cpp, built by the host-ref preset, whose
// library has only the ref kernels) writes them; tests/int_model_fixtures_test.cpp
// recomputes them in every build, the cross presets under qemu-user included,
// and requires the committed bytes.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "int_model_fixture.h"

namespace int_fixture {

// One line of tests/data/int_models/fixtures.txt:
//   name  model  tokens  prompt  steps
// model: the model file, relative to tests/data; tokens: the forward's
// length; prompt, steps: greedy generation (0 0 for an encoder).
struct Spec {
  std::string name;
  std::string model;
  int32_t n = 0;
  int32_t prompt = 0;
  int32_t steps = 0;
};

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::vector<Spec> read_manifest(const std::string& data_dir) {
  std::ifstream in(data_dir + "/int_models/fixtures.txt");
  if (!in) throw std::runtime_error("cannot read " + data_dir + "/int_models/fixtures.txt");
  std::vector<Spec> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    Spec s;
    if (!(ss >> s.name >> s.model >> s.n >> s.prompt >> s.steps)) {
      throw std::runtime_error("fixtures.txt: bad line: " + line);
    }
    out.push_back(s);
  }
  return out;
}

inline std::string expect_path(const std::string& data_dir, const Spec& s) {
  return data_dir + "/int_models/" + s.name + ".expect";
}

// The fixture's token ids: an LCG seeded by its name (no library
// distribution, whose results vary between standard libraries).
inline std::vector<int32_t> tokens_of(const Spec& s, int32_t vocab) {
  uint32_t x = 2166136261u;
  for (char c : s.name) x = (x ^ uint8_t(c)) * 16777619u;
  std::vector<int32_t> t(static_cast<size_t>(s.n));
  for (int32_t& v : t) {
    x = x * 1664525u + 1013904223u;
    v = int32_t((x >> 8) % uint32_t(vocab));
  }
  return t;
}

// A 16-byte aligned copy of a file, as the loader wants it.
struct AlignedBytes {
  explicit AlignedBytes(const std::vector<uint8_t>& v) : words((v.size() + 15) / 16 + 1) {
    std::memcpy(words.data(), v.data(), v.size());
    size = v.size();
  }
  struct alignas(16) Chunk {
    uint8_t b[16];
  };
  std::vector<Chunk> words;
  size_t size = 0;
  const uint8_t* data() const { return words.data()->b; }
  uint8_t* data() { return words.data()->b; }
};

// Arena memory for one fixture: more than any call plans.
struct HostMemory {
  explicit HostMemory(size_t bytes) : buf(std::vector<uint8_t>(bytes)) {
    mem.data = buf.data();
    mem.size = bytes;
  }
  AlignedBytes buf;
  Memory mem;
};

inline std::string status_text(attn::Status st) { return attn::status_name(st); }

// The expected file of `spec` over the model file `model_bytes`, computed by
// this build: the forward, and the greedy generation of a decoder.
inline std::vector<uint8_t> make_expect(const Spec& spec, const std::vector<uint8_t>& model_bytes) {
  const AlignedBytes blob(model_bytes);
  static Model m;  // large: the layer views of kMaxLayers layers
  m = Model();
  attn::Status st = load(blob.data(), blob.size, &m);
  if (st != attn::Status::kOk) throw std::runtime_error(spec.model + ": load: " + status_text(st));
  if (spec.n > m.config.max_positions || spec.prompt + spec.steps > m.config.max_positions ||
      spec.prompt > spec.n || (spec.steps > 0) != (spec.prompt > 0) || (spec.steps > 0 && !m.config.causal)) {
    throw std::runtime_error(spec.name + ": tokens, prompt and steps do not fit the model");
  }
  const std::vector<int32_t> tokens = tokens_of(spec, m.vocab());
  const size_t dim = size_t(m.config.output_dim());
  std::vector<int32_t> outputs(size_t(spec.n) * dim), logits(size_t(m.vocab())),
      generated(size_t(spec.steps));
  HostMemory hm(1 << 20);
  st = forward(m, tokens.data(), spec.n, outputs.data(), hm.mem);
  if (st != attn::Status::kOk) throw std::runtime_error(spec.name + ": forward: " + status_text(st));
  if (spec.steps > 0) {
    st = generate(m, tokens.data(), spec.prompt, spec.steps, logits.data(), generated.data(), hm.mem);
    if (st != attn::Status::kOk) throw std::runtime_error(spec.name + ": generate: " + status_text(st));
  }
  std::vector<int32_t> words = {int32_t(kMagic),
                                int32_t(kVersion),
                                int32_t(m.file.crc()),
                                spec.n,
                                int32_t(dim),
                                spec.prompt,
                                spec.steps,
                                0};
  words.insert(words.end(), tokens.begin(), tokens.end());
  words.insert(words.end(), outputs.begin(), outputs.end());
  words.insert(words.end(), generated.begin(), generated.end());
  std::vector<uint8_t> bytes(words.size() * 4);
  for (size_t i = 0; i < words.size(); ++i) {  // little-endian, whatever the host
    const uint32_t w = uint32_t(words[i]);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + size_t(b)] = uint8_t(w >> (8 * b));
  }
  return bytes;
}

}  // namespace int_fixture
