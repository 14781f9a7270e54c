/* main.c: a whole decoder generating text on a Cortex-M, in C99, with only
 * attn/attn.h and the header `attn emit-c` writes (model.h: the model file
 * with its tokenizer as a const array, and the buffer sizes for this target).
 *
 * The model's two buffers are static arrays of exactly MODEL_STATE_BYTES and
 * MODEL_ARENA_BYTES, each in its own linker section, which link.ld puts in
 * different RAM regions: the KV caches in the large RAM, the handle and one
 * call's scratch in the fast one. The prompt is text (PROMPT); it is encoded
 * with the model's tokenizer (BOS first when the tokenizer has one, as
 * llama2.c's run.c does), fed in calls of up to MODEL_TOKENS_PER_CALL tokens,
 * then STEPS tokens are generated greedily (integer logits, no float) and
 * printed as text as they come, stopping early at EOS or BOS. Then the
 * instruction counts: encoding the prompt, the prefill, and per generated
 * token (argmax, decode step and detokenize). Exit code 0, or the failing
 * attn_status. */
#include <stdint.h>
#include <string.h>

#include "attn/attn.h"
#include "counter.h"
#include "model.h"

#ifndef PROMPT
#define PROMPT "You may copy"
#endif
#ifndef STEPS
#define STEPS 32
#endif
#ifndef CPU_HZ
#define CPU_HZ 25000000u
#endif
#define MAX_VOCAB 4096 /* logits of one row */
#define MAX_IDS 256    /* prompt ids */

#if MODEL_CAPACITY < 1
#error "model.h has no KV caches: emit it with --capacity C"
#endif

void board_write(const char* s, uint32_t len);

static uint8_t kv_state[MODEL_STATE_BYTES] __attribute__((section(".kv_state"), aligned(ATTN_ARENA_ALIGN)));
static uint8_t scratch[MODEL_ARENA_BYTES] __attribute__((section(".scratch"), aligned(ATTN_ARENA_ALIGN)));

static attn_model g_model;
static attn_tokenizer g_tok;
static attn_transformer g_tf;
static int32_t g_ids[MAX_IDS];
static int32_t g_logits[MAX_VOCAB];

static void print(const char* s) { board_write(s, (uint32_t)strlen(s)); }

static void print_u64(uint64_t v) {
  char buf[24];
  int i = (int)sizeof buf;
  buf[--i] = '\0';
  do {
    buf[--i] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0u);
  print(buf + i);
}

static int fail(const char* what, attn_status s) {
  print("c-llm: ");
  print(what);
  print(": ");
  print(attn_status_name(s));
  print("\n");
  return s != ATTN_OK ? (int)s : 1;
}

static char g_text[3 * 256 + 16]; /* 3 * ATTN_TOKENIZER_MAX_PIECE + 16: any piece of any tokenizer */
static size_t g_text_cap;         /* this tokenizer's attn_tokenizer_max_decode_bytes */

/* The text of one id (id < 0: the end of the text), written as it comes. */
static attn_status emit(int32_t id, attn_tokenizer_decode_state* st) {
  size_t n = 0;
  const attn_status s = id < 0 ? attn_tokenizer_decode_flush(&g_tok, st, g_text, g_text_cap, &n)
                               : attn_tokenizer_decode(&g_tok, id, st, g_text, g_text_cap, &n);
  if (s == ATTN_OK) board_write(g_text, (uint32_t)n);
  return s;
}

