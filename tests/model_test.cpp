// model_test.cpp: the .attn loader. A valid file is built with the tools'
// writer, then each class of bad file is made by patching one field (with
// the CRC recomputed, so the check under test is reached) and must give its
// own Status.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/quantize.h"
#include "fixed_dtypes.h"
#include "format/writer.h"
#include "int_model_helpers.h"

using attn::Status;
using attn::format::BlockRecord;
using attn::format::Header;
using attn::format::TensorDesc;

namespace {

// Exactly n bytes, 16-aligned, so ASan sees any read past the end.
using AlignedCopy = int_model::Blob;
using int_model::load_bytes;
using int_model::poke;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 17) - 8);
  return v;
}

// Block 0: E=8 H=2 hd=4, self-attention, bias (tensors 0..7).
// Block 1: E=8 H=2 hd=4 kdim=6 vdim=5, no bias (tensors 8..11).
// Tensor 12: user tensor "embedding" [10, 8].
struct Fixture {
  std::vector<float> w0[8], w1[4], emb;
  attn::tools::ModelSpec spec;
  Fixture() {
    attn::tools::BlockSpec b0{8, 2, 4, 8, 8, true, attn::DType::kF32};
    attn::tools::BlockSpec b1{8, 2, 4, 6, 5, false, attn::DType::kF32};
    const size_t n0[8] = {64, 64, 64, 64, 8, 8, 8, 8};
    for (int i = 0; i < 8; ++i) w0[i] = ramp(n0[i], 0.01f * static_cast<float>(i + 1));
    const size_t n1[4] = {64, 48, 40, 64};
    for (int i = 0; i < 4; ++i) w1[i] = ramp(n1[i], 0.02f * static_cast<float>(i + 1));
    emb = ramp(80, 0.5f);
    attn::tools::add_block_f32(spec, b0, {&w0[0], &w0[1], &w0[2], &w0[3], &w0[4], &w0[5], &w0[6], &w0[7]});
    attn::tools::add_block_f32(spec, b1, {&w1[0], &w1[1], &w1[2], &w1[3]});
    attn::tools::TensorSpec u;
    u.name = "embedding";
    u.dims = {10, 8};
    u.bytes = attn::tools::f32_bytes(emb);
    spec.tensors.push_back(u);
  }
};

std::vector<uint8_t> valid_file() { return attn::tools::write_model(Fixture().spec); }

size_t block_at(size_t i) { return sizeof(Header) + i * sizeof(BlockRecord); }
size_t tensor_at(size_t i) { return sizeof(Header) + 2 * sizeof(BlockRecord) + i * sizeof(TensorDesc); }

#define HDR(field) offsetof(Header, field)
#define BLK(i, field) (block_at(i) + offsetof(BlockRecord, field))
#define TEN(i, field) (tensor_at(i) + offsetof(TensorDesc, field))

// Patch a valid file, recompute its CRC, load it.
Status mutated(const std::function<void(std::vector<uint8_t>&)>& patch) {
  std::vector<uint8_t> f = valid_file();
  patch(f);
  attn::tools::fix_crc(f);
  return load_bytes(f);
}

// CRC-32 by its definition, one bit at a time, continuing from `crc` (0 to start).
uint32_t crc32_bitwise(const unsigned char* p, size_t n, uint32_t crc = 0) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

}  // namespace

TEST_CASE("crc32 matches zlib's check value", "[model][crc]") {
  const char* s = "123456789";
  CHECK(attn::crc32(s, 9) == 0xCBF43926u);
  CHECK(attn::crc32(s + 4, 5, attn::crc32(s, 4)) == 0xCBF43926u);  // chunked
  CHECK(attn::crc32(s, 0) == 0u);
  // Long buffers in uneven chunks (the 8-byte steps of hosts and their tails)
  // against the bit-by-bit definition.
  std::vector<unsigned char> buf(1000);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  for (size_t n : {size_t{7}, size_t{8}, size_t{63}, size_t{1000}}) {
    for (size_t cut : {size_t{0}, size_t{3}, n / 2}) {
      CHECK(attn::crc32(buf.data() + cut, n - cut, attn::crc32(buf.data(), cut)) ==
            crc32_bitwise(buf.data(), n));
    }
  }
}

// The fast paths (slicing-by-8 on x86-64 / AArch64, carry-less multiplication
// on x86-64 CPUs with PCLMULQDQ, from 64 bytes) and their tails, at random
// lengths (short ones around the paths' steps of 8, 16 and 64 bytes, and long
// ones), start addresses, starting CRCs and split points.
TEST_CASE("crc32 equals the bitwise definition at random lengths, alignments and splits", "[model][crc]") {
  std::mt19937 rng(20261206);
  std::vector<unsigned char> buf(100000 + 64);
  for (auto& b : buf) b = static_cast<unsigned char>(rng() >> 24);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t at = rng() % 64;
    const size_t n = trial < 300 ? rng() % 400 : rng() % 100000;
    const size_t cut = rng() % (n + 1);
    const uint32_t start = trial % 4 == 0 ? 0u : static_cast<uint32_t>(rng());
    const unsigned char* p = buf.data() + at;
    const uint32_t expect = crc32_bitwise(p, n, start);
    INFO("at " << at << ", " << n << " bytes, cut at " << cut << ", start " << start);
    CHECK(attn::crc32(p, n, start) == expect);
    CHECK(attn::crc32(p + cut, n - cut, attn::crc32(p, cut, start)) == expect);
  }
  // Every length up to 260 from one start: each step count and tail.
  for (size_t n = 0; n <= 260; ++n) CHECK(attn::crc32(buf.data() + 3, n) == crc32_bitwise(buf.data() + 3, n));
}

TEST_CASE("a valid file loads and its views point into the blob", "[model]") {
  Fixture fx;
  const std::vector<uint8_t> f = attn::tools::write_model(fx.spec);
  AlignedCopy c(f);
  attn::Model m;
  REQUIRE(attn::Model::load(c.p, c.n, &m) == Status::kOk);
  CHECK(m.block_count() == 2);
  CHECK(m.tensor_count() == 13);
  CHECK(m.data_align() == 16);

  attn::Block b;
  REQUIRE(m.block(0, &b) == Status::kOk);
  CHECK(b.config.embed_dim == 8);
  CHECK(b.config.num_heads == 2);
  CHECK(b.config.head_dim == 4);
  CHECK(b.config.bias);
  CHECK(b.dtype == attn::DType::kF32);
  const float* ptrs[8] = {b.f32.wq, b.f32.wk, b.f32.wv, b.f32.wo, b.f32.bq, b.f32.bk, b.f32.bv, b.f32.bo};
  for (int i = 0; i < 8; ++i) {
    REQUIRE(ptrs[i] != nullptr);
    const auto* u = reinterpret_cast<const uint8_t*>(ptrs[i]);
    CHECK(u >= c.p);
    CHECK(u < c.p + c.n);  // zero copy: inside the blob
    CHECK(reinterpret_cast<uintptr_t>(u) % 16 == 0);
    CHECK(std::memcmp(ptrs[i], fx.w0[i].data(), fx.w0[i].size() * 4) == 0);
  }
  REQUIRE(m.block(1, &b) == Status::kOk);
  CHECK(b.config.kdim == 6);
  CHECK(b.config.vdim == 5);
  CHECK_FALSE(b.config.bias);
  CHECK(b.f32.bq == nullptr);
  CHECK(b.f32.bo == nullptr);
  CHECK(std::memcmp(b.f32.wv, fx.w1[2].data(), 40 * 4) == 0);
  CHECK(m.block(2, &b) == Status::kBlockIndex);

  attn::TensorView t;
  REQUIRE(m.find_tensor("embedding", &t) == Status::kOk);
  CHECK(t.role == attn::format::Role::kUser);
  CHECK(t.rank == 2);
  CHECK(t.dims[0] == 10);
  CHECK(t.dims[1] == 8);
  CHECK(t.byte_size == 320);
  CHECK(std::memcmp(t.data, fx.emb.data(), 320) == 0);
  CHECK(m.find_tensor("embeddin", &t) == Status::kNotFound);
  CHECK(m.find_tensor("nope", &t) == Status::kNotFound);
  REQUIRE(m.find_tensor("block.1.wk", &t) == Status::kOk);
  CHECK(t.block == 1);
  CHECK(m.find_block_tensor(1, attn::format::Role::kBq, &t) == Status::kNotFound);
  REQUIRE(m.find_block_tensor(0, attn::format::Role::kBo, &t) == Status::kOk);
  CHECK(t.dims[0] == 8);
  CHECK(m.tensor(13, &t) == Status::kTensorIndex);
}

