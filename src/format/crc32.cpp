// crc32.cpp: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib).
// The loader checks a model's CRC over the whole file, so its speed is the
// start-up's on a host. Three paths, chosen at compile time by the target
// (and on x86-64 at run time by the CPU):
//   every target     a half-byte table: 64 bytes of const data, two lookups
//                    per byte, no static constructor. Cortex-M (and any other
//                    target not below) keeps only this: its flash is worth
//                    more than the CRC's speed, and a model in flash is
//                    checked once, if at all, per boot
//   x86-64, AArch64  slicing-by-8: 8 KiB of tables computed at compile time,
//                    8 bytes per step (about 8x the half-byte loop)
//   x86-64 + PCLMUL  carry-less multiplication folding 64 bytes per step
//                    (about 5x slicing-by-8: memory speed), picked by CPUID
//                    through kernels/x86/cpu_x86.h; the other two finish the
//                    last 0-15 bytes
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/model.h"
#include "kernels/arch.h"
#include "kernels/x86/cpu_x86.h"

#if ATTN_X86_64
#include <wmmintrin.h>  // _mm_clmulepi64_si128 (compiled for PCLMUL by the function's target attribute)
#endif

namespace attn {
namespace {

// kNibble[i]: the CRC register after shifting nibble i through 4 steps.
constexpr uint32_t kNibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

// Application processors (little-endian x86-64 / AArch64), where the CLI
// checks multi-megabyte files: slicing-by-8.
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

#if ATTN_X86_64
// The CRC register `c` (complemented, as in crc32 below) after the n bytes
// at p, n >= 64 and a multiple of 16, by folding with PCLMULQDQ (V. Gopal et
// al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction", Intel, 2009). Four 128-bit lanes take 64 bytes per step:
// each lane L becomes L.lo * k1 ^ L.hi * k2 ^ (the next 16 bytes), which
// moves it 512 bits on modulo P. Then the lanes fold into one (k3, k4: 128
// bits on), that one to 64 bits (k4, k5), and Barrett reduction (mu, P) gives
// the 32-bit remainder. Bit-reflected constants, each x^n mod P reflected
// over 32 bits and shifted left by one: k1 = x^(512+32), k2 = x^(512-32),
// k3 = x^(128+32), k4 = x^(128-32), k5 = x^64; mu = floor(x^64 / P) and P
// reflected over 33 bits.
#define ATTN_PCLMUL __attribute__((target("pclmul")))
ATTN_PCLMUL __m128i load(const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); }
// a.lo * k.lo ^ a.hi * k.hi ^ b: lane a moved on by k, plus b.
ATTN_PCLMUL __m128i fold(__m128i a, __m128i k, __m128i b) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11)), b);
}
ATTN_PCLMUL uint32_t crc32_clmul(const uint8_t* p, size_t n, uint32_t c) {
  const __m128i k1k2 = _mm_set_epi64x(0x1C6E41596, 0x154442BD4);
  const __m128i k3k4 = _mm_set_epi64x(0x0CCAA009E, 0x1751997D0);
  const __m128i k5 = _mm_set_epi64x(0, 0x163CD6124);
  const __m128i poly = _mm_set_epi64x(0x1F7011641, 0x1DB710641);  // hi: mu, lo: P
  const __m128i low32 = _mm_set_epi32(0, -1, 0, -1);
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(c)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; n -= 64, p += 64) {
    x0 = fold(x0, k1k2, load(p));
    x1 = fold(x1, k1k2, load(p + 16));
    x2 = fold(x2, k1k2, load(p + 32));
    x3 = fold(x3, k1k2, load(p + 48));
  }
  x0 = fold(x0, k3k4, x1);
  x0 = fold(x0, k3k4, x2);
  x0 = fold(x0, k3k4, x3);
  for (; n >= 16; n -= 16, p += 16) x0 = fold(x0, k3k4, load(p));
  // 128 -> 64 bits: the low half times k4 onto the high half, then the low 32 bits times k5.
  x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), _mm_clmulepi64_si128(x0, k3k4, 0x10));
  x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), _mm_clmulepi64_si128(_mm_and_si128(x0, low32), k5, 0x00));
  // Barrett: q = (low 32 bits * mu) mod x^32, remainder = x0 ^ q * P (its bits 32..63).
  __m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), poly, 0x10), low32);
  x0 = _mm_xor_si128(x0, _mm_clmulepi64_si128(q, poly, 0x00));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(x0, 4)));
}
#undef ATTN_PCLMUL
#endif

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
#if ATTN_X86_64
  if (size >= 64 && detail::x86_runs(detail::kCpuPclmul)) {
    const size_t n = size & ~size_t{15};
    c = crc32_clmul(p, n, c);
    p += n;
    size -= n;
  }
#endif
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
