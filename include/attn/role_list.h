/* attn/role_list.h: every tensor role of the .attn format, once.
 *
 * An X-macro list, plain C99 (no include guard: include it where a list is
 * wanted, with ATTN_ROLE defined). Each row is
 *   ATTN_ROLE(cpp_name, c_name, value, "name", "what it holds")
 * and feeds the C++ enum class attn::format::Role and
 * attn::format::role_name() (attn/model.h), the C constants ATTN_ROLE_* and
 * attn_role_name() (attn/attn.h), and `attn info --roles`, the table tools
 * in other languages read. "name" is the tensor's canonical name after its
 * prefix: `block.<i>.<name>` for block and layer roles, `model.<name>` for
 * model roles (f32 and integer models use the same names). The shapes, dtypes
 * and conditions of each role are the loader's rule table
 * (src/format/tensor_rules.cpp) and attn/FORMAT.md.
 *
 * Values never change; new roles are added, never renumbered:
 *   1..27   attention block tensors (16..27: the tables of s8/s16 blocks)
 *   28..63  layer tensors of whole models (28..37 f32, 40..62 s8/s16), block = the layer
 *   64..127 model tensors of whole models (64..71 f32, 72..90 s8/s16), block = 0xFFFFFFFF
 *   15      a user tensor (block = 0xFFFFFFFF)
 * Numbers not listed are reserved. Block and layer roles stay below 64 so a
 * block's roles fit a 64-bit set; model roles have a set of their own. */
#ifndef ATTN_ROLE
#error "define ATTN_ROLE(cpp_name, c_name, value, name, doc) before including attn/role_list.h"
#endif

/* Attention blocks (v1): D = num_heads * head_dim, Dkv = n_kv_heads * head_dim. */
ATTN_ROLE(kWq, ATTN_ROLE_WQ, 1, "wq", "[D, E]")
ATTN_ROLE(kWk, ATTN_ROLE_WK, 2, "wk", "[Dkv, kdim]")
ATTN_ROLE(kWv, ATTN_ROLE_WV, 3, "wv", "[Dkv, vdim]")
ATTN_ROLE(kWo, ATTN_ROLE_WO, 4, "wo", "[E, D]")
ATTN_ROLE(kBq, ATTN_ROLE_BQ, 5, "bq", "[D]")
ATTN_ROLE(kBk, ATTN_ROLE_BK, 6, "bk", "[Dkv]")
ATTN_ROLE(kBv, ATTN_ROLE_BV, 7, "bv", "[Dkv]")
ATTN_ROLE(kBo, ATTN_ROLE_BO, 8, "bo", "[E]")
ATTN_ROLE(kUser, ATTN_ROLE_USER, 15, "user",
          "a named tensor of the user (embedding, classifier head, ...), block = 0xFFFFFFFF")

/* The tables of s8/s16 blocks (v2). */
ATTN_ROLE(kQMultiplier, ATTN_ROLE_Q_MULTIPLIER, 16, "q_multiplier",
          "s32 [D]  Q0.31 of s_query * s_wq[c] / s_q")
ATTN_ROLE(kQShift, ATTN_ROLE_Q_SHIFT, 17, "q_shift", "s32 [D]  [-31, 30] (s8) / [-31, 14] (s16)")
ATTN_ROLE(kKMultiplier, ATTN_ROLE_K_MULTIPLIER, 18, "k_multiplier", "s32 [Dkv]")
ATTN_ROLE(kKShift, ATTN_ROLE_K_SHIFT, 19, "k_shift", "s32 [Dkv]")
ATTN_ROLE(kVMultiplier, ATTN_ROLE_V_MULTIPLIER, 20, "v_multiplier", "s32 [Dkv]")
ATTN_ROLE(kVShift, ATTN_ROLE_V_SHIFT, 21, "v_shift", "s32 [Dkv]")
ATTN_ROLE(kOMultiplier, ATTN_ROLE_O_MULTIPLIER, 22, "o_multiplier", "s32 [E]")
ATTN_ROLE(kOShift, ATTN_ROLE_O_SHIFT, 23, "o_shift", "s32 [E]")
ATTN_ROLE(kQuantParams, ATTN_ROLE_QUANT_PARAMS, 24, "quant_params", "s32 [16], indexed by format::QuantParam")
ATTN_ROLE(kIoScale, ATTN_ROLE_IO_SCALE, 25, "io_scale", "f32 [4]  query, key, value, output scales")
ATTN_ROLE(kRopeCos, ATTN_ROLE_ROPE_COS, 26, "rope_cos", "s16 [P, head_dim / 2]  Q1.14 cos, rope blocks only")
ATTN_ROLE(kRopeSin, ATTN_ROLE_ROPE_SIN, 27, "rope_sin", "s16 [P, head_dim / 2]  Q1.14 sin, rope blocks only")

