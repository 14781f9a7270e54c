// tokenizer/encode_wordpiece.cpp: WordPiece encoding (BERT, DistilBERT), as
// BERT's BasicTokenizer + WordpieceTokenizer describe it, in one pass over
// the text with no copy of it:
//
// 1. Clean (kTokCleanText): drop NUL, U+FFFD and control characters (Cc,
//    Cf; not \t \n \r). A byte that starts no well-formed UTF-8 character
//    is read as U+FFFD (so cleaning drops it).
// 2. Whitespace (Python's str.isspace()) ends a word; with
//    kTokChineseChars each CJK ideograph is a word of its own.
// 3. Fold each character (unicode_fold.h): str.lower() (kTokLowercase, with
//    its final-sigma rule: U+03A3 after a cased character and before none,
//    case-ignorable ones skipped, becomes U+03C2), then NFD with Mn dropped
//    (kTokStripAccents; the few combining marks that are not Mn are put in
//    canonical order, as NFD of the whole word does). Each folded punctuation character (Unicode P*, and
//    ASCII 33-47, 58-64, 91-96, 123-126) is a word of its own.
// 4. Per word: [UNK] if it has more than max_input_chars_per_word
//    characters; else greedy longest match first, the pieces after the
//    first spelled with a "##" prefix, by one walk down the sorted index
//    per position (PieceIndex::longest_prefix); a word with a position no
//    normal piece matches is one [UNK].
//
// Scratch: one word's UTF-8 bytes (4 per character up to the limit, and 2
// in front where "##" is written before the rest of a word), independent
// of the text's length. Time: O(n) to fold, and per word position at most
// max_piece_len steps of two binary searches (log2 V byte compares each).
#include <cstring>

#include "attn/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/unicode_fold.h"
#include "tokenizer/utf8.h"

namespace attn {

namespace {

constexpr uint32_t kReplacementCp = 0xFFFD;

// The code point at text[i, len) and its length in bytes; an ill-formed
// sequence is one byte of U+FFFD.
uint32_t next_cp(const char* text, size_t len, size_t i, size_t* l) {
  const auto* s = reinterpret_cast<const uint8_t*>(text + i);
  const size_t n = utf8::char_length(text + i, len - i);
  *l = n;
  if (n == 1) return s[0] < 0x80u ? s[0] : kReplacementCp;
  if (n == 2) return (uint32_t{s[0] & 0x1Fu} << 6) | (s[1] & 0x3Fu);
  if (n == 3) return (uint32_t{s[0] & 0x0Fu} << 12) | (uint32_t{s[1] & 0x3Fu} << 6) | (s[2] & 0x3Fu);
  return (uint32_t{s[0] & 0x07u} << 18) | (uint32_t{s[1] & 0x3Fu} << 12) | (uint32_t{s[2] & 0x3Fu} << 6) |
         (s[3] & 0x3Fu);
}

size_t put_utf8(uint32_t cp, char* out) {
  if (cp < 0x80u) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800u) {
    out[0] = static_cast<char>(0xC0u | (cp >> 6));
    out[1] = static_cast<char>(0x80u | (cp & 0x3Fu));
    return 2;
  }
  if (cp < 0x10000u) {
    out[0] = static_cast<char>(0xE0u | (cp >> 12));
    out[1] = static_cast<char>(0x80u | ((cp >> 6) & 0x3Fu));
    out[2] = static_cast<char>(0x80u | (cp & 0x3Fu));
    return 3;
  }
  out[0] = static_cast<char>(0xF0u | (cp >> 18));
  out[1] = static_cast<char>(0x80u | ((cp >> 12) & 0x3Fu));
  out[2] = static_cast<char>(0x80u | ((cp >> 6) & 0x3Fu));
  out[3] = static_cast<char>(0x80u | (cp & 0x3Fu));
  return 4;
}

// The C0/C1 controls Python's str.isspace() counts as whitespace.
bool is_space_control(uint32_t cp) {
  return (cp >= 0x09u && cp <= 0x0Du) || (cp >= 0x1Cu && cp <= 0x1Fu) || cp == 0x85u;
}

// Python's str.isspace().
bool is_space(uint32_t cp) { return is_space_control(cp) || tok::char_class(cp) == tok::CharClass::kSpace; }

// BERT's _is_control: Cc or Cf, except \t \n \r.
bool is_control(uint32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return is_space_control(cp) || tok::char_class(cp) == tok::CharClass::kControl;
}

// BERT's _is_punctuation: every non-alphanumeric ASCII character that is
// not a space or control, and Unicode P*.
bool is_punct(uint32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  return tok::char_class(cp) == tok::CharClass::kPunct;
}

// BERT's _is_chinese_char: the CJK Unified Ideographs blocks and extensions
// A-E and the compatibility ideographs (not Hiragana, Katakana or Hangul).
bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00u && cp <= 0x9FFFu) || (cp >= 0x3400u && cp <= 0x4DBFu) ||
         (cp >= 0x20000u && cp <= 0x2A6DFu) || (cp >= 0x2A700u && cp <= 0x2B73Fu) ||
         (cp >= 0x2B740u && cp <= 0x2B81Fu) || (cp >= 0x2B820u && cp <= 0x2CEAFu) ||
         (cp >= 0xF900u && cp <= 0xFAFFu) || (cp >= 0x2F800u && cp <= 0x2FA1Fu);
}

