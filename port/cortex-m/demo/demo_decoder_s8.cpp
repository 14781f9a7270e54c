// demo_decoder_s8.cpp: the byte-level Llama of tools/demo.sh (int8, whole
// model) generating text inside a Cortex-M firmware image: text in, text out.
//
// Two generated headers (tools/demo.sh writes them):
//   demo_decoder_model.h  the s8 model file as a const array in flash
//                         (`attn emit-c out/decoder.s8.attn --name demo_decoder_model
//                         --tokens-per-call 64 --capacity 128`),
//                         its tokenizer section included (`attn import --byte-vocab`)
//   demo_decoder_data.h   the prompt text and the text of the host's greedy s8
//                         continuation (attn_example_demo_decoder --emit-mcu)
// This image loads the model and its tokenizer in place (Model::tokenizer),
// encodes the prompt text (Tokenizer::encode, its scratch from the arena),
// feeds the ids in one transformer_decode_s8 call (prefill), then generates
// token by token: the argmax of the int32 logits (sample_s32, no float), its
// text from the streaming decoder (Tokenizer::decode, decode_flush at the
// end), the token fed back as one decode step. It prints the prompt and the
// generated text, checks the text equals the host's byte for byte, and prints
// the instructions of the encoding, of the prefill and per generated token.
// Exit code 0 if the texts are equal, 1 if not, 2 on errors. No heap: every
// buffer below is static, its size checked before use.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "attn/model.h"
#include "attn/sampler.h"
#include "attn/tokenizer.h"
#include "attn/transformer_fixed.h"
#include "demo_decoder_data.h"
#include "demo_decoder_model.h"
#include "port/port.h"

namespace {

using namespace demo_data;

constexpr int kMaxLayers = 8, kMaxVocab = 256;
// The prompt's ids: a byte tokenizer writes one id per byte (checked against max_ids).
constexpr size_t kMaxPromptIds = kPromptBytes;
// The generated text: the host's bytes, and room to hold a longer text (a mismatch) in part.
constexpr size_t kTextCapacity = kHostS8TextBytes + 64;
static_assert(kSteps >= 2, "the per-token count averages the kSteps - 1 tokens fed back");
// The tokenizer's scratch while the prompt is encoded; then the KV caches and one call's scratch.
alignas(ATTN_ARENA_ALIGN) uint8_t arena_buf[96 * 1024];
attn::Model model;
attn::Tokenizer tokenizer;
attn::TransformerConfig config;
attn::LayerWeightsS8 layers[kMaxLayers];
attn::TransformerWeightsS8 weights;
attn::TransformerPlan plan;
attn::Arena arena;
attn::TransformerStateS8 state;
int32_t prompt_ids[kMaxPromptIds];
int32_t prompt_len = 0;      // ids in prompt_ids
int32_t logits[kMaxVocab];   // the last row, int32 on weights.output_scale
char text[kTextCapacity];    // the generated text
size_t text_len = 0;         // bytes in text
bool text_overflow = false;  // the text outgrew kTextCapacity: it is not the host's

attn::Status load() {
  ATTN_TRY(attn::Model::load(demo_decoder_model, DEMO_DECODER_MODEL_SIZE, &model));
  ATTN_TRY(model.tokenizer(&tokenizer));  // kNotFound: a file imported without a tokenizer
  ATTN_TRY(model.transformer_config(&config));
  if (config.vocab_size > kMaxVocab) return attn::Status::kBadVocab;
  ATTN_TRY(model.transformer_weights_s8(layers, kMaxLayers, &weights));
  return arena.init(arena_buf, sizeof arena_buf);
}

// The prompt text -> prompt_ids, with scratch from the (still empty) arena.
attn::Status encode_prompt() {
  if (tokenizer.max_ids(kPromptBytes) > kMaxPromptIds) return attn::Status::kBufferTooSmall;
  if (tokenizer.tokenize_scratch_bytes(kPromptBytes) > arena.free_bytes())
    return attn::Status::kArenaTooSmall;
  size_t n = 0;
  ATTN_TRY(tokenizer.encode(kPrompt, kPromptBytes, prompt_ids, kMaxPromptIds, &arena, &n));
  prompt_len = static_cast<int32_t>(n);
  return attn::Status::kOk;
}

// Calls of up to prompt_len tokens (an empty prompt: kBadQueryLength), caches
// of prompt + continuation: the state is carved from the arena after the
// encoder is done with it.
attn::Status plan_state() {
  ATTN_TRY(attn::plan_transformer(config, attn::DType::kS8, prompt_len, prompt_len + kSteps, &plan));
  return attn::transformer_state_init_s8(plan, 0, arena, &state);
}

// The next token: greedy, integers only.
attn::Status next(int32_t* token) {
  return attn::sample_s32(logits, config.vocab_size, weights.output_scale, attn::Sampler{}, nullptr, token);
}

// Appends decoded bytes to text (past its capacity they are counted, not kept).
void append(const char* bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (text_len < kTextCapacity)
      text[text_len++] = bytes[i];
    else
      text_overflow = true;
  }
}

