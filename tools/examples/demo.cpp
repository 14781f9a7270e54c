// attn_example_demo: a trained attention classifier, run by attn.
//
// The model (tools/train_demo.py) answers one question about a sequence of 31
// tokens: do 佛, 跳, 墙 occur adjacent and in this order? A [CLS] token at
// position 0 looks for them; a linear head on [CLS] says yes or no.
//
//   x      = tok_emb[ids] + pos_emb          [L, E]   (this file)
//   x      = x + attention_0(x)              [L, E]   (attn: forward_f32 / _s8 / _s16)
//   x      = x + attention_1(x)              [L, E]   (attn)
//   logits = head_w x[0] + head_b            [2]      (this file)
//
// The .attn file holds the two attention blocks and, as user tensors, the
// embeddings (tok_emb [V, E], pos_emb [L, E]) and the head (head_w [2, E],
// head_b [2]). The embedding lookup, the residuals and the head are a few
// lines of this program on top of the library's public API: this is how a
// user embeds attn in a model of their own.
//
//   attn_example_demo [--data DIR] [--model F32.attn] [--s8 S8.attn] [--s16 S16.attn]
//                     [--limit N] [--svg OUT.svg]
//                     [--write-calib DIR] [--min-accuracy PERCENT] [--max-drop POINTS]
//                     [--emit-mcu OUT.h] [--timing-passes N (3; 0: no timing)]
//
// Models: the f32 file as exported, and s8 and s16 versions of it: the files
// `attn quantize --residual` wrote (--s8, --s16), or, without them, the two
// blocks calibrated on DIR/calib.txt and quantized in memory with the
// library's quantizer (attn/quantize.h), as `attn quantize` does offline.
// --write-calib DIR writes each block's calibration inputs ([N, L, E] .npy;
// block 0's is the --calib of `attn quantize`) and exits; --emit-mcu writes the s8 model, the held-out set
// and the host's s8 predictions as a header for the Cortex-M image (port/cortex-m/demo/demo_s8.cpp).
//
// Prints, for each model: accuracy on the held-out set, agreement with f32,
// microseconds per inference, arena bytes and model bytes; then the attention
// of [CLS] on one positive example as a terminal heat map, and writes every
// head's attention of that example as an SVG heat map. Checks the f32 logits
// against PyTorch's (DIR/logits.txt). Exit code 0 if the checks pass (f32
// logits within 1e-4 of PyTorch's, f32 accuracy >= --min-accuracy (99), s8 and
// s16 at most --max-drop (0.5) points below f32), 1 if not, 2 on errors.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/model.h"
#include "attn/quantize.h"
#include "cli/npy.h"

