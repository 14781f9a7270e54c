// mask_policy_test.cpp: which masks an s8/s16 block's ranges hold for
// (attn::MaskCoverage), measured on the golden cases, and the refusals.
//
// The table test quantizes every golden case the integer forwards run (as
// golden_fixed_test.cpp: the C++ converter on the sidecar's calibration
// inputs) under three policies and prints the SQNR of the case's input
// against the float32 forward with the same mask:
//   (a) any      ranges widened for any mask (calibrate_any_mask, `attn
//                quantize --any-mask`; the default before the coverage field)
//   (b) exact    calibrated with the mask the block runs with
//   (c) policy   calibrated with the case's mask and recorded (`attn quantize`
//                default): run with it, and run with another mask ("other":
//                no mask for a causal case, causal for the others), where it
//                must be refused (kMaskNotCalibrated) or lose <= 1 dB against
//                (b) for that mask
// "clip" is what (c) would give with the other mask were it not refused.
// Every golden mask has a coverage of its own (none, causal, key length N,
// causal window N, causal key length N), so every "other" run is refused.
// The causal cases also run the masks the causal coverage does not admit (a
// window of 3 keys, key padding at S/2): refused, and what they would lose.
// Print it: attn_tests "[mask_policy]" -s   (src/FIXED_POINT.md, accuracy).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/quantize.h"
#include "fixed_dtypes.h"
#include "golden.h"

namespace {

using attn::DType;
using attn::Mask;
using attn::MaskCoverage;
using attn::Status;

double sqnr_db(const std::vector<float>& want, const std::vector<double>& got) {
  double s = 0, n = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = static_cast<double>(want[i]);
    s += w * w;
    n += (got[i] - w) * (got[i] - w);
  }
  return n == 0 ? 300.0 : 10.0 * std::log10(s / n);
}

// The float32 forward of the case's input under `mask`: the reference.
std::vector<float> reference(const golden::Case& c, const Mask& mask) {
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.config(), DType::kF32, c.L, c.S, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, buf.size) == Status::kOk);
  std::vector<float> y(static_cast<size_t>(c.L) * static_cast<size_t>(c.E));
  attn::IoF32 io;
  io.query = c.query.data();
  io.key = c.key.data();
  io.value = c.value.data();
  io.output = y.data();
  REQUIRE(attn::forward_f32(plan, c.weights(), mask, io, arena) == Status::kOk);
  return y;
}

// The coverage a calibration with mask m (no additive part; a window or
// causal key padding at offset 0) records, and its N.
MaskCoverage coverage_of(const Mask& m, int32_t S, int32_t* n) {
  const int32_t kept = m.key_length == Mask::kAllKeys ? S : m.key_length;
  *n = m.causal && m.window > 0 ? m.window : kept;
  if (m.causal && m.window > 0) return MaskCoverage::kCausalWindow;
  if (m.causal && kept != S) return MaskCoverage::kCausalKeyLength;
  if (kept != S) return MaskCoverage::kKeyLength;
  *n = m.causal ? m.causal_offset : 0;
  return m.causal ? MaskCoverage::kCausal : MaskCoverage::kNoMask;
}

// How the quantized block is labelled: with the coverage calibration
// recorded, or relabelled "any mask" to measure what its ranges give under
// another mask (a caller that sets CalibrationRanges::mask_coverage by hand).
enum class Label { kRecorded, kAnyMask };

