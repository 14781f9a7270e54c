// cli_model_generate_test.cpp: `attn generate` and `attn perplexity` on
// whole model files the test writes. Greedy generation must pick the argmax
// of the logits `attn run` (f32) or the integer forward (s8) gives for the
// growing sequence; sampling must follow its seed; perplexity must equal the
// one the test computes from `attn run` logits over the documented windows.
#include "cli_runner.h"

#ifdef ATTN_CLI_PATH

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "int_model_helpers.h"

using namespace int_model;
using cli::parse_ids;
using cli::quote;

namespace {

std::vector<uint8_t> ids_npy(const std::vector<int64_t>& shape, const std::vector<int32_t>& ids) {
  return attn::npy::serialize(shape, "<i4", ids.data(), 4);
}

// A byte-level causal model (Llama-like) of `vocab` >= 256 ids.
std::vector<uint8_t> byte_model(int32_t vocab, uint32_t seed) {
  TransformerConfig c = llama(LmHead::kTied);
  c.vocab_size = vocab;
  tools::ModelSpec s;
  tools::add_transformer_f32(s, c, true, random_weights(c, seed));
  return tools::write_model(s);
}

std::string join(const std::vector<int32_t>& v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

template <class T>
int32_t argmax(const T* row, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  return best;
}

// `attn run` of one sequence: its logits [L, V] as floats.
std::vector<float> run_logits(cli::TempDir& tmp, const std::string& model, const std::vector<int32_t>& seq) {
  cli::spit(tmp / "seq.npy", ids_npy({int64_t(seq.size())}, seq));
  cli::run_ok(
      "run " + quote(tmp / model) + " --tokens " + quote(tmp / "seq.npy") + " -o " + quote(tmp / "l.npy"),
      tmp);
  return attn::npy::parse(cli::slurp(tmp / "l.npy")).f32;
}

std::string generate(const std::string& model, const std::string& more) {
  return "generate " + quote(model) + " " + more;
}

}  // namespace

TEST_CASE("attn generate: greedy is the argmax of attn run's logits of the growing sequence",
          "[cli][model_generate]") {
  cli::TempDir tmp;
  for (const LmHead head : {LmHead::kTied, LmHead::kUntied}) {
    const TransformerConfig c = llama(head);  // vocab 48, max_positions 16
    cli::spit(tmp / "m.attn", f32_file(c, 8));
    const std::vector<int32_t> prompt = {3, 17, 42};
    const int steps = 9;
    const cli::Result r = cli::run_ok(
        generate(tmp / "m.attn", "--prompt-tokens " + join(prompt) + " --steps " + std::to_string(steps)),
        tmp);
    const std::vector<int32_t> got = parse_ids(r.out);
    std::vector<int32_t> seq = prompt, want;
    for (int i = 0; i < steps; ++i) {
      const std::vector<float> l = run_logits(tmp, "m.attn", seq);
      const int32_t t = argmax(l.data() + (seq.size() - 1) * size_t(c.vocab_size), c.vocab_size);
      want.push_back(t);
      seq.push_back(t);
    }
    CHECK(got == want);
    // The prompt may fill max_positions - steps + 1 positions exactly: 16 positions for 3 + 14 tokens.
    const cli::Result full = cli::run_ok(generate(tmp / "m.attn", "--prompt-tokens 3,17,42 --steps 14"), tmp);
    CHECK(parse_ids(full.out).size() == 14);
    // Temperature with top-k 1 is greedy.
    const cli::Result k1 = cli::run_ok(
        generate(tmp / "m.attn", "--prompt-tokens 3,17,42 --steps 9 --temperature 0.8 --top-k 1 --seed 5"),
        tmp);
    CHECK(parse_ids(k1.out) == want);
  }
}

TEST_CASE("attn generate: s8 greedy is the integer forward's argmax, sampling follows the seed",
          "[cli][model_generate]") {
  cli::TempDir tmp;
  const TransformerConfig c = llama(LmHead::kUntied);
  const std::vector<uint8_t> f32 = f32_file(c, 9);
  const Blob fb(f32);
  attn::Model fm;
  REQUIRE(attn::Model::load(fb.p, fb.n, &fm) == Status::kOk);
  const InMemory<attn::TransformerWeightsS8> q =
      quantize<attn::TransformerWeightsS8>(fm, sequences(3, 16, c.vocab_size, 4));
  cli::spit(tmp / "q.attn", fixed_file(c, q.w));
  const std::vector<int32_t> prompt = {1, 2, 3, 4};
  const cli::Result r = cli::run_ok(
      generate(tmp / "q.attn", "--prompt-tokens " + quote(join(prompt, " ")) + " --steps 8"), tmp);
  std::vector<int32_t> seq = prompt, want;
  for (int i = 0; i < 8; ++i) {
    const std::vector<int32_t> l = run(c, q.w, seq);
    const int32_t t = argmax(l.data() + (seq.size() - 1) * size_t(c.vocab_size), c.vocab_size);
    want.push_back(t);
    seq.push_back(t);
  }
  CHECK(parse_ids(r.out) == want);
  // Sampling: the same seed gives the same tokens (s8 and f32), other seeds other tokens.
  cli::spit(tmp / "m.attn", f32);
  for (const char* m : {"q.attn", "m.attn"}) {
    INFO(m);
    const auto sampled = [&](int seed) {
      return cli::run_ok(
                 generate(tmp / m, "--prompt-tokens 1,2,3,4 --steps 10 --temperature 1.5 --top-k 20 --seed " +
                                       std::to_string(seed)),
                 tmp)
          .out;
    };
    const std::string a = sampled(7);
    CHECK(parse_ids(a).size() == 10);
    CHECK(sampled(7) == a);
    bool differs = false;
    for (int s = 8; s < 12 && !differs; ++s) differs = sampled(s) != a;
    CHECK(differs);
  }
}

TEST_CASE("attn generate: byte-level models print text, --window slides the cache", "[cli][model_generate]") {
  cli::TempDir tmp;
  cli::spit(tmp / "b.attn", byte_model(260, 12));
  const cli::Result ids =
      cli::run_ok(generate(tmp / "b.attn", "--prompt-tokens 104,105 --steps 6 --ids"), tmp);
  const std::vector<int32_t> t = parse_ids(ids.out);
  REQUIRE(t.size() == 6);
  std::string text;
  for (int32_t v : t) text += v < 256 ? std::string(1, char(v)) : "<" + std::to_string(v) + ">";
  const cli::Result r1 = cli::run_ok(generate(tmp / "b.attn", "--prompt-tokens 104,105 --steps 6"), tmp);
  CHECK(r1.out == text + "\n");
  const cli::Result r2 = cli::run_ok(generate(tmp / "b.attn", "--prompt hi --steps 6"), tmp);
  CHECK(r2.out == text + "\n");
  // A cache of 6 positions: 2 + 9 tokens need 10, so only with a window.
  const std::string small = "--prompt hi --steps 9 --capacity 6";
  cli::check_error(cli::run(generate(tmp / "b.attn", small), tmp),
                   {"10 cache positions", "holds 6", "--window"});
  const cli::Result w = cli::run_ok(generate(tmp / "b.attn", small + " --window 6 --ids"), tmp);
  CHECK(parse_ids(w.out).size() == 9);
}

TEST_CASE("attn generate: bad settings are named", "[cli][model_generate]") {
  cli::TempDir tmp;
  cli::spit(tmp / "m.attn", f32_file(llama(LmHead::kTied), 2));  // vocab 48, max_positions 16
  cli::spit(tmp / "bert.attn", f32_file(bert(), 2));
  cli::spit(tmp / "none.attn", f32_file(llama(LmHead::kNone), 2));
  const auto fails = [&](const std::string& model, const std::string& more,
                         const std::vector<std::string>& parts) {
    INFO(more);
    cli::check_error(cli::run(generate(tmp / model, more), tmp), parts);
  };
  fails("bert.attn", "--prompt-tokens 1 --steps 2", {"bert.attn", "kNotCausal"});
  fails("none.attn", "--prompt-tokens 1 --steps 2", {"none.attn", "no LM head"});
  fails("m.attn", "--prompt-tokens 1,48 --steps 2", {"token id 48", "position 1", "[0, 48)"});
  fails("m.attn", "--prompt-tokens 1,x --steps 2", {"'x' is not an integer"});
  fails("m.attn", "--prompt-tokens " + join(std::vector<int32_t>(17, 1)) + " --steps 1",
        {"17 tokens", "max_positions is 16"});
  fails("m.attn", "--prompt-tokens 1,2,3 --steps 15",
        {"17 positions", "max_positions 16", "at most 14 steps"});
  fails("m.attn", "--prompt-tokens 1,2,3 --steps 2 --capacity 2", {"3 tokens", "holds 2 positions"});
  fails("m.attn", "--prompt-tokens 1,2,3 --steps 2 --capacity 17",
        {"--capacity 17", "max_positions 16", "kCapacityPastPositions", "at most 16"});
  fails("m.attn", "--prompt-tokens 1 --steps 2 --temperature -1", {"--temperature", "kBadSampler"});
  fails("m.attn", "--prompt-tokens 1 --steps 2 --temperature nan", {"--temperature", "kBadSampler"});
  fails("m.attn", "--prompt-tokens 1 --steps 2 --temperature 1 --top-k 49", {"--top-k", "[0, 48]"});
  fails("m.attn", "--prompt abc --steps 2", {"--prompt TEXT needs a tokenizer"});
  // Greedy decoding has no draw to shape: --top-k and --seed alone would do nothing.
  fails("m.attn", "--prompt-tokens 1 --steps 2 --top-k 3", {"--top-k needs --temperature"});
  fails("m.attn", "--prompt-tokens 1 --steps 2 --seed 9", {"--seed needs --temperature"});
  fails("m.attn", "--steps 2", {"--prompt-tokens"});
  fails("m.attn", "--prompt-tokens 1", {"--steps"});
  fails("m.attn", "--prompt-tokens 1 --steps 2 --window 17", {"--window", "[1, 16]"});
}

TEST_CASE("attn perplexity: windows overlapping by one token, against attn run's logits",
          "[cli][model_perplexity]") {
  cli::TempDir tmp;
  cli::spit(tmp / "b.attn", byte_model(256, 3));                           // max_positions 16
  const std::string text = "the quick brown fox jumps over the lazy dog";  // 43 bytes
  cli::spit(tmp / "t.txt", text);
  const std::vector<int32_t> ids(text.begin(), text.end());
  const int64_t T = int64_t(ids.size());
  // The documented windows: [s, s + N) with s advancing by N - 1.
  const auto expected = [&](int64_t N) {
    double nll = 0;
    int64_t count = 0;
    for (int64_t s = 0; s + 1 < T; s += N - 1) {
      const int64_t n = std::min(N, T - s);
      const std::vector<int32_t> w(ids.begin() + s, ids.begin() + s + n);
      const std::vector<float> l = run_logits(tmp, "b.attn", w);
      for (int64_t j = 0; j + 1 < n; ++j) {
        const float* row = l.data() + j * 256;
        double m = -1e300, sum = 0;
        for (int v = 0; v < 256; ++v) m = std::max(m, double(row[v]));
        for (int v = 0; v < 256; ++v) sum += std::exp(double(row[v]) - m);
        nll += m + std::log(sum) - double(row[w[size_t(j + 1)]]);
        ++count;
      }
    }
    CHECK(count == T - 1);
    return std::exp(nll / double(count));
  };
  const auto perplexity = [&](const std::string& more) {
    const cli::Result r = cli::run_ok("perplexity " + quote(tmp / "b.attn") + " " + more, tmp);
    double p = 0;
    long long n = 0;
    REQUIRE(std::sscanf(r.out.c_str(), "perplexity=%lf tokens=%lld", &p, &n) == 2);
    CHECK(n == T - 1);
    return p;
  };
  for (const int64_t N : {16, 8, 2}) {
    INFO("context " << N);
    const double want = expected(N);
    const std::string ctx = N == 16 ? "" : " --context " + std::to_string(N);
    CHECK(std::fabs(perplexity("--text " + quote(tmp / "t.txt") + ctx) - want) <= 1e-5 * want);
    cli::spit(tmp / "ids.npy", ids_npy({T}, ids));
    CHECK(std::fabs(perplexity("--tokens " + quote(tmp / "ids.npy") + ctx) - want) <= 1e-5 * want);
  }
  // [B, L]: B separate sequences, their predictions pooled.
  std::vector<int32_t> two(ids.begin(), ids.begin() + 20);
  two.insert(two.end(), ids.begin() + 20, ids.begin() + 40);
  cli::spit(tmp / "two.npy", ids_npy({2, 20}, two));
  const cli::Result r2 =
      cli::run_ok("perplexity " + quote(tmp / "b.attn") + " --tokens " + quote(tmp / "two.npy"), tmp);
  CHECK(r2.out.find("tokens=38") != std::string::npos);
  // Errors.
  cli::spit(tmp / "one.txt", std::string("x"));
  cli::check_error(cli::run("perplexity " + quote(tmp / "b.attn") + " --text " + quote(tmp / "one.txt"), tmp),
                   {"one.txt", "1 token(s)", "at least 2"});
  cli::check_error(
      cli::run("perplexity " + quote(tmp / "b.attn") + " --text " + quote(tmp / "t.txt") + " --context 1",
               tmp),
      {"--context", "[2, 16]"});
  cli::spit(tmp / "m.attn", f32_file(llama(LmHead::kTied), 2));
  cli::check_error(cli::run("perplexity " + quote(tmp / "m.attn") + " --text " + quote(tmp / "t.txt"), tmp),
                   {"m.attn", "byte-level vocabulary"});
  cli::spit(tmp / "bert.attn", f32_file(bert(), 2));
  cli::check_error(
      cli::run("perplexity " + quote(tmp / "bert.attn") + " --tokens " + quote(tmp / "ids.npy"), tmp),
      {"bert.attn", "kNotCausal"});
}

TEST_CASE("attn perplexity: a model whose logits are NaN fails, as generate does",
          "[cli][model_perplexity]") {
  cli::TempDir tmp;
  // An untied head with one NaN weight: every row's logit of token 5 is NaN
  // (generate still has 47 drawable logits); NaN embeddings: every logit NaN.
  TransformerConfig c = llama(LmHead::kUntied);
  tools::TransformerTensorsF32 w = random_weights(c, 4);
  for (int32_t e = 0; e < c.embed_dim; ++e) w.lm_head[size_t(5 * c.embed_dim + e)] = NAN;
  tools::ModelSpec one;
  tools::add_transformer_f32(one, c, false, w);
  cli::spit(tmp / "one.attn", tools::write_model(one));
  w = random_weights(c, 4);
  for (float& x : w.token_embedding) x = NAN;
  tools::ModelSpec all;
  tools::add_transformer_f32(all, c, false, w);
  cli::spit(tmp / "all.attn", tools::write_model(all));
  cli::spit(tmp / "ids.npy", ids_npy({4}, {1, 2, 3, 4}));
  cli::check_error(cli::run(generate(tmp / "all.attn", "--prompt-tokens 1,2 --steps 2"), tmp),
                   {"all.attn", "sampling failed"});
  for (const char* m : {"one.attn", "all.attn"}) {
    INFO(m);
    cli::check_error(cli::run("perplexity " + quote(tmp / m) + " --tokens " + quote(tmp / "ids.npy"), tmp),
                     {m, "position 0", "not finite", "nan"});
  }
}
#endif  // ATTN_CLI_PATH
