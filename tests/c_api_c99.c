/* c_api_c99.c: the C99 API (attn/attn.h) from a C program, compiled as C99.
 *
 *   c_api_c99 [GOLDEN.bin | --quant FILE.attn X.npy KV.npy|- V.npy|- CAUSAL WANT.npy]...
 *
 * Checks a hand-computed case, every error path a firmware caller meets, and
 * each golden case (tests/data/golden/README.md) twice: once with the weights
 * passed directly, once through a .attn blob this program writes in memory
 * and loads with attn_model_load(). Bound, for outputs and attention weights:
 * max|got - want| <= 1e-5 * max|want| + 1e-6. Also decodes a hand-made s8 and
 * s16 block (GQA, RoPE, window) over a KV cache: byte for byte the causal
 * forward's output. With --quant, runs block 0 of a quantized .attn file on
 * float inputs as firmware would (test_quantized_file): byte for byte the
 * output of the C++ path in WANT.npy. Exits 1 on any failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "c_check.h"

static int g_blob_skipped = 0;
static int g_decoded = 0;
static int g_quant_files = 0;

/* A 16-byte aligned block from malloc (freed with free_aligned). */
static void* alloc_aligned(size_t bytes, void** raw) {
  uintptr_t p;
  *raw = malloc(bytes + 32);
  if (*raw == NULL) return NULL;
  p = ((uintptr_t)*raw + 15u) & ~(uintptr_t)15u;
  return (void*)p;
}

/* Float weights with all four projections M and no biases. */
static attn_weights_f32 weights_all(const float* m) {
  attn_weights_f32 w;
  memset(&w, 0, sizeof w);
  w.wq = w.wk = w.wv = w.wo = m;
  return w;
}

/* Float I/O: query Q, key K, value V into Y (and the probabilities into P
 * unless NULL), query row 0 at position 0. */
static attn_io_f32 io_f32(const float* q, const float* k, const float* v, float* y, float* p) {
  attn_io_f32 io;
  memset(&io, 0, sizeof io);
  io.query = q;
  io.key = k;
  io.value = v;
  io.output = y;
  io.attn_weights = p;
  return io;
}

/* ------------------------------------------------- hand-computed case --- */

/* E = 2, H = 1, L = 1, S = 2, identity projections, no bias: the output is
 * p0 * k0 + p1 * k1 with p = softmax(q . k / sqrt(2)). */
static void test_hand_case(void) {
  static const float eye[4] = {1, 0, 0, 1};
  static const float q[2] = {1, 2};
  static const float kv[4] = {1, 0, 0, 1};
  /* Sized at compile time, as firmware would: D = DKV = 2, L = 1, S = 2. */
  static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_F32(2, 2, 1, 2)];
  attn_config cfg;
  attn_plan plan;
  attn_weights_f32 w;
  attn_io_f32 io;
  attn_mask mask;
  float y[2], p[2];
  size_t need = 0;
  double s0, s1, p0, p1;

  memset(&cfg, 0, sizeof cfg);
  cfg.embed_dim = 2;
  cfg.num_heads = 1;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 1, 2, 0), ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &need), ATTN_OK);
  CHECK(need == sizeof arena);

  w = weights_all(eye);
  io = io_f32(q, kv, kv, y, p);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, &io, arena, sizeof arena), ATTN_OK);
  s0 = 1.0 / sqrt(2.0);
  s1 = 2.0 / sqrt(2.0);
  p0 = exp(s0) / (exp(s0) + exp(s1));
  p1 = 1.0 - p0;
  CHECK(fabs(p[0] - p0) < 1e-6 && fabs(p[1] - p1) < 1e-6);
  CHECK(fabs(y[0] - p0) < 1e-6 && fabs(y[1] - p1) < 1e-6);

  /* Key padding to one key: all weight on key 0, y = k0. */
  memset(&mask, 0, sizeof mask);
  mask.key_padding = 1;
  mask.key_length = 1;
  CHECK_STATUS(attn_forward_f32(&plan, &w, &mask, &io, arena, sizeof arena), ATTN_OK);
  CHECK(p[0] == 1.0f && p[1] == 0.0f && y[0] == 1.0f && y[1] == 0.0f);
  /* key_length without key_padding is ignored: the zeroed mask means "none". */
  mask.key_padding = 0;
  mask.key_length = 0;
  CHECK_STATUS(attn_forward_f32(&plan, &w, &mask, &io, arena, sizeof arena), ATTN_OK);
  CHECK(fabs(p[0] - p0) < 1e-6);
  mask.key_padding = 1;
  mask.key_length = 3;
  CHECK_STATUS(attn_forward_f32(&plan, &w, &mask, &io, arena, sizeof arena), ATTN_ERR_BAD_KEY_PADDING);
}

/* ------------------------------------------------------- error paths --- */

