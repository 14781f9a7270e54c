// format/writer.h: builds .attn files (formats v1..v3, include/attn/FORMAT.md):
// the one writer of the format, shared by `attn import`, `attn quantize` and
// the tests. Host-side only (std::vector, std::string, exceptions): it is
// compiled into the host-only target attn_writer (CMakeLists.txt;
// $(ATTN_WRITER_SRCS) in port/make/attn.mk), never into libattn, which only
// reads. Tensor names come from the role list (attn/role_list.h).
//
// The output is canonical (FORMAT.md, "Canonical form"):
//   header | model record (whole models) | block records | tensor descriptors |
//   zero pad to data_align | tensor data in the given order, each at the next
//   multiple of data_align from the data section start; the file ends right
//   after the last tensor. A whole model's tensors come from add_transformer_f32
//   or add_transformer_fixed (their canonical order), user tensors after them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/quantize.h"
#include "attn/transformer_fixed.h"

namespace attn {
namespace tools {

struct TensorSpec {
  std::string name;  // < 64 bytes, unique
  format::Role role = format::Role::kUser;
  DType dtype = DType::kF32;
  format::Layout layout = format::Layout::kPlain;
  uint32_t block = format::kNoBlock;
  std::vector<uint32_t> dims;  // rank 1..4
  std::vector<uint8_t> bytes;  // product(dims) * dtype_bytes(dtype)
};

struct BlockSpec {
  uint32_t embed_dim = 0, num_heads = 0, head_dim = 0, kdim = 0, vdim = 0;
  bool bias = true;
  DType dtype = DType::kF32;
  uint32_t n_kv_heads =
      0;                   // 0 (or num_heads): multi-head; else GQA/MQA, K/V are [n_kv_heads * head_dim, ...]
  float rope_base = 0.0f;  // 0: no rotary embedding
};

struct ModelSpec {
  std::vector<BlockSpec> blocks;
  std::vector<TensorSpec> tensors;
  uint32_t data_align = 16;
  bool is_model = false;         // a whole model (v3): `record` is written at offset 64
  format::ModelRecord record{};  // set by add_transformer_f32 / add_transformer_fixed
};

std::vector<uint8_t> f32_bytes(const std::vector<float>& v);

// A block or layer tensor's canonical name, "block.<i>.<name>" (name: a role
// name of attn/role_list.h, e.g. "wq").
std::string block_tensor_name(size_t block, const char* name);

// Append an f32 block and its tensors (wq [D,E], wk [D,kdim], wv [D,vdim],
// wo [E,D], then bq bk bv [D], bo [E] when bias) in the canonical order.
void add_block_f32(ModelSpec& m, const BlockSpec& b, const std::vector<const std::vector<float>*>& w);

// Append a quantized block (b.dtype kS8 or kS16) in the canonical order:
// wq wk wv wo, bq bk bv bo (s8: always, s32; s16: with bias, s64), the
// per-channel multipliers and shifts of q k v o, the scalar table
// (format::QuantParam), the I/O scales, and with b.rope_base the rope cos and
// sin tables (w.rope). `W` is WeightsS8 or WeightsS16 (writer.cpp
// instantiates both), `act` the activation quantization quantize_attention_*
// chose.
template <class W>
void add_block_quant(ModelSpec& m, const BlockSpec& b, const W& w, const ActivationQuant& act);

// A whole f32 model's weights as host vectors, row-major, PyTorch's [out, in].
// Empty vectors are absent tensors; add_transformer_f32 checks that presence
// follows the config.
struct LayerTensorsF32 {
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;  // attention (biases: attention_bias)
  std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias;  // biases: LayerNorm with norm_bias
  std::vector<float> w1, b1, w2, b2, w3, b3;  // FFN (b*: ffn_bias; w3, b3: gated_ffn)
};
struct TransformerTensorsF32 {
  std::vector<float> token_embedding;     // [V, E]
  std::vector<float> position_embedding;  // [P, E] (learned_positions)
  std::vector<float> type_embedding;      // [T, E] (type_vocab_size > 0)
  std::vector<float> embedding_norm_weight, embedding_norm_bias, final_norm_weight, final_norm_bias;
  std::vector<float> lm_head;  // [V, E] (head kUntied)
  std::vector<LayerTensorsF32> layers;
};

// Make `m` (empty) a whole f32 model of config `c` in the canonical order:
// for each layer i its attention block (block.<i>.wq wk wv wo, bq bk bv bo),
// then block.<i>.norm1_weight norm1_bias norm2_weight norm2_bias ffn_w1 ffn_b1
// ffn_w2 ffn_b2 ffn_w3 ffn_b3 (those present, in role order); then
// model.token_embedding position_embedding type_embedding
// embedding_norm_weight embedding_norm_bias final_norm_weight final_norm_bias
// lm_head (those present). User tensors may follow. Throws when a tensor's
// presence or size disagrees with the config.
void add_transformer_f32(ModelSpec& m, const TransformerConfig& c, bool byte_vocab,
                         const TransformerTensorsF32& w);

// Make `m` (empty) a whole s8 or s16 model (W: TransformerWeightsS8 / S16, the
// converter's output, quantize_transformer_s8 / _s16) of config `c` in the
// canonical order: for each layer i its attention block (add_block_quant:
// the block's I/O scales and zero points are the layer's attention input and
// output grids), then block.<i>.norm1_weight norm1_bias norm1_consts
// norm2_weight norm2_bias norm2_consts attn_in attn_out ffn_in ffn_w1 ffn_b1
// ffn_w1_multiplier ffn_w1_shift ffn_w2 ... ffn_w3 ... ffn_act_table
// ffn_consts (those present, in role order); then model.token_embedding
// token_multiplier token_shift position_embedding position_multiplier
// position_shift type_embedding embedding_norm_weight embedding_norm_bias
// embedding_norm_consts final_norm_weight final_norm_bias final_norm_consts
// head_in lm_head head_bias head_multiplier head_shift scales (those present).
// User tensors may follow. Throws when a table the config needs is null.
template <class W>
void add_transformer_fixed(ModelSpec& m, const TransformerConfig& c, bool byte_vocab, const W& w);

// Append the model's tokenizer section (`model.tokenizer`, a u8 tensor of
// the blob's bytes; attn/tokenizer_build.h writes blobs) after the model's
// tensors. Throws if `m` is not a whole model or already has one.
void add_tokenizer(ModelSpec& m, const std::vector<uint8_t>& blob);

// Serialize. Throws std::runtime_error on what the loader would reject for
// simple reasons (names, sizes); the result should still be checked with
// Model::load.
std::vector<uint8_t> write_model(const ModelSpec& m);

// Recompute and store the CRC of a file in `bytes` (for tests that patch a file).
void fix_crc(std::vector<uint8_t>& bytes);

}  // namespace tools
}  // namespace attn
