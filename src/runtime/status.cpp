// status.cpp: a stable name for every Status code.
#include "attn/status.h"

namespace attn {

const char* status_name(Status s) {
  switch (s) {
#define ATTN_STATUS_CASE(name) \
  case Status::name:           \
    return #name;
    ATTN_STATUS_CASE(kOk)
    ATTN_STATUS_CASE(kNullArgument)
    ATTN_STATUS_CASE(kBadEmbedDim)
    ATTN_STATUS_CASE(kBadNumHeads)
    ATTN_STATUS_CASE(kBadHeadDim)
    ATTN_STATUS_CASE(kBadKeyDim)
    ATTN_STATUS_CASE(kBadValueDim)
    ATTN_STATUS_CASE(kBadQueryLength)
    ATTN_STATUS_CASE(kBadKeyLength)
    ATTN_STATUS_CASE(kBadKeyPadding)
    ATTN_STATUS_CASE(kBadTileRows)
    ATTN_STATUS_CASE(kBadShape)
    ATTN_STATUS_CASE(kBadDtype)
    ATTN_STATUS_CASE(kPlanMismatch)
    ATTN_STATUS_CASE(kBadCausalOffset)
    ATTN_STATUS_CASE(kBadKvHeads)
    ATTN_STATUS_CASE(kBadRope)
    ATTN_STATUS_CASE(kBadPosition)
    ATTN_STATUS_CASE(kBadWindow)
    ATTN_STATUS_CASE(kBadHandle)
    ATTN_STATUS_CASE(kArenaTooSmall)
    ATTN_STATUS_CASE(kArenaMisaligned)
    ATTN_STATUS_CASE(kBufferTooSmall)
    ATTN_STATUS_CASE(kCacheFull)
    ATTN_STATUS_CASE(kBadMagic)
    ATTN_STATUS_CASE(kUnsupportedVersion)
    ATTN_STATUS_CASE(kBadHeaderSize)
    ATTN_STATUS_CASE(kTruncated)
    ATTN_STATUS_CASE(kFileSizeMismatch)
    ATTN_STATUS_CASE(kCrcMismatch)
    ATTN_STATUS_CASE(kBadAlignment)
    ATTN_STATUS_CASE(kSizeOverflow)
    ATTN_STATUS_CASE(kOffsetOutOfBounds)
    ATTN_STATUS_CASE(kTensorOverlap)
    ATTN_STATUS_CASE(kTensorMisaligned)
    ATTN_STATUS_CASE(kBadDims)
    ATTN_STATUS_CASE(kDimsTooLarge)
    ATTN_STATUS_CASE(kUnknownDtype)
    ATTN_STATUS_CASE(kUnknownRole)
    ATTN_STATUS_CASE(kUnknownLayout)
    ATTN_STATUS_CASE(kDuplicateRole)
    ATTN_STATUS_CASE(kMissingTensor)
    ATTN_STATUS_CASE(kDimsMismatch)
    ATTN_STATUS_CASE(kBadBlock)
    ATTN_STATUS_CASE(kBadTensorName)
    ATTN_STATUS_CASE(kBadByteSize)
    ATTN_STATUS_CASE(kBlockIndex)
    ATTN_STATUS_CASE(kNotFound)
    ATTN_STATUS_CASE(kBadReserved)
    ATTN_STATUS_CASE(kUnknownFlags)
    ATTN_STATUS_CASE(kBlobMisaligned)
    ATTN_STATUS_CASE(kTooManyEntries)
    ATTN_STATUS_CASE(kDuplicateName)
    ATTN_STATUS_CASE(kDtypeMismatch)
    ATTN_STATUS_CASE(kQuantizedVariant)
    ATTN_STATUS_CASE(kBadQuantParams)
    ATTN_STATUS_CASE(kUnsupportedMask)
    ATTN_STATUS_CASE(kRopePositionOutOfRange)
#undef ATTN_STATUS_CASE
  }
  return "kUnknownStatus";
}

}  // namespace attn
