// mirrors.h: the C structs of attn/attn.h that mirror C++ ones, each written
// once as a field list (an X-macro, as attn/status_list.h lists the status
// codes). From one list come both directions of the copy and the checks that
// the two layouts agree, so a field added to one side and not to the list
// fails to compile instead of being silently dropped.
//
// A list names the fields that carry the same name and meaning on both sides,
// FIELD(C, Cpp, name) each; a copy macro ignores C and Cpp, a check uses them.
// Nested mirrors (a projection inside the s8 weights) have lists of their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/attn.h"
#include "attn/transformer.h"

// ---- the lists -----------------------------------------------------------------

// attn_config <-> AttentionConfig: values, and flags (int32_t 0/1 <-> bool).
#define ATTN_ATTENTION_CONFIG_FIELDS(VALUE, FLAG) \
  VALUE(embed_dim)                                \
  VALUE(num_heads)                                \
  VALUE(head_dim)                                 \
  VALUE(kdim)                                     \
  VALUE(vdim)                                     \
  FLAG(bias)                                      \
  VALUE(num_kv_heads)                             \
  VALUE(rope_base)

// attn_transformer_config <-> TransformerConfig: values, flags, and enums
// (int32_t codes <-> uint8_t enum classes), in the C struct's order.
#define ATTN_TRANSFORMER_CONFIG_FIELDS(VALUE, FLAG, ENUM) \
  VALUE(vocab_size)                                       \
  VALUE(embed_dim)                                        \
  VALUE(num_layers)                                       \
  VALUE(num_heads)                                        \
  VALUE(num_kv_heads)                                     \
  VALUE(head_dim)                                         \
  VALUE(ffn_dim)                                          \
  VALUE(max_positions)                                    \
  VALUE(type_vocab_size)                                  \
  ENUM(norm, NormKind)                                    \
  VALUE(norm_eps)                                         \
  ENUM(activation, Activation)                            \
  ENUM(head, LmHead)                                      \
  VALUE(rope_base)                                        \
  FLAG(pre_norm)                                          \
  FLAG(gated_ffn)                                         \
  FLAG(attention_bias)                                    \
  FLAG(ffn_bias)                                          \
  FLAG(norm_bias)                                         \
  FLAG(learned_positions)                                 \
  FLAG(embedding_norm)                                    \
  FLAG(final_norm)                                        \
  FLAG(causal)

// The integer codes of attn/attn.h and the C++ enums they stand for.
#define ATTN_ENUM_CODES(CODE)                      \
  CODE(ATTN_DTYPE_F32, DType::kF32)                \
  CODE(ATTN_DTYPE_S8, DType::kS8)                  \
  CODE(ATTN_DTYPE_S16, DType::kS16)                \
  CODE(ATTN_NORM_LAYER_NORM, NormKind::kLayerNorm) \
  CODE(ATTN_NORM_RMS_NORM, NormKind::kRmsNorm)     \
  CODE(ATTN_ACT_GELU, Activation::kGelu)           \
  CODE(ATTN_ACT_GELU_TANH, Activation::kGeluTanh)  \
  CODE(ATTN_ACT_RELU, Activation::kRelu)           \
  CODE(ATTN_ACT_SILU, Activation::kSilu)           \
  CODE(ATTN_HEAD_NONE, LmHead::kNone)              \
  CODE(ATTN_HEAD_TIED, LmHead::kTied)              \
  CODE(ATTN_HEAD_UNTIED, LmHead::kUntied)          \
  CODE(ATTN_ROWS_ALL, OutputRows::kAll)            \
  CODE(ATTN_ROWS_LAST, OutputRows::kLast)          \
  CODE(ATTN_ROWS_FIRST, OutputRows::kFirst)

// Plain mirrors: the same name and type on both sides.
#define ATTN_WEIGHTS_F32_FIELDS(F, C, Cpp) \
  F(C, Cpp, wq)                            \
  F(C, Cpp, wk) F(C, Cpp, wv) F(C, Cpp, wo) F(C, Cpp, bq) F(C, Cpp, bk) F(C, Cpp, bv) F(C, Cpp, bo)
#define ATTN_IO_FIELDS(F, C, Cpp) \
  F(C, Cpp, query) F(C, Cpp, key) F(C, Cpp, value) F(C, Cpp, output) F(C, Cpp, query_position)
#define ATTN_PROJECTION_FIELDS(F, C, Cpp) \
  F(C, Cpp, weight) F(C, Cpp, bias) F(C, Cpp, multiplier) F(C, Cpp, shift) F(C, Cpp, weight_s4)
