// tokenizer/build/write_blob.cpp: a tokenizer Spec laid out as a blob
// (host only). Layout: header, piece offsets, scores, sorted index, byte
// table, byte-level merges and merge index, specials in the header, types,
// piece bytes; every u32/f32 table at a multiple of 4.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "attn/tokenizer_build.h"
#include "tokenizer/blob.h"

namespace attn {
namespace tokenizer_build {

namespace {

void put_u32(std::vector<uint8_t>* b, size_t at, uint32_t v) { std::memcpy(b->data() + at, &v, 4); }

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

int byte_value(const std::string& p) {
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = p[static_cast<size_t>(i)];
    const int d = c >= '0' && c <= '9' ? c - '0' : (c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

bool write_blob(const Spec& spec, std::vector<uint8_t>* blob, std::string* error) {
  const size_t vocab = spec.pieces.size();
  if (vocab == 0 || vocab > ATTN_TOKENIZER_MAX_VOCAB || spec.types.size() != vocab ||
      (!spec.scores.empty() && spec.scores.size() != vocab)) {
    *error = "the vocabulary is empty, too large, or its pieces, types and scores differ in count";
    return false;
  }
  size_t max_piece = 0;
  size_t piece_bytes = 0;
  for (const auto& p : spec.pieces) {
    if (p.empty() || p.size() > ATTN_TOKENIZER_MAX_PIECE) {
      *error = "piece '" + p + "' is empty or longer than ATTN_TOKENIZER_MAX_PIECE";
      return false;
    }
    max_piece = std::max(max_piece, p.size());
    piece_bytes += p.size();
  }
  std::vector<uint32_t> sorted(vocab);
  std::iota(sorted.begin(), sorted.end(), 0u);
  std::sort(sorted.begin(), sorted.end(),
            [&](uint32_t a, uint32_t b) { return spec.pieces[a] < spec.pieces[b]; });
  for (size_t i = 1; i < vocab; ++i) {
    if (spec.pieces[sorted[i - 1]] == spec.pieces[sorted[i]]) {
      *error = "piece '" + spec.pieces[sorted[i]] + "' occurs twice";
      return false;
    }
  }
  int32_t byte_ids[256];
  std::fill(byte_ids, byte_ids + 256, -1);
  bool any_byte = false;
  const bool byte_level = spec.algorithm == TokenizerAlgorithm::kByteLevelBpe;
  for (size_t i = 0; i < vocab; ++i) {
    if (byte_level) {  // the normal piece of one byte
      if (spec.types[i] == PieceType::kNormal && spec.pieces[i].size() == 1) {
        byte_ids[static_cast<uint8_t>(spec.pieces[i][0])] = static_cast<int32_t>(i);
        any_byte = true;
      }
      continue;
    }
    if (spec.types[i] != PieceType::kByte) continue;
    const int v = byte_value(spec.pieces[i]);
    if (v < 0) {
      *error = "byte piece '" + spec.pieces[i] + "' is not spelled <0xHH>";
      return false;
    }
    byte_ids[v] = static_cast<int32_t>(i);
    any_byte = true;
  }

  // Byte-level BPE: the merges, and their ranks sorted by (left, right).
  const size_t merge_count = byte_level ? spec.merges.size() : 0;
  std::vector<uint32_t> merge_index(merge_count);
  std::iota(merge_index.begin(), merge_index.end(), 0u);
  std::sort(merge_index.begin(), merge_index.end(), [&](uint32_t a, uint32_t c) {
    const auto& x = spec.merges[a];
    const auto& y = spec.merges[c];
    return x.left < y.left || (x.left == y.left && x.right < y.right);
  });
  for (size_t i = 1; i < merge_count; ++i) {
    const auto& x = spec.merges[merge_index[i - 1]];
    const auto& y = spec.merges[merge_index[i]];
    if (x.left == y.left && x.right == y.right) {
      *error = "a merge pair occurs twice";
      return false;
    }
  }

  // Offsets of the tables.
  size_t at = tok::kHeaderSize;
  const size_t offsets_off = at;
  at += 4 * (vocab + 1);
  const size_t scores_off = spec.scores.empty() ? 0 : at;
  at += 4 * spec.scores.size();
  const size_t sorted_off = at;
  at += 4 * vocab;
  const size_t byte_ids_off = any_byte ? at : 0;
  at += any_byte ? 4 * 256 : 0;
  const size_t merges_off = byte_level ? at : 0;
  at += 12 * merge_count;
  const size_t merge_index_off = byte_level ? at : 0;
  at += 4 * merge_count;
  const size_t types_off = at;
  at += vocab;
  const size_t bytes_off = at;
  at += piece_bytes;
  const size_t total = align4(at);
  if (total > UINT32_MAX) {
    *error = "the blob would exceed 4 GiB";
    return false;
  }

  std::vector<uint8_t>& b = *blob;
  b.assign(total, 0);
  put_u32(&b, tok::kFieldMagic, tok::kMagic);
  put_u32(&b, tok::kFieldVersion, tok::kVersion);
  put_u32(&b, tok::kFieldHeaderSize, tok::kHeaderSize);
  put_u32(&b, tok::kFieldTotalSize, static_cast<uint32_t>(total));
  put_u32(&b, tok::kFieldAlgorithm, static_cast<uint32_t>(spec.algorithm));
  put_u32(&b, tok::kFieldFlags, spec.flags);
  put_u32(&b, tok::kFieldVocabSize, static_cast<uint32_t>(vocab));
  put_u32(&b, tok::kFieldMaxPieceLen, static_cast<uint32_t>(max_piece));
  put_u32(&b, tok::kFieldPieceOffsetsOff, static_cast<uint32_t>(offsets_off));
  put_u32(&b, tok::kFieldPieceBytesOff, static_cast<uint32_t>(bytes_off));
  put_u32(&b, tok::kFieldPieceBytesSize, static_cast<uint32_t>(piece_bytes));
  put_u32(&b, tok::kFieldScoresOff, static_cast<uint32_t>(scores_off));
  put_u32(&b, tok::kFieldTypesOff, static_cast<uint32_t>(types_off));
  put_u32(&b, tok::kFieldSortedOff, static_cast<uint32_t>(sorted_off));
  put_u32(&b, tok::kFieldByteIdsOff, static_cast<uint32_t>(byte_ids_off));
  if (spec.algorithm == TokenizerAlgorithm::kWordPiece) {
    put_u32(&b, tok::kFieldMaxWordChars, spec.max_word_chars);
  }
  for (size_t k = 0; k < static_cast<size_t>(SpecialToken::kCount); ++k) {
    put_u32(&b, tok::kFieldSpecials + 4 * k, static_cast<uint32_t>(spec.specials[k]));
  }
  size_t off = 0;
  for (size_t i = 0; i < vocab; ++i) {
    put_u32(&b, offsets_off + 4 * i, static_cast<uint32_t>(off));
    std::memcpy(b.data() + bytes_off + off, spec.pieces[i].data(), spec.pieces[i].size());
    off += spec.pieces[i].size();
    b[types_off + i] = static_cast<uint8_t>(spec.types[i]);
    put_u32(&b, sorted_off + 4 * i, sorted[i]);
  }
  put_u32(&b, offsets_off + 4 * vocab, static_cast<uint32_t>(off));
  if (!spec.scores.empty()) std::memcpy(b.data() + scores_off, spec.scores.data(), 4 * vocab);
  if (any_byte) std::memcpy(b.data() + byte_ids_off, byte_ids, sizeof(byte_ids));
  if (byte_level) {
    put_u32(&b, tok::kFieldMergesOff, static_cast<uint32_t>(merges_off));
    put_u32(&b, tok::kFieldMergeCount, static_cast<uint32_t>(merge_count));
    put_u32(&b, tok::kFieldMergeIndexOff, static_cast<uint32_t>(merge_index_off));
    put_u32(&b, tok::kFieldByteLevelSplit,
            static_cast<uint32_t>(spec.split) | (spec.add_prefix_space ? tok::kByteLevelAddPrefixSpace : 0u) |
                (spec.ignore_merges ? tok::kByteLevelIgnoreMerges : 0u));
    for (size_t r = 0; r < merge_count; ++r) {
      const auto& m = spec.merges[r];
      put_u32(&b, merges_off + 12 * r, static_cast<uint32_t>(m.left));
      put_u32(&b, merges_off + 12 * r + 4, static_cast<uint32_t>(m.right));
      put_u32(&b, merges_off + 12 * r + 8, static_cast<uint32_t>(m.result));
      put_u32(&b, merge_index_off + 4 * r, merge_index[r]);
    }
  }
  return true;
}

bool spec_bytes(const std::vector<std::string>& specials, Spec* spec, std::string* error) {
  *spec = Spec();
  spec->algorithm = TokenizerAlgorithm::kBytes;
  static const char kHex[] = "0123456789ABCDEF";
  for (int v = 0; v < 256; ++v) {
    spec->pieces.push_back(std::string("<0x") + kHex[v / 16] + kHex[v % 16] + ">");
    spec->types.push_back(PieceType::kByte);
  }
  for (const auto& s : specials) {
    if (s.empty()) {
      *error = "an empty special piece";
      return false;
    }
    spec->pieces.push_back(s);
    spec->types.push_back(PieceType::kControl);
  }
  return true;
}

}  // namespace tokenizer_build
}  // namespace attn
