// int_model_fixture.h: running one integer model fixture (tests/data/int_models)
// the same way on the host (tests/int_model_fixtures_test.cpp, and the
// generator tests/int_model_fixtures_gen.cpp that writes the expected bytes)
// and on the Cortex-M boards (port/cortex-m/conformance/int_models.cpp).
// Freestanding: no heap, no exceptions, no standard library beyond <cstring>,
// every buffer the caller's.
//
// A fixture is an s8 or s16 model file and its expected file, the results of
// the host's ref build (ATTN_FORCE_REF), little-endian int32 words:
//
//   [0] kMagic  [1] kVersion  [2] the model file's CRC-32 (Model::crc)
//   [3] n: tokens of the forward  [4] output_dim  [5] prompt  [6] steps  [7] 0
//   tokens [n]                     the forward's token ids
//   outputs [n, output_dim]        transformer_forward_s8/_s16, every row
//   generated [steps]              greedy generation (decoders; steps = 0 otherwise):
//                                  prompt = tokens[0, prompt), then `steps` tokens,
//                                  each the argmax of sample_s32 over the last logits
//
// What a target checks (check()): the forward equals `outputs`; a decoder's
// decode over a KV cache (a prefill of up to kPrefill tokens, then 1 and 2
// tokens per call in turn) equals the same rows; the greedy tokens equal
// `generated`; and the C handle (attn/attn.h) in two buffers of exactly
// attn/model_bytes.h's model_bytes() (what `attn emit-c` writes for this
// target) binds, one byte fewer of either is refused, and its forward
// equals `outputs`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/arena.h"
#include "attn/attn.h"
#include "attn/model.h"
#include "attn/model_bytes.h"
#include "attn/parallel.h"
#include "attn/sampler.h"
#include "attn/transformer_fixed.h"

namespace int_fixture {

constexpr uint32_t kMagic = 0x584D4E49u;  // "INMX"
constexpr uint32_t kVersion = 1;
constexpr int32_t kHeaderWords = 8;
constexpr int32_t kMaxLayers = 4;  // layers of a fixture model (the weight views are static on boards)
constexpr int32_t kPrefill = 3;    // tokens of the decode check's first call

struct Expect {
  uint32_t model_crc = 0;
  int32_t n = 0;
  int32_t output_dim = 0;
  int32_t prompt = 0;
  int32_t steps = 0;
  const int32_t* tokens = nullptr;
  const int32_t* outputs = nullptr;
  const int32_t* generated = nullptr;
};

// The expected file at `data` (4-byte aligned): false when its size or header is wrong.
inline bool parse_expect(const void* data, size_t size, Expect* e) {
  if (data == nullptr || size % 4 != 0 || size < kHeaderWords * 4u) return false;
  const auto* w = static_cast<const int32_t*>(data);
  if (static_cast<uint32_t>(w[0]) != kMagic || static_cast<uint32_t>(w[1]) != kVersion || w[7] != 0)
    return false;
  e->model_crc = static_cast<uint32_t>(w[2]);
  e->n = w[3];
  e->output_dim = w[4];
  e->prompt = w[5];
  e->steps = w[6];
  if (e->n < 1 || e->n > 4096 || e->output_dim < 1 || e->output_dim > (1 << 20) || e->prompt < 0 ||
      e->steps < 0 || e->prompt > e->n || (e->steps > 0) != (e->prompt > 0)) {
    return false;
  }
  const uint64_t words =
      uint64_t(kHeaderWords) + uint64_t(e->n) + uint64_t(e->n) * uint64_t(e->output_dim) + uint64_t(e->steps);
  if (words * 4u != size) return false;
  e->tokens = w + kHeaderWords;
  e->outputs = e->tokens + e->n;
  e->generated = e->outputs + size_t(e->n) * size_t(e->output_dim);
  return true;
}

// The caller's memory for the arenas (ATTN_ARENA_ALIGN-aligned). Every call
// takes exactly the planned bytes from its start; `used` is the most any call
// took, so the bytes after it must stay untouched (boards check guard bytes).
struct Memory {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t used = 0;
};

// One loaded integer model: the file's views.
struct Model {
  attn::Model file;
  attn::TransformerConfig config;
  attn::DType dtype = attn::DType::kS8;
  attn::LayerWeightsS8 layers8[kMaxLayers];
  attn::LayerWeightsS16 layers16[kMaxLayers];
  attn::TransformerWeightsS8 w8;
  attn::TransformerWeightsS16 w16;

