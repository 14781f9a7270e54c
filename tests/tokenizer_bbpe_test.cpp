// Byte-level BPE (GPT-2, Qwen2; attn/tokenizer.h kByteLevelBpe): the golden
// encodings of tools/tokenizer/gen_bbpe_goldens.py's reference through the
// blob built from each file form (vocab.json + merges.txt, tokenizer.json
// with GPT-2's and Qwen2's pre-tokenizers), decoding back to the bytes,
// hostile-input time bounds, and every malformed blob's status.
#include <algorithm>
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
#include "tokenizer/utf8.h"
#include "tokenizer_helpers.h"

using attn::Status;
using attn::Tokenizer;
namespace tb = attn::tokenizer_build;
using namespace tokenizer_tests;

namespace {

tb::Spec json_spec(const std::string& name) {
  const auto root = attn::json::parse(read_text(data_path(name)));
  return attn::cli::read_byte_level_bpe_json(root, name);
}

std::vector<uint8_t> files_blob() {
  return blob_of(
      attn::cli::read_byte_level_bpe_files(data_path("bbpe_vocab.json"), data_path("bbpe_merges.txt")));
}
std::vector<uint8_t> gpt2_json_blob() { return blob_of(json_spec("bbpe_gpt2.tokenizer.json")); }
std::vector<uint8_t> qwen2_json_blob() { return blob_of(json_spec("bbpe_qwen2.tokenizer.json")); }
std::vector<uint8_t> llama3_json_blob() { return blob_of(json_spec("bbpe_llama3.tokenizer.json")); }

// The pieces' raw bytes, concatenated.
std::string raw(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::string s;
  for (const int32_t id : ids) {
    const char* p = nullptr;
    size_t len = 0;
    REQUIRE(tok.piece(id, &p, &len, nullptr) == Status::kOk);
    s.append(p, len);
  }
  return s;
}

void check_goldens(const std::vector<uint8_t>& bytes, const std::string& golden_name, bool prefix) {
  Blob blob(bytes);
  Tokenizer tok;
  REQUIRE(Tokenizer::load(blob.words.data(), blob.size, &tok) == Status::kOk);
  CHECK(tok.algorithm() == attn::TokenizerAlgorithm::kByteLevelBpe);
  const auto goldens = read_golden(golden_name);
  REQUIRE(goldens.size() >= 100);
  int exact = 0;
  for (const auto& g : goldens) {
    INFO(golden_name << ": '" << g.text << "'");
    std::vector<int32_t> ids;
    REQUIRE(encode(tok, g.text, &ids) == Status::kOk);
    CHECK(ids == g.ids);
    exact += ids == g.ids ? 1 : 0;
    const std::string want = prefix && !g.text.empty() && g.text[0] != ' ' ? " " + g.text : g.text;
    CHECK(raw(tok, ids) == want);
    if (valid_utf8(want)) CHECK(decode(tok, ids) == want);
  }
  CHECK(exact == static_cast<int>(goldens.size()));
}

}  // namespace

TEST_CASE("tokenizer bbpe: vocab.json + merges.txt encode every golden line with GPT-2's split",
          "[tokenizer]") {
  check_goldens(files_blob(), "bbpe_gpt2.golden", false);
}

TEST_CASE("tokenizer bbpe: a GPT-2 tokenizer.json (ByteLevel, add_prefix_space) encodes every golden line",
          "[tokenizer]") {
  check_goldens(gpt2_json_blob(), "bbpe_gpt2_prefix.golden", true);
}

TEST_CASE("tokenizer bbpe: a Qwen2 tokenizer.json (Split + ByteLevel) encodes every golden line",
          "[tokenizer]") {
  check_goldens(qwen2_json_blob(), "bbpe_qwen2.golden", false);
}

TEST_CASE(
    "tokenizer bbpe: a Llama 3 tokenizer.json (digits by three, ignore_merges) encodes every golden line",
    "[tokenizer]") {
  check_goldens(llama3_json_blob(), "bbpe_llama3.golden", false);
  // Its two whole pieces no merge makes: found whole, not merged up to.
  Blob blob(llama3_json_blob());
  Tokenizer tok;
  REQUIRE(Tokenizer::load(blob.words.data(), blob.size, &tok) == Status::kOk);
  std::vector<int32_t> ids;
  REQUIRE(encode(tok, "a xyzzy", &ids) == Status::kOk);
  CHECK(ids == std::vector<int32_t>{tok.find_piece("a", 1), 1256});
}

