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

/* 0 on success, else one of the ATTN_ERR_* codes: the numbers of the C++
 * attn::Status, so logs from either API read the same. The codes, their
 * numbers and meanings are listed once, in attn/status_list.h: ATTN_OK = 0;
 * arguments and configuration 1..31 (ATTN_ERR_NULL_ARGUMENT ..
 * ATTN_ERR_BAD_HANDLE), memory 32..63 (ATTN_ERR_ARENA_TOO_SMALL ..), model
 * files 64..95 (ATTN_ERR_BAD_MAGIC .., see attn/FORMAT.md), fixed point
 * 96..127 (ATTN_ERR_BAD_QUANT_PARAMS ..). */
typedef int32_t attn_status;

enum {
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_STATUS(cpp_name, c_name, value, doc) c_name = value,
// NOLINTEND(bugprone-macro-parentheses)
#include "attn/status_list.h"
#undef ATTN_STATUS
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
/* A tensor's dtype only (attn_tensor_info): int4 weights, two per byte,
   low nibble first (FORMAT.md "Int4 weights"); never a block's or a model's. */
enum { ATTN_DTYPE_S4 = 7 };

/* Which kernel variant each op of a dtype runs in this build, as the kernel
 * table picked it at compile time (C++ attn::kernel_set): "ref", "avx2",
 * "avx512vnni", "neon", "neon-dotprod", "dsp" or "mve". Static strings. */
typedef struct attn_kernel_set_info {
  const char* linear;       /* the projections */
  const char* scores;       /* Q K^T */
  const char* softmax;      /* the softmax over scores (fixed point: the fused softmax) */
  const char* weighted_sum; /* P V */
  const char* rope;         /* rotary embedding */
} attn_kernel_set_info;

/* Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_DTYPE (not f32, s8 or s16, or
 * a dtype this build leaves out). */
ATTN_C_NODISCARD attn_status attn_kernel_set(attn_dtype dtype, attn_kernel_set_info* set);

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

/* ---- more than one core: the caller's parallel-for (C++ attn/parallel.h) -
 * The library never creates a thread. A forward or decode cuts each large
 * product into `tasks` pieces (at most `workers`, each over a contiguous
 * range of output channels, never over a sum) and calls
 *   run(ctx, tasks, task, arg)
 * once; run must call task(arg, i) exactly once for every i in [0, tasks),
 * in any order, on any threads (the calling one included), and return only
 * when every call has returned (a pool's threads, an RTOS's tasks; sketch in
 * port/README.md). The outputs do not depend on the hook: integers byte for
 * byte, f32 bit for bit. A NULL run (the default) or workers below 2 runs
 * everything on the caller's thread. Split: the attention projections, the
 * FFN and the LM head, each only from ATTN_PARALLEL_MIN_TASK_MACS
 * multiply-adds (rows x channels x depth) a piece. */
/* A library built with ATTN_PARALLEL=0 (CMake -DATTN_PARALLEL=OFF, the
 * default on bare metal) has no split: setting a hook that would split (run
 * set, workers >= 2) returns ATTN_ERR_PARALLEL_NOT_BUILT. */
#define ATTN_PARALLEL_MIN_TASK_MACS 32768
typedef void (*attn_task_fn)(void* arg, int32_t index);
typedef void (*attn_parallel_fn)(void* ctx, int32_t tasks, attn_task_fn task, void* arg);

/* Set (run NULL: clear) the parallel-for of the forwards and decodes run
 * with this plan; copies of the plan made after carry it. Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_PARALLEL_NOT_BUILT. */
ATTN_C_NODISCARD attn_status attn_plan_set_parallel(attn_plan* plan, attn_parallel_fn run, void* ctx,
                                                    int32_t workers);

/* The same number as a constant expression, for sizing a static arena:
 *   static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_F32(D, DKV, L, S)];
 * with D = num_heads * head_dim and DKV = num_kv_heads * head_dim (D without
 * grouped-query attention). ATTN_ARENA_BYTES_F32 / _S8 / _S16 are a forward
 * of that dtype with the default tile (tile_rows 0: ATTN_TILE_ROWS);
 * ATTN_ARENA_BYTES(ELEM_BYTES, D, DKV, L, S, TILE_ROWS) is any forward plan:
 * ELEM_BYTES 4 (f32), 1 (s8) or 2 (s16), TILE_ROWS the plan's tile_rows
 * (>= 1). Layout, each part rounded up to ATTN_ARENA_ALIGN: K and V
 * [S, DKV], Q and O tiles [T, D] of the dtype, scores [T, S] of 4 bytes
 * (float or int32), T = min(TILE_ROWS, L). Equal to attn_plan_arena_bytes()
 * for every plan attn_plan_init accepts (in size_t arithmetic: on a 32-bit
 * target a plan whose bytes pass 2^32 is refused with ATTN_ERR_SIZE_OVERFLOW,
 * and the macro wraps). */
#define ATTN_ALIGN_UP_(n) (((size_t)(n) + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN)
#define ATTN_TILE_OF_(L, T) ((size_t)((L) < (T) ? (L) : (T)))
#define ATTN_ARENA_BYTES(ELEM_BYTES, D, DKV, L, S, TILE_ROWS)                             \
  (2 * ATTN_ALIGN_UP_((size_t)(S) * (size_t)(DKV) * (size_t)(ELEM_BYTES)) +               \
   2 * ATTN_ALIGN_UP_(ATTN_TILE_OF_(L, TILE_ROWS) * (size_t)(D) * (size_t)(ELEM_BYTES)) + \
   ATTN_ALIGN_UP_(ATTN_TILE_OF_(L, TILE_ROWS) * (size_t)(S)*4))
#define ATTN_ARENA_BYTES_F32(D, DKV, L, S) ATTN_ARENA_BYTES(4, D, DKV, L, S, ATTN_TILE_ROWS)
#define ATTN_ARENA_BYTES_S8(D, DKV, L, S) ATTN_ARENA_BYTES(1, D, DKV, L, S, ATTN_TILE_ROWS)
#define ATTN_ARENA_BYTES_S16(D, DKV, L, S) ATTN_ARENA_BYTES(2, D, DKV, L, S, ATTN_TILE_ROWS)

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

/* Tensor roles: what a tensor of a model file is. One constant per row of
 * attn/role_list.h (the one list of roles, which also gives the C++
 * attn::format::Role): ATTN_ROLE_WQ = 1 .. ATTN_ROLE_BO = 8 (the attention
 * weights and biases), ATTN_ROLE_USER = 15, the tables of s8/s16 blocks 16..27,
 * layer tensors of whole models 28..63, their model tensors 64..127
 * (attn/FORMAT.md). */
enum {
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and values
#define ATTN_ROLE(cpp_name, c_name, value, name, doc) c_name = value,
// NOLINTEND(bugprone-macro-parentheses)
#include "attn/role_list.h"
#undef ATTN_ROLE
};

/* The role's canonical tensor name, e.g. "wq", "norm1_weight" (a file names
 * the tensor `block.<i>.<name>` or `model.<name>`); NULL for a number that is
 * no role. A string in flash, nothing formatted. */
const char* attn_role_name(int32_t role);

/* A tensor of the model: block weights or a user tensor (embedding, ...). */
typedef struct attn_tensor_info {
  const char* name; /* NUL-terminated, in the blob */
  attn_dtype dtype; /* ATTN_DTYPE_* or 4 (s32), 5 (s64), 6 (u8); ATTN_DTYPE_S4: byte_size = elements / 2 */
  int32_t role;     /* ATTN_ROLE_*: 1..8 wq wk wv wo bq bk bv bo; 15 user tensor; the others attn/FORMAT.md */
  int32_t rank;     /* 1..4 */
  int32_t dims[4];  /* dims[rank-1] varies fastest; unused dims 0 */
  uint32_t block;   /* block index, 0xFFFFFFFF for a user tensor or a whole model's own (role >= 64) */
  const void* data; /* in the blob, aligned to the file's data alignment (>= 16) */
  size_t byte_size;
} attn_tensor_info;

/* The tensor called `name` (ATTN_ERR_NOT_FOUND if none). */
ATTN_C_NODISCARD attn_status attn_model_find_tensor(const attn_model* model, const char* name,
                                                    attn_tensor_info* info);

/* Number of tensors in the model (block tensors and user tensors). */
ATTN_C_NODISCARD attn_status attn_model_tensor_count(const attn_model* model, uint32_t* count);

/* Tensor `index` in file order, index < attn_model_tensor_count
 * (ATTN_ERR_TENSOR_INDEX otherwise). */
ATTN_C_NODISCARD attn_status attn_model_tensor(const attn_model* model, uint32_t index,
                                               attn_tensor_info* info);

/* The tensor of `role` (ATTN_ROLE_*, attn/FORMAT.md) in
 * block `block`: ATTN_ERR_BLOCK_INDEX for a bad block, ATTN_ERR_NOT_FOUND if
 * the block has no such tensor. */
ATTN_C_NODISCARD attn_status attn_model_find_block_tensor(const attn_model* model, uint32_t block,
                                                          int32_t role, attn_tensor_info* info);

/* The file as a whole: what the header says. */
typedef struct attn_file_info {
  uint32_t version;    /* format version: 1 (f32 blocks only), 2 (s8/s16 blocks) or 3 (whole models) */
  uint32_t crc32;      /* the header's CRC-32 of bytes [12, size) */
  uint32_t data_align; /* alignment of every tensor in the blob, >= 16 */
  uint32_t block_count;
  uint32_t tensor_count;
  size_t size; /* bytes of the file */
} attn_file_info;
ATTN_C_NODISCARD attn_status attn_model_file_info(const attn_model* model, attn_file_info* info);

/* Recompute the CRC-32 of the loaded blob and compare it with its header:
 * integrity after load, on demand (firmware that scrubs its flash). O(file
 * size), reads only. ATTN_OK, ATTN_ERR_CRC_MISMATCH (a changed byte anywhere
 * in [8, size)), ATTN_ERR_BAD_MAGIC / ATTN_ERR_UNSUPPORTED_VERSION /
 * ATTN_ERR_BAD_HEADER_SIZE (bytes [0, 8), outside the CRC),
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE (not loaded). */
ATTN_C_NODISCARD attn_status attn_model_verify(const attn_model* model);

/* The size the header of the blob at `data` declares, for a blob at the
 * start of a larger region of `available` bytes (a flash partition): checks
 * magic, version and header size only; then attn_model_load(model, data,
 * *size) checks the rest. Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_TRUNCATED
 * (fewer than 64 bytes, or a size above `available`), ATTN_ERR_BAD_MAGIC,
 * ATTN_ERR_UNSUPPORTED_VERSION, ATTN_ERR_BAD_HEADER_SIZE. */
ATTN_C_NODISCARD attn_status attn_model_file_bytes(const void* data, size_t available, size_t* size);

/* How block `index` converts real values to its integer inputs and output:
 *   real = scale * (q - zero_point)
 * for its query, key and value inputs and its output (the file's I/O scales
 * and zero points, attn/FORMAT.md roles 24 and 25). s16 zero points are 0.
 * An f32 block gives scale 1 and zero point 0 (no conversion). Only callers
 * that convert float data need it (attn_quantize_* / attn_dequantize_*
 * below); the integer forwards never read it. Reading it does no float
 * arithmetic. Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE,
 * ATTN_ERR_BLOCK_INDEX; on error *io is zeroed. */
typedef struct attn_block_io {
  float query_scale; /* finite, > 0 */
  float key_scale;
  float value_scale;
  float output_scale;
  int32_t query_zero_point; /* s8: [-128, 127]; s16 and f32: 0 */
  int32_t key_zero_point;
  int32_t value_zero_point;
  int32_t output_zero_point;
} attn_block_io;
ATTN_C_NODISCARD attn_status attn_model_block_io(const attn_model* model, uint32_t index, attn_block_io* io);

/* Float <-> integer conversion of activations, for a caller with float data
 * (an s8/s16 block's scale and zero point from attn_model_block_io):
 *   attn_quantize_DT:   q[i] = clamp(round(x[i] / scale) + zero_point) for i < n
 *   attn_dequantize_DT: y[i] = scale * (q[i] - zero_point)
 * round() is round half away from zero (2.5 -> 3, -2.5 -> -3) of x / scale
 * computed in double precision, then the sum saturates to [-128, 127] (s8)
 * or [-32768, 32767] (s16): +-infinity saturate, NaN gives the zero point.
 * Exactly what the C++ path (attn::quantize_s8 / _s16 in attn/kernels_fixed.h,
 * attn::quantize_value in attn/quantize.h, `attn run`) computes, bit for
 * bit. The dequantized value is the float nearest the exact product (one
 * rounding). These are the only float functions of an integer build: they
 * live in object files of their own, so firmware that does not call them
 * links no float (or soft-float) code; they exist when their dtype is
 * compiled in (ATTN_WITH_S8 / ATTN_WITH_S16). Errors: ATTN_ERR_NULL_ARGUMENT
 * (x, q or y NULL with n > 0), ATTN_ERR_BAD_QUANT_PARAMS (scale not finite
 * and > 0, or a zero point outside the dtype's range); nothing is written
 * on error. */
/* clang-format off */
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_QUANTIZE_API_(DT, T)                                                                          \
  ATTN_C_NODISCARD attn_status attn_quantize_##DT(const float* x, size_t n, float scale, int32_t zero_point, \
                                                  T* q);                                                     \
  ATTN_C_NODISCARD attn_status attn_dequantize_##DT(const T* q, size_t n, float scale, int32_t zero_point,  \
                                                    float* y);
