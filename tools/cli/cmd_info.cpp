// cmd_info.cpp: `attn info FILE.attn [--L N] [--S N] [--target T --tokens-per-call N
// [--capacity C]]`: header, blocks with
// their hyperparameters, tensors, and the arena bytes of one forward for
// query length L and key length S (S defaults to L), and the kernel
// variants each block's forward runs on this CPU (attn::kernel_set: on
// x86-64 chosen at run time from CPUID). A whole model (format v3) first
// prints its hyperparameters: kind, dims, layers, norm, activation, head,
// vocabulary and dtype, and the arena bytes plan_transformer gives for a
// forward of max_positions tokens and (decoders) for decoding over a cache of
// max_positions positions: state + arena. With --target T --tokens-per-call N
// [--capacity C], the two buffers of the C handle (attn_transformer_init_split)
// on that target: the numbers `attn emit-c` writes for it.
#include <cstdio>
#include <cstring>

#include "attn/model_bytes.h"

#include "attn/attention_fixed.h"
#include "attn/kernel_set.h"

#include "cli/cli.h"
#include "format/tensor_rules.h"

namespace attn {
namespace {

const char* norm_name(NormKind n) { return n == NormKind::kLayerNorm ? "LayerNorm" : "RMSNorm"; }

const char* activation_name(Activation a) {
  static const char* const kNames[] = {"?", "gelu", "gelu_tanh", "relu", "silu"};  // by Activation value
  const auto i = static_cast<size_t>(a);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "?";
}

const char* head_name(LmHead h) {
  return h == LmHead::kTied     ? "tied (logits = x token_embedding^T)"
         : h == LmHead::kUntied ? "untied (logits = x lm_head^T)"
                                : "none (hidden states)";
}

void print_model(const std::string& path, const Model& m) {
  TransformerConfig c;
  const Status s = m.transformer_config(&c);
  if (s != Status::kOk) throw cli::Error(path + ": model record unreadable: " + cli::describe(s));
  format::ModelRecord r{};
  (void)m.model_record(&r);
  const int32_t hd = c.head_dim != 0 ? c.head_dim : c.embed_dim / c.num_heads;
  std::printf("model: %s %s transformer, %s%s\n", c.causal ? "causal" : "bidirectional",
              c.causal ? "decoder" : "encoder", cli::dtype_name(static_cast<DType>(r.dtype)),
              cli::int4_summary(m).c_str());
  std::printf("  layers=%d E=%d heads=%d kv_heads=%d head_dim=%d ffn_dim=%d\n", c.num_layers, c.embed_dim,
              c.num_heads, c.num_kv_heads != 0 ? c.num_kv_heads : c.num_heads, hd, c.ffn_dim);
  std::printf("  vocab=%d%s max_positions=%d type_vocab=%d\n", c.vocab_size,
              m.byte_vocab() ? " (byte vocab)" : "", c.max_positions, c.type_vocab_size);
  std::printf("  %s, norm %s eps=%g%s, activation %s%s\n", c.pre_norm ? "pre-norm" : "post-norm",
              norm_name(c.norm), static_cast<double>(c.norm_eps), c.norm_bias ? " with bias" : "",
              activation_name(c.activation), c.gated_ffn ? " (gated FFN)" : "");
  std::printf("  positions: %s; embedding norm %s; final norm %s\n",
              c.learned_positions   ? "learned"
              : c.rope_base != 0.0f ? "rotary"
                                    : "none",
              c.embedding_norm ? "yes" : "no", c.final_norm ? "yes" : "no");
  if (c.rope_base != 0.0f) std::printf("  rope_base=%g\n", static_cast<double>(c.rope_base));
  std::printf("  biases: attention %s, ffn %s; head %s\n", c.attention_bias ? "yes" : "no",
              c.ffn_bias ? "yes" : "no", head_name(c.head));
  Tokenizer tok;
  if (m.tokenizer(&tok) == Status::kOk) {
    static const char* const kAlgorithms[] = {"bytes", "SentencePiece BPE", "byte-level BPE", "WordPiece"};
    const uint32_t alg = static_cast<uint32_t>(tok.algorithm());
    std::printf("  tokenizer: %s, %d pieces, BOS %d, EOS %d, UNK %d\n", alg < 4 ? kAlgorithms[alg] : "?",
                tok.vocab_size(), tok.special(SpecialToken::kBos), tok.special(SpecialToken::kEos),
                tok.special(SpecialToken::kUnk));
  }
  // What a caller reserves (plan_transformer): a forward of max_positions
  // tokens, and for decoders the KV-cache state of max_positions positions
  // with the arena of one call (one token, or a prefill of max_positions).
  const DType dt = static_cast<DType>(r.dtype);
  const int32_t P = c.max_positions;
  TransformerPlan fp;
  Status ps = plan_transformer(c, dt, P, 0, &fp);
  if (ps != Status::kOk) throw cli::Error(path + ": cannot plan a forward: " + cli::describe(ps));
  std::printf("  arena bytes: forward of up to %d tokens %zu\n", P, fp.arena_bytes);
  if (!c.causal) return;
  TransformerPlan step, prefill;
  ps = plan_transformer(c, dt, 1, P, &step);
  if (ps == Status::kOk) ps = plan_transformer(c, dt, P, P, &prefill);
  if (ps != Status::kOk) throw cli::Error(path + ": cannot plan decoding: " + cli::describe(ps));
  std::printf(
      "  decoding with capacity %d: state %zu + arena %zu (1 token per call) = %zu bytes; with prefills "
      "of up to %d tokens: state %zu + arena %zu = %zu bytes\n",
      P, step.state_bytes, step.arena_bytes, step.state_bytes + step.arena_bytes, P, prefill.state_bytes,
      prefill.arena_bytes, prefill.state_bytes + prefill.arena_bytes);
}

// The targets --target names: their ATTN_TILE_ROWS and pointer width.
struct Target {
  const char* name;
  int32_t tile_rows;
  size_t pointer_bytes;
};
constexpr Target kTargets[] = {{"host", ATTN_TILE_ROWS, sizeof(void*)},
                               {"cortex-m3", 4, 4},
                               {"cortex-m4", 4, 4},
                               {"cortex-m7", 4, 4},
                               {"cortex-m55", 4, 4},
                               {"cortex-a-32", 48, 4},
                               {"cortex-a-64", 48, 8}};

const Target& find_target(const std::string& target) {
  std::string names;
  for (const Target& k : kTargets) {
    if (target == k.name) return k;
    names += std::string(names.empty() ? "" : ", ") + k.name;
  }
  throw cli::Error("--target " + target + ": not one of " + names);
}

// `--target T --tokens-per-call N [--capacity C]`: the C handle's two buffers there.
void print_target_bytes(const std::string& path, const Model& m, const std::string& target, int32_t tokens,
                        int32_t capacity) {
  const Target* t = &find_target(target);
  if (!m.is_model()) throw cli::Error("--target: " + path + " holds blocks, not a whole model");
  const cli::WholeModel w = cli::whole_model(m, path);
  const TransformerConfig& c = w.config;
  const DType dt = w.dtype;
  cli::check_capacity(c, capacity);
  TransformerPlan p;
  const Status s = plan_transformer(c, dt, tokens, capacity, &p, t->tile_rows);
  if (s != Status::kOk) throw cli::Error(path + ": " + cli::describe(s));
  const ModelBytes b = model_bytes(c, dt, tokens, capacity, t->tile_rows, t->pointer_bytes);
  if (b.arena == 0) throw cli::Error(path + ": the buffer sizes overflow on " + target);
  std::printf(
      "  on %s (ATTN_TILE_ROWS %d, %zu-byte pointers), calls of up to %d tokens, capacity %d:\n"
      "    scratch %zu bytes (NAME_ARENA_BYTES: the handle's bookkeeping and one call's scratch)\n"
      "    state %zu bytes (NAME_STATE_BYTES: the KV caches); one buffer: %zu bytes\n",
      target.c_str(), t->tile_rows, t->pointer_bytes, tokens, capacity, b.arena, b.state, b.arena + b.state);
}

const char* scope_name(uint16_t role) {
  if (role == static_cast<uint16_t>(format::Role::kUser)) return "user";
  if (role >= format::kFirstModelRole) return "model";
  return role >= format::kFirstLayerRole ? "layer" : "block";
}

// `attn info --roles`: every role of attn/role_list.h, one line each, for
// tools in other languages (the same numbers and names as the C and C++
// APIs): value, canonical name, scope (block: an attention block's tensor,
// named block.<i>.<name>; layer: a whole model's layer tensor, block.<i>.<name>;
// model: model.<name>; user: any name), the dtypes of the blocks or models
// that hold it (the loader's rule table), the C++ enumerator and the C constant.
void print_roles() {
  std::printf("# value name scope owner_dtypes cpp_name c_name\n");
#define ATTN_ROLE(cpp_name, c_name, value, name, doc)                                        \
  {                                                                                          \
    std::string owners;                                                                      \
    for (const DType d : {DType::kF32, DType::kS8, DType::kS16}) {                           \
      for (const format::TensorRule& r : format::kTensorRules) {                             \
        if (r.role == format::Role::cpp_name && r.owner_dtype == static_cast<uint16_t>(d)) { \
          owners += (owners.empty() ? "" : ",") + std::string(cli::dtype_name(d));           \
          break;                                                                             \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
    std::printf("%d %s %s %s %s %s\n", value, name, scope_name(value),                       \
                owners.empty() ? "-" : owners.c_str(), #cpp_name, #c_name);                  \
  }
#include "attn/role_list.h"
#undef ATTN_ROLE
}

}  // namespace

int cmd_info(int argc, char** argv) {
  const cli::Args args(argc, argv, {"--L", "--S", "--target", "--tokens-per-call", "--capacity"},
                       {"--roles"});
  if (args.has("--roles")) {
    if (!args.positional().empty()) throw cli::Error("--roles takes no file");
    print_roles();
    return 0;
  }
  const std::string path = args.one_input("FILE.attn");
  const long long L = args.get_int("--L", 0, 1, ATTN_MAX_SEQ);
  const long long S = args.get_int("--S", L, 1, ATTN_MAX_SEQ);
  if (args.has("--S") && !args.has("--L")) throw cli::Error("--S needs --L");
  const long long tokens = args.get_int("--tokens-per-call", 0, 1, ATTN_MAX_SEQ);
  const long long capacity = args.get_int("--capacity", 0, 0, ATTN_MAX_SEQ);
  if (args.has("--target") != args.has("--tokens-per-call"))
    throw cli::Error("--target and --tokens-per-call go together (the C handle's buffers on a target)");
  if (args.has("--capacity") && !args.has("--target")) throw cli::Error("--capacity needs --target");
  if (args.has("--target")) (void)find_target(args.get("--target"));
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  const Model& m = lm.model;
  std::printf("%s: .attn v%u, %zu bytes, crc32 %08x, data alignment %u\n", path.c_str(), m.version(),
              m.size(), m.crc(), m.data_align());
  if (m.is_model()) print_model(path, m);
  if (args.has("--target"))
    print_target_bytes(path, m, args.get("--target"), static_cast<int32_t>(tokens),
                       static_cast<int32_t>(capacity));
  std::printf("%u block(s)\n", m.block_count());
  size_t max_arena = 0;
  for (uint32_t i = 0; i < m.block_count(); ++i) {
    Block b;
    if (m.block(i, &b) != Status::kOk)
      throw cli::Error(path + ": block " + std::to_string(i) + " unreadable");
    const AttentionConfig& c = b.config;
    std::printf("  block %u: %s E=%d heads=%d head_dim=%d kdim=%d vdim=%d bias=%s", i,
                cli::dtype_name(b.dtype), c.embed_dim, c.num_heads, c.head_dim, c.kdim, c.vdim,
                c.bias ? "yes" : "no");
    if (c.num_kv_heads != 0) std::printf(" kv_heads=%d", c.num_kv_heads);
    if (c.rope_base != 0.0f) std::printf(" rope_base=%g", static_cast<double>(c.rope_base));
    if (L > 0) {
      Plan plan;
      const Status s = plan_attention(c, b.dtype, static_cast<int32_t>(L), static_cast<int32_t>(S), &plan);
      if (s != Status::kOk) throw cli::Error(path + ": block " + std::to_string(i) + ": " + cli::describe(s));
      std::printf(" %s arena(L=%lld,S=%lld)=%zu bytes", cli::dtype_name(b.dtype), L, S, plan.arena_bytes);
      if (plan.arena_bytes > max_arena) max_arena = plan.arena_bytes;
    }
    std::printf("\n");
    KernelSet k;
    if (kernel_set(b.dtype, &k) == Status::kOk)
      std::printf("    kernels on this CPU: linear=%s scores=%s softmax=%s weighted_sum=%s rope=%s\n",
                  k.linear, k.scores, k.softmax, k.weighted_sum, k.rope);
    if (b.dtype != DType::kF32) {
      const char* io_names[4] = {"query", "key", "value", "output"};
      std::printf("    quantized I/O (real = scale * (q - zero_point)):");
      for (int k = 0; k < 4; ++k)
        std::printf(" %s %.6g/%d", io_names[k], static_cast<double>(b.io.scale[k]), b.io.zero_point[k]);
      std::printf("\n");
      const FusedSoftmaxParams& sm = b.dtype == DType::kS8 ? b.s8.softmax : b.s16.softmax;
      const int32_t cm = b.dtype == DType::kS8 ? b.s8.context_multiplier : b.s16.context_multiplier;
      const int32_t cs = b.dtype == DType::kS8 ? b.s8.context_shift : b.s16.context_shift;
      std::printf(
          "    softmax: exp_multiplier %u exp_shift %d diff_limit %d score_shift %d; context multiplier %d "
          "shift %d\n",
          sm.exp_multiplier, sm.exp_shift, sm.diff_limit, sm.score_shift, cm, cs);
      if (b.dtype == DType::kS8)
        std::printf("    zero points: Q %d K %d V %d context %d output %d\n", b.s8.q_zero_point,
                    b.s8.k_zero_point, b.s8.v_zero_point, b.s8.context_zero_point, b.s8.output_zero_point);
    }
  }
  std::printf("%u tensor(s)\n", m.tensor_count());
  for (uint32_t i = 0; i < m.tensor_count(); ++i) {
    TensorView t;
    if (m.tensor(i, &t) != Status::kOk)
      throw cli::Error(path + ": tensor " + std::to_string(i) + " unreadable");
    std::string dims;
    for (int k = 0; k < t.rank; ++k) dims += (k ? ", " : "") + std::to_string(t.dims[k]);
    const size_t off =
        static_cast<size_t>(static_cast<const uint8_t*>(t.data) - static_cast<const uint8_t*>(m.data()));
    std::string blk = t.block == format::kNoBlock ? "-" : std::to_string(t.block);
    // Names are bytes from the file: escaped, so that they cannot drive the terminal or fake lines.
    std::printf("  %-24s %-17s block %-3s %-3s [%s] %zu bytes at %zu\n", cli::printable(t.name).c_str(),
                format::role_name(t.role), blk.c_str(), cli::dtype_name(t.dtype), dims.c_str(), t.byte_size,
                off);
  }
  if (L > 0) std::printf("arena bytes (largest block, L=%lld, S=%lld): %zu\n", L, S, max_arena);
  return 0;
}

}  // namespace attn