TEST_CASE("tokenizer bbpe: the file forms agree on pieces, merges and specials", "[tokenizer]") {
  Blob a(files_blob());
  Blob b(gpt2_json_blob());
  Blob q(qwen2_json_blob());
  Tokenizer ta, tb_, tq;
  REQUIRE(Tokenizer::load(a.words.data(), a.size, &ta) == Status::kOk);
  REQUIRE(Tokenizer::load(b.words.data(), b.size, &tb_) == Status::kOk);
  REQUIRE(Tokenizer::load(q.words.data(), q.size, &tq) == Status::kOk);
  CHECK(ta.vocab_size() == 1257);
  CHECK(tb_.vocab_size() == 1257);
  CHECK(tq.vocab_size() == 1259);  // <|endoftext|>, <|im_start|>, <|im_end|> after the 1256
  const int32_t eot = ta.special(attn::SpecialToken::kEos);
  REQUIRE(eot == 1256);
  CHECK(tq.special(attn::SpecialToken::kEos) == 1256);
  const char* p = nullptr;
  size_t len = 0;
  attn::PieceType type{};
  REQUIRE(ta.piece(eot, &p, &len, &type) == Status::kOk);
  CHECK(std::string(p, len) == "<|endoftext|>");
  CHECK(type == attn::PieceType::kControl);
  // Control pieces are never matched in the text, and decode to nothing.
  std::vector<int32_t> ids;
  REQUIRE(encode(tq, "<|im_end|>", &ids) == Status::kOk);
  CHECK(ids.size() > 1);
  CHECK(decode(tq, {1258, eot}).empty());
  // Pieces are raw bytes: ' ' (GPT-2's "\u0120") is the one byte 0x20.
  CHECK(ta.find_piece(" ", 1) >= 0);
  CHECK(ta.find_piece("\xC4\xA0", 2) < 0);
  // vocab.json + merges.txt and the GPT-2 tokenizer.json: the same blob but
  // for add_prefix_space.
  CHECK(b.u32(attn::tok::kFieldByteLevelSplit) ==
        (a.u32(attn::tok::kFieldByteLevelSplit) | attn::tok::kByteLevelAddPrefixSpace));
  b.set_u32(attn::tok::kFieldByteLevelSplit, a.u32(attn::tok::kFieldByteLevelSplit));
  REQUIRE(a.size == b.size);
  CHECK(std::memcmp(a.bytes(), b.bytes(), a.size) == 0);
}

