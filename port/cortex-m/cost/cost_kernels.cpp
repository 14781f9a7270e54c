// cost_kernels.cpp: instructions of each fixed-point kernel of forward_s8 at
// the (L = S = 64, E = 64, H = 4) MCU shape, dispatched variant beside ref,
// to see where a forward's instructions go. One line per kernel:
//
//   kernel board=mps2-an386 op=linear_s8 shape=64x64x64 calls=4 insns=N ref=N kernels=dsp
//
// insns / ref: instructions of `calls` calls (one forward's worth).
#include <cstdint>
#include <cstdio>

#include "attn/config.h"
#include "internal/kernels_fixed.h"
#include "port/port.h"

namespace {

using namespace attn;

constexpr int32_t kL = 64, kE = 64, kH = 4, kD = 16, kT = ATTN_TILE_ROWS;

alignas(16) int8_t g_x[kL * kE];  // [L, E]
alignas(16) int8_t g_w[kE * kE];  // [E, E]
alignas(16) int8_t g_y[kL * kE];  // [L, E]
int32_t g_bias[kE];
int32_t g_mult[kE];
int32_t g_shift[kE];
alignas(16) int32_t g_s[kT * kL];  // [T, S]
uint32_t g_recip[kT];              // [T]

uint32_t g_rng = 99u;
int32_t uniform(int32_t spread) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return static_cast<int32_t>((g_rng >> 8) % static_cast<uint32_t>(2 * spread + 1)) - spread;
}

template <typename F>
uint64_t count(int32_t calls, F f) {
  port_counter_start();
  for (int32_t i = 0; i < calls; ++i) f();
  return port_counter_stop();
}

void report(const char* op, const char* shape, int32_t calls, uint64_t insns, uint64_t ref) {
  std::printf("kernel board=%s op=%s shape=%s calls=%ld insns=%lu ref=%lu kernels=%s\n", port_board_name(),
              op, shape, static_cast<long>(calls), static_cast<unsigned long>(insns),
              static_cast<unsigned long>(ref), detail::kernel_set_fixed());
}

}  // namespace

int main() {
  for (int8_t& v : g_x) v = static_cast<int8_t>(uniform(40));
  for (int8_t& v : g_w) v = static_cast<int8_t>(uniform(127));
  for (int32_t i = 0; i < kE; ++i) {
    g_bias[i] = uniform(2000);
    g_mult[i] = 0x50000000;
    g_shift[i] = -9;
  }
  LinearS8Params lp;
  lp.multiplier = g_mult;
  lp.shift = g_shift;
  const ConstMatS8 x = matrix(static_cast<const int8_t*>(g_x), kL, kE);
  const ConstMatS8 w = matrix(static_cast<const int8_t*>(g_w), kE, kE);
  const MatS8 y = matrix(g_y, kL, kE);
  report("linear_s8", "64x64x64", 4, count(4, [&] { detail::linear_s8(x, w, g_bias, lp, y); }),
         count(4, [&] { detail::linear_s8_ref(x, w, g_bias, lp, y); }));

  // Per forward: L / T tiles x H heads of scores [T, S] over head_dim 16.
  const int32_t calls = kL / kT * kH;
  const ConstMatS8 q{g_x, kT, kD, kE};
  const ConstMatS8 k{g_w, kL, kD, kE};
  const MatS32 s = matrix(g_s, kT, kL);
  report("scores_s8", "Tx64x16", calls, count(calls, [&] { detail::scores_s8(q, 3, k, -2, 0, s); }),
         count(calls, [&] { detail::scores_s8_ref(q, 3, k, -2, 0, s); }));

  detail::FusedSoftmax sm{3150000000u, 6, 22000};
  auto softmax = [&](bool ref) {
    detail::scores_s8(q, 3, k, -2, 0, s);
    for (int32_t r = 0; r < kT; ++r) {
      if (ref) {
        detail::softmax_fused_row_ref(s.row(r), 0, kL, kL, sm);
      } else {
        detail::softmax_fused_row(s.row(r), 0, kL, kL, sm);
      }
    }
  };
  const uint64_t scores_only = count(calls, [&] { detail::scores_s8(q, 3, k, -2, 0, s); });
  report("softmax_fused_row", "64", calls * kT, count(calls, [&] { softmax(false); }) - scores_only,
         count(calls, [&] { softmax(true); }) - scores_only);

  const ConstMatS16 p{reinterpret_cast<const int16_t*>(g_s), kT, kL, 2 * kL};
  const ConstMatS8 v{g_w, kL, kD, kE};
  const MatS8 o{g_y, kT, kD, kE};
  report("weighted_sum_s8", "Tx64x16", calls,
         count(calls, [&] { detail::weighted_sum_s8(p, v, 1, 0x50000000, -14, -1, o); }),
         count(calls, [&] { detail::weighted_sum_s8_ref(p, v, 1, 0x50000000, -14, -1, o); }));
  // The DSP targets' path (V stored transposed [d, S]): the softmax's first
  // pass (exps and normalizer per row), then P.V normalizing P on the fly.
  auto exps = [&](bool ref) {
    detail::scores_s8(q, 3, k, -2, 0, s);
    for (int32_t r = 0; r < kT; ++r) {
      g_recip[r] = ref ? detail::softmax_exps_row_ref(s.row(r), 0, kL, kL, sm)
                       : detail::softmax_exps_row(s.row(r), 0, kL, kL, sm);
    }
  };
  report("softmax_exps_row", "64", calls * kT, count(calls, [&] { exps(false); }) - scores_only,
         count(calls, [&] { exps(true); }) - scores_only);
  exps(false);
  const ConstMatS32 e{g_s, kT, kL, kL};
  const ConstMatS8 vt{g_w, kD, kL, kL};
  report("weighted_sum_vt_s8", "Tx64x16", calls,
         count(calls, [&] { detail::weighted_sum_vt_s8(e, g_recip, vt, 1, 0x50000000, -14, -1, o); }),
         count(calls, [&] { detail::weighted_sum_vt_s8_ref(e, g_recip, vt, 1, 0x50000000, -14, -1, o); }));
  return 0;
}
