// int_model_fixtures_gen.cpp: writes the integer model fixtures of
// tests/data/int_models (int_model_fixture.h describes them). Built by the
// host-ref preset only (libattn with ATTN_FORCE_REF: the expected outputs
// are the ref kernels' results; every other build must reproduce them).
//
//   attn_int_model_fixtures DATA_DIR            every NAME.expect of fixtures.txt
//   attn_int_model_fixtures DATA_DIR --models   first the model files of the recipes
//                                               below (random float weights, the
//                                               library's converter), then the same
//
// DATA_DIR is tests/data. tests/int_model_fixtures_test.cpp recomputes every
// expected file and requires the committed bytes.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/transformer_fixed.h"
#include "format/writer.h"
#include "int_model_fixtures_host.h"
#include "random_model.h"

#ifndef ATTN_FORCE_REF
#error "the fixtures are the ref kernels' results: build with ATTN_KERNELS=ref (preset host-ref)"
#endif

namespace {

using attn::DType;
using attn::LmHead;
using attn::Status;
using attn::TransformerConfig;
namespace tools = attn::tools;

void require(Status st, const char* what) {
  if (st != Status::kOk) throw std::runtime_error(std::string(what) + ": " + attn::status_name(st));
}

// The sizes every fixture model has, in one of TransformerConfig's presets.
// One layer: ~40 tensors of 128-byte descriptors per layer keep a file near 10 KiB.
TransformerConfig small(TransformerConfig (*family)(int32_t, int32_t, int32_t, int32_t, int32_t, int32_t)) {
  return family(/*vocab_size=*/24, /*embed_dim=*/16, /*num_layers=*/1, /*num_heads=*/4, /*ffn_dim=*/24,
                /*max_positions=*/12);
}
TransformerConfig small() { return small(TransformerConfig::sized); }

// BERT-like: post-norm LayerNorm, GELU, learned positions, token types, embedding norm, biases, no head.
TransformerConfig bert() { return small(TransformerConfig::encoder); }

// Llama-like: pre-norm RMSNorm, SiLU gate, GQA, RoPE, no biases, final norm, causal.
TransformerConfig llama(LmHead head) {
  return random_model::llama_like(small(TransformerConfig::decoder), head);
}

// GPT-like without a final norm (the head reads the residual through head_in):
// pre-norm LayerNorm, gelu_tanh, learned positions, untied head; smaller.
TransformerConfig gpt() {
  TransformerConfig c = random_model::gpt_like(small());
  c.vocab_size = 16;
  c.embed_dim = 8;
  c.num_heads = 2;
  c.ffn_dim = 16;
  return c;
}

struct Recipe {
  const char* file;  // under tests/data/int_models
  TransformerConfig config;
  DType dtype;
  uint32_t seed;
  attn::Int4Weights int4 = attn::Int4Weights::kNone;  // int4 weights for these projections
};

std::vector<Recipe> recipes() {
  return {{"bert1.s8.attn", bert(), DType::kS8, 11},
          {"llama1_tied.s8.attn", llama(LmHead::kTied), DType::kS8, 12},
          {"llama1_tied.s16.attn", llama(LmHead::kTied), DType::kS16, 13},
          {"gpt1.s16.attn", gpt(), DType::kS16, 14},
          // Int4 weights for every projection (the untied heads too).
          {"llama1_int4.s8.attn", llama(LmHead::kUntied), DType::kS8, 15, attn::Int4Weights::kAll},
          {"gpt1_int4.s16.attn", gpt(), DType::kS16, 16, attn::Int4Weights::kAll}};
}

using random_model::random_weights;

// The integer model file of a recipe: the f32 model file, loaded, converted
// (calibrated on 4 random sequences of max_positions tokens), written.
std::vector<uint8_t> make_model(const Recipe& r) {
  const TransformerConfig& c = r.config;
  tools::ModelSpec fs;
  tools::add_transformer_f32(fs, c, false, random_weights(c, r.seed));
  const int_fixture::AlignedBytes f32(tools::write_model(fs));
  attn::Model fm;
  require(attn::Model::load(f32.data(), f32.size, &fm), "load f32");
  std::vector<attn::LayerWeightsF32> layers(size_t(c.num_layers));
  attn::TransformerWeightsF32 wf;
  require(fm.transformer_weights_f32(layers.data(), c.num_layers, &wf), "f32 weights");
  std::mt19937 rng(r.seed + 1000);
  std::uniform_int_distribution<int32_t> tok(0, c.vocab_size - 1);
  std::vector<int32_t> tokens(size_t(4 * c.max_positions)), lengths(4, c.max_positions);
  for (int32_t& t : tokens) t = tok(rng);
  attn::TransformerCalibration cal;
  cal.tokens = tokens.data();
  cal.lengths = lengths.data();
  cal.count = 4;
  size_t sb = 0, xb = 0;
  require(attn::quantize_transformer_storage_bytes(c, r.dtype, &sb), "storage bytes");
  attn::TransformerQuantOptions options;
  options.int4 = r.int4;
  require(attn::quantize_transformer_scratch_bytes(c, r.dtype, c.max_positions, &xb, options),
          "scratch bytes");
  int_fixture::HostMemory storage(sb), scratch(xb);
  attn::Arena st, sc;
  require(st.init(storage.mem.data, sb), "storage");
  require(sc.init(scratch.mem.data, xb), "scratch");
  tools::ModelSpec s;
  if (r.dtype == DType::kS8) {
    attn::TransformerWeightsS8 w;
    require(attn::quantize_transformer_s8(c, wf, cal, st, sc, &w, nullptr, options), "quantize s8");
    tools::add_transformer_fixed(s, c, false, w);
  } else {
    attn::TransformerWeightsS16 w;
    require(attn::quantize_transformer_s16(c, wf, cal, st, sc, &w, nullptr, options), "quantize s16");
    tools::add_transformer_fixed(s, c, false, w);
  }
  return tools::write_model(s);
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
  std::printf("wrote %s (%zu bytes)\n", path.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "--models") != 0)) {
    std::fprintf(stderr, "usage: %s DATA_DIR [--models]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    if (argc == 3) {
      for (const Recipe& r : recipes()) write_file(dir + "/int_models/" + r.file, make_model(r));
    }
    for (const int_fixture::Spec& s : int_fixture::read_manifest(dir)) {
      const std::vector<uint8_t> model = int_fixture::read_file(dir + "/" + s.model);
      if (model.size() > 16384) throw std::runtime_error(s.model + ": above 16 KiB");
      write_file(int_fixture::expect_path(dir, s), int_fixture::make_expect(s, model));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