// Calibrate on the sidecar's inputs with `calib` (widened for any mask with
// any_mask), label (*recorded: the coverage the ranges recorded), quantize to
// D, run the case's input with `run`: the status, and the SQNR against the
// float32 forward with `run`.
template <class D>
Status run_policy(const golden::Case& c, const golden::QuantCalib& q, const Mask& calib, bool any_mask,
                  Label label, const Mask& run, double* db, MaskCoverage* recorded = nullptr) {
  using T = typename D::T;
  const attn::AttentionConfig cfg = c.config();
  const attn::WeightsF32 w = c.weights();
  attn::Plan fplan, qplan;
  REQUIRE(attn::plan_attention(cfg, DType::kF32, c.L, c.S, &fplan) == Status::kOk);
  REQUIRE(attn::plan_attention(cfg, D::kDtype, c.L, c.S, &qplan) == Status::kOk);
  AlignedBuffer cal_buf(attn::calibrate_attention_arena_bytes(cfg, c.L, c.S));
  attn::Arena cal;
  REQUIRE(cal.init(cal_buf.data, cal_buf.size) == Status::kOk);
  attn::CalibrationRanges ranges;
  const size_t nq = static_cast<size_t>(c.L) * static_cast<size_t>(c.E);  // the output's values
  for (int32_t n = 0; n < q.n; ++n) {
    const attn::IoF32 io = q.io(c, n);
    REQUIRE(attn::calibrate_attention(fplan, w, calib, io, cal, &ranges) == Status::kOk);
    if (any_mask) REQUIRE(attn::calibrate_any_mask(fplan, w, io, cal, &ranges) == Status::kOk);
  }
  if (recorded != nullptr) *recorded = ranges.mask_coverage;
  if (label == Label::kAnyMask) {
    ranges.mask_coverage = MaskCoverage::kAnyMask;
    ranges.mask_key_length = 0;
    ranges.mixed_masks = false;
  }
  attn::QuantizeOptions options;
  options.max_positions = std::max(c.L, c.S);
  AlignedBuffer st_buf(attn::quantize_attention_storage_bytes(cfg, D::kDtype, options));
  attn::Arena st;
  REQUIRE(st.init(st_buf.data, st_buf.size) == Status::kOk);
  AlignedBuffer run_buf(qplan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(run_buf.data, run_buf.size) == Status::kOk);
  typename D::Weights ws;
  attn::ActivationQuant act;
  REQUIRE(D::quantize(cfg, w, ranges, st, &ws, &act, options) == Status::kOk);
  CHECK(ws.mask_coverage == ranges.mask_coverage);
  CHECK(ws.mask_key_length == ranges.mask_key_length);
  const auto quantize_all = [&](const std::vector<float>& x, attn::QuantParams p) {
    std::vector<T> v(x.size());
    for (size_t i = 0; i < x.size(); ++i) v[i] = static_cast<T>(attn::quantize_value(x[i], p, D::kDtype));
    return v;
  };
  const std::vector<T> iq = quantize_all(c.query, act.query), ik = quantize_all(c.key, act.key),
                       iv = quantize_all(c.value, act.value);
  const T sentinel = 77;
  std::vector<T> iy(nq, sentinel);
  const Status s =
      D::forward(qplan, ws, run, typename D::Io{iq.data(), ik.data(), iv.data(), iy.data()}, arena);
  if (s != Status::kOk) {
    // Refused before writing anything.
    CHECK(std::all_of(iy.begin(), iy.end(), [&](T v) { return v == sentinel; }));
    return s;
  }
  const int32_t zero = D::kDtype == DType::kS8 ? act.output.zero_point : 0;
  std::vector<double> got(nq);
  for (size_t i = 0; i < nq; ++i)
    got[i] = static_cast<double>(act.output.scale) * static_cast<double>(static_cast<int32_t>(iy[i]) - zero);
  *db = sqnr_db(reference(c, run), got);
  return Status::kOk;
}

struct Row {
  double any = 0, exact = 0, own = 0;                     // the case's mask
  double other_any = 0, other_exact = 0, other_clip = 0;  // the other mask
  bool other_refused = false;
  double admitted_loss = -1e9;  // causal cases: worst loss of a window / key padding run, were it not refused
};