static void test_errors(void) {
  static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_F32(4, 4, 2, 2) + 16];
  static const float wts[16] = {0};
  static const float x[8] = {0};
  float y[8];
  attn_config cfg;
  attn_plan plan, zero_plan, copy;
  attn_model model;
  attn_weights_f32 w;
  attn_io_f32 io;
  attn_block_info info;
  attn_tensor_info tensor;
  size_t need = 1;
  uint32_t count = 7;
  int code, unknown = 0;

  /* Every code has a name; non-codes have the one "unknown" name. */
  CHECK(strcmp(attn_status_name(ATTN_OK), "ATTN_OK") == 0);
  CHECK(strcmp(attn_status_name(ATTN_ERR_ARENA_TOO_SMALL), "ATTN_ERR_ARENA_TOO_SMALL") == 0);
  CHECK(strcmp(attn_status_name(ATTN_ERR_CRC_MISMATCH), "ATTN_ERR_CRC_MISMATCH") == 0);
  CHECK(strcmp(attn_status_name(-1), "ATTN_ERR_UNKNOWN") == 0);
  for (code = 0; code < 256; ++code) {
    const char* name = attn_status_name(code);
    CHECK(name != NULL && strncmp(name, "ATTN_", 5) == 0);
    if (strcmp(name, "ATTN_ERR_UNKNOWN") == 0) ++unknown;
  }
  CHECK(unknown > 100 && unknown < 256);

  memset(&cfg, 0, sizeof cfg);
  CHECK_STATUS(attn_plan_init(NULL, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_plan_init(&plan, NULL, ATTN_DTYPE_F32, 2, 2, 0), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_ERR_BAD_EMBED_DIM);
  /* A failed init leaves the plan unusable, not half-made. */
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &need), ATTN_ERR_BAD_HANDLE);
  CHECK(need == 0);
  cfg.embed_dim = 4;
  cfg.num_heads = 3;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_ERR_BAD_HEAD_DIM);
  cfg.num_heads = 0;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_ERR_BAD_NUM_HEADS);
  cfg.num_heads = 2;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 0, 2, 0), ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 0, 0), ATTN_ERR_BAD_KEY_LENGTH);
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, -1), ATTN_ERR_BAD_TILE_ROWS);
  CHECK_STATUS(attn_plan_init(&plan, &cfg, 99, 2, 2, 0), ATTN_ERR_BAD_DTYPE);
  cfg.num_kv_heads = 3;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_ERR_BAD_KV_HEADS);
  cfg.num_kv_heads = 0;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, NULL), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &need), ATTN_OK);
  CHECK(need == ATTN_ARENA_BYTES_F32(4, 4, 2, 2));

  w = weights_all(wts);
  io = io_f32(x, x, x, y, NULL);
  /* A plan copied by assignment stays valid; a zeroed one is no plan. */
  copy = plan;
  CHECK_STATUS(attn_forward_f32(&copy, &w, NULL, &io, arena, need), ATTN_OK);
  memset(&zero_plan, 0, sizeof zero_plan);
  CHECK_STATUS(attn_forward_f32(&zero_plan, &w, NULL, &io, arena, need), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_forward_f32(NULL, &w, NULL, &io, arena, need), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_forward_f32(&plan, NULL, NULL, &io, arena, need), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, NULL, arena, need), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, &io, NULL, need), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, &io, arena, need - 1), ATTN_ERR_ARENA_TOO_SMALL);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, &io, arena + 4, need), ATTN_ERR_ARENA_MISALIGNED);
  /* The plan says bias: missing bias pointers are an error, not a crash. */
  cfg.bias = 1;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_OK);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, &io, arena, need), ATTN_ERR_NULL_ARGUMENT);
  io.output = NULL;
  cfg.bias = 0;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 2, 2, 0), ATTN_OK);
  CHECK_STATUS(attn_forward_f32(&plan, &w, NULL, &io, arena, need), ATTN_ERR_NULL_ARGUMENT);

  /* A model that was never loaded, or whose load failed. */
  memset(&model, 0, sizeof model);
  CHECK_STATUS(attn_model_block_count(&model, &count), ATTN_ERR_BAD_HANDLE);
  CHECK(count == 0);
  CHECK_STATUS(attn_model_block(&model, 0, &info), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_model_block_weights_f32(&model, 0, &w), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_model_find_tensor(&model, "x", &tensor), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_model_load(NULL, wts, sizeof wts), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_model_load(&model, NULL, 64), ATTN_ERR_NULL_ARGUMENT);
  CHECK(attn_model_load(&model, arena, 16) != ATTN_OK); /* zeros: no .attn file */
  CHECK_STATUS(attn_model_block_count(&model, &count), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_model_block_count(NULL, &count), ATTN_ERR_NULL_ARGUMENT);
}

/* ------------------------------------------------------ golden cases --- */

typedef struct golden {
  int32_t e, h, head_dim, kdim, vdim, bias, L, S, causal, causal_offset, key_length, has_additive;
  int32_t self_attention;   /* key and value are the query */
  int32_t kv_heads, window; /* version 2; version 1: kv_heads = h, window = 0 */
  float rope_base;          /* version 2; version 1: 0 */
  const float *wq, *wk, *wv, *wo, *bq, *bk, *bv, *bo, *query, *key, *value, *additive;
  double *y, *p; /* [L, E], [H, L, S] */
  unsigned char* file;
} golden;

static int32_t rd_i32(const unsigned char* p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  int32_t v;
  memcpy(&v, &u, 4);
  return v;
}

/* Read a golden file (version 1 or 2); 0 on success. The arrays point into
 * g->file, 16-byte aligned + 64 or 80 (the float arrays come first, so they
 * stay 4-aligned). */
