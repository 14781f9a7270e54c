// cmd_quantize.cpp: `attn quantize IN.attn --calib CALIB.npy [--calib-kv CKV.npy]
// [--calib-value CV.npy] --dtype s8|s16 [--per-tensor] [--causal] [--key-length N] [--residual]
// [--max-positions P] -o OUT.attn` for block files, and
// `attn quantize MODEL.attn --calib-tokens IDS.npy --dtype s8|s16 [--residual-bits N] -o OUT.attn`
// for whole models (format v3). Both take --weights s4 [--s4 ffn|all]: int4 weights (FORMAT.md
// "Int4 weights"), for the FFN's W1, W2, W3 (ffn, the default) or every projection (all: the
// attention's Q, K, V, O and an untied LM head too; a block file's Q, K, V, O). Embedding
// tables, and a tied head, stay int8.
//
// Whole models: IDS int32 or int64, [B, L] (B calibration sequences of L
// tokens) or [L] (one), ids in [0, vocab), L <= max_positions. The library's
// converter (quantize_transformer_s8 / _s16, attn/transformer_fixed.h)
// calibrates the float model on them and writes every integer table; the
// command prints its report (SQNR of the integer forward against the float
// forward on the calibration set: after the embeddings, after each layer, at
// the output), then a held-out check (the last 10% of the sequences, at least
// one, held out of a second calibration on the rest: its output SQNR on both
// parts, with a warning when they differ by more than 3 dB; the file keeps
// the ranges of every sequence) and writes OUT, an s8 / s16 model file (FORMAT.md "Integer
// models") with the input's user tensors (a classifier, a pooler) unchanged.
// Block files, the rest of this comment:
//
//   CALIB [N, L, E] float32     N calibration examples of the query input (and, without
//                               --calib-kv, of key and value: self-attention)
//   CKV   [N, S, kdim] float32  key input of cross-attention blocks (and value input
//                               unless --calib-value [N, S, vdim])
// Runs the float model on the calibration set, block after block (block i is
// calibrated on the float32 output of block i-1, as `attn run` chains them;
// with --residual on block i-1's query input plus its output, x + attention(x),
// as in a transformer's residual stream),
// records the range of every stage, quantizes each block for forward_s8 /
// forward_s16 (src/FIXED_POINT.md) and writes OUT (format v2). User
// tensors are copied through unchanged. --causal / --key-length: the mask the
// model runs with, applied during calibration. The ranges hold for that mask
// only, and the file says so (FORMAT.md, quant params 14 and 15: no mask,
// causal, key length N, or causal with key length N; calibrate_attention
// records it): the integer forward refuses another mask with
// kMaskNotCalibrated rather than clip (a mask hiding more keys than the
// calibration's loses 13-20 dB). --any-mask also widens the context and
// output ranges to what any mask gives (calibrate_any_mask: V's range, and
// each key's V row through Wo) and records "any mask": one block for every
// mask, at 0-4 dB of s8 accuracy (src/FIXED_POINT.md). --exact-mask, the
// default since the file records the mask, is still accepted. --per-tensor: one weight scale
// per projection instead of per output channel. Blocks with rotary embedding
// get cos/sin tables (Q1.14, 2 * P * head_dim bytes) for positions 0 .. P-1:
// --max-positions P, default the calibration length (max of L and S); the
// integer forward refuses later positions (kRopePositionOutOfRange), so a model
// that decodes longer contexts needs a larger P.
//
// Per block it prints: the SQNR of each stage's quantization grid on the
// calibration set (the float stage rounded to its scale and zero point), the
// SQNR of the integer forward's output against the float64 forward (same
// float input), the weight quantization SQNR per projection, and bytes.
// int16 weights for Wq/Wk (a common remedy for peaky softmaxes) are
// not offered: ProjectionS8/S16 hold int8 weights only.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>

#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "attn/transformer_fixed.h"
#include "cli/cli.h"
#include "cli/model_exec.h"
#include "cli/npy.h"
#include "cli/quant_util.h"
#include "cli/text.h"
#include "format/writer.h"

