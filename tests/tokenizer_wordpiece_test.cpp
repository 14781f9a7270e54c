// WordPiece tokenizers (attn/tokenizer.h, kWordPiece): the goldens of the
// reference written from BERT's description (tools/tokenizer/
// gen_wordpiece_goldens.py) from every file form the CLI reads (vocab.txt,
// with and without tokenizer_config.json, and tokenizer.json), BERT-style
// decoding, the case folding tables, every malformed blob's status, and
// hostile-input time bounds.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "attn/attn.h"
#include "attn/tokenizer.h"
#include "attn/tokenizer_build.h"
#include "cli/cli.h"
#include "cli/tokenizer_files.h"
#include "host_helpers.h"
#include "tokenizer/blob.h"
#include "tokenizer/unicode_fold.h"
#include "tokenizer_helpers.h"

using attn::Status;
using attn::Tokenizer;
namespace tb = attn::tokenizer_build;
using namespace tokenizer_tests;

namespace {

std::vector<uint8_t> from_vocab_txt(const std::string& dir) {
  return blob_of(attn::cli::read_wordpiece_vocab(data_path(dir + "/vocab.txt")));
}

std::vector<uint8_t> from_tokenizer_json(const std::string& dir) {
  const std::string path = data_path(dir + "/tokenizer.json");
  return blob_of(attn::cli::read_wordpiece_json(attn::json::parse(read_text(path)), path));
}

void check_goldens(const std::vector<uint8_t>& bytes, const std::string& golden_name) {
  Blob blob(bytes);
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  CHECK(tok.algorithm() == attn::TokenizerAlgorithm::kWordPiece);
  const auto goldens = read_golden(golden_name);
  REQUIRE(goldens.size() >= 90);
  int exact = 0;
  for (const auto& g : goldens) {
    INFO(golden_name << ": '" << g.text << "'");
    std::vector<int32_t> ids;
    REQUIRE(encode(tok, g.text, &ids) == Status::kOk);
    CHECK(ids == g.ids);
    CHECK(decode(tok, ids) == g.decoded);
    exact += ids == g.ids ? 1 : 0;
  }
  CHECK(exact == static_cast<int>(goldens.size()));
}

}  // namespace

TEST_CASE(
    "tokenizer: WordPiece uncased (vocab.txt alone, and tokenizer.json) encodes every golden as BERT does",
    "[tokenizer]") {
  const auto a = from_vocab_txt("wordpiece_uncased");
  const auto b = from_tokenizer_json("wordpiece_uncased");
  CHECK(a == b);  // the two file forms say the same
  check_goldens(a, "wordpiece_uncased.golden");
  check_goldens(b, "wordpiece_uncased.golden");
  Blob blob(a);
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  CHECK(tok.flags() ==
        (attn::kTokLowercase | attn::kTokStripAccents | attn::kTokChineseChars | attn::kTokCleanText));
  CHECK(blob.u32(attn::tok::kFieldMaxWordChars) == 100);
  CHECK(tok.special(attn::SpecialToken::kPad) == 0);
  CHECK(tok.special(attn::SpecialToken::kUnk) == 1);
  CHECK(tok.special(attn::SpecialToken::kCls) == 2);
  CHECK(tok.special(attn::SpecialToken::kSep) == 3);
  CHECK(tok.special(attn::SpecialToken::kMask) == 4);
  CHECK(tok.special(attn::SpecialToken::kBos) == -1);
}

TEST_CASE(
    "tokenizer: WordPiece cased (vocab.txt with tokenizer_config.json, and tokenizer.json) matches its "
    "goldens",
    "[tokenizer]") {
  const auto a = from_vocab_txt("wordpiece_cased");
  const auto b = from_tokenizer_json("wordpiece_cased");
  CHECK(a == b);
  check_goldens(a, "wordpiece_cased.golden");
  Blob blob(b);
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  CHECK(tok.flags() == (attn::kTokChineseChars | attn::kTokCleanText));
}