static int read_golden(const char* path, golden* g, void** raw) {
  FILE* f = fopen(path, "rb");
  long size;
  size_t d, dkv, nf, nd, off, header;
  int32_t version;
  unsigned char* b;
  if (f == NULL) return 1;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  b = (unsigned char*)alloc_aligned((size_t)size + 16, raw);
  if (b == NULL || size < 68 || fread(b, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    return 1;
  }
  fclose(f);
  version = rd_i32(b + 8);
  if (memcmp(b, "ATTNGOLD", 8) != 0 || (version != 1 && version != 2)) return 1;
  header = version == 1 ? 64 : 80;
  {
    /* The header's int32 fields in file order, from byte 12. */
    int32_t* const fields[13] = {
        &g->e, &g->h,      &g->head_dim,      &g->kdim,       &g->vdim,         &g->bias,          &g->L,
        &g->S, &g->causal, &g->causal_offset, &g->key_length, &g->has_additive, &g->self_attention};
    int i;
    for (i = 0; i < 13; ++i) *fields[i] = rd_i32(b + 12 + 4 * i);
  }
  g->kv_heads = g->h;
  g->rope_base = 0.0f;
  g->window = 0;
  if (version == 2) {
    const int32_t rope_bits = rd_i32(b + 68);
    g->kv_heads = rd_i32(b + 64);
    memcpy(&g->rope_base, &rope_bits, 4);
    g->window = rd_i32(b + 72);
  }
  if (g->h < 1 || g->kv_heads < 1 || g->head_dim < 1) return 1;
  d = (size_t)g->h * (size_t)g->head_dim;
  dkv = (size_t)g->kv_heads * (size_t)g->head_dim;
  nf = d * (size_t)g->e + dkv * (size_t)g->kdim + dkv * (size_t)g->vdim + (size_t)g->e * d +
       (g->bias ? 3 * d + (size_t)g->e : 0) + (size_t)g->L * (size_t)g->e + (size_t)g->S * (size_t)g->kdim +
       (size_t)g->S * (size_t)g->vdim + (g->has_additive ? (size_t)g->L * (size_t)g->S : 0);
  nd = (size_t)g->L * (size_t)g->e + (size_t)g->h * (size_t)g->L * (size_t)g->S;
  if ((size_t)size != header + 4 * nf + 8 * nd + 4 || memcmp(b + size - 4, "END.", 4) != 0) return 1;
  g->file = b;
  off = header;
#define TAKE_F32(field, n)                         \
  g->field = (const float*)(const void*)(b + off); \
  off += 4 * (n)
  TAKE_F32(wq, d * (size_t)g->e);
  TAKE_F32(wk, dkv * (size_t)g->kdim);
  TAKE_F32(wv, dkv * (size_t)g->vdim);
  TAKE_F32(wo, (size_t)g->e * d);
  g->bq = g->bk = g->bv = g->bo = NULL;
  if (g->bias) {
    TAKE_F32(bq, d);
    TAKE_F32(bk, dkv);
    TAKE_F32(bv, dkv);
    TAKE_F32(bo, (size_t)g->e);
  }
  TAKE_F32(query, (size_t)g->L * (size_t)g->e);
  TAKE_F32(key, (size_t)g->S * (size_t)g->kdim);
  TAKE_F32(value, (size_t)g->S * (size_t)g->vdim);
  g->additive = NULL;
  if (g->has_additive) {
    TAKE_F32(additive, (size_t)g->L * (size_t)g->S);
  }
#undef TAKE_F32
  /* The doubles may be misaligned: copy them out. */
  g->y = (double*)malloc(8 * nd);
  if (g->y == NULL) return 1;
  memcpy(g->y, b + off, 8 * nd);
  g->p = g->y + (size_t)g->L * (size_t)g->e;
  return 0;
}

/* max|got - want| <= 1e-5 max|want| + 1e-6 */
static int close_enough(const float* got, const double* want, size_t n) {
  double max_want = 0.0, max_err = 0.0;
  size_t i;
  for (i = 0; i < n; ++i) {
    const double err = fabs((double)got[i] - want[i]);
    if (fabs(want[i]) > max_want) max_want = fabs(want[i]);
    if (!(err <= max_err)) max_err = err; /* NaN propagates into max_err */
  }
  return max_err <= 1e-5 * max_want + 1e-6;
}

/* ------------------------------------------ a .attn blob, written here --- */

static uint32_t crc32_ieee(const unsigned char* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  size_t i;
  int k;
  for (i = 0; i < n; ++i) {
    c ^= p[i];
    for (k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

static void put16(unsigned char* p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char* p, uint32_t v) {
  put16(p, v & 0xFFFFu);
  put16(p + 2, v >> 16);
}
static void put64(unsigned char* p, uint64_t v) {
  put32(p, (uint32_t)(v & 0xFFFFFFFFu));
  put32(p + 4, (uint32_t)(v >> 32));
}

typedef struct blob_tensor {
  const char* name;
  uint32_t role, rank, dims[2], block;
  const float* data;
} blob_tensor;

/* Format v1 (include/attn/FORMAT.md): header, one block, the block's tensors
 * and a user tensor "query_sample" (the golden query), data aligned to 16.
 * Returns the blob's size; writes only when it fits in `cap` bytes at `out`. */
static size_t write_blob(const golden* g, unsigned char* out, size_t cap) {
  const uint32_t d = (uint32_t)(g->h * g->head_dim), e = (uint32_t)g->e;
  blob_tensor t[9];
  uint32_t n = 0, i;
  size_t data_offset, pos, size;
  memset(t, 0, sizeof t);
#define ADD(nm, r, rk, d0, d1, blk, ptr) \
  t[n].name = nm;                        \
  t[n].role = r;                         \
  t[n].rank = rk;                        \
  t[n].dims[0] = d0;                     \
  t[n].dims[1] = d1;                     \
  t[n].block = blk;                      \
  t[n].data = ptr;                       \
  ++n
  ADD("block0.wq", 1, 2, d, e, 0, g->wq);
  ADD("block0.wk", 2, 2, d, (uint32_t)g->kdim, 0, g->wk);
  ADD("block0.wv", 3, 2, d, (uint32_t)g->vdim, 0, g->wv);
  ADD("block0.wo", 4, 2, e, d, 0, g->wo);
  if (g->bias) {
    ADD("block0.bq", 5, 1, d, 0, 0, g->bq);
    ADD("block0.bk", 6, 1, d, 0, 0, g->bk);
    ADD("block0.bv", 7, 1, d, 0, 0, g->bv);
    ADD("block0.bo", 8, 1, e, 0, 0, g->bo);
  }
  ADD("query_sample", 15, 2, (uint32_t)g->L, e, 0xFFFFFFFFu, g->query);
#undef ADD
  data_offset = 64 + 64 + 128 * (size_t)n; /* a multiple of 16 */
  size = data_offset;
  for (i = 0; i < n; ++i) {
    const size_t bytes = 4 * (size_t)t[i].dims[0] * (t[i].rank == 2 ? t[i].dims[1] : 1);
    size += (bytes + 15) / 16 * 16;
  }
  if (out == NULL || size > cap) return size;
  memset(out, 0, size);
  /* header */
  put32(out + 0, 0x4E545441u);
  put16(out + 4, 1);
  put16(out + 6, 64);
  put64(out + 16, size);
  put32(out + 24, 16);
  put32(out + 28, 1);
  put32(out + 32, n);
  put64(out + 40, 64);
  put64(out + 48, 128);
  put64(out + 56, data_offset);
  /* block record */
  put32(out + 64, e);
  put32(out + 68, (uint32_t)g->h);
  put32(out + 72, (uint32_t)g->head_dim);
  put32(out + 76, (uint32_t)g->kdim);
  put32(out + 80, (uint32_t)g->vdim);
  put16(out + 84, ATTN_DTYPE_F32);
  put16(out + 86, g->bias ? 1u : 0u);
  /* tensor descriptors and data */
  pos = 0;
  for (i = 0; i < n; ++i) {
    unsigned char* r = out + 128 + 128 * (size_t)i;
    const size_t bytes = 4 * (size_t)t[i].dims[0] * (t[i].rank == 2 ? t[i].dims[1] : 1);
    strcpy((char*)r, t[i].name);
    put16(r + 64, t[i].role);
    put16(r + 66, ATTN_DTYPE_F32);
    put16(r + 70, t[i].rank);
    put32(r + 72, t[i].block);
    put32(r + 80, t[i].dims[0]);
    put32(r + 84, t[i].rank == 2 ? t[i].dims[1] : 0);
    put64(r + 96, pos);
    put64(r + 104, bytes);
    memcpy(out + data_offset + pos, t[i].data, bytes); /* the host is little-endian, like the format */
    pos += (bytes + 15) / 16 * 16;
  }
  put32(out + 8, crc32_ieee(out + 12, size - 12));
  return size;
}

/* Causal self-attention, fed to attn_decode_f32 in chunks of up to 3 rows
 * over a KV cache (with the case's window, if any), gives the golden output. */
static void test_decode(const golden* g, const attn_config* cfg) {
  const int32_t chunk = 3;
  attn_plan plan, forward_plan;
  attn_kv_cache_f32 cache;
  attn_weights_f32 w;
  size_t cache_bytes = 0, arena_bytes = 0;
  void *raw_cache = NULL, *raw_arena = NULL;
  uint8_t *cache_buf, *arena;
  float* y = (float*)malloc(4 * (size_t)g->L * (size_t)g->e);
  int32_t row, length = -1, next = -1;

  memset(&cache, 0, sizeof cache);
  CHECK_STATUS(attn_plan_init_decode(&plan, cfg, ATTN_DTYPE_F32, chunk, g->L, 0), ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &arena_bytes), ATTN_OK);
  CHECK_STATUS(attn_plan_init(&forward_plan, cfg, ATTN_DTYPE_F32, g->L, g->L, 0), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_arena_bytes(&forward_plan, &cache_bytes), ATTN_ERR_PLAN_MISMATCH);
  CHECK_STATUS(attn_kv_cache_arena_bytes(&plan, &cache_bytes), ATTN_OK);
  cache_buf = (uint8_t*)alloc_aligned(cache_bytes, &raw_cache);
  arena = (uint8_t*)alloc_aligned(arena_bytes, &raw_arena);
  w.wq = g->wq;
  w.wk = g->wk;
  w.wv = g->wv;
  w.wo = g->wo;
  w.bq = g->bq;
  w.bk = g->bk;
  w.bv = g->bv;
  w.bo = g->bo;
  CHECK_STATUS(attn_decode_f32(&plan, &w, &cache, g->query, 1, y, arena, arena_bytes), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_kv_cache_init_f32(&cache, &plan, g->window, cache_buf, cache_bytes - 1),
               ATTN_ERR_ARENA_TOO_SMALL);
  CHECK_STATUS(attn_kv_cache_init_f32(&cache, &plan, g->window, cache_buf, cache_bytes), ATTN_OK);
  for (row = 0; row < g->L; row += chunk) {
    const int32_t n = g->L - row < chunk ? g->L - row : chunk;
    CHECK_STATUS(attn_decode_f32(&plan, &w, &cache, g->query + (size_t)row * (size_t)g->e, n,
                                 y + (size_t)row * (size_t)g->e, arena, arena_bytes),
                 ATTN_OK);
  }
  CHECK(close_enough(y, g->y, (size_t)g->L * (size_t)g->e));
  CHECK_STATUS(attn_kv_cache_length_f32(&cache, &length, &next), ATTN_OK);
  CHECK(next == g->L && length == g->L); /* capacity L: no row had to be dropped */
  if (g->window == 0) {                  /* full: refused, nothing changes */
    CHECK_STATUS(attn_decode_f32(&plan, &w, &cache, g->query, 1, y, arena, arena_bytes), ATTN_ERR_CACHE_FULL);
  }
  CHECK_STATUS(attn_kv_cache_reset_f32(&cache), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_length_f32(&cache, &length, &next), ATTN_OK);
  CHECK(length == 0 && next == 0);
  ++g_decoded;
  free(raw_cache);
  free(raw_arena);
  free(y);
}

static void test_golden(const char* path) {
  golden g;
  void *raw_file = NULL, *raw_arena = NULL, *raw_blob = NULL;
  attn_config cfg;
  attn_plan plan;
  attn_mask mask;
  attn_weights_f32 w;
  attn_io_f32 io;
  attn_model model;
  attn_block_info info;
  attn_tensor_info tensor, missing;
  size_t need = 0, blob_size, blob_cap, n_y, n_p;
  uint32_t count = 0;
  uint8_t* arena;
  unsigned char* blob;
  float *y, *p, *y2, *p2;

  memset(&g, 0, sizeof g);
  if (read_golden(path, &g, &raw_file) != 0) {
    ++g_failures;
    fprintf(stderr, "%s: cannot read as a golden file\n", path);
    free(raw_file);
    free(g.y);
    return;
  }
  n_y = (size_t)g.L * (size_t)g.e;
  n_p = (size_t)g.h * (size_t)g.L * (size_t)g.S;
  y = (float*)malloc(4 * (2 * n_y + 2 * n_p));
  p = y + n_y;
  y2 = p + n_p;
  p2 = y2 + n_y;

  memset(&cfg, 0, sizeof cfg);
  cfg.embed_dim = g.e;
  cfg.num_heads = g.h;
  cfg.head_dim = g.head_dim;
  cfg.kdim = g.kdim;
  cfg.vdim = g.vdim;
  cfg.bias = g.bias;
  cfg.num_kv_heads = g.kv_heads;
  cfg.rope_base = g.rope_base;
  CHECK_STATUS(attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, g.L, g.S, 0), ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &need), ATTN_OK);
  /* The compile-time formula agrees with the planner on every case. */
  CHECK(need == ATTN_ARENA_BYTES_F32(g.h * g.head_dim, g.kv_heads * g.head_dim, g.L, g.S));
  arena = (uint8_t*)alloc_aligned(need, &raw_arena);

  memset(&mask, 0, sizeof mask);
  mask.causal = g.causal;
  mask.causal_offset = g.causal_offset;
  mask.key_padding = g.key_length >= 0;
  mask.key_length = g.key_length >= 0 ? g.key_length : 0;
  mask.additive = g.additive;
  mask.window = g.window;

  w.wq = g.wq;
  w.wk = g.wk;
  w.wv = g.wv;
  w.wo = g.wo;
  w.bq = g.bq;
  w.bk = g.bk;
  w.bv = g.bv;
  w.bo = g.bo;
  io = io_f32(g.query, g.key, g.value, y, p);
  CHECK_STATUS(attn_forward_f32(&plan, &w, &mask, &io, arena, need), ATTN_OK);
  CHECK(close_enough(y, g.y, n_y));
  CHECK(close_enough(p, g.p, n_p));
  CHECK_STATUS(attn_forward_f32(&plan, &w, &mask, &io, arena, need - 1), ATTN_ERR_ARENA_TOO_SMALL);
  if (g.self_attention && g.causal && g.causal_offset == 0 && g.key_length < 0 && !g.has_additive) {
    test_decode(&g, &cfg);
  }

  /* The same case through a .attn blob: format v1 has no grouped-query or
   * rotary blocks yet (those fields are reserved there). */
  if (g.kv_heads != g.h || g.rope_base != 0.0f) {
    ++g_blob_skipped;
    goto done;
  }
  blob_cap = write_blob(&g, NULL, 0);
  blob = (unsigned char*)alloc_aligned(blob_cap, &raw_blob);
  blob_size = write_blob(&g, blob, blob_cap);
  CHECK(blob_size == blob_cap);
  CHECK_STATUS(attn_model_load(&model, blob, blob_size), ATTN_OK);
  CHECK_STATUS(attn_model_block_count(&model, &count), ATTN_OK);
  CHECK(count == 1);
  CHECK_STATUS(attn_model_block(&model, 0, &info), ATTN_OK);
  CHECK(info.dtype == ATTN_DTYPE_F32 && info.config.embed_dim == g.e && info.config.num_heads == g.h &&
        info.config.head_dim == g.head_dim && info.config.kdim == g.kdim && info.config.vdim == g.vdim &&
        info.config.bias == g.bias && info.config.num_kv_heads == g.h);
  CHECK_STATUS(attn_model_block(&model, 1, &info), ATTN_ERR_BLOCK_INDEX);
  CHECK_STATUS(attn_model_block(&model, 0, &info), ATTN_OK);
  CHECK_STATUS(attn_model_block_weights_f32(&model, 0, &w), ATTN_OK);
  CHECK((const unsigned char*)w.wq > blob && (const unsigned char*)w.wq < blob + blob_size); /* in place */
  CHECK((w.bq != NULL) == (g.bias != 0));
  CHECK_STATUS(attn_model_find_tensor(&model, "query_sample", &tensor), ATTN_OK);
  CHECK(tensor.rank == 2 && tensor.dims[0] == g.L && tensor.dims[1] == g.e && tensor.role == 15 &&
        tensor.block == 0xFFFFFFFFu && tensor.byte_size == 4 * n_y &&
        strcmp(tensor.name, "query_sample") == 0);
  CHECK_STATUS(attn_model_find_tensor(&model, "nope", &missing), ATTN_ERR_NOT_FOUND);
  CHECK(missing.data == NULL);
  CHECK_STATUS(attn_plan_init(&plan, &info.config, info.dtype, g.L, g.S, 0), ATTN_OK);
  io.query = (const float*)tensor.data;
  io.output = y2;
  io.attn_weights = p2;
  CHECK_STATUS(attn_forward_f32(&plan, &w, &mask, &io, arena, need), ATTN_OK);
  /* Same numbers, same kernels: bit for bit. */
  CHECK(memcmp(y, y2, 4 * n_y) == 0 && memcmp(p, p2, 4 * n_p) == 0);

  /* One flipped data byte: the CRC catches it and the handle is unusable. */
  blob[blob_size - 1] ^= 0x40;
  CHECK_STATUS(attn_model_load(&model, blob, blob_size), ATTN_ERR_CRC_MISMATCH);
  CHECK_STATUS(attn_model_block(&model, 0, &info), ATTN_ERR_BAD_HANDLE);
  blob[blob_size - 1] ^= 0x40;
  CHECK_STATUS(attn_model_load(&model, blob, blob_size - 16), ATTN_ERR_TRUNCATED);
  CHECK_STATUS(attn_model_load(&model, blob + 4, blob_size), ATTN_ERR_BLOB_MISALIGNED);

done:
  free(raw_blob);
  free(raw_arena);
  free(y);
  free(g.y);
  free(raw_file);
}

/* ------------------------------------------- s8 / s16 decoding --- */

/* A hand-made integer block: E = 8, H = 2 query heads sharing one K/V head
 * (head_dim 4, Dkv 4), biases, rotary embedding. The constants are valid,
 * not calibrated: decoding is compared byte for byte with one causal
 * forward through the same API, not with floats. */
enum { QE = 8, QH = 2, QKV = 1, QHD = 4, QDKV = 4, QL = 7, QCHUNK = 3 };

static int8_t g_qw[4][QE * QE]; /* wq [D, E], wk [Dkv, E], wv [Dkv, E], wo [E, D] */
static int32_t g_qb32[4][QE];   /* s8 biases */
static int64_t g_qb64[4][QE];   /* s16 biases */
static int32_t g_qmul[QE];      /* every projection: 0.5 ... */
static int32_t g_qshift8[QE];   /* ... x 2^-5 (s8) */
static int32_t g_qshift16[QE];  /* ... x 2^-7 (s16) */
static int16_t g_qcos[QL * QHD / 2], g_qsin[QL * QHD / 2]; /* [QL, head_dim / 2] Q1.14 */

static void make_integer_block(attn_config* cfg) {
  int i, j;
  for (i = 0; i < 4; ++i) {
    for (j = 0; j < QE * QE; ++j) g_qw[i][j] = (int8_t)((j * 29 + i * 11 + 7) % 61 - 30);
    for (j = 0; j < QE; ++j) {
      g_qb32[i][j] = (j * 13 + i * 5) % 200 - 100;
      g_qb64[i][j] = (int64_t)g_qb32[i][j] * 300;
    }
  }
  for (j = 0; j < QE; ++j) {
    g_qmul[j] = 1 << 30;
    g_qshift8[j] = -5;
    g_qshift16[j] = -7;
  }
  for (i = 0; i < QL; ++i) {
    for (j = 0; j < QHD / 2; ++j) {
      const double angle = i * pow(10000.0, -2.0 * j / QHD);
      g_qcos[i * QHD / 2 + j] = (int16_t)floor(16384.0 * cos(angle) + 0.5);
      g_qsin[i * QHD / 2 + j] = (int16_t)floor(16384.0 * sin(angle) + 0.5);
    }
  }
  memset(cfg, 0, sizeof *cfg);
  cfg->embed_dim = QE;
  cfg->num_heads = QH;
  cfg->num_kv_heads = QKV;
  cfg->bias = 1;
  cfg->rope_base = 10000.0f;
}

/* exp(-u * step): exp_multiplier = log2(e) 2^31, so t = u 2^(exp_shift - 1) log2(e). */
static attn_softmax_fixed make_softmax(int32_t exp_shift, int32_t diff_limit, int32_t score_shift) {
  attn_softmax_fixed sm;
  sm.exp_multiplier = 0xB8AA3B29u;
  sm.exp_shift = exp_shift;
  sm.diff_limit = diff_limit;
  sm.score_shift = score_shift;
  return sm;
}

static int all_same(const void* p, size_t n, size_t elem) {
  const unsigned char* b = (const unsigned char*)p;
  size_t i;
  for (i = elem; i < n * elem; ++i) {
    if (b[i] != b[i % elem]) return 0;
  }
  return 1;
}

/* W (attn_weights_s8 or _s16) zeroed, then the four projections from g_qw
 * with biases BIAS (g_qb32 or g_qb64) and shifts SHIFT (g_qshift8 or
 * g_qshift16), and the rotary table. */
#define INTEGER_PROJ(W, F, IDX, BIAS, SHIFT) \
  (W).F.weight = g_qw[IDX];                  \
  (W).F.bias = BIAS[IDX];                    \
  (W).F.multiplier = g_qmul;                 \
  (W).F.shift = SHIFT
#define SET_INTEGER_WEIGHTS(W, BIAS, SHIFT) \
  do {                                      \
    memset(&(W), 0, sizeof(W));             \
    INTEGER_PROJ(W, q, 0, BIAS, SHIFT);     \
    INTEGER_PROJ(W, k, 1, BIAS, SHIFT);     \
    INTEGER_PROJ(W, v, 2, BIAS, SHIFT);     \
    INTEGER_PROJ(W, o, 3, BIAS, SHIFT);     \
    (W).rope.cos = g_qcos;                  \
    (W).rope.sin = g_qsin;                  \
    (W).rope.positions = QL;                \
  } while (0)

/* All QL rows of x decoded through dtype DT in chunks of QCHUNK into y_dec,
 * each call expected to return ATTN_OK. Uses the test's variables. */
#define DECODE_ALL_ROWS(DT)                                                                            \
  for (row = 0; row < QL; row += QCHUNK) {                                                             \
    const int32_t n = QL - row < QCHUNK ? QL - row : QCHUNK;                                           \
    CHECK_STATUS(attn_decode_##DT(&plan, &w, &cache, x + row * QE, n, y_dec + row * QE, arena, bytes), \
                 ATTN_OK);                                                                             \
  }

/* One causal forward over the whole of x (self-attention, window WINDOW)
 * through dtype DT into y_fwd, then compared byte for byte with y_dec (same
 * kernels, integer sums), which must not be constant (the comparison can
 * tell outputs apart). Uses the test's variables. */
#define FORWARD_EQUALS_DECODE(DT, DTYPE, WINDOW, ELEM)                                        \
  do {                                                                                        \
    CHECK_STATUS(attn_plan_init(&fwd_plan, &cfg, DTYPE, QL, QL, 0), ATTN_OK);                 \
    memset(&mask, 0, sizeof mask);                                                            \
    mask.causal = 1;                                                                          \
    mask.window = (WINDOW);                                                                   \
    memset(&io, 0, sizeof io); /* every field, the optional ones included */                  \
    io.query = x;                                                                             \
    io.key = x;                                                                               \
    io.value = x;                                                                             \
    io.output = y_fwd;                                                                        \
    io.query_position = 0;                                                                    \
    CHECK_STATUS(attn_forward_##DT(&fwd_plan, &w, &mask, &io, arena, sizeof arena), ATTN_OK); \
    CHECK(memcmp(y_dec, y_fwd, sizeof y_dec) == 0);                                           \
    CHECK(!all_same(y_dec, QL * QE, ELEM));                                                   \
  } while (0)

#if ATTN_WITH_S8
static void test_decode_s8(void) {
  static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_S8(QE, QDKV, QL, QL)];
  static ATTN_ALIGNED_ARENA uint8_t cache_buf[2 * ATTN_ALIGN_UP_(QL * QDKV)];
  attn_config cfg;
  attn_weights_s8 w;
  attn_plan plan, fwd_plan, f32_plan;
  attn_kv_cache_s8 cache, zero;
  attn_mask mask;
  attn_io_s8 io;
  int8_t x[QL * QE], y_dec[QL * QE], y_fwd[QL * QE];
  size_t cache_bytes = 0, bytes = 0;
  int32_t row, length = -1, next = -1, window;
  int i;

  make_integer_block(&cfg);
  SET_INTEGER_WEIGHTS(w, g_qb32, g_qshift8);
  w.q_zero_point = 3;
  w.k_zero_point = -2;
  w.v_zero_point = 1;
  w.context_zero_point = -1;
  w.output_zero_point = 2;
  w.softmax = make_softmax(7, 11000, 0); /* score step 2^-10 */
  w.context_multiplier = 1 << 30;        /* Q0.15 probabilities: 0.5 x 2^-14 = 2^-15 */
  w.context_shift = -14;
  for (i = 0; i < QL * QE; ++i) x[i] = (int8_t)((i * 37) % 255 - 127);

  /* window 0 (capacity QL) and window 3 (capacity 4, the oldest rows dropped) */
  for (window = 0; window <= 3; window += 3) {
    const int32_t capacity = window == 0 ? QL : window + 1;
    memset(y_dec, 0, sizeof y_dec);
    memset(y_fwd, 1, sizeof y_fwd);
    CHECK_STATUS(attn_plan_init_decode(&plan, &cfg, ATTN_DTYPE_S8, QCHUNK, capacity, 0), ATTN_OK);
    CHECK_STATUS(attn_plan_arena_bytes(&plan, &bytes), ATTN_OK);
    CHECK_STATUS(attn_kv_cache_arena_bytes(&plan, &cache_bytes), ATTN_OK);
    CHECK(bytes <= sizeof arena && cache_bytes <= sizeof cache_buf);
    CHECK(cache_bytes == 2 * ATTN_ALIGN_UP_((size_t)capacity * QDKV));
    CHECK_STATUS(attn_kv_cache_init_s8(&cache, &plan, window, cache_buf, cache_bytes), ATTN_OK);
    DECODE_ALL_ROWS(s8)
    CHECK_STATUS(attn_kv_cache_length_s8(&cache, &length, &next), ATTN_OK);
    CHECK(next == QL && length == (window == 0 ? QL : capacity));

    FORWARD_EQUALS_DECODE(s8, ATTN_DTYPE_S8, window, 1);
  }

  /* Full (window 0, capacity QL): refused, nothing changed; then reset. */
  CHECK_STATUS(attn_plan_init_decode(&plan, &cfg, ATTN_DTYPE_S8, QCHUNK, QL, 0), ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &bytes), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_arena_bytes(&plan, &cache_bytes), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_init_s8(&cache, &plan, 0, cache_buf, cache_bytes), ATTN_OK);
  DECODE_ALL_ROWS(s8)
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, x, 1, y_dec, arena, bytes), ATTN_ERR_CACHE_FULL);
  CHECK_STATUS(attn_kv_cache_length_s8(&cache, &length, &next), ATTN_OK);
  CHECK(length == QL && next == QL);
  CHECK_STATUS(attn_kv_cache_reset_s8(&cache), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_length_s8(&cache, &length, &next), ATTN_OK);
  CHECK(length == 0 && next == 0);

  /* Misuse: a float plan, null arguments, too many rows, a zeroed cache, bad constants. */
  CHECK_STATUS(attn_plan_init_decode(&f32_plan, &cfg, ATTN_DTYPE_F32, QCHUNK, QL, 0), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_init_s8(&cache, &f32_plan, 0, cache_buf, cache_bytes), ATTN_ERR_BAD_DTYPE);
  CHECK_STATUS(attn_kv_cache_length_s8(&cache, &length, &next), ATTN_ERR_BAD_HANDLE);
  CHECK_STATUS(attn_kv_cache_init_s8(&cache, &fwd_plan, 0, cache_buf, cache_bytes), ATTN_ERR_PLAN_MISMATCH);
  CHECK_STATUS(attn_kv_cache_init_s8(NULL, &plan, 0, cache_buf, cache_bytes), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_kv_cache_init_s8(&cache, &plan, 0, cache_buf, cache_bytes - 1), ATTN_ERR_ARENA_TOO_SMALL);
  CHECK_STATUS(attn_kv_cache_init_s8(&cache, &plan, 0, cache_buf, cache_bytes), ATTN_OK);
  CHECK_STATUS(attn_decode_s8(&f32_plan, &w, &cache, x, 1, y_dec, arena, bytes), ATTN_ERR_BAD_DTYPE);
  CHECK_STATUS(attn_decode_s8(&plan, NULL, &cache, x, 1, y_dec, arena, bytes), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_decode_s8(&plan, &w, NULL, x, 1, y_dec, arena, bytes), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, NULL, 1, y_dec, arena, bytes), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, x, 1, NULL, arena, bytes), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, x, QCHUNK + 1, y_dec, arena, bytes),
               ATTN_ERR_BAD_QUERY_LENGTH);
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, x, 1, y_dec, arena, bytes - 1), ATTN_ERR_ARENA_TOO_SMALL);
  memset(&zero, 0, sizeof zero);
  CHECK_STATUS(attn_decode_s8(&plan, &w, &zero, x, 1, y_dec, arena, bytes), ATTN_ERR_BAD_HANDLE);
  w.context_shift = 31;
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, x, 1, y_dec, arena, bytes), ATTN_ERR_BAD_QUANT_PARAMS);
  w.context_shift = -14;
  w.rope.positions = 1; /* row 1 sits past the table */
  CHECK_STATUS(attn_decode_s8(&plan, &w, &cache, x, 2, y_dec, arena, bytes),
               ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE);
  CHECK_STATUS(attn_kv_cache_length_s8(&cache, &length, &next), ATTN_OK);
  CHECK(length == 0 && next == 0); /* every refusal left the cache empty */
}
#endif /* ATTN_WITH_S8 */

