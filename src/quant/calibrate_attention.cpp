// calibrate_attention: the float32 forward of one calibration example, kept
// stage by stage to record the ranges the converter quantizes with. Offline
// code (float); the integer run-time path never calls it.
#include <cmath>
#include <limits>

#include "attention/attend_f32.h"
#include "attention/mask.h"
#include "attn/quantize.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels_f32.h"
#include "quant/calibrate_transformer.h"

namespace attn {
namespace {

using detail::n_of;
using detail::widen;

// An f32 forward plan whose config and shape plan_attention() accepts:
// kBadDtype, kPlanMismatch (a decode plan, or one edited by hand).
Status check_f32_forward_plan(const Plan& plan) {
  if (plan.dtype != DType::kF32) return Status::kBadDtype;
  Plan fresh;
  if (plan.decode || plan_attention(plan.config, plan.dtype, plan.query_len, plan.key_len, &fresh,
                                    plan.tile_rows) != Status::kOk) {
    return Status::kPlanMismatch;
  }
  return Status::kOk;
}

// Record the mask of one more calibration example in *r (CalibrationRanges:
// its MaskCoverage, or mixed_masks when none describes every example so far).
// `mask` is checked, over S keys. Ranges widened for any mask stay so.
void record_mask(const Mask& mask, int32_t S, CalibrationRanges* r) {
  const int32_t kept = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  MaskCoverage coverage = MaskCoverage::kNoMask;
  int32_t n = 0;
  bool described = mask.additive == nullptr;
  if (!mask.causal && kept != S) {
    coverage = MaskCoverage::kKeyLength;
    n = kept;
  } else if (mask.causal && mask.window != 0) {
    coverage = MaskCoverage::kCausalWindow;
    n = mask.window;
    described = described && kept == S;  // no coverage for a window with key padding
  } else if (mask.causal && kept != S) {
    coverage = MaskCoverage::kCausalKeyLength;
    n = kept;
  } else if (mask.causal) {
    coverage = MaskCoverage::kCausal;  // from its offset up
    n = mask.causal_offset;
    described = described && n <= ATTN_MAX_SEQ;
  }
  // A window or key padding is covered at offset 0 only (rows seeing the fewest keys).
  if (mask.causal && coverage != MaskCoverage::kCausal && mask.causal_offset != 0) described = false;
  const bool any_mask = r->examples > 0 && r->mask_coverage == MaskCoverage::kAnyMask;
  if (!any_mask) {
    if (r->examples == 0) {
      r->mask_coverage = coverage;
      r->mask_key_length = n;
      r->mixed_masks = !described;
    } else if (described && coverage == MaskCoverage::kCausal && r->mask_coverage == coverage) {
      r->mask_key_length = n < r->mask_key_length ? n : r->mask_key_length;  // every example's offset or more
    } else if (!described || coverage != r->mask_coverage || n != r->mask_key_length) {
      r->mixed_masks = true;
    }
  }
  ++r->examples;
}

// The calibration's float forward is the same on every host: scalar, sums in
// double in a fixed order (linear_double: quant/calibrate_transformer.h).

// s [n] = scale * q [hd] . k_j [hd] for the n rows of k.
void scores(ConstMatF32 q, ConstMatF32 k, float scale, float* s) {
  for (int32_t j = 0; j < k.rows; ++j) {
    double acc = 0.0;
    for (int32_t e = 0; e < k.cols; ++e)
      acc += static_cast<double>(q.data[e]) * static_cast<double>(k.row(j)[e]);
    s[j] = static_cast<float>(acc * static_cast<double>(scale));
  }
}

// softmax of s [n] in place, in double; a row of -inf only (fully masked) is all 0.
void softmax(float* s, int32_t n) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  double m = neg_inf;
  for (int32_t j = 0; j < n; ++j) m = std::fmax(m, static_cast<double>(s[j]));
  if (m == neg_inf) {
    for (int32_t j = 0; j < n; ++j) s[j] = 0.0f;
    return;
  }
  double sum = 0.0;
  for (int32_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(s[j]) - m);
  for (int32_t j = 0; j < n; ++j) s[j] = static_cast<float>(std::exp(static_cast<double>(s[j]) - m) / sum);
}

// out [hd] = p [n] V [n, hd]: each output summed in j order, 16 outputs in
// flight (one at a time waits on each addition).
void weighted_sum(const float* p, ConstMatF32 v, float* out) {
  constexpr int32_t kE = 16;
  for (int32_t e0 = 0; e0 < v.cols; e0 += kE) {
    const int32_t ne = v.cols - e0 < kE ? v.cols - e0 : kE;
    double acc[kE] = {};
    for (int32_t j = 0; j < v.rows; ++j) {
      const double pj = static_cast<double>(p[j]);
      const float* vr = v.row(j) + e0;  // [ne]
      for (int32_t e = 0; e < ne; ++e) acc[e] += pj * static_cast<double>(vr[e]);
    }
    for (int32_t e = 0; e < ne; ++e) out[e0 + e] = static_cast<float>(acc[e]);
  }
}

}  // namespace

