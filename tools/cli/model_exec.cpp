// model_exec.cpp: see model_exec.h.
#include "cli/model_exec.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace attn {
namespace cli {

TokenIds read_token_ids(const std::string& path, const TransformerConfig& c, bool any_length) {
  const std::vector<uint8_t> b = read_npy_bytes(path);  // a file or a pipe
  npy::Header h;
  try {
    h = npy::parse_header(b.data(), b.size());
  } catch (const std::runtime_error& e) {
    throw Error(path + ": " + e.what());
  }
  const bool i32 = h.descr == "<i4", i64 = h.descr == "<i8";
  if (!i32 && !i64)
    throw Error(path + ": token ids are " + npy::dtype_name(h.descr) +
                ", but must be int32 ('<i4') or int64 ('<i8')");
  if (h.shape.size() != 1 && h.shape.size() != 2)
    throw Error(path + ": token ids must have shape [B, L] or [L], got rank " +
                std::to_string(h.shape.size()));
  const size_t item = i32 ? 4 : 8;
  if (b.size() - h.data_at != static_cast<size_t>(h.count) * item)
    throw Error(path + ": data size " + std::to_string(b.size() - h.data_at) +
                " bytes disagrees with shape " + h.shape_text + " and dtype " + h.descr);
  TokenIds t;
  t.batched = h.shape.size() == 2;
  t.rows = t.batched ? h.shape[0] : 1;
  t.len = h.shape.back();
  if (t.rows < 1 || t.len < 1) throw Error(path + ": no tokens (shape " + h.shape_text + ")");
  if (!any_length && t.len > c.max_positions)
    throw Error(path + ": sequences of " + std::to_string(t.len) +
                " tokens exceed the model's max_positions " + std::to_string(c.max_positions) +
                " (kSequenceTooLong)");
  t.ids.resize(static_cast<size_t>(h.count));
  for (size_t i = 0; i < t.ids.size(); ++i) {
    int64_t v = 0;
    if (i32) {
      int32_t x = 0;
      std::memcpy(&x, b.data() + h.data_at + 4 * i, 4);
      v = x;
    } else {
      std::memcpy(&v, b.data() + h.data_at + 8 * i, 8);
    }
    if (v < 0 || v >= c.vocab_size) {
      const std::string at = t.batched ? "[" + std::to_string(i / static_cast<size_t>(t.len)) + ", " +
                                             std::to_string(i % static_cast<size_t>(t.len)) + "]"
                                       : std::to_string(i);
      throw Error(path + ": token id " + std::to_string(v) + " at position " + at +
                  " is outside the vocabulary [0, " + std::to_string(c.vocab_size) + ") (kTokenOutOfRange)");
    }
    t.ids[i] = static_cast<int32_t>(v);
  }
  return t;
}

void check_tokens(const std::string& what, const int32_t* ids, int64_t n, int32_t vocab) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error(what + ": token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                  " is outside the vocabulary [0, " + std::to_string(vocab) + ") (kTokenOutOfRange)");
  }
}

std::vector<int32_t> parse_id_list(const std::string& s, const std::string& what, int32_t vocab) {
  std::vector<int32_t> ids;
  size_t p = 0;
  while (p < s.size()) {
    if (s[p] == ',' || s[p] == ' ') {
      ++p;
      continue;
    }
    size_t e = p;
    while (e < s.size() && s[e] != ',' && s[e] != ' ') ++e;
    const std::string tok = s.substr(p, e - p);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(tok.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX)
      throw Error(what + ": '" + printable(tok) + "' is not an integer");
    ids.push_back(static_cast<int32_t>(v));
    p = e;
  }
  check_tokens(what, ids.data(), static_cast<int64_t>(ids.size()), vocab);
  return ids;
}

ModelExec::ModelExec(const std::string& path, const Model& m) : path_(path) {
  if (!m.is_model()) throw Error(path + " holds attention blocks, not a whole model (kNotAModel)");
  format::ModelRecord r{};
  Status s = m.model_record(&r);
  if (s == Status::kOk) s = m.transformer_config(&c_);
  if (s != Status::kOk) throw Error(path + ": model record unreadable: " + describe(s));
  dtype_ = static_cast<DType>(r.dtype);
  const int32_t n = c_.num_layers;
  switch (dtype_) {
    case DType::kF32:
      lf_.resize(static_cast<size_t>(n));
      s = m.transformer_weights_f32(lf_.data(), n, &wf_);
      break;
    case DType::kS8:
      l8_.resize(static_cast<size_t>(n));
      s = m.transformer_weights_s8(l8_.data(), n, &w8_);
      break;
    case DType::kS16:
      l16_.resize(static_cast<size_t>(n));
      s = m.transformer_weights_s16(l16_.data(), n, &w16_);
      break;
    default:
      s = Status::kBadDtype;
  }
  if (s != Status::kOk) throw Error(path + ": model weights unreadable: " + describe(s));
}

float ModelExec::output_scale() const {
  return dtype_ == DType::kS8 ? w8_.output_scale : dtype_ == DType::kS16 ? w16_.output_scale : 1.0f;
}

void ModelExec::to_float(const int32_t* q, size_t n, float* out) const {
  const double scale = static_cast<double>(output_scale());
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(scale * static_cast<double>(q[i]));
}