template <class D>
Row measure(const golden::Case& c, const golden::QuantCalib& q) {
  const Mask own = c.mask();
  Mask other;  // no mask for a causal case, causal for the others
  other.causal = !own.causal;
  const int32_t S = c.S;
  Row r;
  MaskCoverage recorded = MaskCoverage::kAnyMask;
  int32_t n = 0;
  REQUIRE(run_policy<D>(c, q, own, true, Label::kRecorded, own, &r.any, &recorded) == Status::kOk);
  CHECK(recorded == MaskCoverage::kAnyMask);
  REQUIRE(run_policy<D>(c, q, own, false, Label::kAnyMask, own, &r.exact) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, own, false, Label::kRecorded, own, &r.own, &recorded) == Status::kOk);
  CHECK(recorded == coverage_of(own, S, &n));
  REQUIRE(run_policy<D>(c, q, own, true, Label::kRecorded, other, &r.other_any) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, other, false, Label::kAnyMask, other, &r.other_exact) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, own, false, Label::kAnyMask, other, &r.other_clip) == Status::kOk);
  double policy_other = 0;
  const Status s = run_policy<D>(c, q, own, false, Label::kRecorded, other, &policy_other);
  r.other_refused = s == Status::kMaskNotCalibrated;
  REQUIRE((r.other_refused || s == Status::kOk));
  if (!r.other_refused) CHECK(policy_other >= r.other_exact - 1.0);
  if (own.causal && own.window == 0 && own.key_length == Mask::kAllKeys && S >= 4) {
    Mask window = own, padded = own;
    window.window = 3;
    padded.key_length = S / 2;
    for (const Mask& m : {window, padded}) {  // refused; what they would lose (causal ranges, no refusal)
      double got = 0, exact = 0;
      CHECK(run_policy<D>(c, q, own, false, Label::kRecorded, m, &got) == Status::kMaskNotCalibrated);
      REQUIRE(run_policy<D>(c, q, own, false, Label::kAnyMask, m, &got) == Status::kOk);
      REQUIRE(run_policy<D>(c, q, m, false, Label::kAnyMask, m, &exact) == Status::kOk);
      r.admitted_loss = std::max(r.admitted_loss, exact - got);
    }
  }
  return r;
}

const char* mask_name(const golden::Case& c) {
  if (c.causal) return c.window > 0 ? "window" : (c.key_length >= 0 ? "causal+pad" : "causal");
  return c.key_length >= 0 && c.key_length != c.S ? "keypad" : "none";
}

template <class D>
void table(const char* dtype) {
  const std::string dir = golden::default_dir();
  std::vector<double> any, exact, own, other_any, other_exact, other_clip, loss;
  int refused = 0, n = 0, admitted = 0;
  double admitted_worst = 0;
  std::printf("\n%s: SQNR (dB) vs the float32 forward with the same mask\n", dtype);
  std::printf("%-38s %-10s %6s %6s %6s | %6s %6s %6s %s\n", "case", "mask", "(a)", "(b)", "(c)", "o:(a)",
              "o:(b)", "o:clip", "o:(c)");
  for (const std::string& path : golden::list_cases(dir)) {
    golden::Case c;
    std::string error;
    REQUIRE(golden::load(path, &c, &error));
    if (c.has_additive) continue;
    golden::QuantCalib q;
    REQUIRE(golden::load_quant(dir, c, &q, &error));
    const Row r = measure<D>(c, q);
    std::printf("%-38s %-10s %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f %s\n", c.name.c_str(), mask_name(c), r.any,
                r.exact, r.own, r.other_any, r.other_exact, r.other_clip,
                r.other_refused ? "refused" : "ran");
    INFO(c.name);
    CHECK(r.own == r.exact);  // the recorded coverage changes no byte of the block's output
    CHECK(r.own >= r.exact - 0.3);
    any.push_back(r.any);
    exact.push_back(r.exact);
    own.push_back(r.own);
    other_any.push_back(r.other_any);
    other_exact.push_back(r.other_exact);
    other_clip.push_back(r.other_clip);
    loss.push_back(r.other_exact - r.other_clip);
    refused += r.other_refused ? 1 : 0;
    if (r.admitted_loss > -1e9) {
      ++admitted;
      admitted_worst = std::max(admitted_worst, r.admitted_loss);
    }
    ++n;
  }
  const auto lo = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  std::printf("%s, %d cases, median / worst:\n", dtype, n);
  std::printf("  own mask:   (a) any %.2f / %.2f   (b) exact %.2f / %.2f   (c) policy %.2f / %.2f\n",
              median(any), lo(any), median(exact), lo(exact), median(own), lo(own));
  std::printf(
      "  other mask: (a) any %.2f / %.2f   (b) exact %.2f / %.2f   clipped %.2f / %.2f (loss vs exact: "
      "median %.2f, worst %.2f dB); (c) refused %d of %d\n",
      median(other_any), lo(other_any), median(other_exact), lo(other_exact), median(other_clip),
      lo(other_clip), median(loss), *std::max_element(loss.begin(), loss.end()), refused, n);
  std::printf(
      "  causal coverage run with window 3 / causal key padding S/2 (%d cases): refused; they would lose "
      "up to %.2f dB vs exact\n",
      admitted, admitted_worst);
  CHECK(refused == n);  // every golden "other" mask is outside the case's coverage
}