TEST_CASE("a file with only user tensors, and one with nothing, load", "[model]") {
  attn::tools::ModelSpec s;
  CHECK(load_bytes(attn::tools::write_model(s)) == Status::kOk);
  attn::tools::TensorSpec u;
  u.name = "head";
  u.dtype = attn::DType::kS8;
  u.dims = {3, 5, 1, 2};
  u.bytes.assign(30, 7);
  s.tensors.push_back(u);
  s.data_align = 64;
  CHECK(load_bytes(attn::tools::write_model(s)) == Status::kOk);
}

TEST_CASE("file_bytes finds a blob's size at the start of a larger region", "[model]") {
  std::vector<uint8_t> region = valid_file();
  const size_t n = region.size();
  region.resize(n + 1000, 0xFF);  // erased flash after the file
  AlignedCopy c(region);
  size_t size = 0;
  REQUIRE(attn::Model::file_bytes(c.p, c.n, &size) == Status::kOk);
  CHECK(size == n);
  attn::Model m;
  CHECK(attn::Model::load(c.p, c.n, &m) == Status::kFileSizeMismatch);  // the whole region: no
  CHECK(attn::Model::load(c.p, size, &m) == Status::kOk);
  CHECK(m.version() == 1);
  CHECK(attn::Model::file_bytes(c.p, n - 1, &size) == Status::kTruncated);
  CHECK(attn::Model::file_bytes(c.p, 63, &size) == Status::kTruncated);
  CHECK(attn::Model::file_bytes(nullptr, n, &size) == Status::kNullArgument);
  region[0] = 0xFF;
  AlignedCopy bad(region);
  CHECK(attn::Model::file_bytes(bad.p, bad.n, &size) == Status::kBadMagic);
}

TEST_CASE("bad arguments", "[model]") {
  const std::vector<uint8_t> f = valid_file();
  AlignedCopy c(f);
  attn::Model m;
  CHECK(attn::Model::load(nullptr, c.n, &m) == Status::kNullArgument);
  CHECK(attn::Model::load(c.p, c.n, nullptr) == Status::kNullArgument);
  // Misaligned blob: the same bytes one past a 16-byte boundary.
  std::vector<uint8_t> shifted(f.size() + 16);
  uint8_t* base = shifted.data() + (16 - reinterpret_cast<uintptr_t>(shifted.data()) % 16) % 16;
  if (base + f.size() + 1 > shifted.data() + shifted.size()) base -= 16;
  std::memcpy(base + 1, f.data(), f.size());
  CHECK(attn::Model::load(base + 1, f.size(), &m) == Status::kBlobMisaligned);
}

// One regression per class of bad file (the classes of include/attn/FORMAT.md's
// loader table, which come from loader CVEs in other formats).
TEST_CASE("bad magic, version, header size", "[model][bad]") {
  CHECK(mutated([](auto& f) { f[0] ^= 1; }) == Status::kBadMagic);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, HDR(version), attn::format::kVersion + 1); }) ==
        Status::kUnsupportedVersion);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, HDR(version), 0); }) == Status::kUnsupportedVersion);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, HDR(header_size), 48); }) == Status::kBadHeaderSize);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, HDR(header_size), 128); }) == Status::kBadHeaderSize);
}

TEST_CASE("file size and CRC", "[model][bad]") {
  CHECK(mutated([](auto& f) { f.push_back(0); }) == Status::kFileSizeMismatch);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(file_size), f.size() + 1); }) == Status::kTruncated);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(file_size), f.size() - 1); }) ==
        Status::kFileSizeMismatch);
  // Any flipped bit after the CRC field, CRC not recomputed.
  const std::vector<uint8_t> good = valid_file();
  for (size_t at : {size_t{12}, size_t{100}, good.size() / 2, good.size() - 1}) {
    std::vector<uint8_t> f = good;
    f[at] ^= 0x10;
    CHECK(load_bytes(f) == Status::kCrcMismatch);
  }
  std::vector<uint8_t> f = good;
  f[HDR(crc32)] ^= 1;
  CHECK(load_bytes(f) == Status::kCrcMismatch);
}

TEST_CASE("flags and reserved fields", "[model][bad]") {
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, HDR(flags), 1); }) == Status::kUnknownFlags);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, BLK(1, flags), 2); }) == Status::kUnknownFlags);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, HDR(reserved0), 1); }) == Status::kBadReserved);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(1, reserved) + 28, 1); }) == Status::kBadReserved);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(3, reserved0), 1); }) == Status::kBadReserved);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, TEN(12, reserved) + 8, 1); }) == Status::kBadReserved);
  // A dim beyond the rank must be 0.
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(12, dims) + 8, 1); }) == Status::kBadReserved);
}

TEST_CASE("alignment zero, not a power of two, too small or huge", "[model][bad]") {
  for (uint32_t a : {0u, 1u, 8u, 24u, 48u, 1u << 17, 0x80000000u}) {
    CAPTURE(a);
    CHECK(mutated([a](auto& f) { poke<uint32_t>(f, HDR(data_align), a); }) == Status::kBadAlignment);
  }
}

TEST_CASE("counts above the caps", "[model][bad]") {
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, HDR(tensor_count), ATTN_MAX_TENSORS + 1); }) ==
        Status::kTooManyEntries);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, HDR(block_count), 0xFFFFFFFFu); }) ==
        Status::kTooManyEntries);
}

TEST_CASE("count x size products and offset + size sums that overflow", "[model][bad]") {
  // elements = 2^24 ^ 4 = 2^96: the product of dims overflows 64 bits.
  CHECK(mutated([](auto& f) {
          poke<uint16_t>(f, TEN(12, rank), 4);
          for (int k = 0; k < 4; ++k) poke<uint32_t>(f, TEN(12, dims) + 4 * k, 1u << 24);
        }) == Status::kSizeOverflow);
  // elements = 2^62 fits, but x 4 bytes does not.
  CHECK(mutated([](auto& f) {
          poke<uint16_t>(f, TEN(12, rank), 4);
          const uint32_t d[4] = {1u << 24, 1u << 24, 1u << 14, 1};
          for (int k = 0; k < 4; ++k) poke<uint32_t>(f, TEN(12, dims) + 4 * k, d[k]);
        }) == Status::kSizeOverflow);
  // A table offset so large that offset + count x record wraps.
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(blocks_offset), UINT64_MAX - 64); }) ==
        Status::kSizeOverflow);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(tensors_offset), UINT64_MAX - 200); }) ==
        Status::kSizeOverflow);
}

TEST_CASE("align-up overflow: offsets just below 2^64", "[model][bad]") {
  // v1 stores every offset already aligned, so the loader never rounds up;
  // a writer's align-up that wrapped shows as an aligned offset near 2^64
  // whose end wraps, or as an unaligned one.
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, TEN(12, offset), UINT64_MAX - 15); }) ==
        Status::kSizeOverflow);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, TEN(12, offset), UINT64_MAX); }) ==
        Status::kTensorMisaligned);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(data_offset), UINT64_MAX - 15); }) ==
        Status::kOffsetOutOfBounds);
}

