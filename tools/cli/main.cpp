// main.cpp: the `attn` tools binary. Each subcommand lives in its own
// cmd_<name>.cpp; to add one, declare it in cli.h and add a row below.
#include <cstdio>
#include <cstring>
#include <exception>

#include "cli/cli.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* usage;  // one line, every option
  const char* help;   // `attn NAME --help`: one line per option; nullptr: the command prints its own
};

const Command kCommands[] = {
    {"import", attn::cmd_import,
     "import MODEL.safetensors --heads H|PREFIX=H... [--kv-heads G] [--rope-base B] [--prefix P] "
     "[--extra NAME=KEY]... "
     "-o|--output OUT.attn | import MODEL.safetensors --config config.json [--tokenizer PATH | "
     "--no-tokenizer | --byte-vocab] -o|--output OUT.attn | "
     "import MODEL.bin [--tokenizer PATH | --byte-vocab] -o|--output OUT.attn",
     "  --heads H          attention heads of every block (safetensors files do not record them);\n"
     "                     --heads PREFIX=H: of the block under PREFIX (wins over H); repeatable\n"
     "  --kv-heads G       Llama blocks: check the K/V heads (grouped-query attention) are G\n"
     "  --rope-base B      Llama blocks: rotary embedding base (default 10000; 0: none)\n"
     "  --prefix P         only the attention blocks under tensor-name prefix P\n"
     "  --extra NAME=KEY   also store tensor KEY as user tensor NAME (embeddings, heads); repeatable\n"
     "  --config FILE      a whole Hugging Face model with its config.json: BertModel, RobertaModel,\n"
     "                     DistilBertModel, LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,\n"
     "                     GPT2Model, GPT2LMHeadModel (and their ...For... heads as user tensors),\n"
     "                     or \"model_type\": \"attn\": any f32 model (TransformerConfig's fields) or\n"
     "                     blocks (\"blocks\": heads, K/V heads, RoPE base of each), tensors named as in\n"
     "                     the .attn file (include/attn/FORMAT.md, \"The attn layout\");\n"
     "                     without it a .bin file is a whole llama2.c checkpoint\n"
     "  --byte-vocab       whole models: token ids 0..255 are the bytes 0..255 (text in and out);\n"
     "                     the file carries that tokenizer (256 byte pieces, no special tokens)\n"
     "  --tokenizer PATH   whole models: store this tokenizer in the file (text in and out):\n"
     "                     tokenizer.json, tokenizer.model, a llama2.c tokenizer.bin, vocab.json\n"
     "                     (merges.txt beside it), vocab.txt; with --config, one of these beside\n"
     "                     config.json is taken when --tokenizer is not given (the import says so)\n"
     "  --no-tokenizer     do not take the tokenizer beside config.json\n"
     "  -o, --output FILE  the .attn file to write\n"},
    {"tokenize", attn::cmd_tokenize,
     "tokenize MODEL.attn|TOKENIZER (--text TEXT | --file F | --decode IDS) [--special]",
     "  MODEL.attn         a model with a tokenizer section (attn import --tokenizer), or a tokenizer\n"
     "                     file: tokenizer.json, tokenizer.model, a llama2.c tokenizer.bin,\n"
     "                     vocab.json (merges.txt beside it), vocab.txt\n"
     "  --text TEXT        print the ids of TEXT, space-separated\n"
     "  --file F           one line of ids per line of F (each line without its newline)\n"
     "  --decode IDS       print the text of the ids (\"1,2,3\" or \"1 2 3\")\n"
     "  --special          add the special tokens: [CLS] .. [SEP] (WordPiece), else BOS if any\n"},
    {"info", attn::cmd_info,
     "info FILE.attn [--L N [--S N]] [--target T --tokens-per-call N [--capacity C]] | info --roles",
     "  --L N              also print the arena bytes of one forward with N query rows\n"
     "  --S N              ... and N keys (default: --L)\n"
     "  --target T         a whole model's C handle buffers on target T (host, cortex-m3, cortex-m4,\n"
     "                     cortex-m7, cortex-m55, cortex-a-32, cortex-a-64): what attn emit-c writes there\n"
     "  --tokens-per-call N  ... for calls of up to N tokens\n"
     "  --capacity C       ... and KV caches of C positions (default 0)\n"
     "  --roles            print the format's tensor roles instead, one per line: value, name, scope\n"
     "                     (block, layer, model, user), dtypes of the blocks / models that hold it,\n"
     "                     C++ and C names (the table tools in other languages read)\n"
     "  (model files also print the model and its arena bytes: a forward of max_positions tokens and,\n"
     "  for decoders, the KV-cache state of max_positions positions + the arena of one call)\n"},
    {"run", attn::cmd_run,
     "run FILE.attn --input X.npy [--kv KV.npy] [--value V.npy] [--causal [--window W] [--incremental "
     "[--prefill N]]] [--key-length N] [--block I] [--raw] [--stats] -o|--output Y.npy\n"
     "  attn run MODEL.attn --tokens IDS.npy|--text TEXT [--incremental [--prefill N]] [--threads N] "
     "-o|--output Y.npy",
     "  --tokens IDS.npy   whole models: token ids, int32/int64 [B, L] or [L]; Y is float32 [B, L, D]\n"
     "  --text TEXT        whole models with a tokenizer: TEXT's ids with its special tokens ([CLS] ..\n"
     "                     [SEP] for WordPiece, else BOS when it has one), one row: Y is [L, D]\n"
     "                     (D = E without a head, else vocab: the logits; s8/s16: int32 * output_scale).\n"
     "                     --incremental (causal models) runs each row through the KV-cache decode\n"
     "  --input X.npy      query input [L, E] or [B, L, E] float32 (int8/int16 with --raw)\n"
     "  --kv KV.npy        key input of cross-attention [S, kdim] (and value input unless --value)\n"
     "  --value V.npy      value input of cross-attention [S, vdim]\n"
     "  --causal           mask key j > query i\n"
     "  --window W         with --causal: each query sees the last W positions, itself included\n"
     "  --incremental      with --causal: decode through a KV cache per block, one row at a time\n"
     "  --prefill N        with --incremental: the first N rows in one call (default 0)\n"
     "  --key-length N     ignore keys at index >= N (key padding)\n"
     "  --threads N        threads the products are split over (default: the core count; 1: none); Y does\n"
     "                     not depend on it\n"
     "  --block I          run block I only (default: every block, each on the previous one's output)\n"
     "  --raw              inputs and output are the integers of a quantized model: int8 ('|i1', s8) or\n"
     "                     int16 ('<i2', s16) in the first block's input / last block's output quantization\n"
     "  --stats            print, per s8/s16 block, the values at the integer limits after each stage\n"
     "                     (a build with -DATTN_SATURATION_COUNTERS=ON; not with --incremental)\n"
     "  -o, --output FILE  the output .npy\n"},
    {"generate", attn::cmd_generate,
     "generate MODEL.attn --prompt-tokens 1,2,3|--prompt TEXT --steps N [--temperature T [--top-k K] [--seed "
     "S]] [--capacity C] [--window W] [--ids] [--threads N]",
     "  --prompt-tokens L  the prompt's token ids, comma- (or space-) separated\n"
     "  --prompt TEXT      the prompt as text: with the model's tokenizer (BOS first when it has one;\n"
     "                     the text printed is the prompt's and then the new tokens', as llama2.c's\n"
     "                     run.c prints it, ending early at a generated EOS or BOS), or, for a\n"
     "                     byte-level vocabulary, as bytes\n"
     "  --steps N          tokens to generate (the prompt is one prefill call, then one call per token)\n"
     "  --temperature T    sample from softmax(logits / T) (default 0: greedy, the lowest id on ties)\n"
     "  --top-k K          with --temperature: only the K largest logits (default 0: all)\n"
     "  --seed S           the sampler's random generator (default 0): the same seed, the same tokens\n"
     "  --capacity C       KV-cache positions (default max_positions); without --window the prompt and\n"
     "                     the generated tokens but the last must fit\n"
     "  --window W         keep only the last W positions in the cache (sliding-window attention)\n"
     "  --ids              print token ids even for a byte-level vocabulary (default there: the text)\n"
     "  --threads N        threads the model's products are split over (default: the core count; 1: none);\n"
     "                     the tokens do not depend on it\n"
     "  prints the N generated tokens on one line: ids, space-separated, or the text\n"},
    {"perplexity", attn::cmd_perplexity,
     "perplexity MODEL.attn --text FILE|--tokens IDS.npy [--context N] [--threads N]",
     "  --text FILE        the file's text through the model's tokenizer (BOS first when it has one),\n"
     "                     or, for a byte-level vocabulary, the file's bytes as the tokens\n"
     "  --tokens IDS.npy   token ids, int32/int64 [L] (or [B, L]: B separate sequences)\n"
     "  --context N        tokens per window (2..max_positions, default max_positions). Windows overlap\n"
     "                     by one token: each starts on the previous one's last token, so every token\n"
     "                     but the first is predicted once, with the context restarting per window\n"
     "  --threads N        threads the model's products are split over (default: the core count; 1: none);\n"
     "                     the result does not depend on it\n"
     "  prints perplexity=X tokens=T: exp of the mean natural-log cross-entropy of the T predicted tokens\n"},
    {"emit-c", attn::cmd_emit_c,
     "emit-c FILE.attn -o|--output model.h [--name SYM] [--max-L N [--max-S N] [--tile-rows N]] "
     "[--tokens-per-call N [--capacity C] [--window W]] [-h|--help]",
     nullptr},
    {"verify", attn::cmd_verify, "verify FILE.attn",
     "  (no options: the exit code says whether the file loads)\n"},
    {"quantize", attn::cmd_quantize,
     "quantize IN.attn --calib CALIB.npy [--calib-kv CKV.npy] [--calib-value CV.npy] --dtype s8|s16 "
     "[--per-tensor] [--causal] [--key-length N] [--residual] [--any-mask] [--exact-mask] [--max-positions "
     "P] "
     "-o|--output "
     "OUT.attn\n"
     "  attn quantize MODEL.attn --calib-tokens IDS.npy|--calib-text FILE --dtype s8|s16 [--residual-bits N] "
     "[--weights s8|s4 [--s4 ffn|all]] [--mse-ranges KINDS] [--smooth A|auto|off] -o|--output OUT.attn",
     "  --calib-tokens F   whole models: calibration token ids, int32/int64 [B, L] or [L] (one sequence a "
     "row)\n"
     "  --calib-text FILE  whole models with a tokenizer: lines of text, each with its special tokens,\n"
     "                     joined and cut into rows of min(max_positions, 128) tokens\n"
     "  --residual-bits N  whole models: the int32 residual grid is max|x| / 2^N (8..28, default 24)\n"
     "  --mse-ranges KINDS whole models: these tensors' clipping range by least quantization error on the\n"
     "                     calibration, not min/max: none (default), all, or a comma list of attn_in, q, k,\n"
     "                     v, context, attn_out, ffn_in, h1, h3, g, head_in (g: the W2 input)\n"
     "  --smooth A         whole models: move activation outliers per channel into the weights "
     "(SmoothQuant)\n"
     "                     with strength A in (0, 1]; auto: the best of 0.2 .. 0.8 and none on held-out\n"
     "                     calibration sequences; off (default). The report prints each stage's output\n"
     "                     SQNR (and KL of the next-token distributions) on the calibration set\n"
     "  --calib CALIB.npy  calibration query inputs [N, L, E] float32 (and key/value without --calib-kv)\n"
     "  --calib-kv F.npy   cross-attention: calibration key inputs [N, S, kdim] (and values)\n"
     "  --calib-value F    cross-attention: calibration value inputs [N, S, vdim]\n"
     "  --dtype s8|s16     the integer type\n"
     "  --weights s8|s4    the projections' weights: int8 (default) or int4, two per byte\n"
     "  --s4 ffn|all       with --weights s4: the FFN's W1, W2, W3 (default) or every projection\n"
     "                     (Q, K, V, O and an untied LM head too); embeddings stay int8\n"
     "  --per-tensor       one weight scale per projection (default: per output channel)\n"
     "  --causal           calibrate with the causal mask the model runs with\n"
     "  --key-length N     calibrate with key padding at N\n"
     "  --residual         calibrate block i on block i-1's input + output (a residual stream)\n"
     "  --any-mask         ranges for any mask (coarser s8 grids; default: the calibration's mask only,\n"
     "                     recorded in the file: another mask is refused, kMaskNotCalibrated)\n"
     "  --exact-mask       the default, kept for old scripts (excludes --any-mask)\n"
     "  --max-positions P  rotary blocks: cos/sin tables for positions 0 .. P-1 (default: calibration "
     "length)\n"
     "  -o, --output FILE  the quantized .attn file to write\n"},
};

