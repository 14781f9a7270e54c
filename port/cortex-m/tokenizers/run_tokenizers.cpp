// run_tokenizers.cpp: the committed tokenizer goldens on the board, byte for
// byte, and what tokenizing costs there.
//
// Every case of tokenizer_goldens.h (SentencePiece BPE from a .model, a
// tokenizer.json and a llama2.c tokenizer.bin; byte-level BPE with GPT-2's,
// Qwen2's and Llama 3's splits; WordPiece cased, uncased and a variant;
// bytes) loads its blob in place and, for every golden line, encodes the
// text (an arena of exactly tokenize_scratch_bytes, an id buffer of exactly
// max_ids) to the golden's ids and decodes those ids one at a time, through
// an output buffer of exactly max_decode_bytes, to the golden's text. Any difference fails the
// run (exit 1) and names the case and line.
//
// Then, per case, the cost lines of tools/bench/mcu-cost: instructions to
// encode a 64-byte English prompt, and to decode one token (the mean over
// that prompt's ids), counted under QEMU -icount:
//   measure-tokenizer board=B case=C algorithm=A bytes=64 ids=N encode_insns=N decode_insns_per_token=N
//                     scratch=N compiler=...
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/arena.h"
#include "attn/status.h"
#include "attn/tokenizer.h"
#include "port/port.h"
#include "tokenizer_goldens.h"

namespace {

#if defined(__clang__)
constexpr const char* kCompiler = "clang-" __clang_version__;
#else
constexpr const char* kCompiler = "gcc-" __VERSION__;
#endif

constexpr size_t kScratchBytes = 64 * 1024;
constexpr size_t kMaxIds = 2048;
constexpr size_t kMaxText = 2048;
// decode()'s output buffer: the most any blob may ask for (each run passes
// exactly its tokenizer's max_decode_bytes()).
constexpr size_t kDecodeCap = 3 * ATTN_TOKENIZER_MAX_PIECE + 16;

alignas(ATTN_ARENA_ALIGN) uint8_t g_scratch[kScratchBytes];
int32_t g_ids[kMaxIds];
int32_t g_want[kMaxIds];
char g_text[kMaxText];

// The cost prompt: 64 bytes of English.
constexpr char kPrompt[] = "Once upon a time, a little robot found a map of the stars in a b";
static_assert(sizeof kPrompt - 1 == 64, "the cost prompt is 64 bytes");

const char* algorithm_name(attn::TokenizerAlgorithm a) {
  switch (a) {
    case attn::TokenizerAlgorithm::kBytes:
      return "bytes";
    case attn::TokenizerAlgorithm::kSentencePieceBpe:
      return "sentencepiece-bpe";
    case attn::TokenizerAlgorithm::kByteLevelBpe:
      return "byte-level-bpe";
    case attn::TokenizerAlgorithm::kWordPiece:
      return "wordpiece";
  }
  return "?";
}

// A little-endian reader over one case's packed lines.
struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  uint32_t u32() {
    if (end - p < 4) return ok = false, 0;
    uint32_t v = 0;
    std::memcpy(&v, p, 4);
    p += 4;
    return v;
  }
  const char* bytes(uint32_t n) {
    if (static_cast<size_t>(end - p) < n) return ok = false, nullptr;
    const char* s = reinterpret_cast<const char*>(p);
    p += n;
    return s;
  }
};

// Encode text[0, len) with exactly the sizes the tokenizer asks for.
attn::Status encode(const attn::Tokenizer& tok, const char* text, size_t len, size_t* n) {
  const size_t scratch = tok.tokenize_scratch_bytes(len);
  const size_t cap = tok.max_ids(len);
  if (scratch > kScratchBytes || cap > kMaxIds) return attn::Status::kBufferTooSmall;
  attn::Arena arena;
  ATTN_TRY(arena.init(g_scratch, scratch));
  return tok.encode(text, len, g_ids, cap, &arena, n);
}

// Decode ids[0, n) one at a time into g_text (*len bytes).
attn::Status decode(const attn::Tokenizer& tok, const int32_t* ids, size_t n, size_t* len) {
  attn::TokenizerDecodeState state{};
  char buf[kDecodeCap];
  const size_t cap = tok.max_decode_bytes();
  if (cap > sizeof buf) return attn::Status::kBufferTooSmall;
  size_t got = 0;
  *len = 0;
  for (size_t i = 0; i <= n; ++i) {
    ATTN_TRY(i < n ? tok.decode(ids[i], &state, buf, cap, &got) : tok.decode_flush(&state, buf, cap, &got));
    if (*len + got > kMaxText) return attn::Status::kBufferTooSmall;
    std::memcpy(g_text + *len, buf, got);
    *len += got;
  }
  return attn::Status::kOk;
}

