// internal/exp2_table.h: the one table of the fused attention softmax.
//
// kExp2Table[k] = round(2^22 * 2^(-k/64)), k = 0..64: 2^(-f) on a 1/64 grid of
// [0, 1], read with linear interpolation. The values are integers written
// out here (not computed at start-up), so every target reads the same bits;
// tests/fused_softmax_test.cpp recomputes each entry in double.
#pragma once

#include <cstdint>

namespace attn {
namespace detail {

constexpr int kExp2TableBits = 6;  // 64 intervals
constexpr int kExp2TableOne = 22;  // kExp2Table[0] = 2^22
constexpr int kExp2FracBits = 16;  // the exp argument is Q15.16 (log2 units)

constexpr int32_t kExp2Table[(1 << kExp2TableBits) + 1] = {
    4194304, 4149123, 4104429, 4060216, 4016479, 3973214, 3930414, 3888076, 3846194, 3804763, 3763778,
    3723234, 3683128, 3643453, 3604206, 3565381, 3526975, 3488983, 3451399, 3414221, 3377443, 3341061,
    3305071, 3269469, 3234251, 3199411, 3164947, 3130854, 3097129, 3063767, 3030764, 2998116, 2965821,
    2933873, 2902269, 2871006, 2840080, 2809486, 2779223, 2749285, 2719670, 2690373, 2661393, 2632724,
    2604365, 2576310, 2548558, 2521105, 2493948, 2467083, 2440508, 2414219, 2388213, 2362487, 2337038,
    2311864, 2286960, 2262325, 2237956, 2213848, 2190001, 2166410, 2143074, 2119988, 2097152,
};

}  // namespace detail
}  // namespace attn