namespace {

#ifndef ATTN_TEST_DATA_DIR
#define ATTN_TEST_DATA_DIR "tests/data"
#endif

// ------------------------------------------------------------------ data ---

struct Example {
  int label = 0;         // 1: contains 佛跳墙
  std::vector<int> ids;  // [L] token ids, ids[0] = [CLS]
};

std::vector<std::string> read_vocab(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> vocab;
  for (std::string line; std::getline(f, line);) vocab.push_back(line);
  return vocab;
}

// "label id id ... id" per line.
std::vector<Example> read_examples(const std::string& path) {
  std::ifstream f(path);
  std::vector<Example> out;
  for (std::string line; std::getline(f, line);) {
    std::istringstream in(line);
    Example e;
    in >> e.label;
    for (int id; in >> id;) e.ids.push_back(id);
    if (!e.ids.empty()) out.push_back(e);
  }
  return out;
}

// A whole file in a 16-byte aligned buffer, as Model::load wants it (on an
// MCU the blob is simply a const array in flash).
struct Blob {
  std::vector<std::max_align_t> storage;
  size_t size = 0;
  const void* data() const { return storage.data(); }
};

bool read_blob(const std::string& path, Blob* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  out->size = static_cast<size_t>(f.tellg());
  out->storage.assign(out->size / sizeof(std::max_align_t) + 1, std::max_align_t{});
  f.seekg(0);
  return static_cast<bool>(
      f.read(reinterpret_cast<char*>(out->storage.data()), static_cast<std::streamsize>(out->size)));
}

// ----------------------------------------------------------------- model ---

// One attention block quantized for forward_s8 / forward_s16, and the
// (scale, zero point) of its input and output.
struct QuantBlock {
  attn::WeightsS8 s8;
  attn::WeightsS16 s16;
  attn::ActivationQuant act;
};

// A loaded demo model: views into the blob, plus the plan and arena of one forward.
struct DemoModel {
  std::string name;  // "f32", "s8", "s16"
  attn::DType dtype = attn::DType::kF32;
  Blob blob;
  attn::Model model;
  attn::Block blocks[2];
  int32_t vocab = 0, seq = 0, embed = 0;  // V, L, E
  const float* tok_emb = nullptr;         // [V, E]
  const float* pos_emb = nullptr;         // [L, E]
  const float* head_w = nullptr;          // [2, E]
  const float* head_b = nullptr;          // [2]
  attn::Plan plans[2];
  std::vector<float> x, y;  // [L, E] each: the residual stream and one block's output
  std::vector<std::max_align_t> arena_buffer;
  attn::Arena arena;
  // s8 / s16: the blocks as a quantized file holds them (`attn quantize`), or
  // quantized in memory from the f32 file, their tables in `quant_storage`.
  bool from_file = false;
  QuantBlock quant[2];
  std::vector<std::max_align_t> quant_buffer;
  attn::Arena quant_storage;
  std::vector<int8_t> x8, y8;     // [L, E] each
  std::vector<int16_t> x16, y16;  // [L, E] each
};

bool fail(const char* what, attn::Status s) {
  std::fprintf(stderr, "demo: %s: %s\n", what, attn::status_name(s));
  return false;
}

// A user tensor of the file, checked against the shape the program expects.
bool user_tensor(const attn::Model& m, const char* name, int32_t d0, int32_t d1, const float** out) {
  attn::TensorView t;
  const attn::Status s = m.find_tensor(name, &t);
  if (s != attn::Status::kOk) return fail(name, s);
  const bool ok = t.dtype == attn::DType::kF32 && t.rank == (d1 == 0 ? 1 : 2) && t.dims[0] == d0 &&
                  (d1 == 0 || t.dims[1] == d1);
  if (!ok) {
    std::fprintf(stderr, "demo: user tensor %s has an unexpected shape or dtype\n", name);
    return false;
  }
  *out = static_cast<const float*>(t.data);
  return true;
}

bool load_model(const std::string& path, const char* name, attn::DType dtype, DemoModel* m) {
  m->name = name;
  m->dtype = dtype;
  if (!read_blob(path, &m->blob)) {
    std::fprintf(stderr, "demo: cannot read %s\n", path.c_str());
    return false;
  }
  attn::Status s = attn::Model::load(m->blob.data(), m->blob.size, &m->model);
  if (s != attn::Status::kOk) return fail(path.c_str(), s);
  if (m->model.block_count() != 2) {
    std::fprintf(stderr, "demo: %s: expected 2 attention blocks\n", path.c_str());
    return false;
  }
  attn::TensorView pos;
  if ((s = m->model.find_tensor("pos_emb", &pos)) != attn::Status::kOk) return fail("pos_emb", s);
  attn::TensorView tok;
  if ((s = m->model.find_tensor("tok_emb", &tok)) != attn::Status::kOk) return fail("tok_emb", s);
  m->seq = pos.dims[0];
  m->vocab = tok.dims[0];
  m->embed = tok.dims[1];
  if (!user_tensor(m->model, "tok_emb", m->vocab, m->embed, &m->tok_emb) ||
      !user_tensor(m->model, "pos_emb", m->seq, m->embed, &m->pos_emb) ||
      !user_tensor(m->model, "head_w", 2, m->embed, &m->head_w) ||
      !user_tensor(m->model, "head_b", 2, 0, &m->head_b)) {
    return false;
  }
  size_t arena_bytes = 0;
  for (uint32_t b = 0; b < 2; ++b) {
    attn::Block& blk = m->blocks[b];
    if ((s = m->model.block(b, &blk)) != attn::Status::kOk) return fail("block", s);
    // A quantized file (attn quantize): its blocks, and the scales of their input and output.
    m->from_file = dtype != attn::DType::kF32 && blk.dtype == dtype;
    if (m->from_file) {
      m->quant[b].s8 = blk.s8;
      m->quant[b].s16 = blk.s16;
      m->quant[b].act.query = attn::QuantParams{blk.io.scale[0], blk.io.zero_point[0]};
      m->quant[b].act.output = attn::QuantParams{blk.io.scale[3], blk.io.zero_point[3]};
    } else if (blk.dtype != attn::DType::kF32) {
      std::fprintf(stderr, "demo: %s: block %u is not %s or f32\n", path.c_str(), b, name);
      return false;
    }
    if (m->blocks[b].config.embed_dim != m->embed) {
      std::fprintf(stderr, "demo: block %u is not %d wide\n", b, m->embed);
      return false;
    }
    // Self-attention over the whole sequence: L = S = seq.
    s = attn::plan_attention(m->blocks[b].config, dtype, m->seq, m->seq, &m->plans[b]);
    if (s != attn::Status::kOk) return fail("plan_attention", s);
    arena_bytes = std::max(arena_bytes, m->plans[b].arena_bytes);
  }
  m->x.resize(static_cast<size_t>(m->seq * m->embed));
  m->y.resize(static_cast<size_t>(m->seq * m->embed));
  m->x8.resize(m->x.size());
  m->y8.resize(m->x.size());
  m->x16.resize(m->x.size());
  m->y16.resize(m->x.size());
  // The arena: on an MCU, `alignas(16) static uint8_t arena[N]` with N from the plan.
  m->arena_buffer.assign(arena_bytes / sizeof(std::max_align_t) + 1, std::max_align_t{});
  s = m->arena.init(m->arena_buffer.data(), arena_bytes);
  return s == attn::Status::kOk || fail("arena", s);
}

size_t arena_bytes(const DemoModel& m) { return std::max(m.plans[0].arena_bytes, m.plans[1].arena_bytes); }

// x quantized for an int8 block input, in float only (no division, no double:
// cheap on a microcontroller): round half away from zero, clamp. The firmware
// image does the same, so host and MCU predictions are identical.
int8_t quantize_s8(float x, float inverse_scale, int32_t zero_point) {
  const float v = x * inverse_scale;
  const int32_t q = static_cast<int32_t>(v >= 0.0f ? v + 0.5f : v - 0.5f) + zero_point;
  return static_cast<int8_t>(q < -128 ? -128 : q > 127 ? 127 : q);
}

// One attention block: y = attention_b(x). `weights` (optional, f32 only): [H, L, L].
// The fixed-point blocks quantize x with the block's input parameters and
// dequantize y: the residual stream, embeddings and head stay in float.
attn::Status run_block(DemoModel& m, int b, const float* x, float* y, float* weights) {
  const attn::Mask mask;  // every token sees every token
  const size_t n = m.x.size();
  const attn::ActivationQuant& act = m.quant[b].act;
  switch (m.dtype) {
    case attn::DType::kF32: {
      const attn::IoF32 io{x, x, x, y, weights};  // self-attention: query = key = value = x
      return attn::forward_f32(m.plans[b], m.blocks[b].f32, mask, io, m.arena);
    }
    case attn::DType::kS8: {
      const float inverse_scale = 1.0f / act.query.scale;
      for (size_t k = 0; k < n; ++k) m.x8[k] = quantize_s8(x[k], inverse_scale, act.query.zero_point);
      const attn::IoS8 io{m.x8.data(), m.x8.data(), m.x8.data(), m.y8.data()};
      ATTN_TRY(attn::forward_s8(m.plans[b], m.quant[b].s8, mask, io, m.arena));
      for (size_t k = 0; k < n; ++k) {
        y[k] = act.output.scale * static_cast<float>(m.y8[k] - act.output.zero_point);
      }
      return attn::Status::kOk;
    }
    case attn::DType::kS16: {
      for (size_t k = 0; k < n; ++k) {
        m.x16[k] = static_cast<int16_t>(attn::quantize_value(x[k], act.query, attn::DType::kS16));
      }
      const attn::IoS16 io{m.x16.data(), m.x16.data(), m.x16.data(), m.y16.data()};
      ATTN_TRY(attn::forward_s16(m.plans[b], m.quant[b].s16, mask, io, m.arena));
      for (size_t k = 0; k < n; ++k) y[k] = act.output.scale * static_cast<float>(m.y16[k]);
      return attn::Status::kOk;
    }
    default:
      return attn::Status::kBadDtype;
  }
}

// The whole model on one sequence: logits[2]. `weights` (optional):
// [2 blocks, H, L, L] attention probabilities. `block_inputs` (optional):
// [2, L, E] the input of each block, for calibration.
attn::Status classify(DemoModel& m, const int* ids, float logits[2], float* weights = nullptr,
                      float* block_inputs = nullptr) {
  const int L = m.seq, E = m.embed;
  std::vector<float>& x = m.x;   // [L, E] the residual stream
  std::vector<float>& y = m.y;   // [L, E] one block's output
  for (int i = 0; i < L; ++i) {  // x = tok_emb[ids] + pos_emb
    for (int e = 0; e < E; ++e) x[i * E + e] = m.tok_emb[ids[i] * E + e] + m.pos_emb[i * E + e];
  }
  for (int b = 0; b < 2; ++b) {
    if (block_inputs != nullptr) std::copy(x.begin(), x.end(), block_inputs + b * L * E);
    float* w = weights != nullptr ? weights + b * m.blocks[b].config.num_heads * L * L : nullptr;
    ATTN_TRY(run_block(m, b, x.data(), y.data(), w));
    for (int k = 0; k < L * E; ++k) x[k] += y[k];  // residual
  }
  for (int c = 0; c < 2; ++c) {  // logits = head_w x[0] + head_b
    float acc = m.head_b[c];
    for (int e = 0; e < E; ++e) acc += m.head_w[c * E + e] * x[e];
    logits[c] = acc;
  }
  return attn::Status::kOk;
}

// ---------------------------------------------------------- quantization ---
// What `attn quantize` does offline, done here in memory: run the f32 model on
// the calibration set, record the range of every stage of each block (input,
// Q, K, V, context, output: calibrate_attention), then quantize each block
// with those ranges (quantize_attention_s8 / _s16).

bool quantize_blocks(DemoModel& f32, const std::vector<Example>& calib, DemoModel* m) {
  attn::CalibrationRanges ranges[2];
  const size_t le = f32.x.size();
  std::vector<float> inputs(2 * le);  // [2, L, E] the input of each block
  size_t scratch = 0;                 // calibrate_attention's arena
  for (int b = 0; b < 2; ++b) {
    scratch = std::max(scratch, attn::calibrate_attention_bytes(f32.blocks[b].config, f32.seq, f32.seq));
  }
  std::vector<std::max_align_t> buffer(scratch / sizeof(std::max_align_t) + 1);
  attn::Arena arena;
  attn::Status s = arena.init(buffer.data(), scratch);
  float logits[2];
  for (size_t i = 0; i < calib.size() && s == attn::Status::kOk; ++i) {
    s = classify(f32, calib[i].ids.data(), logits, nullptr, inputs.data());
    for (int b = 0; b < 2 && s == attn::Status::kOk; ++b) {
      const float* x = &inputs[static_cast<size_t>(b) * le];
      const attn::IoF32 io{x, x, x, nullptr, nullptr};
      s = attn::calibrate_attention(f32.plans[b], f32.blocks[b].f32, attn::Mask{}, io, arena, &ranges[b]);
    }
  }
  if (s != attn::Status::kOk) return fail("calibration", s);
  size_t bytes = 0;
  for (int b = 0; b < 2; ++b) bytes += attn::quantized_attention_bytes(m->blocks[b].config, m->dtype);
  m->quant_buffer.assign(bytes / sizeof(std::max_align_t) + 1, std::max_align_t{});
  s = m->quant_storage.init(m->quant_buffer.data(), bytes);
  for (int b = 0; b < 2 && s == attn::Status::kOk; ++b) {
    QuantBlock& q = m->quant[b];
    s = m->dtype == attn::DType::kS8
            ? attn::quantize_attention_s8(m->blocks[b].config, m->blocks[b].f32, ranges[b], m->quant_storage,
                                          &q.s8, &q.act)
            : attn::quantize_attention_s16(m->blocks[b].config, m->blocks[b].f32, ranges[b], m->quant_storage,
                                           &q.s16, &q.act);
  }
  return s == attn::Status::kOk || fail("quantize", s);
}

// Bytes a file of this model holds: the quantized blocks (weights, biases,
// multipliers, shifts) plus the float user tensors; the whole .attn for f32.
size_t model_bytes(const DemoModel& m) {
  if (m.dtype == attn::DType::kF32 || m.from_file) return m.blob.size;
  const size_t user = static_cast<size_t>(m.vocab + m.seq + 2) * static_cast<size_t>(m.embed) * 4 + 2 * 4;
  return m.quant_storage.used() + user;
}

// -------------------------------------------------------------- evaluate ---

struct Result {
  std::vector<int> predictions;  // per example
  double accuracy = 0;           // percent
  double us_per_inference = 0;
};

bool evaluate(DemoModel& m, const std::vector<Example>& set, int timing_passes, Result* r) {
  float logits[2];
  int correct = 0;
  for (const Example& e : set) {
    const attn::Status s = classify(m, e.ids.data(), logits);
    if (s != attn::Status::kOk) return fail("classify", s);
    const int pred = logits[1] > logits[0] ? 1 : 0;
    r->predictions.push_back(pred);
    correct += pred == e.label;
  }
  r->accuracy = 100.0 * correct / static_cast<double>(set.size());
  // Time: the best of a few passes over the set (the machine may be busy).
  double best = 0;
  for (int pass = 0; pass < timing_passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const Example& e : set) (void)classify(m, e.ids.data(), logits);
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    const double us = dt.count() / static_cast<double>(set.size());
    best = pass == 0 ? us : std::min(best, us);
  }
  r->us_per_inference = best;
  return true;
}

