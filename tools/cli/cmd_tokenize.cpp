// cmd_tokenize.cpp: `attn tokenize MODEL.attn|TOKENIZER (--text TEXT | --file F
// | --decode IDS) [--special]`
//
// Text to token ids and back with a model's tokenizer section, or with a
// tokenizer file on its own (tokenizer.json, tokenizer.model, a llama2.c
// tokenizer.bin, vocab.json with merges.txt, vocab.txt):
//   --text TEXT   prints the ids on one line, space-separated;
//   --file F      one line of ids per line of F, each line encoded without
//                 its newline;
//   --decode IDS  ("1,2,3" or "1 2 3") prints the text, then a newline.
// --special adds the model's special tokens around each text: [CLS] .. [SEP]
// for WordPiece, else BOS when the tokenizer has one. Without it, none.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/model_exec.h"
#include "cli/text.h"

namespace attn {
namespace {

void print_ids(const std::vector<int32_t>& ids) {
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
  std::printf("%s\n", line.c_str());
}

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  const cli::Args args(argc, argv, {"--text", "--file", "--decode"}, {"--special"});
  const std::string path = args.one_input("MODEL.attn or a tokenizer file");
  if (static_cast<int>(args.has("--text")) + static_cast<int>(args.has("--file")) +
          static_cast<int>(args.has("--decode")) !=
      1)
    throw cli::Error("give one of --text TEXT, --file F, --decode IDS");
  cli::LoadedModel lm;
  cli::Text text;
  const bool attn_file = path.size() >= 5 && path.compare(path.size() - 5, 5, ".attn") == 0;
  if (attn_file) {
    cli::load_model(path, &lm);
    if (!text.from_model(lm.model))
      throw cli::Error(path + " has no tokenizer (import the model with --tokenizer PATH)");
  } else {
    text.from_file(path);
  }
  const bool special = args.has("--special");
  if (args.has("--text")) {
    print_ids(text.encode(args.get("--text"), special));
  } else if (args.has("--file")) {
    const std::vector<uint8_t> bytes = cli::read_file(args.get("--file"));
    std::string all(bytes.begin(), bytes.end());
    size_t p = 0;
    while (p < all.size()) {
      size_t e = all.find('\n', p);
      if (e == std::string::npos) e = all.size();
      print_ids(text.encode(all.substr(p, e - p), special));
      p = e + 1;
    }
  } else {
    const std::string out =
        text.decode(cli::parse_id_list(args.get("--decode"), "--decode", text.tokenizer().vocab_size()));
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::printf("\n");
  }
  return 0;
}

}  // namespace attn
