// cmd_emit_c.cpp: `attn emit-c FILE.attn -o model.h [--name SYM]
// [--max-L N [--max-S N] [--tile-rows N]]` (block files) or
// `... --tokens-per-call N [--capacity C] [--window W] [--tile-rows T]`
// (whole models): a C99/C++ header with the validated blob as an aligned
// const array (for flash), its size, its CRC and the buffer sizes. For
// blocks, given the maximum shapes, the arena bytes the largest block
// needs, as an expression over attn/attn.h's ATTN_ARENA_BYTES: compiled for
// a board it equals attn_plan_arena_bytes() of the plan that board makes
// (its ATTN_TILE_ROWS, or the --tile-rows N the plans are made with). For a
// whole model, the two buffers of attn_transformer_init_split
// (attn/model_bytes.h's model_bytes()) for each tile and pointer width a
// target may have, picked by the preprocessor on the target.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "attn/model_bytes.h"
#include "cli/cli.h"

namespace attn {
namespace {

const char kUsage[] =
    "usage: attn emit-c FILE.attn -o model.h [--name SYM] [--max-L N [--max-S N] [--tile-rows N]]\n"
    "       attn emit-c MODEL.attn -o model.h [--name SYM] --tokens-per-call N [--capacity C] [--window W]\n"
    "                  [--tile-rows T]\n"
    "  -o, --output FILE  the header to write\n"
    "  --name SYM         the array's C identifier (default attn_model; not a C/C++ keyword);\n"
    "                     macros are SYM in upper case: SYM_SIZE, SYM_CRC32, SYM_ALIGNMENT, SYM_ARENA_BYTES\n"
    "  --max-L N          largest query length: emit SYM_ARENA_BYTES, the arena of one forward of the\n"
    "                     largest block at L = N, S = --max-S\n"
    "  --max-S N          largest key length (default: --max-L)\n"
    "  --tile-rows N      SYM_ARENA_BYTES for plans made with tile_rows N (default: the target's\n"
    "                     ATTN_TILE_ROWS, i.e. tile_rows 0); a whole model: sizes only for targets whose\n"
    "                     ATTN_TILE_ROWS is N (default: 4, microcontrollers, and 48, application cores)\n"
    "whole models (a file with a model record):\n"
    "  --tokens-per-call N  the most tokens one forward or decode call takes (required)\n"
    "  --capacity C       KV-cache positions for decoding (default 0: forwards only; at most max_positions)\n"
    "  --window W         positions the caches keep (default 0: all; at most C): SYM_WINDOW\n"
    "                     The header defines SYM_ARENA_BYTES (the scratch buffer of "
    "attn_transformer_init_split:\n"
    "                     the handle's bookkeeping and one call's scratch) and SYM_STATE_BYTES (its state\n"
    "                     buffer: the KV caches; 0 without capacity), exact for the target compiling it;\n"
    "                     attn_transformer_init takes their sum. And SYM_TOKENS_PER_CALL, SYM_CAPACITY.\n"
    "  -h, --help         this help\n";

// Keywords of C (C99 .. C23) and C++ (.. C++20): none may name the array.
bool is_keyword(const std::string& s) {
  static const std::set<std::string> kKeywords = {"alignas",
                                                  "alignof",
                                                  "and",
                                                  "and_eq",
                                                  "asm",
                                                  "auto",
                                                  "bitand",
                                                  "bitor",
                                                  "bool",
                                                  "break",
                                                  "case",
                                                  "catch",
                                                  "char",
                                                  "char8_t",
                                                  "char16_t",
                                                  "char32_t",
                                                  "class",
                                                  "co_await",
                                                  "co_return",
                                                  "co_yield",
                                                  "compl",
                                                  "concept",
                                                  "const",
                                                  "const_cast",
                                                  "consteval",
                                                  "constexpr",
                                                  "constinit",
                                                  "continue",
                                                  "decltype",
                                                  "default",
                                                  "delete",
                                                  "do",
                                                  "double",
                                                  "dynamic_cast",
                                                  "else",
                                                  "enum",
                                                  "explicit",
                                                  "export",
                                                  "extern",
                                                  "false",
                                                  "float",
                                                  "for",
                                                  "friend",
                                                  "goto",
                                                  "if",
                                                  "inline",
                                                  "int",
                                                  "long",
                                                  "mutable",
                                                  "namespace",
                                                  "new",
                                                  "noexcept",
                                                  "not",
                                                  "not_eq",
                                                  "nullptr",
                                                  "operator",
                                                  "or",
                                                  "or_eq",
                                                  "private",
                                                  "protected",
                                                  "public",
                                                  "register",
                                                  "reinterpret_cast",
                                                  "requires",
                                                  "restrict",
                                                  "return",
                                                  "short",
                                                  "signed",
                                                  "sizeof",
                                                  "static",
                                                  "static_assert",
                                                  "static_cast",
                                                  "struct",
                                                  "switch",
                                                  "template",
                                                  "this",
                                                  "thread_local",
                                                  "throw",
                                                  "true",
                                                  "try",
                                                  "typedef",
                                                  "typeid",
                                                  "typename",
                                                  "typeof",
                                                  "typeof_unqual",
                                                  "union",
                                                  "unsigned",
                                                  "using",
                                                  "virtual",
                                                  "void",
                                                  "volatile",
                                                  "wchar_t",
                                                  "while",
                                                  "xor",
                                                  "xor_eq",
                                                  "_Alignas",
                                                  "_Alignof",
                                                  "_Atomic",
                                                  "_BitInt",
                                                  "_Bool",
                                                  "_Complex",
                                                  "_Decimal128",
                                                  "_Decimal32",
                                                  "_Decimal64",
                                                  "_Generic",
                                                  "_Imaginary",
                                                  "_Noreturn",
                                                  "_Static_assert",
                                                  "_Thread_local"};
  return kKeywords.count(s) != 0;
}

void check_name(const std::string& sym) {
  bool ok = !sym.empty() && std::isdigit(static_cast<unsigned char>(sym[0])) == 0;
  for (char c : sym) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_');
  if (!ok) throw cli::Error("--name '" + sym + "' is not a C identifier");
  if (is_keyword(sym)) throw cli::Error("--name '" + sym + "' is a C or C++ keyword");
  if (sym[0] == '_' && (sym.size() == 1 || sym[1] == '_' || std::isupper(static_cast<unsigned char>(sym[1]))))
    throw cli::Error("--name '" + sym + "' is reserved for the compiler (a leading _ and a capital or _)");
}

// A path for a // comment: printable ASCII stays, anything else (a newline
// that would end the comment, a * of a closing */, a backslash that could splice the next line
// in, '?' of a trigraph, non-ASCII) becomes %XX.
std::string comment_safe(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '\\' && c != '%' && c != '?' && c != '*') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// max(a, b) as a C expression, each side in parentheses.
std::string c_max(const std::string& a, const std::string& b) {
  return "((" + a + ") > (" + b + ") ? (" + a + ") : (" + b + "))";
}

// The max of `terms` as a balanced tournament: every term appears about
// terms.size() times, not 2^size() as in a chain.
std::string c_max_of(const std::vector<std::string>& terms, size_t lo, size_t hi) {
  if (hi - lo == 1) return terms[lo];
  const size_t mid = lo + (hi - lo) / 2;
  return c_max(c_max_of(terms, lo, mid), c_max_of(terms, mid, hi));
}

// The whole-model part of the header: SYM_TOKENS_PER_CALL .. SYM_STATE_BYTES,
// one pair of sizes per tile and pointer width (a target picks its own).
std::string model_sizes(const Model& m, const std::string& shown_path, const std::string& sym,
                        const std::string& upper, int32_t tokens, int32_t capacity, int32_t window,
                        int32_t tile) {
  const cli::WholeModel w = cli::whole_model(m, shown_path);
  const TransformerConfig& c = w.config;
  const DType dtype = w.dtype;
  cli::check_capacity(c, capacity);
  if (window > capacity)
    throw cli::Error("--window " + std::to_string(window) + " is past --capacity " +
                     std::to_string(capacity));
  const std::vector<int32_t> tiles = tile > 0 ? std::vector<int32_t>{tile} : std::vector<int32_t>{4, 48};
  for (const int32_t t : tiles) {
    TransformerPlan p;
    const Status s = plan_transformer(c, dtype, tokens, capacity, &p, t);
    if (s != Status::kOk)
      throw cli::Error(shown_path + ": --tokens-per-call " + std::to_string(tokens) + " --capacity " +
                       std::to_string(capacity) + ": " + cli::describe(s));
  }
  std::string h;
  h += "/* Whole-model buffers for calls of up to " + std::to_string(tokens) + " tokens" +
       (capacity > 0 ? " and KV caches of " + std::to_string(capacity) + " positions"
                     : std::string(" (forwards only: no KV caches)")) +
       ", exact for the target\n"
       " * compiling this (attn/model_bytes.h's model_bytes()):\n"
       " *   " +
       upper +
       "_ARENA_BYTES  attn_transformer_init_split's scratch: the handle's bookkeeping, then one\n"
       " *                call's scratch (e.g. in TCM / DTCM);\n"
       " *   " +
       upper +
       "_STATE_BYTES  its state: the KV caches (e.g. in SRAM / PSRAM; 0: none).\n"
       " * attn_transformer_init takes their sum in one buffer. Bind with\n"
       " *   attn_transformer_init_split(&tf, &model, " +
       upper + "_TOKENS_PER_CALL, " + upper + "_CAPACITY, " + upper +
       "_WINDOW,\n"
       " *                               state, " +
       upper + "_STATE_BYTES, scratch, " + upper +
       "_ARENA_BYTES)\n"
       " * Sizes are written for 32-bit Arm and 64-bit (x86-64, AArch64) targets, for ATTN_TILE_ROWS " +
       (tile > 0 ? std::to_string(tile) : std::string("4 and 48")) + ". */\n";
  h += "#define " + upper + "_TOKENS_PER_CALL " + std::to_string(tokens) + "\n";
  h += "#define " + upper + "_CAPACITY " + std::to_string(capacity) + "\n";
  h += "#define " + upper + "_WINDOW " + std::to_string(window) + "\n";
  h += "#if ATTN_ARENA_ALIGN != 16\n#error \"" + sym +
       ": buffer sizes written for ATTN_ARENA_ALIGN 16\"\n#endif\n";
  h += "#if !(defined(__arm__) || defined(__aarch64__) || defined(__x86_64__)) || !defined(UINTPTR_MAX)\n"
       "#error \"" +
       sym +
       ": buffer sizes written for 32-bit Arm and 64-bit targets: size them with "
       "attn_transformer_init_split_bytes\"\n#endif\n";
  for (size_t i = 0; i < tiles.size(); ++i) {
    h += std::string(i == 0 ? "#if" : "#elif") + " ATTN_TILE_ROWS == " + std::to_string(tiles[i]) + "\n";
    for (const size_t ptr : {4u, 8u}) {
      const ModelBytes b = model_bytes(c, dtype, tokens, capacity, tiles[i], ptr);
      if (b.arena == 0) throw cli::Error(shown_path + ": the buffer sizes overflow");
      h += std::string(ptr == 4 ? "#if UINTPTR_MAX == 0xFFFFFFFFu\n" : "#else\n");
      h += "#define " + upper + "_ARENA_BYTES " + std::to_string(b.arena) + "u\n";
      h += "#define " + upper + "_STATE_BYTES " + std::to_string(b.state) + "u\n";
    }
    h += "#endif\n";
  }
  h += "#else\n#error \"" + sym + ": buffer sizes written for ATTN_TILE_ROWS " +
       (tile > 0 ? std::to_string(tile) : std::string("4 and 48")) +
       ": run attn emit-c with --tile-rows set to this target's\"\n#endif\n";
  return h;
}

}  // namespace

int cmd_emit_c(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  const cli::Args args(argc, argv,
                       {"-o", "--output", "--name", "--max-L", "--max-S", "--tile-rows", "--tokens-per-call",
                        "--capacity", "--window"},
                       {});
  const std::string path = args.one_input("FILE.attn");
  const std::string out = args.has("-o") ? args.get("-o") : args.required("--output");
  const std::string sym = args.get("--name", "attn_model");
  check_name(sym);
  const long long max_l = args.get_int("--max-L", 0, 1, ATTN_MAX_SEQ);
  const long long max_s = args.get_int("--max-S", max_l, 1, ATTN_MAX_SEQ);
  const long long tile = args.get_int("--tile-rows", 0, 1, ATTN_MAX_SEQ);
  const long long tokens = args.get_int("--tokens-per-call", 0, 1, ATTN_MAX_SEQ);
  const long long capacity = args.get_int("--capacity", 0, 0, ATTN_MAX_SEQ);
  const long long window = args.get_int("--window", 0, 0, ATTN_MAX_SEQ);
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  const Model& m = lm.model;
  const std::string shown_path = comment_safe(path);
  if (m.is_model()) {
    // A whole model: its two buffers, never one block's arena.
    for (const char* o : {"--max-L", "--max-S"})
      if (args.has(o))
        throw cli::Error(std::string(o) + " sizes one attention block; " + shown_path +
                         " is a whole model: give --tokens-per-call N [--capacity C]");
    if (!args.has("--tokens-per-call"))
      throw cli::Error(shown_path +
                       " is a whole model: give --tokens-per-call N (the most tokens one call takes) and, to "
                       "decode, --capacity C, for SYM_ARENA_BYTES and SYM_STATE_BYTES");
  } else {
    for (const char* o : {"--tokens-per-call", "--capacity", "--window"})
      if (args.has(o))
        throw cli::Error(std::string(o) + " is for whole models; " + shown_path + " holds blocks");
    if (args.has("--max-S") && !args.has("--max-L")) throw cli::Error("--max-S needs --max-L");
    if (args.has("--tile-rows") && !args.has("--max-L")) throw cli::Error("--tile-rows needs --max-L");
  }

  std::string upper = sym;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string block_note;
  // (element bytes x D, element bytes x Dkv, element bytes, D, Dkv) of each block's arena.
  std::vector<std::tuple<long long, long long, int, int32_t, int32_t>> shapes;
  for (uint32_t i = 0; i < m.block_count(); ++i) {
    Block b;
    if (m.block(i, &b) != Status::kOk) throw cli::Error(shown_path + ": block unreadable");
    block_note +=
        "//   block " + std::to_string(i) + ": " + cli::dtype_name(b.dtype) +
        " E=" + std::to_string(b.config.embed_dim) + " heads=" + std::to_string(b.config.num_heads) +
        " head_dim=" + std::to_string(b.config.head_dim) + " kdim=" + std::to_string(b.config.kdim) +
        " vdim=" + std::to_string(b.config.vdim) + (b.config.bias ? " bias" : " no bias") + "\n";
    if (max_l > 0) {
      // Any tile the target may use: the plan must exist at the shapes (1 row is the smallest arena,
      // max-L rows the largest).
      for (const long long t : {1LL, max_l}) {
        Plan plan;
        const Status s = plan_attention(b.config, b.dtype, static_cast<int32_t>(max_l),
                                        static_cast<int32_t>(max_s), &plan, static_cast<int32_t>(t));
        if (s != Status::kOk)
          throw cli::Error(shown_path + ": block " + std::to_string(i) + ": " + cli::describe(s));
      }
      const int eb = b.dtype == DType::kF32 ? 4 : b.dtype == DType::kS16 ? 2 : 1;
      const int32_t d = b.config.inner_dim(), dkv = b.config.kv_dim();
      shapes.emplace_back(static_cast<long long>(eb) * d, static_cast<long long>(eb) * dkv, eb, d, dkv);
    }
  }
  // The arena grows with element bytes x D and x Dkv: a block no larger in
  // both than another never has the largest arena, at any tile.
  std::vector<std::string> terms;
  const std::string tile_expr = tile > 0 ? std::to_string(tile) : "ATTN_TILE_ROWS";
  for (const auto& a : shapes) {
    bool dominated = false;
    for (const auto& o : shapes) {
      const bool le = std::get<0>(o) >= std::get<0>(a) && std::get<1>(o) >= std::get<1>(a);
      const bool differ = std::get<0>(o) != std::get<0>(a) || std::get<1>(o) != std::get<1>(a);
      dominated = dominated || (le && (differ || &o < &a));  // the first of equal shapes stays
    }
    if (dominated) continue;
    terms.push_back("ATTN_ARENA_BYTES(" + std::to_string(std::get<2>(a)) + ", " +
                    std::to_string(std::get<3>(a)) + ", " + std::to_string(std::get<4>(a)) + ", " +
                    std::to_string(max_l) + ", " + std::to_string(max_s) + ", " + tile_expr + ")");
  }

  char hexbuf[16];
  std::snprintf(hexbuf, sizeof hexbuf, "%08X", m.crc());
  const std::string guard = upper + "_ATTN_EMIT_C_H_" + hexbuf;
  const uint32_t align = std::max<uint32_t>(16, m.data_align());
  std::string h;
  h += "/* Generated by `attn emit-c` from " + shown_path + ". Do not edit.\n";
  if (m.is_model()) {
    TransformerConfig c;
    format::ModelRecord rec;
    if (m.transformer_config(&c) == Status::kOk && m.model_record(&rec) == Status::kOk)
      h += " * A whole " + std::string(cli::dtype_name(static_cast<DType>(rec.dtype))) +
           " model: " + std::to_string(c.num_layers) + " layer(s), E=" + std::to_string(c.embed_dim) +
           " heads=" + std::to_string(c.num_heads) + " vocab=" + std::to_string(c.vocab_size) +
           " max_positions=" + std::to_string(c.max_positions) + (c.causal ? ", causal" : "") + "; " +
           std::to_string(m.tensor_count()) + " tensor(s)" + cli::int4_summary(m) + ".\n";
  } else {
    h += " * " + std::to_string(m.block_count()) + " block(s), " + std::to_string(m.tensor_count()) +
         " tensor(s):\n";
  }
  h += block_note;
  h += " * Include in exactly one .c/.cpp file; load with\n";
  h += " *   C:   attn_model model; attn_model_load(&model, " + sym + ", " + upper + "_SIZE)\n";
  h += " *   C++: attn::Model model; attn::Model::load(" + sym + ", " + upper + "_SIZE, &model)\n";
  h += " * Plain C99 (and C++): compiles under -std=c99 -Wpedantic. */\n";
  // The block notes were written as // lines: make them part of the comment.
  for (size_t at = 0; (at = h.find("//   block", at)) != std::string::npos;) h.replace(at, 2, " *");
  h += "#ifndef " + guard + "\n#define " + guard + "\n\n#include <stdint.h>\n\n#include \"attn/attn.h\"\n\n";
  h += "#define " + upper + "_SIZE " + std::to_string(m.size()) + "u\n";
  h += "#define " + upper + "_CRC32 0x" + hexbuf + "u\n";
  h += "/* The blob's alignment: the file's data alignment (>= 16, what the loader needs) or\n"
       " * ATTN_ARENA_ALIGN, the larger. */\n";
  h += "#define " + upper + "_ALIGNMENT (" + std::to_string(align) + " > ATTN_ARENA_ALIGN ? " +
       std::to_string(align) + " : ATTN_ARENA_ALIGN)\n";
  if (m.is_model()) {
    h += model_sizes(m, shown_path, sym, upper, static_cast<int32_t>(tokens), static_cast<int32_t>(capacity),
                     static_cast<int32_t>(window), static_cast<int32_t>(tile));
  }
  if (max_l > 0) {
    h += "/* Arena bytes of one forward of the largest block (each in its own dtype) at L=" +
         std::to_string(max_l) + ", S=" + std::to_string(max_s) + ", with " +
         (tile > 0 ? "tile_rows " + std::to_string(tile)
                   : std::string("the target's ATTN_TILE_ROWS (tile_rows 0)")) +
         ":\n * attn_plan_arena_bytes() of that plan, on the target that compiles this. */\n";
    h += "#define " + upper + "_ARENA_BYTES " + c_max_of(terms, 0, terms.size()) + "\n";
  }
  h += "\n#ifndef " + upper + "_ALIGN\n";
  h += "#if defined(__cplusplus) && __cplusplus >= 201103L\n#define " + upper + "_ALIGN alignas(" + upper +
       "_ALIGNMENT)\n";
  h += "#elif defined(__GNUC__) || defined(__clang__)\n#define " + upper + "_ALIGN __attribute__((aligned(" +
       upper + "_ALIGNMENT)))\n";
  h += "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n#define " + upper +
       "_ALIGN _Alignas(" + upper + "_ALIGNMENT)\n";
  h += "#else\n#error \"" + sym + ": define " + upper + "_ALIGN as this compiler's way to align to " + upper +
       "_ALIGNMENT bytes\"\n#endif\n#endif\n\n";
  h += upper + "_ALIGN static const uint8_t " + sym + "[" + upper + "_SIZE] = {\n";
  const auto* p = static_cast<const uint8_t*>(m.data());
  char buf[8];
  for (size_t i = 0; i < m.size(); ++i) {
    if (i % 16 == 0) h += "   ";
    std::snprintf(buf, sizeof buf, " 0x%02x,", p[i]);
    h += buf;
    if (i % 16 == 15 || i + 1 == m.size()) h += "\n";
  }
  h += "};\n\n#endif /* " + guard + " */\n";
  cli::write_file_atomic(out, h.data(), h.size());
  std::printf("attn emit-c: wrote %s (%s, %zu bytes)\n", comment_safe(out).c_str(), sym.c_str(), m.size());
  return 0;
}

}  // namespace attn