// NOLINTEND(bugprone-macro-parentheses)
#if ATTN_WITH_S8
ATTN_QUANTIZE_API_(s8, int8_t) /* attn_quantize_s8, attn_dequantize_s8 */
#endif
#if ATTN_WITH_S16
ATTN_QUANTIZE_API_(s16, int16_t) /* attn_quantize_s16, attn_dequantize_s16 */
#endif
/* clang-format on */

/* ------------------------------------------------------- f32 types --- */
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
ATTN_C_NODISCARD attn_status attn_kv_cache_arena_bytes(const attn_plan* plan, size_t* bytes);

/* ------------------------------------------------- s8 / s16 types --- */
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

#endif

#if ATTN_WITH_S8

/* One projection y = x W^T + b of the int8 forward, as the converter stores it. */
typedef struct attn_projection_s8 {
  const int8_t* weight;      /* [out, in] int8, symmetric per output channel */
  const int32_t* bias;       /* [out] int32 with the input zero point folded in; required */
  const int32_t* multiplier; /* [out] Q0.31, >= 0 */
  const int32_t* shift;      /* [out] [-31, 30] */
  /* [out, in / 2] int4 weights, two per byte, low nibble first (FORMAT.md,
     "Int4 weights"; in even), used in place of weight when not NULL */
  const uint8_t* weight_s4;
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
  int32_t mask_coverage;      /* attn::MaskCoverage: 0 any mask, 1 none, 2 causal from offset N,
                                 3 key length N, 4 causal window N, 5 causal key length N */
  int32_t mask_key_length;    /* the N of mask_coverage 2..5; else 0 */
} attn_weights_s8;