/* Layer tensors of f32 models (v3), E embed_dim, F ffn_dim. */
ATTN_ROLE(kNorm1Weight, ATTN_ROLE_NORM1_WEIGHT, 28, "norm1_weight", "[E]")
ATTN_ROLE(kNorm1Bias, ATTN_ROLE_NORM1_BIAS, 29, "norm1_bias", "[E]  LayerNorm with norm_bias")
ATTN_ROLE(kNorm2Weight, ATTN_ROLE_NORM2_WEIGHT, 30, "norm2_weight", "[E]")
ATTN_ROLE(kNorm2Bias, ATTN_ROLE_NORM2_BIAS, 31, "norm2_bias", "[E]  LayerNorm with norm_bias")
ATTN_ROLE(kFfnW1, ATTN_ROLE_FFN_W1, 32, "ffn_w1", "[F, E]")
ATTN_ROLE(kFfnB1, ATTN_ROLE_FFN_B1, 33, "ffn_b1", "[F]  ffn_bias")
ATTN_ROLE(kFfnW2, ATTN_ROLE_FFN_W2, 34, "ffn_w2", "[E, F]")
ATTN_ROLE(kFfnB2, ATTN_ROLE_FFN_B2, 35, "ffn_b2", "[E]  ffn_bias")
ATTN_ROLE(kFfnW3, ATTN_ROLE_FFN_W3, 36, "ffn_w3", "[F, E]  gated_ffn")
ATTN_ROLE(kFfnB3, ATTN_ROLE_FFN_B3, 37, "ffn_b3", "[F]  gated_ffn and ffn_bias")

/* Layer tensors of s8/s16 models (v3): attn::LayerWeightsS8 / S16 besides the block's own. */
ATTN_ROLE(kIntNorm1Weight, ATTN_ROLE_INT_NORM1_WEIGHT, 40, "norm1_weight", "s32 [E]  NormFixed::weight")
ATTN_ROLE(kIntNorm1Bias, ATTN_ROLE_INT_NORM1_BIAS, 41, "norm1_bias", "s32 [E]  NormFixed::bias")
ATTN_ROLE(kNorm1Consts, ATTN_ROLE_NORM1_CONSTS, 42, "norm1_consts", "s64 [3]  eps, shift, output_zero_point")
ATTN_ROLE(kIntNorm2Weight, ATTN_ROLE_INT_NORM2_WEIGHT, 43, "norm2_weight", "as 40, for norm2")
ATTN_ROLE(kIntNorm2Bias, ATTN_ROLE_INT_NORM2_BIAS, 44, "norm2_bias", "as 41, for norm2")
ATTN_ROLE(kNorm2Consts, ATTN_ROLE_NORM2_CONSTS, 45, "norm2_consts", "as 42, for norm2")
ATTN_ROLE(kAttnIn, ATTN_ROLE_ATTN_IN, 46, "attn_in", "s32 [3]  RescaleFixed (post-norm only)")
ATTN_ROLE(kAttnOut, ATTN_ROLE_ATTN_OUT, 47, "attn_out", "s32 [3]  RescaleFixed: attention output -> residual")
ATTN_ROLE(kFfnIn, ATTN_ROLE_FFN_IN, 48, "ffn_in", "s32 [3]  RescaleFixed (post-norm only)")
ATTN_ROLE(kIntFfnW1, ATTN_ROLE_INT_FFN_W1, 49, "ffn_w1", "s8 [F, E]")
ATTN_ROLE(kIntFfnB1, ATTN_ROLE_INT_FFN_B1, 50, "ffn_b1",
          "s32 [F] (s8 model, always) / s64 [F] (s16, ffn_bias)")
