// cmd_generate.cpp: `attn generate MODEL.attn (--prompt-tokens 1,2,3 | --prompt TEXT)
// --steps N [--temperature T [--top-k K] [--seed S]] [--capacity C] [--window W] [--ids]`
//
// A causal model with an LM head continues the prompt by N tokens: the prompt
// goes through the KV-cache decode in one call (prefill), then each new token
// in one call of its own; each next token is attn::sample (f32 logits) or
// attn::sample_s32 (the int32 logits of s8/s16 models: greedy reads only the
// integers) of the last row. Greedy unless --temperature; --seed seeds the
// generator (default 0), so the same seed gives the same tokens. --top-k and
// --seed without --temperature are errors: greedy decoding would ignore them.
//
// Prints the N generated tokens on one line: their ids, space-separated, or,
// for a byte-level vocabulary (ids 0..255 are bytes), the text (ids above 255
// as <ID>; on a terminal, control bytes but newline and tab as \xNN); --ids
// prints ids either way. --prompt TEXT gives the prompt as bytes.
//
// A model with a tokenizer section (attn import --tokenizer) takes --prompt
// TEXT as BOS (when the tokenizer has one) then the text's tokens, and prints
// text as llama2.c's run.c does: the prompt, then each new token's text as
// it comes; a generated EOS or BOS ends the text early. --ids prints the
// generated ids instead (all N).
//
// The cache holds --capacity positions (default max_positions). Without
// --window the prompt and every generated token but the last must fit it;
// --window W keeps only the last W positions (sliding-window attention).
// Positions never pass max_positions. Both limits are checked before anything
// runs.
//
// ATTN_RUN_TIMES=1 prints the process's CPU ms per phase to stderr: start,
// load (map and validate the file), setup (weights, tokenizer, prompt, plan,
// cache), first token (the prefill and its sample), next tokens, total.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attn/sampler.h"
#include "cli/cli.h"
#include "cli/model_exec.h"
#include "cli/text.h"
#include "cli/thread_pool.h"

namespace attn {
namespace {

// On a terminal, control bytes other than newline and tab are written as
// \xNN (a model's bytes must not drive the terminal); piped, the text is raw.
std::string for_output(const std::string& s, bool tty) {
  if (!tty) return s;
  std::string out;
  for (char ch : s) {
    const unsigned b = static_cast<unsigned char>(ch);
    if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7F) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", b);
      out += esc;
    } else {
      out += ch;
    }
  }
  return out;
}

