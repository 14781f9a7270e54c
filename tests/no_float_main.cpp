// no_float_main.cpp: a firmware-like program that uses the int8 path only
// (plan, arena, forward_s8, the stand-alone s8 kernels, and a whole s8 model
// from a file: plan_transformer_fixed, transformer_forward_s8 and
// transformer_decode_s8). tests/cmake/
// check_no_float.cmake links it for a Cortex-M3 with soft-float and fails if
// the image holds any floating-point routine. Built by that script, not by
// the host test binary. With ATTN_NO_FLOAT_PROBE it also multiplies two
// floats, to show the check catches one.
#include "attn/attention_fixed.h"
#include "attn/attn.h"
#include "attn/kernels_fixed.h"
#include "attn/model.h"
#include "attn/transformer_fixed.h"

namespace {
alignas(
    16) uint8_t g_arena[attn::attention_arena_bytes(attn::AttentionConfig{16, 2}, attn::DType::kS8, 4, 4)];
int8_t g_w[16 * 16];
int32_t g_b[16], g_m[16], g_s[16];
int8_t g_x[4 * 16], g_y[4 * 16];
// A quantized .attn blob in flash (its content does not matter to the link:
// the loader and the s8 block views must pull in no float routine).
alignas(16) volatile uint8_t g_blob[256];
#ifdef ATTN_NO_FLOAT_PROBE
volatile float g_f = 1.5f;
#endif
}  // namespace

int main() {
  const attn::AttentionConfig cfg{16, 2};
  attn::Plan plan;
  if (attn::plan_attention(cfg, attn::DType::kS8, 4, 4, &plan) != attn::Status::kOk) return 1;
  attn::Arena arena;
  if (arena.init(g_arena, sizeof g_arena) != attn::Status::kOk) return 2;
  const attn::ProjectionS8 p{g_w, g_b, g_m, g_s};
  attn::WeightsS8 w;
  w.q = w.k = w.v = w.o = p;
  w.softmax.exp_multiplier = 1 << 30;
  attn::Mask mask;
  mask.causal = true;
  if (attn::forward_s8(plan, w, mask, {g_x, g_x, g_x, g_y}, arena) != attn::Status::kOk) return 3;
  attn::LinearS8Params lp;
  lp.multiplier = g_m;
  lp.shift = g_s;
  if (attn::linear_s8(attn::matrix<const int8_t>(g_x, 4, 16), attn::matrix<const int8_t>(g_w, 16, 16), g_b,
                      lp, attn::matrix(g_y, 4, 16)) != attn::Status::kOk) {
    return 4;
  }
  attn::SoftmaxS8Params sp;
  sp.input_multiplier = 1 << 30;
  if (attn::softmax_s8(attn::matrix<const int8_t>(g_x, 4, 16), sp, attn::matrix(g_y, 4, 16)) !=
      attn::Status::kOk) {
    return 5;
  }
  // The firmware path for a quantized file: validate, take block 0's WeightsS8, run.
  attn::Model model;
  if (attn::Model::load(const_cast<const uint8_t*>(g_blob), sizeof g_blob, &model) == attn::Status::kOk) {
    attn::Block b;
    if (model.block(0, &b) != attn::Status::kOk) return 6;
    if (attn::forward_s8(plan, b.s8, mask, {g_x, g_x, g_x, g_y}, arena) != attn::Status::kOk) return 7;
  }
  // A whole s8 model file: its weights in place, plan, forward, then a KV-cache decode step.
  attn::Model lm;
  if (attn::Model::load(const_cast<const uint8_t*>(g_blob), sizeof g_blob, &lm) == attn::Status::kOk) {
    static attn::LayerWeightsS8 layers[2];
    static int32_t tokens[4], logits[4 * 64];
    attn::TransformerConfig tc;
    attn::TransformerWeightsS8 tw;
    attn::TransformerPlan tp;
    attn::TransformerStateS8 ts;
    if (lm.transformer_config(&tc) != attn::Status::kOk) return 10;
    if (lm.transformer_weights_s8(layers, 2, &tw) != attn::Status::kOk) return 11;
    if (attn::plan_transformer_fixed(tc, attn::DType::kS8, 4, 8, &tp) != attn::Status::kOk) return 12;
    if (attn::transformer_forward_s8(tp, tw, tokens, 4, attn::OutputRows::kAll, logits, arena) !=
        attn::Status::kOk) {
      return 13;
    }
    if (attn::transformer_state_init_s8(tp, 0, arena, &ts) != attn::Status::kOk) return 14;
    if (attn::transformer_decode_s8(tp, tw, &ts, tokens, 1, attn::OutputRows::kLast, logits, arena) !=
        attn::Status::kOk) {
      return 15;
    }
  }
  // The same from C: weights and I/O quantization of an s8 block (the float
  // helpers attn_quantize_s8 / attn_dequantize_s8 are not called: not linked).
  static attn_model c_model;
  if (attn_model_load(&c_model, const_cast<const uint8_t*>(g_blob), sizeof g_blob) == ATTN_OK) {
    attn_weights_s8 cw;
    attn_block_io io;
    if (attn_model_block_weights_s8(&c_model, 0, &cw) != ATTN_OK) return 8;
    if (attn_model_block_io(&c_model, 0, &io) != ATTN_OK) return 9;
    return io.output_zero_point + cw.q_zero_point;
  }
#ifdef ATTN_NO_FLOAT_PROBE
  g_f = g_f * g_f;
#endif
  return g_y[0];
}