/* int8 activations, quantized with the converter's scale and zero point. */
#if defined(ATTN_SATURATION_COUNTERS) && ATTN_SATURATION_COUNTERS
/* Saturation counters (a build with ATTN_SATURATION_COUNTERS=1, library and
 * caller alike; C++ attn::SaturationCounts): one s8/s16 forward adds, per
 * stage, the values that sit at the activation type's limits after its
 * requantization, so that field data outgrowing the calibration shows. In
 * such a build attn_io_s8 / attn_io_s16 have a `saturation` field: zero the
 * whole I/O struct before filling it (= {0} or memset), so that the field is
 * NULL unless set. */
typedef struct attn_saturation_counts {
  uint64_t q;       /* Q projection [L, D] */
  uint64_t k;       /* K projection [S, Dkv] */
  uint64_t v;       /* V projection [S, Dkv] */
  uint64_t context; /* P V requantized [L, D] */
  uint64_t output;  /* output projection [L, E] */
} attn_saturation_counts;
#endif

typedef struct attn_io_s8 {
  const int8_t* query;    /* [L, E] */
  const int8_t* key;      /* [S, kdim]; self-attention: the query */
  const int8_t* value;    /* [S, vdim]; self-attention: the query */
  int8_t* output;         /* [L, E] */
  int32_t query_position; /* rotary position of query row 0 (keys at 0 .. S-1) */
#if defined(ATTN_SATURATION_COUNTERS) && ATTN_SATURATION_COUNTERS
  attn_saturation_counts* saturation; /* optional (NULL: none): counts added per stage */
#endif
} attn_io_s8;

#endif /* ATTN_WITH_S8 */

#if ATTN_WITH_S16

/* One projection of the int16 forward (int16 activations x int8 weights). */
typedef struct attn_projection_s16 {
  const int8_t* weight;      /* [out, in] int8, symmetric per output channel */
  const int64_t* bias;       /* [out] int64; NULL: no bias */
  const int32_t* multiplier; /* [out] Q0.31, >= 0 */
  const int32_t* shift;      /* [out] [-31, 14] */
  const uint8_t* weight_s4;  /* int4 weights in place of weight, as in attn_projection_s8 */
} attn_projection_s16;

typedef struct attn_weights_s16 {
  attn_projection_s16 q, k, v, o; /* as in attn_weights_s8 */
  attn_softmax_fixed softmax;
  int32_t context_multiplier; /* Q0.31 */
  int32_t context_shift;      /* [-31, 14] */
  attn_rope_table rope;       /* rotary embedding (all zero without) */
  int32_t mask_coverage;      /* as in attn_weights_s8 */
  int32_t mask_key_length;
} attn_weights_s16;

/* int16 symmetric activations (zero point 0). */
typedef struct attn_io_s16 {
  const int16_t* query;   /* [L, E] */
  const int16_t* key;     /* [S, kdim] */
  const int16_t* value;   /* [S, vdim] */
  int16_t* output;        /* [L, E] */
  int32_t query_position; /* rotary position of query row 0 (keys at 0 .. S-1) */
#if defined(ATTN_SATURATION_COUNTERS) && ATTN_SATURATION_COUNTERS
  attn_saturation_counts* saturation; /* optional (NULL: none): counts added per stage */
#endif
} attn_io_s16;

#endif /* ATTN_WITH_S16 */

