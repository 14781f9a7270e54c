// text.h: a model's text in and text out for the commands (`attn tokenize`,
// `generate --prompt`, `run --text`, `perplexity --text`, `quantize
// --calib-text`): its tokenizer section, or a tokenizer file given on its
// own. (Byte-vocabulary models without a section keep their byte paths.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/tokenizer.h"

namespace attn {
namespace cli {

class Text {
 public:
  // The tokenizer section of a loaded .attn model (read in place: the model's
  // bytes must outlive this); false if it has none.
  bool from_model(const Model& model);
  // The tokenizer in a tokenizer file (tokenizer_files.h), copied in.
  void from_file(const std::string& path);

  // text -> ids. With specials: [CLS] text [SEP] for WordPiece, else BOS
  // text when the tokenizer has a BOS (Llama, llama2.c), else the text alone.
  std::vector<int32_t> encode(const std::string& text, bool specials) const;
  // ids -> text, byte pieces joined into UTF-8 characters (U+FFFD for a
  // broken one), control pieces dropped.
  std::string decode(const std::vector<int32_t>& ids) const;
  // Streaming: one id's text (decode_flush at the end).
  std::string decode_one(int32_t id, TokenizerDecodeState* state) const;
  std::string decode_flush(TokenizerDecodeState* state) const;

  const Tokenizer& tokenizer() const { return tok_; }
  // A sampled id that ends a generation: EOS, or BOS (llama2.c's run.c stops there).
  bool ends_text(int32_t id) const;
  const std::string& what() const { return what_; }

 private:
  Tokenizer tok_;
  std::vector<uint32_t> own_;  // a blob built here (from_file), 4-byte aligned
  std::string what_;
};

}  // namespace cli
}  // namespace attn
