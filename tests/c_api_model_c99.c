/* c_api_model_c99.c: whole models through the C99 API (attn/attn.h) alone,
 * as C firmware would use it, compiled as C99 with -Wpedantic.
 *
 *   c_api_model_c99 MODEL.attn...
 *
 * For each model file (f32, s8 or s16; encoder or decoder): load it, read
 * its config, bind it to a static arena of the size attn_transformer_init_arena_bytes
 * reports, run one forward over a few tokens. Integer models: the float
 * outputs are the int32 outputs times the reported scale (one rounding from
 * double). Decoders: a prefill and single steps give the forward's rows
 * (byte for byte for s8/s16, within 1e-4 of the largest |output| for f32),
 * then greedy generation of a few tokens by decode steps gives, at each
 * step, the last row of one forward over the whole sequence so far. Also
 * the errors a caller meets first. Exits 1 on any failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "c_check.h"

/* Static memory, as firmware has it: the model file, the arena, the outputs. */
#define MAX_FILE (64 * 1024)
#define MAX_ARENA (256 * 1024)
#define MAX_TOKENS 12
#define MAX_OUT (MAX_TOKENS * 512)
static ATTN_ALIGNED_ARENA uint8_t g_blob[MAX_FILE];
static ATTN_ALIGNED_ARENA uint8_t g_arena[MAX_ARENA];
static ATTN_ALIGNED_ARENA uint8_t g_state[MAX_ARENA]; /* attn_transformer_init_split's two buffers */
static ATTN_ALIGNED_ARENA uint8_t g_scratch[MAX_ARENA];
static int32_t g_q[MAX_OUT];  /* int32 outputs of a forward */
static int32_t g_qd[MAX_OUT]; /* ... of decoding */
static float g_f[MAX_OUT];    /* float outputs of a forward */
static float g_fd[MAX_OUT];   /* ... of decoding */

static size_t read_file(const char* path) {
  size_t n;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return 0;
  n = fread(g_blob, 1, sizeof g_blob, f);
  fclose(f);
  return n;
}

static float max_abs(const float* x, size_t n) {
  float m = 0.0f;
  size_t i;
  for (i = 0; i < n; ++i) m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
  return m;
}

/* |a - b| <= 1e-4 * max|b| + 1e-6 everywhere. */
static int close_f32(const float* a, const float* b, size_t n) {
  const float bound = 1e-4f * max_abs(b, n) + 1e-6f;
  size_t i;
  for (i = 0; i < n; ++i)
    if (!(fabsf(a[i] - b[i]) <= bound)) return 0;
  return 1;
}

/* The model's outputs for tokens [n]: one forward (decode 0, all rows) or
 * (decode 1) a prefill of `prefill` tokens then single steps, into q (integer
 * models) or f (f32 models). */
static attn_status run(attn_transformer* tf, int integer, const int32_t* tokens, int32_t n, int decode,
                       int32_t prefill, int32_t width, int32_t* q, float* f, float* scale) {
  int32_t i;
  if (!decode) {
    return integer ? attn_transformer_forward_s32(tf, tokens, n, 0, q, scale)
                   : attn_transformer_forward(tf, tokens, n, 0, f);
  }
  ATTN_CHECK(attn_transformer_reset(tf));
  ATTN_CHECK(integer ? attn_transformer_decode_s32(tf, tokens, prefill, 0, q, scale)
                     : attn_transformer_decode(tf, tokens, prefill, 0, f));
  for (i = prefill; i < n; ++i) {
    ATTN_CHECK(integer
                   ? attn_transformer_decode_s32(tf, tokens + i, 1, 1, q + (size_t)i * (size_t)width, scale)
                   : attn_transformer_decode(tf, tokens + i, 1, 1, f + (size_t)i * (size_t)width));
  }
  return ATTN_OK;
}