size_t calibrate_attention_arena_bytes(const AttentionConfig& c, int32_t L, int32_t S) {
  const int32_t D = c.inner_dim(), Dkv = c.kv_dim(), E = c.embed_dim;
  return arena_round_up(n_of(L, D) * 4) * 2 + arena_round_up(n_of(S, Dkv) * 4) * 2 +
         arena_round_up(n_of(L, E) * 4) + arena_round_up(static_cast<size_t>(S) * 4);
}

Status calibrate_attention(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io,
                           Arena& arena, CalibrationRanges* ranges) {
  return detail::calibrate_attention_observed(plan, w, mask, io, arena, ranges, detail::TensorSink());
}

namespace detail {

Status calibrate_attention_observed(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io,
                                    Arena& arena, CalibrationRanges* ranges, const TensorSink& sink) {
  if (ranges == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_f32_forward_plan(plan));
  const AttentionConfig& c = plan.config;
  const bool rope = c.rope_base != 0.0f;
  if (io.query_position < 0) return Status::kBadPosition;
  if (w.wq == nullptr || w.wk == nullptr || w.wv == nullptr || w.wo == nullptr) return Status::kNullArgument;
  if (c.bias && (w.bq == nullptr || w.bk == nullptr || w.bv == nullptr || w.bo == nullptr)) {
    return Status::kNullArgument;
  }
  if (io.query == nullptr || io.key == nullptr || io.value == nullptr) return Status::kNullArgument;
  ATTN_TRY(detail::check_mask(mask, plan.key_len));

  const int32_t E = c.embed_dim, H = c.num_heads, hd = c.head_dim, D = H * hd, Dkv = c.num_kv_heads * hd;
  const int32_t L = plan.query_len, S = plan.key_len, group = H / c.num_kv_heads;
  const size_t mark = arena.mark();
  float *q = nullptr, *k = nullptr, *v = nullptr, *ctx = nullptr, *y = nullptr, *s = nullptr;
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(n_of(L, D), &q));              // Q [L, D]
    ATTN_TRY(arena.alloc_array(n_of(S, Dkv), &k));            // K [S, Dkv]
    ATTN_TRY(arena.alloc_array(n_of(S, Dkv), &v));            // V [S, Dkv]
    ATTN_TRY(arena.alloc_array(n_of(L, D), &ctx));            // context [L, D]
    ATTN_TRY(arena.alloc_array(n_of(L, E), &y));              // output [L, E]
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(S), &s));  // one score row [S]
    return Status::kOk;
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  detail::linear_double(matrix(io.query, L, E), matrix(w.wq, D, E), c.bias ? w.bq : nullptr, matrix(q, L, D));
  detail::linear_double(matrix(io.key, S, c.kdim), matrix(w.wk, Dkv, c.kdim), c.bias ? w.bk : nullptr,
                        matrix(k, S, Dkv));
  detail::linear_double(matrix(io.value, S, c.vdim), matrix(w.wv, Dkv, c.vdim), c.bias ? w.bv : nullptr,
                        matrix(v, S, Dkv));
  // Rotary embedding: the integer forward holds Q and K on one grid before and
  // after the rotation (which keeps each pair's norm but not each element's
  // range), so both widen the ranges. Queries at query_position + i, keys at j.
  bool finite = true;
  if (rope) {
    finite = widen(ranges->q, q, n_of(L, D)) && widen(ranges->k, k, n_of(S, Dkv));
    if (finite && sink.fn != nullptr) {
      sink.fn(sink.context, kQ, q, L, D);
      sink.fn(sink.context, kK, k, S, Dkv);
    }
    detail::rope_f32_ref(matrix(q, L, D), hd, io.query_position, c.rope_base);
    detail::rope_f32_ref(matrix(k, S, Dkv), hd, 0, c.rope_base);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int32_t mask_stride = mask.additive_stride != 0 ? mask.additive_stride : S;
  for (int32_t i = 0; i < L; ++i) {
    const detail::KeyRange keys = detail::visible_keys(mask, i, S);
    const int32_t n = keys.end - keys.begin;
    for (int32_t h = 0; h < H; ++h) {
      const int32_t g0 = (h / group) * hd;
      const MatF32 out = MatF32{ctx + static_cast<ptrdiff_t>(i) * D + h * hd, 1, hd, D};  // [1, hd]
      if (n <= 0) {
        for (int32_t e = 0; e < hd; ++e) out.data[e] = 0.0f;
        continue;
      }
      const ConstMatF32 qh = ConstMatF32{q + static_cast<ptrdiff_t>(i) * D + h * hd, 1, hd, D};  // [1, hd]
      const ConstMatF32 kh = ConstMatF32{k + static_cast<ptrdiff_t>(keys.begin) * Dkv + g0, n, hd, Dkv};
      const ConstMatF32 vh = ConstMatF32{v + static_cast<ptrdiff_t>(keys.begin) * Dkv + g0, n, hd, Dkv};
      scores(qh, kh, scale, s);
      if (mask.additive != nullptr) {
        const float* m = mask.additive + static_cast<ptrdiff_t>(i) * mask_stride + keys.begin;  // [n]
        for (int32_t j = 0; j < n; ++j) s[j] += m[j];
      }
      softmax(s, n);
      weighted_sum(s, vh, out.data);
    }
  }
  detail::linear_double(matrix(static_cast<const float*>(ctx), L, D), matrix(w.wo, E, D),
                        c.bias ? w.bo : nullptr, matrix(y, L, E));
  finite = finite && widen(ranges->query, io.query, n_of(L, E)) &&
           widen(ranges->key, io.key, n_of(S, c.kdim)) && widen(ranges->value, io.value, n_of(S, c.vdim)) &&
           widen(ranges->q, q, n_of(L, D)) && widen(ranges->k, k, n_of(S, Dkv)) &&
           widen(ranges->v, v, n_of(S, Dkv)) && widen(ranges->context, ctx, n_of(L, D)) &&
           widen(ranges->output, y, n_of(L, E));
  if (finite && io.output != nullptr) {
    for (size_t i = 0; i < n_of(L, E); ++i) io.output[i] = y[i];
  }
  if (finite && sink.fn != nullptr) {
    sink.fn(sink.context, kAttnIn, io.query, L, E);
    sink.fn(sink.context, kQ, q, L, D);
    sink.fn(sink.context, kK, k, S, Dkv);
    sink.fn(sink.context, kV, v, S, Dkv);
    sink.fn(sink.context, kContext, ctx, L, D);
    sink.fn(sink.context, kAttnOut, y, L, E);
  }
  if (finite) record_mask(mask, S, ranges);
  arena.release(mark);
  return finite ? Status::kOk : Status::kBadQuantParams;
}

}  // namespace detail

