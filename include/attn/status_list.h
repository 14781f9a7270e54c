/* attn/status_list.h: every status code of attn, once.
 *
 * An X-macro list, plain C99 (no include guard: include it where a list is
 * wanted, with ATTN_STATUS defined). Each row is
 *   ATTN_STATUS(cpp_name, c_name, value, "what it means")
 * and feeds the C++ enum class attn::Status and attn::status_name()
 * (attn/status.h), the C constants ATTN_OK / ATTN_ERR_* and
 * attn_status_name() (attn/attn.h). Values never change: logs from either
 * API, any version, read the same. A new code goes at the end of its range.
 * Numbers not listed are free, except 94 (below). */
#ifndef ATTN_STATUS
#error "define ATTN_STATUS(cpp_name, c_name, value, doc) before including attn/status_list.h"
#endif

ATTN_STATUS(kOk, ATTN_OK, 0, "success")

/* Arguments and configuration (1..31) */
ATTN_STATUS(kNullArgument, ATTN_ERR_NULL_ARGUMENT, 1, "a required pointer is null")
ATTN_STATUS(kBadEmbedDim, ATTN_ERR_BAD_EMBED_DIM, 2, "embed_dim <= 0 or above ATTN_MAX_DIM")
ATTN_STATUS(kBadNumHeads, ATTN_ERR_BAD_NUM_HEADS, 3, "num_heads <= 0 or above ATTN_MAX_HEADS")
ATTN_STATUS(kBadHeadDim, ATTN_ERR_BAD_HEAD_DIM, 4,
            "head_dim < 0 or above ATTN_MAX_DIM, or E % H != 0 with head_dim 0; s8: head_dim >= 2^14")
ATTN_STATUS(kBadKeyDim, ATTN_ERR_BAD_KEY_DIM, 5, "kdim < 0 or above ATTN_MAX_DIM")
ATTN_STATUS(kBadValueDim, ATTN_ERR_BAD_VALUE_DIM, 6, "vdim < 0 or above ATTN_MAX_DIM")
ATTN_STATUS(kBadQueryLength, ATTN_ERR_BAD_QUERY_LENGTH, 7, "L <= 0 or above ATTN_MAX_SEQ")
ATTN_STATUS(kBadKeyLength, ATTN_ERR_BAD_KEY_LENGTH, 8, "S <= 0 or above ATTN_MAX_SEQ")
ATTN_STATUS(kBadKeyPadding, ATTN_ERR_BAD_KEY_PADDING, 9, "mask key_length outside [0, S]")
ATTN_STATUS(kBadTileRows, ATTN_ERR_BAD_TILE_ROWS, 10, "tile_rows out of range")
ATTN_STATUS(kBadShape, ATTN_ERR_BAD_SHAPE, 11, "views disagree in shape or stride")
ATTN_STATUS(kBadDtype, ATTN_ERR_BAD_DTYPE, 12, "the entry does not support this dtype")
ATTN_STATUS(kPlanMismatch, ATTN_ERR_PLAN_MISMATCH, 13, "the plan was made for another config, shape or dtype")
ATTN_STATUS(kBadCausalOffset, ATTN_ERR_BAD_CAUSAL_OFFSET, 14, "mask causal_offset < 0")
ATTN_STATUS(kBadKvHeads, ATTN_ERR_BAD_KV_HEADS, 15, "num_kv_heads < 0 or does not divide num_heads")
ATTN_STATUS(kBadRope, ATTN_ERR_BAD_ROPE, 16, "rope_base negative or not finite, or odd head_dim with rope")
ATTN_STATUS(kBadPosition, ATTN_ERR_BAD_POSITION, 17, "a rotary position is negative")
ATTN_STATUS(kBadWindow, ATTN_ERR_BAD_WINDOW, 18,
            "mask window < 0, or a window without causal; a cache window above its capacity")
ATTN_STATUS(kParallelNotBuilt, ATTN_ERR_PARALLEL_NOT_BUILT, 19,
            "a parallel-for set on a library built without the split (ATTN_PARALLEL=0)")
ATTN_STATUS(kBadHandle, ATTN_ERR_BAD_HANDLE, 31,
            "a C API handle not set up by its init or load call (or a failed one)")

