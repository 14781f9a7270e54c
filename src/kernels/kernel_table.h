// kernels/kernel_table.h: the one table that picks kernel variants.
//
// For every op and dtype, one row per variant this build compiles, best
// first; the shared variant tester (tests/variant_tester.h) runs every row
// against the `ref` row, which is always compiled and always last. The
// library runs best(table): the first row this CPU runs.
//
// On every target but x86-64 that is row 0, a compile-time constant: a call
// through it compiles to a direct call, firmware carries no dispatch code,
// and an image links only the variants it calls. On x86-64 the library also
// carries kernels above the ISA its flags target (each ISA's kernel files
// compiled with their own flags, see CMakeLists.txt): their rows need a CPU
// with the ISA, and best() skips a row the CPU lacks (CPUID is read once,
// on first use, kernels/x86/cpu_x86.h); rows the flags already guarantee need
// no check, so a build compiled for every ISA it carries has none.
//
// Adding a variant (src/README.md has the whole checklist): its kernel file
// (src/kernels/<isa>/<op>_<dtype>_<isa>.cpp, body under its ATTN_HAVE_<ISA>),
// its declaration in kernels/kernels_f32.h or kernels/kernels_fixed.h, and
// one row below, under the same flag, in its place in the order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/config.h"
#include "kernels/arch.h"
#include "kernels/kernels_f32.h"
#include "kernels/kernels_fixed.h"
#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/cpu_x86.h"

