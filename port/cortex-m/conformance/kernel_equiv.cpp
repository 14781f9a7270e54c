// kernel_equiv.cpp: every kernel variant this core's build compiles (every
// row of every table in src/kernels/kernel_table.h) against its table's ref
// row, on the board itself, through the tester the host suite shares
// (tests/variant_tester.h): fixed point bit-exact, float32 within its error
// bounds, each op with controls that must be caught. Plus the Helium
// helpers' own checks on the M55. Buffers: the tester's static pools, sized
// by ATTN_VARIANT_TESTER_IN_KIB / _OUT_KIB (conformance.cmake: smaller on the
// M55, whose data RAM is 512 KiB; cases that do not fit are counted).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "conformance.h"
#include "kernels/arch.h"
#include "kernels/fixed_point.h"
#include "variant_tester.h"
#if ATTN_HAVE_MVE
#include "kernels/mve/mve_requantize.h"
#endif
#if ATTN_HAVE_MVE_FP
#include "kernels/mve/mve_f32.h"
#endif

namespace {

using namespace attn;

int g_failed = 0;
int g_checks = 0;
variant_tester::Rng g_rng(0x12345678u);

#if ATTN_HAVE_MVE_FP && ATTN_WITH_F32
// The softmax's vector exp against exp in double, in ulps of the exact value:
// every float in [-1e-3, 0] near 0 and [kMin, kMin + 1e-3] near the flush
// point are sampled densely, plus 20000 random points of [-87.33, 0].
// The bound is the AVX2 / NEON one the softmax tolerance assumes (1.26 ulp);
// below ln(FLT_MIN) and at -INFINITY the result must be exactly 0. One check.
void exp_mve_cases() {
  ++g_checks;
  double worst = 0.0;
  int bad = 0;
  auto check4 = [&](float x0, float x1, float x2, float x3) {
    const float in[4] = {x0, x1, x2, x3};
    float out[4];
    vst1q_f32(out, detail::mve::exp_nonpositive(vld1q_f32(in)));
    for (int l = 0; l < 4; ++l) {
      if (in[l] < -87.336544f) {
        if (out[l] != 0.0f) ++bad;
        continue;
      }
      const double e = std::exp(static_cast<double>(in[l]));
      int ex = 0;
      std::frexp(e, &ex);
      const double ulps = std::fabs(static_cast<double>(out[l]) - e) / std::ldexp(1.0, ex - 24);
      if (!(ulps <= 1.26)) ++bad;
      if (!(ulps <= worst)) worst = ulps;
    }
  };
  check4(0.0f, -0.0f, -INFINITY, -87.336544f);
  check4(-87.3365f, -87.34f, -88.0f, -1e30f);
  for (int i = 0; i < 4000; ++i) {
    const float s = static_cast<float>(i) * 2.5e-7f;
    check4(-s, -s - 1e-7f, -87.336544f + s, -87.33654f + s);
  }
  for (int i = 0; i < 5000; ++i)
    check4(43.668f * (g_rng.frand() - 1.0f), 43.668f * (g_rng.frand() - 1.0f),
           43.668f * (g_rng.frand() - 1.0f), 43.668f * (g_rng.frand() - 1.0f));
  std::printf("kernel mve::exp_nonpositive: 36008 points, worst %.3f ulp (bound 1.26), %d out of bound\n",
              worst, bad);
  if (bad != 0) {
    ++g_failed;
    std::printf("FAIL kernel mve::exp_nonpositive: %d values past 1.26 ulp or not flushed to 0\n", bad);
  }
}
#endif

#if ATTN_HAVE_MVE
// The softmax's reciprocal on Helium lanes against fp::, over its whole
// domain a in [0, 2^31): the ends, every power of two and its neighbours,
// and 20000 random points. One check.
void reciprocal_mve_cases() {
  ++g_checks;
  int bad = 0;
  auto check = [&](int32_t a) {
    if (detail::mve::one_over_one_plus_x(a) != fp::one_over_one_plus_x_for_x_in_0_1(a)) ++bad;
  };
  check(0);
  check(INT32_MAX);
  for (int b = 0; b < 31; ++b) {
    const int32_t v = int32_t{1} << b;
    check(v - 1);
    check(v);
    check(v + 1);
  }
  for (int i = 0; i < 20000; ++i)
    check(static_cast<int32_t>((g_rng.next() << 8 ^ g_rng.next()) & 0x7FFFFFFFu));
  if (bad != 0) {
    ++g_failed;
    std::printf("FAIL kernel mve::one_over_one_plus_x: %d of 20095 values != fp::\n", bad);
  }
}
#endif

}  // namespace

int run_kernel_equivalence(int* checks) {
#if ATTN_HAVE_MVE
  reciprocal_mve_cases();
#endif
#if ATTN_HAVE_MVE_FP && ATTN_WITH_F32
  exp_mve_cases();
#endif
  static variant_tester::Report report;
  report.log = [](const char* line) { std::printf("%s\n", line); };
  variant_tester::run_all(report);
  for (int i = 0; i < report.count; ++i) {
    const variant_tester::Stat& s = report.stats[i];
    std::printf("kernel %s/%s: checks=%d failed=%d\n", s.op, s.isa, s.checks, s.failed);
  }
  if (report.skipped > 0)
    std::printf("kernel cases past this image's buffers: %d (skipped)\n", report.skipped);
  *checks = g_checks + report.checks;
  return g_failed + report.failed;
}
