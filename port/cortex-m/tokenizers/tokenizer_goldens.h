// tokenizer_goldens.h: the committed tokenizer goldens as the boards see
// them (written for the host by tools/fixtures/tokenizer_goldens/
// tokenizer_goldens_to_c.cpp): per case, one tokenizer blob and its golden
// lines.
#pragma once

#include <cstdint>

struct TokenizerGoldenCase {
  const char* name;
  const char* file;     // the tokenizer file under tests/data/tokenizers ("": bytes)
  const uint8_t* blob;  // 16-byte aligned
  uint32_t blob_size;
  // Per line, little-endian: u32 text length, the text, u32 id count, the
  // ids (i32), u32 decoded length, the text decode() must give.
  const uint8_t* lines;
  uint32_t lines_size;
  uint32_t line_count;
};

extern const TokenizerGoldenCase kTokenizerGoldenCases[];
extern const int kTokenizerGoldenCaseCount;