#if ATTN_WITH_S16
static void test_decode_s16(void) {
  static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_S16(QE, QDKV, QL, QL)];
  static ATTN_ALIGNED_ARENA uint8_t cache_buf[2 * ATTN_ALIGN_UP_(QL * QDKV * 2)];
  attn_config cfg;
  attn_weights_s16 w;
  attn_plan plan, fwd_plan, s8_plan;
  attn_kv_cache_s16 cache;
  attn_mask mask;
  attn_io_s16 io;
  int16_t x[QL * QE], y_dec[QL * QE], y_fwd[QL * QE];
  size_t cache_bytes = 0, bytes = 0;
  int32_t row, length = -1, next = -1;
  int i;

  make_integer_block(&cfg);
  SET_INTEGER_WEIGHTS(w, g_qb64, g_qshift16);
  w.softmax = make_softmax(0, 1400000, 3); /* head_dim 4 < 2^3; score step 2^-17 */
  w.context_multiplier = 1 << 30;
  w.context_shift = -14;
  for (i = 0; i < QL * QE; ++i) x[i] = (int16_t)((i * 7919) % 65535 - 32767);
  memset(y_fwd, 1, sizeof y_fwd);

  CHECK_STATUS(attn_plan_init_decode(&plan, &cfg, ATTN_DTYPE_S16, QCHUNK, QL, 0), ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &bytes), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_arena_bytes(&plan, &cache_bytes), ATTN_OK);
  CHECK(bytes <= sizeof arena && cache_bytes == sizeof cache_buf);
  CHECK_STATUS(attn_plan_init_decode(&s8_plan, &cfg, ATTN_DTYPE_S8, QCHUNK, QL, 0), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_init_s16(&cache, &s8_plan, 0, cache_buf, cache_bytes), ATTN_ERR_BAD_DTYPE);
  CHECK_STATUS(attn_kv_cache_init_s16(&cache, &plan, 0, cache_buf, cache_bytes), ATTN_OK);
  CHECK_STATUS(attn_decode_s16(&s8_plan, &w, &cache, x, 1, y_dec, arena, bytes), ATTN_ERR_BAD_DTYPE);
  DECODE_ALL_ROWS(s16)
  CHECK_STATUS(attn_decode_s16(&plan, &w, &cache, x, 1, y_dec, arena, bytes), ATTN_ERR_CACHE_FULL);
  CHECK_STATUS(attn_decode_s16(&plan, &w, &cache, NULL, 1, y_dec, arena, bytes), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_kv_cache_length_s16(&cache, &length, &next), ATTN_OK);
  CHECK(length == QL && next == QL);

  FORWARD_EQUALS_DECODE(s16, ATTN_DTYPE_S16, 0, 2);

  CHECK_STATUS(attn_kv_cache_reset_s16(&cache), ATTN_OK);
  CHECK_STATUS(attn_kv_cache_reset_s16(NULL), ATTN_ERR_NULL_ARGUMENT);
  CHECK_STATUS(attn_kv_cache_length_s16(&cache, &length, &next), ATTN_OK);
  CHECK(length == 0 && next == 0);
  CHECK_STATUS(attn_kv_cache_length_s16(&cache, NULL, &next), ATTN_ERR_NULL_ARGUMENT);
}
#endif /* ATTN_WITH_S16 */

