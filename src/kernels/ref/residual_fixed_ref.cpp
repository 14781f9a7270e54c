// residual, the int32 residual stream of attn/transformer_fixed.h, portable
// scalar: branch outputs added on the residual grid (saturating), and
// residual rows rescaled to a matmul's input (RescaleFixed), 32-bit steps
// (kernels/kernels_model_fixed.h: rescale_to_residual32, rescale_to_act32).
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Act>
void add_rows(MatS32 x, Matrix<const Act> y, const RescaleFixed& r) {
  for (int32_t i = 0; i < x.rows; ++i) {
    int32_t* xr = x.row(i);
    const Act* yr = y.row(i);
    for (int32_t c = 0; c < x.cols; ++c) xr[c] = residual_add_element(xr[c], yr[c], r);
  }
}

template <typename Act>
void to_act(ConstMatS32 x, const RescaleFixed& r, Matrix<Act> y, int64_t lo, int64_t hi) {
  for (int32_t i = 0; i < x.rows; ++i) {
    const int32_t* xr = x.row(i);
    Act* yr = y.row(i);
    for (int32_t c = 0; c < x.cols; ++c) {
      const int64_t q = residual_to_act_element(xr[c], r);
      yr[c] = static_cast<Act>(q < lo ? lo : q > hi ? hi : q);
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void residual_add_s8_ref(MatS32 x, ConstMatS8 y, const RescaleFixed& r) { add_rows(x, y, r); }
void residual_to_s8_ref(ConstMatS32 x, const RescaleFixed& r, MatS8 y) { to_act(x, r, y, -128, 127); }
#endif
#if ATTN_WITH_S16
void residual_add_s16_ref(MatS32 x, ConstMatS16 y, const RescaleFixed& r) { add_rows(x, y, r); }
void residual_to_s16_ref(ConstMatS32 x, const RescaleFixed& r, MatS16 y) { to_act(x, r, y, -32768, 32767); }
#endif

}  // namespace detail
}  // namespace attn
