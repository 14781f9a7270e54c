#!/bin/sh
# run-qemu.sh BOARD ELF [ARGS...]: run a bare-metal image on one of QEMU's
# Cortex-M boards and exit with the image's own exit code.
#
#   BOARD   mps2-an385 | mps2-an386 | mps2-an500 | mps3-an547
#   ELF     an image linked with port/cortex-m (semihosting output and exit)
#   ARGS    extra qemu-system-arm arguments
#
# Always under `timeout` (ATTN_QEMU_TIMEOUT seconds, default 300): a hung
# image fails with 124 instead of stalling CI. Always with -icount shift=10,
# so the SysTick instruction counter (port/port.h) is deterministic.
# Semihosting SYS_WRITE goes to stdout and SYS_WRITE0 to stderr: merged here.
# This is CMAKE_CROSSCOMPILING_EMULATOR of the Cortex-M presets.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 BOARD ELF [qemu args...]" >&2
  exit 2
fi
board=$1
elf=$2
shift 2
case "$board" in
  mps2-an385|mps2-an386|mps2-an500|mps3-an547) ;;
  *) echo "run-qemu.sh: unknown board '$board'" >&2; exit 2 ;;
esac
if [ ! -f "$elf" ]; then
  echo "run-qemu.sh: no such image '$elf'" >&2
  exit 2
fi
qemu=${ATTN_QEMU:-qemu-system-arm}
if ! command -v "$qemu" >/dev/null 2>&1; then
  echo "run-qemu.sh: $qemu not found (apt-get install qemu-system-arm)" >&2
  exit 127
fi
limit=${ATTN_QEMU_TIMEOUT:-300}

timeout -k 5 "$limit" "$qemu" -M "$board" -nographic -monitor none -serial null \
  -semihosting-config enable=on,target=native -icount shift=10 \
  -kernel "$elf" "$@" 2>&1
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "run-qemu.sh: $board: $elf timed out after ${limit}s" >&2
fi
exit "$rc"
