// crc32.cpp: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib).
// Half-byte table: 64 bytes of const data, two lookups per byte, no static
// constructor; hosts add a slicing-by-8 loop (below).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/model.h"

namespace attn {
namespace {

// kNibble[i]: the CRC register after shifting nibble i through 4 steps.
constexpr uint32_t kNibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

// Application processors (little-endian x86-64 / AArch64), where `attn run`
// checks multi-megabyte files: slicing-by-8, 8 KiB of tables computed at
// compile time, 8 bytes per step (the nibble loop takes about 10x longer).
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ATTN_CRC32_SLICE8 1
struct Slice8 {
  uint32_t t[8][256];  // t[0]: the byte table; t[j][i]: t[j-1][i] shifted through 8 more zero bits
};
constexpr Slice8 make_slice8() {
  Slice8 s{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    s.t[0][i] = c;
  }
  for (int j = 1; j < 8; ++j) {
    for (uint32_t i = 0; i < 256; ++i) s.t[j][i] = (s.t[j - 1][i] >> 8) ^ s.t[0][s.t[j - 1][i] & 0xFFu];
  }
  return s;
}
constexpr Slice8 kSlice8 = make_slice8();
#else
#define ATTN_CRC32_SLICE8 0
#endif

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
#if ATTN_CRC32_SLICE8
  const auto& t = kSlice8.t;
  for (; size >= 8; size -= 8, p += 8) {
    uint32_t lo = 0, hi = 0;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
  }
#endif
  for (size_t i = 0; i < size; ++i) {
    c ^= p[i];
    c = (c >> 4) ^ kNibble[c & 0xFu];
    c = (c >> 4) ^ kNibble[c & 0xFu];
  }
  return ~c;
}

}  // namespace attn
