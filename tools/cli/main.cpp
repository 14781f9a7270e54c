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
  const char* usage;
};

const Command kCommands[] = {
    {"import", attn::cmd_import,
     "import MODEL.safetensors --heads H [--prefix P] [--extra NAME=KEY]... -o OUT.attn"},
    {"info", attn::cmd_info, "info FILE.attn [--L N] [--S N]"},
    {"run", attn::cmd_run,
     "run FILE.attn --input X.npy [--kv KV.npy] [--value V.npy] [--causal] [--key-length N] [--block I] -o "
     "Y.npy"},
    {"emit-c", attn::cmd_emit_c,
     "emit-c FILE.attn -o|--output model.h [--name SYM] [--max-L N [--max-S N] [--tile-rows N]] [-h|--help]"},
    {"verify", attn::cmd_verify, "verify FILE.attn"},
    {"quantize", attn::cmd_quantize,
     "quantize IN.attn --calib CALIB.npy [--calib-kv CKV.npy] [--calib-value CV.npy] --dtype s8|s16 "
     "[--per-tensor] [--causal] [--key-length N] [--residual] [--exact-mask] [--max-positions P] -o "
     "OUT.attn"},
};

void usage(FILE* f) {
  std::fprintf(f, "usage: attn COMMAND [ARGS]\n");
  for (const Command& c : kCommands) std::fprintf(f, "  attn %s\n", c.usage);
  std::fprintf(f,
               "options: --opt VALUE or --opt=VALUE; flags (--causal, ...) take no value.\n"
               "inputs: files must be regular files (.npy inputs may also be pipes, read only up to the\n"
               "  size their header declares); directories and devices are refused.\n"
               "outputs (-o): written to PATH.tmp.<pid>, then renamed over PATH; an existing PATH that is\n"
               "  not a regular file (a device, FIFO, directory) is refused, never written through.\n"
               "quantize: context/output ranges cover any mask unless --exact-mask (then they hold only\n"
               "  for the calibration's --causal/--key-length).\n");
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
