// tokenizer_files.h: the tokenizer files checkpoints ship with, read into a
// blob spec (attn/tokenizer_build.h) for `attn import` and `attn tokenize`.
// Each reader throws cli::Error naming the file on malformed input or on
// anything the run time does not do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/tokenizer_build.h"
#include "cli/json.h"

namespace attn {
namespace cli {

// The blob (attn/tokenizer.h) of the tokenizer file at `path`, by its name:
// tokenizer.json (its model type picks the algorithm), tokenizer.model
// (SentencePiece), a llama2.c tokenizer.bin (vocab_size pieces; 0: all),
// vocab.json (with merges.txt beside it; x_vocab.json: x_merges.txt), vocab.txt (WordPiece). *kind says
// which, for messages. Checked by Tokenizer::load and against vocab_size (a
// tokenizer with more pieces than the model is refused; 0: unchecked).
std::vector<uint8_t> tokenizer_blob(const std::string& path, int32_t vocab_size, std::string* kind);

// The tokenizer of a byte-level vocabulary (`attn import --byte-vocab`): a
// kBytes blob whose ids 0..255 are the byte pieces <0x00>..<0xFF>, and no
// special tokens (a byte vocabulary names no BOS or EOS; ids from 256 on, if
// the model has them, have no text).
std::vector<uint8_t> bytes_tokenizer_blob();

// The tokenizer file beside a config.json, if any: tokenizer.json,
// tokenizer.model, vocab.json, vocab.txt, the first that exists; else "".
std::string tokenizer_beside(const std::string& config_path);

// Byte-level BPE (GPT-2, Qwen2): a vocab.json with the merges.txt beside
// it, or a tokenizer.json whose model is BPE without byte fallback.
tokenizer_build::Spec read_byte_level_bpe_files(const std::string& vocab_json, const std::string& merges_txt);
tokenizer_build::Spec read_byte_level_bpe_json(const json::Value& root, const std::string& path);

// WordPiece (BERT): a vocab.txt, or a tokenizer.json whose model is WordPiece.
// vocab.txt: one piece a line, its line number the id; the options are
// do_lower_case (and strip_accents, tokenize_chinese_chars, the special
// tokens' names) from the tokenizer_config.json beside it when there is one,
// else BERT's defaults: uncased (lowercase, strip accents), CJK split, text
// cleaned, 100 characters a word. tokenizer.json: model.vocab, unk_token,
// max_input_chars_per_word, continuing_subword_prefix "##" only; the
// normalizer a BertNormalizer (strip_accents null follows lowercase) or none;
// the pre_tokenizer a BertPreTokenizer; added tokens special and in the
// vocabulary (control pieces). [CLS] [SEP] [PAD] [MASK] fill the specials table.
tokenizer_build::Spec read_wordpiece_vocab(const std::string& vocab_txt);
tokenizer_build::Spec read_wordpiece_json(const json::Value& root, const std::string& path);

}  // namespace cli
}  // namespace attn