TEST_CASE("offsets past the end of the file", "[model][bad]") {
  const size_t n = valid_file().size();
  CHECK(mutated([n](auto& f) { poke<uint64_t>(f, HDR(tensors_offset), n - 64); }) ==
        Status::kOffsetOutOfBounds);
  CHECK(mutated([n](auto& f) { poke<uint64_t>(f, HDR(data_offset), n + 16); }) == Status::kOffsetOutOfBounds);
  CHECK(mutated([n](auto& f) { poke<uint64_t>(f, TEN(12, offset), n); }) == Status::kOffsetOutOfBounds);
  // The last tensor's end one 16-byte step past the end.
  CHECK(mutated([](auto& f) {
          uint64_t off;
          std::memcpy(&off, f.data() + TEN(12, offset), 8);
          poke<uint64_t>(f, TEN(12, offset), off + 16);
        }) == Status::kOffsetOutOfBounds);
  // Tables overlapping the header or each other.
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(blocks_offset), 32); }) == Status::kOffsetOutOfBounds);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(tensors_offset), 64 + 64); }) ==
        Status::kOffsetOutOfBounds);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, HDR(data_offset), 64); }) == Status::kOffsetOutOfBounds);
}

TEST_CASE("overlapping and aliased tensors", "[model][bad]") {
  auto off = [](const std::vector<uint8_t>& f, size_t i) {
    uint64_t o;
    std::memcpy(&o, f.data() + TEN(i, offset), 8);
    return o;
  };
  // wk aliases wq (same size, same offset).
  CHECK(mutated([&](auto& f) { poke<uint64_t>(f, TEN(1, offset), off(f, 0)); }) == Status::kTensorOverlap);
  // wk starts inside wq.
  CHECK(mutated([&](auto& f) { poke<uint64_t>(f, TEN(1, offset), off(f, 0) + 16); }) ==
        Status::kTensorOverlap);
  // The user tensor covers a bias.
  CHECK(mutated([&](auto& f) { poke<uint64_t>(f, TEN(12, offset), off(f, 6)); }) == Status::kTensorOverlap);
}

TEST_CASE("misaligned tensors and data section", "[model][bad]") {
  CHECK(mutated([](auto& f) {
          uint64_t o;
          std::memcpy(&o, f.data() + TEN(4, offset), 8);
          poke<uint64_t>(f, TEN(4, offset), o + 4);
        }) == Status::kTensorMisaligned);
  CHECK(mutated([](auto& f) {
          uint64_t o;
          std::memcpy(&o, f.data() + HDR(data_offset), 8);
          poke<uint64_t>(f, HDR(data_offset), o + 8);
        }) == Status::kTensorMisaligned);
}

TEST_CASE("zero dims and dims above the caps", "[model][bad]") {
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, rank), 0); }) == Status::kBadDims);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, rank), 5); }) == Status::kBadDims);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(12, dims), 0); }) == Status::kBadDims);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(0, embed_dim), 0); }) == Status::kBadDims);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(1, num_heads), 0); }) == Status::kBadDims);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(1, vdim), 0); }) == Status::kBadDims);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(12, dims), ATTN_MAX_TENSOR_DIM + 1); }) ==
        Status::kDimsTooLarge);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(0, embed_dim), ATTN_MAX_DIM + 1); }) ==
        Status::kDimsTooLarge);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(0, num_heads), ATTN_MAX_HEADS + 1); }) ==
        Status::kDimsTooLarge);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(1, kdim), 0xFFFFFFFFu); }) == Status::kDimsTooLarge);
  // heads x head_dim above ATTN_MAX_DIM though each is within its cap.
  CHECK(mutated([](auto& f) {
          poke<uint32_t>(f, BLK(0, num_heads), 64);
          poke<uint32_t>(f, BLK(0, head_dim), 65);
        }) == Status::kDimsTooLarge);
}

TEST_CASE("byte size that disagrees with dtype x dims", "[model][bad]") {
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, TEN(12, byte_size), 316); }) == Status::kBadByteSize);
  CHECK(mutated([](auto& f) { poke<uint64_t>(f, TEN(0, byte_size), 0); }) == Status::kBadByteSize);
}

TEST_CASE("dims that disagree with the block's hyperparameters", "[model][bad]") {
  // heads x head_dim: D changes, Wq [8, 8] no longer [D, E].
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(0, head_dim), 2); }) == Status::kDimsMismatch);
  CHECK(mutated([](auto& f) {
          poke<uint32_t>(f, BLK(0, num_heads), 4);  // 4 x 4 = 16 != 8
        }) == Status::kDimsMismatch);
  // kdim / vdim.
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(1, kdim), 7); }) == Status::kDimsMismatch);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, BLK(1, vdim), 6); }) == Status::kDimsMismatch);
  // Wk stored transposed ([kdim, D] instead of [D, kdim]).
  CHECK(mutated([](auto& f) {
          poke<uint32_t>(f, TEN(9, dims), 6);
          poke<uint32_t>(f, TEN(9, dims) + 4, 8);
        }) == Status::kDimsMismatch);
  // A bias stored with rank 2.
  CHECK(mutated([](auto& f) {
          poke<uint16_t>(f, TEN(7, rank), 2);
          poke<uint32_t>(f, TEN(7, dims), 1);
          poke<uint32_t>(f, TEN(7, dims) + 4, 8);
        }) == Status::kDimsMismatch);
  // Biases present in a block whose flags say no bias.
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, BLK(0, flags), 0); }) == Status::kDimsMismatch);
}

TEST_CASE("a block lacking a tensor it needs", "[model][bad]") {
  // Block 1 has no bias; say it has.
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, BLK(1, flags), 1); }) == Status::kMissingTensor);
  // Block 0's bo turned into a user tensor.
  CHECK(mutated([](auto& f) {
          poke<uint16_t>(f, TEN(7, role), 15);
          poke<uint32_t>(f, TEN(7, block), attn::format::kNoBlock);
        }) == Status::kMissingTensor);
  // Fewer tensors than the blocks need (the user tensor and block 1's wo dropped).
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, HDR(tensor_count), 11); }) == Status::kMissingTensor);
}

TEST_CASE("unknown dtype, role, layout, version", "[model][bad]") {
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, dtype), 0); }) == Status::kUnknownDtype);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, dtype), 99); }) == Status::kUnknownDtype);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, BLK(0, dtype), 77); }) == Status::kUnknownDtype);
  // s8 blocks are not readable by this loader yet.
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, BLK(0, dtype), 2); }) == Status::kUnknownDtype);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, role), 0); }) == Status::kUnknownRole);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, role), 63); }) == Status::kUnknownRole);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, role), 0xFFFF); }) == Status::kUnknownRole);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(12, layout), 7); }) == Status::kUnknownLayout);
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, HDR(version), 0x100); }) == Status::kUnsupportedVersion);
}

TEST_CASE("a block tensor whose dtype is not the block's", "[model][bad]") {
  // s32 has f32's size, so only the dtype check can catch it.
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(2, dtype), 4); }) == Status::kDtypeMismatch);
}

TEST_CASE("duplicate role in a block", "[model][bad]") {
  // Block 0's wk relabelled wq (same dims [8, 8]).
  CHECK(mutated([](auto& f) { poke<uint16_t>(f, TEN(1, role), 1); }) == Status::kDuplicateRole);
  // Block 1's wo moved into block 0, which has one.
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(11, block), 0); }) == Status::kDuplicateRole);
}

