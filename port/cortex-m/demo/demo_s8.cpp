// demo_s8.cpp: the 佛跳墙 classifier of tools/demo.sh, in int8, inside a
// Cortex-M firmware image.
//
// The model and the held-out set come from a header the host demo writes
// (attn_example_demo --emit-mcu demo_mcu.h): int8 weights with their
// multipliers and shifts, the float embeddings and head, the test sequences
// and the host's predictions. This image runs every sequence through the
// same code as the host, the two attention blocks through attn::forward_s8,
// checks that its predictions are identical to the host's, and prints the
// instructions per inference. Exit code 0 if identical, 1 if not, 2 on errors.
//
// On the firmware side, this is all a user writes: weights in flash (const
// arrays), a static arena sized by attention_arena_bytes(), and a few lines
// of embedding lookup, residual and head around forward_s8.
#include <cstdint>
#include <cstdio>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"  // QuantParams
#include "demo_mcu.h"
#include "port/port.h"

namespace {

using namespace demo_data;

constexpr attn::AttentionConfig make_config() {
  attn::AttentionConfig c;
  c.embed_dim = kEmbed;
  c.num_heads = kHeads;
  return c;
}
constexpr attn::AttentionConfig kConfig = make_config();
alignas(
    ATTN_ARENA_ALIGN) uint8_t arena_buf[attn::attention_arena_bytes(kConfig, attn::DType::kS8, kSeq, kSeq)];

float x[kSeq * kEmbed];    // [L, E] the residual stream
int8_t xq[kSeq * kEmbed];  // [L, E] x quantized for a block
int8_t yq[kSeq * kEmbed];  // [L, E] the block's int8 output

// One block's int8 weights and the (scale, zero point) of its input and output.
struct BlockS8 {
  attn::WeightsS8 w;
  attn::QuantParams in, out;
  float in_inverse_scale;  // 1 / in.scale
};

// The block input's quantization in float, as the host demo does it: round
// half away from zero, clamp to int8.
int8_t quantize_s8(float x, float inverse_scale, int32_t zero_point) {
  const float v = x * inverse_scale;
  const int32_t q = static_cast<int32_t>(v >= 0.0f ? v + 0.5f : v - 0.5f) + zero_point;
  return static_cast<int8_t>(q < -128 ? -128 : q > 127 ? 127 : q);
}

attn::ProjectionS8 projection(const int8_t* weight, const int32_t* bias, const int32_t* mult,
                              const int32_t* shift) {
  attn::ProjectionS8 p;
  p.weight = weight;
  p.bias = bias;
  p.multiplier = mult;
  p.shift = shift;
  return p;
}

// params: q, k, v, context, output zero points; softmax exp multiplier, exp
// shift, diff limit, score shift; context multiplier, shift; input and output
// zero points. scales: input, output.
BlockS8 block(attn::ProjectionS8 q, attn::ProjectionS8 k, attn::ProjectionS8 v, attn::ProjectionS8 o,
              const int64_t* params, const float* scales) {
  BlockS8 b;
  b.w.q = q;
  b.w.k = k;
  b.w.v = v;
  b.w.o = o;
  b.w.q_zero_point = static_cast<int32_t>(params[0]);
  b.w.k_zero_point = static_cast<int32_t>(params[1]);
  b.w.v_zero_point = static_cast<int32_t>(params[2]);
  b.w.context_zero_point = static_cast<int32_t>(params[3]);
  b.w.output_zero_point = static_cast<int32_t>(params[4]);
  b.w.softmax.exp_multiplier = static_cast<uint32_t>(params[5]);
  b.w.softmax.exp_shift = static_cast<int32_t>(params[6]);
  b.w.softmax.diff_limit = static_cast<int32_t>(params[7]);
  b.w.softmax.score_shift = static_cast<int32_t>(params[8]);
  b.w.context_multiplier = static_cast<int32_t>(params[9]);
  b.w.context_shift = static_cast<int32_t>(params[10]);
  b.in.zero_point = static_cast<int32_t>(params[11]);
  b.out.zero_point = static_cast<int32_t>(params[12]);
  b.in.scale = scales[0];
  b.in_inverse_scale = 1.0f / scales[0];
  b.out.scale = scales[1];
  return b;
}

// Restart the instruction counter, then begin a region. (The port's tick to
// instruction conversion overflows after about 7e8 instructions since
// port_counter_init(), and this image runs billions: restart before each count.)
void start_counting() {
  port_counter_init();
  port_counter_start();
}

// The whole model on one sequence: 1 if it contains 佛跳墙. forward_instructions
// (optional): add the instructions spent in forward_s8.
attn::Status classify(const BlockS8* blocks, const attn::Plan& plan, attn::Arena& arena, const uint8_t* ids,
                      int* prediction, uint64_t* forward_instructions = nullptr) {
  for (int i = 0; i < kSeq; ++i) {  // x = tok_emb[ids] + pos_emb
    for (int e = 0; e < kEmbed; ++e)
      x[i * kEmbed + e] = tok_emb[ids[i] * kEmbed + e] + pos_emb[i * kEmbed + e];
  }
  for (int b = 0; b < 2; ++b) {
    for (int k = 0; k < kSeq * kEmbed; ++k) {
      xq[k] = quantize_s8(x[k], blocks[b].in_inverse_scale, blocks[b].in.zero_point);
    }
    attn::IoS8 io;
    io.query = io.key = io.value = xq;  // self-attention
    io.output = yq;
    if (forward_instructions != nullptr) start_counting();
    ATTN_TRY(attn::forward_s8(plan, blocks[b].w, attn::Mask{}, io, arena));
    if (forward_instructions != nullptr) *forward_instructions += port_counter_stop();
    for (int k = 0; k < kSeq * kEmbed; ++k) {  // residual
      x[k] += blocks[b].out.scale * static_cast<float>(yq[k] - blocks[b].out.zero_point);
    }
  }
  float logits[2];
  for (int c = 0; c < 2; ++c) {  // logits = head_w x[0] + head_b
    float acc = head_b[c];
    for (int e = 0; e < kEmbed; ++e) acc += head_w[c * kEmbed + e] * x[e];
    logits[c] = acc;
  }
  *prediction = logits[1] > logits[0] ? 1 : 0;
  return attn::Status::kOk;
}

}  // namespace

