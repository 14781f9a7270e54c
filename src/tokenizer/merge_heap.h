// tokenizer/merge_heap.h: the binary heap of adjacent symbol pairs that the
// BPE encoders merge from (encode_spm_bpe.cpp: by the merged piece's score;
// encode_byte_level_bpe.cpp: by merge rank). In the caller's scratch: no heap
// allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {
namespace tok {

// Two adjacent symbols that may merge. Pops first: the higher key; at equal
// keys the leftmost pair. `size` is the two symbols' bytes when pushed: a
// pair whose symbols have changed since is stale, and the encoder skips it.
struct MergePair {
  int32_t key;
  uint32_t left;
  uint32_t right;
  uint32_t size;
};

class MergeHeap {
 public:
  MergeHeap(MergePair* slots, size_t capacity) : a_(slots), cap_(capacity) {}
  bool empty() const { return n_ == 0; }
  // A push past the capacity is dropped: the encoders size it so that none is
  // (each merge pushes at most two pairs: 3 x symbols slots).
  void push(const MergePair& p) {
    if (n_ == cap_) return;
    size_t i = n_++;
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(p, a_[parent])) break;
      a_[i] = a_[parent];
      i = parent;
    }
    a_[i] = p;
  }
  MergePair pop() {
    const MergePair top = a_[0];
    const MergePair last = a_[--n_];
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n_) break;
      if (c + 1 < n_ && before(a_[c + 1], a_[c])) ++c;
      if (!before(a_[c], last)) break;
      a_[i] = a_[c];
      i = c;
    }
    if (n_ > 0) a_[i] = last;
    return top;
  }

 private:
  static bool before(const MergePair& a, const MergePair& b) {
    return a.key > b.key || (a.key == b.key && a.left < b.left);
  }
  MergePair* a_;
  size_t cap_;
  size_t n_ = 0;
};

}  // namespace tok
}  // namespace attn