Status calibrate_any_mask(const Plan& plan, const WeightsF32& w, const IoF32& io, Arena& arena,
                          CalibrationRanges* ranges) {
  if (ranges == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_f32_forward_plan(plan));
  const AttentionConfig& c = plan.config;
  if (w.wv == nullptr || w.wo == nullptr || (c.bias && (w.bv == nullptr || w.bo == nullptr)))
    return Status::kNullArgument;
  if (io.value == nullptr) return Status::kNullArgument;
  const int32_t E = c.embed_dim, H = c.num_heads, hd = c.head_dim, D = H * hd, Dkv = c.num_kv_heads * hd;
  const int32_t L = plan.query_len, S = plan.key_len, group = H / c.num_kv_heads;
  const size_t mark = arena.mark();
  float *v = nullptr, *ctx = nullptr, *y = nullptr;
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(n_of(S, Dkv), &v));  // V [S, Dkv]
    ATTN_TRY(arena.alloc_array(n_of(L, D), &ctx));  // L single-key context rows [L, D]
    ATTN_TRY(arena.alloc_array(n_of(L, E), &y));    // their outputs [L, E]
    return Status::kOk;
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  detail::linear_double(matrix(io.value, S, c.vdim), matrix(w.wv, Dkv, c.vdim), c.bias ? w.bv : nullptr,
                        matrix(v, S, Dkv));
  // Context: V's range (a convex combination of V rows, or 0 for a fully masked row).
  bool finite = widen(ranges->context, v, n_of(S, Dkv));
  // Output: every head attending to key j alone, key by key, L rows at a time.
  for (int32_t j0 = 0; finite && j0 < S; j0 += L) {
    const int32_t rows = S - j0 < L ? S - j0 : L;
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t h = 0; h < H; ++h) {
        const float* vj = v + static_cast<ptrdiff_t>(j0 + r) * Dkv + (h / group) * hd;  // [hd]
        float* dst = ctx + static_cast<ptrdiff_t>(r) * D + h * hd;                      // [hd]
        for (int32_t e = 0; e < hd; ++e) dst[e] = vj[e];
      }
    }
    detail::linear_double(matrix(static_cast<const float*>(ctx), rows, D), matrix(w.wo, E, D),
                          c.bias ? w.bo : nullptr, matrix(y, rows, E));
    finite = widen(ranges->output, y, n_of(rows, E));
  }
  if (finite) {  // the ranges now hold for any mask, and stay so for later examples
    ranges->mask_coverage = MaskCoverage::kAnyMask;
    ranges->mask_key_length = 0;
    ranges->mixed_masks = false;
    if (ranges->examples == 0) ranges->examples = 1;
  }
  arena.release(mark);
  return finite ? Status::kOk : Status::kBadQuantParams;
}

}  // namespace attn