/* ---------------------------------------------- per-dtype entry points --- */
/* Each dtype DT in f32, s8, s16 (with element type T: float, int8_t,
 * int16_t) compiled into the library (ATTN_WITH_F32 / _S8 / _S16) has the
 * same entry points, declared by ATTN_DTYPE_API_ below:
 *
 * attn_status attn_forward_DT(const attn_plan* plan, const attn_weights_DT* weights,
 *                             const attn_mask* mask, const attn_io_DT* io, void* arena, size_t arena_bytes);
 *   One forward; plan from attn_plan_init(..., ATTN_DTYPE_DT, ...). `arena`
 *   is ATTN_ARENA_ALIGN-aligned scratch of `arena_bytes` >= the plan's arena
 *   bytes; it is checked before anything is written, and its contents need
 *   not survive between calls. mask may be NULL.
 *   Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE
 *   (a plan of another dtype), ATTN_ERR_PLAN_MISMATCH, ATTN_ERR_BAD_KEY_PADDING,
 *   ATTN_ERR_BAD_CAUSAL_OFFSET, ATTN_ERR_BAD_WINDOW, ATTN_ERR_BAD_POSITION,
 *   ATTN_ERR_BAD_SHAPE (additive stride < S), ATTN_ERR_ARENA_MISALIGNED,
 *   ATTN_ERR_ARENA_TOO_SMALL; s8 and s16 also ATTN_ERR_BAD_QUANT_PARAMS,
 *   ATTN_ERR_BAD_HEAD_DIM (s8: head_dim >= 2^14), ATTN_ERR_UNSUPPORTED_MASK
 *   (an additive mask) and ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE.
 *
 * attn_status attn_model_block_weights_DT(const attn_model* model, uint32_t index,
 *                                          attn_weights_DT* weights);
 *   Block `index`'s weights, ready for attn_forward_DT / attn_decode_DT:
 *   pointers into the blob (s8/s16: with every constant of the block and,
 *   for a block with rope, the file's rope tables), exactly what the C++
 *   Model::block() gives (attn::Block::f32 / s8 / s16). On error *weights is
 *   zeroed. Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE,
 *   ATTN_ERR_BLOCK_INDEX, ATTN_ERR_BAD_DTYPE (a block of another dtype).
 *
 * attn_kv_cache_DT: a KV cache handle (80 bytes): K and V [capacity, Dkv] of
 *   T in a buffer the caller owns (s8: with the weights' k/v_zero_point; s16:
 *   symmetric). A cache handle of one dtype is no handle of another.
 *
 * attn_status attn_kv_cache_init_DT(attn_kv_cache_DT* cache, const attn_plan* plan,
 *                                   int32_t window, void* buffer, size_t buffer_bytes);
 *   Set up *cache in `buffer` (ATTN_ARENA_ALIGN-aligned, >= attn_kv_cache_arena_bytes;
 *   it must outlive the cache) for a decode plan of this dtype. window: 0
 *   keeps every position (then ATTN_ERR_CACHE_FULL when full); W in
 *   [1, capacity] keeps the last W.
 *   Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE
 *   (a plan of another dtype), ATTN_ERR_PLAN_MISMATCH (not a decode plan),
 *   ATTN_ERR_BAD_WINDOW, ATTN_ERR_ARENA_MISALIGNED, ATTN_ERR_ARENA_TOO_SMALL.
 *
 * attn_status attn_kv_cache_reset_DT(attn_kv_cache_DT* cache);
 *   Forget every cached position: the next row sits at position 0.
 *
 * attn_status attn_kv_cache_length_DT(const attn_kv_cache_DT* cache, int32_t* length,
 *                                     int32_t* next_position);
 *   Rows in use, and the position the next row gets.
 *
 * attn_status attn_decode_DT(const attn_plan* plan, const attn_weights_DT* weights,
 *                            attn_kv_cache_DT* cache, const T* x, int32_t n, T* y,
 *                            void* arena, size_t arena_bytes);
 *   Append rows x [n, E] (n in [1, max_rows]; s8/s16: quantized as the query
 *   input of attn_forward_DT) and write their outputs y [n, E] (in its output
 *   quantization). Rows sit at positions next_position .. + n - 1; with
 *   rotary embedding s8/s16 rotate them by weights->rope, and a position past
 *   its table gives ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE (nothing changed).
 *   `arena` as in attn_forward_DT, of at least the plan's arena bytes.
 *   Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_BAD_DTYPE,
 *   ATTN_ERR_PLAN_MISMATCH (also: a cache made for another plan),
 *   ATTN_ERR_BAD_QUERY_LENGTH, ATTN_ERR_CACHE_FULL (nothing changed),
 *   ATTN_ERR_SEQUENCE_TOO_LONG (positions past INT32_MAX - 1: a window after
 *   2^31 rows; nothing changed, a reset goes on at position 0),
 *   ATTN_ERR_ARENA_MISALIGNED, ATTN_ERR_ARENA_TOO_SMALL; s8 and s16 also
 *   ATTN_ERR_BAD_QUANT_PARAMS, ATTN_ERR_BAD_HEAD_DIM and
 *   ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE.
 */
/* clang-format off */
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_DTYPE_API_(DT, T)                                                                             \
  typedef struct attn_kv_cache_##DT {                                                                      \
    attn_storage_word_ opaque_[10]; /* 80 bytes */                                                         \
  } attn_kv_cache_##DT;                                                                                    \
  ATTN_C_NODISCARD attn_status attn_model_block_weights_##DT(const attn_model* model, uint32_t index,       \
                                                            attn_weights_##DT* weights);                          \
  ATTN_C_NODISCARD attn_status attn_forward_##DT(const attn_plan* plan, const attn_weights_##DT* weights, \
                                                 const attn_mask* mask, const attn_io_##DT* io,           \
                                                 void* arena, size_t arena_bytes);                        \
  ATTN_C_NODISCARD attn_status attn_kv_cache_init_##DT(attn_kv_cache_##DT* cache, const attn_plan* plan,  \
                                                       int32_t window, void* buffer, size_t buffer_bytes);\
  ATTN_C_NODISCARD attn_status attn_kv_cache_reset_##DT(attn_kv_cache_##DT* cache);                       \
  ATTN_C_NODISCARD attn_status attn_kv_cache_length_##DT(const attn_kv_cache_##DT* cache, int32_t* length,\
                                                         int32_t* next_position);                         \
  ATTN_C_NODISCARD attn_status attn_decode_##DT(const attn_plan* plan, const attn_weights_##DT* weights,  \
                                                attn_kv_cache_##DT* cache, const T* x, int32_t n, T* y,   \
                                                void* arena, size_t arena_bytes);
// NOLINTEND(bugprone-macro-parentheses)

#if ATTN_WITH_F32
ATTN_DTYPE_API_(f32, float)
#endif
#if ATTN_WITH_S8
ATTN_DTYPE_API_(s8, int8_t)
#endif
#if ATTN_WITH_S16
ATTN_DTYPE_API_(s16, int16_t)
#endif
/* clang-format on */

/* --------------------------------------------------------- whole models --- */
/* Encoders (BERT) and decoders (Llama) from a v3 .attn model file, the C side
 * of attn/transformer.h and attn/transformer_fixed.h: token ids in, logits
 * (a model with an LM head) or the last hidden state (without) out. The whole
 * model lives in one arena the caller owns: the layer weight tables, the
 * KV-cache state and the scratch of one call. No heap, nothing global.
 *
 *   static attn_model model;  static attn_transformer tf;
 *   static ATTN_ALIGNED_ARENA uint8_t arena[96 * 1024];
 *   attn_transformer_config cfg;  attn_dtype dt;  size_t need;
 *   ATTN_CHECK(attn_model_load(&model, blob, blob_size));
 *   ATTN_CHECK(attn_model_transformer_config(&model, &cfg, &dt));
 *   ATTN_CHECK(attn_transformer_init_arena_bytes(&model, 16, 64, &need));     // <= sizeof arena
 *   ATTN_CHECK(attn_transformer_init(&tf, &model, 16, 64, 0, arena, sizeof arena));
 *   // steps >= 1 tokens after a prompt of n <= 16: one prefill, steps - 1 one-token
 *   // calls (the last token is never fed), n + steps - 1 <= 64 cache positions
 *   ATTN_CHECK(attn_transformer_decode_s32(&tf, prompt, n, ATTN_ROWS_LAST, logits, NULL));
 *   for (i = 0; i < steps; ++i) {
 *     ATTN_CHECK(attn_sample_greedy_s32(logits, cfg.vocab_size, &out[i]));
 *     if (i + 1 == steps) break;
 *     ATTN_CHECK(attn_transformer_decode_s32(&tf, &out[i], 1, ATTN_ROWS_LAST, logits, NULL));
 *   }
 *
 * Outputs are rows of output_dim numbers: vocab_size with a head (head not
 * ATTN_HEAD_NONE), embed_dim without; all n rows, or one (ATTN_ROWS_*, below). f32 models give floats; s8 and
 * s16 models int32 on one grid, real = out_scale * q (the _s32 entries: no float instruction at all; the
 * scale is copied out, not computed), or floats through attn_transformer_forward / _decode, which convert
 * each q as (float)((double)q * (double)out_scale) (the only float arithmetic, in an object file of its own
 * like attn_dequantize_*). Integer decoding gives the forward's integers byte for byte; f32 decoding the
 * forward's numbers within f32 rounding. */