// Text as the host prints it (demo_decoder.cpp's c_literal): printable ASCII,
// \n, \" and \\ escaped, any other byte as \ooo.
void print_text(const char* label, const char* s, size_t n) {
  std::printf("%s \"", label);
  for (size_t i = 0; i < n; ++i) {
    const unsigned b = static_cast<unsigned char>(s[i]);
    if (s[i] == '\n')
      std::printf("\\n");
    else if (s[i] == '"' || s[i] == '\\')
      std::printf("\\%c", s[i]);
    else if (b >= 32 && b < 127)
      std::printf("%c", s[i]);
    else
      std::printf("\\%03o", b);
  }
  std::printf("\"%s\n", text_overflow && s == text ? " (and more)" : "");
}

}  // namespace

int main() {
  const attn::OutputRows last = attn::OutputRows::kLast;
  attn::Status s = load();
  port_counter_init();  // restart: counts stay exact well below ~7e8 instructions
  port_counter_start();
  if (s == attn::Status::kOk) s = encode_prompt();
  const uint64_t encoding = port_counter_stop();
  if (s == attn::Status::kOk) s = plan_state();
  port_counter_start();
  if (s == attn::Status::kOk) {
    s = attn::transformer_decode_s8(plan, weights, &state, prompt_ids, prompt_len, last, logits, arena);
  }
  const uint64_t prefill = port_counter_stop();
  // Token k: the argmax of the last logits, its text, then fed back as one
  // decode step (the last token needs none). Counted: argmax + detokenize +
  // step, kSteps - 1 times; detokenize also on its own.
  uint64_t steps = 0, detokenize = 0;
  attn::TokenizerDecodeState decode_state{};
  char piece[ATTN_TOKENIZER_MAX_PIECE + 16];  // one token's text: its piece, a space, U+FFFDs
  for (int k = 0; k < kSteps && s == attn::Status::kOk; ++k) {
    int32_t token = 0;
    size_t n = 0;
    port_counter_start();
    s = next(&token);
    uint64_t insns = port_counter_stop();
    port_counter_start();
    if (s == attn::Status::kOk) s = tokenizer.decode(token, &decode_state, piece, sizeof piece, &n);
    const uint64_t detok = port_counter_stop();
    insns += detok;
    if (s == attn::Status::kOk) append(piece, n);
    port_counter_start();
    if (s == attn::Status::kOk && k + 1 < kSteps) {
      s = attn::transformer_decode_s8(plan, weights, &state, &token, 1, last, logits, arena);
    }
    insns += port_counter_stop();
    if (k + 1 < kSteps) {
      steps += insns;
      detokenize += detok;
    }
  }
  if (s == attn::Status::kOk) {
    size_t n = 0;
    s = tokenizer.decode_flush(&decode_state, piece, sizeof piece, &n);  // a character left unfinished
    if (s == attn::Status::kOk) append(piece, n);
  }
  if (s != attn::Status::kOk) {
    std::printf("demo_decoder_s8: %s\n", attn::status_name(s));
    return 2;
  }
  const bool same =
      !text_overflow && text_len == kHostS8TextBytes && std::memcmp(text, kHostS8Text, kHostS8TextBytes) == 0;
  const char* board = port_board_name();
  print_text("prompt  ", kPrompt, kPromptBytes);
  print_text("s8      ", text, text_len);
  std::printf("%s: text identical to the host's s8 text: %s (%u bytes, %d tokens)\n", board,
              same ? "yes" : "NO", static_cast<unsigned>(text_len), kSteps);
  std::printf(
      "%s: instructions: encoding the %u-byte prompt (%d tokens) %lu; prefill %lu; per generated token %lu "
      "(argmax + decode step + detokenize, of which detokenize %lu)\n",
      board, static_cast<unsigned>(kPromptBytes), static_cast<int>(prompt_len),
      static_cast<unsigned long>(encoding), static_cast<unsigned long>(prefill),
      static_cast<unsigned long>(steps / (kSteps - 1)),
      static_cast<unsigned long>(detokenize / (kSteps - 1)));
  std::printf("%s: arena %u bytes (KV caches %u), model %u bytes (tokenizer included)\n", board,
              static_cast<unsigned>(plan.arena_bytes + plan.state_bytes),
              static_cast<unsigned>(plan.state_bytes), static_cast<unsigned>(DEMO_DECODER_MODEL_SIZE));
  return same ? 0 : 1;
}