/* Memory (32..63) */
ATTN_STATUS(kArenaTooSmall, ATTN_ERR_ARENA_TOO_SMALL, 32, "the arena is smaller than the plan's arena bytes")
ATTN_STATUS(kArenaMisaligned, ATTN_ERR_ARENA_MISALIGNED, 33, "the arena is not ATTN_ARENA_ALIGN-aligned")
ATTN_STATUS(kBufferTooSmall, ATTN_ERR_BUFFER_TOO_SMALL, 34,
            "an output buffer given with its size is too small")
ATTN_STATUS(kCacheFull, ATTN_ERR_CACHE_FULL, 35, "a KV cache without a window has no room for the new rows")

/* Model files (64..95), see attn/FORMAT.md */
ATTN_STATUS(kBadMagic, ATTN_ERR_BAD_MAGIC, 64, "not an .attn file (magic)")
ATTN_STATUS(kUnsupportedVersion, ATTN_ERR_UNSUPPORTED_VERSION, 65,
            "format version 0 or newer than the loader")
ATTN_STATUS(kBadHeaderSize, ATTN_ERR_BAD_HEADER_SIZE, 66, "header_size is not 64")
ATTN_STATUS(kTruncated, ATTN_ERR_TRUNCATED, 67, "the buffer is shorter than the file says or than a header")
ATTN_STATUS(kFileSizeMismatch, ATTN_ERR_FILE_SIZE_MISMATCH, 68,
            "header file_size differs from the buffer length")
ATTN_STATUS(kCrcMismatch, ATTN_ERR_CRC_MISMATCH, 69, "the CRC-32 does not match")
ATTN_STATUS(kBadAlignment, ATTN_ERR_BAD_ALIGNMENT, 70, "data alignment not a power of two in [16, max]")
ATTN_STATUS(kSizeOverflow, ATTN_ERR_SIZE_OVERFLOW, 71, "a count x size product or an align-up overflows")
ATTN_STATUS(kOffsetOutOfBounds, ATTN_ERR_OFFSET_OUT_OF_BOUNDS, 72,
            "a table or tensor lies (partly) outside the file")
ATTN_STATUS(kTensorOverlap, ATTN_ERR_TENSOR_OVERLAP, 73, "two tensors overlap or alias")
ATTN_STATUS(kTensorMisaligned, ATTN_ERR_TENSOR_MISALIGNED, 74,
            "a tensor offset is not a multiple of the data alignment")
ATTN_STATUS(kBadDims, ATTN_ERR_BAD_DIMS, 75,
            "a zero dim, rank 0 or rank above 4, or an int4 tensor whose last dim is odd")
ATTN_STATUS(kDimsTooLarge, ATTN_ERR_DIMS_TOO_LARGE, 76, "a dim above the compile-time caps")
ATTN_STATUS(kUnknownDtype, ATTN_ERR_UNKNOWN_DTYPE, 77, "unknown dtype")
ATTN_STATUS(kUnknownRole, ATTN_ERR_UNKNOWN_ROLE, 78, "unknown role, or a role the block may not have")
ATTN_STATUS(kUnknownLayout, ATTN_ERR_UNKNOWN_LAYOUT, 79, "unknown layout")
ATTN_STATUS(kDuplicateRole, ATTN_ERR_DUPLICATE_ROLE, 80, "the same role twice in one block")
ATTN_STATUS(kMissingTensor, ATTN_ERR_MISSING_TENSOR, 81, "a block lacks a tensor its hyperparameters require")
ATTN_STATUS(kDimsMismatch, ATTN_ERR_DIMS_MISMATCH, 82,
            "tensor dims disagree with the block's hyperparameters")