/* The rows a forward or decode writes, its `rows` argument (C++
 * attn::OutputRows; once an int flag last_row_only, whose 0 and 1 keep their
 * meaning). Any other value: ATTN_ERR_BAD_SHAPE. */
#define ATTN_ROWS_ALL 0   /* out [n, output_dim] */
#define ATTN_ROWS_LAST 1  /* out [1, output_dim]: the last token's row (generation) */
#define ATTN_ROWS_FIRST 2 /* out [1, output_dim]: the first token's row (an encoder's [CLS]) */

/* TransformerConfig's enums (attn/transformer.h), as stored in the file. */
enum { ATTN_NORM_LAYER_NORM = 1, ATTN_NORM_RMS_NORM = 2 };
enum { ATTN_ACT_GELU = 1, ATTN_ACT_GELU_TANH = 2, ATTN_ACT_RELU = 3, ATTN_ACT_SILU = 4 };
enum { ATTN_HEAD_NONE = 0, ATTN_HEAD_TIED = 1, ATTN_HEAD_UNTIED = 2 };

/* A model's hyperparameters (C++ attn::TransformerConfig, field for field;
 * flags are 0 or 1 when read, any nonzero is true when set). A file's comes
 * from attn_model_transformer_config(); to describe a model by hand, start
 * from attn_transformer_config_init() (the C++ defaults), not from zeros. */
typedef struct attn_transformer_config {
  int32_t vocab_size;        /* rows of the token embedding, 1..2^24 */
  int32_t embed_dim;         /* E (hidden size) */
  int32_t num_layers;        /* 1..ATTN_MAX_LAYERS (64) */
  int32_t num_heads;         /* H */
  int32_t num_kv_heads;      /* 0: H (else divides H: grouped-query attention) */
  int32_t head_dim;          /* 0: E / H */
  int32_t ffn_dim;           /* F (intermediate size) */
  int32_t max_positions;     /* positions a sequence may reach */
  int32_t type_vocab_size;   /* token-type rows (BERT: 2; row 0 is added); 0: none */
  int32_t norm;              /* ATTN_NORM_* */
  float norm_eps;            /* finite, in (0, 1) */
  int32_t activation;        /* ATTN_ACT_* */
  int32_t head;              /* ATTN_HEAD_* */
  float rope_base;           /* 0: no rotary embedding */
  int32_t pre_norm;          /* 0: post-norm (BERT); 1: pre-norm (Llama) */
  int32_t gated_ffn;         /* W3 present (Llama) */
  int32_t attention_bias;    /* bq, bk, bv, bo */
  int32_t ffn_bias;          /* b1, b2 (and b3 when gated) */
  int32_t norm_bias;         /* LayerNorm bias (RMSNorm has none) */
  int32_t learned_positions; /* position embedding [max_positions, E] */
  int32_t embedding_norm;    /* a norm on the embeddings (BERT) */
  int32_t final_norm;        /* a norm after the last layer (Llama) */
  int32_t causal;            /* decoder: each token attends itself and earlier ones */
} attn_transformer_config;

/* Fill *config with the C++ defaults: everything 0 except norm
 * ATTN_NORM_LAYER_NORM, norm_eps 1e-5, activation ATTN_ACT_GELU and the
 * three biases (attention_bias, ffn_bias, norm_bias) 1. Errors:
 * ATTN_ERR_NULL_ARGUMENT. */
ATTN_C_NODISCARD attn_status attn_transformer_config_init(attn_transformer_config* config);

/* A loaded model file's hyperparameters and dtype (ATTN_DTYPE_*). Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE (model not loaded),
 * ATTN_ERR_NOT_A_MODEL (a file of attention blocks, not a whole model); on
 * error both outputs are zeroed. */
ATTN_C_NODISCARD attn_status attn_model_transformer_config(const attn_model* model,
                                                           attn_transformer_config* config,
                                                           attn_dtype* dtype);

/* *byte_vocab = 1 when the model's token ids 0..255 are the bytes 0..255
 * (text in and out without a tokenizer), else 0. Errors: as
 * attn_model_transformer_config. */
ATTN_C_NODISCARD attn_status attn_model_byte_vocab(const attn_model* model, int32_t* byte_vocab);

/* ---- plan: a validated config and shape, and its memory ----------------- */

/* Opaque, copyable, filled by attn_transformer_plan_init (C++ attn::TransformerPlan). */
typedef struct attn_transformer_plan {
  attn_storage_word_ opaque_[16]; /* 128 bytes */
} attn_transformer_plan;

/* Validate `config` for `dtype` and calls of 1..max_tokens tokens, and fill
 * *plan. capacity > 0 also plans decoding over a KV cache of that many
 * positions (causal configs only); 0 plans forwards only. tile_rows: rows of
 * the FFN and attention tiles (0: ATTN_TILE_ROWS).
 * Errors, in this order: ATTN_ERR_NULL_ARGUMENT; the model's
 * (ATTN_ERR_BAD_NUM_LAYERS, ATTN_ERR_BAD_VOCAB, ATTN_ERR_BAD_FFN_DIM,
 * ATTN_ERR_BAD_MAX_POSITIONS, ATTN_ERR_BAD_NORM, ATTN_ERR_BAD_ACTIVATION,
 * ATTN_ERR_BAD_HEAD); the attention block's, as attn_plan_init checks it for
 * max_tokens rows (ATTN_ERR_BAD_EMBED_DIM .. ATTN_ERR_BAD_ROPE,
 * ATTN_ERR_BAD_QUERY_LENGTH, ATTN_ERR_BAD_TILE_ROWS, ATTN_ERR_BAD_DTYPE for a
 * dtype this build leaves out); ATTN_ERR_SEQUENCE_TOO_LONG (max_tokens above
 * max_positions); ATTN_ERR_BAD_KEY_LENGTH (capacity negative or above
 * ATTN_MAX_SEQ); ATTN_ERR_NOT_CAUSAL (capacity > 0, config not causal);
 * ATTN_ERR_CAPACITY_PAST_POSITIONS (capacity > max_positions);
 * ATTN_ERR_SIZE_OVERFLOW. On error *plan is left unusable (ATTN_ERR_BAD_HANDLE). */
