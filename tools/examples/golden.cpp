// attn_example_golden: run one golden case through attn and compare with PyTorch.
//
//   attn_example_golden                  the default cross-attention case
//   attn_example_golden <name | file>    a case by name (tests/data/golden/<name>.bin) or path
//   attn_example_golden --list           the available cases
//
// Shows the whole use of the API: a config, a plan that says how many arena
// bytes one forward needs, an arena of exactly that size, and forward_f32.
// Exit code 0 if the output and attention weights are within the conformance
// bound (max|got - want| <= 1e-5 * max|want| + 1e-6), 1 if not, 2 on errors.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "golden.h"

namespace {

const char* const kDefaultCase = "cross_e40_h4_l16_s24";
const std::string kDir = golden::default_dir();

std::string resolve(const std::string& arg) {
  if (arg.find('/') != std::string::npos || (arg.size() > 4 && arg.compare(arg.size() - 4, 4, ".bin") == 0)) {
    return arg;
  }
  return kDir + "/" + arg + ".bin";
}

void print_error_line(const char* what, const golden::Error& e) {
  std::printf("  %-18s max |err| %.3e   max |want| %.3e   relative %.3e   bound %.3e   %s\n", what, e.max_abs,
              e.max_want, e.relative(), e.bound(), e.ok() ? "ok" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  std::string arg = kDefaultCase;
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [--list | case name | case file]\n", argv[0]);
    return 2;
  }
  if (argc == 2) arg = argv[1];
  if (arg == "--list") {
    for (const std::string& path : golden::list_cases(kDir)) {
      golden::Case c;
      std::string error;
      if (golden::load(path, &c, &error)) {
        std::printf("%-40s %s\n", c.name.c_str(), c.describe().c_str());
      } else {
        std::printf("%-40s (unreadable: %s)\n", path.c_str(), error.c_str());
      }
    }
    return 0;
  }

  golden::Case c;
  std::string error;
  if (!golden::load(resolve(arg), &c, &error)) {
    std::fprintf(stderr, "error: %s\n(try --list)\n", error.c_str());
    return 2;
  }

  // 1. Configuration and plan.
  const attn::AttentionConfig cfg = c.config();
  attn::Plan plan;
  attn::Status st = attn::plan_attention(cfg, attn::DType::kF32, c.L, c.S, &plan);
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "plan_attention: %s\n", attn::status_name(st));
    return 2;
  }
  const int32_t D = c.D();
  std::printf("golden case %s\n", c.name.c_str());
  std::printf("  attention   %s, embed_dim E=%d, heads H=%d, head_dim=%d (D=%d), kdim=%d, vdim=%d, bias %s\n",
              c.self_attention ? "self" : "cross", c.E, c.H, c.head_dim, D, c.kdim, c.vdim,
              c.bias ? "on" : "off");
  std::printf(
      "  mask        causal %s, key padding %s, additive %s\n",
      c.causal ? (c.causal_offset ? ("on, offset " + std::to_string(c.causal_offset)).c_str() : "on") : "off",
      c.key_length >= 0 ? ("keys >= " + std::to_string(c.key_length) + " ignored").c_str() : "off",
      c.has_additive ? "[L, S] float" : "off");
  std::printf(
      "  shapes      query [%d, %d]  key [%d, %d]  value [%d, %d]  ->  output [%d, %d], weights [%d, %d, "
      "%d]\n",
      c.L, c.E, c.S, c.kdim, c.S, c.vdim, c.L, c.E, c.H, c.L, c.S);
  std::printf("  weights     wq [%d, %d]  wk [%d, %d]  wv [%d, %d]  wo [%d, %d]%s\n", D, c.E, D, c.kdim, D,
              c.vdim, c.E, D, c.bias ? "  + biases" : "");
  std::printf("  arena       %zu bytes (plan), %zu bytes (attention_arena_bytes), tile rows %d\n",
              plan.arena_bytes, attn::attention_arena_bytes(cfg, attn::DType::kF32, c.L, c.S),
              plan.tile_rows);

  // 2. An arena of exactly plan.arena_bytes, ATTN_ARENA_ALIGN-aligned.
  std::vector<unsigned char> storage(plan.arena_bytes + ATTN_ARENA_ALIGN);
  void* buffer = storage.data();
  size_t space = storage.size();
  std::align(ATTN_ARENA_ALIGN, plan.arena_bytes, buffer, space);
  attn::Arena arena;
  st = arena.init(buffer, plan.arena_bytes);
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "arena.init: %s\n", attn::status_name(st));
    return 2;
  }

  // 3. The forward.
  std::vector<float> y(c.y.size());           // [L, E]
  std::vector<float> weights(c.attn.size());  // [H, L, S]
  attn::IoF32 io;
  io.query = c.query.data();
  io.key = c.self_attention ? c.query.data() : c.key.data();
  io.value = c.self_attention ? c.query.data() : c.value.data();
  io.output = y.data();
  io.attn_weights = weights.data();
  st = attn::forward_f32(plan, c.weights(), c.mask(), io, arena);
  if (st != attn::Status::kOk) {
    std::fprintf(stderr, "forward_f32: %s\n", attn::status_name(st));
    return 2;
  }

  // 4. Against PyTorch (float64).
  const golden::Error ey = golden::compare(y.data(), c.y);
  const golden::Error ep = golden::compare(weights.data(), c.attn);
  if (c.llama()) {
    std::printf(
        "against the Llama-style attention (HF LlamaAttention's computation) in PyTorch (float64):\n");
  } else if (c.from_torch()) {
    std::printf("against torch.nn.MultiheadAttention (float64):\n");
  } else {
    std::printf(
        "against the float64 reference of tools/fixtures/gen_golden.py (PyTorch cannot run this case: %s):\n",
        c.D() != c.E ? "H * head_dim != E" : "fully masked query rows, where it gives NaN");
  }
  print_error_line("output y", ey);
  print_error_line("attention weights", ep);
  std::printf("  y[0][0..%d]    attn  % .6f", std::min(c.E, 4) - 1, static_cast<double>(y[0]));
  for (int32_t j = 1; j < std::min(c.E, 4); ++j)
    std::printf(" % .6f", static_cast<double>(y[static_cast<size_t>(j)]));
  std::printf("\n                want  % .6f", c.y[0]);
  for (int32_t j = 1; j < std::min(c.E, 4); ++j) std::printf(" % .6f", c.y[static_cast<size_t>(j)]);
  std::printf("\n%s\n", ey.ok() && ep.ok() ? "PASS" : "FAIL");
  return ey.ok() && ep.ok() ? 0 : 1;
}
