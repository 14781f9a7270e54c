// quant/calibrate_transformer.h: the converter's float forward of a whole
// model (quant/calibrate_transformer.cpp), for quantize_transformer.cpp, and
// what it shares with the attention block's (quant/calibrate_attention.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "attn/quantize.h"
#include "attn/transformer.h"
#include "quant/choose_range.h"

namespace attn {
namespace detail {

// Widen r by the n values at p; false if one is not finite.
inline bool widen(Range& r, const float* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(p[i])) return false;
    r.min = p[i] < r.min ? p[i] : r.min;
    r.max = p[i] > r.max ? p[i] : r.max;
  }
  return true;
}

inline size_t n_of(int32_t a, int32_t b) { return static_cast<size_t>(a) * static_cast<size_t>(b); }

// The converter's float products: y[i][o] = b[o] + sum over k of x[i][k] w[o][k],
// summed in double in k order, for every i < x.rows and o < w.rows, handed to
// emit(i, o, sum). The sums are the same on every host (a product of two
// floats is exact in double, so a contracted multiply-add changes nothing;
// the order is fixed), never the dispatched kernel table's, whose float sums
// differ by ISA in the last bits. Four rows by four outputs at a time keep 16
// sums in flight (one at a time waits on each addition), over a panel of the
// four outputs' weights in double, [k][4], so the compiler vectorizes over
// the four outputs.
template <typename Emit>
void linear_double_each(ConstMatF32 x, ConstMatF32 w, const float* b, Emit&& emit) {
  constexpr int32_t kR = 2, kO = 4, kChunk = 64;
  const int32_t K = x.cols;
  for (int32_t i0 = 0; i0 < x.rows; i0 += kR) {
    const int32_t nr = x.rows - i0 < kR ? x.rows - i0 : kR;
    for (int32_t o0 = 0; o0 < w.rows; o0 += kO) {
      const int32_t no = w.rows - o0 < kO ? w.rows - o0 : kO;
      double acc[kR][kO];
      for (int32_t r = 0; r < kR; ++r)
        for (int32_t c = 0; c < kO; ++c)
          acc[r][c] = b != nullptr && c < no ? static_cast<double>(b[o0 + c]) : 0.0;
      for (int32_t k0 = 0; k0 < K; k0 += kChunk) {
        const int32_t nk = K - k0 < kChunk ? K - k0 : kChunk;
        double panel[kChunk][kO];  // the outputs' weights [k][output], 0 past the last output
        for (int32_t c = 0; c < kO; ++c) {
          for (int32_t k = 0; k < nk; ++k)
            panel[k][c] = c < no ? static_cast<double>(w.row(o0 + c)[k0 + k]) : 0.0;
        }
        const float* xr[kR];
        for (int32_t r = 0; r < kR; ++r) xr[r] = x.row(i0 + (r < nr ? r : 0)) + k0;  // [nk] each
        for (int32_t k = 0; k < nk; ++k) {
          for (int32_t r = 0; r < kR; ++r) {
            const double xv = static_cast<double>(xr[r][k]);
            for (int32_t c = 0; c < kO; ++c) acc[r][c] += xv * panel[k][c];
          }
        }
      }
      for (int32_t r = 0; r < nr; ++r)
        for (int32_t c = 0; c < no; ++c) emit(i0 + r, o0 + c, acc[r][c]);
    }
  }
}

// y [rows, out] = x [rows, in] W^T + b (b null: none), summed as linear_double_each.
inline void linear_double(ConstMatF32 x, ConstMatF32 w, const float* b, MatF32 y) {
  linear_double_each(x, w, b, [&](int32_t i, int32_t o, double v) { y.row(i)[o] = static_cast<float>(v); });
}

struct LayerRanges {
  CalibrationRanges attention;  // the block's (query = key = value: the attention input)
  Range ffn_in;                 // the FFN input (N2 output, or the residual in post-norm)
  Range h1, h3;                 // W1, W3 outputs
  Range g;                      // the W2 input (act(h1), or act(h1) * h3)
  Range ffn_out;                // W2 output
};

struct ModelRanges {
  double residual_max = 0.0;  // max |x| of the residual stream, every stage
  LayerRanges layers[ATTN_MAX_LAYERS];
  Range head_in;           // the head's input (a head)
  Range hidden;            // the output hidden state (no head)
  double logit_max = 0.0;  // max |logit|
};

// The tensors of a layer the converter quantizes on grids of their own, by
// kind (Collect's histogram index within a layer).
enum TensorKind : int32_t { kAttnIn, kQ, kK, kV, kContext, kAttnOut, kFfnIn, kH1, kH3, kG, kKinds };

// Where the attention block's calibration forward hands its tensors (dense
// [rows, cols] floats of kind kAttnIn .. kAttnOut; Q and K before and after a
// rotation); fn null: nowhere.
struct TensorSink {
  void (*fn)(void* context, int32_t kind, const float* x, int32_t rows, int32_t cols) = nullptr;
  void* context = nullptr;
};

// calibrate_attention() (attn/quantize.h) that also hands every tensor it widens a range by to sink.
Status calibrate_attention_observed(const Plan& plan, const WeightsF32& w, const Mask& mask, const IoF32& io,
                                    Arena& arena, CalibrationRanges* ranges, const TensorSink& sink);

// What a calibration forward collects besides the ranges (each null: not collected).
struct Collect {
  // [L * kKinds + 1]: layer l's tensor k at l * kKinds + k, the head input (or
  // the hidden output) last; domains from the min/max of an earlier pass.
  Histogram* hist = nullptr;
  // Per layer, chan_stride(c) doubles: max |x| per channel of the attention
  // input [E], the FFN input [E], the W2 input g [F], the context [D].
  double* chan = nullptr;
};
inline int32_t chan_stride(const TransformerConfig& c) {
  return 2 * c.embed_dim + c.ffn_dim + c.attention().inner_dim();
}

// The activation in double (attn/transformer.h's definitions).
double activation(Activation a, double x);

// Scratch bytes of float_forward for n tokens.
size_t float_forward_bytes(const TransformerConfig& c, int32_t n);

// The float forward of tokens [n] (positions 0 .. n - 1; checked by the
// caller): widens *ranges (null: none), writes the residual after the
// embeddings and, per layer, after its attention and after its FFN (each
// with its post-norm) into snapshots [2 L + 1, n, E] (null: none)
// and the output into out [n, output_dim]; collect (null: none) gathers more.
Status float_forward(const TransformerConfig& c, const TransformerWeightsF32& w, const int32_t* tokens,
                     int32_t n, Arena& scratch, ModelRanges* ranges, float* snapshots, float* out,
                     const Collect* collect = nullptr);

}  // namespace detail
}  // namespace attn
