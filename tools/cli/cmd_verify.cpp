// cmd_verify.cpp: `attn verify FILE.attn`: validation only. Exit 0 and
// "FILE: ok" when Model::load accepts the file, else one line naming the
// problem and exit 1.
#include <cstdio>

#include "cli/cli.h"

namespace attn {

int cmd_verify(int argc, char** argv) {
  const cli::Args args(argc, argv, {}, {});
  const std::string path = args.one_input("FILE.attn");
  cli::LoadedModel m;
  cli::load_model(path, &m);
  std::printf("%s: ok (%u blocks, %u tensors, crc32 %08x)\n", path.c_str(), m.model.block_count(),
              m.model.tensor_count(), m.model.crc());
  return 0;
}

}  // namespace attn
