// golden_fixed_to_c: the expected fixed-point outputs of the golden cases, as
// C++ arrays for the Cortex-M conformance runner (port/cortex-m). Runs on the
// HOST, built with the ref kernels only (ATTN_FORCE_REF):
//
//   golden_fixed_to_c OUT.h OUT.cpp FILE.bin...
//
// For each golden case the integer forwards support (no additive mask; GQA
// and rotary embedding included, with cos/sin tables for max(L, S) positions)
// and each of s8 and s16:
//   1. calibrate on the case's own inputs (calibrate_attention, f32 forward),
//   2. quantize the block (quantize_attention_s8 / _s16) and the inputs,
//   3. run forward_s8 / forward_s16 on the host,
//   4. emit the quantized weights, constants, inputs and the output.
// The board replays step 3 and must produce the same bytes. OUT.h holds the
// shapes (constexpr, to size the runner's buffers); OUT.cpp the data, typed
// as port/cortex-m/conformance/golden_fixed_case.h declares.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "golden.h"

namespace {

struct Buffer {  // aligned scratch for an attn::Arena
  explicit Buffer(size_t n) : bytes(n + 64) {}
  uint8_t* data() {
    auto p = reinterpret_cast<uintptr_t>(bytes.data());
    return reinterpret_cast<uint8_t*>((p + 63) & ~uintptr_t{63});
  }
  std::vector<uint8_t> bytes;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "golden_fixed_to_c: %s\n", msg.c_str());
  std::exit(1);
}

void check(attn::Status st, const std::string& what) {
  if (st != attn::Status::kOk) die(what + ": " + attn::status_name(st));
}

template <typename T>
const char* ctype() {
  if (std::is_same<T, int8_t>::value) return "int8_t";
  if (std::is_same<T, int16_t>::value) return "int16_t";
  if (std::is_same<T, int32_t>::value) return "int32_t";
  if (std::is_same<T, uint32_t>::value) return "uint32_t";
  return "int64_t";
}

// Emits `static const T name[n] = {...};` into the .golden section; returns the name.
template <typename T>
std::string emit(std::ostream& os, const std::string& name, const T* p, size_t n) {
  os << "ATTN_GOLDEN_SECTION static const " << ctype<T>() << " " << name << "[" << (n ? n : 1) << "] = {";
  for (size_t i = 0; i < n; ++i) {
    if (i % 16 == 0) os << "\n ";
    if (std::is_same<T, int64_t>::value) {
      os << " INT64_C(" << static_cast<long long>(p[i]) << "),";
    } else if (std::is_same<T, int32_t>::value && static_cast<int64_t>(p[i]) == INT32_MIN) {
      os << " INT32_MIN,";
    } else {
      os << " " << static_cast<long long>(p[i]) << (std::is_same<T, uint32_t>::value ? "u," : ",");
    }
  }
  os << "};\n";
  return name;
}

template <typename T>
std::vector<T> quantize_input(const std::vector<float>& v, attn::QuantParams p, attn::DType dt) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(attn::quantize_value(v[i], p, dt));
  return out;
}

template <typename Proj, typename Bias>
std::string emit_proj(std::ostream& os, const std::string& id, const char* which, const Proj& p, size_t out,
                      size_t in) {
  const std::string base = id + "_" + which;
  const std::string w = emit(os, base + "_w", p.weight, out * in);
  const std::string b = p.bias ? emit(os, base + "_b", static_cast<const Bias*>(p.bias), out) : "";
  const std::string m = emit(os, base + "_m", p.multiplier, out);
  const std::string s = emit(os, base + "_s", p.shift, out);
  return "{" + w + ", " + (p.bias ? b : std::string("nullptr")) + ", " + m + ", " + s + "}";
}

struct Emitted {
  std::string shape;  // FixedShape initializer
  std::string entry;  // GoldenCaseFixed initializer
};