TEST_CASE("tensor names and block references", "[model][bad]") {
  CHECK(mutated([](auto& f) { std::memset(f.data() + TEN(12, name), 0, 64); }) == Status::kBadTensorName);
  CHECK(mutated([](auto& f) { std::memset(f.data() + TEN(12, name), 'a', 64); }) == Status::kBadTensorName);
  CHECK(mutated([](auto& f) { f[TEN(12, name) + 40] = 'x'; }) == Status::kBadTensorName);  // after the NUL
  CHECK(mutated([](auto& f) {
          std::memset(f.data() + TEN(12, name), 0, 64);
          std::memcpy(f.data() + TEN(12, name), "block.0.wq", 10);
        }) == Status::kDuplicateName);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(12, block), 0); }) == Status::kBadBlock);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(3, block), 2); }) == Status::kBadBlock);
  CHECK(mutated([](auto& f) { poke<uint32_t>(f, TEN(3, block), attn::format::kNoBlock); }) ==
        Status::kBadBlock);
}

TEST_CASE("truncation sweep: every prefix is rejected cleanly", "[model][bad]") {
  const std::vector<uint8_t> f = valid_file();
  REQUIRE(load_bytes(f) == Status::kOk);
  for (size_t n = 0; n < f.size(); ++n) {
    const std::vector<uint8_t> prefix(f.begin(), f.begin() + static_cast<ptrdiff_t>(n));
    const Status s = load_bytes(prefix);
    if (s != Status::kTruncated) {
      CAPTURE(n);
      CHECK(s == Status::kTruncated);
    }
  }
}

TEST_CASE("random byte mutations never crash and never load a changed file silently", "[model][bad]") {
  const std::vector<uint8_t> good = valid_file();
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> f = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) f[rng() % f.size()] = static_cast<uint8_t>(rng());
    if (iter % 2 == 0) attn::tools::fix_crc(f);
    const Status s = load_bytes(f);
    if (iter % 2 == 1 && f != good) CHECK(s != Status::kOk);  // the CRC catches it
    if (s == Status::kOk) ++accepted;                         // only data or padding bytes changed
  }
  CHECK(accepted < 3000);
}

// ---- quantized blocks (format v2) -------------------------------------------

namespace {

// Block 0 of Fixture quantized to `dtype` (ranges made up: every stage [-2, 2]),
// plus the user tensor; `q` keeps the quantizer's own arrays.
struct QuantFixture {
  // kv_heads 1: multi-query (Wk, Wv and their tables [4, ...], the first rows of Fixture's).
  // rope != 0: rotary embedding, cos/sin tables [5, 2] (rope_cos, rope_sin).
  explicit QuantFixture(attn::DType dtype, bool bias = true, int32_t kv_heads = 0, float rope = 0.0f)
      : storage(std::vector<uint8_t>(1 << 16, 0)) {
    attn::AttentionConfig c{8, 2};
    c.bias = bias;
    c.num_kv_heads = kv_heads;
    c.rope_base = rope;
    attn::QuantizeOptions options;
    options.max_positions = 5;
    attn::WeightsF32 w{fx.w0[0].data(), fx.w0[1].data(), fx.w0[2].data(), fx.w0[3].data()};
    if (bias)
      w = {fx.w0[0].data(), fx.w0[1].data(), fx.w0[2].data(), fx.w0[3].data(),
           fx.w0[4].data(), fx.w0[5].data(), fx.w0[6].data(), fx.w0[7].data()};
    attn::CalibrationRanges r;
    for (attn::Range* x : {&r.query, &r.key, &r.value, &r.q, &r.k, &r.v, &r.context, &r.output})
      *x = {-2.0f, 1.5f};
    REQUIRE(arena.init(storage.p, storage.n) == Status::kOk);
    attn::tools::BlockSpec b{8, 2, 4, 8, 8, bias, dtype};
    b.n_kv_heads = static_cast<uint32_t>(kv_heads);
    b.rope_base = rope;
    if (dtype == attn::DType::kS8) {
      REQUIRE(attn::quantize_attention_s8(c, w, r, arena, &s8, &act, nullptr, options) == Status::kOk);
      attn::tools::add_block_quant(spec, b, s8, act);
    } else {
      REQUIRE(attn::quantize_attention_s16(c, w, r, arena, &s16, &act, nullptr, options) == Status::kOk);
      attn::tools::add_block_quant(spec, b, s16, act);
    }
    spec.tensors.push_back(fx.spec.tensors.back());  // "embedding"
  }
  attn::tools::TensorSpec& tensor(const std::string& name) {
    for (auto& t : spec.tensors)
      if (t.name == name) return t;
    FAIL("no tensor " << name);
    return spec.tensors[0];
  }
  void set_s32(const std::string& name, size_t i, int32_t v) {
    std::memcpy(tensor(name).bytes.data() + 4 * i, &v, 4);
  }
  Status load() const { return load_bytes(attn::tools::write_model(spec)); }
  // Loads the file with tensor `name` changed by `change`.
  Status load_with(const std::string& name, const std::function<void(attn::tools::TensorSpec&)>& change) {
    change(tensor(name));
    return load();
  }
  // Loads the file with tensor `name` reshaped to `dims`, its data cut or zero-padded to `bytes`.
  Status load_reshaped(const std::string& name, const std::vector<uint32_t>& dims, size_t bytes) {
    return load_with(name, [&](attn::tools::TensorSpec& t) {
      t.dims = dims;
      t.bytes.resize(bytes);
    });
  }
  void erase(const std::string& name) {
    auto& v = spec.tensors;
    v.erase(
        std::find_if(v.begin(), v.end(), [&](const attn::tools::TensorSpec& t) { return t.name == name; }));
  }
  Fixture fx;
  AlignedCopy storage;
  attn::Arena arena;
  attn::WeightsS8 s8;
  attn::WeightsS16 s16;
  attn::ActivationQuant act;
  attn::tools::ModelSpec spec;
};

// For QuantFixture::load_with: the tensor as `dtype`, its data `grow` times as long.
std::function<void(attn::tools::TensorSpec&)> retyped(attn::DType dtype, size_t grow) {
  return [=](attn::tools::TensorSpec& t) {
    t.dtype = dtype;
    t.bytes.resize(t.bytes.size() * grow);
  };
}

// The fixture's file in 16-aligned memory, loaded, and its block 0 (views into the copy).
struct LoadedQuant {
  explicit LoadedQuant(const QuantFixture& qf) : copy(attn::tools::write_model(qf.spec)) {
    REQUIRE(attn::Model::load(copy.p, copy.n, &model) == Status::kOk);
    REQUIRE(model.block(0, &block) == Status::kOk);
  }
  AlignedCopy copy;
  attn::Model model;
  attn::Block block;
};

// D's integer forward of `config` with L = S = 3 (queries from `position`) and
// weights `w`, on 24 values spread over T's range, into *y.
template <class D>
Status run_forward(const attn::AttentionConfig& config, const typename D::Weights& w,
                   std::vector<typename D::T>* y, int32_t position = 0) {
  using T = typename D::T;
  attn::Plan plan;
  REQUIRE(attn::plan_attention(config, D::kDtype, 3, 3, &plan) == Status::kOk);
  AlignedCopy arena_mem(std::vector<uint8_t>(plan.arena_bytes, 0));
  attn::Arena arena;
  REQUIRE(arena.init(arena_mem.p, arena_mem.n) == Status::kOk);
  std::vector<T> x(24);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = sizeof(T) == 1 ? static_cast<T>(static_cast<int>(i * 37 % 255) - 127)
                          : static_cast<T>(static_cast<int>(i * 2731 % 65535) - 32767);
  y->assign(x.size(), 0);
  return D::forward(plan, w, {}, {x.data(), x.data(), x.data(), y->data(), position}, arena);
}

// The forward from the blob's views and from the quantizer's own arrays: the same bytes out.
template <class D>
void check_forward_from_blob(const attn::AttentionConfig& config, const typename D::Weights& blob,
                             const typename D::Weights& own) {
  std::vector<typename D::T> y0, y1;
  REQUIRE(run_forward<D>(config, blob, &y0) == Status::kOk);
  REQUIRE(run_forward<D>(config, own, &y1) == Status::kOk);
  CHECK(y0 == y1);
}

void check_forward_from_blob(const attn::Block& b, const QuantFixture& qf) {
  if (b.dtype == attn::DType::kS8) {
    check_forward_from_blob<dtypes::S8>(b.config, b.s8, qf.s8);
  } else {
    check_forward_from_blob<dtypes::S16>(b.config, b.s16, qf.s16);
  }
}

}  // namespace

