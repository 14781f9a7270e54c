// cmd_perplexity.cpp: `attn perplexity MODEL.attn (--text FILE | --tokens IDS.npy) [--context N]`
//
// The perplexity of a causal model with an LM head on a text (its bytes are
// the tokens: byte-level vocabularies) or on token ids (int32/int64 [L], or
// [B, L]: B separate sequences). Each sequence runs in windows of up to N
// tokens (--context, default max_positions) that overlap by one token:
// window k starts on the last token of window k-1, so every token but the
// first is predicted exactly once, from the tokens before it in its window
// (up to N-1 of them; the context restarts at each window). Prints
//   perplexity=X tokens=T
// X = exp(mean over the T predicted tokens of -log softmax(logits)[token]),
// natural log, computed in double from the float logits (s8/s16: the int32
// logits times output_scale). A NaN or infinite logit is an error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/model_exec.h"
#include "cli/text.h"
#include "cli/thread_pool.h"

namespace attn {

int cmd_perplexity(int argc, char** argv) {
  const cli::Args args(argc, argv, {"--text", "--tokens", "--context", "--threads"}, {});
  const std::string path = args.one_input("MODEL.attn");
  if (args.has("--text") == args.has("--tokens"))
    throw cli::Error("give the text as --text FILE (byte-level vocabularies) or --tokens IDS.npy");
  cli::LoadedModel lm;
  cli::load_model(path, &lm);
  if (!lm.model.is_model())
    throw cli::Error(
        path + " holds attention blocks, not a whole model (kNotAModel): perplexity needs a model file");
  cli::ThreadPool pool(cli::threads_option(args));
  cli::ModelExec exec(path, lm.model);
  exec.set_parallel(pool.parallel_for());
  const TransformerConfig& c = exec.config();
  if (!c.causal)
    throw cli::Error(path + " is a bidirectional encoder: perplexity needs a causal model (kNotCausal)");
  if (c.head == LmHead::kNone)
    throw cli::Error(path + " has no LM head (its output is the hidden state): there are no logits");
  const int64_t context = args.get_int("--context", c.max_positions, 2, c.max_positions);

  std::vector<int32_t> ids;
  int64_t rows = 1, len = 0;
  cli::Text tokenizer;
  if (args.has("--text") && !lm.model.byte_vocab() && tokenizer.from_model(lm.model)) {
    // The whole file as one text, BOS first when the tokenizer has one.
    const std::vector<uint8_t> text = cli::read_file(args.get("--text"));
    ids = tokenizer.encode(std::string(text.begin(), text.end()), true);
    len = static_cast<int64_t>(ids.size());
  } else if (args.has("--text")) {
    if (!lm.model.byte_vocab())
      throw cli::Error(path +
                       ": --text needs a tokenizer (import with --tokenizer PATH) or a byte-level vocabulary "
                       "(--byte-vocab); pass --tokens");
    const std::vector<uint8_t> text = cli::read_file(args.get("--text"));
    ids.assign(text.begin(), text.end());
    len = static_cast<int64_t>(ids.size());
  } else {
    cli::TokenIds t = cli::read_token_ids(args.get("--tokens"), c, /*any_length=*/true);
    ids = std::move(t.ids);
    rows = t.rows;
    len = t.len;
  }
  if (len < 2)
    throw cli::Error((args.has("--text") ? args.get("--text") : args.get("--tokens")) + ": " +
                     std::to_string(len) + " token(s): perplexity needs at least 2 (one to predict)");

  const int64_t V = c.vocab_size;
  // The logits of one window [min(context, len), V]: up to 2^16 x 2^24 floats.
  cli::check_fits(path,
                  cli::float_bytes(static_cast<uint64_t>(std::min(context, len)), static_cast<uint64_t>(V)),
                  "the logits of one window (--context rows x vocab_size float32; lower --context)");
  std::vector<float> logits(static_cast<size_t>(std::min(context, len) * V));
  double nll = 0.0;
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* seq = ids.data() + r * len;
    for (int64_t s = 0; s + 1 < len; s += context - 1) {
      const int64_t n = std::min(context, len - s);
      exec.forward(seq + s, static_cast<int32_t>(n), logits.data());
      for (int64_t j = 0; j + 1 < n; ++j) {
        const float* row = logits.data() + j * V;
        // A NaN or infinite logit has no softmax: fail, as generate does.
        for (int64_t v = 0; v < V; ++v) {
          if (!std::isfinite(row[v]))
            throw cli::Error(path + ": the logits of sequence " + std::to_string(r) + " at position " +
                             std::to_string(s + j) + " are not finite (token " + std::to_string(v) + ": " +
                             (std::isnan(row[v]) ? "nan" : "inf") + "): there is no perplexity");
        }
        double m = -INFINITY;
        for (int64_t v = 0; v < V; ++v) m = std::max(m, static_cast<double>(row[v]));
        double sum = 0.0;
        for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - m);
        nll += m + std::log(sum) - static_cast<double>(row[seq[s + j + 1]]);
        ++count;
      }
    }
  }
  std::printf("perplexity=%.6f tokens=%lld\n", std::exp(nll / static_cast<double>(count)),
              static_cast<long long>(count));
  return 0;
}

}  // namespace attn