#define ATTN_SOFTMAX_FIXED_FIELDS(F, C, Cpp) \
  F(C, Cpp, exp_multiplier) F(C, Cpp, exp_shift) F(C, Cpp, diff_limit) F(C, Cpp, score_shift)
#define ATTN_ROPE_TABLE_FIELDS(F, C, Cpp) F(C, Cpp, cos) F(C, Cpp, sin) F(C, Cpp, positions)
// What attn_weights_s8 and attn_weights_s16 share, besides q, k, v, o,
// softmax and rope (mirrors of their own).
#define ATTN_WEIGHTS_FIXED_FIELDS(F, C, Cpp) F(C, Cpp, context_multiplier) F(C, Cpp, context_shift)
// The masks the ranges hold for: an int32_t in C, attn::MaskCoverage (int32_t) in C++.
#define ATTN_WEIGHTS_MASK_FIELDS(F, C, Cpp) F(C, Cpp, mask_coverage) F(C, Cpp, mask_key_length)
#define ATTN_WEIGHTS_S8_ZERO_POINT_FIELDS(F, C, Cpp) \
  F(C, Cpp, q_zero_point)                            \
  F(C, Cpp, k_zero_point) F(C, Cpp, v_zero_point) F(C, Cpp, context_zero_point) F(C, Cpp, output_zero_point)
#define ATTN_NORM_F32_FIELDS(F, C, Cpp) F(C, Cpp, weight) F(C, Cpp, bias)
#define ATTN_FFN_F32_FIELDS(F, C, Cpp) \
  F(C, Cpp, w1) F(C, Cpp, b1) F(C, Cpp, w2) F(C, Cpp, b2) F(C, Cpp, w3) F(C, Cpp, b3)
// attn_transformer_weights_f32 besides embedding_norm, final_norm and layers.
#define ATTN_TRANSFORMER_WEIGHTS_F32_FIELDS(F, C, Cpp) \
  F(C, Cpp, token_embedding) F(C, Cpp, position_embedding) F(C, Cpp, type_embedding) F(C, Cpp, lm_head)

// ---- what a list makes ---------------------------------------------------------

