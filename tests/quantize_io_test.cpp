// attn::quantize_s8 / _s16 (what `attn run` and the C API quantize float
// inputs with, the dispatched variant) against attn::quantize_value, value by
// value: random values and scales, exact ties of the rounding (power-of-two
// scales), values that clamp, infinities, and huge values; NaN gives the zero
// point. Dequantization against the float64 product rounded once.
// (tests/variant_tester.h runs every variant against ref.)
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../tools/cli/quant_util.h"
#include "attn/kernels_fixed.h"
#include "attn/quantize.h"

namespace {

template <class T>
void check_same(const std::vector<float>& x, attn::QuantParams p, attn::DType dt) {
  std::vector<T> got(x.size());
  attn::tools::quantize_values(x.data(), x.size(), p, got.data());
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

TEST_CASE("quantize_s8/_s16: NaN gives the zero point, bad parameters write nothing", "[quant]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(21, nan);  // past one 8-value step and a tail
  x[3] = 1.0f;
  std::vector<int8_t> q8(x.size());
  std::vector<int16_t> q16(x.size());
  REQUIRE(attn::quantize_s8(x.data(), x.size(), 0.5f, -7, q8.data()) == attn::Status::kOk);
  REQUIRE(attn::quantize_s16(x.data(), x.size(), 0.5f, 300, q16.data()) == attn::Status::kOk);
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(int{q8[i]} == (i == 3 ? -5 : -7));
    CHECK(int{q16[i]} == (i == 3 ? 302 : 300));
  }
  std::vector<int8_t> untouched(4, 9);
  std::vector<float> y(4, 2.0f);
  CHECK(attn::quantize_s8(x.data(), 4, 0.0f, 0, untouched.data()) == attn::Status::kBadQuantParams);
  CHECK(attn::quantize_s8(x.data(), 4, nan, 0, untouched.data()) == attn::Status::kBadQuantParams);
  CHECK(attn::quantize_s8(x.data(), 4, 1.0f, 128, untouched.data()) == attn::Status::kBadQuantParams);
  CHECK(attn::quantize_s16(x.data(), 4, 1.0f, 32768, q16.data()) == attn::Status::kBadQuantParams);
  CHECK(attn::quantize_s8(nullptr, 4, 1.0f, 0, untouched.data()) == attn::Status::kNullArgument);
  CHECK(attn::dequantize_s8(untouched.data(), 4, -1.0f, 0, y.data()) == attn::Status::kBadQuantParams);
  CHECK(attn::dequantize_s8(untouched.data(), 4, 1.0f, 0, nullptr) == attn::Status::kNullArgument);
  CHECK(attn::quantize_s8(nullptr, 0, 1.0f, 0, nullptr) == attn::Status::kOk);  // nothing to convert
  for (int8_t v : untouched) CHECK(int{v} == 9);
  for (float v : y) CHECK(v == 2.0f);
}