ATTN_C_NODISCARD attn_status attn_transformer_plan_init(attn_transformer_plan* plan,
                                                        const attn_transformer_config* config,
                                                        attn_dtype dtype, int32_t max_tokens,
                                                        int32_t capacity, int32_t tile_rows);

/* The C++ plan's two numbers: the scratch of one call (forward or decode,
 * given back on return) and the KV-cache state (0 without capacity).
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE; on error both are 0. */
ATTN_C_NODISCARD attn_status attn_transformer_plan_arena_bytes(const attn_transformer_plan* plan,
                                                               size_t* call_bytes, size_t* state_bytes);

/* The whole arena attn_transformer_init_* carves for this plan: the handle's
 * bookkeeping and layer weight table, the state, and the call scratch, each
 * rounded up to ATTN_ARENA_ALIGN. Errors: those of
 * attn_transformer_plan_arena_bytes, ATTN_ERR_SIZE_OVERFLOW. */
ATTN_C_NODISCARD attn_status attn_transformer_init_plan_arena_bytes(const attn_transformer_plan* plan,
                                                                    size_t* bytes);

/* ---- a model bound to an arena ------------------------------------------ */

/* Opaque: a pointer to the bookkeeping at the start of its arena, which
 * holds everything (the arena must outlive it; a copy is the same model,
 * not a second one). Zero-initialized or after a failed init: unusable
 * (ATTN_ERR_BAD_HANDLE). */
typedef struct attn_transformer {
  attn_storage_word_ opaque_[4]; /* 32 bytes */
} attn_transformer;

/* The arena attn_transformer_init needs for this model, max_tokens and
 * capacity (= attn_transformer_init_plan_arena_bytes of the plan it makes). Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_NOT_A_MODEL, and
 * those of attn_transformer_plan_init (with the file's config and dtype, the
 * default tile); on error *bytes is 0. */
ATTN_C_NODISCARD attn_status attn_transformer_init_arena_bytes(const attn_model* model, int32_t max_tokens,
                                                               int32_t capacity, size_t* bytes);

/* Bind a loaded model (of any dtype this build has) to `arena`
 * (ATTN_ARENA_ALIGN-aligned, arena_bytes >= attn_transformer_init_arena_bytes): plan it
 * for calls of up to max_tokens tokens and, with capacity > 0, decoding over
 * KV caches of `capacity` positions that keep the last `window` positions
 * (0: all of them, then ATTN_ERR_CACHE_FULL when full; window needs
 * capacity). The weights are read from the blob in place: it must outlive
 * the handle, as must the arena, which the handle owns from now on.
 * Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE (model),
 * ATTN_ERR_NOT_A_MODEL, those of attn_transformer_plan_init,
 * ATTN_ERR_BAD_WINDOW (outside [0, capacity]), ATTN_ERR_ARENA_MISALIGNED,
 * ATTN_ERR_ARENA_TOO_SMALL (checked before anything is written to the arena).
 * On error *transformer is unusable. */
ATTN_C_NODISCARD attn_status attn_transformer_init(attn_transformer* transformer, const attn_model* model,
                                                   int32_t max_tokens, int32_t capacity, int32_t window,
                                                   void* arena, size_t arena_bytes);

/* ---- the same in two buffers: state and scratch -------------------------- */
/* attn_transformer_init in two buffers, for parts whose fast RAM is small
 * (port/README.md, "Memory placement"):
 *   state    a decoder's decoding state (capacity > 0): its position and the
 *            KV caches, the bulk, e.g. SRAM or PSRAM; everything decoding
 *            keeps is here. 0 bytes for an encoder (capacity 0: may be NULL);
 *   scratch  everything else: the handle's bookkeeping (its first
 *            scratch_bytes - attn_transformer_plan_arena_bytes bytes: the
 *            weight table, a few hundred bytes a layer), then one call's
 *            scratch (its last attn_transformer_plan_arena_bytes bytes, which
 *            hold nothing from one call to the next), e.g. TCM / DTCM.
 * Both ATTN_ARENA_ALIGN-aligned, of at least the sizes
 * attn_transformer_init_split_bytes reports (exact: one byte fewer of either
 * is ATTN_ERR_ARENA_TOO_SMALL; their sum is attn_transformer_init_arena_bytes).
 * `attn emit-c MODEL --tokens-per-call N` writes the same two numbers as
 * constants for the target compiling them. tokens_per_call is
 * attn_transformer_init's max_tokens; the rest is as there. Errors: those of
 * attn_transformer_init_arena_bytes (on error both sizes are 0) and of
 * attn_transformer_init (ATTN_ERR_NULL_ARGUMENT also for a null scratch, or
 * a null state with capacity > 0), all checked before anything is written
 * to either buffer. */
ATTN_C_NODISCARD attn_status attn_transformer_init_split_bytes(const attn_model* model,
                                                               int32_t tokens_per_call, int32_t capacity,
                                                               size_t* state_bytes, size_t* scratch_bytes);
ATTN_C_NODISCARD attn_status attn_transformer_init_split(attn_transformer* transformer,
                                                         const attn_model* model, int32_t tokens_per_call,
                                                         int32_t capacity, int32_t window, void* state,
                                                         size_t state_size, void* scratch,
                                                         size_t scratch_size);

/* The model's dtype and the width of its output rows (vocab_size with a
 * head, embed_dim without). Errors: ATTN_ERR_NULL_ARGUMENT,
 * ATTN_ERR_BAD_HANDLE; on error both are 0. */
ATTN_C_NODISCARD attn_status attn_transformer_shape(const attn_transformer* transformer, attn_dtype* dtype,
                                                    int32_t* output_dim);

/* One forward of tokens [n] at positions 0..n-1 (causal when the config
 * says so), independent of any decoding state. out: [n, output_dim]
 * (ATTN_ROWS_ALL), or [1, output_dim] (ATTN_ROWS_LAST, ATTN_ROWS_FIRST).
 * Everything is checked before anything is written. Errors:
 * ATTN_ERR_NULL_ARGUMENT (tokens, out), ATTN_ERR_BAD_HANDLE,
 * ATTN_ERR_BAD_SHAPE (rows not an ATTN_ROWS_*), ATTN_ERR_BAD_QUERY_LENGTH (n < 1),
 * ATTN_ERR_SEQUENCE_TOO_LONG (n above max_tokens), ATTN_ERR_TOKEN_OUT_OF_RANGE
 * (a token outside [0, vocab_size)); s8 and s16 models also the integer
 * forward's ATTN_ERR_BAD_QUANT_PARAMS, ATTN_ERR_BIAS_OUT_OF_RANGE,
 * ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE. The float entry converts integer
 * outputs (above); the _s32 entry is for s8 and s16 models only
 * (ATTN_ERR_BAD_DTYPE for f32) and writes *out_scale unless out_scale is
 * NULL (the scale is the model's: one call with it is enough). */
