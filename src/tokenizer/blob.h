// tokenizer/blob.h: the tokenizer blob's header, field by field (the
// layout: src/tokenizer/README.md). Shared by the loader and the host-side
// builders, so both spell the same offsets.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {
namespace tok {

constexpr uint32_t kMagic = 0x4B4F5441u;  // "ATOK" as bytes
constexpr uint32_t kVersion = 1;
constexpr uint32_t kHeaderSize = 128;

// Byte offsets of the header's little-endian u32 / i32 fields.
enum HeaderField : size_t {
  kFieldMagic = 0,
  kFieldVersion = 4,
  kFieldHeaderSize = 8,
  kFieldTotalSize = 12,
  kFieldAlgorithm = 16,
  kFieldFlags = 20,
  kFieldVocabSize = 24,
  kFieldMaxPieceLen = 28,
  kFieldPieceOffsetsOff = 32,  // (vocab_size + 1) u32
  kFieldPieceBytesOff = 36,
  kFieldPieceBytesSize = 40,
  kFieldScoresOff = 44,     // vocab_size f32, 0: none
  kFieldTypesOff = 48,      // vocab_size u8
  kFieldSortedOff = 52,     // vocab_size u32
  kFieldByteIdsOff = 56,    // 256 i32, 0: none
  kFieldReserved0 = 60,     // zero
  kFieldSpecials = 64,      // 8 i32: unk, bos, eos, pad, cls, sep, mask, (reserved: -1)
  kFieldReservedTail = 96,  // 32 zero bytes up to kHeaderSize, except the algorithm fields below
  // Byte-level BPE (kByteLevelBpe) fields: 96 .. 111 (zero for other algorithms).
  kFieldByteLevelFirst = 96,
  kFieldMergesOff = 96,        // merge_count x (left, right, result) i32, by rank
  kFieldMergeCount = 100,      // merge_count
  kFieldMergeIndexOff = 104,   // merge_count u32 ranks, ascending by (left, right)
  kFieldByteLevelSplit = 108,  // ByteLevelSplit in bits 0..7, kByteLevelAddPrefixSpace
  // WordPiece (kWordPiece) fields: 112 .. 127 (zero for other algorithms).
  kFieldWordPieceFirst = 112,
  kFieldMaxWordChars = 112,       // u32 max_input_chars_per_word, 1..ATTN_TOKENIZER_MAX_WORD_CHARS
  kFieldWordPieceReserved = 116,  // 12 zero bytes up to kHeaderSize
};

// The byte-level split field: bits 0..7 the ByteLevelSplit, bit 8
// add_prefix_space (a text not starting with ' ' gets one), bit 9
// ignore_merges (a chunk that is a normal piece is that piece, as Hugging
// Face's BPE with ignore_merges: Llama 3), the rest zero.
constexpr uint32_t kByteLevelSplitMask = 0xFFu;
constexpr uint32_t kByteLevelAddPrefixSpace = 1u << 8;
constexpr uint32_t kByteLevelIgnoreMerges = 1u << 9;
constexpr uint32_t kByteLevelKnownBits =
    kByteLevelSplitMask | kByteLevelAddPrefixSpace | kByteLevelIgnoreMerges;

}  // namespace tok
}  // namespace attn
