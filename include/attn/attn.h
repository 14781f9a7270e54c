/* attn/attn.h: the C99 API of attn.
 *
 * Plain C over the C++ library: no heap, no callbacks, no global state. Every
 * handle lives in memory the caller owns (a static, a stack variable, a struct
 * member), with its size fixed here, the way FreeRTOS's StaticTask_t works.
 * Every function returns an attn_status; outputs come back through pointers.
 *
 *   static attn_model model;                 // 64 bytes, zero-initialized
 *   attn_block_info info;
 *   attn_plan plan;                          // 96 bytes
 *   ATTN_CHECK(attn_model_load(&model, blob, blob_size));   // validates once
 *   ATTN_CHECK(attn_model_block(&model, 0, &info));
 *   ATTN_CHECK(attn_plan_init(&plan, &info.config, info.dtype, L, S, 0));
 *   size_t need;  ATTN_CHECK(attn_plan_arena_bytes(&plan, &need));   // <= sizeof arena
 *   attn_weights_f32 w;  ATTN_CHECK(attn_model_block_weights_f32(&model, 0, &w));
 *   attn_io_f32 io = {x, x, x, y, NULL, 0};  // self-attention, no weights output
 *   ATTN_CHECK(attn_forward_f32(&plan, &w, NULL, &io, arena, sizeof arena));
 *
 * The math (see attn/attention.h for the C++ API it wraps):
 *   Q = X Wq^T + bq   [L, D]     D   = num_heads * head_dim
 *   K = Xk Wk^T + bk  [S, Dkv]   Dkv = num_kv_heads * head_dim
 *   V = Xv Wv^T + bv  [S, Dkv]
 *   P_h = softmax(Q_h K_g^T / sqrt(head_dim) + mask)  [L, S] per head
 *   Y = concat_h(P_h V_g) Wo^T + bo                   [L, E]
 * Weights are [out, in] as PyTorch stores them; all arrays dense, row-major.
 *
 * Link: libattn.a and -lm (the library needs only libc's mem and str
 * functions and libm, no C++ runtime, so a C program links it with the C
 * compiler).
 * Compile with the same ATTN_* defines as the library (attn/config.h).
 */
#ifndef ATTN_ATTN_H_
#define ATTN_ATTN_H_

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ATTN_C_NODISCARD __attribute__((warn_unused_result))
#else
#define ATTN_C_NODISCARD
#endif

/* ------------------------------------------------------------- status --- */

/* 0 on success, else one of the ATTN_ERR_* codes (the numbers of the C++
 * attn::Status, so logs from either API read the same). */
typedef int32_t attn_status;

enum {
  ATTN_OK = 0,

  /* Arguments and configuration (1..) */
  ATTN_ERR_NULL_ARGUMENT = 1,      /* a required pointer is null */
  ATTN_ERR_BAD_EMBED_DIM = 2,      /* embed_dim <= 0 or above ATTN_MAX_DIM */
  ATTN_ERR_BAD_NUM_HEADS = 3,      /* num_heads <= 0 or above ATTN_MAX_HEADS */
  ATTN_ERR_BAD_HEAD_DIM = 4,       /* head_dim < 0 or too large, or E % H != 0 with head_dim 0 */
  ATTN_ERR_BAD_KEY_DIM = 5,        /* kdim < 0 or above ATTN_MAX_DIM */
  ATTN_ERR_BAD_VALUE_DIM = 6,      /* vdim < 0 or above ATTN_MAX_DIM */
  ATTN_ERR_BAD_QUERY_LENGTH = 7,   /* L <= 0 or above ATTN_MAX_SEQ */
  ATTN_ERR_BAD_KEY_LENGTH = 8,     /* S <= 0 or above ATTN_MAX_SEQ */
  ATTN_ERR_BAD_KEY_PADDING = 9,    /* mask key_length outside [0, S] */
  ATTN_ERR_BAD_TILE_ROWS = 10,     /* tile_rows < 0 */
  ATTN_ERR_BAD_SHAPE = 11,         /* views disagree in shape or stride */
  ATTN_ERR_BAD_DTYPE = 12,         /* the entry does not support this dtype */
  ATTN_ERR_PLAN_MISMATCH = 13,     /* the plan was made for another config, shape or dtype */
  ATTN_ERR_BAD_CAUSAL_OFFSET = 14, /* mask causal_offset < 0 */
  ATTN_ERR_BAD_KV_HEADS = 15,      /* num_kv_heads < 0 or does not divide num_heads */
  ATTN_ERR_BAD_ROPE = 16,          /* rope_base negative or not finite, or odd head_dim with rope */
  ATTN_ERR_BAD_POSITION = 17,      /* a rotary position is negative */
  ATTN_ERR_BAD_WINDOW = 18,        /* mask window < 0, or a window without causal */
  ATTN_ERR_BAD_HANDLE = 31,        /* a handle not set up by its init/load call (or a failed one) */