TEST_CASE(
    "tokenizer: WordPiece lowercase without accent stripping, CJK split or cleaning, 20-character words",
    "[tokenizer]") {
  const auto a = from_tokenizer_json("wordpiece_variant");
  check_goldens(a, "wordpiece_variant.golden");
  Blob blob(a);
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  CHECK(tok.flags() == attn::kTokLowercase);
  CHECK(blob.u32(attn::tok::kFieldMaxWordChars) == 20);
}

TEST_CASE("tokenizer: WordPiece decodes BERT-style and reads ill-formed UTF-8 as U+FFFD", "[tokenizer]") {
  Blob blob(from_vocab_txt("wordpiece_uncased"));
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  const auto id = [&](const char* p) {
    const int32_t i = tok.find_piece(p, std::strlen(p));
    REQUIRE(i >= 0);
    return i;
  };
  // "##x" joins, others get a space unless first, control pieces write
  // nothing (and do not count as first), [UNK] is its text.
  CHECK(decode(tok, {2, id("the"), id("##s"), id("software"), 1, id(","), 3}) == "thes software [UNK] ,");
  CHECK(decode(tok, {id("l"), id("##i"), id("##c")}) == "lic");
  CHECK(decode(tok, {id("##c"), id("the")}) == "c the");
  // A too small buffer: nothing written, then the piece fits.
  attn::TokenizerDecodeState state{};
  char out[8];
  size_t n = 0;
  REQUIRE(tok.decode(id("the"), &state, out, sizeof(out), &n) == Status::kOk);
  CHECK(tok.decode(id("software"), &state, out, 8, &n) == Status::kBufferTooSmall);  // " software": 9
  CHECK(n == 0);
  char out9[9];
  REQUIRE(tok.decode(id("software"), &state, out9, sizeof(out9), &n) == Status::kOk);
  CHECK(std::string(out9, n) == " software");
  // Bytes that start no character: U+FFFD, which cleaning drops.
  std::vector<int32_t> ids;
  REQUIRE(encode(tok, "the\xFF\xC0 software\xE2\x82", &ids) == Status::kOk);
  CHECK(ids == std::vector<int32_t>{id("the"), id("software")});
}