/* ------------------------------------------- quantized .attn files --- */
/* An s8 or s16 .attn file run from C the way firmware would: every weight
 * and constant from attn_model_block_weights_s8/_s16, the I/O quantization
 * from attn_model_block_io, float inputs quantized with attn_quantize_* and
 * the output dequantized with attn_dequantize_* (no tensor looked up by
 * name). The float32 output must equal, byte for byte, what the C++ path
 * (`attn run` on the same file and inputs) wrote to WANT.npy. */

/* The whole file, 16-byte aligned (*raw to free). NULL on error. */
static unsigned char* read_file_aligned(const char* path, size_t* size, void** raw) {
  FILE* f = fopen(path, "rb");
  long n;
  unsigned char* p = NULL;
  *raw = NULL;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    p = (unsigned char*)alloc_aligned((size_t)n, raw);
    if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) p = NULL;
    *size = (size_t)n;
  }
  fclose(f);
  return p;
}

/* A little-endian float32 .npy ('<f4', C order): its values and element
 * count; dims[0..rank) its shape. NULL on error (*raw to free). */
static const float* read_npy_f32(const char* path, size_t* count, int* rank, long dims[3], void** raw) {
  size_t size = 0, header, n = 1;
  char text[512];
  const char* shape;
  unsigned char* p = read_file_aligned(path, &size, raw);
  if (p == NULL || size < 10 || memcmp(p, "\x93NUMPY", 6) != 0) return NULL;
  header = p[6] == 1 ? 10 + (size_t)(p[8] | p[9] << 8) : 12 + (size_t)(p[8] | p[9] << 8 | p[10] << 16);
  if (header > size || header - 10 >= sizeof text) return NULL;
  memcpy(text, p + 10, header - 10); /* the dict, NUL-terminated */
  text[header - 10] = '\0';
  if (strstr(text, "'<f4'") == NULL || strstr(text, "'fortran_order': False") == NULL) return NULL;
  shape = strstr(text, "'shape': (");
  if (shape == NULL) return NULL;
  shape += 10;
  *rank = 0;
  while (*rank < 3 && *shape >= '0' && *shape <= '9') {
    dims[*rank] = strtol(shape, (char**)&shape, 10);
    n *= (size_t)dims[(*rank)++];
    while (*shape == ',' || *shape == ' ') ++shape;
  }
  if (*rank == 0 || (size - header) != n * 4) return NULL;
  *count = n;
  {
    static const uint32_t one = 1; /* '<f4' read in place: a little-endian host */
    if (*(const unsigned char*)&one != 1) return NULL;
  }
  return (const float*)(p + header);
}

