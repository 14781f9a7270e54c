// quant/choose_range.h: activation ranges chosen by the quantization error on
// the calibration data (choose_range.cpp), for the whole-model converter
// (quantize_transformer.cpp). Offline code.
//
// A second calibration forward fills one histogram per quantized tensor over
// its min/max range; the clipping range is then the one, among the min/max
// range scaled by a grid of ratios, whose quantization grid (the converter's
// choose_activation_quant) gives the least mean squared error on the
// histogram: rounding error step^2 / 12 per value inside the grid, the
// distance to the grid's edge per value outside (exact zeros cost nothing:
// every grid holds 0).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/quantize.h"

namespace attn {
namespace detail {

constexpr int32_t kRangeBins = 2048;  // per histogram

// One tensor's values: kRangeBins counts over [domain.min, domain.max] (the
// min/max range of the first calibration pass), and the exact zeros apart.
struct Histogram {
  Range domain;
  uint32_t* counts = nullptr;  // [kRangeBins]
  uint64_t zeros = 0;
};

// Count the n values at p (each inside domain, up to rounding).
void histogram_add(Histogram& h, const float* p, size_t n);

// Estimated mean squared error of quantizing h's values with p (dtype's grid).
double histogram_mse(const Histogram& h, QuantParams p, DType dtype);

// The range of the least estimated error: domain scaled by r in
// 1, 0.98, 0.98^2, ..., 0.98^150 (about 0.05; the zero of the grid stays
// inside), both ends alike; int8 (asymmetric) then each end in turn with
// the other fixed, two rounds. The domain itself when h is empty.
Range choose_range_mse(const Histogram& h, DType dtype);

}  // namespace detail
}  // namespace attn