void usage(FILE* f) {
  std::fprintf(f, "usage: attn COMMAND [ARGS]   (attn COMMAND --help: each option)\n");
  for (const Command& c : kCommands) std::fprintf(f, "  attn %s\n", c.usage);
  std::fprintf(
      f,
      "options: --opt VALUE or --opt=VALUE; flags (--causal, ...) take no value.\n"
      "inputs: files must be regular files (.npy inputs may also be pipes, read only up to the\n"
      "  size their header declares); directories and devices are refused.\n"
      "outputs (-o): written to a new PATH.tmp.XXXXXX (random, created exclusively), then renamed\n"
      "  over PATH; an existing PATH that is not a regular file (a device, FIFO, directory) is\n"
      "  refused, never written through.\n"
      "quantize: context/output ranges hold for the calibration's --causal/--key-length only, and\n"
      "  the file says so (another mask: kMaskNotCalibrated); --any-mask widens them for any mask.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    for (int i = 2; i < argc && c.help != nullptr; ++i) {
      if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
        std::printf("usage: attn %s\n%s  -h, --help         this help\n", c.usage, c.help);
        return 0;
      }
    }
    try {
      return c.run(argc - 2, argv + 2);
    } catch (const attn::cli::Error& e) {
      // One line, whatever bytes a file put into a name the message quotes.
      std::fprintf(stderr, "attn %s: %s\n", c.name, attn::cli::printable(e.what()).c_str());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attn %s: internal error: %s\n", c.name, attn::cli::printable(e.what()).c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "attn: unknown command '%s' (try attn --help)\n", argv[1]);
  return 2;
}