namespace attn {
namespace detail {

// One variant: its function and the name of its ISA ("ref", "avx2", ...);
// on x86-64 also the CPU features it needs (from the name).
template <typename Fn>
struct Kernel {
  Fn fn;
  const char* isa;
#if ATTN_X86_64
  uint32_t needs = x86_needs(isa);
#endif
};

// Whether this CPU runs `row`. Only x86-64 rows above the unit's flags ask.
template <typename Fn>
inline bool row_runs(const Kernel<Fn>& row) {
#if ATTN_X86_64
  return x86_runs(row.needs);
#else
  (void)row;
  return true;
#endif
}

// ---- op signatures (the contracts are beside the ref declarations) ----------
using LinearF32Fn = void (*)(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y);
using ScoresF32Fn = void (*)(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);
using SoftmaxRowF32Fn = void (*)(float* row, int32_t n);
using WeightedSumF32Fn = void (*)(ConstMatF32 p, ConstMatF32 v, MatF32 o);
using NormRowF32Fn = void (*)(const float* x, const float* r, int32_t n, const float* w, const float* b,
                              float eps, float* y);
using ActivationF32Fn = void (*)(float* x, const float* up, int32_t n);
// Weights packed once (attn::pack_weights_f32): the panel layout of a linear
// variant that multiplies by W^T panels; no row where no variant does.
struct PackedLinearF32 {
  uint64_t (*panels_floats)(int32_t N, int32_t K);
  void (*pack)(ConstMatF32 w, float* panels);
  void (*linear)(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias, MatF32 y);
};

using LinearS8Fn = void (*)(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p,
                            MatS8 y);
using LinearS16Fn = void (*)(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p,
                             MatS16 y);
using ScoresS8Fn = void (*)(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift,
                            MatS32 s);
using ScoresS16Fn = void (*)(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s);
using SoftmaxRowsFn = void (*)(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                               const int32_t* end, int32_t n, const FusedSoftmax& sm);
using SoftmaxExpsFn = uint32_t (*)(int32_t* row, int32_t begin, int32_t end, int32_t n,
                                   const FusedSoftmax& sm);
using WeightedSumS8Fn = void (*)(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o);
using WeightedSumVtS8Fn = void (*)(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                                   const Requant& requant, MatS8 o);
using WeightedSumS16Fn = void (*)(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o);
using LinearTS8Fn = int32_t (*)(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p,
                                MatS8 yt);

// The row an op runs: the first this CPU runs (the last row, ref, runs
// everywhere), e.g. best(kLinearS8)(x, w, bias, params, y). Row 0, a
// constant, wherever the table has no row above the unit's flags.
#if ATTN_X86_RUNTIME_CHOICE
template <typename Fn, size_t N>
inline size_t best_row(const Kernel<Fn> (&rows)[N]) {
  for (size_t i = 0; i + 1 < N; ++i)
    if (row_runs(rows[i])) return i;
  return N - 1;
}
template <typename Fn, size_t N>
inline Fn best(const Kernel<Fn> (&rows)[N]) {
  return rows[best_row(rows)].fn;
}
#else
template <typename Fn, size_t N>
constexpr size_t best_row(const Kernel<Fn> (&)[N]) {
  return 0;
}
template <typename Fn, size_t N>
constexpr Fn best(const Kernel<Fn> (&rows)[N]) {
  return rows[0].fn;
}
#endif

// softmax_fused_rows of a variant that has only the one-row kernel.
template <void (*kRow)(int32_t*, int32_t, int32_t, int32_t, const FusedSoftmax&)>
void softmax_rows_by_row(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin, const int32_t* end,
                         int32_t n, const FusedSoftmax& sm) {
  for (int32_t r = 0; r < rows; ++r) kRow(s + static_cast<ptrdiff_t>(r) * stride, begin[r], end[r], n, sm);
}

// ---- float32 ------------------------------------------------------------------
#if ATTN_WITH_F32
inline constexpr Kernel<LinearF32Fn> kLinearF32[] = {
#if ATTN_WITH_AVX512VNNI
    {linear_f32_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {linear_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {linear_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {linear_f32_mve, "mve"},
#endif
    {linear_f32_ref, "ref"},
};
inline constexpr Kernel<ScoresF32Fn> kScoresF32[] = {
#if ATTN_WITH_AVX2
    {scores_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {scores_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {scores_f32_mve, "mve"},
#endif
    {scores_f32_ref, "ref"},
};
inline constexpr Kernel<SoftmaxRowF32Fn> kSoftmaxRowF32[] = {
#if ATTN_WITH_AVX2
    {softmax_row_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {softmax_row_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {softmax_row_f32_mve, "mve"},
#endif
    {softmax_row_f32_ref, "ref"},
};
inline constexpr Kernel<WeightedSumF32Fn> kWeightedSumF32[] = {
#if ATTN_WITH_AVX2
    {weighted_sum_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {weighted_sum_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {weighted_sum_f32_mve, "mve"},
#endif
    {weighted_sum_f32_ref, "ref"},
};
// Whole models (attn/transformer.h): the norms and the FFN's activations.
inline constexpr Kernel<NormRowF32Fn> kLayerNormF32[] = {
#if ATTN_WITH_AVX2
    {layer_norm_row_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {layer_norm_row_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {layer_norm_row_f32_mve, "mve"},
#endif
    {layer_norm_row_f32_ref, "ref"},
};
inline constexpr Kernel<NormRowF32Fn> kRmsNormF32[] = {
#if ATTN_WITH_AVX2
    {rms_norm_row_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {rms_norm_row_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {rms_norm_row_f32_mve, "mve"},
#endif
    {rms_norm_row_f32_ref, "ref"},
};
inline constexpr Kernel<ActivationF32Fn> kGeluF32[] = {
#if ATTN_WITH_AVX2
    {gelu_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {gelu_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {gelu_f32_mve, "mve"},
#endif
    {gelu_f32_ref, "ref"},
};
inline constexpr Kernel<ActivationF32Fn> kGeluTanhF32[] = {
#if ATTN_WITH_AVX2
    {gelu_tanh_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {gelu_tanh_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {gelu_tanh_f32_mve, "mve"},
#endif
    {gelu_tanh_f32_ref, "ref"},
};
inline constexpr Kernel<ActivationF32Fn> kReluF32[] = {
#if ATTN_WITH_AVX2
    {relu_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {relu_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {relu_f32_mve, "mve"},
#endif
    {relu_f32_ref, "ref"},
};
inline constexpr Kernel<ActivationF32Fn> kSiluF32[] = {
#if ATTN_WITH_AVX2
    {silu_f32_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {silu_f32_neon, "neon"},
#endif
#if ATTN_HAVE_MVE_FP
    {silu_f32_mve, "mve"},
#endif
    {silu_f32_ref, "ref"},
};
inline constexpr Kernel<PackedLinearF32> kPackedLinearF32[] = {
#if ATTN_WITH_AVX512VNNI
    {{panels_floats_f32_avx2, pack_panels_f32_avx2, linear_panels_f32_avx512vnni},
     "avx512vnni"},  // same panels
#endif
#if ATTN_WITH_AVX2
    {{panels_floats_f32_avx2, pack_panels_f32_avx2, linear_panels_f32_avx2}, "avx2"},
#endif
    {{nullptr, nullptr, nullptr}, "none"},  // read W as stored
};

// Whether this build's linear may read W^T panels (a row above "none"); on
// x86-64 only where the CPU runs that row (best(kPackedLinearF32)).
constexpr bool kPacksWeightsF32 = sizeof(kPackedLinearF32) / sizeof(kPackedLinearF32[0]) > 1;

// linear_f32 reading W^T panels made once by pack_weights_f32 (null: W as
// stored; pack_weights_f32 makes none where best() is the "none" row).
inline void linear_packed_f32(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias,
                              MatF32 y) {
  if constexpr (kPacksWeightsF32) {
    const PackedLinearF32 pk = best(kPackedLinearF32);
    if (panels != nullptr && pk.linear != nullptr) return pk.linear(x, w, panels, bias, y);
  }
  best(kLinearF32)(x, w, bias, y);
}
// Floats the panels of a [N, K] weight take: 0 where this build (or CPU)
// reads W as stored.
inline uint64_t linear_panels_floats_f32(int32_t N, int32_t K) {
  if constexpr (kPacksWeightsF32) {
    const PackedLinearF32 pk = best(kPackedLinearF32);
    if (pk.panels_floats != nullptr) return pk.panels_floats(N, K);
  }
  return 0;
}
#endif  // ATTN_WITH_F32

// ---- fixed point: the fused softmax (int32 scores, s8 and s16 alike) ------------
#if ATTN_WITH_S8 || ATTN_WITH_S16
inline constexpr Kernel<SoftmaxRowsFn> kSoftmaxRows[] = {
#if ATTN_WITH_AVX512VNNI
    {softmax_fused_rows_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {softmax_fused_rows_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {softmax_rows_by_row<softmax_fused_row_neon>, "neon"},
#endif
#if ATTN_HAVE_MVE
    {softmax_fused_rows_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {softmax_rows_by_row<softmax_fused_row_dsp>, "dsp"},
#endif
    {softmax_rows_by_row<softmax_fused_row_ref>, "ref"},
};
#endif

// ---- int8 -------------------------------------------------------------------------
#if ATTN_WITH_S8
// The s8 dot products name SDOT where the NEON target has it.
#define ATTN_NEON_S8_NAME (ATTN_HAVE_DOTPROD ? "neon-dotprod" : "neon")
inline constexpr Kernel<LinearS8Fn> kLinearS8[] = {
#if ATTN_WITH_AVX512VNNI
    {linear_s8_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {linear_s8_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {linear_s8_neon, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {linear_s8_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {linear_s8_dsp, "dsp"},
#endif
    {linear_s8_ref, "ref"},
};
inline constexpr Kernel<ScoresS8Fn> kScoresS8[] = {
#if ATTN_WITH_AVX512VNNI
    {scores_s8_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {scores_s8_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {scores_s8_neon, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {scores_s8_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {scores_s8_dsp, "dsp"},
#endif
    {scores_s8_ref, "ref"},
};
inline constexpr Kernel<WeightedSumS8Fn> kWeightedSumS8[] = {
#if ATTN_WITH_AVX512VNNI
    {weighted_sum_s8_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {weighted_sum_s8_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {weighted_sum_s8_neon, "neon"},
#endif
#if ATTN_HAVE_MVE
    {weighted_sum_s8_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {weighted_sum_s8_dsp, "dsp"},
#endif
    {weighted_sum_s8_ref, "ref"},
};
// V transposed (the forward keeps V^T [Dkv, S] and P.V streams each value
// column as one contiguous row): the softmax leaves int32 exps and
// per-row normalizers, and P.V normalizes them on the fly. A row 0 other
// than `ref` here switches forward_s8 to that layout (kValuesTransposedS8).
inline constexpr Kernel<WeightedSumVtS8Fn> kWeightedSumVtS8[] = {
#if ATTN_HAVE_DSP
    {weighted_sum_vt_s8_dsp, "dsp"},
#endif
    {weighted_sum_vt_s8_ref, "ref"},
};
inline constexpr Kernel<SoftmaxExpsFn> kSoftmaxExps[] = {
#if ATTN_HAVE_DSP
    {softmax_exps_row_dsp, "dsp"},
#endif
    {softmax_exps_row_ref, "ref"},
};
// Projection straight into V^T for the channels its kernel takes (returns
// how many); the forward's fallback projects the rest through K's buffer.
inline constexpr Kernel<LinearTS8Fn> kLinearTS8[] = {
#if ATTN_HAVE_DSP
    {linear_s8_t_dsp, "dsp"},
#endif
    {linear_s8_t_ref, "ref"},
};
constexpr bool kValuesTransposedS8 = kWeightedSumVtS8[0].fn != weighted_sum_vt_s8_ref;
#endif  // ATTN_WITH_S8

// ---- int16 ------------------------------------------------------------------------
#if ATTN_WITH_S16
inline constexpr Kernel<LinearS16Fn> kLinearS16[] = {
#if ATTN_WITH_AVX2
    {linear_s16_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {linear_s16_neon, "neon"},
#endif
#if ATTN_HAVE_MVE
    {linear_s16_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {linear_s16_dsp, "dsp"},
#endif
    {linear_s16_ref, "ref"},
};
inline constexpr Kernel<ScoresS16Fn> kScoresS16[] = {
#if ATTN_WITH_AVX2
    {scores_s16_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {scores_s16_neon, "neon"},
#endif
#if ATTN_HAVE_MVE
    {scores_s16_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {scores_s16_dsp, "dsp"},
#endif
    {scores_s16_ref, "ref"},
};
inline constexpr Kernel<WeightedSumS16Fn> kWeightedSumS16[] = {
#if ATTN_WITH_AVX2
    {weighted_sum_s16_avx2, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {weighted_sum_s16_neon, "neon"},
#endif
#if ATTN_HAVE_MVE
    {weighted_sum_s16_mve, "mve"},
#endif
#if ATTN_HAVE_DSP
    {weighted_sum_s16_dsp, "dsp"},
#endif
    {weighted_sum_s16_ref, "ref"},
};
#endif  // ATTN_WITH_S16

// Rotary embedding (hd/2 pairs per head and row, a small share of a
// forward) and the stand-alone int8 softmax: ref on every target.
//   rope_f32_ref, rope_s8_ref, rope_s16_ref, softmax_s8_ref

// ---- whole integer models (attn/transformer_fixed.h): norms, activation
// tables, the residual stream's rescales, the LM head.
using NormS32Fn = void (*)(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y);
inline constexpr Kernel<NormS32Fn> kNormS32[] = {
#if ATTN_WITH_AVX2
    {NormRows<Isa::kAvx2>::s32, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {NormRows<Isa::kNeon>::s32, "neon"},
#endif
#if ATTN_HAVE_MVE
    {NormRows<Isa::kMve>::s32, "mve"},
#endif
#if ATTN_HAVE_DSP
    {NormRows<Isa::kDsp>::s32, "dsp"},
#endif
    {NormRows<Isa::kRef>::s32, "ref"},
};
#if ATTN_WITH_S8
using NormS8Fn = void (*)(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y);
using ActTableS8Fn = void (*)(MatS8 h1, const int8_t* table);
using ActGateS8Fn = void (*)(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point,
                             int32_t multiplier, int32_t shift, int32_t g_zero_point);
using ResidualAddS8Fn = void (*)(MatS32 x, ConstMatS8 y, const RescaleFixed& r);
using ResidualToS8Fn = void (*)(ConstMatS32 x, const RescaleFixed& r, MatS8 y);
using LogitsS8Fn = void (*)(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 y);
inline constexpr Kernel<NormS8Fn> kNormS8[] = {
#if ATTN_WITH_AVX2
    {NormRows<Isa::kAvx2>::s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {NormRows<Isa::kNeon>::s8, "neon"},
#endif
#if ATTN_HAVE_MVE
    {NormRows<Isa::kMve>::s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {NormRows<Isa::kDsp>::s8, "dsp"},
#endif
    {NormRows<Isa::kRef>::s8, "ref"},
};
inline constexpr Kernel<ActTableS8Fn> kActTableS8[] = {
#if ATTN_WITH_AVX2
    {act_table_s8_avx2, "avx2"},
#endif
#if ATTN_HAVE_MVE
    {act_table_s8_mve, "mve"},
#endif
    {act_table_s8_ref, "ref"},
};
inline constexpr Kernel<ActGateS8Fn> kActGateS8[] = {
#if ATTN_WITH_AVX2
    {act_gate_s8_avx2, "avx2"},
#endif
#if ATTN_HAVE_MVE
    {act_gate_s8_mve, "mve"},
#endif
    {act_gate_s8_ref, "ref"},
};
inline constexpr Kernel<ResidualAddS8Fn> kResidualAddS8[] = {
#if ATTN_WITH_AVX2
    {ResidualRows<Isa::kAvx2>::add_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {ResidualRows<Isa::kNeon>::add_s8, "neon"},
#endif
#if ATTN_HAVE_MVE
    {ResidualRows<Isa::kMve>::add_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {ResidualRows<Isa::kDsp>::add_s8, "dsp"},
#endif
    {ResidualRows<Isa::kRef>::add_s8, "ref"},
};
inline constexpr Kernel<ResidualToS8Fn> kResidualToS8[] = {
#if ATTN_WITH_AVX2
    {ResidualRows<Isa::kAvx2>::to_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {ResidualRows<Isa::kNeon>::to_s8, "neon"},
#endif
#if ATTN_HAVE_MVE
    {ResidualRows<Isa::kMve>::to_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {ResidualRows<Isa::kDsp>::to_s8, "dsp"},
#endif
    {ResidualRows<Isa::kRef>::to_s8, "ref"},
};
inline constexpr Kernel<LogitsS8Fn> kLogitsS8[] = {
#if ATTN_WITH_AVX512VNNI
    {logits_s8_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {Out32Rows<Isa::kAvx2>::logits_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {Out32Rows<Isa::kNeon>::logits_s8, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {Out32Rows<Isa::kMve>::logits_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {Out32Rows<Isa::kDsp>::logits_s8, "dsp"},
#endif
    {Out32Rows<Isa::kRef>::logits_s8, "ref"},
};
inline constexpr Kernel<LogitsS8Fn> kLinearResidualS8[] = {
#if ATTN_WITH_AVX512VNNI
    {linear_residual_s8_avx512vnni, "avx512vnni"},
#endif
#if ATTN_WITH_AVX2
    {Out32Rows<Isa::kAvx2>::linear_residual_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {Out32Rows<Isa::kNeon>::linear_residual_s8, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {Out32Rows<Isa::kMve>::linear_residual_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {Out32Rows<Isa::kDsp>::linear_residual_s8, "dsp"},
#endif
    {Out32Rows<Isa::kRef>::linear_residual_s8, "ref"},
};
#endif
#if ATTN_WITH_S16
using NormS16Fn = void (*)(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y);
using ActTableS16Fn = void (*)(MatS16 h1, const int32_t* table, int32_t multiplier, int32_t shift);
using ActGateS16Fn = void (*)(MatS16 h1, ConstMatS16 h3, const int32_t* table, int32_t multiplier,
                              int32_t shift);
using ResidualAddS16Fn = void (*)(MatS32 x, ConstMatS16 y, const RescaleFixed& r);
using ResidualToS16Fn = void (*)(ConstMatS32 x, const RescaleFixed& r, MatS16 y);
using LogitsS16Fn = void (*)(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 y);
inline constexpr Kernel<NormS16Fn> kNormS16[] = {
#if ATTN_WITH_AVX2
    {NormRows<Isa::kAvx2>::s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {NormRows<Isa::kNeon>::s16, "neon"},
#endif
#if ATTN_HAVE_MVE
    {NormRows<Isa::kMve>::s16, "mve"},
#endif
#if ATTN_HAVE_DSP
    {NormRows<Isa::kDsp>::s16, "dsp"},
#endif
    {NormRows<Isa::kRef>::s16, "ref"},
};
inline constexpr Kernel<ActTableS16Fn> kActTableS16[] = {{act_table_s16_ref, "ref"}};
inline constexpr Kernel<ActGateS16Fn> kActGateS16[] = {{act_gate_s16_ref, "ref"}};
inline constexpr Kernel<ResidualAddS16Fn> kResidualAddS16[] = {
#if ATTN_WITH_AVX2
    {ResidualRows<Isa::kAvx2>::add_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {ResidualRows<Isa::kNeon>::add_s16, "neon"},
#endif
#if ATTN_HAVE_MVE
    {ResidualRows<Isa::kMve>::add_s16, "mve"},
#endif
#if ATTN_HAVE_DSP
    {ResidualRows<Isa::kDsp>::add_s16, "dsp"},
#endif
    {ResidualRows<Isa::kRef>::add_s16, "ref"},
};
inline constexpr Kernel<ResidualToS16Fn> kResidualToS16[] = {
#if ATTN_WITH_AVX2
    {ResidualRows<Isa::kAvx2>::to_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {ResidualRows<Isa::kNeon>::to_s16, "neon"},
#endif
#if ATTN_HAVE_MVE
    {ResidualRows<Isa::kMve>::to_s16, "mve"},
#endif
#if ATTN_HAVE_DSP
    {ResidualRows<Isa::kDsp>::to_s16, "dsp"},
#endif
    {ResidualRows<Isa::kRef>::to_s16, "ref"},
};
inline constexpr Kernel<LogitsS16Fn> kLogitsS16[] = {
#if ATTN_WITH_AVX2
    {Out32Rows<Isa::kAvx2>::logits_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {Out32Rows<Isa::kNeon>::logits_s16, "neon"},
#endif
    {Out32Rows<Isa::kRef>::logits_s16, "ref"},
};
inline constexpr Kernel<LogitsS16Fn> kLinearResidualS16[] = {
#if ATTN_WITH_AVX2
    {Out32Rows<Isa::kAvx2>::linear_residual_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {Out32Rows<Isa::kNeon>::linear_residual_s16, "neon"},
#endif
    {Out32Rows<Isa::kRef>::linear_residual_s16, "ref"},
};
#endif

// ---- int4 weights (kernels/s4_rows.h): the linears of projections with weight_s4 ----
#if ATTN_WITH_S8
using LinearS4S8Fn = void (*)(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const LinearS8Params& p,
                              MatS8 y);
using Out32S4S8Fn = void (*)(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 y);
inline constexpr Kernel<LinearS4S8Fn> kLinearS4S8[] = {
#if ATTN_WITH_AVX2
    {S4Rows<Isa::kAvx2>::linear_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {S4Rows<Isa::kNeon>::linear_s8, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {S4Rows<Isa::kMve>::linear_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {S4Rows<Isa::kDsp>::linear_s8, "dsp"},
#endif
    {S4Rows<Isa::kRef>::linear_s8, "ref"},
};
inline constexpr Kernel<Out32S4S8Fn> kLinearResidualS4S8[] = {
#if ATTN_WITH_AVX2
    {S4Rows<Isa::kAvx2>::linear_residual_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {S4Rows<Isa::kNeon>::linear_residual_s8, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {S4Rows<Isa::kMve>::linear_residual_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {S4Rows<Isa::kDsp>::linear_residual_s8, "dsp"},
#endif
    {S4Rows<Isa::kRef>::linear_residual_s8, "ref"},
};
inline constexpr Kernel<Out32S4S8Fn> kLogitsS4S8[] = {
#if ATTN_WITH_AVX2
    {S4Rows<Isa::kAvx2>::logits_s8, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {S4Rows<Isa::kNeon>::logits_s8, ATTN_NEON_S8_NAME},
#endif
#if ATTN_HAVE_MVE
    {S4Rows<Isa::kMve>::logits_s8, "mve"},
#endif
#if ATTN_HAVE_DSP
    {S4Rows<Isa::kDsp>::logits_s8, "dsp"},
#endif
    {S4Rows<Isa::kRef>::logits_s8, "ref"},
};
#endif
#if ATTN_WITH_S16
using LinearS4S16Fn = void (*)(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const LinearS16Params& p,
                               MatS16 y);
using Out32S4S16Fn = void (*)(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const int32_t* multiplier,
                              const int32_t* shift, MatS32 y);
inline constexpr Kernel<LinearS4S16Fn> kLinearS4S16[] = {
#if ATTN_WITH_AVX2
    {S4Rows<Isa::kAvx2>::linear_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {S4Rows<Isa::kNeon>::linear_s16, "neon"},
#endif
#if ATTN_HAVE_MVE
    {S4Rows<Isa::kMve>::linear_s16, "mve"},
#endif
#if ATTN_HAVE_DSP
    {S4Rows<Isa::kDsp>::linear_s16, "dsp"},
#endif
    {S4Rows<Isa::kRef>::linear_s16, "ref"},
};
inline constexpr Kernel<Out32S4S16Fn> kLinearResidualS4S16[] = {
#if ATTN_WITH_AVX2
    {S4Rows<Isa::kAvx2>::linear_residual_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {S4Rows<Isa::kNeon>::linear_residual_s16, "neon"},
#endif
#if ATTN_HAVE_MVE
    {S4Rows<Isa::kMve>::linear_residual_s16, "mve"},
#endif
#if ATTN_HAVE_DSP
    {S4Rows<Isa::kDsp>::linear_residual_s16, "dsp"},
#endif
    {S4Rows<Isa::kRef>::linear_residual_s16, "ref"},
};
inline constexpr Kernel<Out32S4S16Fn> kLogitsS4S16[] = {
#if ATTN_WITH_AVX2
    {S4Rows<Isa::kAvx2>::logits_s16, "avx2"},
#endif
#if ATTN_HAVE_NEON
    {S4Rows<Isa::kNeon>::logits_s16, "neon"},
#endif
#if ATTN_HAVE_MVE
    {S4Rows<Isa::kMve>::logits_s16, "mve"},
#endif
#if ATTN_HAVE_DSP
    {S4Rows<Isa::kDsp>::logits_s16, "dsp"},
#endif
    {S4Rows<Isa::kRef>::logits_s16, "ref"},
};
#endif

// ---- float <-> integer activations (attn::quantize_s8 ... in attn/kernels_fixed.h,
// the C API's attn_quantize_* / attn_dequantize_*, `attn run`'s conversions) ----
template <class T>
using QuantizeFn = void (*)(const float* x, size_t n, float scale, int32_t zero_point, T* q);
template <class T>
using DequantizeFn = void (*)(const T* q, size_t n, float scale, int32_t zero_point, float* y);
#if ATTN_WITH_S8
inline constexpr Kernel<QuantizeFn<int8_t>> kQuantizeS8[] = {
#if ATTN_WITH_AVX2
    {quantize_s8_avx2, "avx2"},
#endif
    {quantize_s8_ref, "ref"},
};
inline constexpr Kernel<DequantizeFn<int8_t>> kDequantizeS8[] = {
#if ATTN_WITH_AVX2
    {dequantize_s8_avx2, "avx2"},
#endif
    {dequantize_s8_ref, "ref"},
};
#endif
#if ATTN_WITH_S16
inline constexpr Kernel<QuantizeFn<int16_t>> kQuantizeS16[] = {
#if ATTN_WITH_AVX2
    {quantize_s16_avx2, "avx2"},
#endif
    {quantize_s16_ref, "ref"},
};
inline constexpr Kernel<DequantizeFn<int16_t>> kDequantizeS16[] = {
#if ATTN_WITH_AVX2
    {dequantize_s16_avx2, "avx2"},
#endif
    {dequantize_s16_ref, "ref"},
};
#endif

#undef ATTN_NEON_S8_NAME

}  // namespace detail
}  // namespace attn
