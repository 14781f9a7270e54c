// attn_example_demo_encoder: the 佛跳墙 classifier, a whole BERT-style
// encoder run by attn (tools/demo.sh, part 1).
//
// The model (tests/data/demo_encoder, trained by tools/train/train_demo_encoder.py)
// answers one question about a sequence of 32 tokens: do 佛, 跳, 墙 occur
// adjacent and in this order? tools/demo.sh imports it (`attn import
// model.safetensors --config config.json`: embeddings, 2 post-norm layers,
// the classifier as user tensors) and quantizes it (`attn quantize
// --calib-tokens`, ids from --write-calib). This program runs it:
//
//   hidden = transformer_forward_f32 / _s8 / _s16 (ids)     [L, E]  the whole encoder (attn)
//   logits = classifier.weight hidden[0] + classifier.bias  [2]     the only float code (here)
//
//   attn_example_demo_encoder --f32 F32.attn [--s8 S8.attn] [--s16 S16.attn] [--data DIR]
//       [--limit N] [--svg OUT.svg] [--emit-mcu OUT.h] [--timing-passes N (3; 0: no timing)]
//       [--min-accuracy PERCENT (99)] [--max-drop-s8 POINTS (0.3)] [--max-drop-s16 POINTS (0)]
//       [--max-drop-s4 POINTS (1)] [--s4 S4.attn: s8 activations, int4 FFN weights]
//   attn_example_demo_encoder --write-calib OUT.npy [--data DIR]
//
// DIR (tests/data): demo/test.txt (held-out set), demo/calib.txt, demo/vocab.txt,
// demo_encoder/logits.txt (PyTorch's logits of the first test sequences).
// --write-calib writes the calibration sequences as int32 ids [N, L] and exits.
// Prints, for each model: accuracy on the held-out set, agreement with f32,
// microseconds per inference, arena bytes and model bytes; checks the f32
// logits against PyTorch's; prints what [CLS] attends to in one positive
// example and writes every head's attention as an SVG heat map (--svg).
// --emit-mcu writes the held-out set and the host's s8 predictions for the
// Cortex-M image (port/cortex-m/demo/demo_encoder_s8.cpp).
// Exit code 0 if the checks pass (f32 logits within 1e-4 of PyTorch's, f32
// accuracy >= --min-accuracy, s8 and s16 at most --max-drop-* points below
// f32), 1 if not, 2 on errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/model.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "demo_common.h"

