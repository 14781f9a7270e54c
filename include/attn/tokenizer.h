// attn/tokenizer.h: text in, token ids out, and back, from a tokenizer blob.
//
// A tokenizer is one flat little-endian blob (layout: src/tokenizer/README.md)
// that the library reads in place, e.g. from flash: load() checks every
// table once and keeps pointers into the blob, which must outlive the
// Tokenizer. Nothing is copied and nothing reaches the heap: encode() takes
// its scratch from a caller's Arena (tokenize_scratch_bytes() bytes, linear
// in the text length) and decode() turns one id at a time into bytes.
//
// Algorithms (TokenizerAlgorithm):
//   kBytes            each byte its own id (the blob's byte table).
//   kSentencePieceBpe SentencePiece BPE (Llama, Mistral, llama2.c): a
//                     leading U+2581 (or ' '), spaces to U+2581, merges by
//                     score, unknown characters as <0xHH> byte pieces.
//   kByteLevelBpe     byte-level BPE (GPT-2, Qwen2, Llama 3): the text split
//                     by the model's pre-tokenizer pattern (ByteLevelSplit),
//                     each chunk's bytes merged by merge rank; pieces are
//                     raw bytes.
//   kWordPiece        BERT, DistilBERT: BERT's basic tokenizer (clean the
//                     text, split CJK ideographs, lowercase and strip
//                     accents when uncased, split on whitespace and
//                     punctuation), then per word greedy longest match
//                     first with "##" continuation pieces; [UNK] for a word
//                     no pieces spell or over max_input_chars_per_word.
// Host-side builders (attn/tokenizer_build.h) write blobs from a
// SentencePiece .model, a llama2.c tokenizer.bin, byte-level BPE
// vocabularies and merges, or a WordPiece vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/status.h"

// Longest piece a blob may hold, in bytes.
#ifndef ATTN_TOKENIZER_MAX_PIECE
#define ATTN_TOKENIZER_MAX_PIECE 256
#endif

// Largest WordPiece max_input_chars_per_word a blob may hold (encode's
// scratch is 4 bytes per character of it).
#ifndef ATTN_TOKENIZER_MAX_WORD_CHARS
#define ATTN_TOKENIZER_MAX_WORD_CHARS 1024
#endif

// Largest vocabulary a blob may hold.
#ifndef ATTN_TOKENIZER_MAX_VOCAB
#define ATTN_TOKENIZER_MAX_VOCAB (1 << 24)
#endif

namespace attn {

enum class TokenizerAlgorithm : uint32_t {
  kBytes = 0,
  kSentencePieceBpe = 1,
  kByteLevelBpe = 2,  // GPT-2, Qwen2: byte-level BPE by merge rank after a pre-tokenizer split
  kWordPiece = 3,     // BERT: basic tokenizer, then greedy longest-match-first with "##" continuations
};

// The type of each piece (one byte per piece in the blob).
enum class PieceType : uint8_t {
  kNormal = 0,   // text, matched by encode()
  kByte = 1,     // <0xHH>: the byte HH (byte fallback, kBytes)
  kControl = 2,  // <s>, </s>, [CLS]...: never matched in text, decodes to nothing
  kUnknown = 3,  // <unk>: what a text the vocabulary cannot spell becomes without byte fallback
};

// Normalization and pre-tokenization flags (header `flags`). A loader
// rejects a bit it does not know (kUnknownFlags).
enum TokenizerFlag : uint32_t {
  kTokAddDummyPrefix = 1u << 0,  // a non-empty text gets one leading space
  kTokEscapeSpaces = 1u << 1,    // ' ' becomes U+2581 before matching (pieces spell it U+2581)
  kTokByteFallback = 1u << 2,    // a character no piece spells becomes its <0xHH> pieces
  // WordPiece only (BERT's basic tokenizer options):
  kTokLowercase = 1u << 8,      // str.lower() (with final sigma) before matching
  kTokStripAccents = 1u << 9,   // NFD, then every Mn code point dropped
  kTokChineseChars = 1u << 10,  // each CJK ideograph a word of its own
  kTokCleanText = 1u << 11,     // drop NUL, U+FFFD and control characters
};
constexpr uint32_t kTokWordPieceFlags = kTokLowercase | kTokStripAccents | kTokChineseChars | kTokCleanText;
constexpr uint32_t kTokKnownFlags =
    kTokAddDummyPrefix | kTokEscapeSpaces | kTokByteFallback | kTokWordPieceFlags;

// The pre-tokenizer split of a byte-level BPE blob: which regex the model
// was trained with, implemented by hand (src/tokenizer/README.md).
enum class ByteLevelSplit : uint32_t {
  kGpt2 = 1,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kQwen2 = 2,   // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
                // \s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3 = 3,  // Qwen2's with \p{N}{1,3} (cl100k's digits) for \p{N}
};

// Special tokens, in the blob's specials table (-1: none).
enum class SpecialToken : uint32_t { kUnk = 0, kBos, kEos, kPad, kCls, kSep, kMask, kCount = 8 };

// What decode() keeps between ids: the bytes of a UTF-8 character that
// byte pieces have begun, and whether anything was written yet (a leading
// dummy-prefix space is dropped). Zero-initialize before the first id.
struct TokenizerDecodeState {
  uint8_t pending[4];
  uint8_t pending_len;
  uint8_t pending_need;  // the character's length, from its first byte
  uint8_t started;       // 1 once a byte has been written
  uint8_t reserved;
};

class Tokenizer {
 public:
  // Check the blob (bounds, sizes, sorted tables, piece lengths, ids in
  // range, alignment) and set up *out to read it in place. The blob must be
  // 4-byte aligned (kBlobMisaligned) and stay alive while *out is used.
  static Status load(const void* blob, size_t size, Tokenizer* out);