// f32: every layer's attention and FFN panels made once, for any plan of the
// config (0 bytes where this build's kernels read the weights as stored).
void ModelExec::pack(const TransformerPlan& plan) {
  if (dtype_ != DType::kF32 || packed_done_) return;
  size_t bytes = 0;
  Status s = pack_transformer_weights_f32_storage_bytes(plan, &bytes);
  if (s == Status::kOk && bytes > 0) {
    packed_ = AlignedBytes(bytes);
    s = pack_transformer_weights_f32(plan, lf_.data(), packed_.data(), bytes);
  }
  if (s != Status::kOk) throw Error(path_ + ": packing weights: " + describe(s));
  packed_done_ = true;
}

void ModelExec::set_parallel(const ParallelFor& parallel) {
  parallel_ = forward_plan_.parallel = decode_plan_.parallel = parallel;
}

void ModelExec::forward(const int32_t* tokens, int32_t n, float* out) {
  if (forward_plan_.max_tokens < n) {
    TransformerPlan plan;
    const Status s = plan_transformer(c_, dtype_, n, 0, &plan);
    if (s != Status::kOk)
      throw Error(path_ + ": cannot plan a forward of " + std::to_string(n) + " tokens: " + describe(s));
    pack(plan);
    forward_buf_ = AlignedBytes(plan.arena_bytes);
    if (forward_arena_.init(forward_buf_.data(), plan.arena_bytes) != Status::kOk)
      throw Error("arena init failed");
    forward_plan_ = plan;
    forward_plan_.parallel = parallel_;
  }
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(output_dim());
  Status s = Status::kOk;
  if (dtype_ == DType::kF32) {
    s = transformer_forward_f32(forward_plan_, wf_, tokens, n, OutputRows::kAll, out, forward_arena_);
  } else {
    ints_.resize(count);
    s = dtype_ == DType::kS8 ? transformer_forward_s8(forward_plan_, w8_, tokens, n, OutputRows::kAll,
                                                      ints_.data(), forward_arena_)
                             : transformer_forward_s16(forward_plan_, w16_, tokens, n, OutputRows::kAll,
                                                       ints_.data(), forward_arena_);
    if (s == Status::kOk) to_float(ints_.data(), count, out);
  }
  if (s != Status::kOk) throw Error(path_ + ": forward failed: " + describe(s));
}

void ModelExec::start_decode(int32_t max_tokens, int32_t capacity, int32_t window) {
  if (!c_.causal)
    throw Error(path_ +
                " is a bidirectional encoder: decoding through a KV cache needs a causal model (kNotCausal)");
  TransformerPlan plan;
  Status s = plan_transformer(c_, dtype_, max_tokens, capacity, &plan);
  if (s != Status::kOk)
    throw Error(path_ + ": cannot plan decoding (" + std::to_string(max_tokens) +
                " token(s) per call, cache of " + std::to_string(capacity) + " positions): " + describe(s));
  // The KV caches grow with the capacity (up to ATTN_MAX_SEQ positions per layer): name it before allocating.
  check_fits(path_, static_cast<uint64_t>(plan.arena_bytes) + plan.state_bytes,
             "the decode arena and KV caches (lower --capacity)");
  // Decoding reads the f32 weights where they are, in the mapped file, as
  // firmware reads them in flash: packing them (about 90 ms and 24 MB for a
  // stories15M-sized model) gave neither the one-token steps nor a 200-token
  // prefill any measurable speed (tools/bench/README.md, "Loading").
  decode_buf_ = AlignedBytes(plan.arena_bytes);
  state_buf_ = AlignedBytes(plan.state_bytes);
  if (decode_arena_.init(decode_buf_.data(), plan.arena_bytes) != Status::kOk ||
      state_arena_.init(state_buf_.data(), plan.state_bytes) != Status::kOk)
    throw Error("arena init failed");
  switch (dtype_) {
    case DType::kF32:
      s = transformer_state_init_f32(plan, window, state_arena_, &sf_);
      break;
    case DType::kS8:
      s = transformer_state_init_s8(plan, window, state_arena_, &s8_);
      break;
    default:
      s = transformer_state_init_s16(plan, window, state_arena_, &s16_);
      break;
  }
  if (s != Status::kOk) throw Error(path_ + ": decoding state: " + describe(s));
  decode_plan_ = plan;
  decode_plan_.parallel = parallel_;
  decoding_ = true;
}

void ModelExec::reset() {
  if (!decoding_) return;
  if (dtype_ == DType::kF32) {
    (void)transformer_state_reset(&sf_);
  } else if (dtype_ == DType::kS8) {
    (void)transformer_state_reset(&s8_);
  } else {
    (void)transformer_state_reset(&s16_);
  }
}

int32_t ModelExec::length() const {
  return dtype_ == DType::kF32 ? sf_.length : dtype_ == DType::kS8 ? s8_.length : s16_.length;
}

Status ModelExec::decode(const int32_t* tokens, int32_t n, OutputRows rows, float* out, int32_t* raw) {
  if (!decoding_) return Status::kPlanMismatch;
  if (dtype_ == DType::kF32)
    return transformer_decode_f32(decode_plan_, wf_, &sf_, tokens, n, rows, out, decode_arena_);
  const size_t count =
      static_cast<size_t>(rows == OutputRows::kLast ? 1 : n) * static_cast<size_t>(output_dim());
  ints_.resize(count);
  const Status s =
      dtype_ == DType::kS8
          ? transformer_decode_s8(decode_plan_, w8_, &s8_, tokens, n, rows, ints_.data(), decode_arena_)
          : transformer_decode_s16(decode_plan_, w16_, &s16_, tokens, n, rows, ints_.data(), decode_arena_);
  if (s != Status::kOk) return s;
  to_float(ints_.data(), count, out);
  if (raw != nullptr) std::memcpy(raw, ints_.data(), count * sizeof(int32_t));
  return Status::kOk;
}

}  // namespace cli
}  // namespace attn