// The self-attention case the tests below share, with its calibration inputs.
void load_self_case(golden::Case* c, golden::QuantCalib* q) {
  const std::string dir = golden::default_dir();
  std::string error;
  REQUIRE(golden::load(dir + "/self_e48_h4_l16.bin", c, &error));
  REQUIRE(golden::load_quant(dir, *c, q, &error));
}

}  // namespace

TEST_CASE("mask policy: SQNR of the golden cases under any-mask, exact and recorded-coverage calibration",
          "[mask_policy][golden][fixed]") {
  table<dtypes::S8>("s8");
  table<dtypes::S16>("s16");
}

TEST_CASE("mask coverage: the forwards refuse a mask the ranges do not cover, before writing",
          "[mask_policy]") {
  golden::Case c;
  golden::QuantCalib q;
  load_self_case(&c, &q);
  Mask none, causal, pad, pad_other, window, window_other, causal_pad, causal_pad_other, offset;
  causal.causal = true;
  window.causal = true;
  window.window = 4;
  window_other = window;
  window_other.window = 5;
  pad.key_length = 9;
  pad_other.key_length = 10;
  causal_pad = causal;
  causal_pad.key_length = 9;
  causal_pad_other = causal;
  causal_pad_other.key_length = 10;
  offset = causal;
  offset.causal_offset = 2;
  Mask all_keys;  // key_length S: the same keys as no mask
  all_keys.key_length = c.S;
  double db = 0;
  struct Expect {
    Mask calib;
    MaskCoverage coverage;  // what calibrate_attention records
    Mask run;
    Status want;
  };
  const Expect cases[] = {
      {none, MaskCoverage::kNoMask, none, Status::kOk},
      {none, MaskCoverage::kNoMask, all_keys, Status::kOk},
      {all_keys, MaskCoverage::kNoMask, none, Status::kOk},
      {none, MaskCoverage::kNoMask, causal, Status::kMaskNotCalibrated},
      {none, MaskCoverage::kNoMask, pad, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, causal, Status::kOk},
      {causal, MaskCoverage::kCausal, offset, Status::kOk},  // rows see more keys than in calibration
      {offset, MaskCoverage::kCausal, offset, Status::kOk},
      {offset, MaskCoverage::kCausal, causal, Status::kMaskNotCalibrated},  // fewer
      {causal, MaskCoverage::kCausal, window, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, none, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, pad, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, causal_pad, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, pad, Status::kOk},
      {pad, MaskCoverage::kKeyLength, pad_other, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, none, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, causal, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, causal_pad, Status::kMaskNotCalibrated},
      {window, MaskCoverage::kCausalWindow, window, Status::kOk},
      {window, MaskCoverage::kCausalWindow, window_other, Status::kMaskNotCalibrated},
      {window, MaskCoverage::kCausalWindow, causal, Status::kMaskNotCalibrated},
      {window, MaskCoverage::kCausalWindow, none, Status::kMaskNotCalibrated},
      {causal_pad, MaskCoverage::kCausalKeyLength, causal_pad, Status::kOk},
      {causal_pad, MaskCoverage::kCausalKeyLength, causal_pad_other, Status::kMaskNotCalibrated},
      {causal_pad, MaskCoverage::kCausalKeyLength, causal, Status::kMaskNotCalibrated},
      {causal_pad, MaskCoverage::kCausalKeyLength, pad, Status::kMaskNotCalibrated},
  };
  for (const Expect& e : cases) {
    INFO("coverage " << static_cast<int>(e.coverage) << ", run causal " << e.run.causal << " key_length "
                     << e.run.key_length << " window " << e.run.window);
    MaskCoverage got = MaskCoverage::kAnyMask;
    CHECK(run_policy<dtypes::S8>(c, q, e.calib, false, Label::kRecorded, e.run, &db, &got) == e.want);
    CHECK(got == e.coverage);
    CHECK(run_policy<dtypes::S16>(c, q, e.calib, false, Label::kRecorded, e.run, &db, &got) == e.want);
    CHECK(got == e.coverage);
  }
  // Ranges labelled "any mask" by hand (as every file from before the field) run every mask.
  CHECK(run_policy<dtypes::S8>(c, q, none, false, Label::kAnyMask, causal, &db) == Status::kOk);
  CHECK(run_policy<dtypes::S8>(c, q, causal, false, Label::kAnyMask, none, &db) == Status::kOk);
}