// One case in one dtype; false if the integer forwards do not support it.
template <typename T>
bool emit_case(std::ostream& os, const golden::Case& c, int index, Emitted* e) {
  constexpr bool s8 = std::is_same<T, int8_t>::value;
  const attn::DType dt = s8 ? attn::DType::kS8 : attn::DType::kS16;
  const attn::AttentionConfig cfg = c.config();
  const attn::Mask mask = c.mask();
  attn::Plan plan;
  if (mask.additive || attn::plan_attention(cfg, dt, c.L, c.S, &plan) != attn::Status::kOk) return false;

  // 1. calibration on the case's own inputs.
  attn::Plan fplan;
  check(attn::plan_attention(cfg, attn::DType::kF32, c.L, c.S, &fplan), c.name + ": plan f32");
  Buffer cbuf(attn::calibrate_attention_arena_bytes(cfg, c.L, c.S));
  attn::Arena carena;
  check(carena.init(cbuf.data(), attn::calibrate_attention_arena_bytes(cfg, c.L, c.S)), "arena");
  attn::CalibrationRanges ranges;
  attn::IoF32 fio;
  fio.query = c.query.data();
  fio.key = c.key.data();
  fio.value = c.value.data();
  check(attn::calibrate_attention(fplan, c.weights(), mask, fio, carena, &ranges), c.name + ": calibrate");

  // 2. quantization.
  attn::QuantizeOptions options;
  options.max_positions = std::max(c.L, c.S);  // rope tables: exactly the positions the case uses
  const size_t qbytes = attn::quantize_attention_storage_bytes(cfg, dt, options);
  Buffer qbuf(qbytes);
  attn::Arena store;
  check(store.init(qbuf.data(), qbytes), "arena");
  attn::ActivationQuant act;
  typename std::conditional<s8, attn::WeightsS8, attn::WeightsS16>::type w;
  if constexpr (s8) {
    check(attn::quantize_attention_s8(cfg, c.weights(), ranges, store, &w, &act, nullptr, options),
          c.name + ": quantize s8");
  } else {
    check(attn::quantize_attention_s16(cfg, c.weights(), ranges, store, &w, &act, nullptr, options),
          c.name + ": quantize s16");
  }
  const std::vector<T> x = quantize_input<T>(c.query, act.query, dt);
  const std::vector<T> xk = quantize_input<T>(c.key, act.key, dt);
  const std::vector<T> xv = quantize_input<T>(c.value, act.value, dt);

  // 3. the host's forward, ref kernels.
  Buffer abuf(plan.arena_bytes);
  attn::Arena arena;
  check(arena.init(abuf.data(), plan.arena_bytes), "arena");
  std::vector<T> y(static_cast<size_t>(c.L) * static_cast<size_t>(c.E));
  if constexpr (s8) {
    check(attn::forward_s8(plan, w, mask, {x.data(), xk.data(), xv.data(), y.data()}, arena),
          c.name + ": s8");
  } else {
    check(attn::forward_s16(plan, w, mask, {x.data(), xk.data(), xv.data(), y.data()}, arena),
          c.name + ": s16");
  }

  // 4. the arrays.
  const std::string id = std::string(s8 ? "s8_" : "s16_") + std::to_string(index);
  using Bias = typename std::conditional<s8, int32_t, int64_t>::type;
  const size_t D = static_cast<size_t>(cfg.inner_dim()), Dkv = static_cast<size_t>(cfg.kv_dim());
  const size_t E = static_cast<size_t>(c.E);
  os << "// " << c.name << " (" << (s8 ? "s8" : "s16") << "): " << c.describe() << "\n";
  const std::string pq = emit_proj<decltype(w.q), Bias>(os, id, "q", w.q, D, E);
  const std::string pk = emit_proj<decltype(w.k), Bias>(os, id, "k", w.k, Dkv, static_cast<size_t>(c.kdim));
  const std::string pv = emit_proj<decltype(w.v), Bias>(os, id, "v", w.v, Dkv, static_cast<size_t>(c.vdim));
  const std::string po = emit_proj<decltype(w.o), Bias>(os, id, "o", w.o, E, D);
  const std::string ax = emit(os, id + "_x", x.data(), x.size());
  const std::string ak = emit(os, id + "_xk", xk.data(), xk.size());
  const std::string av = emit(os, id + "_xv", xv.data(), xv.size());
  const std::string ay = emit(os, id + "_y", y.data(), y.size());
  std::string rope = "nullptr, nullptr, 0";
  if (c.rope_base != 0.0f) {
    const size_t n = static_cast<size_t>(w.rope.positions) * static_cast<size_t>(cfg.resolved_head_dim() / 2);
    rope = emit(os, id + "_rope_cos", w.rope.cos, n) + ", " + emit(os, id + "_rope_sin", w.rope.sin, n) +
           ", " + std::to_string(w.rope.positions);
  }

  std::ostringstream base;  // a float literal that round-trips exactly
  base << std::scientific << std::setprecision(9) << static_cast<double>(c.rope_base) << "f";
  std::ostringstream shape;
  shape << "{" << (s8 ? 8 : 16) << ", " << c.E << ", " << c.H << ", " << cfg.resolved_head_dim() << ", "
        << cfg.resolved_kdim() << ", " << cfg.resolved_vdim() << ", " << cfg.resolved_kv_heads() << ", "
        << (c.bias ? "true" : "false") << ", " << c.L << ", " << c.S << ", " << base.str() << "}";
  int32_t zp[5] = {0, 0, 0, 0, 0};
  if constexpr (s8) {
    zp[0] = w.q_zero_point, zp[1] = w.k_zero_point, zp[2] = w.v_zero_point;
    zp[3] = w.context_zero_point, zp[4] = w.output_zero_point;
  }
  std::ostringstream entry;
  entry << "  {\"" << c.name << "\", kFixedShapes[" << index << "], " << (c.causal ? "true" : "false") << ", "
        << c.causal_offset << ", " << c.window << ", " << c.key_length << ",\n   " << pq << ",\n   " << pk
        << ",\n   " << pv << ",\n   " << po << ",\n   " << zp[0] << ", " << zp[1] << ", " << zp[2] << ", "
        << zp[3] << ", " << zp[4] << ", " << w.softmax.exp_multiplier << "u, " << w.softmax.exp_shift << ", "
        << w.softmax.diff_limit << ", " << w.softmax.score_shift << ", " << w.context_multiplier << ", "
        << w.context_shift << ",\n   " << rope << ",\n   " << ax << ", " << ak << ", " << av << ", " << ay
        << "}";
  e->shape = shape.str();
  e->entry = entry.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) die("usage: golden_fixed_to_c OUT.h OUT.cpp FILE.bin...");
  std::ostringstream data;
  std::vector<Emitted> cases;
  int skipped = 0;
  for (int bits : {8, 16}) {
    for (int i = 3; i < argc; ++i) {
      golden::Case c;
      std::string error;
      if (!golden::load(argv[i], &c, &error)) die(error);
      Emitted e;
      const int index = static_cast<int>(cases.size());
      const bool ok =
          bits == 8 ? emit_case<int8_t>(data, c, index, &e) : emit_case<int16_t>(data, c, index, &e);
      if (ok) {
        cases.push_back(e);
      } else {
        ++skipped;
      }
    }
  }
  if (cases.empty()) die("no case the integer forwards support");

  std::ofstream h(argv[1]);
  h << "// Generated by tools/golden_fixed/golden_fixed_to_c.cpp: do not edit.\n#pragma once\n\n"
       "#include \"golden_fixed_case.h\"\n\nconstexpr FixedShape kFixedShapes[] = {\n";
  for (const Emitted& e : cases) h << "  " << e.shape << ",\n";
  h << "};\nconstexpr int32_t kFixedCaseCount = " << cases.size() << ";\n"
    << "extern const GoldenCaseFixed kFixedCases[kFixedCaseCount];\n";
  std::ofstream cpp(argv[2]);
  cpp << "// Generated by tools/golden_fixed/golden_fixed_to_c.cpp: do not edit.\n#include <cstdint>\n\n"
         "#include \"golden_fixed_cases.h\"\n\nnamespace {\n"
      << data.str() << "}  // namespace\n\nconst GoldenCaseFixed kFixedCases[kFixedCaseCount] = {\n";
  for (const Emitted& e : cases) cpp << e.entry << ",\n";
  cpp << "};\n";
  if (!h || !cpp) die("cannot write the output files");
  std::fprintf(stderr, "golden_fixed_to_c: %zu fixed-point cases (s8 + s16), %d skipped (additive mask)\n",
               cases.size(), skipped);
  return 0;
}
