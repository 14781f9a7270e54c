// model_exec.h: running a whole model (format v3) from the `attn` tools:
// token ids in, float rows out, whatever the model's dtype. Shared by
// `attn run --tokens`, `attn generate` and `attn perplexity`.
//
// f32 models run transformer_forward_f32 on their weights packed once
// (pack_transformer_weights_f32, where this build's kernels take packed
// panels) and transformer_decode_f32 on the weights as stored (unless a
// forward packed them first); s8 / s16 models run the integer forwards, and
// their int32 outputs become floats as weights.output_scale * q.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "cli/cli.h"

namespace attn {
namespace cli {

// Token ids from an int32 ('<i4') or int64 ('<i8') .npy of shape [B, L] or
// [L], each checked against the vocabulary (Error naming the id and its
// position, kTokenOutOfRange) and L against max_positions (kSequenceTooLong)
// unless `any_length`.
struct TokenIds {
  std::vector<int32_t> ids;  // rows * len, row after row
  int64_t rows = 0, len = 0;
  bool batched = false;  // the file was [B, L]
};
TokenIds read_token_ids(const std::string& path, const TransformerConfig& c, bool any_length = false);

// The first token outside [0, vocab) in ids[0, n): Error "WHAT: token id X at
// position P is outside the vocabulary [0, V) (kTokenOutOfRange)".
void check_tokens(const std::string& what, const int32_t* ids, int64_t n, int32_t vocab);

// "1,2,3" or "1 2 3" (option `what`): the ids, each checked against the
// vocabulary as check_tokens does; Error "WHAT: 'x' is not an integer".
std::vector<int32_t> parse_id_list(const std::string& s, const std::string& what, int32_t vocab);

class ModelExec {
 public:
  // Throws Error "PATH: ..." for a block file (kNotAModel) or unreadable weights.
  ModelExec(const std::string& path, const Model& m);
  ModelExec(const ModelExec&) = delete;
  ModelExec& operator=(const ModelExec&) = delete;

  const TransformerConfig& config() const { return c_; }
  DType dtype() const { return dtype_; }
  int32_t output_dim() const { return c_.output_dim(); }
  // real = output_scale() * q for the int32 outputs of s8/s16 models; 1 for f32.
  float output_scale() const;

  // The whole forward of tokens[0, n) at positions 0..n-1: out [n, output_dim]
  // (OutputRows::kAll). Throws Error naming the model and the status.
  void forward(const int32_t* tokens, int32_t n, float* out);

  // Decoding: plan calls of up to max_tokens tokens over caches of `capacity`
  // positions, `window` as transformer_state_init_* (0: keep every position).
  // Throws Error (kNotCausal for an encoder, ...).
  void start_decode(int32_t max_tokens, int32_t capacity, int32_t window);
  void reset();            // forget every position
  int32_t length() const;  // tokens consumed
  // Append tokens[0, n) and write their output rows (all, or the last one):
  // `out` floats; for s8/s16 models also the int32 outputs into `raw`
  // (null: not wanted). Returns the library's status (nothing appended on error).
  Status decode(const int32_t* tokens, int32_t n, OutputRows rows, float* out, int32_t* raw = nullptr);

  const TransformerPlan& decode_plan() const { return decode_plan_; }

  // The parallel-for every later call splits its large products over (a
  // ThreadPool's, cli/thread_pool.h; default: none). The outputs do not change.
  void set_parallel(const ParallelFor& parallel);

 private:
  void pack(const TransformerPlan& plan);
  void to_float(const int32_t* q, size_t n, float* out) const;

  std::string path_;
  TransformerConfig c_;
  DType dtype_ = DType::kF32;
  std::vector<LayerWeightsF32> lf_;
  std::vector<LayerWeightsS8> l8_;
  std::vector<LayerWeightsS16> l16_;
  TransformerWeightsF32 wf_;
  TransformerWeightsS8 w8_;
  TransformerWeightsS16 w16_;
  AlignedBytes packed_;
  bool packed_done_ = false;

  ParallelFor parallel_;
  TransformerPlan forward_plan_;
  AlignedBytes forward_buf_;
  Arena forward_arena_;

  TransformerPlan decode_plan_;
  AlignedBytes decode_buf_, state_buf_;
  Arena decode_arena_, state_arena_;
  TransformerStateF32 sf_;
  TransformerStateS8 s8_;
  TransformerStateS16 s16_;
  bool decoding_ = false;
  std::vector<int32_t> ints_;  // int32 outputs of s8/s16 calls
};

// `attn run MODEL.attn --tokens IDS.npy [--incremental [--prefill N]] -o Y.npy`
// (run_model.cpp); cmd_run hands over when --tokens is given.
int run_model(const Args& args, const std::string& path, const std::string& out);

}  // namespace cli
}  // namespace attn