namespace {

#ifndef ATTN_TEST_DATA_DIR
#define ATTN_TEST_DATA_DIR "tests/data"
#endif

using demo::fail;

// ------------------------------------------------------------------ data ---

struct Example {
  int label = 0;             // 1: contains 佛跳墙
  std::vector<int32_t> ids;  // [L] token ids, ids[0] = [CLS]
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  return lines;
}

// "label id id ... id" per line.
std::vector<Example> read_examples(const std::string& path) {
  std::vector<Example> out;
  for (const std::string& line : read_lines(path)) {
    std::istringstream in(line);
    Example e;
    in >> e.label;
    for (int32_t id; in >> id;) e.ids.push_back(id);
    if (!e.ids.empty()) out.push_back(e);
  }
  return out;
}

// ----------------------------------------------------------------- model ---

// One model file (f32, s8 or s16) ready to run: its weights point into the blob.
struct Encoder : demo::ModelFile {
  std::vector<std::max_align_t> packed;  // f32: the weights packed once for this CPU's kernels
  attn::TransformerPlan plan;            // one forward of max_positions tokens
  std::vector<std::max_align_t> arena_buffer;
  attn::Arena arena;
  const float* classifier_w = nullptr;  // [2, E] user tensor classifier.weight
  const float* classifier_b = nullptr;  // [2]    user tensor classifier.bias
  std::vector<float> hidden;            // [L, E] f32 output
  std::vector<int32_t> hidden_q;        // [L, E] s8 / s16 output, real = output_scale * q
};

std::vector<std::max_align_t> aligned_bytes(size_t n) {
  return std::vector<std::max_align_t>(n / sizeof(std::max_align_t) + 1);
}

bool load(const std::string& path, const char* name, attn::DType dtype, Encoder* m) {
  if (!demo::load_model_file(path, name, dtype, m) || !demo::check_c_buffers(*m)) return false;
  const int32_t E = m->config.embed_dim;
  attn::Status s = attn::Status::kOk;
  attn::TensorView w, b;
  if ((s = m->model.find_tensor("classifier.weight", &w)) != attn::Status::kOk ||
      (s = m->model.find_tensor("classifier.bias", &b)) != attn::Status::kOk) {
    return fail("classifier", s);
  }
  if (w.dtype != attn::DType::kF32 || w.rank != 2 || w.dims[0] != 2 || w.dims[1] != E ||
      b.dtype != attn::DType::kF32 || b.rank != 1 || b.dims[0] != 2 ||
      m->config.head != attn::LmHead::kNone) {
    std::fprintf(stderr, "demo: %s: not an encoder with a [2, %d] classifier\n", path.c_str(), E);
    return false;
  }
  m->classifier_w = static_cast<const float*>(w.data);
  m->classifier_b = static_cast<const float*>(b.data);
  // The plan: one forward of up to max_positions tokens; its arena.
  s = attn::plan_transformer(m->config, dtype, m->config.max_positions, 0, &m->plan);
  if (s != attn::Status::kOk) return fail("plan_transformer", s);
  m->arena_buffer = aligned_bytes(m->plan.arena_bytes);
  if ((s = m->arena.init(m->arena_buffer.data(), m->plan.arena_bytes)) != attn::Status::kOk) {
    return fail("arena", s);
  }
  if (dtype == attn::DType::kF32) {  // optional: pack the weights once (x86 AVX2 kernels)
    size_t bytes = 0;
    s = attn::pack_transformer_weights_f32_storage_bytes(m->plan, &bytes);
    if (s == attn::Status::kOk && bytes > 0) {
      m->packed = aligned_bytes(bytes + ATTN_ARENA_ALIGN);
      void* p = m->packed.data();
      size_t space = bytes + ATTN_ARENA_ALIGN;
      p = std::align(ATTN_ARENA_ALIGN, bytes, p, space);
      s = attn::pack_transformer_weights_f32(m->plan, m->layers_f32.data(), p, bytes);
    }
    if (s != attn::Status::kOk) return fail("pack_transformer_weights_f32", s);
  }
  const size_t le = static_cast<size_t>(m->config.max_positions * E);
  m->hidden.resize(le);
  m->hidden_q.resize(le);
  return true;
}

// The whole encoder on one sequence, then the classifier on the [CLS] row:
// logits[2]. The integer models' row is int32 on output_scale. The firmware
// image computes the classifier with the same expression (and both are
// compiled without FMA contraction), so its predictions equal the host's.
attn::Status classify(Encoder& m, const std::vector<int32_t>& ids, float logits[2]) {
  const int32_t n = static_cast<int32_t>(ids.size()), E = m.config.embed_dim;
  const attn::OutputRows all = attn::OutputRows::kAll;
  float cls[ATTN_MAX_DIM];  // hidden[0]
  if (m.dtype == attn::DType::kF32) {
    ATTN_TRY(attn::transformer_forward_f32(m.plan, m.f32, ids.data(), n, all, m.hidden.data(), m.arena));
    std::copy(m.hidden.begin(), m.hidden.begin() + E, cls);
  } else {
    float scale = 0.0f;
    if (m.dtype == attn::DType::kS8) {
      ATTN_TRY(attn::transformer_forward_s8(m.plan, m.s8, ids.data(), n, all, m.hidden_q.data(), m.arena));
      scale = m.s8.output_scale;
    } else {
      ATTN_TRY(attn::transformer_forward_s16(m.plan, m.s16, ids.data(), n, all, m.hidden_q.data(), m.arena));
      scale = m.s16.output_scale;
    }
    for (int32_t e = 0; e < E; ++e) cls[e] = scale * static_cast<float>(m.hidden_q[static_cast<size_t>(e)]);
  }
  for (int c = 0; c < 2; ++c) {  // logits = classifier.weight cls + classifier.bias
    float acc = m.classifier_b[c];
    for (int32_t e = 0; e < E; ++e) acc += m.classifier_w[c * E + e] * cls[e];
    logits[c] = acc;
  }
  return attn::Status::kOk;
}

// -------------------------------------------------------------- evaluate ---

struct Result {
  std::vector<int> predictions;  // per example
  double accuracy = 0;           // percent
  double us_per_inference = 0;
};

bool evaluate(Encoder& m, const std::vector<Example>& set, int timing_passes, Result* r) {
  float logits[2];
  int correct = 0;
  for (const Example& e : set) {
    const attn::Status s = classify(m, e.ids, logits);
    if (s != attn::Status::kOk) return fail("classify", s);
    const int pred = logits[1] > logits[0] ? 1 : 0;
    r->predictions.push_back(pred);
    correct += pred == e.label;
  }
  r->accuracy = 100.0 * correct / static_cast<double>(set.size());
  r->us_per_inference =
      demo::best_us(timing_passes, set.size(), [&](size_t i) { (void)classify(m, set[i].ids, logits); });
  return true;
}

double agreement(const Result& a, const Result& b) {
  size_t same = 0;
  for (size_t i = 0; i < a.predictions.size(); ++i) same += a.predictions[i] == b.predictions[i];
  return 100.0 * static_cast<double>(same) / static_cast<double>(a.predictions.size());
}

// PyTorch's logits of the first test examples (two per line). Returns the
// largest |attn - torch|, or -1 when the file is missing or empty.
double check_logits(Encoder& m, const std::vector<Example>& set, const std::string& path) {
  std::ifstream f(path);
  double worst = -1;
  float want[2], got[2];
  for (size_t i = 0; i < set.size() && f >> want[0] >> want[1]; ++i) {
    if (classify(m, set[i].ids, got) != attn::Status::kOk) return 1e30;
    for (int c = 0; c < 2; ++c) worst = std::max(worst, static_cast<double>(std::fabs(got[c] - want[c])));
  }
  return worst;
}

// The held-out set and the host's s8 predictions as a header for the Cortex-M
// image, which embeds the s8 model file itself (`attn emit-c`).
bool emit_mcu(const std::string& path, const std::vector<Example>& set, const std::vector<int>& predictions) {
  std::ofstream f(path);
  const size_t L = set[0].ids.size();
  std::vector<uint8_t> ids, labels;
  for (const Example& e : set) {
    ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    labels.push_back(static_cast<uint8_t>(e.label));
  }
  f << "// Generated by attn_example_demo_encoder --emit-mcu: the held-out set and the host's s8\n"
       "// predictions, for the Cortex-M image port/cortex-m/demo/demo_encoder_s8.cpp.\n#pragma once\n"
       "#include <cstdint>\n\nnamespace demo_data {\n\n";
  f << "constexpr int kCount = " << set.size() << ", kSeq = " << L << ";\n";
  demo::emit_array(f, "uint8_t", "test_ids", ids.data(), ids.size());
  demo::emit_array(f, "uint8_t", "test_labels", labels.data(), labels.size());
  demo::emit_array(f, "int", "host_predictions", predictions.data(), predictions.size());
  f << "\n}  // namespace demo_data\n";
  return static_cast<bool>(f);
}

// ------------------------------------------------------------ heat maps ---
// The attention probabilities of every layer of the f32 model on one
// sequence: weights [layers, H, L, L]. The whole forward does not keep them,
// so each layer's block runs once more alone (forward_f32 with a weights
// output) on that layer's input: the forward of the first l layers
// (a config with num_layers = l) for l > 0, and for layer 0 the embeddings,
// computed here (picture only: the models above do not use this code).
bool attention_maps(Encoder& m, const std::vector<int32_t>& ids, std::vector<float>* weights) {
  const attn::TransformerConfig& c = m.config;
  const int32_t L = static_cast<int32_t>(ids.size()), E = c.embed_dim, H = c.num_heads;
  weights->assign(static_cast<size_t>(c.num_layers * H * L * L), 0.0f);
  std::vector<float> x(static_cast<size_t>(L * E)), y(x.size());
  for (int32_t i = 0; i < L; ++i) {  // layer 0's input: LayerNorm(token + position + type 0)
    float* row = &x[static_cast<size_t>(i * E)];
    double mean = 0, var = 0;
    for (int32_t e = 0; e < E; ++e) {
      row[e] = m.f32.token_embedding[ids[static_cast<size_t>(i)] * E + e] +
               m.f32.position_embedding[i * E + e] + (c.type_vocab_size > 0 ? m.f32.type_embedding[e] : 0.0f);
      mean += row[e];
    }
    mean /= E;
    for (int32_t e = 0; e < E; ++e) var += (row[e] - mean) * (row[e] - mean);
    const double inv = 1.0 / std::sqrt(var / E + static_cast<double>(c.norm_eps));
    for (int32_t e = 0; e < E; ++e) {
      row[e] = static_cast<float>((row[e] - mean) * inv * m.f32.embedding_norm.weight[e] +
                                  m.f32.embedding_norm.bias[e]);
    }
  }
  attn::Plan block_plan;
  attn::Status s = attn::plan_attention(c.attention(), attn::DType::kF32, L, L, &block_plan);
  if (s != attn::Status::kOk) return fail("plan_attention", s);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    attn::TransformerPlan first;  // the first l layers: layer l's input
    attn::TransformerConfig cl = c;
    cl.num_layers = l;
    if (l > 0) {
      s = attn::plan_transformer(cl, attn::DType::kF32, L, 0, &first);
      if (s == attn::Status::kOk && first.arena_bytes > m.arena.capacity()) s = attn::Status::kArenaTooSmall;
      if (s == attn::Status::kOk) {
        s = attn::transformer_forward_f32(first, m.f32, ids.data(), L, attn::OutputRows::kAll, x.data(),
                                          m.arena);
      }
      if (s != attn::Status::kOk) return fail("transformer_forward_f32", s);
    }
    const attn::IoF32 io{x.data(), x.data(), x.data(), y.data(),
                         &(*weights)[static_cast<size_t>(l * H * L * L)]};
    s = attn::forward_f32(block_plan, m.layers_f32[static_cast<size_t>(l)].attention, attn::Mask{}, io,
                          m.arena);
    if (s != attn::Status::kOk) return fail("forward_f32", s);
  }
  return true;
}