/* Batch item b's rows through dtype DT (element type T), as firmware would
 * run them: the block's weights, the inputs quantized (kv and v if given),
 * the forward, the output dequantized into y. Uses test_quantized_file's
 * variables. */
#define RUN_QUANTIZED_ROWS(DT, T)                                                                            \
  do {                                                                                                       \
    attn_weights_##DT w;                                                                                     \
    attn_io_##DT io;                                                                                         \
    memset(&io, 0, sizeof io);                                                                               \
    CHECK_STATUS(attn_model_block_weights_##DT(&model, 0, &w), ATTN_OK);                                     \
    CHECK_STATUS(attn_quantize_##DT(in[0] + off, n_x, bio.query_scale, bio.query_zero_point, (T*)qx),        \
                 ATTN_OK);                                                                                   \
    io.query = io.key = io.value = (const T*)qx;                                                             \
    if (in[1] != NULL) {                                                                                     \
      CHECK_STATUS(attn_quantize_##DT(in[1], count[1], bio.key_scale, bio.key_zero_point, (T*)qk), ATTN_OK); \
      io.key = io.value = (const T*)qk;                                                                      \
    }                                                                                                        \
    if (in[2] != NULL) {                                                                                     \
      CHECK_STATUS(attn_quantize_##DT(in[2], count[2], bio.value_scale, bio.value_zero_point, (T*)qv),       \
                   ATTN_OK);                                                                                 \
      io.value = (const T*)qv;                                                                               \
    }                                                                                                        \
    io.output = (T*)qy;                                                                                      \
    CHECK_STATUS(attn_forward_##DT(&plan, &w, &mask, &io, arena, need), ATTN_OK);                            \
    CHECK_STATUS(attn_dequantize_##DT((const T*)qy, n_x, bio.output_scale, bio.output_zero_point, y + off),  \
                 ATTN_OK);                                                                                   \
  } while (0)

/* Arguments: FILE.attn X.npy KV.npy|- V.npy|- CAUSAL WANT.npy */
static void test_quantized_file(char** arg) {
  void *raw_blob = NULL, *raw[4] = {NULL, NULL, NULL, NULL}, *raw_arena = NULL;
  const float* in[4] = {NULL, NULL, NULL, NULL}; /* x, kv, v, want */
  size_t count[4] = {0, 0, 0, 0}, blob_size = 0, need = 0, i, rows_x, rows_kv, bytes;
  int rank[4] = {0, 0, 0, 0}, k, b, batch, causal = atoi(arg[4]);
  long dims[4][3];
  attn_model model;
  attn_block_info info;
  attn_block_io bio;
  attn_plan plan;
  attn_mask mask;
  unsigned char* blob = read_file_aligned(arg[0], &blob_size, &raw_blob);
  uint8_t* arena;
  float* y;
  void *qx, *qk, *qv, *qy;

  for (k = 0; k < 4; ++k) {
    const char* path = arg[k == 3 ? 5 : k + 1];
    if (strcmp(path, "-") == 0) continue;
    in[k] = read_npy_f32(path, &count[k], &rank[k], dims[k], &raw[k]);
    if (in[k] == NULL) {
      ++g_failures;
      fprintf(stderr, "%s: cannot read as a float32 .npy\n", path);
    }
  }
  CHECK(blob != NULL);
  if (blob == NULL || in[0] == NULL || in[3] == NULL) goto done;
  CHECK_STATUS(attn_model_load(&model, blob, blob_size), ATTN_OK);
  CHECK_STATUS(attn_model_block(&model, 0, &info), ATTN_OK);
  CHECK_STATUS(attn_model_block_io(&model, 0, &bio), ATTN_OK);
  CHECK(info.dtype == ATTN_DTYPE_S8 || info.dtype == ATTN_DTYPE_S16);
  CHECK(count[3] == count[0] / (size_t)info.config.embed_dim * (size_t)info.config.embed_dim);
  batch = rank[0] == 3 ? (int)dims[0][0] : 1;
  rows_x = (size_t)dims[0][rank[0] - 1 - 1];
  rows_kv = in[1] != NULL ? (size_t)dims[1][rank[1] - 2] : rows_x;
  CHECK_STATUS(attn_plan_init(&plan, &info.config, info.dtype, (int32_t)rows_x, (int32_t)rows_kv, 0),
               ATTN_OK);
  CHECK_STATUS(attn_plan_arena_bytes(&plan, &need), ATTN_OK);
  memset(&mask, 0, sizeof mask);
  mask.causal = causal;
  arena = (uint8_t*)alloc_aligned(need, &raw_arena);
  bytes = info.dtype == ATTN_DTYPE_S8 ? 1 : 2;
  y = (float*)malloc(count[0] * sizeof(float));
  qx = malloc(count[0] * bytes);
  qk = malloc((in[1] ? count[1] : 1) * bytes);
  qv = malloc((in[2] ? count[2] : 1) * bytes);
  qy = malloc(count[0] * bytes);
  if (arena == NULL || y == NULL || qx == NULL || qk == NULL || qv == NULL || qy == NULL) {
    ++g_failures;
    goto cleanup;
  }
  for (b = 0; b < batch; ++b) {
    const size_t n_x = count[0] / (size_t)batch, off = (size_t)b * n_x;
    if (info.dtype == ATTN_DTYPE_S8) {
      RUN_QUANTIZED_ROWS(s8, int8_t);
    } else {
      RUN_QUANTIZED_ROWS(s16, int16_t);
    }
  }
#undef RUN_QUANTIZED_ROWS
  CHECK(count[3] == count[0] && memcmp(y, in[3], count[0] * sizeof(float)) == 0);
  for (i = 1; i < count[0] && y[i] == y[0]; ++i) {
  }
  CHECK(i < count[0]); /* not one value: the comparison can tell outputs apart */
  ++g_quant_files;
cleanup:
  free(y);
  free(qx);
  free(qk);
  free(qv);
  free(qy);
  free(raw_arena);
done:
  for (k = 0; k < 4; ++k) free(raw[k]);
  free(raw_blob);
}

int main(int argc, char** argv) {
  int i, golden = 0;
  test_hand_case();
  test_errors();
#if ATTN_WITH_S8
  test_decode_s8();
#endif
#if ATTN_WITH_S16
  test_decode_s16();
#endif
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quant") == 0 && i + 6 < argc) {
      test_quantized_file(argv + i + 1);
      i += 6;
    } else {
      test_golden(argv[i]);
      ++golden;
    }
  }
  printf(
      "c_api_c99: %d golden cases (%d also decoded over a KV cache, %d not expressible as a v1 .attn blob), "
      "%d quantized files, %d checks, %d failed\n",
      golden, g_decoded, g_blob_skipped, g_quant_files, g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
