#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the library's sources with the compile
# commands of a configured build directory (default build/host-release).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/host-release}
[ -f "$build/compile_commands.json" ] || cmake --preset host-release >/dev/null || exit 1
mapfile -t files < <(git ls-files 'src/*.cpp')
# Two files at a time (the machine's cores); any failure fails the check.
out=$(printf '%s\0' "${files[@]}" | xargs -0 -n 8 -P 2 clang-tidy -p "$build" --quiet 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v 'warnings generated' || true
[ $rc -eq 0 ] || exit $rc
echo "check-tidy: ${#files[@]} files clean"
