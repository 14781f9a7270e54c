// capi/tokenizer_c.cpp: the C API of the tokenizer (attn/attn.h), over
// attn::Tokenizer (attn/tokenizer.h).
#include <cstring>

#include "attn/attn.h"
#include "attn/model.h"
#include "attn/tokenizer.h"
#include "capi/handles.h"

namespace {

using attn::Status;
using attn::Tokenizer;
using attn::TokenizerDecodeState;
using attn::capi::fetch;
using attn::capi::to_c;

constexpr uint32_t kTokenizerMagic = 0x4E4B4F54u;  // "TOKN": an attn_tokenizer

static_assert(attn::capi::fits_handle<Tokenizer, attn_tokenizer>(), "attn_tokenizer is too small");
static_assert(sizeof(TokenizerDecodeState) == sizeof(attn_tokenizer_decode_state) &&
                  std::is_trivially_copyable<TokenizerDecodeState>::value,
              "attn_tokenizer_decode_state must hold a TokenizerDecodeState");

TokenizerDecodeState state_in(const attn_tokenizer_decode_state* c) {
  TokenizerDecodeState s;
  std::memcpy(&s, c, sizeof s);
  return s;
}

void state_out(const TokenizerDecodeState& s, attn_tokenizer_decode_state* c) {
  std::memcpy(c, &s, sizeof s);
}

}  // namespace

extern "C" {

attn_status attn_tokenizer_load(attn_tokenizer* tokenizer, const void* blob, size_t size) {
  if (tokenizer == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  std::memset(tokenizer, 0, sizeof *tokenizer);
  Tokenizer t;
  ATTN_TRY_C(Tokenizer::load(blob, size, &t));
  attn::capi::store(tokenizer, kTokenizerMagic, t);
  return ATTN_OK;
}

attn_status attn_model_tokenizer(const attn_model* model, attn_tokenizer* tokenizer) {
  if (tokenizer == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  std::memset(tokenizer, 0, sizeof *tokenizer);
  attn::Model m;
  ATTN_TRY_C(attn::capi::fetch(model, attn::capi::kModelMagic, &m));
  Tokenizer t;
  ATTN_TRY_C(m.tokenizer(&t));
  attn::capi::store(tokenizer, kTokenizerMagic, t);
  return ATTN_OK;
}

attn_status attn_tokenizer_vocab_size(const attn_tokenizer* tokenizer, int32_t* vocab_size) {
  if (vocab_size == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  *vocab_size = t.vocab_size();
  return ATTN_OK;
}

attn_status attn_tokenizer_special(const attn_tokenizer* tokenizer, int32_t which, int32_t* id) {
  if (id == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  *id = -1;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  if (which >= 0 && which < static_cast<int32_t>(attn::SpecialToken::kCount)) {
    *id = t.special(static_cast<attn::SpecialToken>(which));
  }
  return ATTN_OK;
}

attn_status attn_tokenizer_sizes(const attn_tokenizer* tokenizer, size_t text_len, size_t* scratch_bytes,
                                 size_t* max_ids) {
  if (scratch_bytes == nullptr || max_ids == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  *scratch_bytes = t.tokenize_scratch_bytes(text_len);
  *max_ids = t.max_ids(text_len);
  return ATTN_OK;
}

attn_status attn_tokenizer_max_decode_bytes(const attn_tokenizer* tokenizer, size_t* bytes) {
  if (bytes == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  *bytes = t.max_decode_bytes();
  return ATTN_OK;
}

attn_status attn_tokenizer_encode(const attn_tokenizer* tokenizer, const char* text, size_t len, int32_t* ids,
                                  size_t max_ids, void* scratch, size_t scratch_bytes, size_t* n) {
  if (n == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  *n = 0;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  attn::Arena arena;
  if (scratch != nullptr || scratch_bytes != 0) ATTN_TRY_C(arena.init(scratch, scratch_bytes));
  return to_c(t.encode(text, len, ids, max_ids, &arena, n));
}

attn_status attn_tokenizer_decode(const attn_tokenizer* tokenizer, int32_t id,
                                  attn_tokenizer_decode_state* state, char* out, size_t cap, size_t* n) {
  if (state == nullptr || n == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  *n = 0;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  TokenizerDecodeState s = state_in(state);
  ATTN_TRY_C(t.decode(id, &s, out, cap, n));
  state_out(s, state);
  return ATTN_OK;
}

attn_status attn_tokenizer_decode_flush(const attn_tokenizer* tokenizer, attn_tokenizer_decode_state* state,
                                        char* out, size_t cap, size_t* n) {
  if (state == nullptr || n == nullptr) return ATTN_ERR_NULL_ARGUMENT;
  *n = 0;
  Tokenizer t;
  ATTN_TRY_C(fetch(tokenizer, kTokenizerMagic, &t));
  TokenizerDecodeState s = state_in(state);
  ATTN_TRY_C(t.decode_flush(&s, out, cap, n));
  state_out(s, state);
  return ATTN_OK;
}

}  // extern "C"