// Every golden line of case c; the number of lines that failed (-1: the case
// itself did not load).
int run_goldens(const TokenizerGoldenCase& c, const attn::Tokenizer& tok) {
  Reader r{c.lines, c.lines + c.lines_size};
  int failed = 0;
  for (uint32_t line = 0; line < c.line_count; ++line) {
    const uint32_t text_len = r.u32();
    const char* text = r.bytes(text_len);
    const uint32_t want_n = r.u32();
    if (!r.ok || want_n > kMaxIds) return std::printf("FAIL %s: golden data malformed\n", c.name), -1;
    for (uint32_t i = 0; i < want_n; ++i) g_want[i] = static_cast<int32_t>(r.u32());
    const uint32_t dec_len = r.u32();
    const char* dec = r.bytes(dec_len);
    if (!r.ok) return std::printf("FAIL %s: golden data malformed\n", c.name), -1;
    size_t n = 0;
    attn::Status st = encode(tok, text, text_len, &n);
    bool ok = st == attn::Status::kOk && n == want_n && std::memcmp(g_ids, g_want, n * sizeof(int32_t)) == 0;
    if (!ok) {
      std::printf("FAIL %s line %u: encode: %s, %u ids, want %u\n", c.name, static_cast<unsigned>(line + 1),
                  attn::status_name(st), static_cast<unsigned>(n), static_cast<unsigned>(want_n));
      ++failed;
      continue;
    }
    size_t len = 0;
    st = decode(tok, g_want, want_n, &len);
    if (st != attn::Status::kOk || len != dec_len || std::memcmp(g_text, dec, len) != 0) {
      std::printf("FAIL %s line %u: decode: %s, %u bytes, want %u\n", c.name, static_cast<unsigned>(line + 1),
                  attn::status_name(st), static_cast<unsigned>(len), static_cast<unsigned>(dec_len));
      ++failed;
    }
  }
  return failed;
}

// The cost lines of case c.
bool measure(const TokenizerGoldenCase& c, const attn::Tokenizer& tok) {
  const size_t len = sizeof kPrompt - 1;
  size_t n = 0;
  port_counter_start();
  const attn::Status st = encode(tok, kPrompt, len, &n);
  const uint64_t enc = port_counter_stop();
  if (st != attn::Status::kOk || n == 0) return false;
  static int32_t ids[kMaxIds];
  std::memcpy(ids, g_ids, n * sizeof(int32_t));
  size_t text_len = 0;
  port_counter_start();
  const attn::Status ds = decode(tok, ids, n, &text_len);
  const uint64_t dec = port_counter_stop();
  if (ds != attn::Status::kOk) return false;
  std::printf(
      "measure-tokenizer board=%s case=%s algorithm=%s bytes=%u ids=%u encode_insns=%lu "
      "decode_insns_per_token=%lu scratch=%u compiler=%s\n",
      port_board_name(), c.name, algorithm_name(tok.algorithm()), static_cast<unsigned>(len),
      static_cast<unsigned>(n), static_cast<unsigned long>(enc), static_cast<unsigned long>(dec / n),
      static_cast<unsigned>(tok.tokenize_scratch_bytes(len)), kCompiler);
  return true;
}

}  // namespace

int main() {
  int failed_cases = 0, lines = 0;
  for (int i = 0; i < kTokenizerGoldenCaseCount; ++i) {
    const TokenizerGoldenCase& c = kTokenizerGoldenCases[i];
    attn::Tokenizer tok;
    const attn::Status st = attn::Tokenizer::load(c.blob, c.blob_size, &tok);
    if (st != attn::Status::kOk) {
      std::printf("FAIL %s: load: %s\n", c.name, attn::status_name(st));
      ++failed_cases;
      continue;
    }
    port_counter_start();
    const int failed = run_goldens(c, tok);
    const uint64_t insns = port_counter_stop();
    if (failed != 0) {
      ++failed_cases;
      continue;
    }
    lines += static_cast<int>(c.line_count);
    std::printf("ok   %-18s %-17s %3u lines encoded and decoded byte for byte, blob %u B, %lu insns\n",
                c.name, algorithm_name(tok.algorithm()), static_cast<unsigned>(c.line_count),
                static_cast<unsigned>(c.blob_size), static_cast<unsigned long>(insns));
    if (!measure(c, tok)) {
      std::printf("FAIL %s: the cost prompt did not encode and decode\n", c.name);
      ++failed_cases;
    }
  }
  std::printf("%s: tokenizer goldens: %d of %d cases pass (%d lines)\n", port_board_name(),
              kTokenizerGoldenCaseCount - failed_cases, kTokenizerGoldenCaseCount, lines);
  return failed_cases == 0 && kTokenizerGoldenCaseCount > 0 ? 0 : 1;
}