  int32_t vocab() const { return config.vocab_size; }
  float output_scale() const { return dtype == attn::DType::kS8 ? w8.output_scale : w16.output_scale; }
};

inline attn::Status load(const void* blob, size_t size, Model* m) {
  ATTN_TRY(attn::Model::load(blob, size, &m->file));
  ATTN_TRY(m->file.transformer_config(&m->config));
  attn::format::ModelRecord r;
  ATTN_TRY(m->file.model_record(&r));
  m->dtype = static_cast<attn::DType>(r.dtype);
  if (m->dtype == attn::DType::kS8) return m->file.transformer_weights_s8(m->layers8, kMaxLayers, &m->w8);
  if (m->dtype == attn::DType::kS16) return m->file.transformer_weights_s16(m->layers16, kMaxLayers, &m->w16);
  return attn::Status::kBadDtype;
}

namespace detail {

inline attn::Status carve(Memory& mem, size_t offset, size_t bytes, attn::Arena* a) {
  if (offset > mem.size || bytes > mem.size - offset) return attn::Status::kArenaTooSmall;
  ATTN_TRY(a->init(mem.data + offset, bytes));
  mem.used = offset + bytes > mem.used ? offset + bytes : mem.used;
  return attn::Status::kOk;
}

inline attn::Status forward(const Model& m, const attn::TransformerPlan& p, const int32_t* t, int32_t n,
                            attn::OutputRows rows, int32_t* out, attn::Arena& a) {
  return m.dtype == attn::DType::kS8 ? attn::transformer_forward_s8(p, m.w8, t, n, rows, out, a)
                                     : attn::transformer_forward_s16(p, m.w16, t, n, rows, out, a);
}

// A decoding session: the state and the call arena from one Memory.
struct Session {
  attn::TransformerPlan plan;
  attn::TransformerStateS8 s8;
  attn::TransformerStateS16 s16;
  attn::Arena state_arena, call_arena;

