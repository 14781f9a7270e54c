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
// The causal cases also run the masks the causal coverage admits (a window of
// 3 keys, key padding at S/2) and check they lose <= 1 dB against exact.
// Print it: attn_tests "[mask_policy]" -s   (src/FIXED_POINT.md, accuracy).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <new>
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

struct Buffer {
  explicit Buffer(size_t n) : size(n == 0 ? 16 : n) {
    p.reset(static_cast<uint8_t*>(::operator new (size, std::align_val_t{16})));
  }
  struct Free {
    void operator()(uint8_t* q) const { ::operator delete (q, std::align_val_t{16}); }
  };
  std::unique_ptr<uint8_t, Free> p;
  size_t size;
};

double sqnr_db(const std::vector<float>& want, const std::vector<double>& got) {
  double s = 0, n = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = static_cast<double>(want[i]);
    s += w * w;
    n += (got[i] - w) * (got[i] - w);
  }
  return n == 0 ? 300.0 : 10.0 * std::log10(s / n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The float32 forward of the case's input under `mask`: the reference.
std::vector<float> reference(const golden::Case& c, const Mask& mask) {
  attn::Plan plan;
  REQUIRE(attn::plan_attention(c.config(), DType::kF32, c.L, c.S, &plan) == Status::kOk);
  Buffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.p.get(), buf.size) == Status::kOk);
  std::vector<float> y(static_cast<size_t>(c.L) * static_cast<size_t>(c.E));
  attn::IoF32 io;
  io.query = c.query.data();
  io.key = c.key.data();
  io.value = c.value.data();
  io.output = y.data();
  REQUIRE(attn::forward_f32(plan, c.weights(), mask, io, arena) == Status::kOk);
  return y;
}

// The coverage a calibration with mask m records. A window, causal key
// padding and key length 0 (every key masked) have no coverage of their own:
// kAnyMask (the converter's default), whatever the ranges.
MaskCoverage coverage_of(const Mask& m, int32_t S) {
  if (m.window > 0 || m.key_length == 0 || (m.causal && m.key_length != Mask::kAllKeys && m.key_length != S))
    return MaskCoverage::kAnyMask;
  if (m.causal) return MaskCoverage::kCausal;
  if (m.key_length == Mask::kAllKeys || m.key_length == S) return MaskCoverage::kNoMask;
  return MaskCoverage::kKeyLength;
}

