// import_model.h: whole transformer models for `attn import` (format v3):
// Hugging Face BertModel, RobertaModel, DistilBertModel, LlamaForCausalLM (and MistralForCausalLM,
// Qwen2ForCausalLM) and GPT2Model / GPT2LMHeadModel safetensors with their
// config.json, the attn layout (config.json "model_type": "attn": TransformerConfig's
// own fields, tensors under their .attn names; include/attn/FORMAT.md), and llama2.c
// checkpoints. tools/export/attn_export.py hands PyTorch weights to these through `attn import`.
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

// A Hugging Face checkpoint, or the attn layout: `tensors` of file `src`, `config` read from `config_src`.
// Error naming the file and the key on anything missing, mis-shaped or unsupported.
ImportedModel import_hf(const std::string& src, const std::vector<safetensors::Tensor>& tensors,
                        const std::string& config_src, const json::Value& config);

// The attn layout of attention blocks: config.json's "model_type" is "attn" and it has "blocks".
bool is_attn_blocks(const json::Value& config);
// Such a checkpoint as the spec of a block file (format v1).
tools::ModelSpec import_attn_blocks(const std::string& src, const std::vector<safetensors::Tensor>& tensors,
                                    const std::string& config_src, const json::Value& config);

// A llama2.c checkpoint (run.c's model.bin) of `size` bytes.
ImportedModel import_llama2c(const std::string& src, const uint8_t* data, size_t size);

// Rows of each of `heads` heads of w [rows, cols] reordered (2i, 2i+1) -> (i, i + hd/2):
// HF's convert_llama_weights_to_hf permute, so that half-split RoPE computes llama2.c's interleaved one.
std::vector<float> interleaved_to_half_split(const std::vector<float>& w, int64_t heads, int64_t cols);

// The .attn bytes of an imported model (canonical: the model, then the user tensors).
std::vector<uint8_t> write_imported(const ImportedModel& m, bool byte_vocab,
                                    const std::vector<uint8_t>& tokenizer = {});

}  // namespace cli
}  // namespace attn
