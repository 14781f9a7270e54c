// run_model.cpp: `attn run MODEL.attn --tokens IDS.npy|--text TEXT
// [--incremental [--prefill N]] -o Y.npy`, a whole model (format v3) on token
// ids, or on a text through the model's tokenizer (its special tokens added:
// [CLS] .. [SEP] for WordPiece, else BOS when it has one; one row [L]).
//
//   IDS  [B, L] or [L] int32 / int64, ids in [0, vocab), L <= max_positions
//   Y    [B, L, D] or [L, D] float32: D = E (no head: the last hidden state)
//        or vocab (the logits); s8/s16 models' int32 outputs times
//        weights.output_scale
//
// Each row is one sequence at positions 0..L-1. --incremental (causal models)
// runs each row through the KV-cache decode instead: the first N tokens
// (--prefill, default 0) in one call, then one token per call; Y holds the
// same numbers (bit for bit for s8/s16, within float rounding for f32).
#include <algorithm>
#include <cstdio>

#include "cli/cli.h"
#include "cli/model_exec.h"
#include "cli/npy.h"
#include "cli/text.h"
#include "cli/thread_pool.h"

namespace attn {
namespace cli {

int run_model(const Args& args, const std::string& path, const std::string& out) {
  for (const char* opt : {"--input", "--kv", "--value", "--key-length", "--block", "--window", "--causal",
                          "--raw", "--stats"}) {
    if (args.has(opt))
      throw Error(std::string(opt) + " is for block files: a whole model takes --tokens (and --incremental)");
  }
  if (args.has("--prefill") && !args.has("--incremental")) throw Error("--prefill needs --incremental");
  LoadedModel lm;
  load_model(path, &lm);
  if (!lm.model.is_model())
    throw Error(path +
                " holds attention blocks, not a whole model (kNotAModel): --tokens needs a model file; "
                "run blocks with --input X.npy");
  ThreadPool pool(threads_option(args));
  ModelExec exec(path, lm.model);
  exec.set_parallel(pool.parallel_for());
  const TransformerConfig& c = exec.config();
  if (args.has("--tokens") && args.has("--text"))
    throw Error("give --tokens IDS.npy or --text TEXT, not both");
  TokenIds t;
  if (args.has("--text")) {
    Text text;
    if (!text.from_model(lm.model))
      throw Error(path + " has no tokenizer for --text (import it with --tokenizer PATH); pass --tokens");
    t.ids = text.encode(args.get("--text"), true);
    t.rows = 1;
    t.len = static_cast<int64_t>(t.ids.size());
    if (t.len < 1 || t.len > c.max_positions)
      throw Error("--text: " + std::to_string(t.len) + " tokens, outside 1 .. max_positions " +
                  std::to_string(c.max_positions) + " (kSequenceTooLong)");
  } else {
    t = read_token_ids(args.get("--tokens"), c);
  }
  const bool incremental = args.has("--incremental");
  if (incremental && !c.causal)
    throw Error(path + " is a bidirectional encoder: --incremental needs a causal model (kNotCausal)");
  const int64_t L = t.len, B = t.rows, D = exec.output_dim();
  const int64_t prefill = args.get_int("--prefill", 0, 0, L);
  // Y [B, L, D] floats: D is the vocabulary (up to 2^24) with a head, so a
  // small ids file can ask for terabytes. Refused before anything runs.
  check_fits(out, float_bytes(static_cast<uint64_t>(B * L), static_cast<uint64_t>(D)),
             "the output (token rows x output_dim float32)");
  npy::BatchVector<float> y;
  npy::resize_huge(y, static_cast<size_t>(B * L * D));
  if (!incremental) {
    for (int64_t b = 0; b < B; ++b)
      exec.forward(t.ids.data() + b * L, static_cast<int32_t>(L), y.data() + b * L * D);
  } else {
    exec.start_decode(static_cast<int32_t>(std::max<int64_t>(prefill, 1)), static_cast<int32_t>(L), 0);
    for (int64_t b = 0; b < B; ++b) {
      exec.reset();
      const int32_t* row = t.ids.data() + b * L;
      for (int64_t i = 0; i < L;) {
        const int64_t n = i == 0 && prefill > 0 ? prefill : 1;
        const Status s =
            exec.decode(row + i, static_cast<int32_t>(n), OutputRows::kAll, y.data() + (b * L + i) * D);
        if (s != Status::kOk)
          throw Error(path + ": decode failed at row " + std::to_string(b) + ", position " +
                      std::to_string(i) + ": " + describe(s));
        i += n;
      }
    }
  }
  std::vector<int64_t> shape;
  if (t.batched) shape.push_back(B);
  shape.push_back(L);
  shape.push_back(D);
  const std::vector<uint8_t> head = npy::serialize(shape, "<f4", nullptr, 0);
  write_file_atomic(out, head.data(), head.size(), y.data(), y.size() * sizeof(float));
  return 0;
}

}  // namespace cli
}  // namespace attn