TEST_CASE("quantized blocks load as version 2 and their weights point into the blob", "[model][quant]") {
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    QuantFixture qf(dt);
    LoadedQuant l(qf);
    const attn::Block& b = l.block;
    CHECK(l.model.version() == 2);
    CHECK(b.dtype == dt);
    attn::TensorView wq, qp, io;
    REQUIRE(l.model.find_block_tensor(0, attn::format::Role::kWq, &wq) == Status::kOk);
    REQUIRE(l.model.find_block_tensor(0, attn::format::Role::kQuantParams, &qp) == Status::kOk);
    REQUIRE(l.model.find_block_tensor(0, attn::format::Role::kIoScale, &io) == Status::kOk);
    CHECK(b.io.scale == io.data);
    CHECK(b.io.scale[0] == qf.act.query.scale);
    CHECK(b.io.scale[3] == qf.act.output.scale);
    CHECK(b.io.zero_point[0] == qf.act.query.zero_point);
    CHECK(b.io.zero_point[3] == qf.act.output.zero_point);
    if (dt == attn::DType::kS8) {
      CHECK(static_cast<const void*>(b.s8.q.weight) == wq.data);
      CHECK(b.s8.softmax.exp_multiplier == qf.s8.softmax.exp_multiplier);
      CHECK(b.s8.softmax.diff_limit == qf.s8.softmax.diff_limit);
      CHECK(b.s8.context_multiplier == qf.s8.context_multiplier);
      CHECK(b.s8.output_zero_point == qf.s8.output_zero_point);
    } else {
      CHECK(static_cast<const void*>(b.s16.o.weight) != nullptr);
      CHECK(b.s16.softmax.score_shift == qf.s16.softmax.score_shift);
      CHECK(b.s16.context_shift == qf.s16.context_shift);
    }
    // Run the integer forward from the blob and from the quantizer's arrays: same bytes out.
    check_forward_from_blob(b, qf);
  }
  QuantFixture nobias(attn::DType::kS16, false);
  CHECK(nobias.load() == Status::kOk);
}

TEST_CASE("quantized blocks: tables of the wrong length, dtype or role", "[model][quant][bad]") {
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    CHECK(QuantFixture(dt).load_reshaped("block.0.q_shift", {7}, 28) == Status::kDimsMismatch);  // [8] -> [7]
    CHECK(QuantFixture(dt).load_with("block.0.quant_params",  // [16] -> [2, 8]
                                     [](attn::tools::TensorSpec& t) {
                                       t.dims = {2, 8};
                                     }) == Status::kDimsMismatch);
    CHECK(QuantFixture(dt).load_with("block.0.io_scale",
                                     retyped(attn::DType::kS32, 1)) ==  // f32 [4] -> s32 [4]
          Status::kDtypeMismatch);
    CHECK(QuantFixture(dt).load_with("block.0.wk", retyped(attn::DType::kS16, 2)) ==  // int8 weights -> int16
          Status::kDtypeMismatch);
    CHECK(QuantFixture(dt).load_reshaped("block.0.wo", {8, 7}, 56) ==
          Status::kDimsMismatch);  // [E, D] -> [D + 1, ...]
    {
      QuantFixture qf(dt);
      qf.spec.tensors.erase(qf.spec.tensors.begin() + 9);  // a multiplier or shift table
      CHECK(qf.load() == Status::kMissingTensor);
    }
    CHECK(QuantFixture(dt).load_with("block.0.v_shift", [](attn::tools::TensorSpec& t) {
      t.role = attn::format::Role::kKShift;
    }) == Status::kDuplicateRole);
    CHECK(QuantFixture(dt).load_with("block.0.o_shift", [](attn::tools::TensorSpec& t) {
      t.role = static_cast<attn::format::Role>(28);  // reserved
    }) == Status::kUnknownRole);
  }
  // s8 biases carry the zero-point fold: required even without the bias flag.
  QuantFixture s8_nobias(attn::DType::kS8, true);
  s8_nobias.spec.blocks[0].bias = false;
  CHECK(s8_nobias.load() == Status::kOk);
  for (const char* n : {"block.0.bq", "block.0.bk", "block.0.bv", "block.0.bo"}) s8_nobias.erase(n);
  CHECK(s8_nobias.load() == Status::kMissingTensor);
  // s16: int64 biases only with the flag.
  QuantFixture s16(attn::DType::kS16, true);
  s16.spec.blocks[0].bias = false;
  CHECK(s16.load() == Status::kDimsMismatch);
  // A quantization table in an f32 block.
  Fixture fx;
  QuantFixture donor(attn::DType::kS8);
  attn::tools::TensorSpec t = donor.tensor("block.0.q_shift");
  t.name = "extra";
  fx.spec.tensors.push_back(t);
  CHECK(load_bytes(attn::tools::write_model(fx.spec)) == Status::kUnknownRole);
}