namespace attn {
namespace {

struct Calib {
  std::string path;
  int64_t n = 0, rows = 0, cols = 0;
  npy::BatchVector<float> data;  // [n, rows, cols]
  const float* item(int64_t i) const { return data.data() + i * rows * cols; }
};

Calib read_calib(const std::string& path, const char* what) {
  Calib c;
  c.path = path;
  // The header is checked before the data is read (cli::read_npy: regular
  // files, pipes and FIFOs; never more than the header declares).
  cli::NpyInput a = cli::read_npy(path);
  const npy::Header& h = a.header;
  if (h.descr != "<f4")
    throw cli::Error(path + ": " + what + " is " + npy::dtype_name(h.descr) +
                     ", but must be float32 ('<f4')");
  if (h.shape.size() != 3)
    throw cli::Error(path + ": " + what + " must have shape [N, L, width], got rank " +
                     std::to_string(h.shape.size()));
  c.n = h.shape[0];
  c.rows = h.shape[1];
  c.cols = h.shape[2];
  if (c.n < 1) throw cli::Error(path + ": " + what + " holds no example (N = 0)");
  if (c.rows < 1 || c.rows > ATTN_MAX_SEQ)
    throw cli::Error(path + ": sequence length " + std::to_string(c.rows) + " out of range");
  if (c.cols < 1 || c.cols > ATTN_MAX_DIM)
    throw cli::Error(path + ": width " + std::to_string(c.cols) + " out of range");
  for (size_t i = 0; i < a.f32.size(); ++i) {
    if (!std::isfinite(a.f32[i])) {
      const size_t per = static_cast<size_t>(c.rows * c.cols);
      throw cli::Error(path + ": " + what + " value " + std::to_string(i) + " (example " +
                       std::to_string(i / per) + ") is not finite (" +
                       (std::isnan(a.f32[i]) ? "nan" : "inf") + ")");
    }
  }
  c.data = std::move(a.f32);
  return c;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string range_text(Range r) {
  return "[" + num(static_cast<double>(r.min)) + ", " + num(static_cast<double>(r.max)) + "]";
}

// Why quantize_attention_s8/_s16 refused a block (kBadQuantParams): the first
// stage whose fixed-point constant falls outside what the integer forward
// represents, with the numbers (the checks of src/quant/quantize_attention.cpp,
// redone here to name the stage).
std::string diagnose(const AttentionConfig& c, const WeightsF32& w, const CalibrationRanges& r, DType dt,
                     bool per_tensor) {
  const QuantParams x = choose_activation_quant(r.query, dt), xk = choose_activation_quant(r.key, dt),
                    xv = choose_activation_quant(r.value, dt), q = choose_activation_quant(r.q, dt),
                    k = choose_activation_quant(r.k, dt), v = choose_activation_quant(r.v, dt),
                    ctx = choose_activation_quant(r.context, dt), y = choose_activation_quant(r.output, dt);
  const int32_t max_shift = dt == DType::kS8 ? 30 : 14;
  const int32_t E = c.embed_dim, D = c.inner_dim(), Dkv = c.kv_dim(), hd = c.resolved_head_dim();
  const auto sd = [](float f) { return static_cast<double>(f); };
  struct Proj {
    const char* stage;  // the output stage
    const char* in_name;
    const float* w;
    const float* b;
    int32_t out, in;
    Range rin, rout;
    QuantParams pin, pout;
  };
  const Proj projs[4] = {
      {"q (query projection)", "query input", w.wq, c.bias ? w.bq : nullptr, D, E, r.query, r.q, x, q},
      {"k (key projection)", "key input", w.wk, c.bias ? w.bk : nullptr, Dkv, c.resolved_kdim(), r.key, r.k,
       xk, k},
      {"v (value projection)", "value input", w.wv, c.bias ? w.bv : nullptr, Dkv, c.resolved_vdim(), r.value,
       r.v, xv, v},
      {"output (output projection)", "context", w.wo, c.bias ? w.bo : nullptr, E, D, r.context, r.output, ctx,
       y}};
  for (const Proj& p : projs) {
    double tensor_max = 0.0;
    for (size_t i = 0; i < static_cast<size_t>(p.out) * static_cast<size_t>(p.in); ++i)
      tensor_max = std::fmax(tensor_max, std::fabs(sd(p.w[i])));
    for (int32_t ch = 0; ch < p.out; ++ch) {
      const float* row = p.w + static_cast<size_t>(ch) * static_cast<size_t>(p.in);
      double amax = tensor_max;
      if (!per_tensor) {
        amax = 0.0;
        for (int32_t i = 0; i < p.in; ++i) amax = std::fmax(amax, std::fabs(sd(row[i])));
      }
      const double sw =
          sd(amax > 0.0 ? static_cast<float>(amax / 127.0) : static_cast<float>(1.0 / 1048576.0));
      const double m = sd(p.pin.scale) * sw / sd(p.pout.scale);
      int32_t mult = 0, shift = 0;
      if (quantize_multiplier(m, &mult, &shift) != Status::kOk || shift > max_shift)
        return "stage " + std::string(p.stage) + ": its requantization multiplier (" + p.in_name + " scale " +
               num(sd(p.pin.scale)) + " x weight scale " + num(sw) + " / output scale " +
               num(sd(p.pout.scale)) + " = " + num(m) + ") exceeds 2^" + std::to_string(max_shift) +
               ": its calibrated range " + range_text(p.rout) + " is far narrower than the " + p.in_name +
               " range " + range_text(p.rin) + " implies";
      if (p.b != nullptr) {
        const double bq = std::round(sd(p.b[ch]) / (sd(p.pin.scale) * sw));
        if (std::fabs(bq) > (dt == DType::kS8 ? 2147483647.0 : 9.0e18))
          return "stage " + std::string(p.stage) + ": bias " + num(sd(p.b[ch])) + " of channel " +
                 std::to_string(ch) + " is " + num(bq) + " steps of the accumulator (" + p.in_name +
                 " scale " + num(sd(p.pin.scale)) + " x weight scale " + num(sw) + "), beyond its " +
                 (dt == DType::kS8 ? "int32" : "int64") + " range: the " + p.in_name + " range " +
                 range_text(p.rin) + " is too narrow (calibration values too small)";
      }
    }
  }
  // Scores: one integer step of Q.K / sqrt(head_dim), in the fused softmax's log2 units.
  int32_t min_shift = 0;
  if (dt == DType::kS16)
    while ((int64_t{1} << min_shift) <= hd) ++min_shift;
  const double unit = sd(q.scale) * sd(k.scale) / std::sqrt(static_cast<double>(hd));
  const double log2_units = unit * 1.4426950408889634 * 65536.0;
  const double hi = std::ldexp(2147483648.0, -min_shift) / (1.4426950408889634 * 65536.0);
  const double lo = std::ldexp(0.5, -40) / (1.4426950408889634 * 65536.0);
  const std::string scores = "stage scores: one integer step of Q.K/sqrt(head_dim) (Q scale " +
                             num(sd(q.scale)) + " x K scale " + num(sd(k.scale)) + " / sqrt(" +
                             std::to_string(hd) + ") = " + num(unit) + ")";
  if (!std::isfinite(log2_units) || !(unit >= lo))
    return scores + " is below the fixed-point softmax's smallest step " + num(lo) + ": the Q range " +
           range_text(r.q) + " and K range " + range_text(r.k) +
           " are too small (calibration values too small)";
  if (unit >= hi)
    return scores + " exceeds the fixed-point softmax's largest step " + num(hi) + ": the Q range " +
           range_text(r.q) + " and K range " + range_text(r.k) +
           " are too wide (calibration values too large, or an outlier)";
  const double cm = sd(v.scale) / (32768.0 * sd(ctx.scale));
  int32_t mult = 0, shift = 0;
  if (quantize_multiplier(cm, &mult, &shift) != Status::kOk || shift > max_shift)
    return "stage context (P.V): its requantization multiplier (V scale " + num(sd(v.scale)) +
           " / (2^15 x context scale " + num(sd(ctx.scale)) + ") = " + num(cm) + ") exceeds 2^" +
           std::to_string(max_shift) + ": the context range " + range_text(r.context) +
           " is far narrower than the V range " + range_text(r.v);
  return "no single stage is out of range; calibrated ranges: query " + range_text(r.query) + ", Q " +
         range_text(r.q) + ", K " + range_text(r.k) + ", V " + range_text(r.v) + ", context " +
         range_text(r.context) + ", output " + range_text(r.output);
}

std::vector<float> to_vector(const float* p, size_t n) { return std::vector<float>(p, p + n); }

// SQNR (dB) of a projection's int8 weights, dequantized with their scales.
double weight_sqnr(const float* w, const int8_t* q, const float* scale, int32_t out, int32_t in) {
  tools::Sqnr s;
  for (int32_t c = 0; c < out; ++c) {
    for (int32_t k = 0; k < in; ++k) {
      const size_t i = static_cast<size_t>(c) * static_cast<size_t>(in) + static_cast<size_t>(k);
      const double r = static_cast<double>(w[i]);
      const double d = static_cast<double>(q[i]) * static_cast<double>(scale[c]) - r;
      s.signal += r * r;
      s.noise += d * d;
    }
  }
  return s.db();
}

template <class T>
std::vector<T> quantize_all(const float* x, size_t n, QuantParams p, DType dt) {
  std::vector<T> q(n);
  for (size_t i = 0; i < n; ++i) q[i] = static_cast<T>(quantize_value(x[i], p, dt));
  return q;
}

int write_quantized(tools::ModelSpec& spec, const std::string& path, const std::string& out, const Model& m);

struct Quantized {
  WeightsS8 s8;
  WeightsS16 s16;
  ActivationQuant act;
  WeightScales scales;
  cli::AlignedBytes storage;
};

// ---- whole models (format v3): --calib-tokens ---------------------------------

// Calibration token ids: int32 or int64 .npy, [B, L] (B sequences of L tokens)
// or [L] (one sequence), each id in [0, vocab), L <= max_positions.
struct CalibTokens {
  std::vector<int32_t> tokens;   // B * L, row after row
  std::vector<int32_t> lengths;  // [B], each L
  int64_t rows = 0, len = 0;
};

CalibTokens read_calib_tokens(const std::string& path, const TransformerConfig& c) {
  cli::TokenIds ids = cli::read_token_ids(path, c);  // vocabulary and max_positions checked
  CalibTokens t;
  t.tokens = std::move(ids.ids);
  t.rows = ids.rows;
  t.len = ids.len;
  t.lengths.assign(static_cast<size_t>(t.rows), static_cast<int32_t>(t.len));
  return t;
}

// Calibration text: each line encoded with the model's tokenizer and its
// special tokens (BOS, or [CLS] .. [SEP]), the lines' ids joined into one
// stream and cut into rows of min(max_positions, 128) tokens (the last,
// partial row dropped; a stream shorter than one row is one row).
CalibTokens read_calib_text(const std::string& path, const TransformerConfig& c, const cli::Text& text) {
  const std::vector<uint8_t> bytes = cli::read_file(path);
  const std::string all(bytes.begin(), bytes.end());
  std::vector<int32_t> stream;
  for (size_t p = 0; p < all.size();) {
    size_t e = all.find('\n', p);
    if (e == std::string::npos) e = all.size();
    if (e > p) {
      const std::vector<int32_t> ids = text.encode(all.substr(p, e - p), true);
      stream.insert(stream.end(), ids.begin(), ids.end());
    }
    p = e + 1;
  }
  if (stream.empty()) throw cli::Error(path + ": no text to calibrate on");
  for (int32_t id : stream)
    if (id >= c.vocab_size)
      throw cli::Error(path + ": token id " + std::to_string(id) + " is outside the model's vocabulary");
  CalibTokens t;
  t.len = std::min<int64_t>(std::min<int64_t>(c.max_positions, 128), static_cast<int64_t>(stream.size()));
  t.rows = static_cast<int64_t>(stream.size()) / t.len;
  t.tokens.assign(stream.begin(), stream.begin() + t.rows * t.len);
  t.lengths.assign(static_cast<size_t>(t.rows), static_cast<int32_t>(t.len));
  return t;
}

template <class W>
Status quantize_model(const TransformerConfig& c, const TransformerWeightsF32& wf,
                      const TransformerCalibration& cal, Arena& storage, Arena& scratch, W* out,
                      TransformerQuantReport* rep, const TransformerQuantOptions& o) {
  if constexpr (std::is_same<W, TransformerWeightsS8>::value) {
    return quantize_transformer_s8(c, wf, cal, storage, scratch, out, rep, o);
  } else {
    return quantize_transformer_s16(c, wf, cal, storage, scratch, out, rep, o);
  }
}

// Output SQNR (dB) of the integer model wq against the float model on the
// calibration rows [r0, r1): the float forward and the integer one.
template <class W>
double output_sqnr(const TransformerConfig& c, const TransformerWeightsF32& wf, const W& wq, DType dtype,
                   const CalibTokens& ids, int64_t r0, int64_t r1) {
  const int32_t n = static_cast<int32_t>(ids.len), od = c.output_dim();
  TransformerPlan fp, qp;
  if (plan_transformer(c, DType::kF32, n, 0, &fp) != Status::kOk ||
      plan_transformer_fixed(c, dtype, n, 0, &qp) != Status::kOk)
    throw cli::Error("held-out check: cannot plan the forwards");
  cli::AlignedBytes fb(fp.arena_bytes), qb(qp.arena_bytes);
  std::vector<float> fo(static_cast<size_t>(n) * static_cast<size_t>(od));
  std::vector<int32_t> qo(fo.size());
  double signal = 0.0, noise = 0.0;
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t* t = ids.tokens.data() + r * ids.len;
    Arena fa, qa;
    Status s = fa.init(fb.data(), fp.arena_bytes);
    if (s == Status::kOk) s = qa.init(qb.data(), qp.arena_bytes);
    if (s == Status::kOk) s = transformer_forward_f32(fp, wf, t, n, OutputRows::kAll, fo.data(), fa);
    if (s == Status::kOk) {
      if constexpr (std::is_same<W, TransformerWeightsS8>::value) {
        s = transformer_forward_s8(qp, wq, t, n, OutputRows::kAll, qo.data(), qa);
      } else {
        s = transformer_forward_s16(qp, wq, t, n, OutputRows::kAll, qo.data(), qa);
      }
    }
    if (s != Status::kOk) throw cli::Error("held-out check: a forward failed: " + cli::describe(s));
    for (size_t i = 0; i < fo.size(); ++i) {
      const double want = static_cast<double>(fo[i]);
      const double got = static_cast<double>(qo[i]) * static_cast<double>(wq.output_scale);
      signal += want * want;
      noise += (got - want) * (got - want);
    }
  }
  return noise > 0.0 ? 10.0 * std::log10(signal / noise) : 200.0;
}

// --weights s8|s4 and --s4 ffn|all: which projections get int4 weights.
Int4Weights int4_choice(const cli::Args& args) {
  const std::string wt = args.has("--weights") ? args.get("--weights") : "s8";
  if (wt != "s8" && wt != "s4") throw cli::Error("--weights must be s8 or s4, got '" + wt + "'");
  if (wt == "s8") {
    if (args.has("--s4")) throw cli::Error("--s4 chooses the int4 projections: it needs --weights s4");
    return Int4Weights::kNone;
  }
  const std::string which = args.has("--s4") ? args.get("--s4") : "ffn";
  if (which != "ffn" && which != "all") throw cli::Error("--s4 must be ffn or all, got '" + which + "'");
  return which == "ffn" ? Int4Weights::kFfn : Int4Weights::kAll;
}

// `attn quantize MODEL.attn --calib-tokens IDS.npy --dtype s8|s16 [--residual-bits N] -o OUT.attn`
template <class W>
int quantize_model_file(const cli::Args& args, const std::string& path, const std::string& out,
                        const std::string& dt, const Model& m) {
  const DType dtype = dt == "s8" ? DType::kS8 : DType::kS16;
  for (const char* opt : {"--calib", "--calib-kv", "--calib-value", "--per-tensor", "--causal", "--residual",
                          "--exact-mask", "--any-mask", "--key-length", "--max-positions"}) {
    if (args.has(opt))
      throw cli::Error(path + " is a whole model: " + opt +
                       " is for block files (models take --calib-tokens)");
  }
  if (args.has("--calib-tokens") == args.has("--calib-text"))
    throw cli::Error(
        path +
        " is a whole model: pass --calib-tokens IDS.npy (token ids, int32 or int64, [B, L] "
        "or [L]: each row one calibration sequence) or --calib-text FILE (lines of text, with the "
        "model's tokenizer)");
  format::ModelRecord rec{};
  TransformerConfig c;
  if (m.model_record(&rec) != Status::kOk || m.transformer_config(&c) != Status::kOk)
    throw cli::Error(path + ": model record unreadable");
  if (rec.dtype != static_cast<uint16_t>(DType::kF32))
    throw cli::Error(path + " is already " + cli::dtype_name(static_cast<DType>(rec.dtype)) +
                     ": quantize needs a float32 model");
  std::vector<LayerWeightsF32> fl(static_cast<size_t>(c.num_layers));
  TransformerWeightsF32 wf;
  Status s = m.transformer_weights_f32(fl.data(), c.num_layers, &wf);
  if (s != Status::kOk) throw cli::Error(path + ": model weights unreadable: " + cli::describe(s));
  const std::string ids_path =
      args.has("--calib-text") ? args.get("--calib-text") : args.get("--calib-tokens");
  cli::Text text;
  if (args.has("--calib-text") && !text.from_model(m))
    throw cli::Error(path +
                     " has no tokenizer for --calib-text (import it with --tokenizer PATH or --byte-vocab)");
  const CalibTokens ids =
      args.has("--calib-text") ? read_calib_text(ids_path, c, text) : read_calib_tokens(ids_path, c);
  TransformerQuantOptions options;
  options.residual_bits = static_cast<int32_t>(args.get_int("--residual-bits", options.residual_bits, 8, 28));
  options.int4 = int4_choice(args);

  size_t storage_bytes = 0, scratch_bytes = 0;
  s = quantize_transformer_storage_bytes(c, dtype, &storage_bytes);
  if (s == Status::kOk)
    s = quantize_transformer_scratch_bytes(c, dtype, static_cast<int32_t>(ids.len), &scratch_bytes, options);
  if (s != Status::kOk)
    throw cli::Error(path + ": cannot quantize this model to " + dt + ": " + cli::describe(s));
  // Named before they are allocated (as the block path's rotary tables): with
  // rotary embedding each layer holds cos/sin tables of max_positions rows.
  const AttentionConfig ac = c.attention();
  const uint64_t rope_bytes = ac.rope_base > 0.0f ? uint64_t{2} * static_cast<uint64_t>(c.max_positions) *
                                                        static_cast<uint64_t>(ac.resolved_head_dim()) *
                                                        static_cast<uint64_t>(c.num_layers)
                                                  : 0;
  const std::string storage_what =
      "the " + dt + " model" +
      (rope_bytes > 0
           ? " (with " + std::to_string(rope_bytes) + " bytes of rotary tables: max_positions " +
                 std::to_string(c.max_positions) + " x head_dim " + std::to_string(ac.resolved_head_dim()) +
                 " x 2 bytes x " + std::to_string(c.num_layers) + " layers)"
           : std::string());
  cli::check_fits(path, storage_bytes, storage_what.c_str());
  cli::check_fits(path, static_cast<uint64_t>(storage_bytes) + scratch_bytes,
                  "the model and the calibration's scratch");
  cli::AlignedBytes storage_buf(storage_bytes), scratch_buf(scratch_bytes);
  Arena storage, scratch;
  if (storage.init(storage_buf.data(), storage_bytes) != Status::kOk ||
      scratch.init(scratch_buf.data(), scratch_bytes) != Status::kOk)
    throw cli::Error("arena init failed");
  TransformerCalibration cal;
  cal.tokens = ids.tokens.data();
  cal.lengths = ids.lengths.data();
  cal.count = static_cast<int32_t>(ids.rows);
  std::printf("attn quantize: %s -> %s, %s model, %lld calibration sequence(s) of %lld token(s) from %s\n",
              path.c_str(), out.c_str(), dt.c_str(), static_cast<long long>(ids.rows),
              static_cast<long long>(ids.len), ids_path.c_str());
  W w;
  TransformerQuantReport rep;
  s = quantize_model(c, wf, cal, storage, scratch, &w, &rep, options);
  if (s == Status::kBadQuantParams)
    throw cli::Error(path + ": cannot quantize to " + dt +
                     ": a weight or calibrated activation is not finite, or a scale is not representable (" +
                     cli::describe(s) + ")");
  if (s != Status::kOk) throw cli::Error(path + ": quantization to " + dt + " failed: " + cli::describe(s));

  std::printf(
      "model: %d layer(s), E=%d, ffn_dim=%d, vocab=%d; residual int32, max |x| %.4g, scale %.4g "
      "(--residual-bits %d)\n",
      c.num_layers, c.embed_dim, c.ffn_dim, c.vocab_size, static_cast<double>(rep.residual_max),
      static_cast<double>(w.residual_scale), options.residual_bits);
  std::printf("SQNR of the integer forward against the float forward on the calibration set:\n");
  std::printf("  embeddings  %6.2f dB\n", rep.embedding_sqnr_db);
  for (int32_t l = 0; l < rep.num_layers; ++l)
    std::printf("  layer %-4d  %6.2f dB after attention, %6.2f dB after FFN\n", l, rep.attention_sqnr_db[l],
                rep.layer_sqnr_db[l]);
  std::printf("  output      %6.2f dB (%s, int32 on scale %.4g)\n", rep.output_sqnr_db,
              c.head == LmHead::kNone ? "hidden state" : "logits", static_cast<double>(w.output_scale));

  // Held out: figures on the data the ranges came from flatter. The last 10%
  // of the sequences (at least one) are held out of a second calibration on
  // the rest; its output SQNR on both parts is reported. The written file
  // keeps the ranges of every sequence (this check only measures).
  if (ids.rows < 2) {
    std::printf("held-out check: skipped (one calibration sequence; give two or more to measure one)\n");
  } else {
    const int64_t held = std::max<int64_t>(1, ids.rows / 10), fit = ids.rows - held;
    cli::check_fits(path, 2 * static_cast<uint64_t>(storage_bytes) + scratch_bytes,
                    "the held-out check's second model");
    cli::AlignedBytes storage2(storage_bytes);
    Arena st2;
    if (st2.init(storage2.data(), storage_bytes) != Status::kOk) throw cli::Error("arena init failed");
    scratch.reset();
    TransformerCalibration part = cal;
    part.count = static_cast<int32_t>(fit);
    TransformerQuantOptions o2 = options;
    o2.report = false;
    W w2;
    s = quantize_model(c, wf, part, st2, scratch, &w2, nullptr, o2);
    if (s != Status::kOk)
      throw cli::Error(path + ": held-out check: quantizing on the first " + std::to_string(fit) +
                       " sequences failed: " + cli::describe(s));
    const double in_db = output_sqnr(c, wf, w2, dtype, ids, 0, fit);
    const double out_db = output_sqnr(c, wf, w2, dtype, ids, fit, ids.rows);
    std::printf(
        "held-out check: ranges from the first %lld sequence(s), output SQNR %.2f dB on them, %.2f dB on the "
        "last %lld (held out)\n",
        static_cast<long long>(fit), in_db, out_db, static_cast<long long>(held));
    if (std::fabs(in_db - out_db) > 3.0)
      std::printf(
          "warning: the held-out SQNR differs by %.1f dB (more than 3): the calibration sequences do not "
          "represent one another; the figures above hold for them, not for other inputs: calibrate on more "
          "varied sequences\n",
          std::fabs(in_db - out_db));
  }

  tools::ModelSpec spec;
  spec.data_align = m.data_align();
  try {
    tools::add_transformer_fixed(spec, c, m.byte_vocab(), w);
  } catch (const std::runtime_error& e) {
    throw cli::Error(out + ": cannot write: " + e.what());
  }
  return write_quantized(spec, path, out, m);
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
  const cli::Args args(
      argc, argv,
      {"--calib", "--calib-kv", "--calib-value", "--dtype", "-o", "--output", "--key-length",
       "--max-positions", "--calib-tokens", "--calib-text", "--residual-bits", "--weights", "--s4"},
      {"--per-tensor", "--causal", "--residual", "--exact-mask", "--any-mask"});
  const std::string path = args.one_input("IN.attn");
  const std::string out = args.output();
  const std::string dt = args.required("--dtype");
  if (dt != "s8" && dt != "s16") throw cli::Error("--dtype must be s8 or s16, got '" + dt + "'");
  const DType dtype = dt == "s8" ? DType::kS8 : DType::kS16;
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  const Model& m = lm.model;
  if (m.is_model()) {
    return dtype == DType::kS8 ? quantize_model_file<TransformerWeightsS8>(args, path, out, dt, m)
                               : quantize_model_file<TransformerWeightsS16>(args, path, out, dt, m);
  }
  for (const char* opt : {"--calib-tokens", "--calib-text", "--residual-bits"}) {
    if (args.has(opt))
      throw cli::Error(path + " holds attention blocks, not a whole model: " + opt +
                       " is for model files (blocks take --calib)");
  }
  QuantizeOptions options;
  options.per_tensor_weights = args.has("--per-tensor");
  // Blocks: --weights s4 gives Q, K, V and O int4 weights (--s4 all is the only choice there).
  const Int4Weights int4 = int4_choice(args);
  if (int4 == Int4Weights::kFfn && args.has("--s4"))
    throw cli::Error("--s4 ffn: a block file has no FFN (its int4 weights are Q, K, V, O: --s4 all)");
  options.int4_weights = int4 != Int4Weights::kNone;
  const Calib x = read_calib(args.required("--calib"), "calibration data");
  const bool residual = args.has("--residual");
  const bool any_mask = args.has("--any-mask");
  if (any_mask && args.has("--exact-mask"))
    throw cli::Error("--any-mask and --exact-mask exclude each other");
  const bool cross = args.has("--calib-kv");
  if (args.has("--calib-value") && !cross) throw cli::Error("--calib-value needs --calib-kv");
  Calib kv, cv;
  if (cross) {
    kv = read_calib(args.get("--calib-kv"), "key/value calibration data");
    cv = args.has("--calib-value") ? read_calib(args.get("--calib-value"), "value calibration data") : kv;
    for (const Calib* c : {&kv, &cv}) {
      if (c->n != x.n)
        throw cli::Error(c->path + ": " + std::to_string(c->n) + " examples, but " + x.path + " has " +
                         std::to_string(x.n));
      if (c->rows != kv.rows)
        throw cli::Error(c->path + ": " + std::to_string(c->rows) + " rows, but --calib-kv has " +
                         std::to_string(kv.rows));
    }
  }
  if (m.block_count() == 0) throw cli::Error(path + ": the file has no attention blocks");
  const int64_t N = x.n, L = x.rows, S = cross ? kv.rows : L;
  Mask mask;
  mask.causal = args.has("--causal");
  if (args.has("--key-length")) mask.key_length = static_cast<int32_t>(args.get_int("--key-length", 0, 0, S));
  options.max_positions = static_cast<int32_t>(args.get_int("--max-positions", std::max(L, S), 1, 1 << 24));
  uint64_t rope_bytes = 0;  // cos and sin int16 [max_positions, head_dim / 2] per rotary block
  for (uint32_t bi = 0; bi < m.block_count(); ++bi) {
    Block b;
    if (m.block(bi, &b) == Status::kOk && b.config.rope_base > 0.0f)
      rope_bytes +=
          4 * static_cast<uint64_t>(options.max_positions) * static_cast<uint64_t>(b.config.head_dim / 2);
  }
  cli::check_fits(path, rope_bytes, "the rotary tables (--max-positions x head_dim / 2 x 4 bytes per block)");

  tools::ModelSpec spec;
  spec.data_align = m.data_align();
  std::vector<std::vector<float>> cur(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n)
    cur[static_cast<size_t>(n)] = to_vector(x.item(n), static_cast<size_t>(L * x.cols));
  int64_t width = x.cols;
  std::printf("attn quantize: %s -> %s, %s, %lld calibration example(s) of L=%lld%s%s%s\n", path.c_str(),
              out.c_str(), dt.c_str(), static_cast<long long>(N), static_cast<long long>(L),
              cross ? (", S=" + std::to_string(S)).c_str() : "",
              options.per_tensor_weights ? ", per-tensor weights" : "", residual ? ", residual blocks" : "");
  for (uint32_t bi = 0; bi < m.block_count(); ++bi) {
    const std::string name = path + ": block " + std::to_string(bi);
    Block b;
    if (m.block(bi, &b) != Status::kOk) throw cli::Error(name + " unreadable");
    if (b.dtype != DType::kF32)
      throw cli::Error(name + " is already " + cli::dtype_name(b.dtype) + ": quantize needs a float32 file");
    const AttentionConfig& c = b.config;
    cli::check_block_inputs(c, bi, name, bi == 0 ? x.path : name, width, cross, kv.path, kv.cols, cv.path,
                            cv.cols, "--calib-kv");
    const int32_t Li = static_cast<int32_t>(L), Si = static_cast<int32_t>(S);
    Plan fplan, qplan;
    Status s = plan_attention(c, DType::kF32, Li, Si, &fplan);
    if (s == Status::kOk) s = plan_attention(c, dtype, Li, Si, &qplan);
    if (s != Status::kOk) throw cli::Error(name + ": " + cli::describe(s));

    // 1. Calibrate: ranges of every stage; the float32 outputs feed the next block.
    const size_t cal_bytes = calibrate_attention_arena_bytes(c, Li, Si);
    cli::AlignedBytes cal_buf(cal_bytes);
    Arena cal;
    if (cal.init(cal_buf.data(), cal_bytes) != Status::kOk) throw cli::Error("arena init failed");
    CalibrationRanges ranges;
    std::vector<std::vector<float>> next(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      std::vector<float>& y = next[static_cast<size_t>(n)];
      y.assign(static_cast<size_t>(L * c.embed_dim), 0.0f);
      IoF32 io;
      io.query = cur[static_cast<size_t>(n)].data();
      io.key = cross ? kv.item(n) : io.query;
      io.value = cross ? cv.item(n) : io.query;
      io.output = y.data();
      s = calibrate_attention(fplan, b.f32, mask, io, cal, &ranges);
      if (s == Status::kBadQuantParams)
        throw cli::Error(name + ": the float forward gives a non-finite value on calibration example " +
                         std::to_string(n));
      if (s != Status::kOk) throw cli::Error(name + ": calibration failed: " + cli::describe(s));
      // With --any-mask: context and output ranges that hold under any mask.
      if (any_mask) {
        s = calibrate_any_mask(fplan, b.f32, io, cal, &ranges);
        if (s == Status::kBadQuantParams)
          throw cli::Error(name +
                           ": a single-key output (Wo times a V row) is not finite on calibration example " +
                           std::to_string(n));
        if (s != Status::kOk) throw cli::Error(name + ": calibration failed: " + cli::describe(s));
      }
    }
    // A stage that is 0 on every example leaves nothing to calibrate: its
    // scale would be a placeholder and the written model useless.
    const std::pair<const char*, Range> stages[] = {
        {"query input", ranges.query},     {"key input", ranges.key},
        {"value input", ranges.value},     {"q (query projection)", ranges.q},
        {"k (key projection)", ranges.k},  {"v (value projection)", ranges.v},
        {"context (P.V)", ranges.context}, {"output", ranges.output}};
    for (const auto& sr : stages)
      if (!(sr.second.max > sr.second.min))
        throw cli::Error(name + ": degenerate calibration: stage " + sr.first +
                         " is 0 on every calibration example (nothing to measure a range from); calibrate on "
                         "representative data");

    // 2. Quantize.
    Quantized q;
    const size_t st_bytes = quantize_attention_storage_bytes(c, dtype, options);
    q.storage = cli::AlignedBytes(st_bytes);
    Arena st;
    if (st.init(q.storage.data(), st_bytes) != Status::kOk) throw cli::Error("arena init failed");
    s = dtype == DType::kS8
            ? quantize_attention_s8(c, b.f32, ranges, st, &q.s8, &q.act, &q.scales, options)
            : quantize_attention_s16(c, b.f32, ranges, st, &q.s16, &q.act, &q.scales, options);
    if (s == Status::kBadQuantParams)
      throw cli::Error(name + ": cannot quantize to " + dt + ": " +
                       diagnose(c, b.f32, ranges, dtype, options.per_tensor_weights) + " (" +
                       cli::describe(s) + ")");
    if (s != Status::kOk) throw cli::Error(name + ": quantization failed: " + cli::describe(s));

    // 3. Report on the calibration set.
    tools::Sqnr st_x, st_q, st_k, st_v, st_ctx, st_y, e2e;
    cli::AlignedBytes run_buf(qplan.arena_bytes);
    Arena run;
    if (run.init(run_buf.data(), qplan.arena_bytes == 0 ? 1 : qplan.arena_bytes) != Status::kOk)
      throw cli::Error("arena init failed");
    const size_t nx = static_cast<size_t>(L * c.embed_dim), nk = static_cast<size_t>(S * c.kdim),
                 nv = static_cast<size_t>(S * c.vdim);
    for (int64_t n = 0; n < N; ++n) {
      const float* xq = cur[static_cast<size_t>(n)].data();
      const float* xk = cross ? kv.item(n) : xq;
      const float* xv = cross ? cv.item(n) : xq;
      const tools::Stages ref = tools::reference_forward(c, b.f32, mask, xq, xk, xv, Li, Si);
      const std::vector<float> xs = to_vector(xq, nx);
      st_x.add(xs, tools::fake_quantize(xs, q.act.query, dtype));
      st_q.add(ref.q, tools::fake_quantize(ref.q, q.act.q, dtype));
      st_k.add(ref.k, tools::fake_quantize(ref.k, q.act.k, dtype));
      st_v.add(ref.v, tools::fake_quantize(ref.v, q.act.v, dtype));
      st_ctx.add(ref.ctx, tools::fake_quantize(ref.ctx, q.act.context, dtype));
      st_y.add(ref.y, tools::fake_quantize(ref.y, q.act.output, dtype));
      std::vector<double> got(nx);
      if (dtype == DType::kS8) {
        const std::vector<int8_t> iq = quantize_all<int8_t>(xq, nx, q.act.query, dtype);
        const std::vector<int8_t> ik = quantize_all<int8_t>(xk, nk, q.act.key, dtype);
        const std::vector<int8_t> iv = quantize_all<int8_t>(xv, nv, q.act.value, dtype);
        std::vector<int8_t> iy(nx);
        s = forward_s8(qplan, q.s8, mask, IoS8{iq.data(), ik.data(), iv.data(), iy.data()}, run);
        for (size_t i = 0; i < nx; ++i)
          got[i] = tools::dequantize_value(iy[i], q.act.output.scale, q.act.output.zero_point);
      } else {
        const std::vector<int16_t> iq = quantize_all<int16_t>(xq, nx, q.act.query, dtype);
        const std::vector<int16_t> ik = quantize_all<int16_t>(xk, nk, q.act.key, dtype);
        const std::vector<int16_t> iv = quantize_all<int16_t>(xv, nv, q.act.value, dtype);
        std::vector<int16_t> iy(nx);
        s = forward_s16(qplan, q.s16, mask, IoS16{iq.data(), ik.data(), iv.data(), iy.data()}, run);
        for (size_t i = 0; i < nx; ++i) got[i] = tools::dequantize_value(iy[i], q.act.output.scale, 0);
      }
      if (s != Status::kOk) throw cli::Error(name + ": integer forward failed: " + cli::describe(s));
      e2e.add(ref.y, got);
    }
    const int32_t D = c.num_heads * c.head_dim, Dkv = c.kv_dim();
    const auto proj = [&](const auto& w) {
      return std::make_tuple(w.q.weight, w.k.weight, w.v.weight, w.o.weight);
    };
    const auto wts = dtype == DType::kS8 ? proj(q.s8) : proj(q.s16);
    const double wq_db = weight_sqnr(b.f32.wq, std::get<0>(wts), q.scales.q, D, c.embed_dim);
    const double wk_db = weight_sqnr(b.f32.wk, std::get<1>(wts), q.scales.k, Dkv, c.kdim);
    const double wv_db = weight_sqnr(b.f32.wv, std::get<2>(wts), q.scales.v, Dkv, c.vdim);
    const double wo_db = weight_sqnr(b.f32.wo, std::get<3>(wts), q.scales.o, c.embed_dim, D);

    const size_t before = spec.tensors.size();
    tools::BlockSpec bs{static_cast<uint32_t>(c.embed_dim),
                        static_cast<uint32_t>(c.num_heads),
                        static_cast<uint32_t>(c.head_dim),
                        static_cast<uint32_t>(c.kdim),
                        static_cast<uint32_t>(c.vdim),
                        c.bias,
                        dtype};
    bs.n_kv_heads = static_cast<uint32_t>(c.resolved_kv_heads());  // written as 0 when it equals H
    bs.rope_base = c.rope_base;
    if (dtype == DType::kS8) {
      tools::add_block_quant(spec, bs, q.s8, q.act);
    } else {
      tools::add_block_quant(spec, bs, q.s16, q.act);
    }
    size_t block_bytes = 0;
    for (size_t t = before; t < spec.tensors.size(); ++t) block_bytes += spec.tensors[t].bytes.size();

    std::printf("block %u: %s E=%d heads=%d kv_heads=%d head_dim=%d kdim=%d vdim=%d\n", bi, dt.c_str(),
                c.embed_dim, c.num_heads, c.resolved_kv_heads(), c.head_dim, c.kdim, c.vdim);
    std::printf(
        "  stage SQNR (dB, float stage on its %s grid): x %.1f  Q %.1f  K %.1f  V %.1f  context %.1f  y "
        "%.1f\n",
        dt.c_str(), st_x.db(), st_q.db(), st_k.db(), st_v.db(), st_ctx.db(), st_y.db());
    std::printf("  integer forward vs float64 forward, output SQNR: %.1f dB\n", e2e.db());
    std::printf("  weight SQNR (dB, %s int8): Wq %.1f  Wk %.1f  Wv %.1f  Wo %.1f\n",
                options.per_tensor_weights ? "per-tensor" : "per-channel", wq_db, wk_db, wv_db, wo_db);
    std::printf("  scales: x %.3g (zp %d)  Q %.3g  K %.3g  V %.3g  context %.3g  y %.3g (zp %d)\n",
                static_cast<double>(q.act.query.scale), q.act.query.zero_point,
                static_cast<double>(q.act.q.scale), static_cast<double>(q.act.k.scale),
                static_cast<double>(q.act.v.scale), static_cast<double>(q.act.context.scale),
                static_cast<double>(q.act.output.scale), q.act.output.zero_point);
    if (c.rope_base != 0.0f)
      std::printf(
          "  rope: base %g, cos/sin tables for positions 0 .. %d (%zu bytes; --max-positions)\n",
          static_cast<double>(c.rope_base), options.max_positions - 1,
          size_t{4} * static_cast<size_t>(options.max_positions) * static_cast<size_t>(c.head_dim / 2));
    std::printf("  bytes: tensors %zu, arena(L=%lld, S=%lld) %zu (float32: %zu)\n", block_bytes,
                static_cast<long long>(L), static_cast<long long>(S), qplan.arena_bytes, fplan.arena_bytes);
    if (residual) {  // the next block sees x + attention(x)
      for (int64_t n = 0; n < N; ++n) {
        std::vector<float>& y = next[static_cast<size_t>(n)];
        const std::vector<float>& xin = cur[static_cast<size_t>(n)];
        for (size_t k = 0; k < y.size(); ++k) y[k] += xin[k];
      }
    }
    cur.swap(next);
    width = c.embed_dim;
  }
  return write_quantized(spec, path, out, m);
}

namespace {

// The user tensors of `m` (unchanged, in file order) after `spec`'s, the file
// written canonically, loaded back as a check, then OUT replaced atomically.
int write_quantized(tools::ModelSpec& spec, const std::string& path, const std::string& out, const Model& m) {
  for (uint32_t i = 0; i < m.tensor_count(); ++i) {
    TensorView v;
    if (m.tensor(i, &v) != Status::kOk)
      throw cli::Error(path + ": tensor " + std::to_string(i) + " unreadable");
    if (v.role == format::Role::kTokenizer) {  // the model's tokenizer travels with it
      const auto* p = static_cast<const uint8_t*>(v.data);
      tools::add_tokenizer(spec, std::vector<uint8_t>(p, p + v.byte_size));
      continue;
    }
    if (v.role != format::Role::kUser) continue;
    tools::TensorSpec t;
    t.name = v.name;
    t.dtype = v.dtype;
    t.layout = v.layout;
    for (int k = 0; k < v.rank; ++k) t.dims.push_back(static_cast<uint32_t>(v.dims[k]));
    const auto* p = static_cast<const uint8_t*>(v.data);
    t.bytes.assign(p, p + v.byte_size);
    spec.tensors.push_back(std::move(t));
  }
  std::vector<uint8_t> file;
  try {
    file = tools::write_model(spec);
  } catch (const std::runtime_error& e) {
    throw cli::Error(out + ": cannot write: " + e.what());
  }
  cli::AlignedBytes check(file.size());
  std::copy(file.begin(), file.end(), check.data());
  Model verify;
  const Status vs = Model::load(check.data(), check.size(), &verify);
  if (vs != Status::kOk)
    throw cli::Error(out + ": the quantized file does not validate: " + cli::describe(vs));
  cli::write_file_atomic(out, file.data(), file.size());
  std::printf("wrote %s (%zu bytes, %u %s, %u tensor(s))\n", out.c_str(), file.size(), verify.block_count(),
              verify.is_model() ? "layer(s)" : "block(s)", verify.tensor_count());
  return 0;
}

}  // namespace
}  // namespace attn