// Masks no one coverage describes: examples calibrated with different masks,
// a causal offset, a window with key padding. The converter refuses the
// ranges until calibrate_any_mask() widens them.
TEST_CASE("mask coverage: ranges of mixed or undescribed masks are refused until widened for any mask",
          "[mask_policy]") {
  golden::Case c;
  golden::QuantCalib q;
  load_self_case(&c, &q);
  const attn::AttentionConfig cfg = c.config();
  attn::Plan fplan;
  REQUIRE(attn::plan_attention(cfg, DType::kF32, c.L, c.S, &fplan) == Status::kOk);
  AlignedBuffer cal_buf(attn::calibrate_attention_arena_bytes(cfg, c.L, c.S));
  attn::Arena cal;
  REQUIRE(cal.init(cal_buf.data, cal_buf.size) == Status::kOk);
  const attn::IoF32 io{q.query.data(), q.key.data(), q.value.data(), nullptr};
  Mask causal, pad, offset, window_pad;
  causal.causal = true;
  pad.key_length = 5;
  offset = causal;
  offset.causal_offset = 3;
  window_pad = causal;
  window_pad.window = 4;
  window_pad.key_length = 9;
  const attn::WeightsF32 w = c.weights();
  const auto quantize = [&](const attn::CalibrationRanges& r) {
    AlignedBuffer st_buf(attn::quantize_attention_storage_bytes(cfg, DType::kS8));
    attn::Arena st;
    REQUIRE(st.init(st_buf.data, st_buf.size) == Status::kOk);
    attn::WeightsS8 ws;
    attn::ActivationQuant act;
    return attn::quantize_attention_s8(cfg, w, r, st, &ws, &act);
  };
  struct Calls {
    const char* what;
    std::vector<Mask> masks;
  };
  Mask window_offset = offset;
  window_offset.window = 4;
  const Calls mixed[] = {{"no mask, then causal", {Mask(), causal}},
                         {"key length 5, then no mask", {pad, Mask()}},
                         {"a window at a causal offset", {window_offset}},
                         {"a window with key padding", {window_pad}}};
  for (const Calls& m : mixed) {
    INFO(m.what);
    attn::CalibrationRanges r;
    for (const Mask& mask : m.masks)
      REQUIRE(attn::calibrate_attention(fplan, w, mask, io, cal, &r) == Status::kOk);
    CHECK(r.mixed_masks);
    CHECK(quantize(r) == Status::kMaskNotCalibrated);
    REQUIRE(attn::calibrate_any_mask(fplan, w, io, cal, &r) == Status::kOk);
    CHECK_FALSE(r.mixed_masks);
    CHECK(r.mask_coverage == MaskCoverage::kAnyMask);
    CHECK(quantize(r) == Status::kOk);
    // Widened for any mask, they stay so for later examples of any mask.
    REQUIRE(attn::calibrate_attention(fplan, w, pad, io, cal, &r) == Status::kOk);
    CHECK(r.mask_coverage == MaskCoverage::kAnyMask);
    CHECK(quantize(r) == Status::kOk);
  }
  // The same mask on every example keeps its coverage.
  attn::CalibrationRanges r;
  for (int i = 0; i < 3; ++i) REQUIRE(attn::calibrate_attention(fplan, w, pad, io, cal, &r) == Status::kOk);
  CHECK_FALSE(r.mixed_masks);
  CHECK(r.mask_coverage == MaskCoverage::kKeyLength);
  CHECK(r.mask_key_length == 5);
  CHECK(r.examples == 3);
  // Causal examples at several offsets: covered from the smallest up.
  attn::CalibrationRanges o;
  for (const int32_t k : {4, 2, 3}) {
    Mask m = causal;
    m.causal_offset = k;
    REQUIRE(attn::calibrate_attention(fplan, w, m, io, cal, &o) == Status::kOk);
  }
  CHECK_FALSE(o.mixed_masks);
  CHECK(o.mask_coverage == MaskCoverage::kCausal);
  CHECK(o.mask_key_length == 2);
}

