// cost_kernels.cpp: instructions of each fixed-point kernel of forward_s8 at
// the three MCU shapes (L = S, E, H) = (64, 64, 4), (81, 32, 8), (128, 64, 4),
// dispatched variant beside ref, to see where a forward's instructions go.
// One line per kernel and shape, with one forward's worth of calls:
//
//   kernel board=mps2-an386 op=linear_s8 L=64 E=64 H=4 calls=4 insns=N ref=N kernels=dsp
//
// linear_s8: the four projections ([L, E] x [E, E]; Q and O run per tile of
// T rows in the forward, the same blocks); scores_s8, softmax_fused_row and
// weighted_sum_s8: per tile of T query rows and per head; softmax_exps_row
// and weighted_sum_vt_s8 are the DSP targets' softmax + P.V (V^T in the arena). The forward has no
// head split/concat stage: heads are column slices of Q, K, V and O.
#include <cstdint>
#include <cstdio>

#include "attn/config.h"
#include "cost_common.h"
#include "kernels/kernel_table.h"
#include "port/kernel_tag.h"
#include "port/port.h"

namespace {

using namespace attn;

constexpr int32_t kMaxL = 128, kMaxE = 64, kT = ATTN_TILE_ROWS;

alignas(16) int8_t g_x[kMaxL * kMaxE];  // [L, E]
alignas(16) int8_t g_w[kMaxE * kMaxE];  // [E, E]
alignas(16) int8_t g_k[kMaxL * kMaxE];  // [S, E]
alignas(16) int8_t g_y[kMaxL * kMaxE];  // [L, E]
int32_t g_bias[kMaxE];
int32_t g_mult[kMaxE];
int32_t g_shift[kMaxE];
alignas(16) int32_t g_s[kT * kMaxL];  // [T, S]
uint32_t g_recip[kT];                 // [T]

cost::Rng g_rng{99u};
int32_t uniform(int32_t spread) { return g_rng.uniform(spread); }

template <typename F>
uint64_t count(int32_t calls, F f) {
  port_counter_start();
  for (int32_t i = 0; i < calls; ++i) f();
  return port_counter_stop();
}

void report(const char* op, int32_t L, int32_t E, int32_t H, int32_t calls, uint64_t insns, uint64_t ref) {
  std::printf("kernel board=%s op=%s L=%ld E=%ld H=%ld calls=%ld insns=%lu ref=%lu kernels=%s\n",
              port_board_name(), op, static_cast<long>(L), static_cast<long>(E), static_cast<long>(H),
              static_cast<long>(calls), static_cast<unsigned long>(insns), static_cast<unsigned long>(ref),
              port_kernel_tag(attn::DType::kS8));
}

void profile(int32_t L, int32_t E, int32_t H) {
  const int32_t S = L, hd = E / H;
  LinearS8Params lp;
  lp.multiplier = g_mult;
  lp.shift = g_shift;
  const ConstMatS8 x = matrix(static_cast<const int8_t*>(g_x), L, E);
  const ConstMatS8 w = matrix(static_cast<const int8_t*>(g_w), E, E);
  const MatS8 y = matrix(g_y, L, E);
  report("linear_s8", L, E, H, 4, count(4, [&] { detail::best(detail::kLinearS8)(x, w, g_bias, lp, y); }),
         count(4, [&] { detail::linear_s8_ref(x, w, g_bias, lp, y); }));

  // Per forward: ceil(L / T) tiles x H heads; full tiles only (L % T rows of the last tile are left out).
  const int32_t calls = L / kT * H;
  const ConstMatS8 q{g_x, kT, hd, E};
  const ConstMatS8 k{g_k, S, hd, E};
  const MatS32 s = matrix(g_s, kT, S);
  report("scores_s8", L, E, H, calls,
         count(calls, [&] { detail::best(detail::kScoresS8)(q, 3, k, -2, 0, s); }),
         count(calls, [&] { detail::scores_s8_ref(q, 3, k, -2, 0, s); }));

  const detail::FusedSoftmax sm{3150000000u, 6, 22000};
  auto softmax = [&](bool ref) {
    detail::best(detail::kScoresS8)(q, 3, k, -2, 0, s);
    for (int32_t r = 0; r < kT; ++r) {
      if (ref) {
        detail::softmax_fused_row_ref(s.row(r), 0, S, S, sm);
      } else {
        const int32_t begin = 0;
        detail::best(detail::kSoftmaxRows)(s.row(r), S, 1, &begin, &S, S, sm);
      }
    }
  };
  const uint64_t scores_only = count(calls, [&] { detail::best(detail::kScoresS8)(q, 3, k, -2, 0, s); });
  report("softmax_fused_row", L, E, H, calls * kT, count(calls, [&] { softmax(false); }) - scores_only,
         count(calls, [&] { softmax(true); }) - scores_only);

  const ConstMatS16 p{reinterpret_cast<const int16_t*>(g_s), kT, S, 2 * S};
  const ConstMatS8 v{g_k, S, hd, E};
  const MatS8 o{g_y, kT, hd, E};
  const detail::Requant rq{0x50000000, -14, -1};
  report("weighted_sum_s8", L, E, H, calls,
         count(calls, [&] { detail::best(detail::kWeightedSumS8)(p, v, 1, rq, o); }),
         count(calls, [&] { detail::weighted_sum_s8_ref(p, v, 1, rq, o); }));

  // The DSP targets' path (V stored transposed [hd, S]): the softmax's first
  // pass (exps and normalizer per row), then P.V normalizing P on the fly.
  auto exps = [&](bool ref) {
    detail::best(detail::kScoresS8)(q, 3, k, -2, 0, s);
    for (int32_t r = 0; r < kT; ++r) {
      g_recip[r] = ref ? detail::softmax_exps_row_ref(s.row(r), 0, S, S, sm)
                       : detail::best(detail::kSoftmaxExps)(s.row(r), 0, S, S, sm);
    }
  };
  report("softmax_exps_row", L, E, H, calls * kT, count(calls, [&] { exps(false); }) - scores_only,
         count(calls, [&] { exps(true); }) - scores_only);
  exps(false);
  const ConstMatS32 e{g_s, kT, S, S};
  const ConstMatS8 vt{g_k, hd, S, S};
  report("weighted_sum_vt_s8", L, E, H, calls,
         count(calls, [&] { detail::best(detail::kWeightedSumVtS8)(e, g_recip, vt, 1, rq, o); }),
         count(calls, [&] { detail::weighted_sum_vt_s8_ref(e, g_recip, vt, 1, rq, o); }));
}

}  // namespace

int main() {
  for (int8_t& v : g_x) v = static_cast<int8_t>(uniform(40));
  for (int8_t& v : g_k) v = static_cast<int8_t>(uniform(40));
  for (int8_t& v : g_w) v = static_cast<int8_t>(uniform(127));
  for (int32_t i = 0; i < kMaxE; ++i) {
    g_bias[i] = uniform(2000);
    g_mult[i] = 0x50000000;
    g_shift[i] = -9;
  }
  profile(64, 64, 4);
  profile(81, 32, 8);
  profile(128, 64, 4);
  return 0;
}