  /* Memory (32..) */
  ATTN_ERR_ARENA_TOO_SMALL = 32,  /* the arena is smaller than the plan's arena bytes */
  ATTN_ERR_ARENA_MISALIGNED = 33, /* the arena is not ATTN_ARENA_ALIGN-aligned */
  ATTN_ERR_BUFFER_TOO_SMALL = 34, /* an output buffer given with its size is too small */
  ATTN_ERR_CACHE_FULL = 35,       /* a KV cache without a window has no room */

  /* Model files (64..), see attn/FORMAT.md */
  ATTN_ERR_BAD_MAGIC = 64,
  ATTN_ERR_UNSUPPORTED_VERSION = 65,
  ATTN_ERR_BAD_HEADER_SIZE = 66,
  ATTN_ERR_TRUNCATED = 67,          /* shorter than the file says or than a header */
  ATTN_ERR_FILE_SIZE_MISMATCH = 68, /* header file_size differs from the blob size */
  ATTN_ERR_CRC_MISMATCH = 69,
  ATTN_ERR_BAD_ALIGNMENT = 70,        /* data alignment not a power of two in [16, max] */
  ATTN_ERR_SIZE_OVERFLOW = 71,        /* a size computation overflows */
  ATTN_ERR_OFFSET_OUT_OF_BOUNDS = 72, /* a table or tensor lies outside the file */
  ATTN_ERR_TENSOR_OVERLAP = 73,
  ATTN_ERR_TENSOR_MISALIGNED = 74,
  ATTN_ERR_BAD_DIMS = 75,       /* a zero dim, rank 0 or rank above 4 */
  ATTN_ERR_DIMS_TOO_LARGE = 76, /* a dim above the compile-time caps */
  ATTN_ERR_UNKNOWN_DTYPE = 77,
  ATTN_ERR_UNKNOWN_ROLE = 78,
  ATTN_ERR_UNKNOWN_LAYOUT = 79,
  ATTN_ERR_DUPLICATE_ROLE = 80,
  ATTN_ERR_MISSING_TENSOR = 81, /* a block lacks a tensor its hyperparameters require */
  ATTN_ERR_DIMS_MISMATCH = 82,  /* tensor dims disagree with the block's hyperparameters */
  ATTN_ERR_BAD_BLOCK = 83,      /* a malformed block record */
  ATTN_ERR_BAD_TENSOR_NAME = 84,
  ATTN_ERR_BAD_BYTE_SIZE = 85,
  ATTN_ERR_BLOCK_INDEX = 86, /* block (or tensor) index out of range */
  ATTN_ERR_NOT_FOUND = 87,   /* no tensor with that name */
  ATTN_ERR_BAD_RESERVED = 88,
  ATTN_ERR_UNKNOWN_FLAGS = 89,
  ATTN_ERR_BLOB_MISALIGNED = 90,  /* the blob's address is not 16-byte aligned */
  ATTN_ERR_TOO_MANY_ENTRIES = 91, /* more blocks or tensors than ATTN_MAX_BLOCKS / _TENSORS */
  ATTN_ERR_DUPLICATE_NAME = 92,
  ATTN_ERR_DTYPE_MISMATCH = 93,
  ATTN_ERR_QUANTIZED_VARIANT = 94, /* no longer returned (s8/s16 blocks run RoPE and GQA) */

  /* Fixed point (96..) */
  ATTN_ERR_BAD_QUANT_PARAMS = 96, /* a multiplier, shift, zero point or softmax constant out of range */
  ATTN_ERR_UNSUPPORTED_MASK = 97, /* an additive float mask given to a fixed-point forward */
  ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE = 98 /* a rotary position past the converter's cos/sin table */
};