TEST_CASE("quantized blocks: values the integer forward would reject, and v1 files", "[model][quant][bad]") {
  using namespace attn::format;
  const auto bad = [](attn::DType dt, const std::function<void(QuantFixture&)>& patch) {
    QuantFixture qf(dt);
    patch(qf);
    return qf.load();
  };
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.q_shift", 3, 31); }) == Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.o_shift", 0, -32); }) == Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.k_multiplier", 5, -1); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpExpMultiplier, 0x7FFFFFFF); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpExpShift, 32); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpDiffLimit, -1); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpScoreShift, 41); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpContextMultiplier, -5); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpMaskKeyLength, 1); }) ==
          Status::kBadReserved);
    // Mask coverage: an unknown value, a negative one, a causal window of 0, a negative key length or
    // one beyond ATTN_MAX_SEQ, a length beside a coverage that has none.
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpMaskCoverage, 6); }) ==
          Status::kBadQuantParams);
    // ... and every coverage with its N in range loads (key length 0 included: every key hidden).
    for (const std::pair<int32_t, int32_t> ok : {std::pair<int32_t, int32_t>{3, 0},
                                                 {3, ATTN_MAX_SEQ},
                                                 {4, 1},
                                                 {4, ATTN_MAX_SEQ},
                                                 {5, 0},
                                                 {5, 7},
                                                 {1, 0},
                                                 {2, 0}}) {
      INFO("coverage " << ok.first << " N " << ok.second);
      CHECK(bad(dt, [&](QuantFixture& f) {
              f.set_s32("block.0.quant_params", kQpMaskCoverage, ok.first);
              f.set_s32("block.0.quant_params", kQpMaskKeyLength, ok.second);
            }) == Status::kOk);
    }
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpMaskCoverage, -1); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpMaskCoverage, 4); }) ==
          Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) {
            f.set_s32("block.0.quant_params", kQpMaskCoverage, 5);
            f.set_s32("block.0.quant_params", kQpMaskKeyLength, -1);
          }) == Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) {
            f.set_s32("block.0.quant_params", kQpMaskCoverage, 3);
            f.set_s32("block.0.quant_params", kQpMaskKeyLength, ATTN_MAX_SEQ + 1);
          }) == Status::kBadQuantParams);
    CHECK(bad(dt, [](QuantFixture& f) {
            f.set_s32("block.0.quant_params", kQpMaskCoverage, 1);
            f.set_s32("block.0.quant_params", kQpMaskKeyLength, 5);
          }) == Status::kBadReserved);
    CHECK(bad(dt, [](QuantFixture& f) { f.set_s32("block.0.quant_params", kQpVZeroPoint, 200); }) ==
          Status::kBadQuantParams);
    // I/O scales: NaN, +inf, 0, negative.
    for (uint32_t bits : {0x7FC00000u, 0x7F800000u, 0u, 0xBF800000u}) {
      CHECK(bad(dt, [&](QuantFixture& f) {
              std::memcpy(f.tensor("block.0.io_scale").bytes.data() + 4, &bits, 4);
            }) == Status::kBadQuantParams);
    }
    // A quantized block in a file that says version 1.
    QuantFixture qf(dt);
    std::vector<uint8_t> file = attn::tools::write_model(qf.spec);
    poke<uint16_t>(file, HDR(version), 1);
    attn::tools::fix_crc(file);
    CHECK(load_bytes(file) == Status::kUnknownDtype);
  }
  // s16 is symmetric: every zero point 0. s8 context_shift above 30, s16 above 14.
  CHECK(bad(attn::DType::kS16, [](QuantFixture& f) {
          f.set_s32("block.0.quant_params", kQpQueryZeroPoint, 1);
        }) == Status::kBadQuantParams);
  CHECK(bad(attn::DType::kS16, [](QuantFixture& f) { f.set_s32("block.0.q_shift", 0, 15); }) ==
        Status::kBadQuantParams);
  CHECK(bad(attn::DType::kS8, [](QuantFixture& f) { f.set_s32("block.0.q_shift", 0, 15); }) == Status::kOk);
  CHECK(bad(attn::DType::kS8, [](QuantFixture& f) {
          f.set_s32("block.0.quant_params", kQpContextShift, 31);
        }) == Status::kBadQuantParams);
  CHECK(bad(attn::DType::kS16, [](QuantFixture& f) {
          f.set_s32("block.0.quant_params", kQpContextShift, 15);
        }) == Status::kBadQuantParams);
  // s16 scores need head_dim < 2^score_shift; s8 scores allow score_shift <= 30.
  CHECK(bad(attn::DType::kS16, [](QuantFixture& f) {
          f.set_s32("block.0.quant_params", kQpScoreShift, 2);
        }) == Status::kBadQuantParams);
  CHECK(bad(attn::DType::kS8, [](QuantFixture& f) {
          f.set_s32("block.0.quant_params", kQpScoreShift, 31);
        }) == Status::kBadQuantParams);
}

// The accumulator bound on s8/s16 biases (FORMAT.md, "Bias bound"): a file that
// passes every other check but whose bias would overflow the projection's
// accumulator (signed overflow in the kernels) is rejected, and so is the
// same bias handed to the forward directly. Fixture block 0: E = D = kdim = vdim = 8.
TEST_CASE("quantized blocks: biases that could overflow the accumulator", "[model][quant][bad][bias]") {
  const auto with_bias = [](attn::DType dt, const char* name, size_t i, int64_t v) {
    QuantFixture qf(dt);
    auto& t = qf.tensor(name);
    if (dt == attn::DType::kS8) {
      const int32_t v32 = static_cast<int32_t>(v);
      std::memcpy(t.bytes.data() + 4 * i, &v32, 4);
    } else {
      std::memcpy(t.bytes.data() + 8 * i, &v, 8);
    }
    return qf.load();
  };
  const int64_t lim8 = int64_t{INT32_MAX} - 8 * 128 * 128;
  const int64_t lim16 = INT64_MAX / 0x7FFF - int64_t{8} * 32768 * 128;
  for (const char* name : {"block.0.bq", "block.0.bk", "block.0.bv", "block.0.bo"}) {
    INFO(name);
    CHECK(with_bias(attn::DType::kS8, name, 0, INT32_MAX) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS8, name, 3, INT32_MIN) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS8, name, 1, lim8 + 1) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS8, name, 1, -lim8 - 1) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS8, name, 1, lim8) == Status::kOk);
    CHECK(with_bias(attn::DType::kS8, name, 1, -lim8) == Status::kOk);
    // An int64 bias whose high word is INT32_MIN.
    CHECK(with_bias(attn::DType::kS16, name, 0, static_cast<int64_t>(uint64_t{0x80000000u} << 32)) ==
          Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS16, name, 7, INT64_MAX) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS16, name, 2, lim16 + 1) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS16, name, 2, -lim16 - 1) == Status::kBiasOutOfRange);
    CHECK(with_bias(attn::DType::kS16, name, 2, lim16) == Status::kOk);
  }
}

// The same biases in hand-made weights: the forward's weight check returns
// kBiasOutOfRange before any kernel runs (clean under UBSan), and an in-range
// bias at the bound runs.
TEST_CASE("forward_s8 / forward_s16 refuse hand-made biases that could overflow", "[quant][bad][bias]") {
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    QuantFixture qf(dt);
    attn::AttentionConfig c{8, 2};
    attn::Plan plan;
    REQUIRE(attn::plan_attention(c, dt, 3, 3, &plan) == Status::kOk);
    AlignedCopy arena_mem(std::vector<uint8_t>(plan.arena_bytes, 0));
    attn::Arena arena;
    REQUIRE(arena.init(arena_mem.p, arena_mem.n) == Status::kOk);
    for (int proj = 0; proj < 4; ++proj) {
      INFO("projection " << proj);
      if (dt == attn::DType::kS8) {
        std::vector<int8_t> x(24, 127), y(24);
        const attn::IoS8 io{x.data(), x.data(), x.data(), y.data()};
        for (int64_t v : {int64_t{INT32_MAX}, int64_t{INT32_MIN}, int64_t{INT32_MAX} - 8 * 128 * 128}) {
          attn::WeightsS8 w = qf.s8;
          attn::ProjectionS8* p[] = {&w.q, &w.k, &w.v, &w.o};
          std::vector<int32_t> bias(p[proj]->bias, p[proj]->bias + 8);
          bias[5] = static_cast<int32_t>(v);
          p[proj]->bias = bias.data();
          const bool in_range = v == int64_t{INT32_MAX} - 8 * 128 * 128;
          CHECK(attn::forward_s8(plan, w, {}, io, arena) ==
                (in_range ? Status::kOk : Status::kBiasOutOfRange));
        }
      } else {
        std::vector<int16_t> x(24, -32768), y(24);
        const attn::IoS16 io{x.data(), x.data(), x.data(), y.data()};
        const int64_t lim16 = INT64_MAX / 0x7FFF - int64_t{8} * 32768 * 128;
        for (int64_t v : {static_cast<int64_t>(uint64_t{0x80000000u} << 32), INT64_MAX, -lim16}) {
          attn::WeightsS16 w = qf.s16;
          attn::ProjectionS16* p[] = {&w.q, &w.k, &w.v, &w.o};
          std::vector<int64_t> bias(p[proj]->bias, p[proj]->bias + 8);
          bias[5] = v;
          p[proj]->bias = bias.data();
          CHECK(attn::forward_s16(plan, w, {}, io, arena) ==
                (v == -lim16 ? Status::kOk : Status::kBiasOutOfRange));
        }
      }
    }
  }
}

