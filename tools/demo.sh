#!/usr/bin/env bash
# The main command: a trained attention model, run by attn on this host and
# on an emulated microcontroller.
#
# tools/train_demo.py trained a small classifier in PyTorch (does a sequence
# contain 佛跳墙?) and exported it to tests/data/demo/demo.attn, embeddings and
# head included as user tensors. This script needs no PyTorch. It
#   1. builds the library, the `attn` tools and the demo program for this host;
#   2. quantizes the model to s8 and s16 with `attn quantize` (calibration:
#      tests/data/demo/calib.txt through the float model);
#   3. runs the held-out set through the f32, s8 and s16 models and prints accuracy,
#      agreement with f32, microseconds per inference, arena bytes and model
#      bytes;
#   4. prints what [CLS] attends to and writes every head's attention as an
#      SVG heat map (out/demo_attention.svg);
#   5. when qemu-system-arm is installed, runs the s8 model in a Cortex-M4
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
cmake --build build/host-release -j"$jobs" --target attn_example_demo attn_cli >/dev/null
demo=./build/host-release/tools/attn_example_demo
attn=./build/host-release/tools/attn

# Calibration inputs: the calibration sequences embedded ([N, L, E]), then the
# quantized files; --residual: block 1 sees x + block0(x), as the model runs.
"$demo" --write-calib out >/dev/null
for dtype in s8 s16; do
  "$attn" quantize tests/data/demo/demo.attn --calib out/calib_block0.npy --residual --dtype $dtype \
    -o out/demo.$dtype.attn >out/quantize_$dtype.log
  echo "demo: attn quantize --dtype $dtype -> out/demo.$dtype.attn;" \
    "$(grep -c 'output SQNR' out/quantize_$dtype.log) blocks, output SQNR vs float64:" \
    "$(sed -n 's/.*output SQNR: \(.*\) dB/\1/p' out/quantize_$dtype.log | paste -sd/) dB (report: out/quantize_$dtype.log)"
done

"$demo" --s8 out/demo.s8.attn --s16 out/demo.s16.attn --svg out/demo_attention.svg \
  --emit-mcu "$PWD/out/demo_mcu.h" "$@"

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