/* The code's name, e.g. "ATTN_ERR_ARENA_TOO_SMALL"; "ATTN_ERR_UNKNOWN" for a
 * number that is no code. Never NULL; a string in flash, nothing formatted. */
const char* attn_status_name(attn_status status);

/* Return from the enclosing function on error: ATTN_CHECK(attn_plan_init(...)); */
#define ATTN_CHECK(expr)                            \
  do {                                              \
    const attn_status attn_check_ = (expr);         \
    if (attn_check_ != ATTN_OK) return attn_check_; \
  } while (0)

/* ------------------------------------------------------ configuration --- */

typedef int32_t attn_dtype;
enum { ATTN_DTYPE_F32 = 1, ATTN_DTYPE_S8 = 2, ATTN_DTYPE_S16 = 3 };

/* One attention block's hyperparameters. Zero-initialize, then set what you
 * need: every field's 0 is its default, except embed_dim and num_heads. */
typedef struct attn_config {
  int32_t embed_dim;    /* E: width of the query input and of the output, 1..ATTN_MAX_DIM */
  int32_t num_heads;    /* H, 1..ATTN_MAX_HEADS */
  int32_t head_dim;     /* 0: E / H (H must divide E) */
  int32_t kdim;         /* width of the key input; 0: E */
  int32_t vdim;         /* width of the value input; 0: E */
  int32_t bias;         /* nonzero: bq, bk, bv, bo are present */
  int32_t num_kv_heads; /* grouped-query attention: K/V heads, dividing H; 0: H */
  float rope_base;      /* rotary position embedding base (e.g. 10000); 0: none */
} attn_config;

/* Which scores take part in the softmax; a key counts only if every mask
 * allows it. All zero (or a NULL mask pointer): no mask. A query row whose
 * every key is masked gets all-zero weights and output bo. */
typedef struct attn_mask {
  int32_t causal;          /* nonzero: row i attends key j only if j <= i + causal_offset */
  int32_t causal_offset;   /* >= 0 */
  int32_t window;          /* with causal: keep only the last `window` keys; 0: no window */
  int32_t key_padding;     /* nonzero: keys j >= key_length are ignored */
  int32_t key_length;      /* 0..S, used when key_padding is nonzero */
  const float* additive;   /* optional [L, S] added to the scaled scores; -INFINITY removes a key */
  int32_t additive_stride; /* row stride of `additive` in floats; 0: S */
} attn_mask;

/* -------------------------------------------------------------- handles --- */

/* Storage for the handles: sized and aligned here, opaque to the caller. Only
 * the functions below read or write them; copying an attn_plan is fine. */
typedef union attn_storage_word_ {
  uint64_t u64;
  double f64;
  void* ptr;
} attn_storage_word_;

/* A validated configuration and shape: attn_plan_init() fills it. */
typedef struct attn_plan {
  attn_storage_word_ opaque_[12]; /* 96 bytes */
} attn_plan;

/* A loaded, validated .attn blob: attn_model_load() fills it. It points into
 * the blob, which must stay in place and unchanged while the model is used. */
typedef struct attn_model {
  attn_storage_word_ opaque_[8]; /* 64 bytes */
} attn_model;

/* ----------------------------------------------------------------- plan --- */

/* Validate `config` for `dtype` with L = query_len query rows and S = key_len
 * keys, and fill *plan. tile_rows: query rows per tile (0: ATTN_TILE_ROWS);
 * larger tiles reuse weights better, smaller ones need less arena.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_EMBED_DIM .. ATTN_ERR_BAD_ROPE,
 * ATTN_ERR_BAD_QUERY_LENGTH, ATTN_ERR_BAD_KEY_LENGTH, ATTN_ERR_BAD_TILE_ROWS,
 * ATTN_ERR_BAD_DTYPE (no forward for this dtype), ATTN_ERR_SIZE_OVERFLOW.
 * On error *plan is left unusable (ATTN_ERR_BAD_HANDLE). */
ATTN_C_NODISCARD attn_status attn_plan_init(attn_plan* plan, const attn_config* config, attn_dtype dtype,
                                            int32_t query_len, int32_t key_len, int32_t tile_rows);

