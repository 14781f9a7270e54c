#!/usr/bin/env bash
# Lists workflow presets from CMakePresets.json. `cross`: those for emulated
# targets (every workflow preset whose name does not start with host-).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --list-presets=workflow 2>/dev/null | sed -n 's/^ *"\([^"]*\)".*/\1/p' |
  if [ "${1:-}" = cross ]; then grep -v '^host-' || true; else cat; fi