TEST_CASE("mask coverage: the converter and the forwards reject values outside MaskCoverage",
          "[mask_policy]") {
  attn::AttentionConfig cfg{8, 2};
  std::vector<float> w(64, 0.25f), b(8, 0.125f);
  const attn::WeightsF32 wf{w.data(), w.data(), w.data(), w.data(), b.data(), b.data(), b.data(), b.data()};
  attn::CalibrationRanges r;
  for (attn::Range* x : {&r.query, &r.key, &r.value, &r.q, &r.k, &r.v, &r.context, &r.output})
    *x = {-1.0f, 1.0f};
  AlignedBuffer st_buf(1 << 14);
  attn::Arena st;
  REQUIRE(st.init(st_buf.data, st_buf.size) == Status::kOk);
  attn::WeightsS8 ws;
  attn::ActivationQuant act;
  struct Bad {
    int32_t coverage, key_length;
  };
  for (const Bad b : {Bad{4, 0}, Bad{-1, 0}, Bad{6, 0}, Bad{3, -1}, Bad{3, ATTN_MAX_SEQ + 1},
                      Bad{4, ATTN_MAX_SEQ + 1}, Bad{5, -1}, Bad{1, 5}, Bad{0, 1}}) {
    attn::CalibrationRanges bad = r;
    bad.mask_coverage = static_cast<MaskCoverage>(b.coverage);
    bad.mask_key_length = b.key_length;
    CHECK(attn::quantize_attention_s8(cfg, wf, bad, st, &ws, &act) == Status::kBadQuantParams);
  }
  attn::QuantizeOptions o;
  REQUIRE(attn::quantize_attention_s8(cfg, wf, r, st, &ws, &act, nullptr, o) == Status::kOk);
  attn::Plan plan;
  REQUIRE(attn::plan_attention(cfg, DType::kS8, 4, 4, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, buf.size) == Status::kOk);
  std::vector<int8_t> x(32, 1), y(32, 0);
  const attn::IoS8 io{x.data(), x.data(), x.data(), y.data()};
  CHECK(attn::forward_s8(plan, ws, Mask{}, io, arena) == Status::kOk);
  // A decode attends causally: weights calibrated without a mask (or with key
  // padding) are refused, before the cache changes; causal and any-mask ones run.
  attn::Plan dplan;
  REQUIRE(attn::plan_decode(cfg, DType::kS8, 2, 4, &dplan) == Status::kOk);
  AlignedBuffer cache_buf(1 << 12), dbuf(dplan.arena_bytes);
  attn::Arena cache_arena, darena;
  REQUIRE(cache_arena.init(cache_buf.data, cache_buf.size) == Status::kOk);
  REQUIRE(darena.init(dbuf.data, dbuf.size) == Status::kOk);
  attn::KvCacheS8 cache;
  REQUIRE(attn::kv_cache_init_s8(dplan, 0, cache_arena, &cache) == Status::kOk);
  for (const MaskCoverage m : {MaskCoverage::kNoMask, MaskCoverage::kKeyLength, MaskCoverage::kCausalWindow,
                               MaskCoverage::kCausalKeyLength}) {
    ws.mask_coverage = m;
    ws.mask_key_length = m == MaskCoverage::kNoMask ? 0 : 2;
    CHECK(attn::decode_s8(dplan, ws, &cache, x.data(), 1, y.data(), darena) == Status::kMaskNotCalibrated);
    CHECK(cache.length == 0);
  }
  ws.mask_key_length = 0;
  for (const MaskCoverage m : {MaskCoverage::kCausal, MaskCoverage::kAnyMask}) {
    ws.mask_coverage = m;
    CHECK(attn::decode_s8(dplan, ws, &cache, x.data(), 1, y.data(), darena) == Status::kOk);
  }
  CHECK(cache.length == 2);
  ws.mask_coverage = static_cast<MaskCoverage>(7);
  CHECK(attn::forward_s8(plan, ws, Mask{}, io, arena) == Status::kBadQuantParams);
  ws.mask_coverage = MaskCoverage::kCausalWindow;
  ws.mask_key_length = 0;
  CHECK(attn::forward_s8(plan, ws, Mask{}, io, arena) == Status::kBadQuantParams);
}