ATTN_ROLE(kFfnW1Multiplier, ATTN_ROLE_FFN_W1_MULTIPLIER, 51, "ffn_w1_multiplier", "s32 [F]  Q0.31")
ATTN_ROLE(kFfnW1Shift, ATTN_ROLE_FFN_W1_SHIFT, 52, "ffn_w1_shift", "s32 [F]")
ATTN_ROLE(kIntFfnW2, ATTN_ROLE_INT_FFN_W2, 53, "ffn_w2", "s8 [E, F]  into the residual grid")
ATTN_ROLE(kIntFfnB2, ATTN_ROLE_INT_FFN_B2, 54, "ffn_b2", "s32 / s64 [E], as b1")
ATTN_ROLE(kFfnW2Multiplier, ATTN_ROLE_FFN_W2_MULTIPLIER, 55, "ffn_w2_multiplier", "s32 [E]")
ATTN_ROLE(kFfnW2Shift, ATTN_ROLE_FFN_W2_SHIFT, 56, "ffn_w2_shift", "s32 [E]")
ATTN_ROLE(kIntFfnW3, ATTN_ROLE_INT_FFN_W3, 57, "ffn_w3", "s8 [F, E]  gated_ffn")
ATTN_ROLE(kIntFfnB3, ATTN_ROLE_INT_FFN_B3, 58, "ffn_b3", "s32 / s64 [F], as b1 and gated_ffn")
ATTN_ROLE(kFfnW3Multiplier, ATTN_ROLE_FFN_W3_MULTIPLIER, 59, "ffn_w3_multiplier", "s32 [F]  gated_ffn")
ATTN_ROLE(kFfnW3Shift, ATTN_ROLE_FFN_W3_SHIFT, 60, "ffn_w3_shift", "s32 [F]  gated_ffn")
ATTN_ROLE(kFfnActTable, ATTN_ROLE_FFN_ACT_TABLE, 61, "ffn_act_table",
          "s8 plain: s8 [256]; s8 gated: s16 [256]; s16: s32 [1025]")
ATTN_ROLE(kFfnConsts, ATTN_ROLE_FFN_CONSTS, 62, "ffn_consts", "s32 [5], indexed by format::FfnConst")

/* Model tensors of f32 models (v3), V vocab_size, P max_positions, T type_vocab_size. */
ATTN_ROLE(kTokenEmbedding, ATTN_ROLE_TOKEN_EMBEDDING, 64, "token_embedding", "[V, E]")
ATTN_ROLE(kPositionEmbedding, ATTN_ROLE_POSITION_EMBEDDING, 65, "position_embedding",
          "[P, E]  learned_positions")
ATTN_ROLE(kTypeEmbedding, ATTN_ROLE_TYPE_EMBEDDING, 66, "type_embedding", "[T, E]  T > 0")
ATTN_ROLE(kEmbeddingNormWeight, ATTN_ROLE_EMBEDDING_NORM_WEIGHT, 67, "embedding_norm_weight",
          "[E]  embedding_norm")
ATTN_ROLE(kEmbeddingNormBias, ATTN_ROLE_EMBEDDING_NORM_BIAS, 68, "embedding_norm_bias",
          "[E]  embedding_norm, LayerNorm with norm_bias")
ATTN_ROLE(kFinalNormWeight, ATTN_ROLE_FINAL_NORM_WEIGHT, 69, "final_norm_weight", "[E]  final_norm")
ATTN_ROLE(kFinalNormBias, ATTN_ROLE_FINAL_NORM_BIAS, 70, "final_norm_bias",
          "[E]  final_norm, LayerNorm with norm_bias")