double agreement(const Result& a, const Result& b) {
  size_t same = 0;
  for (size_t i = 0; i < a.predictions.size(); ++i) same += a.predictions[i] == b.predictions[i];
  return 100.0 * static_cast<double>(same) / static_cast<double>(a.predictions.size());
}

// PyTorch's logits for the first test examples (DIR/logits.txt: two per line).
// Returns the largest |attn - torch|, or -1 when the file is missing.
double check_logits(DemoModel& m, const std::vector<Example>& set, const std::string& path) {
  std::ifstream f(path);
  if (!f) return -1;
  double worst = 0;
  float want[2], got[2];
  for (size_t i = 0; i < set.size() && f >> want[0] >> want[1]; ++i) {
    if (classify(m, set[i].ids.data(), got) != attn::Status::kOk) return 1e30;
    for (int c = 0; c < 2; ++c) worst = std::max(worst, static_cast<double>(std::fabs(got[c] - want[c])));
  }
  return worst;
}

// ----------------------------------------------------- firmware data ---
// The s8 model and the held-out set as a C++ header for the Cortex-M image
// (port/cortex-m/demo/demo_s8.cpp), with the host's predictions to compare.

template <class T>
void emit_array(std::ofstream& f, const char* type, const std::string& name, const T* v, size_t n) {
  f << "alignas(16) const " << type << " " << name << "[" << n << "] = {";
  for (size_t i = 0; i < n; ++i) {
    if (i % 16 == 0) f << "\n ";
    if constexpr (std::is_same<T, float>::value) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.9g", static_cast<double>(v[i]));  // round-trips exactly
      f << buf << "f,";
    } else {
      f << " " << static_cast<long long>(v[i]) << ",";
    }
  }
  f << "\n};\n";
}