  attn::Status start(const Model& m, int32_t max_tokens, int32_t capacity, Memory& mem) {
    ATTN_TRY(attn::plan_transformer_fixed(m.config, m.dtype, max_tokens, capacity, &plan));
    const size_t state = attn::arena_round_up(plan.state_bytes);
    ATTN_TRY(carve(mem, 0, plan.state_bytes, &state_arena));
    ATTN_TRY(carve(mem, state, plan.arena_bytes, &call_arena));
    return m.dtype == attn::DType::kS8 ? attn::transformer_state_init_s8(plan, 0, state_arena, &s8)
                                       : attn::transformer_state_init_s16(plan, 0, state_arena, &s16);
  }
  attn::Status step(const Model& m, const int32_t* t, int32_t n, attn::OutputRows rows, int32_t* out) {
    return m.dtype == attn::DType::kS8
               ? attn::transformer_decode_s8(plan, m.w8, &s8, t, n, rows, out, call_arena)
               : attn::transformer_decode_s16(plan, m.w16, &s16, t, n, rows, out, call_arena);
  }
};

}  // namespace detail

// The forward of n tokens, every row: out [n, output_dim].
inline attn::Status forward(const Model& m, const int32_t* tokens, int32_t n, int32_t* out, Memory& mem) {
  attn::TransformerPlan plan;
  ATTN_TRY(attn::plan_transformer_fixed(m.config, m.dtype, n, 0, &plan));
  attn::Arena a;
  ATTN_TRY(detail::carve(mem, 0, plan.arena_bytes, &a));
  return detail::forward(m, plan, tokens, n, attn::OutputRows::kAll, out, a);
}

// The same rows through the KV cache: a prefill of min(kPrefill, n) tokens
// (every row), then calls of 1 token (its row, kLast) and 2 tokens (both
// rows) in turn.
inline attn::Status decode(const Model& m, const int32_t* tokens, int32_t n, int32_t* out, Memory& mem) {
  detail::Session s;
  ATTN_TRY(s.start(m, kPrefill, n, mem));
  const size_t dim = static_cast<size_t>(m.config.output_dim());
  int32_t done = 0;
  for (int32_t call = 0; done < n; ++call) {
    int32_t k = call == 0 ? kPrefill : (call % 2 == 1 ? 1 : 2);
    k = k < n - done ? k : n - done;
    const attn::OutputRows rows = k == 1 ? attn::OutputRows::kLast : attn::OutputRows::kAll;
    ATTN_TRY(s.step(m, tokens + done, k, rows, out + size_t(done) * dim));
    done += k;
  }
  return attn::Status::kOk;
}

// Greedy generation: decode the prompt (its last row), then each new token,
// `steps` tokens in all, each the greedy sample_s32 of the last logits.
// logits: scratch [vocab].
inline attn::Status generate(const Model& m, const int32_t* prompt, int32_t p, int32_t steps, int32_t* logits,
                             int32_t* generated, Memory& mem) {
  if (m.config.head == attn::LmHead::kNone || p < 1 || steps < 1) return attn::Status::kBadShape;
  detail::Session s;
  ATTN_TRY(s.start(m, p, p + steps - 1, mem));
  const attn::Sampler greedy;
  ATTN_TRY(s.step(m, prompt, p, attn::OutputRows::kLast, logits));
  for (int32_t i = 0; i < steps; ++i) {
    ATTN_TRY(attn::sample_s32(logits, m.vocab(), m.output_scale(), greedy, nullptr, &generated[i]));
    if (i + 1 < steps) ATTN_TRY(s.step(m, &generated[i], 1, attn::OutputRows::kLast, logits));
  }
  return attn::Status::kOk;
}

// What check() found.
struct Report {
  int checks = 0;    // comparisons made (forward, decode, generation)
  int failures = 0;  // of them, the failed ones
  const char* what =
      nullptr;  // the first failure: "forward", "decode", "generate", "buffers", "load", "expect"
  attn::Status status = attn::Status::kOk;  // its status, when a call failed
  long index = -1;                          // or its first differing element
  int32_t got = 0, want = 0;
};

namespace detail {
inline void fail(Report* r, const char* what, attn::Status st, long index = -1, int32_t got = 0,
                 int32_t want = 0) {
  if (r->failures++ == 0) {
    r->what = what;
    r->status = st;
    r->index = index;
    r->got = got;
    r->want = want;
  }
}
// Compare n words; false (and the first difference reported) on a mismatch.
inline bool same(const int32_t* got, const int32_t* want, size_t n, const char* what, Report* r) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fail(r, what, attn::Status::kOk, long(i), got[i], want[i]);
      return false;
    }
  }
  return true;
}
// The C handle bound in two buffers of exactly model_bytes() for calls of n
// tokens (a decoder: and caches of n positions) from `mem`: the sizes are
// attn_transformer_init_split_bytes', exactly they are accepted and one byte
// fewer of either is refused, and the forward gives `outputs`.
inline void check_buffers(const Model& m, const Expect& e, int32_t* out, Memory& mem, Report* r) {
  ++r->checks;
  const int32_t cap = m.config.causal ? e.n : 0;
  const attn::ModelBytes b = attn::model_bytes(m.config, m.dtype, e.n, cap);
  attn_model cm;
  size_t state_bytes = 0, scratch_bytes = 0;
  if (b.arena == 0 || attn_model_load(&cm, m.file.data(), m.file.size()) != ATTN_OK ||
      attn_transformer_init_split_bytes(&cm, e.n, cap, &state_bytes, &scratch_bytes) != ATTN_OK) {
    fail(r, "buffers", attn::Status::kBadHandle);
    return;
  }
  if (state_bytes != b.state || scratch_bytes != b.arena) {
    fail(r, "buffers", attn::Status::kPlanMismatch, 0, int32_t(scratch_bytes), int32_t(b.arena));
    return;
  }
  const size_t at = (b.arena + ATTN_ARENA_ALIGN - 1) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  if (at > mem.size || b.state > mem.size - at) {
    fail(r, "buffers", attn::Status::kArenaTooSmall);
    return;
  }
  mem.used = at + b.state > mem.used ? at + b.state : mem.used;
  uint8_t* scratch = mem.data;
  uint8_t* state = b.state > 0 ? mem.data + at : nullptr;
  attn_transformer tf;
  const bool short_state =
      b.state > 0 && attn_transformer_init_split(&tf, &cm, e.n, cap, 0, state, b.state - 1, scratch,
                                                 b.arena) != ATTN_ERR_ARENA_TOO_SMALL;
  if (short_state || attn_transformer_init_split(&tf, &cm, e.n, cap, 0, state, b.state, scratch,
                                                 b.arena - 1) != ATTN_ERR_ARENA_TOO_SMALL) {
    fail(r, "buffers", attn::Status::kOk, 1);
    return;
  }
  const int st = attn_transformer_init_split(&tf, &cm, e.n, cap, 0, state, b.state, scratch, b.arena);
  // A hook that would split: taken where the split is built, refused where
  // it is not (the boards' default), never silently ignored.
  const auto serial = [](void*, int32_t tasks, attn_task_fn task, void* arg) {
    for (int32_t i = 0; i < tasks; ++i) task(arg, i);
  };
  if (st == ATTN_OK) {
    const int want = attn::kParallelBuilt ? ATTN_OK : ATTN_ERR_PARALLEL_NOT_BUILT;
    const int got = attn_transformer_set_parallel(&tf, serial, nullptr, 2);
    if (got != want) {
      fail(r, "parallel hook", static_cast<attn::Status>(got));
      return;
    }
  }
  const int fw =
      st == ATTN_OK ? attn_transformer_forward_s32(&tf, e.tokens, e.n, ATTN_ROWS_ALL, out, nullptr) : st;
  if (fw != ATTN_OK) {
    fail(r, "buffers", static_cast<attn::Status>(fw));
    return;
  }
  same(out, e.outputs, size_t(e.n) * size_t(e.output_dim), "buffers", r);
}

}  // namespace detail