int main() {
  const BlockS8 blocks[2] = {
      block(projection(b0_q_weight, b0_q_bias, b0_q_multiplier, b0_q_shift),
            projection(b0_k_weight, b0_k_bias, b0_k_multiplier, b0_k_shift),
            projection(b0_v_weight, b0_v_bias, b0_v_multiplier, b0_v_shift),
            projection(b0_o_weight, b0_o_bias, b0_o_multiplier, b0_o_shift), b0_params, b0_scales),
      block(projection(b1_q_weight, b1_q_bias, b1_q_multiplier, b1_q_shift),
            projection(b1_k_weight, b1_k_bias, b1_k_multiplier, b1_k_shift),
            projection(b1_v_weight, b1_v_bias, b1_v_multiplier, b1_v_shift),
            projection(b1_o_weight, b1_o_bias, b1_o_multiplier, b1_o_shift), b1_params, b1_scales)};
  attn::Plan plan;
  attn::Status s = attn::plan_attention(kConfig, attn::DType::kS8, kSeq, kSeq, &plan);
  attn::Arena arena;
  if (s == attn::Status::kOk) s = arena.init(arena_buf, sizeof arena_buf);
  if (s != attn::Status::kOk) {
    std::printf("demo_s8: %s\n", attn::status_name(s));
    return 2;
  }
  int same = 0, correct = 0;
  for (int n = 0; n < kCount; ++n) {
    int pred = 0;
    s = classify(blocks, plan, arena, &test_ids[n * kSeq], &pred);
    if (s != attn::Status::kOk) {
      std::printf("demo_s8: forward_s8: %s\n", attn::status_name(s));
      return 2;
    }
    same += pred == host_predictions[n];
    correct += pred == test_labels[n];
  }
  // Instructions of one inference, whole, then in forward_s8 alone (regions do not nest).
  int pred = 0;
  start_counting();
  s = classify(blocks, plan, arena, &test_ids[0], &pred);
  const uint64_t whole = port_counter_stop();
  uint64_t forward = 0;
  s = classify(blocks, plan, arena, &test_ids[0], &pred, &forward);
  const char* board = port_board_name();
  std::printf("demo_s8 on %s: %d sequences, predictions identical to the host's: %d of %d (%s)\n", board,
              kCount, same, kCount, same == kCount ? "yes" : "NO");
  std::printf("demo_s8 on %s: accuracy %d.%02d%%, arena %u bytes\n", board, correct * 100 / kCount,
              correct * 10000 / kCount % 100, static_cast<unsigned>(sizeof arena_buf));
  std::printf("demo_s8 on %s: %lu instructions per inference, %lu of them in forward_s8 (both blocks)\n",
              board, static_cast<unsigned long>(whole), static_cast<unsigned long>(forward));
  return same == kCount ? 0 : 1;
}