// Integrity after load (flash scrubbing): Model::verify() recomputes the CRC
// on demand. Every single-bit flip of the loaded s8 file is detected: in the
// data section (the weights and tables) as kCrcMismatch, in the header's CRC
// field too, in bytes 0..7 (outside the CRC) by the loader's preamble checks.
TEST_CASE("Model::verify detects every bit flip of a loaded blob", "[model][verify]") {
  QuantFixture qf(attn::DType::kS8);
  const std::vector<uint8_t> f = attn::tools::write_model(qf.spec);
  AlignedCopy c(f);
  attn::Model m;
  CHECK(m.verify() == Status::kBadHandle);
  REQUIRE(attn::Model::load(c.p, c.n, &m) == Status::kOk);
  REQUIRE(m.verify() == Status::kOk);
  Header h;
  std::memcpy(&h, f.data(), sizeof h);
  REQUIRE(h.data_offset < f.size());
  size_t missed = 0, missed_data = 0;
  for (size_t byte = 0; byte < c.n; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      c.p[byte] ^= static_cast<uint8_t>(1u << bit);
      const Status s = m.verify();
      if (s == Status::kOk) ++missed;
      if (byte >= h.data_offset && s != Status::kCrcMismatch) ++missed_data;
      if (byte >= 8 && byte < 12) CHECK(s == Status::kCrcMismatch);
      c.p[byte] ^= static_cast<uint8_t>(1u << bit);
    }
  }
  CHECK(missed == 0);
  CHECK(missed_data == 0);
  CHECK(m.verify() == Status::kOk);
}

TEST_CASE("quantized file: every prefix is rejected cleanly", "[model][quant][bad]") {
  QuantFixture qf(attn::DType::kS8);
  const std::vector<uint8_t> f = attn::tools::write_model(qf.spec);
  REQUIRE(load_bytes(f) == Status::kOk);
  for (size_t n = 0; n < f.size(); ++n) {
    const Status s = load_bytes(std::vector<uint8_t>(f.begin(), f.begin() + static_cast<ptrdiff_t>(n)));
    if (s == Status::kOk) FAIL("prefix of " << n << " bytes loaded");
  }
}

TEST_CASE("the committed quantized fixtures load", "[model][quant]") {
  for (const char* name : {"mha_self.s8.attn", "mha_cross.s16.attn"}) {
    std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/format/quant/" + name, std::ios::binary);
    const std::vector<uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(name);
    REQUIRE(!f.empty());
    CHECK(load_bytes(f) == Status::kOk);
  }
}

// ---------------------------------------------------------------- GQA + RoPE ---

namespace {

float bits_float(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// One f32 block E=16 H=4 hd=4 with n_kv_heads K/V heads (wk wv bk bv are [n_kv*4, .]) and rope_base.
attn::tools::ModelSpec gqa_spec(uint32_t kv, float rope, bool bias, std::vector<std::vector<float>>* w) {
  attn::tools::ModelSpec spec;
  attn::tools::BlockSpec b{16, 4, 4, 16, 16, bias, attn::DType::kF32};
  b.n_kv_heads = kv;
  b.rope_base = rope;
  const size_t dkv = (kv ? kv : 4) * 4;
  const size_t n[8] = {256, dkv * 16, dkv * 16, 256, 16, dkv, dkv, 16};
  w->clear();
  for (int i = 0; i < (bias ? 8 : 4); ++i) w->push_back(ramp(n[i], 0.01f * static_cast<float>(i + 1)));
  std::vector<const std::vector<float>*> p;
  for (auto& x : *w) p.push_back(&x);
  attn::tools::add_block_f32(spec, b, p);
  return spec;
}

}  // namespace

TEST_CASE("GQA and RoPE blocks record n_kv_heads and the rope base", "[model][gqa]") {
  for (uint32_t kv : {1u, 2u}) {
    std::vector<std::vector<float>> w;
    const std::vector<uint8_t> f = attn::tools::write_model(gqa_spec(kv, 10000.0f, true, &w));
    AlignedCopy c(f);
    attn::Model m;
    REQUIRE(attn::Model::load(c.p, c.n, &m) == Status::kOk);
    CHECK(m.version() == 1);
    attn::Block b;
    REQUIRE(m.block(0, &b) == Status::kOk);
    CHECK(b.config.num_kv_heads == static_cast<int32_t>(kv));
    CHECK(b.config.rope_base == 10000.0f);
    CHECK(b.config.kv_dim() == static_cast<int32_t>(kv * 4));
    CHECK(std::memcmp(b.f32.wk, w[1].data(), w[1].size() * sizeof(float)) == 0);
    CHECK(std::memcmp(b.f32.bv, w[6].data(), w[6].size() * sizeof(float)) == 0);
  }
  // n_kv_heads == num_heads is written as 0: an MHA file stays byte-identical.
  std::vector<std::vector<float>> w;
  CHECK(attn::tools::write_model(gqa_spec(4, 0.0f, true, &w)) ==
        attn::tools::write_model(gqa_spec(0, 0.0f, true, &w)));
  // Without GQA and rope, the record reads as before: config fields zero.
  AlignedCopy c(valid_file());
  attn::Model m;
  REQUIRE(attn::Model::load(c.p, c.n, &m) == Status::kOk);
  attn::Block b;
  REQUIRE(m.block(0, &b) == Status::kOk);
  CHECK(b.config.num_kv_heads == 0);
  CHECK(b.config.rope_base == 0.0f);
}

TEST_CASE("GQA and RoPE: bad block records", "[model][gqa][bad]") {
  std::vector<std::vector<float>> w;
  const auto load_patched = [&](uint32_t kv, float rope,
                                const std::function<void(std::vector<uint8_t>&)>& patch) {
    std::vector<uint8_t> f = attn::tools::write_model(gqa_spec(kv, rope, true, &w));
    patch(f);
    attn::tools::fix_crc(f);
    return load_bytes(f);
  };
  const size_t kv_at = sizeof(Header) + offsetof(BlockRecord, n_kv_heads);
  const size_t rope_at = sizeof(Header) + offsetof(BlockRecord, rope);
  const size_t hd_at = sizeof(Header) + offsetof(BlockRecord, head_dim);
  // n_kv_heads must divide num_heads (4) and not exceed it.
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, kv_at, 3); }) == Status::kBadKvHeads);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, kv_at, 8); }) == Status::kBadKvHeads);
  // wk/wv/bk/bv are [Dkv, ...]: a file whose record disagrees with them.
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, kv_at, 1); }) == Status::kDimsMismatch);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, kv_at, 0); }) == Status::kDimsMismatch);
  CHECK(load_patched(0, 0.0f, [&](auto& f) { poke<uint32_t>(f, kv_at, 2); }) == Status::kDimsMismatch);
  // rope base: finite and > 0 (<= 1e30, as the planner); an even head_dim.
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<float>(f, rope_at, -10000.0f); }) == Status::kBadRope);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, rope_at, 0x80000000u); }) == Status::kBadRope);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, rope_at, 0x7F800000u); }) == Status::kBadRope);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, rope_at, 0x7FC00000u); }) == Status::kBadRope);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<float>(f, rope_at, 1e31f); }) == Status::kBadRope);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<float>(f, rope_at, 500000.0f); }) == Status::kOk);
  CHECK(bits_float(0x7149F2CAu) == 1e30f);
  // An odd head_dim with rope is a record error, found before the tensor dims disagree.
  CHECK(load_patched(2, 10000.0f, [&](auto& f) { poke<uint32_t>(f, hd_at, 3); }) == Status::kBadRope);
  CHECK(load_patched(2, 0.0f, [&](auto& f) { poke<uint32_t>(f, hd_at, 3); }) == Status::kDimsMismatch);
}