TEST_CASE("tokenizer bbpe: decode reassembles a character split across pieces", "[tokenizer]") {
  Blob blob(files_blob());
  Tokenizer tok;
  REQUIRE(Tokenizer::load(blob.words.data(), blob.size, &tok) == Status::kOk);
  const std::string text = "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x91\x8D";  // CJK and an emoji: byte pieces
  std::vector<int32_t> ids;
  REQUIRE(encode(tok, text, &ids) == Status::kOk);
  CHECK(ids.size() > 4);
  CHECK(decode(tok, ids) == text);
  // Byte by byte into a 3-byte buffer: a short buffer leaves the state as it was.
  attn::TokenizerDecodeState st{};
  std::string out;
  for (const int32_t id : ids) {
    char buf[4];
    size_t n = 0;
    REQUIRE(tok.decode(id, &st, buf, sizeof(buf), &n) == Status::kOk);
    out.append(buf, n);
  }
  CHECK(out == text);
  // An unfinished character at the end becomes U+FFFD per byte.
  st = attn::TokenizerDecodeState{};
  char buf[16];
  size_t n = 0;
  REQUIRE(tok.decode(tok.find_piece("\xE6", 1), &st, buf, sizeof(buf), &n) == Status::kOk);
  CHECK(n == 0);
  REQUIRE(tok.decode(tok.find_piece("\x97", 1), &st, buf, sizeof(buf), &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(tok.decode(tok.find_piece("a", 1), &st, buf, 6, &n) == Status::kBufferTooSmall);
  REQUIRE(tok.decode(tok.find_piece("a", 1), &st, buf, sizeof(buf), &n) == Status::kOk);
  CHECK(std::string(buf, n) ==
        "\xEF\xBF\xBD\xEF\xBF\xBD"
        "a");
}

TEST_CASE("tokenizer: max_decode_bytes holds every piece after any unfinished character", "[tokenizer]") {
  // Byte-level pieces are raw bytes: a piece of continuation bytes after
  // three pending bytes writes 3 replacement bytes per byte. For every piece
  // of every algorithm's blob, from a fresh state and from each pending
  // length, one decode (and a flush after it) fits max_decode_bytes().
  const std::vector<std::vector<uint8_t>> blobs = {files_blob(), qwen2_json_blob(), llama3_json_blob()};
  for (const auto& bytes : blobs) {
    Blob blob(bytes);
    Tokenizer tok;
    REQUIRE(blob.load(&tok) == Status::kOk);
    const size_t cap = tok.max_decode_bytes();
    std::vector<char> out(cap);
    size_t worst = 0;
    for (int32_t id = 0; id < tok.vocab_size(); ++id) {
      for (uint8_t pending = 0; pending < 4; ++pending) {
        attn::TokenizerDecodeState st{};
        const uint8_t lead[3] = {0xF0, 0x9F, 0x98};  // a 4-byte character, unfinished
        std::memcpy(st.pending, lead, pending);
        st.pending_len = pending;
        st.pending_need = pending > 0 ? 4 : 0;
        st.started = 1;
        size_t n = 0;
        REQUIRE(tok.decode(id, &st, out.data(), cap, &n) == Status::kOk);
        worst = std::max(worst, n);
        REQUIRE(tok.decode_flush(&st, out.data(), cap, &n) == Status::kOk);
      }
    }
    CHECK(worst <= cap);
    CHECK(worst > 0);
  }
}

TEST_CASE("tokenizer bbpe: encode names a short output and a short arena", "[tokenizer]") {
  Blob blob(qwen2_json_blob());
  Tokenizer tok;
  REQUIRE(Tokenizer::load(blob.words.data(), blob.size, &tok) == Status::kOk);
  const std::string text = "Licensed under the Apache License, Version 2.0 \xF0\x9F\x8E\x89\n\n";
  std::vector<int32_t> ids;
  REQUIRE(encode(tok, text, &ids) == Status::kOk);
  const size_t need = ids.size();
  const size_t scratch = tok.tokenize_scratch_bytes(text.size());
  AlignedBuffer buf(scratch);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, scratch) == Status::kOk);
  std::vector<int32_t> out(need);
  size_t n = 99;
  CHECK(tok.encode(text.data(), text.size(), out.data(), need - 1, &arena, &n) == Status::kBufferTooSmall);
  CHECK(n == 0);
  CHECK(arena.used() == 0);
  CHECK(tok.encode(text.data(), text.size(), out.data(), need, &arena, &n) == Status::kOk);
  CHECK(n == need);
  attn::Arena small;
  REQUIRE(small.init(buf.data, scratch - 16) == Status::kOk);
  CHECK(tok.encode(text.data(), text.size(), out.data(), need, &small, &n) == Status::kArenaTooSmall);
  CHECK(small.used() == 0);
  CHECK(tok.encode(text.data(), text.size(), out.data(), need, nullptr, &n) == Status::kNullArgument);
  CHECK(tok.encode("", 0, out.data(), need, &arena, &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(tok.max_ids(text.size()) == text.size());
}

TEST_CASE(
    "tokenizer bbpe: hostile texts (100 KB of one character, two alternating, white space) in milliseconds",
    "[tokenizer]") {
  for (int form = 0; form < 2; ++form) {
    Blob blob(form == 0 ? files_blob() : qwen2_json_blob());
    Tokenizer tok;
    REQUIRE(Tokenizer::load(blob.words.data(), blob.size, &tok) == Status::kOk);
    for (const char* unit : {"a", "ab", " ", "\n ", " \n", "7", "\xF0\x9F\x8E\x89", "'s", "\xE4\xB8\xAD"}) {
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
      ids.resize(n);
      INFO((form == 0 ? "GPT-2" : "Qwen2") << " unit '" << unit << "': " << best << " ms, " << n << " ids");
      CHECK(best < kHostileTextMs);  // a quadratic split or merge loop takes seconds here
      CHECK(decode(tok, ids) == text);
      WARN("byte-level " << (form == 0 ? "GPT-2" : "Qwen2") << " hostile text '" << unit << "' x "
                         << text.size() / std::strlen(unit) << ": " << best << " ms, " << n << " ids");
    }
  }
}

// ------------------------------------------------------ malformed blobs ---

namespace {

Status load_mutated(const std::vector<uint8_t>& bytes, const std::function<void(Blob&)>& mutate) {
  Blob blob(bytes);
  mutate(blob);
  Tokenizer tok;
  return Tokenizer::load(blob.words.data(), blob.size, &tok);
}

}  // namespace

TEST_CASE("tokenizer bbpe: every malformed byte-level blob gets its own status", "[tokenizer]") {
  using namespace attn::tok;
  const auto good = files_blob();
  CHECK(load_mutated(good, [](Blob&) {}) == Status::kOk);
  auto merge_at = [](const Blob& b, uint32_t rank, uint32_t k) {
    return b.u32(kFieldMergesOff) + 12 * rank + 4 * k;
  };
  auto index_at = [](const Blob& b, uint32_t i) { return b.u32(kFieldMergeIndexOff) + 4 * i; };
  struct Case {
    const char* name;
    Status want;
    std::function<void(Blob&)> mutate;
  };
  const std::vector<Case> cases = {
      {"merge result not left + right", Status::kBadMerges,
       [&](Blob& b) { b.set_u32(merge_at(b, 5, 2), b.u32(merge_at(b, 6, 2))); }},
      {"merge left out of range", Status::kBadMerges, [&](Blob& b) { b.set_u32(merge_at(b, 0, 0), 99999); }},
      {"merge right negative", Status::kBadMerges,
       [&](Blob& b) { b.set_u32(merge_at(b, 3, 1), 0xFFFFFFFFu); }},
      {"merge of a control piece", Status::kBadMerges, [&](Blob& b) { b.set_u32(merge_at(b, 3, 0), 1256); }},
      {"merge index out of order", Status::kUnsortedMerges,
       [&](Blob& b) {
         const uint32_t x = b.u32(index_at(b, 10));
         b.set_u32(index_at(b, 10), b.u32(index_at(b, 11)));
         b.set_u32(index_at(b, 11), x);
       }},
      {"merge index repeats a rank", Status::kUnsortedMerges,
       [&](Blob& b) { b.set_u32(index_at(b, 11), b.u32(index_at(b, 10))); }},
      {"merge index rank out of range", Status::kUnsortedMerges,
       [&](Blob& b) { b.set_u32(index_at(b, 0), b.u32(kFieldMergeCount)); }},
      {"merge count past the blob", Status::kOffsetOutOfBounds,
       [&](Blob& b) { b.set_u32(kFieldMergeCount, 1u << 24); }},
      {"merges offset past the blob", Status::kOffsetOutOfBounds,
       [&](Blob& b) { b.set_u32(kFieldMergesOff, static_cast<uint32_t>(b.size)); }},
      {"merges offset inside the header", Status::kOffsetOutOfBounds,
       [&](Blob& b) { b.set_u32(kFieldMergesOff, 0); }},
      {"merge index misaligned", Status::kTableMisaligned,
       [&](Blob& b) { b.set_u32(kFieldMergeIndexOff, b.u32(kFieldMergeIndexOff) + 2); }},
      {"split unknown", Status::kBadPreTokenizer, [&](Blob& b) { b.set_u32(kFieldByteLevelSplit, 7); }},
      {"split none", Status::kBadPreTokenizer, [&](Blob& b) { b.set_u32(kFieldByteLevelSplit, 0); }},
      {"split option bit unknown", Status::kBadPreTokenizer,
       [&](Blob& b) { b.set_u32(kFieldByteLevelSplit, b.u32(kFieldByteLevelSplit) | (1u << 10)); }},
      {"normalization flags", Status::kUnknownFlags,
       [&](Blob& b) { b.set_u32(kFieldFlags, attn::kTokAddDummyPrefix); }},
      {"byte table names a longer piece", Status::kBadByteTable,
       [&](Blob& b) { b.set_u32(b.u32(kFieldByteIdsOff) + 4 * 'a', 300); }},
      {"byte table names another byte", Status::kBadByteTable,
       [&](Blob& b) {
         b.set_u32(b.u32(kFieldByteIdsOff) + 4 * 'a', b.u32(b.u32(kFieldByteIdsOff) + 4 * 'b'));
       }},
      {"byte table entry missing", Status::kBadByteTable,
       [&](Blob& b) { b.set_u32(b.u32(kFieldByteIdsOff) + 4 * 'a', 0xFFFFFFFFu); }},
      {"no byte table", Status::kBadByteTable, [&](Blob& b) { b.set_u32(kFieldByteIdsOff, 0); }},
      {"a byte piece", Status::kBadPieceType,
       [&](Blob& b) { b.bytes()[b.u32(kFieldTypesOff) + 7] = static_cast<uint8_t>(attn::PieceType::kByte); }},
      {"an unknown piece", Status::kBadPieceType,
       [&](Blob& b) {
         b.bytes()[b.u32(kFieldTypesOff) + 7] = static_cast<uint8_t>(attn::PieceType::kUnknown);
       }},
      {"WordPiece fields set", Status::kBadReserved, [&](Blob& b) { b.set_u32(kFieldWordPieceFirst, 1); }},
      {"algorithm WordPiece with byte-level fields", Status::kBadReserved,
       [&](Blob& b) { b.set_u32(kFieldAlgorithm, 3); }},
      {"algorithm SentencePiece with byte-level fields", Status::kBadReserved,
       [&](Blob& b) { b.set_u32(kFieldAlgorithm, 1); }},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(load_mutated(good, c.mutate) == c.want);
  }
}

TEST_CASE("tokenizer bbpe: the builder and the file readers refuse what the run time would not encode",
          "[tokenizer]") {
  // The builder: a byte missing.
  {
    tb::Spec spec;
    std::string error;
    const std::vector<std::pair<std::string, std::string>> none;
    CHECK_FALSE(tb::spec_from_byte_level_bpe({"a", "b"}, none, {}, {}, &spec, &error));
    CHECK(error.find("no piece for byte") != std::string::npos);
  }
  const auto root = attn::json::parse(read_text(data_path("bbpe_qwen2.tokenizer.json")));
  auto refused = [&](const std::function<void(attn::json::Value&)>& edit, const char* words) {
    attn::json::Value r = root;
    edit(r);
    std::string what;
    try {
      attn::cli::read_byte_level_bpe_json(r, "t.json");
    } catch (const attn::cli::Error& e) {
      what = e.what();
    }
    INFO(what);
    CHECK(what.find(words) != std::string::npos);
  };
  auto member = [](attn::json::Value& v, const char* key) -> attn::json::Value& {
    for (auto& m : v.members) {
      if (m.first == key) return m.second;
    }
    FAIL("no member " << key);
    return v;
  };
  refused([&](attn::json::Value& r) { member(member(r, "model"), "type").text = "WordPiece"; }, "BPE");
  refused(
      [&](attn::json::Value& r) {
        auto& bf = member(member(r, "model"), "byte_fallback");
        bf.type = attn::json::Value::Type::kBool;
        bf.boolean = true;
      },
      "byte_fallback");
  refused(
      [&](attn::json::Value& r) {
        auto& split = member(r, "pre_tokenizer");
        member(member(member(split, "pretokenizers").items[0], "pattern"), "Regex").text = "\\p{N}{1,3}";
      },
      "not GPT-2's, Qwen2's or Llama 3's");
  refused([&](attn::json::Value& r) { member(member(r, "pre_tokenizer"), "type").text = "Whitespace"; },
          "pre_tokenizer");
  refused(
      [&](attn::json::Value& r) {
        auto& merges = member(member(r, "model"), "merges");
        merges.items[0].items[1].text = "\xE2\x82\xAC";  // not a GPT-2 byte character, not in the vocabulary
      },
      "merge 0");
  refused(
      [&](attn::json::Value& r) {
        attn::json::Value norm;
        norm.type = attn::json::Value::Type::kObject;
        attn::json::Value t;
        t.type = attn::json::Value::Type::kString;
        t.text = "NFKC";
        norm.members.emplace_back("type", t);
        member(r, "normalizer") = norm;
      },
      "normalizer");
}

TEST_CASE("tokenizer bbpe C API: load, sizes, encode and decode agree with the goldens", "[tokenizer]") {
  Blob blob(qwen2_json_blob());
  attn_tokenizer tok;
  REQUIRE(attn_tokenizer_load(&tok, blob.words.data(), blob.size) == ATTN_OK);
  int32_t v = 0;
  REQUIRE(attn_tokenizer_vocab_size(&tok, &v) == ATTN_OK);
  CHECK(v == 1259);
  int32_t eos = 0;
  REQUIRE(attn_tokenizer_special(&tok, ATTN_TOKEN_EOS, &eos) == ATTN_OK);
  CHECK(eos == 1256);
  for (const auto& g : read_golden("bbpe_qwen2.golden")) {
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
    if (!valid_utf8(g.text)) continue;
    attn_tokenizer_decode_state state = {};
    std::string text;
    size_t cap = 0;  // exactly the bound the tokenizer gives
    REQUIRE(attn_tokenizer_max_decode_bytes(&tok, &cap) == ATTN_OK);
    std::vector<char> out(cap);
    for (const int32_t id : ids) {
      REQUIRE(attn_tokenizer_decode(&tok, id, &state, out.data(), cap, &n) == ATTN_OK);
      text.append(out.data(), n);
    }
    REQUIRE(attn_tokenizer_decode_flush(&tok, &state, out.data(), cap, &n) == ATTN_OK);
    text.append(out.data(), n);
    CHECK(text == g.text);
  }
  blob.set_u32(attn::tok::kFieldByteLevelSplit, 9);
  CHECK(attn_tokenizer_load(&tok, blob.words.data(), blob.size) == ATTN_ERR_BAD_PRE_TOKENIZER);
  CHECK(attn_tokenizer_vocab_size(&tok, &v) == ATTN_ERR_BAD_HANDLE);
}