// A token as two terminal columns (CJK characters are wide).
std::string cell_label(const std::string& tok) { return tok == "[CLS]" ? "CL" : tok; }

// The [CLS] row (query 0) of every head, shaded; keys labelled below.
void print_cls_rows(const Encoder& m, const std::vector<float>& w, const Example& e,
                    const std::vector<std::string>& vocab) {
  static const char* const kShade[] = {"  ", "░░", "▒▒", "▓▓", "██"};
  const int L = static_cast<int>(e.ids.size()), H = m.config.num_heads;
  for (int l = 0; l < m.config.num_layers; ++l) {
    for (int h = 0; h < H; ++h) {
      const float* row = &w[static_cast<size_t>(((l * H + h) * L + 0) * L)];  // query 0 = [CLS]
      const float top = *std::max_element(row, row + L);
      std::printf("  layer %d head %d  ", l, h);
      for (int j = 0; j < L; ++j) {
        const int level = top > 0 ? static_cast<int>(std::lround(4.0f * row[j] / top)) : 0;
        std::printf("%s", kShade[level]);
      }
      std::printf("  max %.2f\n", static_cast<double>(top));
    }
  }
  std::printf("  %-16s", "key");
  for (int32_t id : e.ids) std::printf("%s", cell_label(vocab[static_cast<size_t>(id)]).c_str());
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

// Every head of every layer: a grid of query x key heat maps, labelled with the tokens.
bool write_svg(const std::string& path, const Encoder& m, const std::vector<float>& w, const Example& e,
               const std::vector<std::string>& vocab) {
  const int L = static_cast<int>(e.ids.size()), H = m.config.num_heads, layers = m.config.num_layers;
  const int cell = 12, margin = 44, gap = 30, panel = L * cell;
  const int width = margin + H * (panel + gap), height = margin + layers * (panel + gap + 16) + 10;
  std::ofstream f(path);
  if (!f) return false;
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
    << "' font-family='sans-serif' font-size='9'>\n<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='4' y='14' font-size='12'>attention weights (rows: query, columns: key) of one sequence "
       "with 佛跳墙 (colour: square root of the weight; C = [CLS])</text>\n";
  for (int l = 0; l < layers; ++l) {
    for (int h = 0; h < H; ++h) {
      const int x0 = margin + h * (panel + gap), y0 = margin + 16 + l * (panel + gap + 16);
      f << "<text x='" << x0 << "' y='" << y0 - 18 << "' font-size='11'>layer " << l << ", head " << h
        << "</text>\n";
      for (int i = 0; i < L; ++i) {
        const int id = e.ids[static_cast<size_t>(i)];
        const std::string label = i == 0 ? "C" : xml_escape(vocab[static_cast<size_t>(id)]);
        const char* colour = id >= 1 && id <= 3 ? " fill='red'" : "";  // 佛 跳 墙 in red
        f << "<text x='" << x0 - 3 << "' y='" << y0 + i * cell + 9 << "' text-anchor='end'" << colour << ">"
          << label << "</text>"
          << "<text x='" << x0 + i * cell + 6 << "' y='" << y0 - 3 << "' text-anchor='middle'" << colour
          << ">" << label << "</text>\n";
        for (int j = 0; j < L; ++j) {
          const float p = w[static_cast<size_t>(((l * H + h) * L + i) * L + j)];
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
  demo::Options opt;
  opt.data = ATTN_TEST_DATA_DIR;
  std::string svg_path;
  size_t limit = 0;
  double min_accuracy = 99.0, max_drop[demo::kModels] = {0.0, 0.3, 0.0, 1.0};  // percent; points below f32
  if (!demo::parse_options(argc, argv, &opt,
                           {{"--limit", &limit},
                            {"--svg", &svg_path},
                            {"--min-accuracy", &min_accuracy},
                            {"--max-drop-s8", &max_drop[1]},
                            {"--max-drop-s16", &max_drop[2]},
                            {"--max-drop-s4", &max_drop[3]}})) {
    std::fprintf(stderr,
                 "usage: %s --f32 F32.attn [--s8 S8.attn] [--s16 S16.attn] [--data DIR] [--limit N] "
                 "[--svg OUT.svg] [--emit-mcu OUT.h] [--timing-passes N] [--min-accuracy PERCENT] "
                 "[--max-drop-s8 POINTS] [--max-drop-s16 POINTS] [--max-drop-s4 POINTS]\n       %s "
                 "--write-calib OUT.npy [--data DIR]\n",
                 argv[0], argv[0]);
    return 2;
  }

  // Calibration ids for `attn quantize --calib-tokens`: [N, L] int32.
  if (!opt.calib_path.empty()) {
    const std::vector<Example> calib = read_examples(opt.data + "/demo/calib.txt");
    if (calib.empty()) {
      std::fprintf(stderr, "demo: no sequences in %s/demo/calib.txt\n", opt.data.c_str());
      return 2;
    }
    std::vector<int32_t> ids;
    for (const Example& e : calib) ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    const int64_t L = static_cast<int64_t>(calib[0].ids.size()), n = static_cast<int64_t>(calib.size());
    if (ids.size() != static_cast<size_t>(n * L) || !demo::write_ids_npy(opt.calib_path, ids, n, L)) {
      std::fprintf(stderr, "demo: cannot write %s (sequences of unequal length?)\n", opt.calib_path.c_str());
      return 2;
    }
    std::printf("wrote %s [%lld, %lld] int32\n", opt.calib_path.c_str(), static_cast<long long>(n),
                static_cast<long long>(L));
    return 0;
  }
  if (opt.paths[0].empty()) {
    std::fprintf(stderr, "demo: --f32 MODEL.attn is required (attn import of tests/data/demo_encoder)\n");
    return 2;
  }

  const std::vector<std::string> vocab = read_lines(opt.data + "/demo/vocab.txt");
  std::vector<Example> test = read_examples(opt.data + "/demo/test.txt");
  if (limit != 0 && test.size() > limit) test.resize(limit);
  static Encoder models[demo::kModels];  // f32, s8, s16, s4
  const char* const* names = demo::kModelNames;
  for (int k = 0; k < demo::kModels; ++k) {
    if (!opt.paths[k].empty() && !load(opt.paths[k], names[k], demo::kModelDtypes[k], &models[k])) return 2;
  }
  Encoder& f32 = models[0];
  const attn::TransformerConfig& c = f32.config;
  for (const Example& e : test) {
    const bool ok =
        static_cast<int32_t>(e.ids.size()) == c.max_positions &&
        std::all_of(e.ids.begin(), e.ids.end(), [&](int32_t id) { return id >= 0 && id < c.vocab_size; });
    if (!ok || static_cast<int32_t>(vocab.size()) != c.vocab_size) {
      std::fprintf(stderr, "demo: %s/demo does not match the model (vocab %d, length %d)\n", opt.data.c_str(),
                   c.vocab_size, c.max_positions);
      return 2;
    }
  }
  if (test.empty()) {
    std::fprintf(stderr, "demo: no examples in %s/demo/test.txt\n", opt.data.c_str());
    return 2;
  }

  // 1. The table.
  std::printf("佛跳墙 classifier, a BERT-style encoder (%d layers, E=%d, %d heads, FFN %d), whole in attn:\n",
              c.num_layers, c.embed_dim, c.num_heads, c.ffn_dim);
  std::printf("%zu held-out sequences of %d tokens\n\n", test.size(), c.max_positions);
  std::printf("  %-6s %9s %13s %14s %12s %12s\n", "model", "accuracy", "agree w/ f32", "us/inference",
              "arena bytes", "model bytes");
  bool ok = true;
  Result results[demo::kModels];
  for (int k = 0; k < demo::kModels; ++k) {
    Encoder& m = models[k];
    if (opt.paths[k].empty()) continue;
    Result& r = results[k];
    if (!evaluate(m, test, opt.timing_passes, &r)) return 2;
    char us[32] = "-";  // not timed with --timing-passes 0
    if (opt.timing_passes > 0) std::snprintf(us, sizeof us, "%.1f", r.us_per_inference);
    std::printf("  %-6s %8.2f%% %12.2f%% %14s %12zu %12zu\n", m.name, r.accuracy, agreement(results[0], r),
                us, m.plan.arena_bytes, m.blob.size);
  }
  std::printf("  (the whole model in attn; the only float code around it: the 2x%d classifier on [CLS])\n\n",
              c.embed_dim);
  const bool acc_ok = results[0].accuracy >= min_accuracy;
  std::printf("  f32 accuracy %.2f%% >= %.2f%%: %s\n", results[0].accuracy, min_accuracy,
              acc_ok ? "ok" : "FAIL");
  ok = ok && acc_ok;
  for (int k = 1; k < demo::kModels; ++k) {
    if (opt.paths[k].empty()) continue;
    const double delta = results[k].accuracy - results[0].accuracy;
    const bool within = delta >= -max_drop[k] - 1e-9;
    std::printf("  %s accuracy %+.2f points vs f32 (target: at most %.1f below): %s\n", names[k], delta,
                max_drop[k], within ? "ok" : "FAIL");
    ok = ok && within;
  }

  // 2. Same numbers as PyTorch?
  const double logit_err = check_logits(f32, test, opt.data + "/demo_encoder/logits.txt");
  if (logit_err < 0) {
    std::printf("  FAIL: no PyTorch logits (%s/demo_encoder/logits.txt) to check against\n",
                opt.data.c_str());
    ok = false;
  } else {
    const bool logits_ok = logit_err <= 1e-4;
    std::printf("  f32 logits vs PyTorch: max |diff| %.2e (%s)\n", logit_err, logits_ok ? "ok" : "FAIL");
    ok = ok && logits_ok;
  }

  if (!opt.mcu_path.empty()) {
    if (opt.paths[1].empty() || !emit_mcu(opt.mcu_path, test, results[1].predictions)) {
      std::fprintf(stderr, "demo: cannot write %s (needs --s8)\n", opt.mcu_path.c_str());
      return 2;
    }
  }

  // 3. What [CLS] looks at, on the first positive example.
  const auto pos = std::find_if(test.begin(), test.end(), [](const Example& e) { return e.label == 1; });
  if (pos != test.end()) {
    std::vector<float> weights;  // [layers, H, L, L]
    float logits[2];
    if (classify(f32, pos->ids, logits) != attn::Status::kOk || !attention_maps(f32, pos->ids, &weights))
      return 2;
    std::printf("\nattention of [CLS] on test sequence %ld (f32, logit yes - no = %+.2f):\n\n",
                static_cast<long>(pos - test.begin()), static_cast<double>(logits[1] - logits[0]));
    print_cls_rows(f32, weights, *pos, vocab);
    if (!svg_path.empty()) {
      if (!write_svg(svg_path, f32, weights, *pos, vocab)) {
        std::fprintf(stderr, "demo: cannot write %s\n", svg_path.c_str());
        return 2;
      }
      std::printf("\nwrote %s (every head of every layer, query x key)\n", svg_path.c_str());
    }
  }
  return ok ? 0 : 1;
}