static void test_model(const char* path) {
  static attn_model model;
  static attn_transformer tf;
  attn_transformer_config cfg;
  attn_dtype dtype = 0, dt2 = 0;
  size_t size = read_file(path), need = 0, count, i;
  int32_t tokens[MAX_TOKENS], n, width = 0, max_tokens, capacity, integer, length = -1, step, next = -1;
  float scale = 0.0f, scale2 = 0.0f;
  const int failures = g_failures;
  printf("%s: ", path);
  CHECK(size > 0 && size < sizeof g_blob);
  CHECK_STATUS(attn_model_load(&model, g_blob, size), ATTN_OK);
  CHECK_STATUS(attn_model_transformer_config(&model, &cfg, &dtype), ATTN_OK);
  if (g_failures != failures) return;
  integer = dtype != ATTN_DTYPE_F32;
  n = cfg.max_positions < 6 ? cfg.max_positions : 6;
  for (i = 0; i < (size_t)MAX_TOKENS; ++i) tokens[i] = (int32_t)((i * 7u + 3u) % (uint32_t)cfg.vocab_size);
  max_tokens = MAX_TOKENS < cfg.max_positions ? MAX_TOKENS : cfg.max_positions;
  capacity = cfg.causal ? max_tokens : 0;
  CHECK_STATUS(attn_transformer_init_arena_bytes(&model, max_tokens, capacity, &need), ATTN_OK);
  printf("dtype %d, %d layers, E=%d, vocab %d, %s; arena %lu bytes\n", (int)dtype, (int)cfg.num_layers,
         (int)cfg.embed_dim, (int)cfg.vocab_size, cfg.causal ? "decoder" : "encoder", (unsigned long)need);
  CHECK(need <= sizeof g_arena);
  if (g_failures != failures) return;
  CHECK_STATUS(attn_transformer_init(&tf, &model, max_tokens, capacity, 0, g_arena, need - 1),
               ATTN_ERR_ARENA_TOO_SMALL);
  CHECK_STATUS(attn_transformer_init(&tf, &model, max_tokens, capacity, 0, g_arena, need), ATTN_OK);
  CHECK_STATUS(attn_transformer_shape(&tf, &dt2, &width), ATTN_OK);
  CHECK(dt2 == dtype);
  CHECK(width == (cfg.head == ATTN_HEAD_NONE ? cfg.embed_dim : cfg.vocab_size));
  CHECK((size_t)MAX_TOKENS * (size_t)width <= (size_t)MAX_OUT);
  if (g_failures != failures) return;
  count = (size_t)n * (size_t)width;

  /* One forward; integer models in float too. */
  CHECK_STATUS(run(&tf, integer, tokens, n, 0, 0, width, g_q, g_f, &scale), ATTN_OK);
  if (integer) {
    CHECK(scale > 0.0f);
    CHECK_STATUS(attn_transformer_forward(&tf, tokens, n, 0, g_fd), ATTN_OK);
    for (i = 0; i < count; ++i) CHECK(g_fd[i] == (float)((double)g_q[i] * (double)scale));
  }

  /* The first row alone (an encoder's [CLS]): row 0 of the forward. */
  if (integer) {
    CHECK_STATUS(attn_transformer_forward_s32(&tf, tokens, n, ATTN_ROWS_FIRST, g_qd, &scale2), ATTN_OK);
    CHECK(memcmp(g_qd, g_q, (size_t)width * sizeof(int32_t)) == 0);
  } else {
    CHECK_STATUS(attn_transformer_forward(&tf, tokens, n, ATTN_ROWS_FIRST, g_fd), ATTN_OK);
    CHECK(close_f32(g_fd, g_f, (size_t)width));
  }

  /* The same model in two buffers (state, scratch), the scratch overwritten
   * before the call: the same outputs. */
  {
    static attn_transformer tf2;
    size_t state_bytes = 0, scratch_bytes = 0;
    CHECK_STATUS(
        attn_transformer_init_split_bytes(&model, max_tokens, capacity, &state_bytes, &scratch_bytes),
        ATTN_OK);
    CHECK(state_bytes + scratch_bytes == need);
    CHECK(state_bytes <= sizeof g_state && scratch_bytes <= sizeof g_scratch);
    if (g_failures != failures) return;
    CHECK_STATUS(attn_transformer_init_split(&tf2, &model, max_tokens, capacity, 0, g_state, state_bytes,
                                             g_scratch, scratch_bytes - 1),
                 ATTN_ERR_ARENA_TOO_SMALL);
    CHECK_STATUS(attn_transformer_init_split(&tf2, &model, max_tokens, capacity, 0, g_state, state_bytes,
                                             g_scratch, scratch_bytes),
                 ATTN_OK);
    { /* the call's scratch is scratch's last bytes: overwritten, the same outputs */
      attn_transformer_config cc;
      attn_dtype d = 0;
      attn_transformer_plan p;
      size_t call = 0, kv = 0;
      CHECK_STATUS(attn_model_transformer_config(&model, &cc, &d), ATTN_OK);
      CHECK_STATUS(attn_transformer_plan_init(&p, &cc, d, max_tokens, capacity, 0), ATTN_OK);
      CHECK_STATUS(attn_transformer_plan_arena_bytes(&p, &call, &kv), ATTN_OK);
      CHECK(kv <= state_bytes && call < scratch_bytes);
      if (g_failures != failures) return;
      memset(g_scratch + (scratch_bytes - call), 0xA5, call);
    }
    CHECK_STATUS(run(&tf2, integer, tokens, n, 0, 0, width, g_qd, g_fd, &scale2), ATTN_OK);
    CHECK(integer ? memcmp(g_qd, g_q, count * sizeof(int32_t)) == 0
                  : memcmp(g_fd, g_f, count * sizeof(float)) == 0);
  }

  /* The errors a caller meets first. */
  tokens[1] = cfg.vocab_size;
  CHECK_STATUS(run(&tf, integer, tokens, n, 0, 0, width, g_qd, g_fd, &scale2), ATTN_ERR_TOKEN_OUT_OF_RANGE);
  tokens[1] = (int32_t)((1u * 7u + 3u) % (uint32_t)cfg.vocab_size);
  /* out_scale NULL: not wanted (integer models: the same outputs; f32: no integer outputs). */
  memset(g_qd, 0x5A, count * sizeof(int32_t));
  CHECK_STATUS(attn_transformer_forward_s32(&tf, tokens, n, 0, g_qd, NULL),
               integer ? ATTN_OK : ATTN_ERR_BAD_DTYPE);
  if (integer) CHECK(memcmp(g_qd, g_q, count * sizeof(int32_t)) == 0);
  CHECK_STATUS(attn_transformer_forward(&tf, tokens, 0, 0, g_fd), ATTN_ERR_BAD_QUERY_LENGTH);

  if (!cfg.causal) {
    CHECK_STATUS(attn_transformer_decode(&tf, tokens, 1, 0, g_fd), ATTN_ERR_PLAN_MISMATCH);
    return;
  }
  /* Decoding: prefill 2, then steps; the forward's rows. */
  CHECK_STATUS(run(&tf, integer, tokens, n, 1, 2, width, g_qd, g_fd, &scale2), ATTN_OK);
  if (integer) {
    CHECK(memcmp(g_qd, g_q, count * sizeof(int32_t)) == 0);
    CHECK(memcmp(&scale, &scale2, sizeof scale) == 0);
  } else {
    CHECK(close_f32(g_fd, g_f, count));
  }
  CHECK_STATUS(attn_transformer_length(&tf, &length), ATTN_OK);
  CHECK(length == n);

  /* Greedy generation by decode steps: each step's logits are the last row
   * of a forward over everything so far. */
  if (cfg.head == ATTN_HEAD_NONE) return;
  for (step = n; step < max_tokens; ++step) {
    const float* last_f = g_fd + (size_t)(step - 1) * (size_t)width;
    const int32_t* last_q = g_qd + (size_t)(step - 1) * (size_t)width;
    if (integer) {
      CHECK_STATUS(attn_sample_greedy_s32(last_q, width, &next), ATTN_OK);
    } else {
      CHECK_STATUS(attn_sample(last_f, width, 0.0f, 0, NULL, &next), ATTN_OK);
    }
    CHECK(next >= 0 && next < cfg.vocab_size);
    tokens[step] = next;
    CHECK_STATUS(integer
                     ? attn_transformer_decode_s32(&tf, tokens + step, 1, 1,
                                                   g_qd + (size_t)step * (size_t)width, &scale2)
                     : attn_transformer_decode(&tf, tokens + step, 1, 1, g_fd + (size_t)step * (size_t)width),
                 ATTN_OK);
    CHECK_STATUS(integer ? attn_transformer_forward_s32(&tf, tokens, step + 1, 1, g_q, &scale)
                         : attn_transformer_forward(&tf, tokens, step + 1, 1, g_f),
                 ATTN_OK);
    if (integer) {
      CHECK(memcmp(g_q, g_qd + (size_t)step * (size_t)width, (size_t)width * sizeof(int32_t)) == 0);
    } else {
      CHECK(close_f32(g_fd + (size_t)step * (size_t)width, g_f, (size_t)width));
    }
  }
  printf("  generated:");
  for (i = (size_t)n; i < (size_t)step; ++i) printf(" %d", (int)tokens[i]);
  printf("\n");
  CHECK_STATUS(attn_transformer_length(&tf, &length), ATTN_OK);
  CHECK(length == step);
}