// Calibrate on the sidecar's inputs with `calib` (widened for any mask with
// any_mask; recorded as `coverage`), quantize to D, run the case's input with
// `run`: the status, and the SQNR against the float32 forward with `run`.
template <class D>
Status run_policy(const golden::Case& c, const golden::QuantCalib& q, const Mask& calib, bool any_mask,
                  MaskCoverage coverage, const Mask& run, double* db) {
  using T = typename D::T;
  const attn::AttentionConfig cfg = c.config();
  const attn::WeightsF32 w = c.weights();
  attn::Plan fplan, qplan;
  REQUIRE(attn::plan_attention(cfg, DType::kF32, c.L, c.S, &fplan) == Status::kOk);
  REQUIRE(attn::plan_attention(cfg, D::kDtype, c.L, c.S, &qplan) == Status::kOk);
  Buffer cal_buf(attn::calibrate_attention_arena_bytes(cfg, c.L, c.S));
  attn::Arena cal;
  REQUIRE(cal.init(cal_buf.p.get(), cal_buf.size) == Status::kOk);
  attn::CalibrationRanges ranges;
  const size_t nq = static_cast<size_t>(c.L) * static_cast<size_t>(c.E);
  const size_t nk = static_cast<size_t>(c.S) * static_cast<size_t>(c.kdim);
  const size_t nv = static_cast<size_t>(c.S) * static_cast<size_t>(c.vdim);
  for (int32_t n = 0; n < q.n; ++n) {
    attn::IoF32 io;
    io.query = q.query.data() + static_cast<size_t>(n) * nq;
    io.key = q.key.data() + static_cast<size_t>(n) * nk;
    io.value = q.value.data() + static_cast<size_t>(n) * nv;
    REQUIRE(attn::calibrate_attention(fplan, w, calib, io, cal, &ranges) == Status::kOk);
    if (any_mask) REQUIRE(attn::calibrate_any_mask(fplan, w, io, cal, &ranges) == Status::kOk);
  }
  attn::QuantizeOptions options;
  options.max_positions = std::max(c.L, c.S);
  options.mask_coverage = coverage;
  if (coverage == MaskCoverage::kKeyLength) options.mask_key_length = calib.key_length;
  Buffer st_buf(attn::quantize_attention_storage_bytes(cfg, D::kDtype, options));
  attn::Arena st;
  REQUIRE(st.init(st_buf.p.get(), st_buf.size) == Status::kOk);
  Buffer run_buf(qplan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(run_buf.p.get(), run_buf.size) == Status::kOk);
  typename D::Weights ws;
  attn::ActivationQuant act;
  REQUIRE(D::quantize(cfg, w, ranges, st, &ws, &act, options) == Status::kOk);
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
  REQUIRE(run_policy<D>(c, q, own, true, MaskCoverage::kAnyMask, own, &r.any) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, own, false, MaskCoverage::kAnyMask, own, &r.exact) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, own, false, coverage_of(own, S), own, &r.own) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, own, true, MaskCoverage::kAnyMask, other, &r.other_any) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, other, false, MaskCoverage::kAnyMask, other, &r.other_exact) == Status::kOk);
  REQUIRE(run_policy<D>(c, q, own, false, MaskCoverage::kAnyMask, other, &r.other_clip) == Status::kOk);
  double policy_other = 0;
  const Status s = run_policy<D>(c, q, own, false, coverage_of(own, S), other, &policy_other);
  r.other_refused = s == Status::kMaskNotCalibrated;
  REQUIRE((r.other_refused || s == Status::kOk));
  // Cases without a coverage kind of their own are recorded as kAnyMask (not
  // checked: exact ranges labelled "any" clip, the gap FIXED_POINT.md names).
  if (!r.other_refused && coverage_of(own, S) != MaskCoverage::kAnyMask)
    CHECK(policy_other >= r.other_exact - 1.0);
  if (own.causal && own.window == 0 && own.key_length == Mask::kAllKeys && S >= 4) {
    Mask window = own, padded = own;
    window.window = 3;
    padded.key_length = S / 2;
    for (const Mask& m : {window, padded}) {  // refused; what they would lose (causal ranges, no refusal)
      double got = 0, exact = 0;
      CHECK(run_policy<D>(c, q, own, false, MaskCoverage::kCausal, m, &got) == Status::kMaskNotCalibrated);
      REQUIRE(run_policy<D>(c, q, own, false, MaskCoverage::kAnyMask, m, &got) == Status::kOk);
      REQUIRE(run_policy<D>(c, q, m, false, MaskCoverage::kAnyMask, m, &exact) == Status::kOk);
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
  int refused = 0, n = 0, admitted = 0, uncovered = 0;
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
    uncovered += coverage_of(c.mask(), c.S) == MaskCoverage::kAnyMask ? 1 : 0;
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
  std::printf("  %d cases (window, causal key padding, key_length 0) have no coverage kind: kAnyMask\n",
              uncovered);
  CHECK(refused == n - uncovered);  // every other golden "other" mask is outside the case's coverage
}

}  // namespace

TEST_CASE("mask policy: SQNR of the golden cases under any-mask, exact and recorded-coverage calibration",
          "[mask_policy][golden][fixed]") {
  table<dtypes::S8>("s8");
  table<dtypes::S16>("s16");
}

TEST_CASE("mask coverage: the forwards refuse a mask the ranges do not cover, before writing",
          "[mask_policy]") {
  const std::string dir = golden::default_dir();
  golden::Case c;
  golden::QuantCalib q;
  std::string error;
  REQUIRE(golden::load(dir + "/self_e48_h4_l16.bin", &c, &error));
  REQUIRE(golden::load_quant(dir, c, &q, &error));
  Mask none, causal, pad, pad_other, window;
  causal.causal = true;
  window.causal = true;
  window.window = 4;
  pad.key_length = 9;
  pad_other.key_length = 10;
  Mask all_keys;  // key_length S: the same keys as no mask
  all_keys.key_length = c.S;
  double db = 0;
  struct Expect {
    Mask calib;
    MaskCoverage coverage;
    Mask run;
    Status want;
  };
  const Expect cases[] = {
      {none, MaskCoverage::kNoMask, none, Status::kOk},
      {none, MaskCoverage::kNoMask, all_keys, Status::kOk},
      {none, MaskCoverage::kNoMask, causal, Status::kMaskNotCalibrated},
      {none, MaskCoverage::kNoMask, pad, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, causal, Status::kOk},
      {causal, MaskCoverage::kCausal, window, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, none, Status::kMaskNotCalibrated},
      {causal, MaskCoverage::kCausal, pad, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, pad, Status::kOk},
      {pad, MaskCoverage::kKeyLength, pad_other, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, none, Status::kMaskNotCalibrated},
      {pad, MaskCoverage::kKeyLength, causal, Status::kMaskNotCalibrated},
      {none, MaskCoverage::kAnyMask, causal, Status::kOk},  // weights from before the field
      {causal, MaskCoverage::kAnyMask, none, Status::kOk},
  };
  for (const Expect& e : cases) {
    INFO("coverage " << static_cast<int>(e.coverage) << ", run causal " << e.run.causal << " key_length "
                     << e.run.key_length << " window " << e.run.window);
    CHECK(run_policy<dtypes::S8>(c, q, e.calib, false, e.coverage, e.run, &db) == e.want);
    CHECK(run_policy<dtypes::S16>(c, q, e.calib, false, e.coverage, e.run, &db) == e.want);
  }
}

