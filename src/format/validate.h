// format/validate.h: the .attn validator (include/attn/FORMAT.md, "Loading"):
// every field of a file checked once, in file order, returning the first
// problem as its own Status. Model::load (format/model.cpp) calls it and then
// only reads validated records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/model.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "the .attn format is little-endian; this loader reads it in place"
#endif

namespace attn {
namespace format {

// A record copied out of the blob field-wise with memcpy, so the tables need
// no alignment.
template <class T>
T read_record(const uint8_t* p) {
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

// Where a validated file keeps its tables (every offset <= its size).
struct FileLayout {
  uint16_t version = 0;
  bool model = false;  // kHeaderModel: a ModelRecord at kModelRecordOffset
  uint32_t block_count = 0;
  uint32_t tensor_count = 0;
  size_t blocks_offset = 0;
  size_t tensors_offset = 0;
  size_t data_offset = 0;
};

// Magic, version and header size of the `size` bytes at p: enough to trust
// header_size and file_size's position (kTruncated, kBadMagic,
// kUnsupportedVersion, kBadHeaderSize).
Status check_preamble(const uint8_t* p, size_t size);

// The whole file: header, model record, block records, tensor descriptors,
// each tensor against the rule table (format/tensor_rules.h) and its values.
// `p` non-null. *out is set only on success.
Status validate(const uint8_t* p, size_t size, FileLayout* out);

}  // namespace format
}  // namespace attn
