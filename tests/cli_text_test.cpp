// cli_text_test.cpp: text in and text out on the command line. A llama2.c
// checkpoint imported with its tokenizer.bin generates, from a text prompt,
// exactly the text llama2.c's run.c prints (tests/data/tokenizers/story.runc,
// written by tools/tokenizer/gen_llama2c_story.py with run.c); its version 1
// export imports to the same bytes; `attn tokenize` agrees with the committed
// encodings of run.c's algorithm and round-trips; a tokenizer beside
// config.json is picked up, and refused when it does not fit the model.
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "attn/attn.h"
#include "attn/model.h"
#include "attn/tokenizer.h"
#include "format/writer.h"

using cli::parse_ids;
using cli::quote;

namespace {

const std::string kTok = std::string(ATTN_TEST_DATA_DIR) + "/tokenizers/";

std::string from_hex(const std::string& hex) {
  std::string s;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    s += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("attn generate --prompt TEXT prints what llama2.c's run.c prints", "[cli][tokenizer][text]") {
  cli::TempDir tmp;
  const std::string story = tmp / "story.attn", story1 = tmp / "story1.attn";
  const cli::Result r = cli::run_ok("import " + quote(kTok + "story.bin") + " --tokenizer " +
                                        quote(kTok + "llama2c.bin") + " -o " + quote(story),
                                    tmp);
  CHECK(r.out.find("tokenizer: SentencePiece BPE (llama2.c tokenizer.bin)") != std::string::npos);
  // llama2.c's version 1 export of the same weights: the same model file.
  cli::run_ok("import " + quote(kTok + "story.v1.bin") + " --tokenizer " + quote(kTok + "llama2c.bin") +
                  " -o " + quote(story1),
              tmp);
  CHECK(cli::slurp(story) == cli::slurp(story1));

  const std::vector<std::string> golden = lines_of(cli::slurp_text(kTok + "story.runc"));
  REQUIRE(golden.size() == 6);
  for (size_t g = 0; g < golden.size(); g += 2) {
    const size_t tab = golden[g].find('\t');
    const std::string prompt = golden[g].substr(0, tab);
    const int steps = std::stoi(golden[g].substr(tab + 1));
    INFO(prompt);
    // run.c counts the prompt (with BOS) in its steps.
    const size_t P =
        parse_ids(cli::run_ok("tokenize " + quote(story) + " --special --text " + quote(prompt), tmp).out)
            .size();
    REQUIRE(P >= 2);
    const std::string n = std::to_string(steps - static_cast<int>(P) + 1);
    const cli::Result gen =
        cli::run_ok("generate " + quote(story) + " --prompt " + quote(prompt) + " --steps " + n, tmp);
    CHECK(gen.out == from_hex(golden[g + 1]));
    // --ids: the same tokens as ids, encoding back to the text after the prompt.
    const cli::Result ids = cli::run_ok(
        "generate " + quote(story) + " --prompt " + quote(prompt) + " --steps " + n + " --ids", tmp);
    const cli::Result text = cli::run_ok(
        "tokenize " + quote(story) + " --decode " + quote(ids.out.substr(0, ids.out.size() - 1)), tmp);
    CHECK(prompt + text.out == gen.out);
  }
}

TEST_CASE("attn tokenize: run.c's encodings of the committed texts, and back", "[cli][tokenizer][text]") {
  cli::TempDir tmp;
  const std::string story = tmp / "story.attn";
  cli::run_ok("import " + quote(kTok + "story.bin") + " --tokenizer " + quote(kTok + "llama2c.bin") + " -o " +
                  quote(story),
              tmp);
  // llama2c.golden: text as hex, a tab, run.c's ids (no BOS). --file encodes each line on its own.
  std::string texts;
  std::vector<std::vector<int32_t>> want;
  for (const std::string& line : lines_of(cli::slurp_text(kTok + "llama2c.golden"))) {
    const size_t tab = line.find('\t');
    const std::string text = from_hex(line.substr(0, tab));
    if (text.find('\n') != std::string::npos || text.find('\r') != std::string::npos) continue;
    texts += text + "\n";
    want.push_back(parse_ids(line.substr(tab + 1)));
  }
  REQUIRE(want.size() > 20);
  cli::spit(tmp / "texts.txt", texts);
  for (const std::string& source : {story, kTok + "llama2c.bin"}) {
    INFO(source);
    const std::vector<std::string> got =
        lines_of(cli::run_ok("tokenize " + quote(source) + " --file " + quote(tmp / "texts.txt"), tmp).out);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(parse_ids(got[i]) == want[i]);
  }
  // --special: BOS first; --decode gives the text back.
  const std::string text = "Grüße, the licence \xF0\x9F\x8E\x89 says";
  const std::vector<int32_t> plain =
      parse_ids(cli::run_ok("tokenize " + quote(story) + " --text " + quote(text), tmp).out);
  const std::vector<int32_t> special =
      parse_ids(cli::run_ok("tokenize " + quote(story) + " --special --text " + quote(text), tmp).out);
  REQUIRE(special.size() == plain.size() + 1);
  CHECK(special[0] == 1);
  std::string joined;
  for (int32_t id : special) joined += std::to_string(id) + ",";
  CHECK(
      cli::run_ok("tokenize " + quote(story) + " --decode " + joined.substr(0, joined.size() - 1), tmp).out ==
      text + "\n");
  // Misuse: no tokenizer, two modes, an id outside the vocabulary.
  cli::check_error(cli::run("tokenize " + quote(cli::kFormatDir + "llama2c.attn") + " --text hi", tmp),
                   {"no tokenizer"});
  cli::check_error(cli::run("tokenize " + quote(story) + " --text hi --decode 1", tmp), {"one of"});
  cli::check_error(cli::run("tokenize " + quote(story) + " --decode 1,512", tmp),
                   {"512", "kTokenOutOfRange"});
}

TEST_CASE("attn tokenize reads every tokenizer file form, as the goldens of its algorithm say",
          "[cli][tokenizer][text]") {
  cli::TempDir tmp;
  struct Form {
    const char* file;
    const char* golden;
  };
  const Form forms[] = {{"spm_bpe.model", "spm_bpe.golden"},
                        {"spm_bpe.tokenizer.json", "spm_bpe.golden"},
                        {"llama2c.bin", "llama2c.golden"},
                        {"bbpe_vocab.json", "bbpe_gpt2.golden"},
                        {"bbpe_gpt2.tokenizer.json", "bbpe_gpt2_prefix.golden"},
                        {"bbpe_qwen2.tokenizer.json", "bbpe_qwen2.golden"},
                        {"bbpe_llama3.tokenizer.json", "bbpe_llama3.golden"},
                        {"wordpiece_uncased/vocab.txt", "wordpiece_uncased.golden"},
                        {"wordpiece_uncased/tokenizer.json", "wordpiece_uncased.golden"},
                        {"wordpiece_cased/vocab.txt", "wordpiece_cased.golden"},
                        {"wordpiece_cased/tokenizer.json", "wordpiece_cased.golden"}};
  for (const Form& f : forms) {
    INFO(f.file);
    // Golden lines: text as hex, a tab, the ids (no special tokens); texts with a line break left out.
    std::string texts;
    std::vector<std::vector<int32_t>> want;
    for (const std::string& line : lines_of(cli::slurp_text(kTok + f.golden))) {
      const size_t tab = line.find('\t');
      const std::string text = from_hex(line.substr(0, tab));
      if (text.find_first_of("\r\n") != std::string::npos) continue;
      texts += text + "\n";
      const size_t tab2 = line.find('\t', tab + 1);
      want.push_back(
          parse_ids(line.substr(tab + 1, tab2 == std::string::npos ? std::string::npos : tab2 - tab - 1)));
    }
    REQUIRE(want.size() > 20);
    cli::spit(tmp / "texts.txt", texts);
    const std::vector<std::string> got = lines_of(
        cli::run_ok("tokenize " + quote(kTok + f.file) + " --file " + quote(tmp / "texts.txt"), tmp).out);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(parse_ids(got[i]) == want[i]);
  }
}

TEST_CASE("attn import: the tokenizer section is checked, and only whole models take one",
          "[cli][tokenizer][text]") {
  cli::TempDir tmp;
  // A model of 40 ids cannot take a tokenizer of 512 pieces.
  cli::check_error(cli::run("import " + quote(cli::kFormatDir + "../model/llama.safetensors") + " --config " +
                                quote(cli::kFormatDir + "../model/llama.config.json") + " --tokenizer " +
                                quote(kTok + "spm_bpe.model") + " -o " + quote(tmp / "x.attn"),
                            tmp),
                   {"512 pieces", "vocabulary of 40", "kTokenizerVocabMismatch"});
  CHECK(cli::no_leftovers(tmp, {}));
  cli::check_error(cli::run("import " + quote(kTok + "story.bin") + " --tokenizer " +
                                quote(kTok + "story.runc") + " -o " + quote(tmp / "x.attn"),
                            tmp),
                   {"story.runc", "not a tokenizer file"});
  cli::check_error(cli::run("import " + quote(kTok + "story.bin") + " --byte-vocab --tokenizer " +
                                quote(kTok + "llama2c.bin") + " -o " + quote(tmp / "x.attn"),
                            tmp),
                   {"exclude each other"});
  // The committed fuzzing seed with a tokenizer section is what import writes.
  cli::run_ok("import " + quote(kTok + "tiny_story.bin") + " --tokenizer " + quote(kTok + "llama2c.bin") +
                  " -o " + quote(tmp / "tiny.attn"),
              tmp);
  CHECK(cli::slurp(tmp / "tiny.attn") == cli::slurp(kTok + "tiny_story.attn"));
  // The section in the file: Model::tokenizer reads it in place, and the loader checks it.
  const std::string story = tmp / "story.attn";
  cli::run_ok("import " + quote(kTok + "story.bin") + " --tokenizer " + quote(kTok + "llama2c.bin") + " -o " +
                  quote(story),
              tmp);
  std::vector<uint8_t> bytes = cli::slurp(story);
  attn::Model m;
  REQUIRE(attn::Model::load(bytes.data(), bytes.size(), &m) == attn::Status::kOk);
  attn::Tokenizer t;
  REQUIRE(m.tokenizer(&t) == attn::Status::kOk);
  CHECK(t.vocab_size() == 512);
  attn::TensorView v;
  REQUIRE(m.find_tensor("model.tokenizer", &v) == attn::Status::kOk);
  CHECK(v.role == attn::format::Role::kTokenizer);
  // A flipped byte in the tokenizer's header: the file no longer loads (CRC fixed up).
  const size_t at = static_cast<size_t>(static_cast<const uint8_t*>(v.data) - bytes.data());
  std::vector<uint8_t> bad = bytes;
  bad[at] ^= 0xFF;  // the blob's magic
  attn::tools::fix_crc(bad);
  CHECK(attn::Model::load(bad.data(), bad.size(), &m) == attn::Status::kBadTokenizerSection);
  bad = bytes;
  bad[at + 24] = 0xFF;  // vocab_size: far beyond the pieces' table
  attn::tools::fix_crc(bad);
  CHECK(attn::Model::load(bad.data(), bad.size(), &m) != attn::Status::kOk);
}

TEST_CASE("text through the other commands: quantize --calib-text, run --text, perplexity --text, the C API",
          "[cli][tokenizer][text]") {
  cli::TempDir tmp;
  const std::string story = tmp / "story.attn", s8 = tmp / "story.s8.attn";
  cli::run_ok("import " + quote(kTok + "story.bin") + " --tokenizer " + quote(kTok + "llama2c.bin") + " -o " +
                  quote(story),
              tmp);
  // Calibrate on text; the tokenizer travels into the quantized file.
  const cli::Result q = cli::run_ok("quantize " + quote(story) + " --calib-text " +
                                        quote(kTok + "licenses.txt") + " --dtype s8 -o " + quote(s8),
                                    tmp);
  CHECK(q.out.find("calibration sequence(s) of 64 token(s)") != std::string::npos);
  CHECK(cli::run_ok("tokenize " + quote(s8) + " --text " + quote("the licence"), tmp).out ==
        cli::run_ok("tokenize " + quote(story) + " --text " + quote("the licence"), tmp).out);
  CHECK(cli::run_ok("info " + quote(s8), tmp)
            .out.find("tokenizer: SentencePiece BPE, 512 pieces, BOS 1, EOS 2") != std::string::npos);
  // run --text: BOS and the text's ids, as --tokens of the same ids.
  const std::vector<int32_t> ids = parse_ids(
      cli::run_ok("tokenize " + quote(story) + " --special --text " + quote("Once upon a time"), tmp).out);
  std::vector<int64_t> ids64(ids.begin(), ids.end());
  cli::spit(tmp / "ids.npy", cli::ids_npy({static_cast<int64_t>(ids.size())}, ids64, false));
  cli::run_ok("run " + quote(s8) + " --text " + quote("Once upon a time") + " -o " + quote(tmp / "a.npy"),
              tmp);
  cli::run_ok("run " + quote(s8) + " --tokens " + quote(tmp / "ids.npy") + " -o " + quote(tmp / "b.npy"),
              tmp);
  CHECK(cli::slurp(tmp / "a.npy") == cli::slurp(tmp / "b.npy"));
  // perplexity --text: the file's text with BOS, as --tokens of those ids.
  const std::string text = "Permission is hereby granted, free of charge, to any person";
  cli::spit(tmp / "t.txt", text);
  const std::vector<int32_t> tids =
      parse_ids(cli::run_ok("tokenize " + quote(story) + " --special --text " + quote(text), tmp).out);
  std::vector<int64_t> t64(tids.begin(), tids.end());
  cli::spit(tmp / "t.npy", cli::ids_npy({static_cast<int64_t>(t64.size())}, t64, false));
  CHECK(cli::run_ok("perplexity " + quote(story) + " --text " + quote(tmp / "t.txt"), tmp).out ==
        cli::run_ok("perplexity " + quote(story) + " --tokens " + quote(tmp / "t.npy"), tmp).out);
  cli::check_error(cli::run("quantize " + quote(cli::kFormatDir + "../model/llama.attn") + " --calib-text " +
                                quote(kTok + "licenses.txt") + " --dtype s8 -o " + quote(tmp / "x.attn"),
                            tmp),
                   {"no tokenizer", "--calib-text"});

  // The C API: the model's tokenizer, read in place.
  const std::vector<uint8_t> bytes = cli::slurp(s8);
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  attn_model model;
  REQUIRE(attn_model_load(&model, aligned.data(), bytes.size()) == ATTN_OK);
  attn_tokenizer tok;
  REQUIRE(attn_model_tokenizer(&model, &tok) == ATTN_OK);
  int32_t vocab = 0, bos = -1;
  CHECK(attn_tokenizer_vocab_size(&tok, &vocab) == ATTN_OK);
  CHECK(attn_tokenizer_special(&tok, ATTN_TOKEN_BOS, &bos) == ATTN_OK);
  CHECK(vocab == 512);
  CHECK(bos == 1);
  CHECK(attn_model_tokenizer(&model, nullptr) == ATTN_ERR_NULL_ARGUMENT);
  attn_model plain;
  const std::vector<uint8_t> pb = cli::slurp(cli::kFormatDir + "../model/llama.attn");
  std::vector<uint64_t> pa((pb.size() + 7) / 8);
  std::memcpy(pa.data(), pb.data(), pb.size());
  REQUIRE(attn_model_load(&plain, pa.data(), pb.size()) == ATTN_OK);
  CHECK(attn_model_tokenizer(&plain, &tok) == ATTN_ERR_NOT_FOUND);
}

#endif  // ATTN_CLI_PATH