void emit_projection(std::ofstream& f, const std::string& name, const attn::ProjectionS8& p, int32_t out,
                     int32_t in) {
  const size_t o = static_cast<size_t>(out);
  emit_array(f, "int8_t", name + "_weight", p.weight, o * static_cast<size_t>(in));
  emit_array(f, "int32_t", name + "_bias", p.bias, o);
  emit_array(f, "int32_t", name + "_multiplier", p.multiplier, o);
  emit_array(f, "int32_t", name + "_shift", p.shift, o);
}

bool emit_mcu(const std::string& path, const DemoModel& m, const std::vector<Example>& set,
              const std::vector<int>& predictions) {
  std::ofstream f(path);
  const int32_t L = m.seq, E = m.embed;
  f << "// Generated by attn_example_demo --emit-mcu: the s8 demo model, the held-out set and the\n"
       "// host's s8 predictions, for the Cortex-M image port/cortex-m/demo/demo_s8.cpp.\n#pragma once\n"
       "#include <cstdint>\n\nnamespace demo_data {\n\n";
  f << "constexpr int kVocab = " << m.vocab << ", kSeq = " << L << ", kEmbed = " << E
    << ", kHeads = " << m.blocks[0].config.num_heads << ", kCount = " << set.size() << ";\n";
  emit_array(f, "float", "tok_emb", m.tok_emb, static_cast<size_t>(m.vocab * E));
  emit_array(f, "float", "pos_emb", m.pos_emb, static_cast<size_t>(L * E));
  emit_array(f, "float", "head_w", m.head_w, static_cast<size_t>(2 * E));
  emit_array(f, "float", "head_b", m.head_b, 2);
  for (int b = 0; b < 2; ++b) {
    const std::string n = "b" + std::to_string(b);
    const attn::WeightsS8& w = m.quant[b].s8;
    const attn::ActivationQuant& a = m.quant[b].act;
    const int32_t D = m.blocks[b].config.inner_dim();
    emit_projection(f, n + "_q", w.q, D, E);
    emit_projection(f, n + "_k", w.k, D, E);
    emit_projection(f, n + "_v", w.v, D, E);
    emit_projection(f, n + "_o", w.o, E, D);
    const int64_t ints[] = {w.q_zero_point,       w.k_zero_point,       w.v_zero_point,
                            w.context_zero_point, w.output_zero_point,  w.softmax.exp_multiplier,
                            w.softmax.exp_shift,  w.softmax.diff_limit, w.softmax.score_shift,
                            w.context_multiplier, w.context_shift,      a.query.zero_point,
                            a.output.zero_point};
    emit_array(f, "int64_t", n + "_params", ints, sizeof ints / sizeof ints[0]);
    const float scales[] = {a.query.scale, a.output.scale};
    emit_array(f, "float", n + "_scales", scales, 2);
  }
  std::vector<uint8_t> ids, labels, preds;
  for (size_t i = 0; i < set.size(); ++i) {
    for (int id : set[i].ids) ids.push_back(static_cast<uint8_t>(id));
    labels.push_back(static_cast<uint8_t>(set[i].label));
    preds.push_back(static_cast<uint8_t>(predictions[i]));
  }
  emit_array(f, "uint8_t", "test_ids", ids.data(), ids.size());
  emit_array(f, "uint8_t", "test_labels", labels.data(), labels.size());
  emit_array(f, "uint8_t", "host_predictions", preds.data(), preds.size());
  f << "\n}  // namespace demo_data\n";
  return static_cast<bool>(f);
}