// to->name = from.name (either direction: the names are the same).
#define ATTN_MIRROR_COPY(C, Cpp, name) to->name = from.name;
// The field sits at the same offset with the same size on both sides.
#define ATTN_MIRROR_SAME_PLACE(C, Cpp, name)                                                      \
  static_assert(offsetof(C, name) == offsetof(Cpp, name) && sizeof(C::name) == sizeof(Cpp::name), \
                #C "." #name " and " #Cpp "." #name " differ in place or size");

namespace attn {
namespace capi {

// One copy template per plain list, for both directions.
// NOLINTBEGIN(bugprone-macro-parentheses): the macros' arguments are names
#define ATTN_MIRROR_COPY_FN(fn, LIST)  \
  template <class To, class From>      \
  void fn(To* to, const From& from) {  \
    LIST(ATTN_MIRROR_COPY, void, void) \
  }
ATTN_MIRROR_COPY_FN(copy_weights_f32, ATTN_WEIGHTS_F32_FIELDS)
ATTN_MIRROR_COPY_FN(copy_io, ATTN_IO_FIELDS)
ATTN_MIRROR_COPY_FN(copy_projection, ATTN_PROJECTION_FIELDS)
ATTN_MIRROR_COPY_FN(copy_softmax_fixed, ATTN_SOFTMAX_FIXED_FIELDS)
ATTN_MIRROR_COPY_FN(copy_rope_table, ATTN_ROPE_TABLE_FIELDS)
ATTN_MIRROR_COPY_FN(copy_s8_zero_points, ATTN_WEIGHTS_S8_ZERO_POINT_FIELDS)
ATTN_MIRROR_COPY_FN(copy_norm_f32, ATTN_NORM_F32_FIELDS)
ATTN_MIRROR_COPY_FN(copy_ffn_f32, ATTN_FFN_F32_FIELDS)
#undef ATTN_MIRROR_COPY_FN
// NOLINTEND(bugprone-macro-parentheses)

// What attn_weights_s8 and attn_weights_s16 (WeightsS8, WeightsS16) share.
template <class To, class From>
void copy_weights_fixed(To* to, const From& from) {
  copy_projection(&to->q, from.q);
  copy_projection(&to->k, from.k);
  copy_projection(&to->v, from.v);
  copy_projection(&to->o, from.o);
  copy_softmax_fixed(&to->softmax, from.softmax);
  ATTN_WEIGHTS_FIXED_FIELDS(ATTN_MIRROR_COPY, void, void)
  to->mask_coverage = static_cast<decltype(to->mask_coverage)>(from.mask_coverage);
  to->mask_key_length = from.mask_key_length;
  copy_rope_table(&to->rope, from.rope);
}

template <class To, class From>
void copy_weights_s8(To* to, const From& from) {
  copy_weights_fixed(to, from);
  copy_s8_zero_points(to, from);
}

// attn_transformer_weights_f32 into TransformerWeightsF32, but the layers
// (the caller's C table, converted one by one into a C++ one).
template <class To, class From>
void copy_transformer_weights_f32(To* to, const From& from) {
  ATTN_TRANSFORMER_WEIGHTS_F32_FIELDS(ATTN_MIRROR_COPY, void, void)
  copy_norm_f32(&to->embedding_norm, from.embedding_norm);
  copy_norm_f32(&to->final_norm, from.final_norm);
}

// An int that is no code of a uint8_t enum maps to 0xFF, which none is.
template <class E>
E enum_of(int32_t v) {
  return static_cast<E>(v >= 0 && v < 0xFF ? v : 0xFF);
}

// The configs: values as they are, flags 0/1 <-> bool, enums as their codes.
// NOLINTBEGIN(bugprone-macro-parentheses): the macros' arguments are names
inline AttentionConfig to_cpp(const attn_config& c) {
  AttentionConfig o;
#define ATTN_VALUE(f) o.f = c.f;
#define ATTN_FLAG(f) o.f = c.f != 0;
  ATTN_ATTENTION_CONFIG_FIELDS(ATTN_VALUE, ATTN_FLAG)
#undef ATTN_VALUE
#undef ATTN_FLAG
  return o;
}

inline TransformerConfig to_cpp(const attn_transformer_config& c) {
  TransformerConfig o;
#define ATTN_VALUE(f) o.f = c.f;
#define ATTN_FLAG(f) o.f = c.f != 0;
#define ATTN_ENUM(f, E) o.f = enum_of<E>(c.f);
  ATTN_TRANSFORMER_CONFIG_FIELDS(ATTN_VALUE, ATTN_FLAG, ATTN_ENUM)
#undef ATTN_VALUE
#undef ATTN_FLAG
#undef ATTN_ENUM
  return o;
}

// C structs are zeroed first (no stray padding bytes reach the caller).
inline void config_to_c(const AttentionConfig& c, attn_config* o) {
  std::memset(o, 0, sizeof *o);
#define ATTN_VALUE(f) o->f = c.f;
#define ATTN_FLAG(f) o->f = c.f ? 1 : 0;
  ATTN_ATTENTION_CONFIG_FIELDS(ATTN_VALUE, ATTN_FLAG)
#undef ATTN_VALUE
#undef ATTN_FLAG
}

inline void config_to_c(const TransformerConfig& c, attn_transformer_config* o) {
  std::memset(o, 0, sizeof *o);
#define ATTN_VALUE(f) o->f = c.f;
#define ATTN_FLAG(f) o->f = c.f ? 1 : 0;
#define ATTN_ENUM(f, E) o->f = static_cast<int32_t>(c.f);
  ATTN_TRANSFORMER_CONFIG_FIELDS(ATTN_VALUE, ATTN_FLAG, ATTN_ENUM)
#undef ATTN_VALUE
#undef ATTN_FLAG
#undef ATTN_ENUM
}
// NOLINTEND(bugprone-macro-parentheses)

// ---- the checks ----------------------------------------------------------------
// NOLINTBEGIN(bugprone-macro-parentheses): the macros make sums and declarations

#define ATTN_CODE(c_code, cpp_enum) \
  static_assert((c_code) == static_cast<int32_t>(cpp_enum), #c_code " and " #cpp_enum " differ");
ATTN_ENUM_CODES(ATTN_CODE)
#undef ATTN_CODE

// The configs' C structs are their lists, 4 bytes a field (a new C++ field
// needs its C field and its row in the list; a C field with no row trips this).
#define ATTN_ONE(...) +1
static_assert(sizeof(attn_config) == 4 * (0 ATTN_ATTENTION_CONFIG_FIELDS(ATTN_ONE, ATTN_ONE)),
              "attn_config has a field ATTN_ATTENTION_CONFIG_FIELDS does not list");
static_assert(sizeof(attn_transformer_config) ==
                  4 * (0 ATTN_TRANSFORMER_CONFIG_FIELDS(ATTN_ONE, ATTN_ONE, ATTN_ONE)),
              "attn_transformer_config has a field ATTN_TRANSFORMER_CONFIG_FIELDS does not list");
#undef ATTN_ONE

// The plain mirrors: every listed field in the same place and of the same
// size; the listed fields (with `other` bytes: nested mirrors, fields copied
// by hand) fill the C struct but for its tail padding, so a field left off
// its list trips this; and the C++ struct is the C one plus `cpp_only` bytes
// (the host-only packed-panel pointers).
constexpr bool fills(size_t size, size_t listed, size_t align) {
  return listed <= size && size - listed < align;
}
#define ATTN_MIRROR_BYTES(C, Cpp, name) +sizeof(C::name)
#define ATTN_MIRROR_CHECK(LIST, C, Cpp, other, cpp_only)                              \
  LIST(ATTN_MIRROR_SAME_PLACE, C, Cpp)                                                \
  static_assert(fills(sizeof(C), (other)LIST(ATTN_MIRROR_BYTES, C, Cpp), alignof(C)), \
                #C " has a field " #LIST " does not list");                           \
  static_assert(sizeof(C) + (cpp_only) == sizeof(Cpp), #Cpp " has a field " #C " does not mirror");
#if ATTN_SATURATION_COUNTERS
constexpr size_t kSaturationBytes = sizeof(void*);  // io.saturation, copied by hand
#else
constexpr size_t kSaturationBytes = 0;
#endif
#if ATTN_WITH_F32
ATTN_MIRROR_CHECK(ATTN_WEIGHTS_F32_FIELDS, attn_weights_f32, WeightsF32, 0, sizeof(void*))
ATTN_MIRROR_CHECK(ATTN_IO_FIELDS, attn_io_f32, IoF32, sizeof(float*) /* attn_weights */, 0)
ATTN_MIRROR_CHECK(ATTN_NORM_F32_FIELDS, attn_norm_weights_f32, NormWeightsF32, 0, 0)
ATTN_MIRROR_CHECK(ATTN_FFN_F32_FIELDS, attn_ffn_weights_f32, FfnWeightsF32, 0, sizeof(void*))
ATTN_MIRROR_CHECK(ATTN_TRANSFORMER_WEIGHTS_F32_FIELDS, attn_transformer_weights_f32, TransformerWeightsF32,
                  2 * sizeof(attn_norm_weights_f32) + sizeof(void*) /* layers */, 0)
static_assert(sizeof(attn_layer_weights_f32) + 2 * sizeof(void*) == sizeof(LayerWeightsF32),
              "LayerWeightsF32: a field unmirrored (its attention and ffn have one packed pointer each)");
#endif
#if ATTN_WITH_S8 || ATTN_WITH_S16
ATTN_MIRROR_CHECK(ATTN_SOFTMAX_FIXED_FIELDS, attn_softmax_fixed, FusedSoftmaxParams, 0, 0)
ATTN_MIRROR_CHECK(ATTN_ROPE_TABLE_FIELDS, attn_rope_table, RopeTable, 0, 0)
#endif
// One integer dtype's projection, attention weights and IO (d: the C names'
// suffix, D: the C++ ones'), its weights' list ATTN_WEIGHTS_<D>_FIELDS.
#define ATTN_MIRROR_CHECK_FIXED(d, D)                                                                       \
  ATTN_MIRROR_CHECK(ATTN_PROJECTION_FIELDS, attn_projection_##d, Projection##D, 0, 0)                       \
  ATTN_MIRROR_CHECK(ATTN_WEIGHTS_##D##_FIELDS, attn_weights_##d, Weights##D,                                \
                    4 * sizeof(attn_projection_##d) + sizeof(attn_softmax_fixed) + sizeof(attn_rope_table), \
                    0)                                                                                      \
  ATTN_MIRROR_CHECK(ATTN_IO_FIELDS, attn_io_##d, Io##D, kSaturationBytes, 0)
#if ATTN_WITH_S8
#define ATTN_WEIGHTS_S8_FIELDS(F, C, Cpp) \
  ATTN_WEIGHTS_FIXED_FIELDS(F, C, Cpp)    \
  ATTN_WEIGHTS_S8_ZERO_POINT_FIELDS(F, C, Cpp) ATTN_WEIGHTS_MASK_FIELDS(F, C, Cpp)
ATTN_MIRROR_CHECK_FIXED(s8, S8)
#undef ATTN_WEIGHTS_S8_FIELDS
#endif
#if ATTN_WITH_S16
#define ATTN_WEIGHTS_S16_FIELDS(F, C, Cpp) \
  ATTN_WEIGHTS_FIXED_FIELDS(F, C, Cpp) ATTN_WEIGHTS_MASK_FIELDS(F, C, Cpp)
ATTN_MIRROR_CHECK_FIXED(s16, S16)
#undef ATTN_WEIGHTS_S16_FIELDS
#endif
#undef ATTN_MIRROR_CHECK_FIXED
#undef ATTN_MIRROR_CHECK
#undef ATTN_MIRROR_BYTES

// NOLINTEND(bugprone-macro-parentheses)

}  // namespace capi
}  // namespace attn
