// mve/dot_rows_s8_mve.h: dot_rows for the int32-output linears (W2 into the
// residual, the LM head), Helium (MVE): acc[m, n] = bias[n] + sum_k x[m, k] w[n, k]
// handed to out(m, n, acc); the contract is in kernels/kernels_model_fixed.h
// (the W2 section). Include only under ATTN_HAVE_MVE.
#pragma once

#include <cstddef>
#include <cstdint>

#include <arm_mve.h>

#include "attn/kernels_fixed.h"
#include "kernels/arch.h"

namespace attn {
namespace detail {
namespace mve {

// Every row of x: four channels per pass, 16 k per step (one load of x, per
// channel one load and one VMLADAVA), the last K % 16 tail-predicated (zero
// lanes in both operands add nothing).
template <typename Out>
void dot_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
  const int32_t K = x.cols, K16 = K & ~15;
  const mve_pred16_t tail = vctp8q(static_cast<uint32_t>(K - K16));
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* const xr = x.row(m);
    int32_t n = 0;
    for (; n + 4 <= w.rows; n += 4) {
      const int8_t* b0 = w.row(n);
      const int8_t* b1 = w.row(n + 1);
      const int8_t* b2 = w.row(n + 2);
      const int8_t* b3 = w.row(n + 3);
      const int8_t* px = xr;
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      if (bias != nullptr) s0 = bias[n], s1 = bias[n + 1], s2 = bias[n + 2], s3 = bias[n + 3];
      for (int32_t i = K16 >> 4; i > 0; --i) {
        const int8x16_t xv = vldrbq_s8(px);
        s0 = vmladavaq_s8(s0, xv, vldrbq_s8(b0));
        s1 = vmladavaq_s8(s1, xv, vldrbq_s8(b1));
        s2 = vmladavaq_s8(s2, xv, vldrbq_s8(b2));
        s3 = vmladavaq_s8(s3, xv, vldrbq_s8(b3));
        px += 16, b0 += 16, b1 += 16, b2 += 16, b3 += 16;
      }
      if (K16 < K) {
        const int8x16_t xv = vldrbq_z_s8(px, tail);
        s0 = vmladavaq_s8(s0, xv, vldrbq_z_s8(b0, tail));
        s1 = vmladavaq_s8(s1, xv, vldrbq_z_s8(b1, tail));
        s2 = vmladavaq_s8(s2, xv, vldrbq_z_s8(b2, tail));
        s3 = vmladavaq_s8(s3, xv, vldrbq_z_s8(b3, tail));
      }
      out(m, n, s0);
      out(m, n + 1, s1);
      out(m, n + 2, s2);
      out(m, n + 3, s3);
    }
    for (; n < w.rows; ++n) {
      const int8_t* b0 = w.row(n);
      int32_t s0 = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < K; k += 16) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(K - k));
        s0 = vmladavaq_s8(s0, vldrbq_z_s8(xr + k, p), vldrbq_z_s8(b0 + k, p));
      }
      out(m, n, s0);
    }
  }
}

}  // namespace mve
}  // namespace detail
}  // namespace attn
