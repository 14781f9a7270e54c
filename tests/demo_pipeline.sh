#!/bin/sh
# demo_pipeline.sh ATTN DEMO DATA OUT PART [ARGS...]: what tools/demo.sh does
# for one of its two models, for ctest (demo-encoder, demo-decoder): `attn
# import` tests/data/<model> (PART encoder: demo_encoder; decoder:
# tiny_llama, --byte-vocab: with its bytes tokenizer), calibration ids from DEMO --write-calib,
# `attn quantize --calib-tokens` to s8, s16 and s4 (int4 FFN weights), then DEMO on the four files
# with ARGS. Exits with the first failing step's code.
set -eu
attn=$1 demo=$2 data=$3 out=$4 part=$5
shift 5
case "$part" in
  encoder) model=$data/demo_encoder import_opts= ;;
  decoder) model=$data/tiny_llama import_opts=--byte-vocab ;;
  *) echo "demo_pipeline.sh: unknown part '$part'" >&2; exit 2 ;;
esac
mkdir -p "$out"
"$attn" import "$model/model.safetensors" --config "$model/config.json" $import_opts -o "$out/$part.f32.attn"
"$demo" --data "$data" --write-calib "$out/${part}_calib.npy"
for dtype in s8 s16; do
  "$attn" quantize "$out/$part.f32.attn" --calib-tokens "$out/${part}_calib.npy" --dtype $dtype \
    -o "$out/$part.$dtype.attn" >/dev/null
done
# s4: s8 activations with int4 FFN weights.
"$attn" quantize "$out/$part.f32.attn" --calib-tokens "$out/${part}_calib.npy" --dtype s8 --weights s4 \
  -o "$out/$part.s4.attn" >/dev/null
exec "$demo" --data "$data" --f32 "$out/$part.f32.attn" --s8 "$out/$part.s8.attn" --s16 "$out/$part.s16.attn" \
  --s4 "$out/$part.s4.attn" "$@"
