// attn_c.cpp: the C99 API (attn/attn.h) over the C++ library.
//
// Handles are byte storage in the caller's memory: a magic word and a
// trivially copyable C++ object (capi/handles.h).
//
// The per-dtype entry points (attn_forward_<dt>, attn_decode_<dt>,
// attn_kv_cache_*_<dt>, ...) are one template each over a DtypeApi<T>, which
// names the C and C++ types and functions of one dtype.
#include <cstring>
#include <type_traits>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/attn.h"
#include "attn/decode.h"
#include "attn/kernel_set.h"
#include "attn/model.h"
#include "capi/handles.h"
#include "capi/mirrors.h"

namespace attn {
namespace {

// The C codes and the C++ codes come from one list (attn/status_list.h).
#define ATTN_STATUS(cpp_name, c_name, value, doc) \
  static_assert((c_name) == static_cast<int32_t>(Status::cpp_name), #c_name);
#include "attn/status_list.h"
#undef ATTN_STATUS

using capi::Box;
using capi::config_to_c;
using capi::copy_io;
using capi::copy_weights_f32;
using capi::copy_weights_fixed;
using capi::copy_weights_s8;
using capi::fetch;
using capi::fits_handle;
using capi::kModelMagic;
using capi::store;
using capi::to_c;
using capi::to_cpp;

constexpr uint32_t kPlanMagic = 0x4E414C50u;  // "PLAN"

using PlanBox = Box<Plan>;
using ModelBox = Box<Model>;
static_assert(fits_handle<Plan, attn_plan>(), "grow or align attn_plan's storage in attn/attn.h");
static_assert(fits_handle<Model, attn_model>(), "grow or align attn_model's storage in attn/attn.h");

// The resolved config (head_dim, kdim, vdim and kv heads never 0).
attn_config to_c(const AttentionConfig& c) {
  attn_config out;
  config_to_c(c, &out);
  out.head_dim = c.resolved_head_dim();
  out.kdim = c.resolved_kdim();
  out.vdim = c.resolved_vdim();
  out.num_kv_heads = c.resolved_kv_heads();
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

// Runs a forward f on io. With saturation counters, a C caller's counts
// come through a C++ SaturationCounts of this call, added to the caller's
// attn_saturation_counts afterwards (the two types are separate types).
template <class Io, class CIo, class F>
Status run_forward_io(Io&, const CIo&, F f) {
  return f();
}
#if ATTN_SATURATION_COUNTERS
template <class Io, class F>
Status run_counted(Io& io, attn_saturation_counts* counts, F f) {
  if (counts == nullptr) return f();
  SaturationCounts local;
  io.saturation = &local;
  const Status s = f();
  counts->q += local.q;
  counts->k += local.k;
  counts->v += local.v;
  counts->context += local.context;
  counts->output += local.output;
  return s;
}
#if ATTN_WITH_S8
template <class F>
Status run_forward_io(IoS8& io, const attn_io_s8& c, F f) {
  return run_counted(io, c.saturation, f);
}
#endif
#if ATTN_WITH_S16
template <class F>
Status run_forward_io(IoS16& io, const attn_io_s16& c, F f) {
  return run_counted(io, c.saturation, f);
}
#endif
#endif

#if ATTN_WITH_F32
void copy_io(IoF32* to, const attn_io_f32& from) {
  capi::copy_io<IoF32, attn_io_f32>(to, from);
  to->attn_weights = from.attn_weights;
}
#endif

// The C and C++ types and functions of one dtype (T: the element type).
template <class T>
struct DtypeApi;

// DT: f32, s8 or s16; WEIGHTS, IO: its C++ structs; COPY_WEIGHTS: C to C++
// weights; MAGIC: of its cache handles (one per dtype, so that a cache handle
// of one dtype is no handle of another).
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_DTYPE_API(T, DT, WEIGHTS, IO, COPY_WEIGHTS, MAGIC)                                       \
  template <>                                                                                         \
  struct DtypeApi<T> {                                                                                \
    using CWeights = attn_weights_##DT;                                                               \
    using CIo = attn_io_##DT;                                                                         \
    using CCache = attn_kv_cache_##DT;                                                                \
    using Weights = WEIGHTS;                                                                          \
    static constexpr uint32_t kCacheMagic = MAGIC;                                                    \
    static void copy_weights(Weights* to, const CWeights& from) { COPY_WEIGHTS(to, from); }           \
    static Status forward(const Plan& p, const Weights& w, const Mask& m, const CIo& c, Arena& a) {   \
      IO io;                                                                                          \
      copy_io(&io, c);                                                                                \
      return run_forward_io(io, c, [&] { return forward_##DT(p, w, m, io, a); });                     \
    }                                                                                                 \
    static Status cache_init(const Plan& p, int32_t window, Arena& a, KvCache<T>* c) {                \
      return kv_cache_init_##DT(p, window, a, c);                                                     \
    }                                                                                                 \
    static Status decode(const Plan& p, const Weights& w, KvCache<T>* c, const T* x, int32_t n, T* y, \
                         Arena& a) {                                                                  \
      return decode_##DT(p, w, c, x, n, y, a);                                                        \
    }                                                                                                 \
  };
// NOLINTEND(bugprone-macro-parentheses)
#if ATTN_WITH_F32
ATTN_DTYPE_API(float, f32, WeightsF32, IoF32, copy_weights_f32, 0x4548434Bu)  // "KCHE"
#endif
#if ATTN_WITH_S8
ATTN_DTYPE_API(int8_t, s8, WeightsS8, IoS8, copy_weights_s8, 0x3853434Bu)  // "KCS8"
#endif
#if ATTN_WITH_S16
ATTN_DTYPE_API(int16_t, s16, WeightsS16, IoS16, copy_weights_fixed, 0x3631434Bu)  // "KC16"
#endif
#undef ATTN_DTYPE_API

template <class T>
typename DtypeApi<T>::Weights to_cpp(const typename DtypeApi<T>::CWeights& c) {
  typename DtypeApi<T>::Weights w;
  DtypeApi<T>::copy_weights(&w, c);
  return w;
}

// The checks every forward and decode shares, then run(plan, arena) on the C++ side.
template <class Run>
attn_status with_plan_and_arena(const attn_plan* plan, const void* weights, const void* io, void* buffer,
                                size_t bytes, Run run) {
  if (weights == nullptr || io == nullptr) return to_c(Status::kNullArgument);
  Plan p;
  ATTN_TRY_C(fetch(plan, kPlanMagic, &p));
  Arena arena;
  ATTN_TRY_C(arena.init(buffer, bytes));
  return to_c(run(p, arena));
}

template <class T>
attn_status c_forward(const attn_plan* plan, const typename DtypeApi<T>::CWeights* weights,
                      const attn_mask* mask, const typename DtypeApi<T>::CIo* io, void* arena,
                      size_t arena_bytes) {
  return with_plan_and_arena(plan, weights, io, arena, arena_bytes, [&](const Plan& p, Arena& a) {
    return DtypeApi<T>::forward(p, to_cpp<T>(*weights), to_cpp(mask), *io, a);
  });
}

template <class T>
attn_status c_cache_init(typename DtypeApi<T>::CCache* cache, const attn_plan* plan, int32_t window,
                         void* buffer, size_t buffer_bytes) {
  if (cache == nullptr) return to_c(Status::kNullArgument);
  std::memset(cache, 0, sizeof *cache);
  static_assert(fits_handle<KvCache<T>, typename DtypeApi<T>::CCache>(),
                "grow or align the attn_kv_cache_* storage in attn/attn.h");
  Plan p;
  ATTN_TRY_C(fetch(plan, kPlanMagic, &p));
  // The cache keeps pointers into `buffer`, not into this Arena: it may go.
  Arena arena;
  ATTN_TRY_C(arena.init(buffer, buffer_bytes));
  KvCache<T> c;
  ATTN_TRY_C(DtypeApi<T>::cache_init(p, window, arena, &c));
  store(cache, DtypeApi<T>::kCacheMagic, c);
  return ATTN_OK;
}

template <class T>
attn_status c_cache_reset(typename DtypeApi<T>::CCache* cache) {
  KvCache<T> c;
  ATTN_TRY_C(fetch(cache, DtypeApi<T>::kCacheMagic, &c));
  ATTN_TRY_C(kv_cache_reset(&c));
  store(cache, DtypeApi<T>::kCacheMagic, c);
  return ATTN_OK;
}

template <class T>
attn_status c_cache_length(const typename DtypeApi<T>::CCache* cache, int32_t* length,
                           int32_t* next_position) {
  if (length == nullptr || next_position == nullptr) return to_c(Status::kNullArgument);
  *length = 0;
  *next_position = 0;
  KvCache<T> c;
  ATTN_TRY_C(fetch(cache, DtypeApi<T>::kCacheMagic, &c));
  *length = c.length;
  *next_position = c.next_position();
  return ATTN_OK;
}

// decode on the C++ side, the cache stored back after (its length and start
// moved, or not on error).
template <class T>
attn_status c_decode(const attn_plan* plan, const typename DtypeApi<T>::CWeights* weights,
                     typename DtypeApi<T>::CCache* cache, const T* x, int32_t n, T* y, void* arena,
                     size_t arena_bytes) {
  KvCache<T> c;
  ATTN_TRY_C(fetch(cache, DtypeApi<T>::kCacheMagic, &c));
  const attn_status s = with_plan_and_arena(
      plan, weights, cache, arena, arena_bytes,
      [&](const Plan& p, Arena& a) { return DtypeApi<T>::decode(p, to_cpp<T>(*weights), &c, x, n, y, a); });
  store(cache, DtypeApi<T>::kCacheMagic, c);
  return s;
}

Status model_block(const attn_model* model, uint32_t index, Block* block) {
  Model m;
  ATTN_TRY(fetch(model, kModelMagic, &m));
  return m.block(index, block);
}

#if ATTN_WITH_F32
void block_weights(const Block& b, attn_weights_f32* out) { copy_weights_f32(out, b.f32); }
#endif
#if ATTN_WITH_S8
void block_weights(const Block& b, attn_weights_s8* out) { copy_weights_s8(out, b.s8); }
#endif
#if ATTN_WITH_S16
void block_weights(const Block& b, attn_weights_s16* out) { copy_weights_fixed(out, b.s16); }
#endif

void to_c(const TensorView& v, attn_tensor_info* info) {
  info->name = v.name;
  info->dtype = static_cast<attn_dtype>(v.dtype);
  info->role = static_cast<int32_t>(v.role);
  info->rank = v.rank;
  for (int i = 0; i < 4; ++i) info->dims[i] = v.dims[i];
  info->block = v.block;
  info->data = v.data;
  info->byte_size = v.byte_size;
}

// A tensor of the model into *info: find(model, &view) on the C++ side.
template <class Find>
attn_status c_tensor(const attn_model* model, attn_tensor_info* info, Find find) {
  if (info == nullptr) return to_c(Status::kNullArgument);
  std::memset(info, 0, sizeof *info);
  Model m;
  ATTN_TRY_C(fetch(model, kModelMagic, &m));
  TensorView v;
  ATTN_TRY_C(find(m, &v));
  to_c(v, info);
  return ATTN_OK;
}

// *out from the T a handle holds: get(value, out) (0 where out is null, the
// handle is not a T, or get fails).
template <class T, class Handle, class Out, class Get>
attn_status c_get(const Handle* h, uint32_t magic, Out* out, Get get) {
  if (out == nullptr) return to_c(Status::kNullArgument);
  *out = 0;
  T value;
  ATTN_TRY_C(fetch(h, magic, &value));
  ATTN_TRY_C(get(value, out));
  return ATTN_OK;
}

template <class T>
attn_status c_block_weights(const attn_model* model, uint32_t index, typename DtypeApi<T>::CWeights* weights,
                            DType dtype) {
  if (weights == nullptr) return to_c(Status::kNullArgument);
  std::memset(weights, 0, sizeof *weights);
  Block block;
  ATTN_TRY_C(model_block(model, index, &block));
  if (block.dtype != dtype) return to_c(Status::kBadDtype);
  block_weights(block, weights);
  return ATTN_OK;
}

// plan_attention / plan_decode into a C handle.
template <class PlanFn>
attn_status c_plan(attn_plan* plan, const attn_config* config, attn_dtype dtype, int32_t rows, int32_t keys,
                   int32_t tile_rows, PlanFn plan_fn) {
  if (plan == nullptr || config == nullptr) return to_c(Status::kNullArgument);
  std::memset(plan, 0, sizeof *plan);
  Plan p;
  ATTN_TRY_C(plan_fn(to_cpp(*config), static_cast<DType>(dtype), rows, keys, &p,
                     tile_rows == 0 ? ATTN_TILE_ROWS : tile_rows));
  store(plan, kPlanMagic, p);
  return ATTN_OK;
}

}  // namespace
}  // namespace attn

using attn::Status;

extern "C" {

const char* attn_status_name(attn_status status) {
  switch (status) {
#define ATTN_STATUS(cpp_name, c_name, value, doc) \
  case c_name:                                    \
    return #c_name;
#include "attn/status_list.h"
#undef ATTN_STATUS
    default:
      return "ATTN_ERR_UNKNOWN";
  }
}

const char* attn_role_name(int32_t role) {
  if (role < 0 || role > UINT16_MAX) return nullptr;
  return attn::format::role_name(static_cast<attn::format::Role>(role));
}

attn_status attn_kernel_set(attn_dtype dtype, attn_kernel_set_info* set) {
  if (set == nullptr) return attn::to_c(attn::Status::kNullArgument);
  attn::KernelSet k;
  const attn::Status st = attn::kernel_set(static_cast<attn::DType>(dtype), &k);
  if (st == attn::Status::kOk)
    *set = attn_kernel_set_info{k.linear, k.scores, k.softmax, k.weighted_sum, k.rope};
  return attn::to_c(st);
}

attn_status attn_plan_init(attn_plan* plan, const attn_config* config, attn_dtype dtype, int32_t query_len,
                           int32_t key_len, int32_t tile_rows) {
  return attn::c_plan(plan, config, dtype, query_len, key_len, tile_rows, attn::plan_attention);
}

attn_status attn_plan_init_decode(attn_plan* plan, const attn_config* config, attn_dtype dtype,
                                  int32_t max_rows, int32_t capacity, int32_t tile_rows) {
  return attn::c_plan(plan, config, dtype, max_rows, capacity, tile_rows, attn::plan_decode);
}

attn_status attn_plan_arena_bytes(const attn_plan* plan, size_t* bytes) {
  return attn::c_get<attn::Plan>(plan, attn::kPlanMagic, bytes, [](const attn::Plan& p, size_t* b) {
    *b = p.arena_bytes;
    return Status::kOk;
  });
}

attn_status attn_plan_set_parallel(attn_plan* plan, attn_parallel_fn run, void* ctx, int32_t workers) {
  attn::Plan p;
  ATTN_TRY_C(attn::capi::fetch(plan, attn::kPlanMagic, &p));
  ATTN_TRY_C(attn::capi::check_parallel(run, workers));
  p.parallel = attn::capi::parallel_to_cpp(run, ctx, workers);
  attn::capi::store(plan, attn::kPlanMagic, p);
  return ATTN_OK;
}

attn_status attn_kv_cache_arena_bytes(const attn_plan* plan, size_t* bytes) {
  return attn::c_get<attn::Plan>(plan, attn::kPlanMagic, bytes, [](const attn::Plan& p, size_t* b) {
    if (!p.decode) return Status::kPlanMismatch;
    *b = attn::kv_cache_arena_bytes(p.config, p.dtype, p.key_len);
    return Status::kOk;
  });
}

attn_status attn_model_load(attn_model* model, const void* blob, size_t size) {
  if (model == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(model, 0, sizeof *model);
  attn::Model m;
  ATTN_TRY_C(attn::Model::load(blob, size, &m));
  attn::store(model, attn::kModelMagic, m);
  return ATTN_OK;
}

attn_status attn_model_block_count(const attn_model* model, uint32_t* count) {
  return attn::c_get<attn::Model>(model, attn::kModelMagic, count, [](const attn::Model& m, uint32_t* n) {
    *n = m.block_count();
    return Status::kOk;
  });
}

attn_status attn_model_block(const attn_model* model, uint32_t index, attn_block_info* info) {
  if (info == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(info, 0, sizeof *info);
  attn::Block block;
  ATTN_TRY_C(attn::model_block(model, index, &block));
  info->config = attn::to_c(block.config);
  info->dtype = static_cast<attn_dtype>(block.dtype);
  return ATTN_OK;
}

attn_status attn_model_find_tensor(const attn_model* model, const char* name, attn_tensor_info* info) {
  if (name == nullptr) return attn::to_c(Status::kNullArgument);
  return attn::c_tensor(model, info,
                        [&](const attn::Model& m, attn::TensorView* v) { return m.find_tensor(name, v); });
}

attn_status attn_model_tensor(const attn_model* model, uint32_t index, attn_tensor_info* info) {
  return attn::c_tensor(model, info,
                        [&](const attn::Model& m, attn::TensorView* v) { return m.tensor(index, v); });
}

attn_status attn_model_find_block_tensor(const attn_model* model, uint32_t block, int32_t role,
                                         attn_tensor_info* info) {
  return attn::c_tensor(model, info, [&](const attn::Model& m, attn::TensorView* v) {
    if (block >= m.block_count()) return Status::kBlockIndex;
    // A number no role has (outside 1..kMaxRole) is simply not found.
    if (role <= 0 || role > attn::format::kMaxRole) return Status::kNotFound;
    return m.find_block_tensor(block, static_cast<attn::format::Role>(role), v);
  });
}

attn_status attn_model_tensor_count(const attn_model* model, uint32_t* count) {
  return attn::c_get<attn::Model>(model, attn::kModelMagic, count, [](const attn::Model& m, uint32_t* n) {
    *n = m.tensor_count();
    return Status::kOk;
  });
}

attn_status attn_model_file_info(const attn_model* model, attn_file_info* info) {
  if (info == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(info, 0, sizeof *info);
  attn::Model m;
  ATTN_TRY_C(attn::fetch(model, attn::kModelMagic, &m));
  info->version = m.version();
  info->crc32 = m.crc();
  info->data_align = m.data_align();
  info->block_count = m.block_count();
  info->tensor_count = m.tensor_count();
  info->size = m.size();
  return ATTN_OK;
}

attn_status attn_model_verify(const attn_model* model) {
  attn::Model m;
  ATTN_TRY_C(attn::fetch(model, attn::kModelMagic, &m));
  return attn::to_c(m.verify());
}

attn_status attn_model_file_bytes(const void* data, size_t available, size_t* size) {
  if (size == nullptr) return attn::to_c(Status::kNullArgument);
  *size = 0;
  return attn::to_c(attn::Model::file_bytes(data, available, size));
}

attn_status attn_model_block_io(const attn_model* model, uint32_t index, attn_block_io* io) {
  if (io == nullptr) return attn::to_c(Status::kNullArgument);
  std::memset(io, 0, sizeof *io);
  attn::Block block;
  ATTN_TRY_C(attn::model_block(model, index, &block));
  // Scales copied as bytes: no float arithmetic, for integer-only firmware.
  const uint32_t one = 0x3F800000u;  // 1.0f, the scale of an f32 block
  float* scales[4] = {&io->query_scale, &io->key_scale, &io->value_scale, &io->output_scale};
  int32_t* zero_points[4] = {&io->query_zero_point, &io->key_zero_point, &io->value_zero_point,
                             &io->output_zero_point};
  const bool quantized = block.dtype == attn::DType::kS8 || block.dtype == attn::DType::kS16;
  for (int k = 0; k < 4; ++k) {
    if (quantized) {
      std::memcpy(scales[k], block.io.scale + k, sizeof(float));
      *zero_points[k] = block.io.zero_point[k];
    } else {
      std::memcpy(scales[k], &one, sizeof one);
    }
  }
  return ATTN_OK;
}

// The per-dtype entry points of attn.h's ATTN_DTYPE_API_.
// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_C_DTYPE_ENTRIES(SFX, T, DT)                                                                  \
  attn_status attn_model_block_weights_##SFX(const attn_model* model, uint32_t index,                     \
                                             attn_weights_##SFX* weights) {                               \
    return attn::c_block_weights<T>(model, index, weights, DT);                                           \
  }                                                                                                       \
  attn_status attn_forward_##SFX(const attn_plan* plan, const attn_weights_##SFX* weights,                \
                                 const attn_mask* mask, const attn_io_##SFX* io, void* arena,             \
                                 size_t arena_bytes) {                                                    \
    return attn::c_forward<T>(plan, weights, mask, io, arena, arena_bytes);                               \
  }                                                                                                       \
  attn_status attn_kv_cache_init_##SFX(attn_kv_cache_##SFX* cache, const attn_plan* plan, int32_t window, \
                                       void* buffer, size_t buffer_bytes) {                               \
    return attn::c_cache_init<T>(cache, plan, window, buffer, buffer_bytes);                              \
  }                                                                                                       \
  attn_status attn_kv_cache_reset_##SFX(attn_kv_cache_##SFX* cache) {                                     \
    return attn::c_cache_reset<T>(cache);                                                                 \
  }                                                                                                       \
  attn_status attn_kv_cache_length_##SFX(const attn_kv_cache_##SFX* cache, int32_t* length,               \
                                         int32_t* next_position) {                                        \
    return attn::c_cache_length<T>(cache, length, next_position);                                         \
  }                                                                                                       \
  attn_status attn_decode_##SFX(const attn_plan* plan, const attn_weights_##SFX* weights,                 \
                                attn_kv_cache_##SFX* cache, const T* x, int32_t n, T* y, void* arena,     \
                                size_t arena_bytes) {                                                     \
    return attn::c_decode<T>(plan, weights, cache, x, n, y, arena, arena_bytes);                          \
  }
// NOLINTEND(bugprone-macro-parentheses)

#if ATTN_WITH_F32
ATTN_C_DTYPE_ENTRIES(f32, float, attn::DType::kF32)
#endif
#if ATTN_WITH_S8
ATTN_C_DTYPE_ENTRIES(s8, int8_t, attn::DType::kS8)
#endif
#if ATTN_WITH_S16
ATTN_C_DTYPE_ENTRIES(s16, int16_t, attn::DType::kS16)
#endif
#undef ATTN_C_DTYPE_ENTRIES

}  // extern "C"
