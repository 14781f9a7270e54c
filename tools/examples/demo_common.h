// demo_common.h: small helpers shared by the two demo programs of
// tools/demo.sh (demo_encoder.cpp, demo_decoder.cpp): reading a model file
// into an aligned buffer, writing .npy files and C++ arrays for the
// Cortex-M images, and timing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "attn/attn.h"
#include "attn/model.h"
#include "attn/model_bytes.h"
#include "attn/status.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "cli/npy.h"

namespace demo {

// A whole file in a 16-byte aligned buffer, as attn::Model::load wants it
// (on a microcontroller the blob is a const array in flash: `attn emit-c`).
struct Blob {
  std::vector<std::max_align_t> storage;
  size_t size = 0;
  const void* data() const { return storage.data(); }
};

inline bool read_blob(const std::string& path, Blob* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  out->size = static_cast<size_t>(f.tellg());
  out->storage.assign(out->size / sizeof(std::max_align_t) + 1, std::max_align_t{});
  f.seekg(0);
  return static_cast<bool>(
      f.read(reinterpret_cast<char*>(out->storage.data()), static_cast<std::streamsize>(out->size)));
}

inline bool fail(const char* what, attn::Status s) {
  std::fprintf(stderr, "demo: %s: %s\n", what, attn::status_name(s));
  return false;
}

// One model file (f32, s8 or s16) loaded: its config, and the weights of its
// dtype pointing into the blob.
struct ModelFile {
  const char* name = "";
  attn::DType dtype = attn::DType::kF32;
  Blob blob;
  attn::Model model;
  attn::TransformerConfig config;
  std::vector<attn::LayerWeightsF32> layers_f32;
  std::vector<attn::LayerWeightsS8> layers_s8;
  std::vector<attn::LayerWeightsS16> layers_s16;
  attn::TransformerWeightsF32 f32;
  attn::TransformerWeightsS8 s8;
  attn::TransformerWeightsS16 s16;
};

// Reads `path` into m and takes its config and `dtype` weights; false (said
// on stderr) where the file cannot be read or is not a model of that dtype.
inline bool load_model_file(const std::string& path, const char* name, attn::DType dtype, ModelFile* m) {
  m->name = name;
  m->dtype = dtype;
  if (!read_blob(path, &m->blob)) {
    std::fprintf(stderr, "demo: cannot read %s\n", path.c_str());
    return false;
  }
  attn::Status s = attn::Model::load(m->blob.data(), m->blob.size, &m->model);
  if (s == attn::Status::kOk) s = m->model.transformer_config(&m->config);
  if (s != attn::Status::kOk) return fail(path.c_str(), s);
  const int32_t layers = m->config.num_layers;
  if (dtype == attn::DType::kF32) {
    m->layers_f32.resize(static_cast<size_t>(layers));
    s = m->model.transformer_weights_f32(m->layers_f32.data(), layers, &m->f32);
  } else if (dtype == attn::DType::kS8) {
    m->layers_s8.resize(static_cast<size_t>(layers));
    s = m->model.transformer_weights_s8(m->layers_s8.data(), layers, &m->s8);
  } else {
    m->layers_s16.resize(static_cast<size_t>(layers));
    s = m->model.transformer_weights_s16(m->layers_s16.data(), layers, &m->s16);
  }
  if (s != attn::Status::kOk) return fail(path.c_str(), s);  // kBadDtype: not a model of this dtype
  return true;
}

// The C handle of m (attn/attn.h) for calls of up to max_positions tokens
// (a decoder: and caches of max_positions positions) in its two buffers:
// model_bytes() (attn/model_bytes.h: what `attn emit-c --tokens-per-call N
// --capacity C` writes for this target) must be what
// attn_transformer_init_split_bytes reports, exactly that many bytes are
// accepted and one byte fewer of either is refused. Prints the sizes; false
// (said on stderr) if any of that fails.
inline bool check_c_buffers(const ModelFile& m) {
  const int32_t n = m.config.max_positions, cap = m.config.causal ? n : 0;
  const attn::ModelBytes b = attn::model_bytes(m.config, m.dtype, n, cap);
  attn_model cm;
  size_t state = 0, scratch = 0;
  if (attn_model_load(&cm, m.blob.data(), m.blob.size) != ATTN_OK ||
      attn_transformer_init_split_bytes(&cm, n, cap, &state, &scratch) != ATTN_OK || b.arena != scratch ||
      b.state != state) {
    std::fprintf(stderr, "demo: %s: model_bytes() %zu + %zu is not the C handle's %zu + %zu\n", m.name,
                 b.arena, b.state, scratch, state);
    return false;
  }
  std::vector<std::max_align_t> a(scratch / sizeof(std::max_align_t) + 1),
      s(state / sizeof(std::max_align_t) + 1);
  void* st = state > 0 ? static_cast<void*>(s.data()) : nullptr;
  attn_transformer tf;
  const bool exact =
      attn_transformer_init_split(&tf, &cm, n, cap, 0, st, state, a.data(), scratch) == ATTN_OK &&
      attn_transformer_init_split(&tf, &cm, n, cap, 0, st, state, a.data(), scratch - 1) ==
          ATTN_ERR_ARENA_TOO_SMALL &&
      (state == 0 || attn_transformer_init_split(&tf, &cm, n, cap, 0, st, state - 1, a.data(), scratch) ==
                         ATTN_ERR_ARENA_TOO_SMALL);
  std::printf(
      "%-4s C handle (attn emit-c --tokens-per-call %d --capacity %d): scratch %zu + state %zu bytes, %s\n",
      m.name, n, cap, scratch, state, exact ? "exact (one byte fewer of either is refused)" : "NOT EXACT");
  return exact;
}

// The model rows of both demos: f32, s8, s16, and s4: s8 activations with
// int4 FFN weights (`attn quantize --dtype s8 --weights s4`; its file is an s8 model).
constexpr int kModels = 4;
inline constexpr const char* kModelNames[kModels] = {"f32", "s8", "s16", "s4"};
inline constexpr attn::DType kModelDtypes[kModels] = {attn::DType::kF32, attn::DType::kS8, attn::DType::kS16,
                                                      attn::DType::kS8};

// The options both demos take: --data DIR, --f32/--s8/--s16/--s4 MODEL.attn,
// --emit-mcu OUT.h, --write-calib OUT.npy, --timing-passes N.
struct Options {
  std::string data, mcu_path, calib_path;
  std::string paths[kModels];  // f32, s8, s16, s4
  int timing_passes = 3;
};

// A demo's own `--flag VALUE` option and the variable its value goes to.
struct Option {
  enum Kind { kText, kInt, kSize, kReal };
  const char* flag;
  Kind kind;
  void* to;
  Option(const char* f, std::string* t) : flag(f), kind(kText), to(t) {}
  Option(const char* f, int32_t* t) : flag(f), kind(kInt), to(t) {}
  Option(const char* f, size_t* t) : flag(f), kind(kSize), to(t) {}
  Option(const char* f, double* t) : flag(f), kind(kReal), to(t) {}
};

// Parses argv into *o and the `extra` options; false on an unknown flag or a
// flag without its value (the caller prints its usage).
inline bool parse_options(int argc, char** argv, Options* o, std::initializer_list<Option> extra) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (a == "--data")
      o->data = v;
    else if (a == "--f32")
      o->paths[0] = v;
    else if (a == "--s8")
      o->paths[1] = v;
    else if (a == "--s16")
      o->paths[2] = v;
    else if (a == "--s4")
      o->paths[3] = v;
    else if (a == "--emit-mcu")
      o->mcu_path = v;
    else if (a == "--write-calib")
      o->calib_path = v;
    else if (a == "--timing-passes")
      o->timing_passes = std::stoi(v);
    else {
      const Option* opt = nullptr;
      for (const Option& e : extra)
        if (a == e.flag) opt = &e;
      if (opt == nullptr) return false;
      switch (opt->kind) {
        case Option::kText:
          *static_cast<std::string*>(opt->to) = v;
          break;
        case Option::kInt:
          *static_cast<int32_t*>(opt->to) = std::stoi(v);
          break;
        case Option::kSize:
          *static_cast<size_t*>(opt->to) = std::stoul(v);
          break;
        case Option::kReal:
          *static_cast<double*>(opt->to) = std::stod(v);
          break;
      }
    }
  }
  return true;
}

// Token ids [rows, cols] as an int32 .npy (the --calib-tokens of `attn quantize`).
inline bool write_ids_npy(const std::string& path, const std::vector<int32_t>& ids, int64_t rows,
                          int64_t cols) {
  const std::vector<uint8_t> bytes = attn::npy::serialize({rows, cols}, "<i4", ids.data(), 4);
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

// `const TYPE NAME[n] = {...};` for a firmware header.
template <class T>
void emit_array(std::ofstream& f, const char* type, const char* name, const T* v, size_t n) {
  f << "const " << type << " " << name << "[" << n << "] = {";
  for (size_t i = 0; i < n; ++i) {
    if (i % 20 == 0) f << "\n ";
    f << " " << static_cast<long long>(v[i]) << ",";
  }
  f << "\n};\n";
}

// Microseconds per call of fn(): the best of `passes` runs of `calls` calls
// (the machine may be busy); 0 when passes is 0.
template <class F>
double best_us(int passes, size_t calls, F fn) {
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < calls; ++i) fn(i);
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    const double us = dt.count() / static_cast<double>(calls);
    best = pass == 0 ? us : (us < best ? us : best);
  }
  return best;
}

}  // namespace demo