TEST_CASE("mask coverage: the converter and the forwards reject values outside MaskCoverage",
          "[mask_policy]") {
  attn::AttentionConfig cfg{8, 2};
  std::vector<float> w(64, 0.25f), b(8, 0.125f);
  const attn::WeightsF32 wf{w.data(), w.data(), w.data(), w.data(), b.data(), b.data(), b.data(), b.data()};
  attn::CalibrationRanges r;
  for (attn::Range* x : {&r.query, &r.key, &r.value, &r.q, &r.k, &r.v, &r.context, &r.output})
    *x = {-1.0f, 1.0f};
  Buffer st_buf(1 << 14);
  attn::Arena st;
  REQUIRE(st.init(st_buf.p.get(), st_buf.size) == Status::kOk);
  attn::WeightsS8 ws;
  attn::ActivationQuant act;
  struct Bad {
    int32_t coverage, key_length;
  };
  for (const Bad b : {Bad{4, 0}, Bad{-1, 0}, Bad{3, 0}, Bad{3, ATTN_MAX_SEQ + 1}, Bad{1, 5}}) {
    attn::QuantizeOptions o;
    o.mask_coverage = static_cast<MaskCoverage>(b.coverage);
    o.mask_key_length = b.key_length;
    CHECK(attn::quantize_attention_s8(cfg, wf, r, st, &ws, &act, nullptr, o) == Status::kBadQuantParams);
  }
  attn::QuantizeOptions o;
  REQUIRE(attn::quantize_attention_s8(cfg, wf, r, st, &ws, &act, nullptr, o) == Status::kOk);
  attn::Plan plan;
  REQUIRE(attn::plan_attention(cfg, DType::kS8, 4, 4, &plan) == Status::kOk);
  Buffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.p.get(), buf.size) == Status::kOk);
  std::vector<int8_t> x(32, 1), y(32, 0);
  const attn::IoS8 io{x.data(), x.data(), x.data(), y.data()};
  CHECK(attn::forward_s8(plan, ws, Mask{}, io, arena) == Status::kOk);
  // A decode attends causally: weights calibrated without a mask (or with key
  // padding) are refused, before the cache changes; causal and any-mask ones run.
  attn::Plan dplan;
  REQUIRE(attn::plan_decode(cfg, DType::kS8, 2, 4, &dplan) == Status::kOk);
  Buffer cache_buf(1 << 12), dbuf(dplan.arena_bytes);
  attn::Arena cache_arena, darena;
  REQUIRE(cache_arena.init(cache_buf.p.get(), cache_buf.size) == Status::kOk);
  REQUIRE(darena.init(dbuf.p.get(), dbuf.size) == Status::kOk);
  attn::KvCacheS8 cache;
  REQUIRE(attn::kv_cache_init_s8(dplan, 0, cache_arena, &cache) == Status::kOk);
  for (const MaskCoverage m : {MaskCoverage::kNoMask, MaskCoverage::kKeyLength}) {
    ws.mask_coverage = m;
    ws.mask_key_length = m == MaskCoverage::kKeyLength ? 4 : 0;
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
  ws.mask_coverage = MaskCoverage::kKeyLength;
  ws.mask_key_length = 0;
  CHECK(attn::forward_s8(plan, ws, Mask{}, io, arena) == Status::kBadQuantParams);
}