/* The sampler's generator: seeded it draws reproducibly; unseeded it is refused. */
static void test_sampler(void) {
  static const float logits[5] = {0.5f, 2.0f, -1.0f, 2.0f, 0.0f};
  static const int32_t ilogits[5] = {5, 20, -10, 20, 0};
  attn_rng a, b;
  attn_rng zero;
  int32_t ta = -1, tb = -1, k;
  memset(&zero, 0, sizeof zero);
  CHECK_STATUS(attn_sample(logits, 5, 0.0f, 0, NULL, &ta), ATTN_OK);
  CHECK(ta == 1); /* the lowest id of the tie */
  CHECK_STATUS(attn_sample_greedy_s32(ilogits, 5, &ta), ATTN_OK);
  CHECK(ta == 1);
  CHECK_STATUS(attn_rng_seed(&a, 42), ATTN_OK);
  CHECK_STATUS(attn_rng_seed(&b, 42), ATTN_OK);
  for (k = 0; k < 8; ++k) {
    CHECK_STATUS(attn_sample(logits, 5, 1.0f, 3, &a, &ta), ATTN_OK);
    CHECK_STATUS(attn_sample_s32(ilogits, 5, 0.1f, 1.0f, 3, &b, &tb), ATTN_OK);
    CHECK(ta == tb); /* the same draws from the same seed and the same real logits */
    CHECK(ta == 0 || ta == 1 || ta == 3);
  }
  CHECK_STATUS(attn_sample(logits, 5, 1.0f, 0, &zero, &ta), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_sample(logits, 5, 1.0f, 0, NULL, &ta), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_sample(logits, 5, 1.0f, 6, &a, &ta), ATTN_ERR_BAD_SAMPLER);
  CHECK(ta == -1);
}

int main(int argc, char** argv) {
  int i;
  test_sampler();
  for (i = 1; i < argc; ++i) test_model(argv[i]);
  printf("c_api_model_c99: %d models, %d checks, %d failed\n", argc - 1, g_checks, g_failures);
  return g_failures == 0 && argc > 1 ? 0 : 1;
}
