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
tokenizer_build::Spec read_wordpiece_vocab(const std::string& vocab_txt);
tokenizer_build::Spec read_wordpiece_json(const json::Value& root, const std::string& path);

}  // namespace cli
}  // namespace attn