ATTN_C_NODISCARD attn_status attn_transformer_forward(const attn_transformer* transformer,
                                                      const int32_t* tokens, int32_t n, int rows, float* out);
ATTN_C_NODISCARD attn_status attn_transformer_forward_s32(const attn_transformer* transformer,
                                                          const int32_t* tokens, int32_t n, int rows,
                                                          int32_t* out, float* out_scale);

/* Append tokens [n] to the decoding state (a prompt: prefill; one token: a
 * step) at positions length .. length + n - 1, and write their outputs as
 * attn_transformer_forward over the whole sequence would (rows as there).
 * Errors: those of attn_transformer_forward, and ATTN_ERR_PLAN_MISMATCH (a
 * handle without capacity), ATTN_ERR_SEQUENCE_TOO_LONG (positions past
 * max_positions), ATTN_ERR_CACHE_FULL (no window and no room); on error the
 * state is unchanged. */
ATTN_C_NODISCARD attn_status attn_transformer_decode(attn_transformer* transformer, const int32_t* tokens,
                                                     int32_t n, int rows, float* out);
ATTN_C_NODISCARD attn_status attn_transformer_decode_s32(attn_transformer* transformer, const int32_t* tokens,
                                                         int32_t n, int rows, int32_t* out, float* out_scale);

/* Forget the decoded tokens (the next one sits at position 0), and the number
 * decoded so far (the next token's position). Errors: ATTN_ERR_NULL_ARGUMENT,
 * ATTN_ERR_BAD_HANDLE, ATTN_ERR_PLAN_MISMATCH (a handle without capacity). */
ATTN_C_NODISCARD attn_status attn_transformer_reset(attn_transformer* transformer);
ATTN_C_NODISCARD attn_status attn_transformer_length(const attn_transformer* transformer, int32_t* length);

/* Set (run NULL: clear) the parallel-for every later forward and decode of
 * this bound model splits its large products over (attn_plan_set_parallel
 * above has the contract). The handle's copies share it. Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_PARALLEL_NOT_BUILT. */
ATTN_C_NODISCARD attn_status attn_transformer_set_parallel(attn_transformer* transformer,
                                                           attn_parallel_fn run, void* ctx, int32_t workers);

#if ATTN_WITH_F32
/* ---- f32 weights from the caller's own arrays --------------------------- */
/* The f32 model from arrays in memory instead of a file (C++
 * attn::TransformerWeightsF32 without the host-only packed panels): the same
 * shapes as attn/transformer.h; NULL for what the config leaves out. The
 * integer models have no such route: their tables come from the converter
 * (C++ attn::quantize_transformer_s8 / _s16 or `attn quantize`), which writes
 * them to a model file. */
typedef struct attn_norm_weights_f32 {
  const float* weight; /* [E] */
  const float* bias;   /* [E]; LayerNorm with norm_bias only */
} attn_norm_weights_f32;

typedef struct attn_ffn_weights_f32 {
  const float* w1; /* [F, E] */
  const float* b1; /* [F]   (ffn_bias) */
  const float* w2; /* [E, F] */
  const float* b2; /* [E]   (ffn_bias) */
  const float* w3; /* [F, E] (gated_ffn) */
  const float* b3; /* [F]   (gated_ffn and ffn_bias) */
} attn_ffn_weights_f32;

typedef struct attn_layer_weights_f32 {
  attn_weights_f32 attention; /* self-attention, kdim = vdim = E */
  attn_norm_weights_f32 norm1;
  attn_norm_weights_f32 norm2;
  attn_ffn_weights_f32 ffn;
} attn_layer_weights_f32;

typedef struct attn_transformer_weights_f32 {
  const float* token_embedding;         /* [vocab, E] */
  const float* position_embedding;      /* [max_positions, E] (learned_positions) */
  const float* type_embedding;          /* [type_vocab, E] (type_vocab_size > 0) */
  attn_norm_weights_f32 embedding_norm; /* (embedding_norm) */
  attn_norm_weights_f32 final_norm;     /* (final_norm) */
  const float* lm_head;                 /* [vocab, E] (ATTN_HEAD_UNTIED) */
  const attn_layer_weights_f32* layers; /* [num_layers]: copied at init, may go after */
} attn_transformer_weights_f32;

/* As attn_transformer_init, for an f32 plan (capacity and tile from the
 * plan; arena_bytes >= attn_transformer_init_plan_arena_bytes) and the caller's arrays,
 * which must outlive the handle (the layer table is copied into the arena).
 * Errors: ATTN_ERR_NULL_ARGUMENT (also: layers NULL, or a weight the config
 * needs), ATTN_ERR_BAD_HANDLE (plan), ATTN_ERR_BAD_DTYPE (a plan of another
 * dtype), ATTN_ERR_BAD_WINDOW, ATTN_ERR_ARENA_MISALIGNED,
 * ATTN_ERR_ARENA_TOO_SMALL. */
ATTN_C_NODISCARD attn_status attn_transformer_init_f32(attn_transformer* transformer,
                                                       const attn_transformer_plan* plan,
                                                       const attn_transformer_weights_f32* weights,
                                                       int32_t window, void* arena, size_t arena_bytes);
#endif /* ATTN_WITH_F32 */

/* -------------------------------------------------------------- sampler --- */
/* The next token from logits (C++ attn/sampler.h): greedy (temperature 0:
 * the largest logit, the lowest id on ties), or a draw from
 * softmax(logits / temperature) over the top_k largest (0: all; ties at the
 * k-th all kept) with the caller's generator: the same seed and logits give
 * the same tokens. NaN and -inf logits are never drawn. A logit equal to
 * the largest weighs exactly 1, so a +inf logit is always drawn, and a
 * temperature whose inverse is +inf (subnormal, below about 2.9e-39) draws
 * only among the largest logits (greedy; ties drawn uniformly). Integer
 * logits weigh scale * (logit - largest) / temperature: scale * logit may
 * exceed float's range. */

/* xorshift64* state (8 bytes). Zero-initialized it is unusable
 * (ATTN_ERR_BAD_HANDLE): seed it first. */
typedef struct attn_rng {
  attn_storage_word_ opaque_[1]; /* 8 bytes */
} attn_rng;

/* Seed *rng; every seed, 0 included, gives a usable generator. Errors:
 * ATTN_ERR_NULL_ARGUMENT. */
ATTN_C_NODISCARD attn_status attn_rng_seed(attn_rng* rng, uint64_t seed);
/* The next 32 random bits. Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE. */
ATTN_C_NODISCARD attn_status attn_rng_next(attn_rng* rng, uint32_t* bits);