/* The exact arena bytes a forward with this plan carves. */
ATTN_C_NODISCARD attn_status attn_plan_arena_bytes(const attn_plan* plan, size_t* bytes);

/* The same number as a constant expression, for sizing a static arena with
 * the default tile (ATTN_TILE_ROWS) in a f32 forward:
 *   static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_F32(D, DKV, L, S)];
 * with D = num_heads * head_dim and DKV = num_kv_heads * head_dim (D if no
 * grouped-query attention). Layout, each part rounded up to ATTN_ARENA_ALIGN:
 * K and V [S, DKV], Q and O tiles [T, D], scores [T, S], T = min(ATTN_TILE_ROWS, L). */
#define ATTN_ALIGN_UP_(n) (((size_t)(n) + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN)
#define ATTN_TILE_(L) ((size_t)((L) < ATTN_TILE_ROWS ? (L) : ATTN_TILE_ROWS))
#define ATTN_ARENA_BYTES_F32(D, DKV, L, S)                                                                 \
  (2 * ATTN_ALIGN_UP_((size_t)(S) * (size_t)(DKV)*4) + 2 * ATTN_ALIGN_UP_(ATTN_TILE_(L) * (size_t)(D)*4) + \
   ATTN_ALIGN_UP_(ATTN_TILE_(L) * (size_t)(S)*4))

/* Aligns a static arena buffer (GCC/Clang/armclang; elsewhere use your
 * compiler's attribute, or C11 _Alignas(ATTN_ARENA_ALIGN)). */
#if defined(__GNUC__) || defined(__clang__)
#define ATTN_ALIGNED_ARENA __attribute__((aligned(ATTN_ARENA_ALIGN)))
#else
#define ATTN_ALIGNED_ARENA
#endif

/* ---------------------------------------------------------------- model --- */

/* Validate the `size` bytes at `blob` as a .attn file (every header, table,
 * offset, size and the CRC, once) and point *model at it. The blob must be
 * 16-byte aligned and outlive the model; nothing is copied.
 * Errors: ATTN_ERR_NULL_ARGUMENT and the model-file codes (64..); on error
 * *model is left unusable (ATTN_ERR_BAD_HANDLE). */
ATTN_C_NODISCARD attn_status attn_model_load(attn_model* model, const void* blob, size_t size);

/* Number of attention blocks in the model. */
ATTN_C_NODISCARD attn_status attn_model_block_count(const attn_model* model, uint32_t* count);

/* Block `index`'s hyperparameters (all dims resolved, never 0) and dtype. */
typedef struct attn_block_info {
  attn_config config;
  attn_dtype dtype;
} attn_block_info;
ATTN_C_NODISCARD attn_status attn_model_block(const attn_model* model, uint32_t index, attn_block_info* info);

/* A tensor of the model: block weights or a user tensor (embedding, ...). */
typedef struct attn_tensor_info {
  const char* name; /* NUL-terminated, in the blob */
  attn_dtype dtype; /* ATTN_DTYPE_* or 4 (s32), 5 (s64), 6 (u8) */
  int32_t role;     /* 1..8: wq wk wv wo bq bk bv bo; 15: user tensor */
  int32_t rank;     /* 1..4 */
  int32_t dims[4];  /* dims[rank-1] varies fastest; unused dims 0 */
  uint32_t block;   /* block index, 0xFFFFFFFF for a user tensor */
  const void* data; /* in the blob, aligned to the file's data alignment (>= 16) */
  size_t byte_size;
} attn_tensor_info;

/* The tensor called `name` (ATTN_ERR_NOT_FOUND if none). */
ATTN_C_NODISCARD attn_status attn_model_find_tensor(const attn_model* model, const char* name,
                                                    attn_tensor_info* info);

/* ---------------------------------------------------------- f32 forward --- */
#if ATTN_WITH_F32

typedef struct attn_weights_f32 {
  const float* wq; /* [D, E] */
  const float* wk; /* [Dkv, kdim] */
  const float* wv; /* [Dkv, vdim] */
  const float* wo; /* [E, D] */
  const float* bq; /* [D]   the four biases: NULL when config.bias is 0 */
  const float* bk; /* [Dkv] */
  const float* bv; /* [Dkv] */
  const float* bo; /* [E] */
} attn_weights_f32;