constexpr uint32_t kCapitalSigma = 0x3A3;
constexpr uint32_t kSmallSigma = 0x3C3;
constexpr uint32_t kFinalSigma = 0x3C2;

// The sorted piece index, read in place (the Tokenizer's tables).
struct PieceIndex {
  const uint32_t* sorted;
  const uint32_t* offsets;
  const char* bytes;
  const uint8_t* types;
  uint32_t vocab;
  uint32_t max_piece;

  // Byte k of piece id as 0..255, or -1 past its end (a shorter piece sorts first).
  int byte_at(uint32_t id, size_t k) const {
    const uint32_t len = offsets[id + 1] - offsets[id];
    return k < len ? static_cast<uint8_t>(bytes[offsets[id] + k]) : -1;
  }

  // The longest normal piece that spells s[0, k) with min_len <= k and k a
  // character boundary of s[0, len) (k == len, or s[k] starts a character):
  // its id and *k, or -1. One walk down the sorted index: [lo, hi) holds
  // the pieces that begin with s[0, k), narrowed by two binary searches on
  // byte k for each k, and the first of them is s[0, k) itself when one
  // is. So a position costs O(max_piece_len log V) byte compares at most,
  // and usually stops after a few bytes, when no piece continues.
  int32_t longest_prefix(const char* s, size_t len, size_t min_len, size_t* match_len) const {
    size_t lo = 0;
    size_t hi = vocab;
    int32_t best = -1;
    const size_t limit = len < max_piece ? len : max_piece;
    for (size_t k = 0; k < limit; ++k) {
      const int c = static_cast<uint8_t>(s[k]);
      size_t a = lo;
      size_t b = hi;
      while (a < b) {  // the first piece whose byte k is >= c
        const size_t mid = a + (b - a) / 2;
        if (byte_at(sorted[mid], k) < c) {
          a = mid + 1;
        } else {
          b = mid;
        }
      }
      lo = a;
      b = hi;
      while (a < b) {  // the first piece whose byte k is > c
        const size_t mid = a + (b - a) / 2;
        if (byte_at(sorted[mid], k) <= c) {
          a = mid + 1;
        } else {
          b = mid;
        }
      }
      hi = a;
      if (lo == hi) break;
      const uint32_t id = sorted[lo];
      const size_t n = k + 1;
      if (offsets[id + 1] - offsets[id] == n && n >= min_len &&
          types[id] == static_cast<uint8_t>(PieceType::kNormal) &&
          (n == len || !utf8::is_continuation(static_cast<uint8_t>(s[n])))) {
        best = static_cast<int32_t>(id);
        *match_len = n;
      }
    }
    return best;
  }
};

