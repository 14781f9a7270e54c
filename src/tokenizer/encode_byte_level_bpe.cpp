// tokenizer/encode_byte_level_bpe.cpp: byte-level BPE encoding (GPT-2,
// Qwen2, Llama 3), as GPT-2's encoder.py and Hugging Face's BPE model do it.
//
// 1. add_prefix_space: a text that does not start with ' ' gets one.
// 2. Split the text into chunks by the model's pre-tokenizer regex (GPT-2's,
//    Qwen2's, or Llama 3's: Qwen2's with \p{N}{1,3}), each implemented by
//    hand (no regex engine): the alternatives are tried in
//    order at each position, with the Unicode classes of tokenizer/unicode.h
//    (\p{L} letter, \p{N} number, \s white space as the regex module has it:
//    str.isspace() less U+001C..U+001F). A byte that starts no well-formed
//    UTF-8 character is one character of no class (as Python's
//    surrogateescape makes it a lone surrogate, category Cs).
// 3. ignore_merges (Llama 3): a chunk that is a whole normal piece is that
//    piece, merges or not.
// 4. Each chunk: one symbol per byte (its single-byte piece), then merges by
//    rank: a binary heap of adjacent pairs that have a merge (merge_heap.h,
//    keyed by minus the rank: the lowest rank pops first, the leftmost at
//    equal ranks). Skip a popped pair if either side has changed
//    since (lengths no longer add up); else the left symbol becomes the
//    merge's result and new pairs with its neighbours are pushed. Each merge
//    pushes at most two pairs: the heap holds < 3n entries, and a chunk is
//    O(n log n) (a 100 KB run of one letter is one chunk).
// 5. The chunk's symbols, left to right, are its ids.
#include <cstring>

#include "attn/tokenizer.h"
#include "tokenizer/blob.h"
#include "tokenizer/merge_heap.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace attn {

namespace {

using tok::CharClass;

// A text being split: the class of the character at each position.
class Splitter {
 public:
  Splitter(const char* s, size_t n) : s_(reinterpret_cast<const uint8_t*>(s)), n_(n) {}

  size_t size() const { return n_; }
  uint8_t byte(size_t i) const { return s_[i]; }

  // The length of the character at i (1 for a byte no well-formed character
  // starts with) and its code point (0xFFFFFFFF for such a byte).
  size_t decode(size_t i, uint32_t* cp) const {
    const size_t l = utf8::char_length(reinterpret_cast<const char*>(s_ + i), n_ - i);
    const uint8_t b = s_[i];
    if (l == 1) {
      *cp = b < 0x80u ? b : 0xFFFFFFFFu;
    } else if (l == 2) {
      *cp = (uint32_t{b & 0x1Fu} << 6) | (s_[i + 1] & 0x3Fu);
    } else if (l == 3) {
      *cp = (uint32_t{b & 0x0Fu} << 12) | (uint32_t{s_[i + 1] & 0x3Fu} << 6) | (s_[i + 2] & 0x3Fu);
    } else {
      *cp = (uint32_t{b & 0x07u} << 18) | (uint32_t{s_[i + 1] & 0x3Fu} << 12) |
            (uint32_t{s_[i + 2] & 0x3Fu} << 6) | (s_[i + 3] & 0x3Fu);
    }
    return l;
  }

  enum Kind { kLetter, kNumber, kSpace, kOther };  // \p{L}, \p{N}, \s, [^\s\p{L}\p{N}]

  Kind kind(size_t i, size_t* len) const {
    uint32_t cp = 0;
    *len = decode(i, &cp);
    if (cp < 0x80u) {  // ASCII without the table
      if ((cp | 0x20u) >= 'a' && (cp | 0x20u) <= 'z') return kLetter;
      if (cp >= '0' && cp <= '9') return kNumber;
      if (cp == ' ' || (cp >= 0x09u && cp <= 0x0Du)) return kSpace;
      return kOther;
    }
    switch (tok::char_class(cp)) {
      case CharClass::kLetter:
        return kLetter;
      case CharClass::kNumber:
        return kNumber;
      case CharClass::kSpace:
        return kSpace;  // U+001C..U+001F are ASCII, handled above
      default:
        return kOther;
    }
  }
  bool is(size_t i, Kind k) const {
    size_t l = 0;
    return i < n_ && kind(i, &l) == k;
  }
  // The end of the run of characters of kind k from i.
  size_t run(size_t i, Kind k) const {
    size_t l = 0;
    while (i < n_ && kind(i, &l) == k) i += l;
    return i;
  }
  size_t next(size_t i) const {
    size_t l = 0;
    kind(i, &l);
    return i + l;
  }

