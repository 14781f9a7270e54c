#!/usr/bin/env bash
# The main job: builds attn for this host and runs attention on a golden case
# exported from PyTorch, printing the error against PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake --preset host-release >/dev/null
cmake --build build/host-release -j"$(nproc)" --target attn_example_golden >/dev/null
./build/host-release/tools/attn_example_golden "$@"
