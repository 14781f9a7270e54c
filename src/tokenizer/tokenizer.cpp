// tokenizer/tokenizer.cpp: Tokenizer::load (every check of the blob), piece
// lookup, and the streaming decode.
#include <cstring>

#include "attn/tokenizer.h"
#include "tokenizer/blob.h"
#include "tokenizer/utf8.h"

namespace attn {

namespace {

uint32_t read_u32(const uint8_t* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return v;  // the blob is little-endian, as every target of the library
}

// The table [off, off + count * elem) inside the blob and 4-byte aligned.
Status check_table(uint32_t off, uint64_t count, uint64_t elem, size_t size, bool aligned) {
  const uint64_t bytes = count * elem;  // count < 2^25, elem <= 4: no overflow
  if (off < tok::kHeaderSize || off > size || bytes > size - off) return Status::kOffsetOutOfBounds;
  if (aligned && off % 4 != 0) return Status::kTableMisaligned;
  return Status::kOk;
}

// Bytewise three-way compare of a[0, an) and b[0, bn).
int compare_bytes(const char* a, size_t an, const char* b, size_t bn) {
  const size_t m = an < bn ? an : bn;
  const int c = m == 0 ? 0 : std::memcmp(a, b, m);
  if (c != 0) return c;
  return an < bn ? -1 : (an > bn ? 1 : 0);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte a piece spelled "<0xHH>" (upper-case hex) stands for, or -1.
int byte_piece_value(const char* s, size_t len) {
  if (len != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') return -1;
  const int hi = hex_digit(s[3]);
  const int lo = hex_digit(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Byte-level BPE merges: each (left, right, result) names normal pieces and
// result's bytes are left's then right's (kBadMerges); the index holds each
// rank once, ascending by (left, right), so lookups are a binary search
// (kUnsortedMerges).
Status check_merges_table(const int32_t* merges, const uint32_t* index, uint32_t count, uint32_t vocab,
                          const uint8_t* types, const uint32_t* offsets, const char* bytes) {
  auto normal = [&](int32_t id) {
    return id >= 0 && static_cast<uint32_t>(id) < vocab &&
           types[id] == static_cast<uint8_t>(PieceType::kNormal);
  };
  for (uint32_t r = 0; r < count; ++r) {
    const int32_t l = merges[3 * r];
    const int32_t rt = merges[3 * r + 1];
    const int32_t res = merges[3 * r + 2];
    if (!normal(l) || !normal(rt) || !normal(res)) return Status::kBadMerges;
    const uint32_t ll = offsets[l + 1] - offsets[l];
    const uint32_t rl = offsets[rt + 1] - offsets[rt];
    if (offsets[res + 1] - offsets[res] != ll + rl) return Status::kBadMerges;
    const char* p = bytes + offsets[res];
    if (std::memcmp(p, bytes + offsets[l], ll) != 0 || std::memcmp(p + ll, bytes + offsets[rt], rl) != 0) {
      return Status::kBadMerges;
    }
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (index[i] >= count) return Status::kUnsortedMerges;
    if (i == 0) continue;
    const int32_t* a = merges + 3 * size_t{index[i - 1]};
    const int32_t* c = merges + 3 * size_t{index[i]};
    if (a[0] > c[0] || (a[0] == c[0] && a[1] >= c[1])) return Status::kUnsortedMerges;
  }
  return Status::kOk;
}

constexpr char kUnknownSurface[] = " \xE2\x81\x87 ";  // " U+2047 ", as SentencePiece writes <unk>

}  // namespace

Status Tokenizer::load(const void* blob, size_t size, Tokenizer* out) {
  if (blob == nullptr || out == nullptr) return Status::kNullArgument;
  *out = Tokenizer();
  if (reinterpret_cast<uintptr_t>(blob) % 4 != 0) return Status::kBlobMisaligned;
  const auto* b = static_cast<const uint8_t*>(blob);
  if (size < tok::kHeaderSize) return Status::kTruncated;
  if (read_u32(b + tok::kFieldMagic) != tok::kMagic) return Status::kBadMagic;
  const uint32_t version = read_u32(b + tok::kFieldVersion);
  if (version == 0 || version > tok::kVersion) return Status::kUnsupportedVersion;
  if (read_u32(b + tok::kFieldHeaderSize) != tok::kHeaderSize) return Status::kBadHeaderSize;
  const uint32_t total = read_u32(b + tok::kFieldTotalSize);
  if (total > size) return Status::kTruncated;
  if (total != size) return Status::kFileSizeMismatch;
  const uint32_t algorithm = read_u32(b + tok::kFieldAlgorithm);
  if (algorithm != static_cast<uint32_t>(TokenizerAlgorithm::kBytes) &&
      algorithm != static_cast<uint32_t>(TokenizerAlgorithm::kSentencePieceBpe) &&
      algorithm != static_cast<uint32_t>(TokenizerAlgorithm::kByteLevelBpe) &&
      algorithm != static_cast<uint32_t>(TokenizerAlgorithm::kWordPiece)) {
    return Status::kBadTokenizerAlgorithm;
  }
  const bool byte_level = algorithm == static_cast<uint32_t>(TokenizerAlgorithm::kByteLevelBpe);
  const bool wordpiece = algorithm == static_cast<uint32_t>(TokenizerAlgorithm::kWordPiece);
  if (read_u32(b + tok::kFieldReserved0) != 0) return Status::kBadReserved;
  // The algorithms' header fields (byte-level BPE's 96..111, WordPiece's
  // max_input_chars_per_word at 112) are zero for the other algorithms, as
  // is the rest.
  for (size_t i = tok::kFieldReservedTail; i < tok::kHeaderSize; ++i) {
    if (byte_level && i >= tok::kFieldByteLevelFirst && i < tok::kFieldWordPieceFirst) continue;
    if (wordpiece && i >= tok::kFieldMaxWordChars && i < tok::kFieldWordPieceReserved) continue;
    if (b[i] != 0) return Status::kBadReserved;
  }
  const uint32_t max_word_chars = read_u32(b + tok::kFieldMaxWordChars);
  if (wordpiece && (max_word_chars == 0 || max_word_chars > ATTN_TOKENIZER_MAX_WORD_CHARS)) {
    return Status::kBadWordLimit;
  }
  const uint32_t flags = read_u32(b + tok::kFieldFlags);
  if ((flags & ~kTokKnownFlags) != 0) return Status::kUnknownFlags;
  // The WordPiece options are WordPiece's alone, and WordPiece takes no other.
  if ((flags & kTokWordPieceFlags) != 0 && !wordpiece) return Status::kUnknownFlags;
  if (wordpiece && (flags & ~kTokWordPieceFlags) != 0) return Status::kUnknownFlags;
  const uint32_t vocab = read_u32(b + tok::kFieldVocabSize);
  if (vocab == 0 || vocab > ATTN_TOKENIZER_MAX_VOCAB) return Status::kBadVocab;
  const uint32_t max_piece = read_u32(b + tok::kFieldMaxPieceLen);
  if (max_piece == 0 || max_piece > ATTN_TOKENIZER_MAX_PIECE) return Status::kBadPieceLength;

  // Tables: inside the blob, aligned.
  const uint32_t offsets_off = read_u32(b + tok::kFieldPieceOffsetsOff);
  const uint32_t bytes_off = read_u32(b + tok::kFieldPieceBytesOff);
  const uint32_t bytes_size = read_u32(b + tok::kFieldPieceBytesSize);
  const uint32_t scores_off = read_u32(b + tok::kFieldScoresOff);
  const uint32_t types_off = read_u32(b + tok::kFieldTypesOff);
  const uint32_t sorted_off = read_u32(b + tok::kFieldSortedOff);
  const uint32_t byte_ids_off = read_u32(b + tok::kFieldByteIdsOff);
  ATTN_TRY(check_table(offsets_off, uint64_t{vocab} + 1, 4, size, true));
  ATTN_TRY(check_table(bytes_off, bytes_size, 1, size, false));
  ATTN_TRY(check_table(types_off, vocab, 1, size, false));
  ATTN_TRY(check_table(sorted_off, vocab, 4, size, true));
  if (scores_off != 0) ATTN_TRY(check_table(scores_off, vocab, 4, size, true));
  if (byte_ids_off != 0) ATTN_TRY(check_table(byte_ids_off, 256, 4, size, true));
  const uint32_t merges_off = read_u32(b + tok::kFieldMergesOff);
  const uint32_t merge_count = read_u32(b + tok::kFieldMergeCount);
  const uint32_t merge_index_off = read_u32(b + tok::kFieldMergeIndexOff);
  const uint32_t split = read_u32(b + tok::kFieldByteLevelSplit);
  if (byte_level) {
    ATTN_TRY(check_table(merges_off, uint64_t{merge_count} * 3, 4, size, true));
    ATTN_TRY(check_table(merge_index_off, merge_count, 4, size, true));
    const uint32_t kind = split & tok::kByteLevelSplitMask;
    if ((split & ~tok::kByteLevelKnownBits) != 0 || kind < static_cast<uint32_t>(ByteLevelSplit::kGpt2) ||
        kind > static_cast<uint32_t>(ByteLevelSplit::kLlama3)) {
      return Status::kBadPreTokenizer;
    }
    // Byte-level BPE has no normalization flags: its options are in the split field.
    if (flags != 0) return Status::kUnknownFlags;
  }

  Tokenizer t;
  t.algorithm_ = static_cast<TokenizerAlgorithm>(algorithm);
  t.flags_ = flags;
  t.vocab_size_ = vocab;
  t.max_piece_len_ = max_piece;
  t.max_word_chars_ = wordpiece ? max_word_chars : 0;
  t.piece_offsets_ = reinterpret_cast<const uint32_t*>(b + offsets_off);
  t.piece_bytes_ = reinterpret_cast<const char*>(b + bytes_off);
  t.types_ = b + types_off;
  t.sorted_ = reinterpret_cast<const uint32_t*>(b + sorted_off);
  t.scores_ = scores_off != 0 ? reinterpret_cast<const float*>(b + scores_off) : nullptr;
  t.byte_ids_ = byte_ids_off != 0 ? reinterpret_cast<const int32_t*>(b + byte_ids_off) : nullptr;
  t.specials_ = reinterpret_cast<const int32_t*>(b + tok::kFieldSpecials);
  t.blob_ = b;

  // Pieces: offsets from 0 to bytes_size, each piece 1..max_piece bytes.
  if (t.piece_offsets_[0] != 0 || t.piece_offsets_[vocab] != bytes_size) return Status::kBadPieceOffsets;
  for (uint32_t i = 0; i < vocab; ++i) {
    if (t.piece_offsets_[i + 1] < t.piece_offsets_[i]) return Status::kBadPieceOffsets;
  }
  for (uint32_t i = 0; i < vocab; ++i) {
    const uint32_t l = t.piece_offsets_[i + 1] - t.piece_offsets_[i];
    if (l == 0 || l > max_piece) return Status::kBadPieceLength;
  }
  // Types, and every byte piece spelled <0xHH>. Byte-level BPE spells every
  // byte as text: no byte or unknown pieces.
  for (uint32_t i = 0; i < vocab; ++i) {
    if (t.types_[i] > static_cast<uint8_t>(PieceType::kUnknown)) return Status::kBadPieceType;
    if (byte_level && t.types_[i] != static_cast<uint8_t>(PieceType::kNormal) &&
        t.types_[i] != static_cast<uint8_t>(PieceType::kControl)) {
      return Status::kBadPieceType;
    }
    if (t.types_[i] == static_cast<uint8_t>(PieceType::kByte)) {
      const char* s = t.piece_bytes_ + t.piece_offsets_[i];
      if (byte_piece_value(s, t.piece_offsets_[i + 1] - t.piece_offsets_[i]) < 0)
        return Status::kBadPieceType;
    }
  }
  // The sorted index: ids in range, pieces strictly increasing (so each id
  // appears once, and find_piece() is a binary search).
  for (uint32_t i = 0; i < vocab; ++i) {
    if (t.sorted_[i] >= vocab) return Status::kUnsortedPieces;
    if (i > 0) {
      const uint32_t p = t.sorted_[i - 1];
      const uint32_t q = t.sorted_[i];
      if (compare_bytes(t.piece_bytes_ + t.piece_offsets_[p], t.piece_offsets_[p + 1] - t.piece_offsets_[p],
                        t.piece_bytes_ + t.piece_offsets_[q],
                        t.piece_offsets_[q + 1] - t.piece_offsets_[q]) >= 0) {
        return Status::kUnsortedPieces;
      }
    }
  }
  if (t.scores_ != nullptr) {
    for (uint32_t i = 0; i < vocab; ++i) {  // not NaN or infinite: exponent bits not all ones
      uint32_t bits = 0;
      std::memcpy(&bits, t.scores_ + i, sizeof(bits));
      if ((bits & 0x7F800000u) == 0x7F800000u) return Status::kBadScore;
    }
  }
  // Special tokens: -1 or in range; unk of type unknown, the others control.
  for (uint32_t k = 0; k < static_cast<uint32_t>(SpecialToken::kCount); ++k) {
    const int32_t id = t.specials_[k];
    if (id == -1) continue;
    if (id < 0 || static_cast<uint32_t>(id) >= vocab) return Status::kBadSpecialToken;
    const auto type = static_cast<PieceType>(t.types_[id]);
    if (k == static_cast<uint32_t>(SpecialToken::kUnk) ? type != PieceType::kUnknown
                                                       : type != PieceType::kControl) {
      return Status::kBadSpecialToken;
    }
  }
  // The byte table: -1 or the <0xHH> byte piece of its own byte (byte-level
  // BPE: the normal piece that is that one byte).
  if (t.byte_ids_ != nullptr) {
    const auto want = byte_level ? PieceType::kNormal : PieceType::kByte;
    for (int v = 0; v < 256; ++v) {
      const int32_t id = t.byte_ids_[v];
      if (id == -1) continue;
      if (id < 0 || static_cast<uint32_t>(id) >= vocab || t.types_[id] != static_cast<uint8_t>(want)) {
        return Status::kBadByteTable;
      }
      const char* s = t.piece_bytes_ + t.piece_offsets_[id];
      const size_t l = t.piece_offsets_[id + 1] - t.piece_offsets_[id];
      if (byte_level ? (l != 1 || static_cast<uint8_t>(s[0]) != v) : byte_piece_value(s, l) != v)
        return Status::kBadByteTable;
    }
  }
  // What each algorithm needs.
  const bool every_byte = [&] {
    if (t.byte_ids_ == nullptr) return false;
    for (int v = 0; v < 256; ++v) {
      if (t.byte_ids_[v] < 0) return false;
    }
    return true;
  }();
  if (t.algorithm_ == TokenizerAlgorithm::kBytes && !every_byte) return Status::kBadByteTable;
  if (t.algorithm_ == TokenizerAlgorithm::kSentencePieceBpe) {
    if (t.scores_ == nullptr) return Status::kBadScore;
    if ((flags & kTokByteFallback) != 0 && !every_byte) return Status::kBadByteTable;
    if ((flags & kTokByteFallback) == 0 && t.specials_[static_cast<uint32_t>(SpecialToken::kUnk)] < 0) {
      return Status::kBadSpecialToken;
    }
  }
  if (byte_level) {
    if (!every_byte) return Status::kBadByteTable;
    ATTN_TRY(check_merges_table(reinterpret_cast<const int32_t*>(b + merges_off),
                                reinterpret_cast<const uint32_t*>(b + merge_index_off), merge_count, vocab,
                                t.types_, t.piece_offsets_, t.piece_bytes_));
  }
  // WordPiece: a word no pieces spell is [UNK], so unk is required; scores
  // and byte pieces mean nothing to it.
  if (t.algorithm_ == TokenizerAlgorithm::kWordPiece) {
    if (t.specials_[static_cast<uint32_t>(SpecialToken::kUnk)] < 0) return Status::kBadSpecialToken;
    if (t.scores_ != nullptr) return Status::kBadScore;
    if (t.byte_ids_ != nullptr) return Status::kBadByteTable;
  }
  *out = t;
  return Status::kOk;
}

int32_t Tokenizer::special(SpecialToken which) const {
  const auto k = static_cast<uint32_t>(which);
  return specials_ == nullptr || k >= static_cast<uint32_t>(SpecialToken::kCount) ? -1 : specials_[k];
}

Status Tokenizer::piece(int32_t id, const char** bytes, size_t* len, PieceType* type) const {
  if (bytes == nullptr || len == nullptr) return Status::kNullArgument;
  if (id < 0 || static_cast<uint32_t>(id) >= vocab_size_) return Status::kTokenOutOfRange;
  *bytes = piece_bytes_ + piece_offsets_[id];
  *len = piece_offsets_[id + 1] - piece_offsets_[id];
  if (type != nullptr) *type = static_cast<PieceType>(types_[id]);
  return Status::kOk;
}

int32_t Tokenizer::find_piece(const char* s, size_t len) const {
  if (sorted_ == nullptr || len == 0 || len > max_piece_len_) return -1;
  size_t lo = 0;
  size_t hi = vocab_size_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint32_t id = sorted_[mid];
    const int c =
        compare_bytes(piece_bytes_ + piece_offsets_[id], piece_offsets_[id + 1] - piece_offsets_[id], s, len);
    if (c == 0) return static_cast<int32_t>(id);
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

Status Tokenizer::encode(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch,
                         size_t* n) const {
  if (n == nullptr || (text == nullptr && len != 0) || (ids == nullptr && max_ids != 0)) {
    return Status::kNullArgument;
  }
  *n = 0;
  if (sorted_ == nullptr) return Status::kBadHandle;
  switch (algorithm_) {
    case TokenizerAlgorithm::kBytes:
      return encode_bytes(text, len, ids, max_ids, n);
    case TokenizerAlgorithm::kSentencePieceBpe:
      if (scratch == nullptr) return Status::kNullArgument;
      return encode_spm_bpe(text, len, ids, max_ids, scratch, n);
    case TokenizerAlgorithm::kByteLevelBpe:
      if (scratch == nullptr) return Status::kNullArgument;
      return encode_byte_level_bpe(text, len, ids, max_ids, scratch, n);
    case TokenizerAlgorithm::kWordPiece:
      if (scratch == nullptr) return Status::kNullArgument;
      return encode_wordpiece(text, len, ids, max_ids, scratch, n);
  }
  return Status::kBadTokenizerAlgorithm;
}

Status Tokenizer::encode_bytes(const char* text, size_t len, int32_t* ids, size_t max_ids, size_t* n) const {
  if (len > max_ids) return Status::kBufferTooSmall;
  for (size_t i = 0; i < len; ++i) ids[i] = byte_ids_[static_cast<uint8_t>(text[i])];
  *n = len;
  return Status::kOk;
}

size_t Tokenizer::max_ids(size_t text_len) const {
  // WordPiece: a word's ids are at most its characters after folding, and
  // no code point folds to more code points than its UTF-8 bytes.
  if (algorithm_ == TokenizerAlgorithm::kBytes || algorithm_ == TokenizerAlgorithm::kWordPiece)
    return text_len;
  if (algorithm_ == TokenizerAlgorithm::kByteLevelBpe) {
    // One id per byte at most, and the prefix space.
    if (text_len == SIZE_MAX) return SIZE_MAX;
    const bool prefix = (read_u32(blob_ + tok::kFieldByteLevelSplit) & tok::kByteLevelAddPrefixSpace) != 0;
    return text_len == 0 ? 0 : text_len + (prefix ? 1 : 0);
  }
  // SentencePiece: every byte of the normalized text (a space grows to the
  // 3 bytes of U+2581, the dummy prefix adds one) can become one byte piece.
  const size_t per = (flags_ & kTokEscapeSpaces) != 0 ? 3 : 1;
  if (text_len > (SIZE_MAX - 3) / per) return SIZE_MAX;
  return text_len == 0 ? 0 : text_len * per + ((flags_ & kTokAddDummyPrefix) != 0 ? per : 0);
}

// ------------------------------------------------------------- decoding ---

namespace {

// Writes bytes into out[*w, cap) if they fit; the caller checks the room first.
void put(char* out, size_t* w, const char* s, size_t len) {
  std::memcpy(out + *w, s, len);
  *w += len;
}

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// One byte through the UTF-8 assembler in *st: a whole character is
// written, a byte that cannot start or continue one becomes U+FFFD (and so
// does each byte of a character it cuts short). Returns the bytes written
// to out[w...] (at most 15), or only counts them when out is null.
size_t feed_byte(TokenizerDecodeState* st, uint8_t v, char* out, size_t w) {
  const size_t w0 = w;
  auto emit = [&](const char* s, size_t len) {
    if (out != nullptr) std::memcpy(out + w, s, len);
    w += len;
  };
  if (st->pending_len > 0 && !utf8::is_continuation(v)) {
    for (uint8_t i = 0; i < st->pending_len; ++i) emit(kReplacement, 3);
    st->pending_len = 0;
  }
  if (st->pending_len == 0) {
    const size_t need = utf8::sequence_length(v);
    if (need == 0) {
      emit(kReplacement, 3);  // a stray continuation or an invalid first byte
    } else if (need == 1) {
      const char c = static_cast<char>(v);
      emit(&c, 1);
    } else {
      st->pending[0] = v;
      st->pending_len = 1;
      st->pending_need = static_cast<uint8_t>(need);
    }
  } else {
    st->pending[st->pending_len++] = v;
    if (st->pending_len == st->pending_need) {
      if (utf8::valid_sequence(st->pending, st->pending_len)) {
        emit(reinterpret_cast<const char*>(st->pending), st->pending_len);
      } else {
        for (uint8_t i = 0; i < st->pending_len; ++i) emit(kReplacement, 3);
      }
      st->pending_len = 0;
      st->pending_need = 0;
    }
  }
  if (w > w0) st->started = 1;
  return w - w0;
}

}  // namespace

Status Tokenizer::decode_flush(TokenizerDecodeState* state, char* out, size_t cap, size_t* n) const {
  if (state == nullptr || n == nullptr || (out == nullptr && cap != 0)) return Status::kNullArgument;
  *n = 0;
  const size_t need = size_t{state->pending_len} * 3;
  if (need > cap) return Status::kBufferTooSmall;
  for (uint8_t i = 0; i < state->pending_len; ++i) put(out, n, kReplacement, 3);
  if (state->pending_len > 0) state->started = 1;
  state->pending_len = 0;
  state->pending_need = 0;
  return Status::kOk;
}

Status Tokenizer::decode(int32_t id, TokenizerDecodeState* state, char* out, size_t cap, size_t* n) const {
  if (state == nullptr || n == nullptr || (out == nullptr && cap != 0)) return Status::kNullArgument;
  *n = 0;
  if (sorted_ == nullptr) return Status::kBadHandle;
  if (id < 0 || static_cast<uint32_t>(id) >= vocab_size_) return Status::kTokenOutOfRange;
  const auto type = static_cast<PieceType>(types_[id]);
  const char* s = piece_bytes_ + piece_offsets_[id];
  const size_t len = piece_offsets_[id + 1] - piece_offsets_[id];
  if (type == PieceType::kControl) return Status::kOk;
  if (algorithm_ == TokenizerAlgorithm::kWordPiece) return decode_wordpiece(s, len, state, out, cap, n);

  if (type == PieceType::kByte) {
    // Gather the byte; write a whole character, or U+FFFD for each byte
    // that cannot be part of one. Worst case: 4 pending bad bytes + 1 = 15 bytes.
    const auto v = static_cast<uint8_t>(byte_piece_value(s, len));
    if (15 > cap) return Status::kBufferTooSmall;
    *n = feed_byte(state, v, out, 0);
    return Status::kOk;
  }
  if (algorithm_ == TokenizerAlgorithm::kByteLevelBpe) {
    // Raw bytes: a piece may end or begin inside a UTF-8 character, so every
    // byte goes through the assembler. Counted first, so that a short buffer
    // leaves the state untouched.
    TokenizerDecodeState st = *state;
    size_t need = 0;
    for (size_t j = 0; j < len; ++j) need += feed_byte(&st, static_cast<uint8_t>(s[j]), nullptr, 0);
    if (need > cap) return Status::kBufferTooSmall;
    size_t w = 0;
    for (size_t j = 0; j < len; ++j) w += feed_byte(state, static_cast<uint8_t>(s[j]), out, w);
    *n = w;
    return Status::kOk;
  }

  // Text (or the unknown piece): first any unfinished character, then the
  // piece with U+2581 as ' ', less one leading space at the very start when
  // the encoder added it.
  const size_t flush = size_t{state->pending_len} * 3;
  if (type == PieceType::kUnknown) {
    const size_t u = sizeof(kUnknownSurface) - 1;
    if (flush + u > cap) return Status::kBufferTooSmall;
    size_t w = 0;
    ATTN_TRY(decode_flush(state, out, cap, &w));
    put(out, &w, kUnknownSurface, u);
    state->started = 1;
    *n = w;
    return Status::kOk;
  }
  const bool escaped = (flags_ & kTokEscapeSpaces) != 0;
  size_t i = 0;
  if (state->started == 0 && flush == 0 && (flags_ & kTokAddDummyPrefix) != 0) {
    if (escaped && len >= 3 && std::memcmp(s, utf8::kSpaceSymbol, 3) == 0) {
      i = 3;
    } else if (!escaped && s[0] == ' ') {
      i = 1;
    }
  }
  // The text's length: each U+2581 (3 bytes) becomes one byte.
  size_t text_len = 0;
  for (size_t j = i; j < len;) {
    if (escaped && len - j >= 3 && std::memcmp(s + j, utf8::kSpaceSymbol, 3) == 0) {
      j += 3;
    } else {
      j += 1;
    }
    ++text_len;
  }
  if (flush + text_len > cap) return Status::kBufferTooSmall;
  size_t w = 0;
  ATTN_TRY(decode_flush(state, out, cap, &w));
  for (size_t j = i; j < len;) {
    if (escaped && len - j >= 3 && std::memcmp(s + j, utf8::kSpaceSymbol, 3) == 0) {
      out[w++] = ' ';
      j += 3;
    } else {
      out[w++] = s[j++];
    }
  }
  if (w > 0 || i > 0) state->started = 1;
  *n = w;
  return Status::kOk;
}

}  // namespace attn