TEST_CASE("tokenizer: WordPiece encode reports a short arena or output, and needs one word of scratch",
          "[tokenizer]") {
  Blob blob(from_vocab_txt("wordpiece_uncased"));
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  // Scratch is one word (4 bytes a character up to 100, and 2), whatever the text.
  CHECK(tok.tokenize_scratch_bytes(10) == tok.tokenize_scratch_bytes(1000000));
  CHECK(tok.tokenize_scratch_bytes(0) <= 4 * 100 + 2 + ATTN_ARENA_ALIGN);
  const std::string text = "the software is provided";
  const size_t scratch = tok.tokenize_scratch_bytes(text.size());
  AlignedBuffer buf(scratch);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, scratch - 1) == Status::kOk);
  std::vector<int32_t> ids(64);
  size_t n = 7;
  CHECK(tok.encode(text.data(), text.size(), ids.data(), ids.size(), &arena, &n) == Status::kArenaTooSmall);
  CHECK(n == 0);
  CHECK(arena.used() == 0);
  REQUIRE(arena.init(buf.data, scratch) == Status::kOk);
  REQUIRE(tok.encode(text.data(), text.size(), ids.data(), ids.size(), &arena, &n) == Status::kOk);
  const size_t need = n;
  CHECK(need == 4);
  CHECK(tok.encode(text.data(), text.size(), ids.data(), need - 1, &arena, &n) == Status::kBufferTooSmall);
  CHECK(n == 0);
  CHECK(tok.encode(text.data(), text.size(), ids.data(), ids.size(), nullptr, &n) == Status::kNullArgument);
  // A word whose pieces would not fit but that ends as one [UNK] does fit:
  // six q ("q", "##q"...) then an unspellable character.
  const std::string bad = "qqqqqq\xD0\x96";
  REQUIRE(tok.encode(bad.data(), bad.size(), ids.data(), 1, &arena, &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(ids[0] == tok.special(attn::SpecialToken::kUnk));
}

TEST_CASE("tokenizer: WordPiece hostile texts (100 KB) encode in milliseconds", "[tokenizer]") {
  Blob blob(from_vocab_txt("wordpiece_uncased"));
  Tokenizer tok;
  REQUIRE(blob.load(&tok) == Status::kOk);
  // One long word; 100-character words spelled one character at a time;
  // punctuation (a word each); sigma runs with case-ignorable marks between
  // (the final-sigma look-ahead); CJK; Hangul (three jamo each); spaces;
  // emoji; combining marks that canonical ordering sorts.
  std::string word99;
  for (int i = 0; i < 99; ++i) word99 += static_cast<char>('a' + (i * 7) % 26);
  for (const std::string unit :
       {std::string("a"), word99 + "q ", std::string(".,"), std::string("A\xCE\xA3\xCC\x81"),
        std::string("\xCE\xA3'"), std::string("\xE4\xB8\xAD"), std::string("\xED\x95\x9C"), std::string(" "),
        std::string("\xF0\x9F\x8E\x89"), std::string("x\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5 ")}) {
    std::string text;
    while (text.size() < 100000) text += unit;
    const size_t scratch = tok.tokenize_scratch_bytes(text.size());
    AlignedBuffer buf(scratch);
    attn::Arena arena;
    REQUIRE(arena.init(buf.data, scratch) == Status::kOk);
    std::vector<int32_t> ids(tok.max_ids(text.size()));
    size_t n = 0;
    double best = 1e30;
    for (int run = 0; run < 3; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      REQUIRE(tok.encode(text.data(), text.size(), ids.data(), ids.size(), &arena, &n) == Status::kOk);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      best = ms < best ? ms : best;
    }
    INFO("unit of " << unit.size() << " bytes: " << best << " ms, " << n << " ids");
    CHECK(best < kHostileTextMs);
    CHECK(n <= text.size());
    WARN("WordPiece hostile text, unit of " << unit.size() << " bytes x " << text.size() / unit.size() << ": "
                                            << best << " ms, " << n << " ids");
  }
}

TEST_CASE("tokenizer: the WordPiece folding tables", "[tokenizer]") {
  uint32_t out[attn::tok::kMaxFold];
  CHECK(attn::tok::fold_lower('A', out) == 1);
  CHECK(out[0] == 'a');
  CHECK(attn::tok::fold_lower(0x130, out) == 2);  // I WITH DOT ABOVE: i + COMBINING DOT ABOVE
  CHECK((out[0] == 0x69 && out[1] == 0x307));
  CHECK(attn::tok::fold_lower(0x3A3, out) == 1);
  CHECK(out[0] == 0x3C3);
  CHECK(attn::tok::fold_lower(0x10400, out) == 1);  // DESERET CAPITAL LONG I
  CHECK(out[0] == 0x10428);
  CHECK(attn::tok::fold_lower(0x1E9E, out) == 1);  // CAPITAL SHARP S
  CHECK(out[0] == 0xDF);
  CHECK(attn::tok::fold_lower('a', out) == 1);
  CHECK(out[0] == 'a');
  CHECK(attn::tok::fold_strip_accents(0xE9, out) == 1);  // e acute
  CHECK(out[0] == 'e');
  CHECK(attn::tok::fold_strip_accents(0x301, out) == 0);   // COMBINING ACUTE
  CHECK(attn::tok::fold_strip_accents(0xD55C, out) == 3);  // Hangul HAN: L V T
  CHECK((out[0] == 0x1112 && out[1] == 0x1161 && out[2] == 0x11AB));
  CHECK(attn::tok::fold_strip_accents(0xF900, out) == 1);  // CJK COMPATIBILITY IDEOGRAPH
  CHECK(out[0] == 0x8C48);
  CHECK(attn::tok::fold_strip_accents(0x9CB, out) == 2);  // BENGALI VOWEL SIGN O
  CHECK(attn::tok::is_cased('A'));
  CHECK(!attn::tok::is_cased('1'));
  CHECK(attn::tok::is_case_ignorable('\''));
  CHECK(attn::tok::is_case_ignorable(0x301));
  CHECK(!attn::tok::is_case_ignorable('a'));
  CHECK(attn::tok::kept_mark_class(0x1D16D) == 226);  // MUSICAL SYMBOL COMBINING AUGMENTATION DOT: Mc
  CHECK(attn::tok::kept_mark_class(0x301) == 0);      // Mn: stripped, not kept
  CHECK(attn::tok::kept_mark_class('a') == 0);
  CHECK(attn::tok::is_nonstarter(0x301));
  CHECK(attn::tok::is_nonstarter(0x1D165));
  CHECK(!attn::tok::is_nonstarter(0x900));  // a Mn of class 0
  CHECK(!attn::tok::is_nonstarter(0xE9));
  CHECK(std::string(attn::tok::fold_unicode_version()) == "14.0.0");
}

TEST_CASE("tokenizer: a corrupted WordPiece blob is refused with its own status", "[tokenizer]") {
  const auto good = from_vocab_txt("wordpiece_uncased");
  struct Case {
    const char* what;
    Status want;
    std::function<void(Blob&)> corrupt;
  };
  const Case cases[] = {
      {"max_input_chars_per_word 0", Status::kBadWordLimit,
       [](Blob& b) { b.set_u32(attn::tok::kFieldMaxWordChars, 0); }},
      {"max_input_chars_per_word over the cap", Status::kBadWordLimit,
       [](Blob& b) { b.set_u32(attn::tok::kFieldMaxWordChars, ATTN_TOKENIZER_MAX_WORD_CHARS + 1); }},
      {"a reserved WordPiece field", Status::kBadReserved,
       [](Blob& b) { b.set_u32(attn::tok::kFieldWordPieceReserved + 8, 1); }},
      {"no unknown token", Status::kBadSpecialToken,
       [](Blob& b) { b.set_u32(attn::tok::kFieldSpecials + 4 * 0, static_cast<uint32_t>(-1)); }},
      {"[CLS] not a control piece", Status::kBadSpecialToken,
       [](Blob& b) { b.bytes()[b.u32(attn::tok::kFieldTypesOff) + 2] = 0; }},
      {"a SentencePiece flag", Status::kUnknownFlags,
       [](Blob& b) {
         b.set_u32(attn::tok::kFieldFlags, b.u32(attn::tok::kFieldFlags) | attn::kTokAddDummyPrefix);
       }},
      {"an unknown flag", Status::kUnknownFlags,
       [](Blob& b) { b.set_u32(attn::tok::kFieldFlags, b.u32(attn::tok::kFieldFlags) | (1u << 12)); }},
      {"another algorithm with WordPiece flags", Status::kUnknownFlags,
       [](Blob& b) {
         b.set_u32(attn::tok::kFieldAlgorithm,
                   static_cast<uint32_t>(attn::TokenizerAlgorithm::kSentencePieceBpe));
         b.set_u32(attn::tok::kFieldMaxWordChars, 0);
       }},
      {"another algorithm with max_input_chars_per_word", Status::kBadReserved,
       [](Blob& b) {
         b.set_u32(attn::tok::kFieldAlgorithm, static_cast<uint32_t>(attn::TokenizerAlgorithm::kBytes));
       }},
      {"unsorted index", Status::kUnsortedPieces,
       [](Blob& b) {
         const uint32_t at = b.u32(attn::tok::kFieldSortedOff);
         const uint32_t x = b.u32(at);
         b.set_u32(at, b.u32(at + 4));
         b.set_u32(at + 4, x);
       }},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    Blob blob(good);
    c.corrupt(blob);
    Tokenizer tok;
    CHECK(blob.load(&tok) == c.want);
  }
  // Scores or byte pieces mean nothing to WordPiece: refused.
  tb::Spec spec = attn::cli::read_wordpiece_vocab(data_path("wordpiece_uncased/vocab.txt"));
  tb::Spec scored = spec;
  scored.scores.assign(spec.pieces.size(), 0.0f);
  Tokenizer tok;
  Blob b1(blob_of(scored));
  CHECK(b1.load(&tok) == Status::kBadScore);
  tb::Spec bytes = spec;
  bytes.pieces.push_back("<0x41>");
  bytes.types.push_back(attn::PieceType::kByte);
  Blob b2(blob_of(bytes));
  CHECK(b2.load(&tok) == Status::kBadByteTable);
  // The untouched blob loads.
  Blob b3(good);
  CHECK(b3.load(&tok) == Status::kOk);
}

TEST_CASE("tokenizer: the WordPiece builder and readers refuse what the run time does not do",
          "[tokenizer]") {
  tb::Spec spec;
  std::string error;
  tb::WordPieceOptions opt;
  CHECK(!tb::spec_from_wordpiece({"a", "b"}, opt, &spec, &error));  // no [UNK]
  CHECK(error.find("[UNK]") != std::string::npos);
  CHECK(!tb::spec_from_wordpiece({"[UNK]", "a", "a"}, opt, &spec, &error));
  CHECK(error.find("twice") != std::string::npos);
  opt.max_input_chars_per_word = 0;
  CHECK(!tb::spec_from_wordpiece({"[UNK]", "a"}, opt, &spec, &error));
  opt.max_input_chars_per_word = 100;
  REQUIRE(tb::spec_from_wordpiece({"[UNK]", "a", "[CLS]"}, opt, &spec, &error));
  CHECK(spec.types[2] == attn::PieceType::kControl);
  CHECK(spec.specials[static_cast<size_t>(attn::SpecialToken::kCls)] == 2);

  const std::string path = data_path("wordpiece_uncased/tokenizer.json");
  const std::string good = read_text(path);
  const auto refuses = [&](const std::string& from, const std::string& to, const char* why) {
    std::string doc = good;
    const size_t at = doc.find(from);
    REQUIRE(at != std::string::npos);
    doc.replace(at, from.size(), to);
    INFO(why);
    CHECK_THROWS_AS(attn::cli::read_wordpiece_json(attn::json::parse(doc), path), attn::cli::Error);
  };
  refuses("\"continuing_subword_prefix\": \"##\"", "\"continuing_subword_prefix\": \"@@\"", "another prefix");
  refuses("\"type\": \"BertNormalizer\"", "\"type\": \"NFC\"", "another normalizer");
  refuses("\"type\": \"BertPreTokenizer\"", "\"type\": \"Whitespace\"", "another pre-tokenizer");
  refuses("\"type\": \"WordPiece\",\n    \"unk_token\"", "\"type\": \"BPE\",\n    \"unk_token\"",
          "another model");
  refuses("\"max_input_chars_per_word\": 100", "\"max_input_chars_per_word\": 0", "no characters");
  refuses("\"[PAD]\": 0", "\"[PAD]\": 7", "an id twice");
  refuses("\"special\": true", "\"special\": false", "an added token that is not special");
}

TEST_CASE("tokenizer: the C API runs a WordPiece blob: every uncased golden, decoded", "[tokenizer]") {
  Blob blob(from_vocab_txt("wordpiece_uncased"));
  attn_tokenizer tok;
  REQUIRE(attn_tokenizer_load(&tok, blob.words.data(), blob.size) == ATTN_OK);
  int32_t cls = -1;
  REQUIRE(attn_tokenizer_special(&tok, ATTN_TOKEN_CLS, &cls) == ATTN_OK);
  CHECK(cls == 2);
  for (const auto& g : read_golden("wordpiece_uncased.golden")) {
    INFO("'" << g.text << "'");
    size_t scratch = 0;
    size_t max_ids = 0;
    REQUIRE(attn_tokenizer_sizes(&tok, g.text.size(), &scratch, &max_ids) == ATTN_OK);
    AlignedBuffer buf(scratch);
    std::vector<int32_t> ids(max_ids + 1);
    size_t n = 0;
    REQUIRE(attn_tokenizer_encode(&tok, g.text.data(), g.text.size(), ids.data(), max_ids, buf.data, scratch,
                                  &n) == ATTN_OK);
    ids.resize(n);
    CHECK(ids == g.ids);
    attn_tokenizer_decode_state state{};
    std::string text;
    char out[300];
    for (const int32_t id : ids) {
      size_t w = 0;
      REQUIRE(attn_tokenizer_decode(&tok, id, &state, out, sizeof(out), &w) == ATTN_OK);
      text.append(out, w);
    }
    CHECK(text == g.decoded);
  }
  // A corrupted word limit: the C status.
  blob.set_u32(attn::tok::kFieldMaxWordChars, 0);
  CHECK(attn_tokenizer_load(&tok, blob.words.data(), blob.size) == ATTN_ERR_BAD_WORD_LIMIT);
}