ATTN_STATUS(kBadBlock, ATTN_ERR_BAD_BLOCK, 83, "a malformed block record")
ATTN_STATUS(kBadTensorName, ATTN_ERR_BAD_TENSOR_NAME, 84, "a tensor name is empty or not NUL-terminated")
ATTN_STATUS(kBadByteSize, ATTN_ERR_BAD_BYTE_SIZE, 85, "a tensor's byte size disagrees with dtype x dims")
ATTN_STATUS(kBlockIndex, ATTN_ERR_BLOCK_INDEX, 86, "block index out of range")
ATTN_STATUS(kNotFound, ATTN_ERR_NOT_FOUND, 87, "no tensor with that name (or role)")
ATTN_STATUS(kBadReserved, ATTN_ERR_BAD_RESERVED, 88, "a reserved field is not zero")
ATTN_STATUS(kUnknownFlags, ATTN_ERR_UNKNOWN_FLAGS, 89, "an unknown flag bit is set")
ATTN_STATUS(kBlobMisaligned, ATTN_ERR_BLOB_MISALIGNED, 90, "the blob's address is not 16-byte aligned")
ATTN_STATUS(kTooManyEntries, ATTN_ERR_TOO_MANY_ENTRIES, 91,
            "more blocks or tensors than ATTN_MAX_BLOCKS / ATTN_MAX_TENSORS")
ATTN_STATUS(kDuplicateName, ATTN_ERR_DUPLICATE_NAME, 92, "two tensors share a name")
ATTN_STATUS(kDtypeMismatch, ATTN_ERR_DTYPE_MISMATCH, 93, "a block tensor's dtype differs from its block's")
/* 94 is reserved: it was kQuantizedVariant (an s8/s16 block with rope or
 * grouped K/V heads, rejected by loaders before those ran in fixed point).
 * Never reuse it, so that old logs keep their meaning. */
ATTN_STATUS(kTensorIndex, ATTN_ERR_TENSOR_INDEX, 95, "tensor index out of range")

/* Fixed point (96..127) */
ATTN_STATUS(kBadQuantParams, ATTN_ERR_BAD_QUANT_PARAMS, 96,
            "a multiplier, shift, zero point, scale or softmax constant out of range")
ATTN_STATUS(kUnsupportedMask, ATTN_ERR_UNSUPPORTED_MASK, 97,
            "an additive float mask given to a fixed-point forward")
ATTN_STATUS(kRopePositionOutOfRange, ATTN_ERR_ROPE_POSITION_OUT_OF_RANGE, 98,
            "a rotary position at or past the converter's cos/sin table")
ATTN_STATUS(kBiasOutOfRange, ATTN_ERR_BIAS_OUT_OF_RANGE, 99,
            "an s8/s16 bias large enough to overflow its projection's accumulator (FORMAT.md, Bias bound)")
ATTN_STATUS(kMaskNotCalibrated, ATTN_ERR_MASK_NOT_CALIBRATED, 100,
            "an s8/s16 block run with a mask its ranges were not calibrated for (its mask_coverage): "
            "requantize with the mask it runs with (attn quantize --causal / --key-length N) or --any-mask")

/* Whole models (128..159), attn/transformer.h */
ATTN_STATUS(kBadNumLayers, ATTN_ERR_BAD_NUM_LAYERS, 128, "num_layers <= 0 or above ATTN_MAX_LAYERS")
ATTN_STATUS(kBadFfnDim, ATTN_ERR_BAD_FFN_DIM, 129, "ffn_dim <= 0 or above ATTN_MAX_DIM")
ATTN_STATUS(kBadVocab, ATTN_ERR_BAD_VOCAB, 130, "vocab_size or type_vocab_size out of range")
ATTN_STATUS(kBadMaxPositions, ATTN_ERR_BAD_MAX_POSITIONS, 131, "max_positions <= 0 or above ATTN_MAX_SEQ")
ATTN_STATUS(kBadNorm, ATTN_ERR_BAD_NORM, 132, "unknown norm kind, or norm eps not finite and > 0")
ATTN_STATUS(kBadActivation, ATTN_ERR_BAD_ACTIVATION, 133, "unknown activation")
ATTN_STATUS(kBadHead, ATTN_ERR_BAD_HEAD, 134, "unknown LM head kind")
ATTN_STATUS(kTokenOutOfRange, ATTN_ERR_TOKEN_OUT_OF_RANGE, 135, "a token id outside [0, vocab_size)")
ATTN_STATUS(kSequenceTooLong, ATTN_ERR_SEQUENCE_TOO_LONG, 136,
            "the tokens reach past max_positions, the plan's max_tokens or the cache capacity, or a "
            "KV cache's positions past INT32_MAX - 1")
