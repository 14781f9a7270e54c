// The integer model fixtures (tests/data/int_models, int_model_fixture.h):
// whole s8/s16 encoders and decoders whose forward outputs and greedy
// generations the host's ref build computed. Every build runs them with its
// own kernels (x86 AVX2 / AVX-512 VNNI, NEON, dotprod under qemu-user) and
// must give the same bytes; the Cortex-M conformance image runs the same
// check() on every board.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "int_model_fixtures_host.h"

using namespace int_fixture;

namespace {

const std::string kData = ATTN_TEST_DATA_DIR;

std::string describe(const Report& r) {
  std::string s = std::string(r.what ? r.what : "-") + " status " + attn::status_name(r.status);
  if (r.index >= 0) {
    s += " element " + std::to_string(r.index) + ": got " + std::to_string(r.got) + ", want " +
         std::to_string(r.want);
  }
  return s;
}

// Loads the fixture's model and expected file; runs check().
Report run_check(const Spec& s, std::vector<uint8_t> expect_bytes) {
  const AlignedBytes blob(read_file(kData + "/" + s.model));
  const AlignedBytes expect(expect_bytes);
  static Model m;
  m = Model();
  REQUIRE(load(blob.data(), blob.size, &m) == attn::Status::kOk);
  Expect e;
  REQUIRE(parse_expect(expect.data(), expect.size, &e));
  std::vector<int32_t> out(size_t(e.n) * size_t(e.output_dim) + size_t(m.vocab()) + size_t(e.steps));
  HostMemory hm(1 << 20);
  Report r;
  check(m, e, out.data(), out.size(), hm.mem, &r);
  // The calls took their planned bytes from the start of the memory (none
  // when the expected file is not this model's).
  CHECK((hm.mem.used > 0) == (r.what == nullptr || std::string(r.what) != "expect"));
  CHECK(hm.mem.used < hm.mem.size);
  return r;
}

}  // namespace

TEST_CASE("integer model fixtures: the committed expected files are what this build computes",
          "[int_model_fixtures]") {
  const std::vector<Spec> specs = read_manifest(kData);
  REQUIRE(specs.size() >= 6);
  for (const Spec& s : specs) {
    INFO(s.name);
    const std::vector<uint8_t> model = read_file(kData + "/" + s.model);
    CHECK(model.size() <= 14 * 1024);  // small: every board image embeds every fixture
    // The generator's own function: in the host-ref build this is the
    // regeneration (ref kernels); elsewhere this build's kernels must agree.
    CHECK(make_expect(s, model) == read_file(expect_path(kData, s)));
  }
}

TEST_CASE("integer model fixtures: forward, decode == forward, greedy generation", "[int_model_fixtures]") {
  int decoders = 0, encoders = 0, s8 = 0, s16 = 0, tied = 0, untied = 0;
  for (const Spec& s : read_manifest(kData)) {
    INFO(s.name);
    const Report r = run_check(s, read_file(expect_path(kData, s)));
    INFO(describe(r));
    CHECK(r.failures == 0);
    // What the fixtures cover: checked here so that a manifest edit cannot drop it.
    const AlignedBytes blob(read_file(kData + "/" + s.model));
    attn::Model m;
    REQUIRE(attn::Model::load(blob.data(), blob.size, &m) == attn::Status::kOk);
    attn::TransformerConfig c;
    REQUIRE(m.transformer_config(&c) == attn::Status::kOk);
    attn::format::ModelRecord rec;
    REQUIRE(m.model_record(&rec) == attn::Status::kOk);
    (c.causal ? decoders : encoders) += 1;
    (rec.dtype == uint16_t(attn::DType::kS8) ? s8 : s16) += 1;
    tied += c.head == attn::LmHead::kTied ? 1 : 0;
    untied += c.head == attn::LmHead::kUntied ? 1 : 0;
    CHECK(r.checks == (c.causal ? 4 : 2));  // forward, [decode, generation,] the C handle in two buffers
  }
  CHECK(decoders >= 2);
  CHECK(encoders >= 2);
  CHECK(s8 >= 2);
  CHECK(s16 >= 2);
  CHECK(tied >= 1);
  CHECK(untied >= 1);
}

// The check must be able to fail: one changed output word, one changed
// generated token, a file of another model.
TEST_CASE("integer model fixtures: check() catches a changed expected value", "[int_model_fixtures]") {
  for (const Spec& s : read_manifest(kData)) {
    if (s.steps == 0) continue;
    INFO(s.name);
    const std::vector<uint8_t> good = read_file(expect_path(kData, s));
    Expect e;
    const AlignedBytes a(good);
    REQUIRE(parse_expect(a.data(), a.size, &e));
    const size_t out_word = size_t(kHeaderWords + e.n) + size_t(e.n) * size_t(e.output_dim) - 3;
    const size_t gen_word =
        size_t(kHeaderWords + e.n) + size_t(e.n) * size_t(e.output_dim) + size_t(e.steps) - 1;

    std::vector<uint8_t> bad = good;
    bad[out_word * 4] ^= 1;
    Report r = run_check(s, bad);
    CHECK(r.failures == 3);  // the forward, the decode and the C handle's forward
    CHECK(std::string(r.what) == "forward");
    CHECK(r.index == long(size_t(e.n) * size_t(e.output_dim) - 3));

    bad = good;
    bad[gen_word * 4] = uint8_t(bad[gen_word * 4] + 1);
    r = run_check(s, bad);
    CHECK(r.failures == 1);
    CHECK(std::string(r.what) == "generate");
    CHECK(r.index == long(e.steps - 1));

    bad = good;
    bad[2 * 4] ^= 0x10;  // the model CRC
    r = run_check(s, bad);
    CHECK(r.failures == 1);
    CHECK(std::string(r.what) == "expect");
  }
}
