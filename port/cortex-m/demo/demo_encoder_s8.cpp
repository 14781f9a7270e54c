// demo_encoder_s8.cpp: the 佛跳墙 classifier of tools/demo.sh (a whole
// BERT-style encoder, int8) inside a Cortex-M firmware image.
//
// Two generated headers (tools/demo.sh writes them):
//   demo_encoder_model.h  the s8 model file as a const array in flash
//                         (`attn emit-c out/encoder.s8.attn --name demo_encoder_model --tokens-per-call 32`)
//   demo_encoder_data.h   the held-out set and the host's s8 predictions
//                         (attn_example_demo_encoder --emit-mcu)
// This image loads the model in place, runs every sequence through
// transformer_forward_s8, the classifier on the [CLS] row as the host does,
// checks that its predictions are identical to the host's, and prints the
// instructions per inference. Exit code 0 if identical, 1 if not, 2 on errors.
//
// On the firmware side this is all a user writes: the model blob in flash, a
// static arena the plan fits in, and the 2xE classifier.
#include <cstdint>
#include <cstdio>

#include "attn/model.h"
#include "attn/transformer_fixed.h"
#include "demo_encoder_data.h"
#include "demo_encoder_model.h"
#include "port/port.h"

namespace {

using namespace demo_data;

constexpr int kMaxLayers = 4, kMaxEmbed = 64;
alignas(ATTN_ARENA_ALIGN) uint8_t arena_buf[32 * 1024];  // the plan says how much it uses
attn::Model model;
attn::TransformerConfig config;
attn::LayerWeightsS8 layers[kMaxLayers];
attn::TransformerWeightsS8 weights;
attn::TransformerPlan plan;
attn::Arena arena;
const float* classifier_w = nullptr;  // [2, E] user tensor classifier.weight
const float* classifier_b = nullptr;  // [2]
int32_t tokens[kSeq];
int32_t hidden[kSeq * kMaxEmbed];  // [L, E] int32 on weights.output_scale

attn::Status setup() {
  ATTN_TRY(attn::Model::load(demo_encoder_model, DEMO_ENCODER_MODEL_SIZE, &model));
  ATTN_TRY(model.transformer_config(&config));
  if (config.embed_dim > kMaxEmbed || config.max_positions < kSeq) return attn::Status::kBadShape;
  ATTN_TRY(model.transformer_weights_s8(layers, kMaxLayers, &weights));
  attn::TensorView w, b;
  ATTN_TRY(model.find_tensor("classifier.weight", &w));
  ATTN_TRY(model.find_tensor("classifier.bias", &b));
  classifier_w = static_cast<const float*>(w.data);
  classifier_b = static_cast<const float*>(b.data);
  ATTN_TRY(attn::plan_transformer(config, attn::DType::kS8, kSeq, 0, &plan));
  return arena.init(arena_buf, sizeof arena_buf);  // the forward says kArenaTooSmall if the plan does not fit
}

// The whole encoder on one sequence, then the classifier on [CLS] with the
// host's expression (both compiled without FMA contraction): 1 if it
// contains 佛跳墙.
attn::Status classify(const uint8_t* ids, int* prediction) {
  for (int i = 0; i < kSeq; ++i) tokens[i] = ids[i];
  ATTN_TRY(attn::transformer_forward_s8(plan, weights, tokens, kSeq, attn::OutputRows::kAll, hidden, arena));
  const int32_t E = config.embed_dim;
  float cls[kMaxEmbed];
  for (int32_t e = 0; e < E; ++e) cls[e] = weights.output_scale * static_cast<float>(hidden[e]);
  float logits[2];
  for (int c = 0; c < 2; ++c) {
    float acc = classifier_b[c];
    for (int32_t e = 0; e < E; ++e) acc += classifier_w[c * E + e] * cls[e];
    logits[c] = acc;
  }
  *prediction = logits[1] > logits[0] ? 1 : 0;
  return attn::Status::kOk;
}

}  // namespace

int main() {
  attn::Status s = setup();
  int same = 0, correct = 0;
  for (int n = 0; n < kCount && s == attn::Status::kOk; ++n) {
    int pred = 0;
    s = classify(&test_ids[n * kSeq], &pred);
    same += pred == host_predictions[n];
    correct += pred == test_labels[n];
  }
  // Instructions of one inference, restarting the counter first (its tick
  // conversion overflows after ~7e8 instructions since port_counter_init()).
  int pred = 0;
  port_counter_init();
  port_counter_start();
  if (s == attn::Status::kOk) s = classify(&test_ids[0], &pred);
  const uint64_t insns = port_counter_stop();
  if (s != attn::Status::kOk) {
    std::printf("demo_encoder_s8: %s\n", attn::status_name(s));
    return 2;
  }
  const char* board = port_board_name();
  std::printf("%s: %d sequences, predictions identical to the host's: %d of %d (%s)\n", board, kCount, same,
              kCount, same == kCount ? "yes" : "NO");
  std::printf("%s: accuracy %d.%02d%%, %lu instructions per inference, arena %u bytes, model %u bytes\n",
              board, correct * 100 / kCount, correct * 10000 / kCount % 100,
              static_cast<unsigned long>(insns), static_cast<unsigned>(plan.arena_bytes),
              static_cast<unsigned>(DEMO_ENCODER_MODEL_SIZE));
  return same == kCount ? 0 : 1;
}