ATTN_ROLE(kLmHead, ATTN_ROLE_LM_HEAD, 71, "lm_head", "[V, E]  head untied")

/* Model tensors of s8/s16 models (v3): attn::TransformerWeightsS8 / S16. */
ATTN_ROLE(kIntTokenEmbedding, ATTN_ROLE_INT_TOKEN_EMBEDDING, 72, "token_embedding",
          "s8 [V, E]  EmbeddingFixed::table (also the tied head's weight)")
ATTN_ROLE(kTokenMultiplier, ATTN_ROLE_TOKEN_MULTIPLIER, 73, "token_multiplier", "s32 [V]")
ATTN_ROLE(kTokenShift, ATTN_ROLE_TOKEN_SHIFT, 74, "token_shift", "s32 [V]")
ATTN_ROLE(kIntPositionEmbedding, ATTN_ROLE_INT_POSITION_EMBEDDING, 75, "position_embedding",
          "s8 [P, E]  learned_positions")
ATTN_ROLE(kPositionMultiplier, ATTN_ROLE_POSITION_MULTIPLIER, 76, "position_multiplier", "s32 [P]")
ATTN_ROLE(kPositionShift, ATTN_ROLE_POSITION_SHIFT, 77, "position_shift", "s32 [P]")
ATTN_ROLE(kIntTypeEmbedding, ATTN_ROLE_INT_TYPE_EMBEDDING, 78, "type_embedding",
          "s32 [E]  row 0 on the residual grid (T > 0)")
ATTN_ROLE(kIntEmbeddingNormWeight, ATTN_ROLE_INT_EMBEDDING_NORM_WEIGHT, 79, "embedding_norm_weight",
          "s32 [E]  embedding_norm")
ATTN_ROLE(kIntEmbeddingNormBias, ATTN_ROLE_INT_EMBEDDING_NORM_BIAS, 80, "embedding_norm_bias",
          "s32 [E]  embedding_norm, LayerNorm with norm_bias")
ATTN_ROLE(kEmbeddingNormConsts, ATTN_ROLE_EMBEDDING_NORM_CONSTS, 81, "embedding_norm_consts",
          "s64 [3]  embedding_norm")
ATTN_ROLE(kIntFinalNormWeight, ATTN_ROLE_INT_FINAL_NORM_WEIGHT, 82, "final_norm_weight",
          "s32 [E]  final_norm")
ATTN_ROLE(kIntFinalNormBias, ATTN_ROLE_INT_FINAL_NORM_BIAS, 83, "final_norm_bias",
          "s32 [E]  final_norm, LayerNorm with norm_bias")
ATTN_ROLE(kFinalNormConsts, ATTN_ROLE_FINAL_NORM_CONSTS, 84, "final_norm_consts", "s64 [3]  final_norm")
ATTN_ROLE(kHeadIn, ATTN_ROLE_HEAD_IN, 85, "head_in", "s32 [3]  RescaleFixed: a head without final norm")
ATTN_ROLE(kIntLmHead, ATTN_ROLE_INT_LM_HEAD, 86, "lm_head", "s8 [V, E]  head untied")
ATTN_ROLE(kHeadBias, ATTN_ROLE_HEAD_BIAS, 87, "head_bias", "s32 [V]  s8 models with a head (zero point fold)")
ATTN_ROLE(kHeadMultiplier, ATTN_ROLE_HEAD_MULTIPLIER, 88, "head_multiplier", "s32 [V]  a head")
ATTN_ROLE(kHeadShift, ATTN_ROLE_HEAD_SHIFT, 89, "head_shift", "s32 [V]  a head")
ATTN_ROLE(kModelScales, ATTN_ROLE_MODEL_SCALES, 90, "scales", "f32 [2]  residual_scale, output_scale")

/* The model's tokenizer (any model dtype, optional). */
ATTN_ROLE(kTokenizer, ATTN_ROLE_TOKENIZER, 91, "tokenizer",
          "u8 [n]  a tokenizer blob (src/tokenizer/README.md), checked by Tokenizer::load")
