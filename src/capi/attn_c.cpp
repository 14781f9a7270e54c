// attn_c.cpp: the C99 API (attn/attn.h) over the C++ library.
//
// Handles are byte storage in the caller's memory. Each holds a magic word and
// a trivially copyable C++ object, moved in and out with memcpy (no aliasing
// or lifetime questions, no heap); a zeroed or failed handle has no magic and
// every call on it returns ATTN_ERR_BAD_HANDLE.
#include <cstring>
#include <type_traits>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/attn.h"
#include "attn/decode.h"
#include "attn/model.h"

namespace attn {
namespace {

// The C codes are the C++ codes: one list, checked both ways at compile time
// here and by tests/capi_test.cpp against status_name() at run time.
#define ATTN_C_STATUSES(X)                             \
  X(ATTN_OK, kOk)                                      \
  X(ATTN_ERR_NULL_ARGUMENT, kNullArgument)             \
  X(ATTN_ERR_BAD_EMBED_DIM, kBadEmbedDim)              \
  X(ATTN_ERR_BAD_NUM_HEADS, kBadNumHeads)              \
  X(ATTN_ERR_BAD_HEAD_DIM, kBadHeadDim)                \
  X(ATTN_ERR_BAD_KEY_DIM, kBadKeyDim)                  \
  X(ATTN_ERR_BAD_VALUE_DIM, kBadValueDim)              \
  X(ATTN_ERR_BAD_QUERY_LENGTH, kBadQueryLength)        \
  X(ATTN_ERR_BAD_KEY_LENGTH, kBadKeyLength)            \
  X(ATTN_ERR_BAD_KEY_PADDING, kBadKeyPadding)          \
  X(ATTN_ERR_BAD_TILE_ROWS, kBadTileRows)              \
  X(ATTN_ERR_BAD_SHAPE, kBadShape)                     \
  X(ATTN_ERR_BAD_DTYPE, kBadDtype)                     \
  X(ATTN_ERR_PLAN_MISMATCH, kPlanMismatch)             \
  X(ATTN_ERR_BAD_CAUSAL_OFFSET, kBadCausalOffset)      \
  X(ATTN_ERR_BAD_KV_HEADS, kBadKvHeads)                \
  X(ATTN_ERR_BAD_ROPE, kBadRope)                       \
  X(ATTN_ERR_BAD_POSITION, kBadPosition)               \
  X(ATTN_ERR_BAD_WINDOW, kBadWindow)                   \
  X(ATTN_ERR_BAD_HANDLE, kBadHandle)                   \
  X(ATTN_ERR_ARENA_TOO_SMALL, kArenaTooSmall)          \
  X(ATTN_ERR_ARENA_MISALIGNED, kArenaMisaligned)       \
  X(ATTN_ERR_BUFFER_TOO_SMALL, kBufferTooSmall)        \
  X(ATTN_ERR_CACHE_FULL, kCacheFull)                   \
  X(ATTN_ERR_BAD_MAGIC, kBadMagic)                     \
  X(ATTN_ERR_UNSUPPORTED_VERSION, kUnsupportedVersion) \
  X(ATTN_ERR_BAD_HEADER_SIZE, kBadHeaderSize)          \
  X(ATTN_ERR_TRUNCATED, kTruncated)                    \
  X(ATTN_ERR_FILE_SIZE_MISMATCH, kFileSizeMismatch)    \
  X(ATTN_ERR_CRC_MISMATCH, kCrcMismatch)               \
  X(ATTN_ERR_BAD_ALIGNMENT, kBadAlignment)             \
  X(ATTN_ERR_SIZE_OVERFLOW, kSizeOverflow)             \
  X(ATTN_ERR_OFFSET_OUT_OF_BOUNDS, kOffsetOutOfBounds) \
  X(ATTN_ERR_TENSOR_OVERLAP, kTensorOverlap)           \
  X(ATTN_ERR_TENSOR_MISALIGNED, kTensorMisaligned)     \
  X(ATTN_ERR_BAD_DIMS, kBadDims)                       \
  X(ATTN_ERR_DIMS_TOO_LARGE, kDimsTooLarge)            \
  X(ATTN_ERR_UNKNOWN_DTYPE, kUnknownDtype)             \
  X(ATTN_ERR_UNKNOWN_ROLE, kUnknownRole)               \
  X(ATTN_ERR_UNKNOWN_LAYOUT, kUnknownLayout)           \
  X(ATTN_ERR_DUPLICATE_ROLE, kDuplicateRole)           \
  X(ATTN_ERR_MISSING_TENSOR, kMissingTensor)           \
  X(ATTN_ERR_DIMS_MISMATCH, kDimsMismatch)             \
  X(ATTN_ERR_BAD_BLOCK, kBadBlock)                     \
  X(ATTN_ERR_BAD_TENSOR_NAME, kBadTensorName)          \
  X(ATTN_ERR_BAD_BYTE_SIZE, kBadByteSize)              \
  X(ATTN_ERR_BLOCK_INDEX, kBlockIndex)                 \
  X(ATTN_ERR_NOT_FOUND, kNotFound)                     \
  X(ATTN_ERR_BAD_RESERVED, kBadReserved)               \
  X(ATTN_ERR_UNKNOWN_FLAGS, kUnknownFlags)             \
  X(ATTN_ERR_BLOB_MISALIGNED, kBlobMisaligned)         \
  X(ATTN_ERR_TOO_MANY_ENTRIES, kTooManyEntries)        \
  X(ATTN_ERR_DUPLICATE_NAME, kDuplicateName)           \
  X(ATTN_ERR_DTYPE_MISMATCH, kDtypeMismatch)           \
  X(ATTN_ERR_QUANTIZED_VARIANT, kQuantizedVariant)     \
  X(ATTN_ERR_BAD_QUANT_PARAMS, kBadQuantParams)        \
  X(ATTN_ERR_UNSUPPORTED_MASK, kUnsupportedMask)       \
  X(ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE, kRopePositionOutOfRange)

#define ATTN_C_CHECK_CODE(c_name, cpp_name) \
  static_assert((c_name) == static_cast<int32_t>(Status::cpp_name), #c_name " differs from " #cpp_name);
ATTN_C_STATUSES(ATTN_C_CHECK_CODE)
#undef ATTN_C_CHECK_CODE

static_assert(ATTN_DTYPE_F32 == static_cast<int32_t>(DType::kF32), "dtype codes");
static_assert(ATTN_DTYPE_S8 == static_cast<int32_t>(DType::kS8), "dtype codes");
static_assert(ATTN_DTYPE_S16 == static_cast<int32_t>(DType::kS16), "dtype codes");

attn_status to_c(Status s) { return static_cast<attn_status>(s); }

#define ATTN_TRY_C(expr)               \
  do {                                 \
    const Status attn_try_c_ = (expr); \
    if (attn_try_c_ != Status::kOk) {  \
      return to_c(attn_try_c_);        \
    }                                  \
  } while (0)

// What lives in an attn_plan / attn_model: a magic word, then the C++ object.
constexpr uint32_t kPlanMagic = 0x4E414C50u;   // "PLAN"
constexpr uint32_t kModelMagic = 0x4C444F4Du;  // "MODL"
constexpr uint32_t kCacheMagic = 0x4548434Bu;  // "KCHE"

struct PlanBox {
  uint32_t magic;
  Plan plan;
};
struct ModelBox {
  uint32_t magic;
  Model model;
};
// One magic per cache dtype: a cache handle cast to another dtype's is no handle.
constexpr uint32_t kCacheS8Magic = 0x3853434Bu;   // "KCS8"
constexpr uint32_t kCacheS16Magic = 0x3631434Bu;  // "KC16"

template <class T>
struct CacheBox {
  uint32_t magic;
  KvCache<T> cache;
};
template <class T, class Handle>
constexpr bool fits_handle() {
  return std::is_trivially_copyable<CacheBox<T>>::value && sizeof(CacheBox<T>) <= sizeof(Handle) &&
         alignof(CacheBox<T>) <= alignof(Handle);
}
#if ATTN_WITH_F32
static_assert(fits_handle<float, attn_kv_cache_f32>(),
              "grow or align attn_kv_cache_f32's storage in attn/attn.h");
#endif
#if ATTN_WITH_S8
static_assert(fits_handle<int8_t, attn_kv_cache_s8>(),
              "grow or align attn_kv_cache_s8's storage in attn/attn.h");
#endif
#if ATTN_WITH_S16
static_assert(fits_handle<int16_t, attn_kv_cache_s16>(),
              "grow or align attn_kv_cache_s16's storage in attn/attn.h");
#endif
static_assert(std::is_trivially_copyable<PlanBox>::value, "attn_plan is copied with memcpy");
static_assert(std::is_trivially_copyable<ModelBox>::value, "attn_model is copied with memcpy");
static_assert(sizeof(PlanBox) <= sizeof(attn_plan), "grow attn_plan's storage in attn/attn.h");
static_assert(sizeof(ModelBox) <= sizeof(attn_model), "grow attn_model's storage in attn/attn.h");
static_assert(alignof(PlanBox) <= alignof(attn_plan), "attn_plan's storage is under-aligned");
static_assert(alignof(ModelBox) <= alignof(attn_model), "attn_model's storage is under-aligned");

template <class Box, class Handle>
void store(Handle* h, const Box& box) {
  std::memset(h, 0, sizeof(Handle));
  std::memcpy(h, &box, sizeof(Box));
}

template <class Box, class Handle>
Status fetch(const Handle* h, uint32_t magic, Box* box) {
  if (h == nullptr) return Status::kNullArgument;
  std::memcpy(static_cast<void*>(box), h, sizeof(Box));  // trivially copyable
  return box->magic == magic ? Status::kOk : Status::kBadHandle;
}

AttentionConfig to_cpp(const attn_config& c) {
  AttentionConfig out;
  out.embed_dim = c.embed_dim;
  out.num_heads = c.num_heads;
  out.head_dim = c.head_dim;
  out.kdim = c.kdim;
  out.vdim = c.vdim;
  out.bias = c.bias != 0;
  out.num_kv_heads = c.num_kv_heads;
  out.rope_base = c.rope_base;
  return out;
}

attn_config to_c(const AttentionConfig& c) {
  attn_config out;
  std::memset(&out, 0, sizeof out);
  out.embed_dim = c.embed_dim;
  out.num_heads = c.num_heads;
  out.head_dim = c.resolved_head_dim();
  out.kdim = c.resolved_kdim();
  out.vdim = c.resolved_vdim();
  out.bias = c.bias ? 1 : 0;
  out.num_kv_heads = c.resolved_kv_heads();
  out.rope_base = c.rope_base;
  return out;
}

Mask to_cpp(const attn_mask* mask) {
  Mask m;  // a NULL mask: every key takes part
  if (mask != nullptr) {
    m.causal = mask->causal != 0;
    m.causal_offset = mask->causal_offset;
    m.window = mask->window;
    m.key_length = mask->key_padding != 0 ? mask->key_length : Mask::kAllKeys;
    m.additive = mask->additive;
    m.additive_stride = mask->additive_stride;
  }
  return m;
}

// The checks every forward shares, then forward(plan, arena) on the C++ side.
template <class Forward>
attn_status run_forward(const attn_plan* plan, const void* weights, const void* io, void* buffer,
                        size_t bytes, Forward forward) {
  if (weights == nullptr || io == nullptr) return to_c(Status::kNullArgument);
  PlanBox box;
  ATTN_TRY_C(fetch(plan, kPlanMagic, &box));
  Arena arena;
  ATTN_TRY_C(arena.init(buffer, bytes));
  return to_c(forward(box.plan, arena));
}

#if ATTN_WITH_F32
WeightsF32 to_cpp(const attn_weights_f32& c) {
  WeightsF32 w;
  w.wq = c.wq;
  w.wk = c.wk;
  w.wv = c.wv;
  w.wo = c.wo;
  w.bq = c.bq;
  w.bk = c.bk;
  w.bv = c.bv;
  w.bo = c.bo;
  return w;
}
#endif

#if ATTN_WITH_S8 || ATTN_WITH_S16
FusedSoftmaxParams to_cpp(const attn_softmax_fixed& s) {
  FusedSoftmaxParams out;
  out.exp_multiplier = s.exp_multiplier;
  out.exp_shift = s.exp_shift;
  out.diff_limit = s.diff_limit;
  out.score_shift = s.score_shift;
  return out;
}
#endif

// The C side of kv_cache_init_* / kv_cache_reset / decode_*, for any dtype.
template <class T, class Handle, class Init>
attn_status cache_init(Handle* cache, uint32_t magic, const attn_plan* plan, int32_t window, void* buffer,
                       size_t buffer_bytes, Init init) {
  if (cache == nullptr) return to_c(Status::kNullArgument);
  std::memset(cache, 0, sizeof *cache);
  PlanBox plan_box;
  ATTN_TRY_C(fetch(plan, kPlanMagic, &plan_box));
  // The cache keeps pointers into `buffer`, not into this Arena: it may go.
  Arena arena;
  ATTN_TRY_C(arena.init(buffer, buffer_bytes));
  CacheBox<T> box;
  box.magic = magic;
  ATTN_TRY_C(init(plan_box.plan, window, arena, &box.cache));
  store(cache, box);
  return ATTN_OK;
}

template <class T, class Handle>
attn_status cache_reset(Handle* cache, uint32_t magic) {
  CacheBox<T> box;
  ATTN_TRY_C(fetch(cache, magic, &box));
  ATTN_TRY_C(kv_cache_reset(&box.cache));
  store(cache, box);
  return ATTN_OK;
}

template <class T, class Handle>
attn_status cache_length(const Handle* cache, uint32_t magic, int32_t* length, int32_t* next_position) {
  if (length == nullptr || next_position == nullptr) return to_c(Status::kNullArgument);
  *length = 0;
  *next_position = 0;
  CacheBox<T> box;
  ATTN_TRY_C(fetch(cache, magic, &box));
  *length = box.cache.length;
  *next_position = box.cache.next_position();
  return ATTN_OK;
}

// decode(plan, cache, arena) on the C++ side, the cache stored back after
// (its length and start moved, or not on error).
template <class T, class Handle, class Decode>
attn_status run_decode(const attn_plan* plan, const void* weights, Handle* cache, uint32_t magic,
                       void* buffer, size_t bytes, Decode decode) {
  CacheBox<T> box;
  ATTN_TRY_C(fetch(cache, magic, &box));
  const attn_status s = run_forward(plan, weights, cache, buffer, bytes,
                                    [&](const Plan& p, Arena& a) { return decode(p, &box.cache, a); });
  store(cache, box);
  return s;
}

#if ATTN_WITH_S8
WeightsS8 to_cpp(const attn_weights_s8& c) {
  const auto proj = [](const attn_projection_s8& p) {
    ProjectionS8 out;
    out.weight = p.weight;
    out.bias = p.bias;
    out.multiplier = p.multiplier;
    out.shift = p.shift;
    return out;
  };
  WeightsS8 w;
  w.q = proj(c.q);
  w.k = proj(c.k);
  w.v = proj(c.v);
  w.o = proj(c.o);
  w.q_zero_point = c.q_zero_point;
  w.k_zero_point = c.k_zero_point;
  w.v_zero_point = c.v_zero_point;
  w.context_zero_point = c.context_zero_point;
  w.output_zero_point = c.output_zero_point;
  w.softmax = to_cpp(c.softmax);
  w.context_multiplier = c.context_multiplier;
  w.context_shift = c.context_shift;
  w.rope = RopeTable{c.rope.cos, c.rope.sin, c.rope.positions};
  return w;
}
#endif

#if ATTN_WITH_S16
WeightsS16 to_cpp(const attn_weights_s16& c) {
  const auto proj = [](const attn_projection_s16& p) {
    ProjectionS16 out;
    out.weight = p.weight;
    out.bias = p.bias;
    out.multiplier = p.multiplier;
    out.shift = p.shift;
    return out;
  };
  WeightsS16 w;
  w.q = proj(c.q);
  w.k = proj(c.k);
  w.v = proj(c.v);
  w.o = proj(c.o);
  w.softmax = to_cpp(c.softmax);
  w.context_multiplier = c.context_multiplier;
  w.context_shift = c.context_shift;
  w.rope = RopeTable{c.rope.cos, c.rope.sin, c.rope.positions};
  return w;
}
#endif

Status model_block(const attn_model* model, uint32_t index, Block* block) {
  ModelBox box;
  ATTN_TRY(fetch(model, kModelMagic, &box));
  return box.model.block(index, block);
}

}  // namespace
}  // namespace attn

using attn::Status;

extern "C" {

const char* attn_status_name(attn_status status) {
  switch (status) {
#define ATTN_C_NAME_CASE(c_name, cpp_name) \
  case c_name:                             \
    return #c_name;
    ATTN_C_STATUSES(ATTN_C_NAME_CASE)
#undef ATTN_C_NAME_CASE
    default:
      return "ATTN_ERR_UNKNOWN";
  }
}

attn_status attn_plan_init(attn_plan* plan, const attn_config* config, attn_dtype dtype, int32_t query_len,
                           int32_t key_len, int32_t tile_rows) {
  if (plan == nullptr || config == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(plan, 0, sizeof *plan);
  attn::PlanBox box;
  box.magic = attn::kPlanMagic;
  const Status s = attn::plan_attention(attn::to_cpp(*config), static_cast<attn::DType>(dtype), query_len,
                                        key_len, &box.plan, tile_rows == 0 ? ATTN_TILE_ROWS : tile_rows);
  if (s == Status::kOk) attn::store(plan, box);
  return attn::to_c(s);
}

attn_status attn_plan_arena_bytes(const attn_plan* plan, size_t* bytes) {
  if (bytes == nullptr) return attn::to_c(Status::kNullArgument);
  *bytes = 0;
  attn::PlanBox box;
  const Status s = attn::fetch(plan, attn::kPlanMagic, &box);
  if (s == Status::kOk) *bytes = box.plan.arena_bytes;
  return attn::to_c(s);
}

attn_status attn_model_load(attn_model* model, const void* blob, size_t size) {
  if (model == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(model, 0, sizeof *model);
  attn::ModelBox box;
  box.magic = attn::kModelMagic;
  const Status s = attn::Model::load(blob, size, &box.model);
  if (s == Status::kOk) attn::store(model, box);
  return attn::to_c(s);
}

attn_status attn_model_block_count(const attn_model* model, uint32_t* count) {
  if (count == nullptr) return attn::to_c(Status::kNullArgument);
  *count = 0;
  attn::ModelBox box;
  const Status s = attn::fetch(model, attn::kModelMagic, &box);
  if (s == Status::kOk) *count = box.model.block_count();
  return attn::to_c(s);
}

attn_status attn_model_block(const attn_model* model, uint32_t index, attn_block_info* info) {
  if (info == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(info, 0, sizeof *info);
  attn::Block block;
  const Status s = attn::model_block(model, index, &block);
  if (s != Status::kOk) return attn::to_c(s);
  info->config = attn::to_c(block.config);
  info->dtype = static_cast<attn_dtype>(block.dtype);
  return ATTN_OK;
}

attn_status attn_model_find_tensor(const attn_model* model, const char* name, attn_tensor_info* info) {
  if (info == nullptr || name == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(info, 0, sizeof *info);
  attn::ModelBox box;
  ATTN_CHECK(attn::to_c(attn::fetch(model, attn::kModelMagic, &box)));
  attn::TensorView v;
  ATTN_CHECK(attn::to_c(box.model.find_tensor(name, &v)));
  info->name = v.name;
  info->dtype = static_cast<attn_dtype>(v.dtype);
  info->role = static_cast<int32_t>(v.role);
  info->rank = v.rank;
  for (int i = 0; i < 4; ++i) info->dims[i] = v.dims[i];
  info->block = v.block;
  info->data = v.data;
  info->byte_size = v.byte_size;
  return ATTN_OK;
}

attn_status attn_plan_init_decode(attn_plan* plan, const attn_config* config, attn_dtype dtype,
                                  int32_t max_rows, int32_t capacity, int32_t tile_rows) {
  if (plan == nullptr || config == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(plan, 0, sizeof *plan);
  attn::PlanBox box;
  box.magic = attn::kPlanMagic;
  const Status s = attn::plan_decode(attn::to_cpp(*config), static_cast<attn::DType>(dtype), max_rows,
                                     capacity, &box.plan, tile_rows == 0 ? ATTN_TILE_ROWS : tile_rows);
  if (s == Status::kOk) attn::store(plan, box);
  return attn::to_c(s);
}

attn_status attn_kv_cache_bytes(const attn_plan* plan, size_t* bytes) {
  if (bytes == nullptr) return attn::to_c(Status::kNullArgument);
  *bytes = 0;
  attn::PlanBox box;
  ATTN_CHECK(attn::to_c(attn::fetch(plan, attn::kPlanMagic, &box)));
  if (!box.plan.decode) return attn::to_c(Status::kPlanMismatch);
  *bytes = attn::kv_cache_arena_bytes(box.plan.config, box.plan.dtype, box.plan.key_len);
  return ATTN_OK;
}

#if ATTN_WITH_F32

attn_status attn_model_block_weights_f32(const attn_model* model, uint32_t index, attn_weights_f32* weights) {
  if (weights == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(weights, 0, sizeof *weights);
  attn::Block block;
  ATTN_CHECK(attn::to_c(attn::model_block(model, index, &block)));
  if (block.dtype != attn::DType::kF32) return attn::to_c(Status::kBadDtype);
  const attn::WeightsF32& w = block.f32;
  *weights = attn_weights_f32{w.wq, w.wk, w.wv, w.wo, w.bq, w.bk, w.bv, w.bo};
  return ATTN_OK;
}

attn_status attn_forward_f32(const attn_plan* plan, const attn_weights_f32* weights, const attn_mask* mask,
                             const attn_io_f32* io, void* arena, size_t arena_bytes) {
  return attn::run_forward(plan, weights, io, arena, arena_bytes, [&](const attn::Plan& p, attn::Arena& a) {
    const attn::WeightsF32 w = attn::to_cpp(*weights);
    attn::IoF32 x;
    x.query = io->query;
    x.key = io->key;
    x.value = io->value;
    x.output = io->output;
    x.attn_weights = io->attn_weights;
    x.query_position = io->query_position;
    return attn::forward_f32(p, w, attn::to_cpp(mask), x, a);
  });
}

attn_status attn_kv_cache_init_f32(attn_kv_cache_f32* cache, const attn_plan* plan, int32_t window,
                                   void* buffer, size_t buffer_bytes) {
  return attn::cache_init<float>(cache, attn::kCacheMagic, plan, window, buffer, buffer_bytes,
                                 [](const attn::Plan& p, int32_t win, attn::Arena& a, attn::KvCacheF32* c) {
                                   return attn::kv_cache_init_f32(p, win, a, c);
                                 });
}

attn_status attn_kv_cache_reset(attn_kv_cache_f32* cache) {
  return attn::cache_reset<float>(cache, attn::kCacheMagic);
}

attn_status attn_kv_cache_length(const attn_kv_cache_f32* cache, int32_t* length, int32_t* next_position) {
  return attn::cache_length<float>(cache, attn::kCacheMagic, length, next_position);
}

attn_status attn_decode_f32(const attn_plan* plan, const attn_weights_f32* weights, attn_kv_cache_f32* cache,
                            const float* x, int32_t n, float* y, void* arena, size_t arena_bytes) {
  return attn::run_decode<float>(plan, weights, cache, attn::kCacheMagic, arena, arena_bytes,
                                 [&](const attn::Plan& p, attn::KvCacheF32* c, attn::Arena& a) {
                                   return attn::decode_f32(p, attn::to_cpp(*weights), c, x, n, y, a);
                                 });
}

#endif  // ATTN_WITH_F32

#if ATTN_WITH_S8

attn_status attn_forward_s8(const attn_plan* plan, const attn_weights_s8* weights, const attn_mask* mask,
                            const attn_io_s8* io, void* arena, size_t arena_bytes) {
  return attn::run_forward(plan, weights, io, arena, arena_bytes, [&](const attn::Plan& p, attn::Arena& a) {
    attn::IoS8 x;
    x.query = io->query;
    x.key = io->key;
    x.value = io->value;
    x.output = io->output;
    x.query_position = io->query_position;
    return attn::forward_s8(p, attn::to_cpp(*weights), attn::to_cpp(mask), x, a);
  });
}

attn_status attn_kv_cache_init_s8(attn_kv_cache_s8* cache, const attn_plan* plan, int32_t window,
                                  void* buffer, size_t buffer_bytes) {
  return attn::cache_init<int8_t>(cache, attn::kCacheS8Magic, plan, window, buffer, buffer_bytes,
                                  [](const attn::Plan& p, int32_t win, attn::Arena& a, attn::KvCacheS8* c) {
                                    return attn::kv_cache_init_s8(p, win, a, c);
                                  });
}

attn_status attn_kv_cache_reset_s8(attn_kv_cache_s8* cache) {
  return attn::cache_reset<int8_t>(cache, attn::kCacheS8Magic);
}

attn_status attn_kv_cache_length_s8(const attn_kv_cache_s8* cache, int32_t* length, int32_t* next_position) {
  return attn::cache_length<int8_t>(cache, attn::kCacheS8Magic, length, next_position);
}

attn_status attn_decode_s8(const attn_plan* plan, const attn_weights_s8* weights, attn_kv_cache_s8* cache,
                           const int8_t* x, int32_t n, int8_t* y, void* arena, size_t arena_bytes) {
  return attn::run_decode<int8_t>(plan, weights, cache, attn::kCacheS8Magic, arena, arena_bytes,
                                  [&](const attn::Plan& p, attn::KvCacheS8* c, attn::Arena& a) {
                                    return attn::decode_s8(p, attn::to_cpp(*weights), c, x, n, y, a);
                                  });
}

#endif  // ATTN_WITH_S8

#if ATTN_WITH_S16

attn_status attn_forward_s16(const attn_plan* plan, const attn_weights_s16* weights, const attn_mask* mask,
                             const attn_io_s16* io, void* arena, size_t arena_bytes) {
  return attn::run_forward(plan, weights, io, arena, arena_bytes, [&](const attn::Plan& p, attn::Arena& a) {
    attn::IoS16 x;
    x.query = io->query;
    x.key = io->key;
    x.value = io->value;
    x.output = io->output;
    x.query_position = io->query_position;
    return attn::forward_s16(p, attn::to_cpp(*weights), attn::to_cpp(mask), x, a);
  });
}

attn_status attn_kv_cache_init_s16(attn_kv_cache_s16* cache, const attn_plan* plan, int32_t window,
                                   void* buffer, size_t buffer_bytes) {
  return attn::cache_init<int16_t>(cache, attn::kCacheS16Magic, plan, window, buffer, buffer_bytes,
                                   [](const attn::Plan& p, int32_t win, attn::Arena& a, attn::KvCacheS16* c) {
                                     return attn::kv_cache_init_s16(p, win, a, c);
                                   });
}

attn_status attn_kv_cache_reset_s16(attn_kv_cache_s16* cache) {
  return attn::cache_reset<int16_t>(cache, attn::kCacheS16Magic);
}

attn_status attn_kv_cache_length_s16(const attn_kv_cache_s16* cache, int32_t* length,
                                     int32_t* next_position) {
  return attn::cache_length<int16_t>(cache, attn::kCacheS16Magic, length, next_position);
}

attn_status attn_decode_s16(const attn_plan* plan, const attn_weights_s16* weights, attn_kv_cache_s16* cache,
                            const int16_t* x, int32_t n, int16_t* y, void* arena, size_t arena_bytes) {
  return attn::run_decode<int16_t>(plan, weights, cache, attn::kCacheS16Magic, arena, arena_bytes,
                                   [&](const attn::Plan& p, attn::KvCacheS16* c, attn::Arena& a) {
                                     return attn::decode_s16(p, attn::to_cpp(*weights), c, x, n, y, a);
                                   });
}

#endif  // ATTN_WITH_S16

}  // extern "C"
