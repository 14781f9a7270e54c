// tokenizer_files.h: the tokenizer files checkpoints ship with, read into a
// blob spec (attn/tokenizer_build.h) for `attn import` and `attn tokenize`.
// Each reader throws cli::Error naming the file on malformed input or on
// anything the run time does not do.
#pragma once

#include <string>

#include "attn/tokenizer_build.h"
#include "cli/json.h"

namespace attn {
namespace cli {

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
