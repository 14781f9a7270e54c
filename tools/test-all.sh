#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs, checks format
# and lint, then builds and runs every preset this machine can run (host
# release, host with sanitizers, host with ref kernels only, a host Debug
# build of the library and the CLI (no tests), and the Cortex-A
# and Cortex-M presets under QEMU when they exist).
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/ci/install-deps.sh || exit 1

passed=0
failed=0
failures=()
stage() {  # stage NAME COMMAND...: run, count, keep going
  local name=$1
  shift
  echo "=== $name"
  local log t0=$SECONDS
  log=$(mktemp)
  if "$@" 2>&1 | tee "$log"; then
    echo "=== $name: ok ($((SECONDS - t0)) s)"
  else
    failures+=("$name")
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
  fi
  # Count ctest's tests where the stage ran ctest; other stages count as one test.
  local summary
  summary=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -n "$summary" ]; then
    local f t
    f=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
    t=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/')
    passed=$((passed + t - f))
    failed=$((failed + f))
  elif [[ " ${failures[*]-} " == *" $name "* ]]; then
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
  rm -f "$log"
}

stage format bash tools/ci/check-format.sh
for preset in host-release host-asan host-ref host-debug $(bash tools/ci/list-presets.sh cross); do
  stage "$preset" cmake --workflow --preset "$preset" --fresh
done
stage clang-tidy bash tools/ci/check-tidy.sh build/host-release

echo
if [ ${#failures[@]} -gt 0 ]; then echo "failed stages: ${failures[*]}"; fi
echo "test-all: ${SECONDS} s in all"
echo "test-all: $passed passed, $failed failed"
[ ${#failures[@]} -eq 0 ]
