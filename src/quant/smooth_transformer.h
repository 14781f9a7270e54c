// quant/smooth_transformer.h: SmoothQuant-style smoothing of a float model's
// activation outliers (smooth_transformer.cpp), for the whole-model converter
// (quantize_transformer.cpp). Offline code.
//
// Channel j of a matmul input X is divided by s_j > 0 and the weights that
// read it multiplied by s_j: the float model computes the same function and
// the int8 grid of X, no longer set by a few outlier channels, gets finer;
// s_j = max|X_j|^a / max|W_j|^(1 - a) (a: the strength) moves part of the
// range into the weights' per-channel scales. Where the division goes:
//   attention input (pre-norm)  N1 weight (and bias) -> Wq, Wk, Wv columns
//   FFN input (pre-norm)        N2 weight (and bias) -> W1, W3 columns
//   W2 input g (gated FFN)      W3 rows and b3 -> W2 columns (g = act(h1) h3)
//   context                     Wv rows and bv -> Wo columns, per KV group
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/status.h"
#include "attn/transformer.h"

namespace attn {
namespace detail {

// Bytes smooth_weights() carves: the layers [L] and their changed tensors.
size_t smooth_weights_bytes(const TransformerConfig& c);

// *out = w with every layer smoothed with strength a (in (0, 1]) from chan,
// the calibration's max |x| per channel (Collect::chan, chan_stride(c) per
// layer); the changed layers live in `arena` (smooth_weights_bytes). A
// channel that never left 0, or whose weights are all 0, keeps s_j = 1.
Status smooth_weights(const TransformerConfig& c, const TransformerWeightsF32& w, const double* chan,
                      double a, Arena& arena, TransformerWeightsF32* out);

}  // namespace detail
}  // namespace attn