typedef struct attn_io_f32 {
  const float* query;     /* [L, E] */
  const float* key;       /* [S, kdim]; self-attention: the query */
  const float* value;     /* [S, vdim]; self-attention: the query */
  float* output;          /* [L, E]; must not overlap the inputs */
  float* attn_weights;    /* optional [H, L, S]: the softmax probabilities per head; NULL: not written */
  int32_t query_position; /* rotary position of query row 0 (keys sit at 0 .. S-1) */
} attn_io_f32;

/* Block `index`'s f32 weights: pointers into the blob (ATTN_ERR_BAD_DTYPE if
 * the block is not f32). */
ATTN_C_NODISCARD attn_status attn_model_block_weights_f32(const attn_model* model, uint32_t index,
                                                          attn_weights_f32* weights);

/* One float32 forward. `arena` is ATTN_ARENA_ALIGN-aligned scratch of
 * `arena_bytes` >= the plan's arena bytes; it is checked before anything is
 * written, and its contents need not survive between calls. mask may be NULL.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE,
 * ATTN_ERR_PLAN_MISMATCH, ATTN_ERR_BAD_KEY_PADDING, ATTN_ERR_BAD_CAUSAL_OFFSET,
 * ATTN_ERR_BAD_WINDOW, ATTN_ERR_BAD_POSITION, ATTN_ERR_BAD_SHAPE (additive
 * stride < S), ATTN_ERR_ARENA_MISALIGNED, ATTN_ERR_ARENA_TOO_SMALL. */
ATTN_C_NODISCARD attn_status attn_forward_f32(const attn_plan* plan, const attn_weights_f32* weights,
                                              const attn_mask* mask, const attn_io_f32* io, void* arena,
                                              size_t arena_bytes);

#endif /* ATTN_WITH_F32 */

/* ----------------------------------------------- incremental decoding --- */
/* Autoregressive self-attention over a KV cache (attn/decode.h): each call
 * appends n new rows (tokens) and attends them causally over everything
 * cached, so a step costs O(n * length) instead of recomputing the history.
 * Decoding L rows, in any split into calls, gives what one forward over the
 * L rows (query = key = value) with a causal mask gives (and the cache's
 * window as the mask's window): within f32 rounding for f32, byte for byte
 * for s8 and s16.
 *
 *   attn_plan plan;  attn_kv_cache_f32 cache;   (or _s8 / _s16)
 *   ATTN_CHECK(attn_plan_init_decode(&plan, &cfg, ATTN_DTYPE_F32, max_rows, capacity, 0));
 *   ATTN_CHECK(attn_kv_cache_init_f32(&cache, &plan, 0, cache_buf, sizeof cache_buf));
 *   ATTN_CHECK(attn_decode_f32(&plan, &w, &cache, prompt, n_prompt, y, arena, sizeof arena));
 *   ATTN_CHECK(attn_decode_f32(&plan, &w, &cache, x, 1, y, arena, sizeof arena));  // one token
 */

/* Validate a self-attention config (kdim, vdim 0 or E) for `dtype` (f32, s8
 * or s16) and calls of at most max_rows rows over a cache of `capacity`
 * positions, and fill *plan (its arena bytes are those of one attn_decode_*
 * call, the cache aside: Q and O tiles [T, D] of the dtype, scores
 * [T, capacity] float (f32) or int32 (s8, s16), T = min(tile, max_rows)).
 * Errors: those of attn_plan_init, ATTN_ERR_BAD_KEY_DIM / _VALUE_DIM for
 * cross-attention. */
ATTN_C_NODISCARD attn_status attn_plan_init_decode(attn_plan* plan, const attn_config* config,
                                                   attn_dtype dtype, int32_t max_rows, int32_t capacity,
                                                   int32_t tile_rows);

/* Bytes of the cache buffer for a decode plan: K and V [capacity, Dkv] of the
 * plan's dtype (float, int8 or int16), each rounded up to ATTN_ARENA_ALIGN.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_PLAN_MISMATCH
 * (not a decode plan). */
ATTN_C_NODISCARD attn_status attn_kv_cache_bytes(const attn_plan* plan, size_t* bytes);

#if ATTN_WITH_F32