float parse_temperature(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const double t = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(t) || t < 0 ||
      !std::isfinite(static_cast<float>(t)))
    throw cli::Error("--temperature: '" + cli::printable(s) + "' is not a finite number >= 0 (kBadSampler)");
  return static_cast<float>(t);
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  const cli::Args args(argc, argv,
                       {"--prompt-tokens", "--prompt", "--steps", "--temperature", "--top-k", "--seed",
                        "--capacity", "--window", "--threads"},
                       {"--ids"});
  cli::PhaseTimes times("generate");
  const std::string path = args.one_input("MODEL.attn");
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  times.done("load");
  if (!lm.model.is_model())
    throw cli::Error(path +
                     " holds attention blocks, not a whole model (kNotAModel): generate needs a model file");
  cli::ThreadPool pool(cli::threads_option(args));
  cli::ModelExec exec(path, lm.model);
  exec.set_parallel(pool.parallel_for());
  const TransformerConfig& c = exec.config();
  if (!c.causal)
    throw cli::Error(path + " is a bidirectional encoder: generate needs a causal model (kNotCausal)");
  if (c.head == LmHead::kNone)
    throw cli::Error(path +
                     " has no LM head (its output is the hidden state): there are no logits to sample");
  const bool bytes = lm.model.byte_vocab();
  cli::Text text;
  const bool tokenizer = !bytes && text.from_model(lm.model);

  // The prompt.
  if (args.has("--prompt") == args.has("--prompt-tokens"))
    throw cli::Error("give the prompt as --prompt-tokens 1,2,3 or --prompt TEXT");
  std::vector<int32_t> prompt;
  if (args.has("--prompt") && tokenizer) {
    prompt = text.encode(args.get("--prompt"), true);
  } else if (args.has("--prompt")) {
    if (!bytes)
      throw cli::Error(path +
                       ": --prompt TEXT needs a tokenizer (import with --tokenizer PATH) or a byte-level "
                       "vocabulary (--byte-vocab); pass --prompt-tokens");
    for (char ch : args.get("--prompt")) prompt.push_back(static_cast<unsigned char>(ch));
  } else {
    prompt = cli::parse_id_list(args.get("--prompt-tokens"), "--prompt-tokens", c.vocab_size);
  }
  if (prompt.empty()) throw cli::Error("the prompt is empty: give at least one token");
  const long long steps = args.get_int("--steps", -1, 0, ATTN_MAX_SEQ);
  if (steps < 0) throw cli::Error("missing --steps N (tokens to generate)");

  // The sampler.
  Sampler sampler;
  // --top-k and --seed shape a draw; greedy decoding has none to shape.
  for (const char* flag : {"--top-k", "--seed"}) {
    if (args.has(flag) && !args.has("--temperature"))
      throw cli::Error(std::string(flag) + " needs --temperature T: without it decoding is greedy and " +
                       flag + " would do nothing");
  }
  if (args.has("--temperature")) sampler.temperature = parse_temperature(args.get("--temperature"));
  sampler.top_k = static_cast<int32_t>(args.get_int("--top-k", 0, 0, c.vocab_size));
  const long long seed = args.get_int("--seed", 0, 0, 0x7FFFFFFFFFFFFFFFll);
  Rng rng;
  (void)rng_seed(static_cast<uint64_t>(seed), &rng);

  // The cache.
  const long long P = static_cast<long long>(prompt.size());
  const int32_t capacity = static_cast<int32_t>(args.get_int("--capacity", c.max_positions, 1, ATTN_MAX_SEQ));
  const int32_t window = static_cast<int32_t>(args.get_int("--window", 0, 1, capacity));
  const long long positions = P + (steps > 0 ? steps - 1 : 0);  // tokens fed through the model
  cli::check_capacity(c, capacity);
  if (P > c.max_positions)
    throw cli::Error("the prompt has " + std::to_string(P) + " tokens, but the model's max_positions is " +
                     std::to_string(c.max_positions) + " (kSequenceTooLong)");
  if (P > capacity)
    throw cli::Error("the prompt has " + std::to_string(P) + " tokens, but the cache holds " +
                     std::to_string(capacity) + " positions (--capacity)");
  if (positions > c.max_positions)
    throw cli::Error("the prompt (" + std::to_string(P) + " tokens) and " + std::to_string(steps) +
                     " steps need " + std::to_string(positions) +
                     " positions, past the model's max_positions " + std::to_string(c.max_positions) +
                     " (kSequenceTooLong): ask for at most " + std::to_string(c.max_positions - P + 1) +
                     " steps");
  if (window == 0 && positions > capacity)
    throw cli::Error("the prompt (" + std::to_string(P) + " tokens) and " + std::to_string(steps) +
                     " steps need " + std::to_string(positions) + " cache positions, but the cache holds " +
                     std::to_string(capacity) + " (kCacheFull): raise --capacity, or slide with --window W");
  exec.start_decode(static_cast<int32_t>(P), capacity, window);
  times.done("setup");

  const int32_t V = c.vocab_size;
  std::vector<float> logits(static_cast<size_t>(V));
  std::vector<int32_t> raw(static_cast<size_t>(V));
  const bool integer = exec.dtype() != DType::kF32;
  std::vector<int32_t> out;
  int32_t next = 0;
  // Text out: the prompt (after its BOS), then each token as it comes.
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  const bool stream = tokenizer && !args.has("--ids");
  TokenizerDecodeState state{};
  if (stream) {
    std::string head;
    for (int32_t id : prompt) head += text.decode_one(id, &state);
    head = for_output(head, tty);
    std::fwrite(head.data(), 1, head.size(), stdout);
    std::fflush(stdout);
  }
  for (long long i = 0; i < steps; ++i) {
    const int32_t* feed = i == 0 ? prompt.data() : &next;
    const int32_t n = i == 0 ? static_cast<int32_t>(P) : 1;
    Status s = exec.decode(feed, n, OutputRows::kLast, logits.data(), integer ? raw.data() : nullptr);
    if (s != Status::kOk)
      throw cli::Error(path + ": decode failed at position " + std::to_string(exec.length()) + ": " +
                       cli::describe(s));
    s = integer ? sample_s32(raw.data(), V, exec.output_scale(), sampler, &rng, &next)
                : sample(logits.data(), V, sampler, &rng, &next);
    if (s != Status::kOk)
      throw cli::Error(path + ": sampling failed at step " + std::to_string(i) + ": " + cli::describe(s));
    out.push_back(next);
    if (stream) {
      if (text.ends_text(next)) break;
      const std::string piece = for_output(text.decode_one(next, &state), tty);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    if (i == 0) times.done("first token");
  }
  if (steps > 1) times.done("next tokens");
  if (stream) {
    const std::string tail = for_output(text.decode_flush(&state), tty) + "\n";
    std::fwrite(tail.data(), 1, tail.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }

  std::string line;
  for (size_t i = 0; i < out.size(); ++i) {
    if (bytes && !args.has("--ids")) {
      const int32_t b = out[i];
      if (tty && b < 256 && ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7F)) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned>(b));
        line += esc;
      } else if (b < 256) {
        line += static_cast<char>(b);
      } else {
        line += "<" + std::to_string(out[i]) + ">";
      }
    } else {
      line += (i ? " " : "") + std::to_string(out[i]);
    }
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attn
