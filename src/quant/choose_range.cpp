// choose_range: the clipping range of one activation tensor by its
// quantization error on the calibration data (quant/choose_range.h).
#include "quant/choose_range.h"

#include <cmath>

namespace attn {
namespace detail {

void histogram_add(Histogram& h, const float* p, size_t n) {
  const double lo = static_cast<double>(h.domain.min), hi = static_cast<double>(h.domain.max);
  const double per = hi > lo ? kRangeBins / (hi - lo) : 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] == 0.0f) {
      ++h.zeros;
      continue;
    }
    double b = std::floor((static_cast<double>(p[i]) - lo) * per);
    b = b < 0.0 ? 0.0 : b > kRangeBins - 1 ? kRangeBins - 1 : b;
    ++h.counts[static_cast<int32_t>(b)];
  }
}

double histogram_mse(const Histogram& h, QuantParams p, DType dtype) {
  const double lo = static_cast<double>(h.domain.min), hi = static_cast<double>(h.domain.max);
  const double width = (hi - lo) / kRangeBins;
  const double s = static_cast<double>(p.scale);
  const double qmin = dtype == DType::kS16 ? -32768.0 : -128.0, qmax = dtype == DType::kS16 ? 32767.0 : 127.0;
  const double gmin = s * (qmin - p.zero_point), gmax = s * (qmax - p.zero_point);  // the grid's ends
  double err = 0.0;
  uint64_t count = h.zeros;
  for (int32_t b = 0; b < kRangeBins; ++b) {
    if (h.counts[b] == 0) continue;
    const double n = static_cast<double>(h.counts[b]);
    const double x = lo + (b + 0.5) * width;
    count += h.counts[b];
    if (x < gmin - 0.5 * s) {
      err += n * ((gmin - x) * (gmin - x) + width * width / 12.0);
    } else if (x > gmax + 0.5 * s) {
      err += n * ((x - gmax) * (x - gmax) + width * width / 12.0);
    } else {
      err += n * s * s / 12.0;
    }
  }
  return count > 0 ? err / static_cast<double>(count) : 0.0;
}

Range choose_range_mse(const Histogram& h, DType dtype) {
  const auto error = [&](double rlo, double rhi, Range* out) {
    out->min = static_cast<float>(static_cast<double>(h.domain.min) * rlo);
    out->max = static_cast<float>(static_cast<double>(h.domain.max) * rhi);
    return histogram_mse(h, choose_activation_quant(*out, dtype), dtype);
  };
  // The ratios r_k = 0.98^k, k in [0, 150].
  const auto ratio = [](int32_t k) { return std::pow(0.98, k); };
  Range best = h.domain;
  double best_err = error(1.0, 1.0, &best);
  int32_t klo = 0, khi = 0;
  // Both ends scaled alike (int16 grids are symmetric: the one choice there) ...
  for (int32_t k = 1; k <= 150; ++k) {
    Range c;
    const double err = error(ratio(k), ratio(k), &c);
    if (err < best_err) {
      best_err = err;
      best = c;
      klo = khi = k;
    }
  }
  if (dtype == DType::kS16) return best;
  // ... then, int8 grids being asymmetric, each end in turn with the other fixed, twice.
  for (int32_t round = 0; round < 2; ++round) {
    for (int32_t end = 0; end < 2; ++end) {
      for (int32_t k = 0; k <= 150; ++k) {
        Range c;
        const double err = end == 0 ? error(ratio(k), ratio(khi), &c) : error(ratio(klo), ratio(k), &c);
        if (err < best_err) {
          best_err = err;
          best = c;
          (end == 0 ? klo : khi) = k;
        }
      }
    }
  }
  return best;
}

}  // namespace detail
}  // namespace attn