  TokenizerAlgorithm algorithm() const { return algorithm_; }
  uint32_t flags() const { return flags_; }
  int32_t vocab_size() const { return static_cast<int32_t>(vocab_size_); }
  // The id of a special token, or -1.
  int32_t special(SpecialToken which) const;
  // The bytes and type of piece `id` (kTokenOutOfRange outside the vocabulary).
  Status piece(int32_t id, const char** bytes, size_t* len, PieceType* type) const;
  // The id whose piece is exactly s[0, len), or -1.
  int32_t find_piece(const char* s, size_t len) const;

  // Arena bytes encode() needs for a text of text_len bytes (at most, for
  // any text of that length; SIZE_MAX on overflow).
  size_t tokenize_scratch_bytes(size_t text_len) const;
  // The most ids encode() can write for a text of text_len bytes.
  size_t max_ids(size_t text_len) const;

  // Encode text[0, len) into ids[0, *n). No BOS/EOS is added (prepend
  // special(kBos) yourself). kBufferTooSmall if more than max_ids ids are
  // needed (*n is then 0); kArenaTooSmall if the arena lacks
  // tokenize_scratch_bytes(len) free bytes. The arena is left as found.
  Status encode(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch, size_t* n) const;

  // The most bytes one decode() or decode_flush() call writes for this
  // blob: 3 per byte of its longest piece (each may end as U+FFFD) plus 16
  // (an unfinished character's replacements, a byte piece's 15, the unknown
  // piece). An output buffer this large never gets kBufferTooSmall; at most
  // 3 * ATTN_TOKENIZER_MAX_PIECE + 16 for any blob.
  size_t max_decode_bytes() const { return 3 * size_t{max_piece_len_} + 16; }

  // Append the text of one id to out[0, cap): *n bytes written. Byte pieces
  // are gathered in *state until their UTF-8 character is whole; a byte
  // that cannot continue or start a character becomes U+FFFD (EF BF BD).
  // Control pieces write nothing, the unknown piece " \u2047 ". cap >=
  // max_decode_bytes() always suffices; kBufferTooSmall (nothing written,
  // the state untouched) if the text does not fit. WordPiece: a "##" piece
  // joins the text before it (its "##" dropped), any other piece (also
  // [UNK], as its text) gets one leading space unless it is the first.
  Status decode(int32_t id, TokenizerDecodeState* state, char* out, size_t cap, size_t* n) const;
  // At the end of the ids: a character left unfinished becomes U+FFFD per byte.
  Status decode_flush(TokenizerDecodeState* state, char* out, size_t cap, size_t* n) const;

 private:
  Status encode_bytes(const char* text, size_t len, int32_t* ids, size_t max_ids, size_t* n) const;
  Status encode_spm_bpe(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch,
                        size_t* n) const;
  Status encode_byte_level_bpe(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch,
                               size_t* n) const;
  size_t byte_level_scratch_bytes(size_t text_len) const;
  Status encode_wordpiece(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch,
                          size_t* n) const;
  size_t wordpiece_scratch_bytes() const;
  Status decode_wordpiece(const char* s, size_t len, TokenizerDecodeState* state, char* out, size_t cap,
                          size_t* n) const;

  TokenizerAlgorithm algorithm_ = TokenizerAlgorithm::kBytes;
  uint32_t flags_ = 0;
  uint32_t vocab_size_ = 0;
  uint32_t max_piece_len_ = 0;
  uint32_t max_word_chars_ = 0;              // WordPiece max_input_chars_per_word
  const uint32_t* piece_offsets_ = nullptr;  // vocab_size + 1
  const char* piece_bytes_ = nullptr;
  const float* scores_ = nullptr;      // vocab_size, or null
  const uint8_t* types_ = nullptr;     // vocab_size
  const uint32_t* sorted_ = nullptr;   // vocab_size ids, pieces ascending
  const int32_t* specials_ = nullptr;  // SpecialToken::kCount
  const int32_t* byte_ids_ = nullptr;  // 256, -1: none
  // The blob itself: an algorithm's own header fields (byte-level BPE's
  // merges and split) are read from it where needed, keeping the object small.
  const uint8_t* blob_ = nullptr;
};

}  // namespace attn
