// tokenizer_files_bbpe.cpp: byte-level BPE tokenizer files (vocab.json +
// merges.txt, tokenizer.json). Not read yet: the run time has no byte-level
// BPE encoder so far, and the readers say so.
#include "cli/cli.h"
#include "cli/tokenizer_files.h"

namespace attn {
namespace cli {

tokenizer_build::Spec read_byte_level_bpe_files(const std::string& vocab_json, const std::string&) {
  throw Error(vocab_json + ": byte-level BPE tokenizers (GPT-2, Qwen2) are not supported yet");
}

tokenizer_build::Spec read_byte_level_bpe_json(const json::Value&, const std::string& path) {
  throw Error(path + ": byte-level BPE tokenizers (GPT-2, Qwen2) are not supported yet");
}

}  // namespace cli
}  // namespace attn