// Runs every check of one fixture: out is scratch of at least n * output_dim
// words (and vocab + steps for a decoder). Returns the failures.
inline int check(const Model& m, const Expect& e, int32_t* out, size_t out_words, Memory& mem, Report* r) {
  const size_t rows = size_t(e.n) * size_t(e.output_dim);
  if (m.file.crc() != e.model_crc || e.output_dim != m.config.output_dim() ||
      out_words < rows + size_t(m.vocab()) + size_t(e.steps)) {
    detail::fail(r, "expect", attn::Status::kPlanMismatch);
    return r->failures;
  }
  ++r->checks;
  std::memset(out, 0x5A, rows * sizeof(int32_t));
  attn::Status st = forward(m, e.tokens, e.n, out, mem);
  if (st != attn::Status::kOk) {
    detail::fail(r, "forward", st);
  } else {
    detail::same(out, e.outputs, rows, "forward", r);
  }
  if (m.config.causal) {
    ++r->checks;
    std::memset(out, 0x5A, rows * sizeof(int32_t));
    st = decode(m, e.tokens, e.n, out, mem);
    if (st != attn::Status::kOk) {
      detail::fail(r, "decode", st);
    } else {
      detail::same(out, e.outputs, rows, "decode", r);
    }
  }
  if (e.steps > 0) {
    ++r->checks;
    int32_t* generated = out + m.vocab();
    st = generate(m, e.tokens, e.prompt, e.steps, out, generated, mem);
    if (st != attn::Status::kOk) {
      detail::fail(r, "generate", st);
    } else {
      detail::same(generated, e.generated, size_t(e.steps), "generate", r);
    }
  }
  detail::check_buffers(m, e, out, mem, r);
  return r->failures;
}

}  // namespace int_fixture