// ------------------------------------------------------------ heat maps ---

// A token as two terminal columns (CJK characters are wide).
std::string cell_label(const std::string& tok) { return tok == "[CLS]" ? "CL" : tok; }

// The [CLS] row (query 0) of every head, shaded; keys labelled below.
void print_cls_rows(const DemoModel& m, const std::vector<float>& w, const Example& e,
                    const std::vector<std::string>& vocab) {
  static const char* const kShade[] = {"  ", "░░", "▒▒", "▓▓", "██"};
  const int L = m.seq;
  for (int b = 0; b < 2; ++b) {
    const int H = m.blocks[b].config.num_heads;
    for (int h = 0; h < H; ++h) {
      const float* row = &w[static_cast<size_t>(((b * H + h) * L + 0) * L)];  // query 0 = [CLS]
      const float top = *std::max_element(row, row + L);
      std::printf("  block %d head %d  ", b, h);
      for (int j = 0; j < L; ++j) {
        const int level = top > 0 ? static_cast<int>(std::lround(4.0f * row[j] / top)) : 0;
        std::printf("%s", kShade[level]);
      }
      std::printf("  max %.2f\n", static_cast<double>(top));
    }
  }
  std::printf("  %-16s", "key");
  for (int j = 0; j < L; ++j) std::printf("%s", cell_label(vocab[static_cast<size_t>(e.ids[j])]).c_str());
  std::printf("\n");
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// Every head of both blocks: a grid of query x key heat maps, labelled with the tokens.
bool write_svg(const std::string& path, const DemoModel& m, const std::vector<float>& w, const Example& e,
               const std::vector<std::string>& vocab) {
  const int L = m.seq, H = m.blocks[0].config.num_heads;
  const int cell = 12, margin = 44, gap = 30, panel = L * cell;
  const int width = margin + H * (panel + gap), height = margin + 2 * (panel + gap + 16) + 10;
  std::ofstream f(path);
  if (!f) return false;
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
    << "' font-family='sans-serif' font-size='9'>\n<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='4' y='14' font-size='12'>attention weights (rows: query, columns: key) of one sequence "
       "with 佛跳墙 (colour: square root of the weight; C = [CLS])</text>\n";
  for (int b = 0; b < 2; ++b) {
    for (int h = 0; h < H; ++h) {
      const int x0 = margin + h * (panel + gap), y0 = margin + 16 + b * (panel + gap + 16);
      f << "<text x='" << x0 << "' y='" << y0 - 18 << "' font-size='11'>block " << b << ", head " << h
        << "</text>\n";
      for (int i = 0; i < L; ++i) {
        const std::string tok = xml_escape(vocab[static_cast<size_t>(e.ids[i])]);
        const std::string label = i == 0 ? "C" : tok;
        const bool special = e.ids[i] >= 1 && e.ids[i] <= 3;  // 佛 跳 墙 in red
        const char* colour = special ? " fill='red'" : "";
        f << "<text x='" << x0 - 3 << "' y='" << y0 + i * cell + 9 << "' text-anchor='end'" << colour << ">"
          << label << "</text>"
          << "<text x='" << x0 + i * cell + 6 << "' y='" << y0 - 3 << "' text-anchor='middle'" << colour
          << ">" << label << "</text>\n";
        for (int j = 0; j < L; ++j) {
          const float p = w[static_cast<size_t>(((b * H + h) * L + i) * L + j)];
          const int shade = 255 - static_cast<int>(std::lround(255.0f * std::sqrt(std::min(1.0f, p))));
          f << "<rect x='" << x0 + j * cell << "' y='" << y0 + i * cell << "' width='" << cell << "' height='"
            << cell << "' fill='rgb(" << shade << "," << shade << ",255)'><title>" << i << "->" << j << ": "
            << p << "</title></rect>";
        }
        f << "\n";
      }
    }
  }
  f << "</svg>\n";
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = std::string(ATTN_TEST_DATA_DIR) + "/demo";
  std::string model_path, svg_path = "demo_attention.svg", calib_dir;
  size_t limit = 0;
  double min_accuracy = 99.0;  // f32, percent
  double max_drop = 0.5;       // s8 and s16 against f32, points
  std::string mcu_path;        // --emit-mcu
  std::string s8_path, s16_path;
  int timing_passes = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--data" && has_value)
      dir = argv[++i];
    else if (a == "--model" && has_value)
      model_path = argv[++i];
    else if (a == "--s8" && has_value)
      s8_path = argv[++i];
    else if (a == "--s16" && has_value)
      s16_path = argv[++i];
    else if (a == "--svg" && has_value)
      svg_path = argv[++i];
    else if (a == "--limit" && has_value)
      limit = std::stoul(argv[++i]);
    else if (a == "--write-calib" && has_value)
      calib_dir = argv[++i];
    else if (a == "--min-accuracy" && has_value)
      min_accuracy = std::stod(argv[++i]);
    else if (a == "--max-drop" && has_value)
      max_drop = std::stod(argv[++i]);
    else if (a == "--emit-mcu" && has_value)
      mcu_path = argv[++i];
    else if (a == "--timing-passes" && has_value)
      timing_passes = std::stoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--data DIR] [--model F32.attn] [--s8 S8.attn] [--s16 S16.attn] [--limit N] "
                   "[--svg OUT.svg] "
                   "[--write-calib DIR] [--min-accuracy PERCENT] [--max-drop POINTS] [--emit-mcu OUT.h] "
                   "[--timing-passes N]\n",
                   argv[0]);
      return 2;
    }
  }
  if (model_path.empty()) model_path = dir + "/demo.attn";

  const std::vector<std::string> vocab = read_vocab(dir + "/vocab.txt");
  std::vector<Example> test = read_examples(dir + "/test.txt");
  if (limit != 0 && test.size() > limit) test.resize(limit);
  static DemoModel f32, s8, s16;  // large: not on the stack
  if (!load_model(model_path, "f32", attn::DType::kF32, &f32)) return 2;
  for (const Example& e : test) {
    const bool ok =
        static_cast<int32_t>(e.ids.size()) == f32.seq &&
        std::all_of(e.ids.begin(), e.ids.end(), [&](int id) { return id >= 0 && id < f32.vocab; });
    if (!ok || static_cast<int32_t>(vocab.size()) != f32.vocab) {
      std::fprintf(stderr, "demo: %s does not match the model (vocab %d, length %d)\n", dir.c_str(),
                   f32.vocab, f32.seq);
      return 2;
    }
  }
  if (test.empty()) {
    std::fprintf(stderr, "demo: no examples in %s/test.txt\n", dir.c_str());
    return 2;
  }
  bool ok = true;

  // Calibration inputs for `attn quantize`: the input of each block, [N, L, E].
  if (!calib_dir.empty()) {
    const std::vector<Example> calib = read_examples(dir + "/calib.txt");
    const size_t n = calib.size(), le = static_cast<size_t>(f32.seq * f32.embed);
    std::vector<float> inputs[2] = {std::vector<float>(n * le), std::vector<float>(n * le)};
    std::vector<float> both(2 * le);  // [2, L, E]
    float logits[2];
    for (size_t i = 0; i < n; ++i) {
      if (classify(f32, calib[i].ids.data(), logits, nullptr, both.data()) != attn::Status::kOk) return 2;
      std::copy(both.begin(), both.begin() + static_cast<long>(le),
                inputs[0].begin() + static_cast<long>(i * le));
      std::copy(both.begin() + static_cast<long>(le), both.end(),
                inputs[1].begin() + static_cast<long>(i * le));
    }
    for (int b = 0; b < 2; ++b) {
      const std::string path = calib_dir + "/calib_block" + std::to_string(b) + ".npy";
      const std::vector<uint8_t> bytes =
          attn::npy::serialize_f32({static_cast<int64_t>(n), f32.seq, f32.embed}, inputs[b].data());
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      std::printf("wrote %s [%zu, %d, %d]\n", path.c_str(), n, f32.seq, f32.embed);
    }
    return 0;  // a preparation step: nothing else
  }

  // 1. The table: f32, then s8 and s16 from `attn quantize` files (--s8, --s16)
  // or, without them, quantized here in memory with the calibration set.
  const std::vector<Example> calib = read_examples(dir + "/calib.txt");
  if (calib.empty()) {
    std::fprintf(stderr, "demo: no calibration sequences in %s/calib.txt\n", dir.c_str());
    return 2;
  }
  if (!load_model(s8_path.empty() ? model_path : s8_path, "s8", attn::DType::kS8, &s8) ||
      !load_model(s16_path.empty() ? model_path : s16_path, "s16", attn::DType::kS16, &s16)) {
    return 2;
  }
  for (DemoModel* m : {&s8, &s16}) {
    if (!m->from_file && !quantize_blocks(f32, calib, m)) return 2;
  }
  std::printf(
      "\n佛跳墙 classifier: %zu held-out sequences of %d tokens, 2 attention blocks (E=%d, %d heads)\n\n",
      test.size(), f32.seq, f32.embed, f32.blocks[0].config.num_heads);
  std::printf("  %-6s %9s %13s %14s %12s %12s\n", "model", "accuracy", "agree w/ f32", "us/inference",
              "arena bytes", "model bytes");
  Result r32;
  for (DemoModel* m : {&f32, &s8, &s16}) {
    Result r;
    if (!evaluate(*m, test, timing_passes, &r)) return 2;
    if (m == &f32) r32 = r;
    if (m == &s8 && !mcu_path.empty()) {
      if (!emit_mcu(mcu_path, s8, test, r.predictions)) {
        std::fprintf(stderr, "demo: cannot write %s\n", mcu_path.c_str());
        return 2;
      }
    }
    char us[32] = "-";  // not timed with --timing-passes 0
    if (timing_passes > 0) std::snprintf(us, sizeof us, "%.1f", r.us_per_inference);
    std::printf("  %-6s %8.2f%% %12.2f%% %14s %12zu %12zu\n", m->name.c_str(), r.accuracy, agreement(r32, r),
                us, arena_bytes(*m), model_bytes(*m));
    const double floor = m == &f32 ? min_accuracy : r32.accuracy - max_drop;
    if (r.accuracy < floor) {
      std::printf("FAIL: %s accuracy below %.2f%%\n", m->name.c_str(), floor);
      ok = false;
    }
  }
  for (const DemoModel* m : {&s8, &s16}) {
    const std::string& file = m == &s8 ? s8_path : s16_path;
    if (m->from_file) {
      std::printf("  %s: %s (attn quantize)\n", m->name.c_str(), file.c_str());
    } else {
      std::printf(
          "  %s: blocks quantized in memory on %zu calibration sequences (model bytes: blocks + user "
          "tensors)\n",
          m->name.c_str(), calib.size());
    }
  }
  std::printf("  embeddings, residuals and head run in f32 in every model\n");

  // 2. Same numbers as PyTorch?
  const double logit_err = check_logits(f32, test, dir + "/logits.txt");
  if (logit_err < 0) {
    std::printf("\nFAIL: no PyTorch logits (%s/logits.txt) to check against\n", dir.c_str());
    ok = false;
  } else {
    const bool logits_ok = logit_err <= 1e-4;
    std::printf("\n  f32 logits vs PyTorch: max |diff| %.2e (%s)\n", logit_err, logits_ok ? "ok" : "FAIL");
    ok = ok && logits_ok;
  }

  // 3. What [CLS] looks at, on the first positive example.
  const auto pos = std::find_if(test.begin(), test.end(), [](const Example& e) { return e.label == 1; });
  if (pos != test.end()) {
    const int H = f32.blocks[0].config.num_heads;
    std::vector<float> weights(static_cast<size_t>(2 * H * f32.seq * f32.seq));  // [2, H, L, L]
    float logits[2];
    if (classify(f32, pos->ids.data(), logits, weights.data()) != attn::Status::kOk) return 2;
    std::printf("\nattention of [CLS] on test sequence %ld (logit yes - no = %+.2f):\n\n",
                static_cast<long>(pos - test.begin()), static_cast<double>(logits[1] - logits[0]));
    print_cls_rows(f32, weights, *pos, vocab);
    if (!svg_path.empty()) {
      if (!write_svg(svg_path, f32, weights, *pos, vocab)) {
        std::fprintf(stderr, "demo: cannot write %s\n", svg_path.c_str());
        return 2;
      }
      std::printf("\nwrote %s (every head of both blocks, query x key)\n", svg_path.c_str());
    }
  }
  return ok ? 0 : 1;
}
