// attn/tokenizer_build.h: HOST-side writers of tokenizer blobs (attn/
// tokenizer.h), from the files tokenizers ship as. They use the heap and
// the standard library; they live in the host-only target attn_quant, never
// in libattn.a. Each returns false with a message in *error when the input
// is malformed or uses something the run time does not do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/tokenizer.h"

namespace attn {
namespace tokenizer_build {

// Everything a blob holds, as plain vectors.
struct Spec {
  TokenizerAlgorithm algorithm = TokenizerAlgorithm::kSentencePieceBpe;
  uint32_t flags = 0;
  std::vector<std::string> pieces;
  std::vector<float> scores;  // empty, or one per piece
  std::vector<PieceType> types;
  int32_t specials[static_cast<size_t>(SpecialToken::kCount)] = {-1, -1, -1, -1, -1, -1, -1, -1};
  uint32_t max_word_chars = 0;  // WordPiece: max_input_chars_per_word (0 for other algorithms)
  // Byte-level BPE: the merges by rank as piece ids, the pre-tokenizer split.
  struct Merge {
    int32_t left;
    int32_t right;
    int32_t result;
  };
  std::vector<Merge> merges;
  ByteLevelSplit split = ByteLevelSplit::kGpt2;
  bool add_prefix_space = false;
  bool ignore_merges = false;
};

// Lays out the blob (src/tokenizer/README.md): sorts the piece index and
// builds the byte table from the <0xHH> byte pieces. false if the pieces
// repeat or the spec is inconsistent; the result is not loaded here.
bool write_blob(const Spec& spec, std::vector<uint8_t>* blob, std::string* error);

// A SentencePiece tokenizer.model (the ModelProto protobuf): BPE models with
// identity normalization (Llama, Mistral), with or without byte fallback.
bool spec_from_sentencepiece_model(const uint8_t* data, size_t size, Spec* spec, std::string* error);

// A llama2.c tokenizer.bin: int32 max_token_length, then per token float
// score, int32 length, the bytes. Its pieces spell U+2581 as ' ' and BOS /
// EOS as "\n<s>\n" / "\n</s>\n"; ids 0, 1, 2 are <unk>, BOS, EOS and the
// <0xHH> pieces byte pieces, as in the Llama vocabulary it is exported from.
// vocab_size 0: every token up to the end of the file.
bool spec_from_llama2c(const uint8_t* data, size_t size, int32_t vocab_size, Spec* spec, std::string* error);

// Byte-level BPE (GPT-2, Qwen2) from plain data, as vocab.json + merges.txt
// or a tokenizer.json hold it. vocab[id] is the piece in GPT-2's
// bytes_to_unicode() spelling (each byte one printable character: ' ' is
// "\u0120"); an empty string leaves the id to an added token. merges are
// the pairs by rank, spelled the same way; every pair and its
// concatenation must be in the vocabulary (a repeated pair keeps its last
// rank, as GPT-2 and Hugging Face do). added are tokens given as raw text
// (<|endoftext|>, <|im_start|>...): control pieces, never matched in the
// text; each fills an empty id or replaces the vocabulary's piece of the
// same text. The blob holds raw bytes, so decoding needs no mapping.
struct ByteLevelAdded {
  int32_t id;
  std::string content;
};
struct ByteLevelOptions {
  ByteLevelSplit split = ByteLevelSplit::kGpt2;
  bool add_prefix_space = false;
  bool ignore_merges = false;
  // Special tokens by content (empty: none), e.g. eos "<|endoftext|>".
  std::string bos, eos, pad;
};
bool spec_from_byte_level_bpe(const std::vector<std::string>& vocab,
                              const std::vector<std::pair<std::string, std::string>>& merges,
                              const std::vector<ByteLevelAdded>& added, const ByteLevelOptions& options,
                              Spec* spec, std::string* error);

// WordPiece options: BERT's BasicTokenizer / tokenizers' BertNormalizer
// settings and the special pieces' spelling. The defaults are BERT's
// (uncased: bert-base-uncased, and BertTokenizer's do_lower_case=True).
struct WordPieceOptions {
  bool lowercase = true;
  bool strip_accents = true;  // BERT: follows lowercase unless set
  bool chinese_chars = true;
  bool clean_text = true;
  uint32_t max_input_chars_per_word = 100;
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string mask_token = "[MASK]";
  // Further pieces that are never matched in text (added special tokens).
  std::vector<std::string> control_tokens;
};

// WordPiece (BERT, DistilBERT): the vocabulary in id order (vocab.txt's
// lines, "##" continuation pieces as they are). unk_token must be in it
// (the unknown piece); cls / sep / pad / mask tokens and control_tokens
// present in it become control pieces and the specials table's entries.
bool spec_from_wordpiece(const std::vector<std::string>& vocab, const WordPieceOptions& options, Spec* spec,
                         std::string* error);

// Each byte its own id: ids [0, 256) are the pieces <0x00>..<0xFF>, and
// the given special pieces (e.g. "<s>") follow from 256 on, as control pieces.
bool spec_bytes(const std::vector<std::string>& specials, Spec* spec, std::string* error);

}  // namespace tokenizer_build
}  // namespace attn