/* Sample from logits [n]. rng may be NULL for greedy decoding. Errors:
 * ATTN_ERR_NULL_ARGUMENT (logits, token; rng when temperature > 0),
 * ATTN_ERR_BAD_HANDLE (rng not NULL and never seeded), ATTN_ERR_BAD_SHAPE
 * (n < 1), ATTN_ERR_BAD_SAMPLER (temperature negative or not finite, top_k
 * outside [0, n], or no drawable logit). On error *token is -1. */
ATTN_C_NODISCARD attn_status attn_sample(const float* logits, int32_t n, float temperature, int32_t top_k,
                                         attn_rng* rng, int32_t* token);

/* The same for integer logits, real = scale * logits[i] (the out_scale of
 * attn_transformer_forward_s32): also ATTN_ERR_BAD_QUANT_PARAMS (scale not
 * finite and > 0). */
ATTN_C_NODISCARD attn_status attn_sample_s32(const int32_t* logits, int32_t n, float scale, float temperature,
                                             int32_t top_k, attn_rng* rng, int32_t* token);

/* Greedy decoding of integer logits with integers only (no float argument,
 * instruction or call: for cores without an FPU): the index of the largest
 * logit, the lowest on ties (= attn_sample_s32 at temperature 0). Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_SHAPE (n < 1); on error *token is -1. */
ATTN_C_NODISCARD attn_status attn_sample_greedy_s32(const int32_t* logits, int32_t n, int32_t* token);

/* ------------------------------------------------------------ tokenizer --- */

/* A loaded, validated tokenizer blob (layout: src/tokenizer/README.md):
 * attn_tokenizer_load() fills it. It points into the blob, which must stay
 * in place and unchanged while the tokenizer is used. */
typedef struct attn_tokenizer {
  attn_storage_word_ opaque_[12]; /* 96 bytes */
} attn_tokenizer;

/* What attn_tokenizer_decode keeps between ids (an unfinished UTF-8
 * character). Zero it ({0} or memset) before the first id. */
typedef struct attn_tokenizer_decode_state {
  uint8_t bytes_[8];
} attn_tokenizer_decode_state;

/* Special tokens, for attn_tokenizer_special. */
#define ATTN_TOKEN_UNK 0
#define ATTN_TOKEN_BOS 1
#define ATTN_TOKEN_EOS 2
#define ATTN_TOKEN_PAD 3
#define ATTN_TOKEN_CLS 4
#define ATTN_TOKEN_SEP 5
#define ATTN_TOKEN_MASK 6

/* Check the blob (4-byte aligned) and fill *tokenizer. Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BLOB_MISALIGNED, ATTN_ERR_TRUNCATED,
 * ATTN_ERR_FILE_SIZE_MISMATCH, ATTN_ERR_BAD_MAGIC, ATTN_ERR_UNSUPPORTED_VERSION,
 * ATTN_ERR_BAD_HEADER_SIZE, ATTN_ERR_BAD_RESERVED, ATTN_ERR_UNKNOWN_FLAGS,
 * ATTN_ERR_BAD_VOCAB, ATTN_ERR_OFFSET_OUT_OF_BOUNDS, ATTN_ERR_BAD_TOKENIZER_ALGORITHM
 * .. ATTN_ERR_BAD_BYTE_TABLE, for byte-level BPE ATTN_ERR_BAD_MERGES,
 * ATTN_ERR_UNSORTED_MERGES, ATTN_ERR_BAD_PRE_TOKENIZER, and for WordPiece
 * ATTN_ERR_BAD_WORD_LIMIT. On error *tokenizer is left unusable. */
ATTN_C_NODISCARD attn_status attn_tokenizer_load(attn_tokenizer* tokenizer, const void* blob, size_t size);

/* The tokenizer a model file carries (its model.tokenizer section, checked
 * when the model was loaded), read in place from the model's blob. Errors:
 * ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE, ATTN_ERR_NOT_FOUND (the file
 * has no tokenizer). */
ATTN_C_NODISCARD attn_status attn_model_tokenizer(const attn_model* model, attn_tokenizer* tokenizer);

/* The vocabulary size; the id of a special token (ATTN_TOKEN_*), -1 if the
 * blob has none. */
ATTN_C_NODISCARD attn_status attn_tokenizer_vocab_size(const attn_tokenizer* tokenizer, int32_t* vocab_size);
ATTN_C_NODISCARD attn_status attn_tokenizer_special(const attn_tokenizer* tokenizer, int32_t which,
                                                    int32_t* id);

/* The scratch bytes attn_tokenizer_encode needs, and the most ids it can
 * write, for a text of text_len bytes (SIZE_MAX on overflow). */
ATTN_C_NODISCARD attn_status attn_tokenizer_sizes(const attn_tokenizer* tokenizer, size_t text_len,
                                                  size_t* scratch_bytes, size_t* max_ids);

/* Encode text[0, len) into ids[0, *n) (no BOS/EOS added), with scratch
 * (ATTN_ARENA_ALIGN-aligned) of scratch_bytes. Errors: ATTN_ERR_NULL_ARGUMENT,
 * ATTN_ERR_BAD_HANDLE, ATTN_ERR_ARENA_MISALIGNED, ATTN_ERR_ARENA_TOO_SMALL,
 * ATTN_ERR_BUFFER_TOO_SMALL (more than max_ids ids). */
ATTN_C_NODISCARD attn_status attn_tokenizer_encode(const attn_tokenizer* tokenizer, const char* text,
                                                   size_t len, int32_t* ids, size_t max_ids, void* scratch,
                                                   size_t scratch_bytes, size_t* n);

/* The most bytes one attn_tokenizer_decode or attn_tokenizer_decode_flush
 * call writes for this tokenizer (3 per byte of its longest piece, plus
 * 16): an output buffer this large never gets ATTN_ERR_BUFFER_TOO_SMALL. */
ATTN_C_NODISCARD attn_status attn_tokenizer_max_decode_bytes(const attn_tokenizer* tokenizer, size_t* bytes);

/* Write the text of one id to out[0, *n) (cap >= the max_decode_bytes
 * above always suffices); attn_tokenizer_decode_flush at the end writes an unfinished
 * character as U+FFFD. Errors: ATTN_ERR_NULL_ARGUMENT, ATTN_ERR_BAD_HANDLE,
 * ATTN_ERR_TOKEN_OUT_OF_RANGE, ATTN_ERR_BUFFER_TOO_SMALL (nothing written). */
ATTN_C_NODISCARD attn_status attn_tokenizer_decode(const attn_tokenizer* tokenizer, int32_t id,
                                                   attn_tokenizer_decode_state* state, char* out, size_t cap,
                                                   size_t* n);
ATTN_C_NODISCARD attn_status attn_tokenizer_decode_flush(const attn_tokenizer* tokenizer,
                                                         attn_tokenizer_decode_state* state, char* out,
                                                         size_t cap, size_t* n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTN_ATTN_H_ */
