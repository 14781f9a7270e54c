// import_model.h: whole transformer models for `attn import` (format v3):
// Hugging Face BertModel, RobertaModel, DistilBertModel, LlamaForCausalLM (and MistralForCausalLM,
// Qwen2ForCausalLM) and GPT2Model / GPT2LMHeadModel safetensors with their
// config.json, and llama2.c checkpoints. tools/attn_export.py reads the same
// layouts with the same rules and writes the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/transformer.h"
#include "cli/json.h"
#include "cli/safetensors.h"
#include "format/writer.h"

namespace attn {
namespace cli {

struct UserTensor {
  std::string name;
  std::vector<uint32_t> dims;
  std::vector<float> values;
};

struct ImportedModel {
  std::string kind;  // "bert", "roberta", "distilbert", "llama", "mistral", "qwen2", "gpt2", "llama2.c"
  TransformerConfig config;
  tools::TransformerTensorsF32 weights;
  // The checkpoint's other float tensors (a classifier, a pooler), sorted by name.
  std::vector<UserTensor> user;
  // What the import changed that the user should know (a window held by max_positions).
  std::vector<std::string> notes;
};

// A Hugging Face checkpoint: `tensors` of file `src`, `config` read from `config_src`.
// Error naming the file and the key on anything missing, mis-shaped or unsupported.
ImportedModel import_hf(const std::string& src, const std::vector<safetensors::Tensor>& tensors,
                        const std::string& config_src, const json::Value& config);

// A llama2.c checkpoint (run.c's model.bin) of `size` bytes.
ImportedModel import_llama2c(const std::string& src, const uint8_t* data, size_t size);

// Rows of each of `heads` heads of w [rows, cols] reordered (2i, 2i+1) -> (i, i + hd/2):
// HF's convert_llama_weights_to_hf permute, so that half-split RoPE computes llama2.c's interleaved one.
std::vector<float> interleaved_to_half_split(const std::vector<float>& w, int64_t heads, int64_t cols);

// The .attn bytes of an imported model (canonical: the model, then the user tensors).
std::vector<uint8_t> write_imported(const ImportedModel& m, bool byte_vocab);

}  // namespace cli
}  // namespace attn