ATTN_STATUS(kNotAModel, ATTN_ERR_NOT_A_MODEL, 137, "the file holds attention blocks, not a whole model")
ATTN_STATUS(kBadModelRecord, ATTN_ERR_BAD_MODEL_RECORD, 138,
            "a malformed model record, or a layer's block record disagreeing with it")
ATTN_STATUS(kBadSampler, ATTN_ERR_BAD_SAMPLER, 139, "a sampler setting out of range (temperature, top_k)")
ATTN_STATUS(kNotCausal, ATTN_ERR_NOT_CAUSAL, 144,
            "a KV-cache state planned for a model without causal attention")
ATTN_STATUS(kCapacityPastPositions, ATTN_ERR_CAPACITY_PAST_POSITIONS, 145,
            "a KV-cache capacity above the model's max_positions: positions never get there")

/* Tokenizer blobs (160..191), attn/tokenizer.h and src/tokenizer/README.md */
ATTN_STATUS(kBadTokenizerAlgorithm, ATTN_ERR_BAD_TOKENIZER_ALGORITHM, 160,
            "unknown tokenizer algorithm, or one this build does not run")
ATTN_STATUS(kTableMisaligned, ATTN_ERR_TABLE_MISALIGNED, 161,
            "a tokenizer table offset is not a multiple of 4")
ATTN_STATUS(kBadPieceOffsets, ATTN_ERR_BAD_PIECE_OFFSETS, 162,
            "piece offsets do not run non-decreasing from 0 to the piece bytes' size")
ATTN_STATUS(kBadPieceLength, ATTN_ERR_BAD_PIECE_LENGTH, 163,
            "an empty piece, one over max_piece_len, or max_piece_len over ATTN_TOKENIZER_MAX_PIECE")
ATTN_STATUS(kUnsortedPieces, ATTN_ERR_UNSORTED_PIECES, 164,
            "the sorted piece index is not strictly increasing (bytewise) or names an id out of range")
ATTN_STATUS(kBadPieceType, ATTN_ERR_BAD_PIECE_TYPE, 165,
            "an unknown piece type, or a byte piece not spelled <0xHH>")
ATTN_STATUS(kBadSpecialToken, ATTN_ERR_BAD_SPECIAL_TOKEN, 166,
            "a special token id out of range, of the wrong piece type, or missing where needed")
ATTN_STATUS(kBadScore, ATTN_ERR_BAD_SCORE, 167, "a piece score is not finite")
ATTN_STATUS(kBadByteTable, ATTN_ERR_BAD_BYTE_TABLE, 168,
            "a byte table entry not the byte piece of its byte, or missing where needed")
ATTN_STATUS(kBadWordLimit, ATTN_ERR_BAD_WORD_LIMIT, 175,
            "a WordPiece max_input_chars_per_word of 0 or over ATTN_TOKENIZER_MAX_WORD_CHARS")
ATTN_STATUS(
    kBadMerges, ATTN_ERR_BAD_MERGES, 176,
    "a byte-level BPE merge names an id out of range or not a text piece, or its result is not its two "
    "pieces' bytes joined")
ATTN_STATUS(kUnsortedMerges, ATTN_ERR_UNSORTED_MERGES, 177,
            "the merge index is not strictly increasing by (left id, right id) or names a rank out of range")
ATTN_STATUS(kBadPreTokenizer, ATTN_ERR_BAD_PRE_TOKENIZER, 178,
            "an unknown byte-level pre-tokenizer split or option bit")
/* The tokenizer section of a .attn model (190, 191; 169..189 stay with the blob's own checks) */
ATTN_STATUS(kBadTokenizerSection, ATTN_ERR_BAD_TOKENIZER_SECTION, 190,
            "the model's tokenizer tensor is not a whole tokenizer blob (magic, version, header or sizes)")
ATTN_STATUS(kTokenizerVocabMismatch, ATTN_ERR_TOKENIZER_VOCAB_MISMATCH, 191,
            "the tokenizer has more pieces than the model's vocabulary")
