#!/bin/sh
# Build a libFuzzer + ASan + UBSan target (clang, no CMake) and run it for a
# bounded time on a seed corpus of valid files.
#   tests/fuzz/run_fuzz.sh [SECONDS=30] [TARGET=model]
# TARGET model: the .attn loader alone (fuzz_model.cpp and src/format/ but its
# host-only writer, with src/core/ and src/tokenizer/ for the tokenizer section).
# TARGET run: files the loader accepts also run through the C API
# (fuzz_run.cpp, the whole library with the ref kernels, built once per
# directory; an object is rebuilt when its source or any header is newer).
# ATTN_FUZZ_DIR: where to build and keep the corpus (default build-fuzz/).
# CLANGXX: the compiler (default clang++, else clang++-14).
set -eu
seconds=${1:-30}
target=${2:-model}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${ATTN_FUZZ_DIR:-$root/build-fuzz}
cxx=${CLANGXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$cxx" ]; then
  echo "run_fuzz.sh: clang++ not found" >&2
  exit 2
fi
flags="-std=c++17 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -I$root/include -I$root/src"
case "$target" in
  model)
    mkdir -p "$dir/corpus"
    # The loader checks a model's tokenizer section with the tokenizer's own loader.
    loader=$(find "$root/src/format" "$root/src/core" "$root/src/tokenizer" -maxdepth 1 -name '*.cpp' ! -name writer.cpp | sort)
    loader="$loader $root/src/kernels/x86/cpu_x86.cpp"  # the CRC's CPUID (PCLMULQDQ)
    # shellcheck disable=SC2086
    "$cxx" $flags -fsanitize=fuzzer "$root/tests/fuzz/fuzz_model.cpp" $loader -o "$dir/fuzz_model"
    corpus=$dir/corpus
    ;;
  run)
    mkdir -p "$dir/corpus_run" "$dir/obj"
    objs=""
    for src in $(cd "$root" && find src -name '*.cpp' ! -name writer.cpp | sort); do
      obj=$dir/obj/$(echo "$src" | tr '/' '_').o
      if [ ! -f "$obj" ] || [ "$root/$src" -nt "$obj" ] ||
        [ -n "$(find "$root/include" "$root/src" -name '*.h' -newer "$obj" | head -n 1)" ]; then
        # shellcheck disable=SC2086
        "$cxx" $flags -fsanitize=fuzzer-no-link -DATTN_FORCE_REF=1 -c "$root/$src" -o "$obj"
      fi
      objs="$objs $obj"
    done
    # shellcheck disable=SC2086
    "$cxx" $flags -fsanitize=fuzzer -DATTN_FORCE_REF=1 "$root/tests/fuzz/fuzz_run.cpp" $objs -o "$dir/fuzz_run"
    corpus=$dir/corpus_run
    ;;
  *)
    echo "run_fuzz.sh: unknown target '$target' (model, run)" >&2
    exit 2
    ;;
esac
# Seeds: every committed .attn file (valid ones from the export fixtures).
find "$root/tests/data" -name '*.attn' -exec cp {} "$corpus/" \; 2>/dev/null || true
set +e
"$dir/fuzz_$target" -max_total_time="$seconds" -max_len=32768 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$dir/" "$corpus" >"$dir/fuzz_$target.log" 2>&1
rc=$?
set -e
tail -n 12 "$dir/fuzz_$target.log"
if [ "$rc" -ne 0 ]; then
  echo "run_fuzz.sh: the fuzzer failed (exit $rc); log: $dir/fuzz_$target.log, failing input: $dir/crash-*" >&2
  exit 1
fi