/* A float32 KV cache: K and V [capacity, Dkv] float in a buffer the caller owns. */
typedef struct attn_kv_cache_f32 {
  attn_storage_word_ opaque_[10]; /* 80 bytes */
} attn_kv_cache_f32;

/* Set up *cache in `buffer` (ATTN_ARENA_ALIGN-aligned, >= attn_kv_cache_bytes;
 * it must outlive the cache). window: 0 keeps every position (then
 * ATTN_ERR_CACHE_FULL when full); W in [1, capacity] keeps the last W.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE
 * (a plan of another dtype), ATTN_ERR_PLAN_MISMATCH (not a decode plan),
 * ATTN_ERR_BAD_WINDOW, ATTN_ERR_ARENA_MISALIGNED, ATTN_ERR_ARENA_TOO_SMALL. */
ATTN_C_NODISCARD attn_status attn_kv_cache_init_f32(attn_kv_cache_f32* cache, const attn_plan* plan,
                                                    int32_t window, void* buffer, size_t buffer_bytes);

/* Forget every cached position: the next row sits at position 0. */
ATTN_C_NODISCARD attn_status attn_kv_cache_reset(attn_kv_cache_f32* cache);

/* Rows in use, and the position the next row gets. */
ATTN_C_NODISCARD attn_status attn_kv_cache_length(const attn_kv_cache_f32* cache, int32_t* length,
                                                  int32_t* next_position);

/* Append rows x [n, E] (n in [1, max_rows]) and write their outputs y [n, E].
 * `arena` as in attn_forward_f32, of at least the plan's arena bytes.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE,
 * ATTN_ERR_PLAN_MISMATCH, ATTN_ERR_BAD_QUERY_LENGTH, ATTN_ERR_CACHE_FULL
 * (nothing changed), ATTN_ERR_ARENA_MISALIGNED, ATTN_ERR_ARENA_TOO_SMALL. */
ATTN_C_NODISCARD attn_status attn_decode_f32(const attn_plan* plan, const attn_weights_f32* weights,
                                             attn_kv_cache_f32* cache, const float* x, int32_t n, float* y,
                                             void* arena, size_t arena_bytes);

#endif /* ATTN_WITH_F32 */

/* ------------------------------------------------- s8 / s16 forwards --- */
/* Integer only at run time (no float instruction or call): the s8 forward
 * runs on cores without an FPU. Every constant comes from the converter
 * (C++ attn::quantize_attention_s8 / _s16 in attn/quantize.h, or the `attn`
 * tools binary); see attn/attention_fixed.h for the scheme. Grouped-query
 * attention as in f32; masks: causal, window and key padding (an additive
 * mask gives ATTN_ERR_UNSUPPORTED_MASK). Rotary embedding from the
 * converter's tables (attn_rope_table; a rotary plan without them gives
 * ATTN_ERR_NULL_ARGUMENT). */
#if ATTN_WITH_S8 || ATTN_WITH_S16

/* Constants of the fused integer softmax (attn::FusedSoftmaxParams). */
typedef struct attn_softmax_fixed {
  uint32_t exp_multiplier; /* [2^31, 2^32) */
  int32_t exp_shift;       /* [0, 31] */
  int32_t diff_limit;      /* [0, (2^32 - 1) >> exp_shift] */
  int32_t score_shift;     /* scores = round(q.k / 2^score_shift); s8: usually 0 */
} attn_softmax_fixed;

/* Rotary embedding tables from the converter (attn::RopeTable), Q1.14:
 * cos[p][i] = round(2^14 cos(p base^(-2i/head_dim))), sin likewise. Read only
 * when the plan's rope_base is not 0; positions past `positions` give
 * ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE. */
typedef struct attn_rope_table {
  const int16_t* cos; /* [positions, head_dim / 2] */
  const int16_t* sin; /* [positions, head_dim / 2] */
  int32_t positions;
} attn_rope_table;

/* Arena bytes of an s8 (BYTES = 1) or s16 (BYTES = 2) forward with the
 * default tile; D and DKV as for f32: K and V [S, DKV], Q and O tiles [T, D]
 * of activations, scores [T, S] int32. */
