// attn/status.h: the one error type of the library.
//
// Every public entry returns a Status. Each failure has its own code so a
// firmware engineer can tell from one integer what went wrong, and
// status_name() turns it into a stable, printable identifier.
#pragma once

#include <cstdint>

namespace attn {

enum class [[nodiscard]] Status : int32_t{
    kOk = 0,

    // Arguments and configuration (1..)
    kNullArgument = 1,      // a required pointer is null
    kBadEmbedDim = 2,       // embed_dim <= 0 or above ATTN_MAX_DIM
    kBadNumHeads = 3,       // num_heads <= 0 or above ATTN_MAX_HEADS
    kBadHeadDim = 4,        // head_dim < 0, above ATTN_MAX_DIM, or E % H != 0 with head_dim = 0
    kBadKeyDim = 5,         // kdim < 0 or above ATTN_MAX_DIM
    kBadValueDim = 6,       // vdim < 0 or above ATTN_MAX_DIM
    kBadQueryLength = 7,    // L <= 0 or above ATTN_MAX_SEQ
    kBadKeyLength = 8,      // S <= 0 or above ATTN_MAX_SEQ
    kBadKeyPadding = 9,     // mask.key_length outside [0, S]
    kBadTileRows = 10,      // tile_rows <= 0
    kBadShape = 11,         // a kernel's matrix views disagree in shape or stride
    kBadDtype = 12,         // the entry does not support this dtype
    kPlanMismatch = 13,     // the Plan was made for another config, shape or dtype
    kBadCausalOffset = 14,  // mask.causal_offset < 0
    kBadKvHeads = 15,       // num_kv_heads < 0 or does not divide num_heads
    kBadRope = 16,          // rope_base negative or not finite, or head_dim odd with rope
    kBadPosition = 17,      // a rotary position is negative
    kBadWindow = 18,        // mask.window < 0, or a window without causal; cache window > capacity
    kBadHandle = 31,        // a C API handle (attn.h) was not set up by its init or load call

    // Memory (32..)
    kArenaTooSmall = 32,    // the arena has fewer free bytes than the plan needs
    kArenaMisaligned = 33,  // the arena buffer is not ATTN_ARENA_ALIGN-aligned
    kBufferTooSmall = 34,   // an output buffer given with its size is too small
    kCacheFull = 35,        // a KV cache without a window has no room for the new rows

    // Model files (64..); see include/attn/FORMAT.md
    kBadMagic = 64, kUnsupportedVersion = 65, kBadHeaderSize = 66,
    kTruncated = 67,         // the buffer is shorter than the file says or than a header
    kFileSizeMismatch = 68,  // header.file_size disagrees with the buffer length
    kCrcMismatch = 69,
    kBadAlignment = 70,       // data alignment zero, not a power of two, below 16 or huge
    kSizeOverflow = 71,       // a count x size product or an align-up overflows
    kOffsetOutOfBounds = 72,  // a table or tensor lies (partly) outside the file
    kTensorOverlap = 73,      // two tensors overlap or alias
    kTensorMisaligned = 74,   // a tensor's offset is not a multiple of the data alignment
    kBadDims = 75,            // a zero dim, rank 0 or rank above 4
    kDimsTooLarge = 76,       // a dim above the compile-time caps
    kUnknownDtype = 77, kUnknownRole = 78, kUnknownLayout = 79,
    kDuplicateRole = 80,  // the same role twice in one block
    kMissingTensor = 81,  // a block lacks a tensor its hyperparameters require
    kDimsMismatch = 82,   // tensor dims disagree with the block's hyperparameters
    kBadBlock = 83,       // a block record is malformed (flags, dtype, counts)
    kBadTensorName = 84,  // a name is not NUL-terminated or is empty
    kBadByteSize = 85,    // a tensor's byte size disagrees with dtype x dims
    kBlockIndex = 86,     // block index out of range
    kNotFound = 87,       // no tensor with that name
    kBadReserved = 88,    // a reserved field is not zero
    kUnknownFlags = 89,
    kBlobMisaligned = 90,    // the blob's address is not 16-byte aligned
    kTooManyEntries = 91,    // block or tensor count above ATTN_MAX_BLOCKS / ATTN_MAX_TENSORS
    kDuplicateName = 92,     // two tensors share a name
    kDtypeMismatch = 93,     // a block tensor's dtype differs from its block's
    kQuantizedVariant = 94,  // no longer returned: s8/s16 blocks run RoPE and GQA (code kept)

    // Fixed point (96..)
    kBadQuantParams = 96,   // a multiplier, shift or zero point is out of range
    kUnsupportedMask = 97,  // an additive float mask given to a fixed-point forward
    kRopePositionOutOfRange =
        98,  // a rotary position at or past the converter's table (RopeTable::positions)
};

// A stable identifier for the code, e.g. "kArenaTooSmall". Never null.
const char* status_name(Status s);

inline constexpr bool ok(Status s) { return s == Status::kOk; }

}  // namespace attn

// Propagate a non-OK Status to the caller.
#define ATTN_TRY(expr)                              \
  do {                                              \
    const ::attn::Status attn_try_status_ = (expr); \
    if (attn_try_status_ != ::attn::Status::kOk) {  \
      return attn_try_status_;                      \
    }                                               \
  } while (0)
