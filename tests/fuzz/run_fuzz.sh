#!/bin/sh
# Build the .attn loader fuzzer with clang's libFuzzer + ASan + UBSan (no
# CMake) and run it for a bounded time on a seed corpus of valid files.
#   tests/fuzz/run_fuzz.sh [SECONDS=30]
# ATTN_FUZZ_DIR: where to build and keep the corpus (default build-fuzz/).
# CLANGXX: the compiler (default clang++, else clang++-14).
set -eu
seconds=${1:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${ATTN_FUZZ_DIR:-$root/build-fuzz}
cxx=${CLANGXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$cxx" ]; then
  echo "run_fuzz.sh: clang++ not found" >&2
  exit 2
fi
mkdir -p "$dir/corpus"
"$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$root/include" -I"$root/src" \
  "$root/tests/fuzz/fuzz_model.cpp" "$root/src/runtime/model.cpp" "$root/src/runtime/crc32.cpp" \
  -o "$dir/fuzz_model"
# Seeds: every committed .attn file (valid ones from the export fixtures).
find "$root/tests/data" -name '*.attn' -exec cp {} "$dir/corpus/" \; 2>/dev/null || true
set +e
"$dir/fuzz_model" -max_total_time="$seconds" -max_len=16384 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$dir/" "$dir/corpus" >"$dir/fuzz.log" 2>&1
rc=$?
set -e
tail -n 12 "$dir/fuzz.log"
if [ "$rc" -ne 0 ]; then
  echo "run_fuzz.sh: the fuzzer failed (exit $rc); log: $dir/fuzz.log, failing input: $dir/crash-*" >&2
  exit 1
fi