// One encode: the word being gathered and the ids written so far.
class WordPieceEncoder {
 public:
  WordPieceEncoder(const PieceIndex& index, uint32_t max_word_chars, int32_t unk, char* word, int32_t* ids,
                   size_t max_ids)
      : index_(index), max_chars_(max_word_chars), unk_(unk), word_(word + 2), ids_(ids), max_ids_(max_ids) {}

  void add(uint32_t cp) {
    if (++chars_ <= max_chars_) bytes_ += put_utf8(cp, word_ + bytes_);
    run_ = bytes_;
  }

  // A combining mark that stripping keeps (class ccc): into the run of
  // such marks at the word's end, after those of a class <= ccc, as
  // canonical ordering puts it. A run is at most the word's 100 characters.
  void add_mark(uint32_t cp, uint8_t ccc) {
    if (++chars_ > max_chars_) return;
    size_t at = run_;
    while (at < bytes_) {
      size_t l = 0;
      if (tok::kept_mark_class(next_cp(word_, bytes_, at, &l)) > ccc) break;
      at += l;
    }
    char c[4];
    const size_t n = put_utf8(cp, c);
    std::memmove(word_ + at + n, word_ + at, bytes_ - at);
    std::memcpy(word_ + at, c, n);
    bytes_ += n;
  }

  // A starter: the marks after it are a new run.
  void end_run() { run_ = bytes_; }

  // Ends the word: its ids, [UNK], or nothing for an empty word.
  void flush() {
    if (chars_ == 0) return;
    if (chars_ > max_chars_) {
      emit_unk();
    } else {
      match();
    }
    chars_ = 0;
    bytes_ = 0;
    run_ = 0;
  }

  bool overflow() const { return overflow_; }
  size_t count() const { return w_; }

 private:
  void emit(size_t at, int32_t id) {
    if (at < max_ids_) {
      ids_[at] = id;
    } else {
      overflow_ = true;
    }
  }
  void emit_unk() { emit(w_++, unk_); }

  // Greedy longest match first over word_[0, bytes_): ids from w_ on, or
  // one [UNK] when some position matches no normal piece.
  void match() {
    size_t k = w_;
    const bool overflow_before = overflow_;
    for (size_t start = 0; start < bytes_;) {
      const size_t prefix = start > 0 ? 2 : 0;
      if (prefix != 0) {  // over bytes already matched, or the 2 spare bytes in front
        word_[start - 2] = '#';
        word_[start - 1] = '#';
      }
      size_t n = 0;
      const int32_t id =
          index_.longest_prefix(word_ + start - prefix, bytes_ - start + prefix, prefix + 1, &n);
      if (id < 0) {  // the whole word is [UNK]
        overflow_ = overflow_before;
        emit_unk();
        return;
      }
      emit(k++, id);
      start += n - prefix;
    }
    w_ = k;
  }

  const PieceIndex& index_;
  uint32_t max_chars_;
  int32_t unk_;
  char* word_;  // 2 spare bytes in front for "##"
  int32_t* ids_;
  size_t max_ids_;
  size_t chars_ = 0;
  size_t bytes_ = 0;
  size_t run_ = 0;  // word_[run_, bytes_): the marks since the last starter
  size_t w_ = 0;
  bool overflow_ = false;
};

}  // namespace

size_t Tokenizer::wordpiece_scratch_bytes() const { return arena_round_up(4 * size_t{max_word_chars_} + 2); }

