// json_reader_test.cpp: the JSON reader of the tools (tools/cli/json.h, and
// the safetensors header's lexer built on it) keeps RFC 8259's grammar:
// numbers without '+', leading zeros, bare '.', or NUL bytes; no lone
// surrogates; nothing after the value.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../tools/cli/json.h"
#include "../tools/cli/safetensors.h"

namespace {

std::string error_of(const std::string& text) {
  try {
    attn::json::parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> header_file(const std::string& h) {
  std::vector<uint8_t> b(8 + h.size() + 8, 0);
  const uint64_t n = h.size();
  std::memcpy(b.data(), &n, 8);
  std::memcpy(b.data() + 8, h.data(), h.size());
  return b;
}

}  // namespace

TEST_CASE("json: numbers as RFC 8259 spells them, and nothing else", "[json]") {
  for (const char* good : {"0", "-0", "7", "-12", "1.5", "0.25e-3", "1E+2", "6e7", "-0.0E0", "1e400"}) {
    INFO(good);
    const attn::json::Value v = attn::json::parse(std::string("{\"a\":") + good + "}");
    REQUIRE(v.find("a") != nullptr);
    CHECK(v.find("a")->type == attn::json::Value::Type::kNumber);
    CHECK(v.find("a")->text == good);
  }
  const std::string nul_inside("{\"a\":1\0 }", 9);
  const std::string nul_digits(
      "[16\0"
      "0]",
      7);
  for (const std::string& bad : {std::string("{\"a\":+16}"),
                                 std::string("{\"a\":016}"),
                                 std::string("[-016]"),
                                 std::string("[00]"),
                                 std::string("[1.]"),
                                 std::string("[.5]"),
                                 std::string("[-.5]"),
                                 std::string("[1e]"),
                                 std::string("[1e+]"),
                                 std::string("[-]"),
                                 std::string("[--1]"),
                                 std::string("[1-2]"),
                                 std::string("[0x10]"),
                                 std::string("[Infinity]"),
                                 std::string("[NaN]"),
                                 std::string("[1.5.5]"),
                                 std::string("[1e5e5]"),
                                 std::string("[truex]"),
                                 std::string("[nul]"),
                                 nul_inside,
                                 nul_digits}) {
    INFO(std::string(bad.c_str()) << " (" << bad.size() << " bytes)");
    CHECK(error_of(bad).find("bad JSON at byte") == 0);
  }
  CHECK(error_of("{\"a\":016}").find("leading zero") != std::string::npos);
  CHECK(error_of("[1.]").find("after '.'") != std::string::npos);
  // Literals and strings.
  const attn::json::Value v = attn::json::parse("[true, false, null, \"\\u00e9\\ud83d\\ude00\"]");
  REQUIRE(v.items.size() == 4);
  CHECK(v.items[0].boolean);
  CHECK(v.items[1].type == attn::json::Value::Type::kBool);
  CHECK(!v.items[1].boolean);
  CHECK(v.items[2].type == attn::json::Value::Type::kNull);
  CHECK(v.items[3].text == "\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(error_of("[\"\\udc00\"]").find("lone surrogate") != std::string::npos);
  CHECK(error_of("[\"\\ud800x\"]").find("lone surrogate") != std::string::npos);
}

TEST_CASE("json: a safetensors header's integers and skipped values keep the same grammar", "[json]") {
  const auto error_of_header = [](const std::string& h) -> std::string {
    try {
      attn::safetensors::parse(header_file(h));
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  const std::string ok =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"__metadata__\":%M}";
  const auto with = [&](const std::string& m) {
    std::string h = ok;
    h.replace(h.find("%M"), 2, m);
    return h;
  };
  CHECK(error_of_header(with("{\"format\":\"pt\",\"n\":[1,-2.5e3,true,null]}")).empty());
  for (const std::string m : {"{\"n\":+1}", "{\"n\":01}", "{\"n\":1.}", "{\"n\":xyz}", "{\"n\":tru}"}) {
    INFO(m);
    CHECK(error_of_header(with(m)).find("bad JSON header at byte") == 0);
  }
  for (const std::string d : {"+2", "02", "2.0", "2e0"}) {
    INFO(d);
    CHECK(error_of_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[" + d + "],\"data_offsets\":[0,8]}}")
              .find("bad JSON header at byte") == 0);
  }
  CHECK(error_of_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[00,8]}}")
            .find("leading zero") != std::string::npos);
}