  // 's|'t|'re|'ve|'m|'ll|'d, case-folded for (?i:...) (U+017F LONG S
  // folds to s): the match's length in bytes, or 0.
  size_t contraction(size_t i, bool fold) const {
    if (s_[i] != '\'' || i + 1 >= n_) return 0;
    auto at = [&](size_t k) -> uint8_t {
      if (k >= n_) return 0;
      const uint8_t c = s_[k];
      return fold && c >= 'A' && c <= 'Z' ? static_cast<uint8_t>(c + 32) : c;
    };
    const uint8_t a = at(i + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (fold && a == 0xC5u && at(i + 2) == 0xBFu) return 3;  // U+017F
    const uint8_t b = at(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
  }

  // \s+(?!\S), then \s+: the white-space run from i, less its last
  // character when a non-space follows and the run has more than one.
  size_t white_space(size_t i) const {
    size_t last = i;
    size_t j = i;
    size_t l = 0;
    while (j < n_ && kind(j, &l) == kSpace) {
      last = j;
      j += l;
    }
    return j < n_ && last > i ? last : j;
  }

  // GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  size_t gpt2_chunk(size_t i) const {
    const size_t c = contraction(i, false);
    if (c > 0) return i + c;
    const size_t k = s_[i] == ' ' && i + 1 < n_ ? i + 1 : i;
    size_t l = 0;
    const Kind kk = kind(k, &l);
    if (kk != kSpace) return run(k, kk);
    return white_space(i);
  }

  // Qwen2: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
  //        ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  // Llama 3: the same with \p{N}{1,3} (max_digits 3).
  size_t qwen2_chunk(size_t i, int max_digits) const {
    const size_t c = contraction(i, true);
    if (c > 0) return i + c;
    size_t l = 0;
    const Kind k = kind(i, &l);
    const uint8_t b = s_[i];
    if (k == kLetter) return run(i, kLetter);
    if (k != kNumber && b != '\r' && b != '\n' && is(i + l, kLetter)) return run(i + l, kLetter);
    if (k == kNumber) {
      size_t j = i + l;
      for (int d = 1; d < max_digits && is(j, kNumber); ++d) j = next(j);
      return j;
    }
    if (k == kOther || (b == ' ' && is(i + 1, kOther))) {
      size_t j = run(k == kOther ? i : i + 1, kOther);
      while (j < n_ && (s_[j] == '\r' || s_[j] == '\n')) ++j;
      return j;
    }
    // White space: \s*[\r\n]+ ends after the run's last \r or \n.
    size_t j = i;
    size_t end = 0;
    while (j < n_ && kind(j, &l) == kSpace) {
      if (s_[j] == '\r' || s_[j] == '\n') end = j + 1;
      j += l;
    }
    return end > 0 ? end : white_space(i);
  }

 private:
  const uint8_t* s_;
  size_t n_;
};

struct Symbol {
  int32_t prev;
  int32_t next;
  int32_t id;    // the piece this symbol is
  uint32_t len;  // bytes; 0 once merged into its left neighbour
};

uint32_t header_u32(const uint8_t* blob, size_t field) {
  uint32_t v = 0;
  std::memcpy(&v, blob + field, sizeof(v));
  return v;
}

// The merges of a loaded blob: (left, right, result) by rank, and the ranks
// ordered by (left, right).
struct Merges {
  const int32_t* table;
  const uint32_t* index;
  uint32_t count;

