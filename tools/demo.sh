#!/usr/bin/env bash
# The main command: a trained attention model, run by attn.
#
# tools/train_demo.py trained a small classifier in PyTorch (does a sequence
# contain 佛跳墙?) and exported it to tests/data/demo/demo.attn, embeddings and
# head included as user tensors. This script needs no PyTorch. It
#   1. builds the library and the demo program for this host;
#   2. runs the held-out set through the model and prints accuracy, agreement
#      with f32, microseconds per inference, arena bytes and model bytes;
#   3. prints what [CLS] attends to and writes every head's attention as an
#      SVG heat map (out/demo_attention.svg).
# Extra arguments go to the demo program (e.g. --limit 100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh >/dev/null
jobs=$(($(nproc) < 2 ? $(nproc) : 2))

echo "demo: building (host-release)"
cmake --preset host-release >/dev/null
cmake --build build/host-release -j"$jobs" --target attn_example_demo >/dev/null

mkdir -p out
./build/host-release/tools/attn_example_demo --svg out/demo_attention.svg "$@"
