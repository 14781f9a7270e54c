#!/usr/bin/env bash
# Installs the Debian packages attn's builds and tests need (as root, or via sudo).
# Idempotent: does nothing when they are all present.
set -euo pipefail
packages=(
  cmake g++ make catch2 clang clang-format clang-tidy libclang-rt-14-dev   # host build, tests, fuzzing, lint
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib  # Cortex-M firmware
  qemu-system-arm qemu-user                                                 # emulated boards and Cortex-A
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf                            # Cortex-A cross builds
  python3 pkg-config                                                        # fixture checks, pkg-config test
)
# The PyTorch side (export, golden vectors, benchmark peer) is optional: ATTN_WITH_TORCH=1 adds it.
if [ "${ATTN_WITH_TORCH:-0}" = 1 ]; then
  packages+=(python3-torch python3-numpy libopenblas0-pthread)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