int main(void) {
  const char prompt[] = PROMPT;
  size_t need = 0, max_ids = 0, n_ids = 0;
  int32_t vocab = 0, bos = -1, eos = -1, next = 0, pos, k, generated = 0, fed = 0;
  attn_dtype dtype;
  attn_tokenizer_decode_state st;
  uint64_t t0, encode, prefill, steps = 0;
  attn_status s;

  counter_init(CPU_HZ);
  s = attn_model_load(&g_model, model, MODEL_SIZE); /* checks the whole file, copies nothing */
  if (s != ATTN_OK) return fail("load", s);
  s = attn_model_tokenizer(&g_model, &g_tok);
  if (s != ATTN_OK) return fail("tokenizer", s);
  s = attn_tokenizer_special(&g_tok, ATTN_TOKEN_BOS, &bos); /* -1: none */
  if (s == ATTN_OK) s = attn_tokenizer_special(&g_tok, ATTN_TOKEN_EOS, &eos);
  if (s != ATTN_OK) return fail("tokenizer specials", s);
  s = attn_tokenizer_max_decode_bytes(&g_tok, &g_text_cap);
  if (s != ATTN_OK || g_text_cap > sizeof g_text)
    return fail("decode buffer", s != ATTN_OK ? s : ATTN_ERR_BUFFER_TOO_SMALL);

  /* Text to ids, its scratch from the scratch buffer (nothing bound to it yet). */
  s = attn_tokenizer_sizes(&g_tok, sizeof prompt - 1, &need, &max_ids);
  if (s != ATTN_OK) return fail("tokenizer sizes", s);
  if (need > sizeof scratch || max_ids + 1 > MAX_IDS)
    return fail("prompt too long", ATTN_ERR_BUFFER_TOO_SMALL);
  t0 = counter_instructions();
  if (bos >= 0) g_ids[n_ids++] = bos;
  {
    size_t n = 0;
    s = attn_tokenizer_encode(&g_tok, prompt, sizeof prompt - 1, g_ids + n_ids, MAX_IDS - n_ids, scratch,
                              need, &n);
    n_ids += n;
  }
  encode = counter_instructions() - t0;
  if (s != ATTN_OK) return fail("encode", s);
  if (n_ids == 0 || (int32_t)n_ids + STEPS - 1 > MODEL_CAPACITY)
    return fail("prompt and steps past the cache", ATTN_ERR_SEQUENCE_TOO_LONG);

  /* The model in its two buffers: exactly the emitted sizes. */
  s = attn_transformer_init_split(&g_tf, &g_model, MODEL_TOKENS_PER_CALL, MODEL_CAPACITY, MODEL_WINDOW,
                                  kv_state, sizeof kv_state, scratch, sizeof scratch);
  if (s != ATTN_OK) return fail("init", s);
  s = attn_transformer_shape(&g_tf, &dtype, &vocab);
  if (s != ATTN_OK || vocab > MAX_VOCAB) return fail("shape", s != ATTN_OK ? s : ATTN_ERR_BUFFER_TOO_SMALL);

  print("prompt: ");
  print(prompt);
  print("\ntext: ");
  t0 = counter_instructions();
  for (pos = 0; pos < (int32_t)n_ids && s == ATTN_OK; pos += MODEL_TOKENS_PER_CALL) {
    const int32_t n =
        (int32_t)n_ids - pos < MODEL_TOKENS_PER_CALL ? (int32_t)n_ids - pos : MODEL_TOKENS_PER_CALL;
    s = attn_transformer_decode_s32(&g_tf, g_ids + pos, n, ATTN_ROWS_LAST, g_logits, NULL);
  }
  prefill = counter_instructions() - t0;
  if (s != ATTN_OK) return fail("prefill", s);
  memset(&st, 0, sizeof st);
  for (k = 0; k < STEPS; ++k) {
    /* Counted: argmax, detokenize, and the decode step of the token (none after the last). */
    t0 = counter_instructions();
    s = attn_sample_greedy_s32(g_logits, vocab, &next);
    if (s == ATTN_OK && (next == eos || next == bos)) break; /* the end of the text */
    if (s == ATTN_OK) s = emit(next, &st);
    ++generated;
    if (s == ATTN_OK && k + 1 < STEPS) {
      s = attn_transformer_decode_s32(&g_tf, &next, 1, ATTN_ROWS_LAST, g_logits, NULL);
      steps += counter_instructions() - t0;
      ++fed;
    }
    if (s != ATTN_OK) return fail("generate", s);
  }
  s = emit(-1, &st);
  if (s != ATTN_OK) return fail("decode", s);
  print("\nc-llm: ");
  print_u64((uint64_t)generated);
  print(" tokens; instructions: encoding the prompt ");
  print_u64(encode);
  print(", prefill of ");
  print_u64((uint64_t)n_ids);
  print(" tokens ");
  print_u64(prefill);
  print(", per generated token ");
  print_u64(fed > 0 ? steps / (uint64_t)fed : 0);
  print(" (argmax, detokenize, decode step)");
  print("\nc-llm: buffers: state ");
  print_u64(sizeof kv_state);
  print(" bytes (.kv_state), scratch ");
  print_u64(sizeof scratch);
  print(" bytes (.scratch), model ");
  print_u64(MODEL_SIZE);
  print(" bytes (flash)\n");
  return 0;
}