Status Tokenizer::encode_wordpiece(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch,
                                   size_t* n) const {
  const size_t mark = scratch->mark();
  char* word = nullptr;
  const Status st = scratch->alloc_array(4 * size_t{max_word_chars_} + 2, &word);
  if (st != Status::kOk) {
    scratch->release(mark);
    return st;
  }
  const bool clean = (flags_ & kTokCleanText) != 0;
  const bool lower = (flags_ & kTokLowercase) != 0;
  const bool strip = (flags_ & kTokStripAccents) != 0;
  const bool chinese = (flags_ & kTokChineseChars) != 0;
  auto dropped = [&](uint32_t cp) { return clean && (cp == 0 || cp == kReplacementCp || is_control(cp)); };

  const PieceIndex index{sorted_, piece_offsets_, piece_bytes_, types_, vocab_size_, max_piece_len_};
  WordPieceEncoder enc(index, max_word_chars_, special(SpecialToken::kUnk), word, ids, max_ids);
  // Folds cp into the word: lowercase, strip accents, punctuation apart.
  auto add_folded = [&](uint32_t cp, bool final_sigma) {
    uint32_t low[tok::kMaxFold];
    size_t nl = 1;
    low[0] = cp;
    if (lower) {
      if (cp == kCapitalSigma) {
        low[0] = final_sigma ? kFinalSigma : kSmallSigma;
      } else {
        nl = tok::fold_lower(cp, low);
      }
    }
    for (size_t a = 0; a < nl; ++a) {
      uint32_t out[tok::kMaxFold];
      size_t no = 1;
      out[0] = low[a];
      if (strip) {
        if (!tok::is_nonstarter(low[a])) enc.end_run();
        no = tok::fold_strip_accents(low[a], out);
      }
      for (size_t b = 0; b < no; ++b) {
        const uint8_t ccc = strip ? tok::kept_mark_class(out[b]) : 0;
        if (is_punct(out[b])) {
          enc.flush();
          enc.add(out[b]);
          enc.flush();
        } else if (ccc != 0) {
          enc.add_mark(out[b], ccc);
        } else {
          enc.add(out[b]);
        }
      }
    }
  };
  // str.lower()'s final sigma: after a cased character (skipping
  // case-ignorable ones) and not before one. `after_cased` carries the
  // look-behind; the look-ahead reads on from i.
  bool after_cased = false;
  auto sigma_is_final = [&](size_t i) {
    if (!after_cased) return false;
    while (i < len) {
      size_t l = 0;
      const uint32_t c = next_cp(text, len, i, &l);
      i += l;
      if (dropped(c) || tok::is_case_ignorable(c)) continue;
      return !tok::is_cased(c);
    }
    return true;
  };

  for (size_t i = 0; i < len;) {
    size_t l = 0;
    const uint32_t cp = next_cp(text, len, i, &l);
    i += l;
    if (dropped(cp)) continue;
    const bool final_sigma = lower && cp == kCapitalSigma && sigma_is_final(i);
    if (lower && !tok::is_case_ignorable(cp)) after_cased = tok::is_cased(cp);
    if (is_space(cp)) {
      enc.flush();
    } else if (chinese && is_cjk(cp)) {
      enc.flush();
      add_folded(cp, false);
      enc.flush();
    } else {
      add_folded(cp, final_sigma);
    }
  }
  enc.flush();
  scratch->release(mark);
  if (enc.overflow()) return Status::kBufferTooSmall;
  *n = enc.count();
  return Status::kOk;
}

Status Tokenizer::decode_wordpiece(const char* s, size_t len, TokenizerDecodeState* state, char* out,
                                   size_t cap, size_t* n) const {
  // "##x" continues the text before it; any other piece is a new word,
  // after one space unless it is the first.
  const bool continuation = len >= 2 && s[0] == '#' && s[1] == '#';
  const size_t skip = continuation ? 2 : 0;
  const size_t space = !continuation && state->started != 0 ? 1 : 0;
  if (space + len - skip > cap) return Status::kBufferTooSmall;
  size_t w = 0;
  if (space != 0) out[w++] = ' ';
  if (len > skip) std::memcpy(out + w, s + skip, len - skip);
  w += len - skip;
  state->started = 1;
  *n = w;
  return Status::kOk;
}

}  // namespace attn