TEST_CASE("quantized RoPE blocks carry cos/sin tables, and the forward runs from the blob",
          "[model][rope][quant]") {
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    QuantFixture qf(dt, true, 1, 10000.0f);  // MQA + RoPE, head_dim 4: tables [5, 2]
    LoadedQuant l(qf);
    const attn::Block& b = l.block;
    CHECK(b.config.rope_base == 10000.0f);
    attn::TensorView cos, sin;
    REQUIRE(l.model.find_block_tensor(0, attn::format::Role::kRopeCos, &cos) == Status::kOk);
    REQUIRE(l.model.find_block_tensor(0, attn::format::Role::kRopeSin, &sin) == Status::kOk);
    CHECK(cos.dtype == attn::DType::kS16);
    CHECK(cos.rank == 2);
    CHECK(cos.dims[0] == 5);
    CHECK(cos.dims[1] == 2);
    const attn::RopeTable& t = dt == attn::DType::kS8 ? b.s8.rope : b.s16.rope;
    CHECK(static_cast<const void*>(t.cos) == cos.data);
    CHECK(static_cast<const void*>(t.sin) == sin.data);
    CHECK(t.positions == 5);
    CHECK(t.cos[0] == 16384);  // position 0: angle 0
    CHECK(t.sin[0] == 0);
    CHECK(t.cos[2] == 8852);   // position 1, pair 0: round(2^14 cos 1)
    CHECK(t.sin[2] == 13787);  // round(2^14 sin 1)
    check_forward_from_blob(b, qf);
    // Queries at positions 2..4 still have table rows; 3..5 do not.
    const auto check_positions = [&](auto dtype, const auto& blob) {
      using D = decltype(dtype);
      std::vector<typename D::T> y;
      CHECK(run_forward<D>(b.config, blob, &y, 2) == Status::kOk);
      CHECK(run_forward<D>(b.config, blob, &y, 3) == Status::kRopePositionOutOfRange);
    };
    if (dt == attn::DType::kS8) {
      check_positions(dtypes::S8{}, b.s8);
    } else {
      check_positions(dtypes::S16{}, b.s16);
    }
  }
}

TEST_CASE("quantized RoPE blocks: bad table shape, dtype, role and values", "[model][rope][quant][bad]") {
  using attn::format::Role;
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    const auto rope = [dt] { return QuantFixture(dt, true, 0, 10000.0f); };
    {
      QuantFixture qf = rope();
      CHECK(qf.load() == Status::kOk);
    }
    for (const char* n : {"block.0.rope_cos", "block.0.rope_sin"}) {
      INFO(n);
      {  // missing
        QuantFixture qf = rope();
        qf.erase(n);
        CHECK(qf.load() == Status::kMissingTensor);
      }
      CHECK(rope().load_with(n, retyped(attn::DType::kS32, 2)) == Status::kDtypeMismatch);  // s32, not s16
      // [5, 4]: a full head_dim wide instead of head_dim / 2
      CHECK(rope().load_reshaped(n, {5, 4}, 40) == Status::kDimsMismatch);
      CHECK(rope().load_with(n, [](attn::tools::TensorSpec& t) { t.dims = {10}; }) ==  // rank 1 [10]
            Status::kDimsMismatch);
      // one table shorter than the other: [4, 2]
      CHECK(rope().load_reshaped(n, {4, 2}, 16) == Status::kDimsMismatch);
      {  // an entry outside Q1.14's [-16384, 16384]
        QuantFixture qf = rope();
        const int16_t v = -16385;
        std::memcpy(qf.tensor(n).bytes.data() + 6, &v, 2);
        CHECK(qf.load() == Status::kBadQuantParams);
      }
    }
    {  // both tables longer (the converter's choice of positions): fine
      QuantFixture qf = rope();
      for (const char* n : {"block.0.rope_cos", "block.0.rope_sin"}) {
        auto& t = qf.tensor(n);
        t.dims = {7, 2};
        t.bytes.resize(28);
      }
      CHECK(qf.load() == Status::kOk);
    }
    {  // the same table under both roles
      QuantFixture qf = rope();
      qf.tensor("block.0.rope_sin").role = Role::kRopeCos;
      CHECK(qf.load() == Status::kDuplicateRole);
    }
    {  // rope tables in a block without rope
      QuantFixture qf = rope();
      qf.spec.blocks[0].rope_base = 0.0f;
      CHECK(qf.load() == Status::kUnknownRole);
    }
    {  // a block with rope but no tables (the record patched)
      QuantFixture qf(dt);
      std::vector<uint8_t> f = attn::tools::write_model(qf.spec);
      poke<float>(f, sizeof(Header) + offsetof(BlockRecord, rope), 10000.0f);
      attn::tools::fix_crc(f);
      CHECK(load_bytes(f) == Status::kMissingTensor);
    }
  }
  {  // rope tables in an f32 block
    std::vector<std::vector<float>> w;
    attn::tools::ModelSpec spec = gqa_spec(2, 10000.0f, true, &w);
    QuantFixture donor(attn::DType::kS8, true, 0, 10000.0f);
    spec.tensors.push_back(donor.tensor("block.0.rope_cos"));
    CHECK(load_bytes(attn::tools::write_model(spec)) == Status::kUnknownRole);
  }
  {  // role 28 is reserved
    QuantFixture qf(attn::DType::kS8, true, 0, 10000.0f);
    qf.tensor("block.0.rope_sin").role = static_cast<Role>(28);
    CHECK(qf.load() == Status::kUnknownRole);
  }
}

TEST_CASE("quantized GQA/MQA blocks: K/V tables are [Dkv], and the forward runs from the blob",
          "[model][gqa][quant]") {
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    QuantFixture qf(dt, true, 1);  // H = 2, one K/V head: Dkv = 4, D = 8
    LoadedQuant l(qf);
    const attn::Block& b = l.block;
    CHECK(b.config.num_kv_heads == 1);
    CHECK(b.config.kv_dim() == 4);
    for (const char* n : {"wk", "wv", "bk", "bv", "k_multiplier", "k_shift", "v_multiplier", "v_shift"}) {
      INFO(n);
      CHECK(qf.tensor(std::string("block.0.") + n).dims[0] == 4u);
    }
    CHECK(qf.tensor("block.0.q_multiplier").dims[0] == 8u);
    check_forward_from_blob(b, qf);
  }
}

TEST_CASE("quantized GQA/MQA blocks: tables sized for the wrong head count", "[model][gqa][quant][bad]") {
  for (attn::DType dt : {attn::DType::kS8, attn::DType::kS16}) {
    {  // the record says MQA, but the file is multi-head: every K/V tensor is [D]
      QuantFixture qf(dt);
      qf.spec.blocks[0].n_kv_heads = 1;
      CHECK(qf.load() == Status::kDimsMismatch);
    }
    // An MQA block with one K/V table of the multi-head length: each of them is caught.
    for (const char* n : {"k_multiplier", "k_shift", "v_multiplier", "v_shift", "bk", "bv"}) {
      QuantFixture qf(dt, true, 1);
      REQUIRE(qf.load() == Status::kOk);
      auto& t = qf.tensor(std::string("block.0.") + n);
      t.dims = {8};
      t.bytes.resize(t.bytes.size() * 2);
      INFO(n);
      CHECK(qf.load() == Status::kDimsMismatch);
    }
    {  // Wk of the multi-head shape [D, E]
      QuantFixture qf(dt, true, 1);
      auto& t = qf.tensor("block.0.wk");
      t.dims = {8, 8};
      t.bytes.resize(64);
      CHECK(qf.load() == Status::kDimsMismatch);
    }
    {  // n_kv_heads that does not divide the heads
      QuantFixture qf(dt, true, 1);
      std::vector<uint8_t> f = attn::tools::write_model(qf.spec);
      poke<uint32_t>(f, sizeof(Header) + offsetof(BlockRecord, n_kv_heads), 3);
      attn::tools::fix_crc(f);
      CHECK(load_bytes(f) == Status::kBadKvHeads);
    }
  }
}
