// tools/cli/quant_util.h's quantize_values (what `attn run` quantizes float
// inputs with) against attn::quantize_value, value by value: random values
// and scales, exact ties of the rounding (power-of-two scales), values that
// clamp, infinities, and huge values.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../tools/cli/quant_util.h"
#include "attn/quantize.h"

namespace {

template <class T>
void check_same(const std::vector<float>& x, attn::QuantParams p, attn::DType dt) {
  std::vector<T> got(x.size());
  attn::tools::quantize_values(x.data(), x.size(), p, dt, got.data());
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (int32_t{got[i]} != attn::quantize_value(x[i], p, dt)) ++bad;
  }
  INFO("scale=" << p.scale << " zp=" << p.zero_point << " dtype=" << int(dt));
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("quantize_values equals quantize_value bit for bit", "[cli][quant]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> log_scale(-12.0f, 4.0f);
  std::uniform_int_distribution<int> zp8(-128, 127), zp16(-300, 300), tie(-70000, 70000);
  for (int iter = 0; iter < 200; ++iter) {
    const bool pow2 = iter % 2 == 0;
    const float scale = pow2 ? std::ldexp(1.0f, int(log_scale(rng))) : std::exp2(log_scale(rng));
    std::vector<float> x;
    for (int i = 0; i < 512; ++i) x.push_back(normal(rng) * scale * 200.0f);
    if (pow2) {  // exact halves of the grid: x / scale = k + 1/2
      for (int i = 0; i < 512; ++i) x.push_back((float(tie(rng)) + 0.5f) * scale);
    }
    for (float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(),
                    -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                    0.5f * scale, -0.5f * scale, 1.5f * scale, -2.5f * scale}) {
      x.push_back(v);
    }
    check_same<int8_t>(x, attn::QuantParams{scale, zp8(rng)}, attn::DType::kS8);
    check_same<int16_t>(x, attn::QuantParams{scale, zp16(rng)}, attn::DType::kS16);
  }
}

TEST_CASE("dequantize_values equals dequantize_value bit for bit", "[cli][quant]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> log_scale(-20.0f, 6.0f);
  std::uniform_int_distribution<int> zp8(-128, 127), v16(-32768, 32767);
  for (int iter = 0; iter < 100; ++iter) {
    const attn::QuantParams p{std::exp2(log_scale(rng)), zp8(rng)};
    std::vector<int8_t> q8;
    for (int v = -128; v <= 127; ++v) q8.push_back(static_cast<int8_t>(v));
    std::vector<int16_t> q16;
    for (int i = 0; i < 261; ++i) q16.push_back(static_cast<int16_t>(v16(rng)));  // 261: the scalar tail too
    std::vector<float> y8(q8.size()), y16(q16.size());
    attn::tools::dequantize_values(q8.data(), q8.size() - 3, p, y8.data());  // the last 3 untouched
    attn::tools::dequantize_values(q16.data(), q16.size(), p, y16.data());
    size_t bad = 0;
    for (size_t i = 0; i + 3 < q8.size(); ++i)
      bad += y8[i] != static_cast<float>(attn::tools::dequantize_value(q8[i], p.scale, p.zero_point));
    for (size_t i = 0; i < q16.size(); ++i)
      bad += y16[i] != static_cast<float>(attn::tools::dequantize_value(q16[i], p.scale, p.zero_point));
    INFO("scale=" << p.scale << " zp=" << p.zero_point);
    CHECK(bad == 0);
  }
}
