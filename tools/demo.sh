#!/usr/bin/env bash
# The main command: a trained attention model, run by attn on this host and
# on an emulated microcontroller.
#
# tools/train_demo.py trained a small classifier in PyTorch (does a sequence
# contain 佛跳墙?) and exported it to tests/data/demo/demo.attn, embeddings and
# head included as user tensors. This script needs no PyTorch. It
#   1. builds the library and the demo program for this host;
#   2. runs the held-out set through the f32 model and through s8 and s16
#      versions quantized on the calibration set, and prints accuracy,
#      agreement with f32, microseconds per inference, arena bytes and model
#      bytes;
#   3. prints what [CLS] attends to and writes every head's attention as an
#      SVG heat map (out/demo_attention.svg);
#   4. when qemu-system-arm is installed, runs the s8 model in a Cortex-M4
#      firmware image (QEMU mps2-an386; ATTN_DEMO_BOARD picks another board)
#      and checks that its predictions are identical to the host's, with the
#      instructions per inference.
# Extra arguments go to the host demo program (e.g. --limit 100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh >/dev/null
jobs=$(($(nproc) < 2 ? $(nproc) : 2))
mkdir -p out

echo "demo: building for this host (build/host-release)"
cmake --preset host-release >/dev/null
cmake --build build/host-release -j"$jobs" --target attn_example_demo >/dev/null
./build/host-release/tools/attn_example_demo --svg out/demo_attention.svg --emit-mcu "$PWD/out/demo_mcu.h" "$@"

board=${ATTN_DEMO_BOARD:-mps2-an386}  # or mps2-an385 (Cortex-M3, no FPU), mps2-an500, mps3-an547
if ! command -v qemu-system-arm >/dev/null 2>&1 || ! command -v arm-none-eabi-g++ >/dev/null 2>&1; then
  echo
  echo "demo: qemu-system-arm or arm-none-eabi-g++ not installed: skipping the Cortex-M run"
  exit 0
fi
echo
echo "demo: the s8 model in a Cortex-M firmware image (QEMU $board, build/$board)"
cmake --preset "$board" -DATTN_DEMO_MCU_HEADER="$PWD/out/demo_mcu.h" >/dev/null
cmake --build "build/$board" -j"$jobs" --target attn_demo_s8 >/dev/null
port/cortex-m/run-qemu.sh "$board" "build/$board/port/cortex-m/attn_demo_s8"
