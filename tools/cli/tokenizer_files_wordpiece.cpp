// tokenizer_files_wordpiece.cpp: WordPiece tokenizer files (vocab.txt,
// tokenizer.json). Not read yet: the run time has no WordPiece encoder so
// far, and the readers say so.
#include "cli/cli.h"
#include "cli/tokenizer_files.h"

namespace attn {
namespace cli {

tokenizer_build::Spec read_wordpiece_vocab(const std::string& vocab_txt) {
  throw Error(vocab_txt + ": WordPiece tokenizers (BERT) are not supported yet");
}

tokenizer_build::Spec read_wordpiece_json(const json::Value&, const std::string& path) {
  throw Error(path + ": WordPiece tokenizers (BERT) are not supported yet");
}

}  // namespace cli
}  // namespace attn
