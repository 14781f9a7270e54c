// crc32.cpp: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib).
// Half-byte table: 64 bytes of const data, two lookups per byte, no static
// constructor.
#include <cstddef>
#include <cstdint>

#include "attn/model.h"

namespace attn {
namespace {

// kNibble[i]: the CRC register after shifting nibble i through 4 steps.
constexpr uint32_t kNibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < size; ++i) {
    c ^= p[i];
    c = (c >> 4) ^ kNibble[c & 0xFu];
    c = (c >> 4) ^ kNibble[c & 0xFu];
  }
  return ~c;
}

}  // namespace attn