#define ATTN_ARENA_BYTES_FIXED_(BYTES, D, DKV, L, S)           \
  (2 * ATTN_ALIGN_UP_((size_t)(S) * (size_t)(DKV) * (BYTES)) + \
   2 * ATTN_ALIGN_UP_(ATTN_TILE_(L) * (size_t)(D) * (BYTES)) + \
   ATTN_ALIGN_UP_(ATTN_TILE_(L) * (size_t)(S)*4))
#define ATTN_ARENA_BYTES_S8(D, DKV, L, S) ATTN_ARENA_BYTES_FIXED_(1, D, DKV, L, S)
#define ATTN_ARENA_BYTES_S16(D, DKV, L, S) ATTN_ARENA_BYTES_FIXED_(2, D, DKV, L, S)

#endif

#if ATTN_WITH_S8

/* One projection y = x W^T + b of the int8 forward, as the converter stores it. */
typedef struct attn_projection_s8 {
  const int8_t* weight;      /* [out, in] int8, symmetric per output channel */
  const int32_t* bias;       /* [out] int32 with the input zero point folded in; required */
  const int32_t* multiplier; /* [out] Q0.31, >= 0 */
  const int32_t* shift;      /* [out] [-31, 30] */
} attn_projection_s8;

typedef struct attn_weights_s8 {
  attn_projection_s8 q; /* [D, E] */
  attn_projection_s8 k; /* [D, kdim] */
  attn_projection_s8 v; /* [D, vdim] */
  attn_projection_s8 o; /* [E, D] */
  int32_t q_zero_point; /* zero points of Q, K, V, context and output, [-128, 127] */
  int32_t k_zero_point;
  int32_t v_zero_point;
  int32_t context_zero_point;
  int32_t output_zero_point;
  attn_softmax_fixed softmax;
  int32_t context_multiplier; /* Q0.31: probabilities x V into the context scale */
  int32_t context_shift;      /* [-31, 30] */
  attn_rope_table rope;       /* rotary embedding (all zero without) */
} attn_weights_s8;

/* int8 activations, quantized with the converter's scale and zero point. */
typedef struct attn_io_s8 {
  const int8_t* query;    /* [L, E] */
  const int8_t* key;      /* [S, kdim]; self-attention: the query */
  const int8_t* value;    /* [S, vdim]; self-attention: the query */
  int8_t* output;         /* [L, E] */
  int32_t query_position; /* rotary position of query row 0 (keys at 0 .. S-1) */
} attn_io_s8;

/* One int8 forward; plan from attn_plan_init(..., ATTN_DTYPE_S8, ...).
 * Errors: those of attn_forward_f32, ATTN_ERR_BAD_QUANT_PARAMS and
 * ATTN_ERR_UNSUPPORTED_MASK. */
ATTN_C_NODISCARD attn_status attn_forward_s8(const attn_plan* plan, const attn_weights_s8* weights,
                                             const attn_mask* mask, const attn_io_s8* io, void* arena,
                                             size_t arena_bytes);

/* int8 incremental decoding (attn_plan_init_decode(..., ATTN_DTYPE_S8, ...)).
 * The cache holds the projected (and rotated) K and V as int8, with the
 * weights' k_zero_point / v_zero_point: attn_kv_cache_bytes gives
 * 2 x [capacity, Dkv] int8, each part rounded up to ATTN_ARENA_ALIGN. */
typedef struct attn_kv_cache_s8 {
  attn_storage_word_ opaque_[10]; /* 80 bytes */
} attn_kv_cache_s8;

/* As attn_kv_cache_init_f32, for an s8 decode plan (ATTN_ERR_BAD_DTYPE for
 * a plan of another dtype). */
ATTN_C_NODISCARD attn_status attn_kv_cache_init_s8(attn_kv_cache_s8* cache, const attn_plan* plan,
                                                   int32_t window, void* buffer, size_t buffer_bytes);

/* Forget every cached position: the next row sits at position 0. */
ATTN_C_NODISCARD attn_status attn_kv_cache_reset_s8(attn_kv_cache_s8* cache);

/* Rows in use, and the position the next row gets. */
ATTN_C_NODISCARD attn_status attn_kv_cache_length_s8(const attn_kv_cache_s8* cache, int32_t* length,
                                                     int32_t* next_position);

