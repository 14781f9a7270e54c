#!/usr/bin/env bash
# The main command: two trained models, run whole by attn on this host and on
# emulated microcontrollers. Needs no PyTorch (the models are committed in
# Hugging Face layout, with PyTorch's reference outputs).
#
# 1. Encoder: the 佛跳墙 classifier (tests/data/demo_encoder, a BERT-style
#    encoder: does a sequence contain 佛, 跳, 墙 adjacent and in this order?).
#    `attn import` its safetensors + config.json, `attn quantize` it to s8, s16
#    and s4 (s8 with int4 FFN weights; calibration: tests/data/demo/calib.txt as
#    token ids), then tools/examples/demo_encoder.cpp runs the held-out set
#    through the four whole models: accuracy, agreement with f32, µs per inference, arena and
#    model bytes, f32 logits against PyTorch's, what [CLS] attends to (and
#    out/demo_attention.svg).
# 2. Decoder: a byte-level Llama trained on the licence texts
#    (tests/data/tiny_llama). `attn import --byte-vocab` (the file carries its
#    tokenizer: the 256 byte pieces), `attn quantize` s8, s16 and s4 (calibration:
#    windows of the training text), then tools/examples/demo_decoder.cpp
#    prints each model's perplexity on the held-out text and its greedy
#    continuation of the reference prompt, text in and text out through the
#    model's tokenizer, against PyTorch's.
# 3. With qemu-system-arm and arm-none-eabi-g++: the s8 encoder in a Cortex-M4
#    image (QEMU mps2-an386; ATTN_DEMO_BOARD picks another board), its
#    predictions checked against the host's, and the s8 decoder in a
#    Cortex-M55 image (mps3-an547; ATTN_DEMO_DECODER_BOARD): it encodes the
#    prompt text with the tokenizer in its model file, generates, decodes the
#    tokens to text and checks the text equals the host's s8 text byte for
#    byte; instructions per inference / of the encoding, the prefill and per
#    generated token. Each image embeds its s8 model file (`attn emit-c`).
# Extra arguments go to the encoder demo program (e.g. --limit 100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/ci/install-deps.sh >/dev/null
jobs=$(($(nproc) < 2 ? $(nproc) : 2))
mkdir -p out/mcu

echo "demo: building for this host (build/host-release)"
cmake --preset host-release >/dev/null
cmake --build build/host-release -j"$jobs" --target attn_cli attn_example_demo_encoder attn_example_demo_decoder \
  >/dev/null
attn=./build/host-release/tools/attn
bin=./build/host-release/tools

# import, then quantize to s8 and s16: prepare NAME DATA_DIR [import options]
prepare() {
  local name=$1 data=$2
  shift 2
  "$attn" import "$data/model.safetensors" --config "$data/config.json" "$@" -o "out/$name.f32.attn" |
    sed 's/^/demo: /'
  # s4: s8 activations, int4 weights for the FFN (half their flash).
  for kind in s8 s16 s4; do
    local opts=(--dtype "$kind")
    [ "$kind" = s4 ] && opts=(--dtype s8 --weights s4)
    "$attn" quantize "out/$name.f32.attn" --calib-tokens "out/${name}_calib.npy" "${opts[@]}" \
      -o "out/$name.$kind.attn" >"out/quantize_${name}_$kind.log"
    echo "demo: attn quantize ${opts[*]} -> out/$name.$kind.attn;" \
      "SQNR vs float: $(sed -n 's/^ *output *\([0-9.-]* dB\).*/\1/p' "out/quantize_${name}_$kind.log")" \
      "(report: out/quantize_${name}_$kind.log)"
  done
}

echo
"$bin/attn_example_demo_encoder" --write-calib out/encoder_calib.npy >/dev/null
prepare encoder tests/data/demo_encoder
echo
"$bin/attn_example_demo_encoder" --f32 out/encoder.f32.attn --s8 out/encoder.s8.attn --s16 out/encoder.s16.attn \
  --s4 out/encoder.s4.attn --svg out/demo_attention.svg --emit-mcu out/mcu/demo_encoder_data.h "$@"

echo
"$bin/attn_example_demo_decoder" --write-calib out/decoder_calib.npy | grep -v '^wrote' || true
prepare decoder tests/data/tiny_llama --byte-vocab
echo
"$bin/attn_example_demo_decoder" --f32 out/decoder.f32.attn --s8 out/decoder.s8.attn --s16 out/decoder.s16.attn \
  --s4 out/decoder.s4.attn --emit-mcu out/mcu/demo_decoder_data.h

if ! command -v qemu-system-arm >/dev/null 2>&1 || ! command -v arm-none-eabi-g++ >/dev/null 2>&1; then
  echo
  echo "demo: qemu-system-arm or arm-none-eabi-g++ not installed: skipping the Cortex-M runs"
  exit 0
fi
# The s8 models as const arrays, with their buffer sizes (DEMO_*_MODEL_ARENA_BYTES / _STATE_BYTES) for
# calls of the encoder's whole context, and for the decoder prompts of up to 64 tokens and caches of
# its 128 positions.
"$attn" emit-c out/encoder.s8.attn -o out/mcu/demo_encoder_model.h --name demo_encoder_model \
  --tokens-per-call 32 >/dev/null
"$attn" emit-c out/decoder.s8.attn -o out/mcu/demo_decoder_model.h --name demo_decoder_model \
  --tokens-per-call 64 --capacity 128 >/dev/null
# on_board PART BOARD: build the image of PART for BOARD (build/BOARD) and run it
on_board() {
  local part=$1 board=$2
  echo
  echo "demo: the s8 $part in a Cortex-M firmware image (QEMU $board, build/$board)"
  cmake --preset "$board" -DATTN_DEMO_MCU_DIR="$PWD/out/mcu" >/dev/null
  cmake --build "build/$board" -j"$jobs" --target "attn_demo_${part}_s8" >/dev/null
  port/cortex-m/run-qemu.sh "$board" "build/$board/port/cortex-m/attn_demo_${part}_s8"
}
on_board encoder "${ATTN_DEMO_BOARD:-mps2-an386}"  # or mps2-an385 (Cortex-M3, no FPU), mps2-an500, mps3-an547
on_board decoder "${ATTN_DEMO_DECODER_BOARD:-mps3-an547}"