  // The rank of the merge (left, right), or -1: a binary search.
  int32_t rank(int32_t left, int32_t right) const {
    size_t lo = 0;
    size_t hi = count;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      const uint32_t r = index[mid];
      const int32_t* m = table + 3 * size_t{r};
      if (m[0] == left && m[1] == right) return static_cast<int32_t>(r);
      if (m[0] < left || (m[0] == left && m[1] < right)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return -1;
  }
  int32_t result(uint32_t rank) const { return table[3 * size_t{rank} + 2]; }
};

// Scratch of one encode: the text with its prefix space, one symbol per
// byte and three heap slots per byte (reused by every chunk).
struct ByteLevelSizes {
  size_t text;
  size_t symbols;
  size_t pairs;
};

bool byte_level_sizes(size_t len, ByteLevelSizes* s) {
  if (len > (SIZE_MAX / sizeof(tok::MergePair) - 1) / 3 || len >= INT32_MAX / 4) return false;
  s->text = len + 1;
  s->symbols = len + 1;
  s->pairs = 3 * (len + 1);
  return true;
}

}  // namespace

size_t Tokenizer::byte_level_scratch_bytes(size_t text_len) const {
  ByteLevelSizes s{};
  if (!byte_level_sizes(text_len, &s)) return SIZE_MAX;
  return arena_round_up(s.text) + arena_round_up(s.symbols * sizeof(Symbol)) +
         arena_round_up(s.pairs * sizeof(tok::MergePair));
}

Status Tokenizer::encode_byte_level_bpe(const char* text, size_t len, int32_t* ids, size_t max_ids,
                                        Arena* scratch, size_t* n) const {
  if (len == 0) return Status::kOk;
  ByteLevelSizes sizes{};
  if (!byte_level_sizes(len, &sizes)) return Status::kArenaTooSmall;
  const size_t mark = scratch->mark();
  char* buf = nullptr;
  Symbol* sym = nullptr;
  tok::MergePair* pairs = nullptr;
  Status st = scratch->alloc_array(sizes.text, &buf);
  if (st == Status::kOk) st = scratch->alloc_array(sizes.symbols, &sym);
  if (st == Status::kOk) st = scratch->alloc_array(sizes.pairs, &pairs);
  if (st != Status::kOk) {
    scratch->release(mark);
    return st;
  }

  // The blob's merges and split (checked by load()).
  const Merges merges{reinterpret_cast<const int32_t*>(blob_ + header_u32(blob_, tok::kFieldMergesOff)),
                      reinterpret_cast<const uint32_t*>(blob_ + header_u32(blob_, tok::kFieldMergeIndexOff)),
                      header_u32(blob_, tok::kFieldMergeCount)};
  const uint32_t split_field = header_u32(blob_, tok::kFieldByteLevelSplit);

  // 1. The prefix space.
  size_t m = 0;
  if ((split_field & tok::kByteLevelAddPrefixSpace) != 0 && text[0] != ' ') buf[m++] = ' ';
  std::memcpy(buf + m, text, len);
  m += len;

  const uint32_t kind = split_field & tok::kByteLevelSplitMask;
  const int max_digits = kind == static_cast<uint32_t>(ByteLevelSplit::kLlama3) ? 3 : 1;
  const bool ignore_merges = (split_field & tok::kByteLevelIgnoreMerges) != 0;
  const Splitter split(buf, m);
  tok::MergeHeap heap(pairs, sizes.pairs);
  size_t w = 0;
  for (size_t i = 0; i < m && st == Status::kOk;) {
    // 2. The next chunk, [i, j).
    const size_t j = kind == static_cast<uint32_t>(ByteLevelSplit::kGpt2) ? split.gpt2_chunk(i)
                                                                          : split.qwen2_chunk(i, max_digits);
    if (ignore_merges) {  // 3. A chunk that is a piece is that piece.
      const int32_t id = find_piece(buf + i, j - i);
      if (id >= 0 && types_[id] == static_cast<uint8_t>(PieceType::kNormal)) {
        if (w == max_ids) {
          st = Status::kBufferTooSmall;
          break;
        }
        ids[w++] = id;
        i = j;
        continue;
      }
    }
    const auto count = static_cast<int32_t>(j - i);
    // 4. Its bytes, merged by rank.
    for (int32_t k = 0; k < count; ++k) {
      sym[k] = Symbol{k - 1, k + 1, byte_ids_[static_cast<uint8_t>(buf[i + static_cast<size_t>(k)])], 1};
    }
    sym[count - 1].next = -1;
    auto maybe_push = [&](int32_t left, int32_t right) {
      if (left < 0 || right < 0) return;
      const int32_t rank = merges.rank(sym[left].id, sym[right].id);
      if (rank < 0) return;
      heap.push(tok::MergePair{-rank, static_cast<uint32_t>(left), static_cast<uint32_t>(right),
                               sym[left].len + sym[right].len});
    };
    for (int32_t k = 1; k < count; ++k) maybe_push(k - 1, k);
    while (!heap.empty()) {
      const tok::MergePair p = heap.pop();
      Symbol& l = sym[p.left];
      Symbol& r = sym[p.right];
      if (l.len == 0 || r.len == 0 || l.len + r.len != p.size) continue;  // stale
      l.id = merges.result(static_cast<uint32_t>(-p.key));                // key = -rank
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (r.next >= 0) sym[r.next].prev = static_cast<int32_t>(p.left);
      maybe_push(l.prev, static_cast<int32_t>(p.left));
      maybe_push(static_cast<int32_t>(p.left), l.next);
    }
    // 5. Its ids.
    for (int32_t k = 0; k >= 0; k = sym[k].next) {
      if (w == max_ids) {
        st = Status::kBufferTooSmall;
        break;
      }
      ids[w++] = sym[k].id;
    }
    i = j;
  }
  scratch->release(mark);
  if (st != Status::kOk) return st;
  *n = w;
  return Status::kOk;
}

}  // namespace attn
