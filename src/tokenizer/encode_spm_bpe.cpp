// tokenizer/encode_spm_bpe.cpp: SentencePiece BPE encoding, as
// sentencepiece's bpe_model.cc and the processor's byte fallback do it.
//
// 1. Normalize: a leading space when the text is not empty (add dummy
//    prefix), ' ' to U+2581 (escape spaces), a byte that starts no
//    well-formed UTF-8 character to U+FFFD (what SentencePiece's normalizer
//    does; it also only consumes the one byte).
// 2. One symbol per character, in a doubly linked list.
// 3. Every adjacent pair whose concatenation is a normal piece goes into a
//    max-heap keyed by (score, then leftmost). Pop the best pair; skip it if
//    either side has changed since (lengths no longer add up); else merge the
//    right symbol into the left and push the new pairs with its neighbours.
//    Each merge pushes at most two pairs, so the heap holds < 3n entries and
//    the whole loop is O(n log n): a 100 KB run of one character is no
//    slower than prose.
// 4. Each final symbol is its piece's id; a symbol no piece spells is the
//    unknown id, or with byte fallback the <0xHH> piece of each of its bytes.
#include <cstring>

#include "attn/tokenizer.h"
#include "tokenizer/merge_heap.h"
#include "tokenizer/utf8.h"

namespace attn {

namespace {

// A finite float as an int32 in the same order (+0 and -0 equal), so that
// encoding needs no floating point at all (cores without an FPU).
int32_t score_key(const float* scores, int32_t id) {
  int32_t bits = 0;
  std::memcpy(&bits, scores + id, sizeof(bits));
  return bits >= 0 ? bits : -(bits & 0x7FFFFFFF);
}

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t start;  // in the normalized text
  uint32_t len;    // 0 once merged into its left neighbour
};

constexpr char kReplacementChar[] = "\xEF\xBF\xBD";

// Scratch of one encode: the normalized text (3 bytes per input byte, plus
// the prefix), the symbols (one per input byte, plus the prefix) and the heap.
struct SpmSizes {
  size_t text;
  size_t symbols;
  size_t pairs;
};

bool spm_sizes(size_t len, SpmSizes* s) {
  if (len > (SIZE_MAX / sizeof(tok::MergePair) - 1) / 3 || len >= UINT32_MAX / 4) return false;
  s->text = 3 * (len + 1);
  s->symbols = len + 1;
  s->pairs = 3 * (len + 1);
  return true;
}

}  // namespace

size_t Tokenizer::tokenize_scratch_bytes(size_t text_len) const {
  if (algorithm_ == TokenizerAlgorithm::kByteLevelBpe) return byte_level_scratch_bytes(text_len);
  if (algorithm_ == TokenizerAlgorithm::kWordPiece) return wordpiece_scratch_bytes();
  if (algorithm_ != TokenizerAlgorithm::kSentencePieceBpe) return 0;
  SpmSizes s{};
  if (!spm_sizes(text_len, &s)) return SIZE_MAX;
  const size_t a = arena_round_up(s.text);
  const size_t b = arena_round_up(s.symbols * sizeof(Symbol));
  const size_t c = arena_round_up(s.pairs * sizeof(tok::MergePair));
  return a + b + c;  // each below SIZE_MAX / 3 by spm_sizes
}

Status Tokenizer::encode_spm_bpe(const char* text, size_t len, int32_t* ids, size_t max_ids, Arena* scratch,
                                 size_t* n) const {
  if (len == 0) return Status::kOk;  // SentencePiece: no prefix either
  SpmSizes sizes{};
  if (!spm_sizes(len, &sizes)) return Status::kArenaTooSmall;
  const size_t mark = scratch->mark();
  char* norm = nullptr;
  Symbol* sym = nullptr;
  tok::MergePair* pairs = nullptr;
  Status st = scratch->alloc_array(sizes.text, &norm);
  if (st == Status::kOk) st = scratch->alloc_array(sizes.symbols, &sym);
  if (st == Status::kOk) st = scratch->alloc_array(sizes.pairs, &pairs);
  if (st != Status::kOk) {
    scratch->release(mark);
    return st;
  }

  // 1-2. Normalize and split into characters.
  const bool escape = (flags_ & kTokEscapeSpaces) != 0;
  uint32_t m = 0;  // normalized bytes
  int32_t count = 0;
  auto add_symbol = [&](const char* s, uint32_t l) {
    std::memcpy(norm + m, s, l);
    sym[count] = Symbol{count - 1, count + 1, m, l};
    m += l;
    ++count;
  };
  auto add_space = [&] {
    if (escape) {
      add_symbol(utf8::kSpaceSymbol, 3);
    } else {
      add_symbol(" ", 1);
    }
  };
  if ((flags_ & kTokAddDummyPrefix) != 0) add_space();
  for (size_t i = 0; i < len;) {
    if (text[i] == ' ') {
      add_space();
      ++i;
      continue;
    }
    const size_t l = utf8::char_length(text + i, len - i);
    if (l == 1 && static_cast<uint8_t>(text[i]) >= 0x80u) {
      add_symbol(kReplacementChar, 3);
    } else {
      add_symbol(text + i, static_cast<uint32_t>(l));
    }
    i += l;
  }
  sym[count - 1].next = -1;

  // 3. Merge the best pair while one exists.
  tok::MergeHeap heap(pairs, sizes.pairs);
  auto maybe_push = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = sym[left];
    const Symbol& r = sym[right];
    const int32_t id = find_piece(norm + l.start, l.len + r.len);
    if (id < 0 || types_[id] != static_cast<uint8_t>(PieceType::kNormal)) return;
    heap.push(tok::MergePair{score_key(scores_, id), static_cast<uint32_t>(left),
                             static_cast<uint32_t>(right), l.len + r.len});
  };
  for (int32_t i = 1; i < count; ++i) maybe_push(i - 1, i);
  while (!heap.empty()) {
    const tok::MergePair p = heap.pop();
    Symbol& l = sym[p.left];
    Symbol& r = sym[p.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != p.size) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = static_cast<int32_t>(p.left);
    maybe_push(l.prev, static_cast<int32_t>(p.left));
    maybe_push(static_cast<int32_t>(p.left), l.next);
  }

  // 4. Ids, with byte fallback.
  const int32_t unk = specials_[static_cast<uint32_t>(SpecialToken::kUnk)];
  const bool fallback = (flags_ & kTokByteFallback) != 0;
  size_t w = 0;
  st = Status::kOk;
  for (int32_t i = 0; i >= 0 && st == Status::kOk; i = sym[i].next) {
    const Symbol& s = sym[i];
    int32_t id = find_piece(norm + s.start, s.len);
    if (id >= 0 && types_[id] == static_cast<uint8_t>(PieceType::kUnknown)) id = -1;
    if (id >= 0 || !fallback) {
      if (w == max_ids) {
        st = Status::kBufferTooSmall;
      } else {
        ids[w++] = id >= 0 ? id : unk;
      }
      continue;
    }
    if (max_ids - w < s.len) {
      st = Status::kBufferTooSmall;
      continue;
    }
    for (uint32_t k = 0; k < s.len; ++k) ids[w++] = byte_ids_[static_cast<uint8_t>(norm[s.start + k])];
  }
  scratch->release(mark);
  if (st != Status::kOk) return st;
  *n = w;
  return Status::kOk;
}

}  // namespace attn