/* Append int8 rows x [n, E] (n in [1, max_rows]), quantized as the query
 * input of attn_forward_s8, and write their outputs y [n, E] int8 in its
 * output quantization. Rows sit at positions next_position .. + n - 1; with
 * rotary embedding they are rotated by weights->rope, and a position past
 * its table gives ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE (nothing changed).
 * `arena` as in attn_forward_f32, of at least the plan's arena bytes.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE,
 * ATTN_ERR_PLAN_MISMATCH (also: a cache made for another plan),
 * ATTN_ERR_BAD_QUERY_LENGTH, ATTN_ERR_CACHE_FULL (nothing changed),
 * ATTN_ERR_BAD_QUANT_PARAMS, ATTN_ERR_BAD_HEAD_DIM,
 * ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE, ATTN_ERR_ARENA_MISALIGNED,
 * ATTN_ERR_ARENA_TOO_SMALL. */
ATTN_C_NODISCARD attn_status attn_decode_s8(const attn_plan* plan, const attn_weights_s8* weights,
                                            attn_kv_cache_s8* cache, const int8_t* x, int32_t n, int8_t* y,
                                            void* arena, size_t arena_bytes);

#endif /* ATTN_WITH_S8 */

#if ATTN_WITH_S16

/* One projection of the int16 forward (int16 activations x int8 weights). */
typedef struct attn_projection_s16 {
  const int8_t* weight;      /* [out, in] int8, symmetric per output channel */
  const int64_t* bias;       /* [out] int64; NULL: no bias */
  const int32_t* multiplier; /* [out] Q0.31, >= 0 */
  const int32_t* shift;      /* [out] [-31, 14] */
} attn_projection_s16;

typedef struct attn_weights_s16 {
  attn_projection_s16 q, k, v, o; /* as in attn_weights_s8 */
  attn_softmax_fixed softmax;
  int32_t context_multiplier; /* Q0.31 */
  int32_t context_shift;      /* [-31, 14] */
  attn_rope_table rope;       /* rotary embedding (all zero without) */
} attn_weights_s16;

/* int16 symmetric activations (zero point 0). */
typedef struct attn_io_s16 {
  const int16_t* query;   /* [L, E] */
  const int16_t* key;     /* [S, kdim] */
  const int16_t* value;   /* [S, vdim] */
  int16_t* output;        /* [L, E] */
  int32_t query_position; /* rotary position of query row 0 (keys at 0 .. S-1) */
} attn_io_s16;

/* One int16 forward; plan from attn_plan_init(..., ATTN_DTYPE_S16, ...). */
ATTN_C_NODISCARD attn_status attn_forward_s16(const attn_plan* plan, const attn_weights_s16* weights,
                                              const attn_mask* mask, const attn_io_s16* io, void* arena,
                                              size_t arena_bytes);

/* int16 incremental decoding (attn_plan_init_decode(..., ATTN_DTYPE_S16, ...)):
 * the cache holds K and V as symmetric int16, 2 x [capacity, Dkv]. */
typedef struct attn_kv_cache_s16 {
  attn_storage_word_ opaque_[10]; /* 80 bytes */
} attn_kv_cache_s16;

/* As attn_kv_cache_init_f32, for an s16 decode plan. */
ATTN_C_NODISCARD attn_status attn_kv_cache_init_s16(attn_kv_cache_s16* cache, const attn_plan* plan,
                                                    int32_t window, void* buffer, size_t buffer_bytes);

/* Forget every cached position: the next row sits at position 0. */
ATTN_C_NODISCARD attn_status attn_kv_cache_reset_s16(attn_kv_cache_s16* cache);

/* Rows in use, and the position the next row gets. */
ATTN_C_NODISCARD attn_status attn_kv_cache_length_s16(const attn_kv_cache_s16* cache, int32_t* length,
                                                      int32_t* next_position);

/* As attn_decode_s8 with int16 rows x [n, E] and outputs y [n, E] in the
 * quantization of attn_forward_s16. Errors: those of attn_decode_s8. */
ATTN_C_NODISCARD attn_status attn_decode_s16(const attn_plan* plan, const attn_weights_s16* weights,
                                             attn_kv_cache_s16* cache, const int16_t* x, int32_t n,
                                             int16_t* y, void* arena, size_t arena_bytes);

#endif /* ATTN_WITH_S16 */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTN_ATTN_H_ */
