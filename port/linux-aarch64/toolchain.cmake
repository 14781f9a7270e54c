# Cortex-A, 64-bit Linux (aarch64), run under qemu-user.
#
#   cmake --workflow --preset linux-aarch64
#
# Tests run through CMAKE_CROSSCOMPILING_EMULATOR with a pinned CPU: qemu's
# default CPU enables every extension, which would hide an instruction the
# target lacks. ATTN_AARCH64_MARCH / ATTN_QEMU_CPU may be set before this file
# is included (see toolchain-dotprod.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ATTN_CROSS_TRIPLE aarch64-linux-gnu)
set(ATTN_QEMU qemu-aarch64)
if(NOT DEFINED ATTN_AARCH64_MARCH)
  set(ATTN_AARCH64_MARCH armv8-a)
endif()
if(NOT DEFINED ATTN_QEMU_CPU)
  set(ATTN_QEMU_CPU cortex-a53)
endif()

set(CMAKE_C_FLAGS_INIT "-march=${ATTN_AARCH64_MARCH}")
set(CMAKE_CXX_FLAGS_INIT "-march=${ATTN_AARCH64_MARCH}")
include(${CMAKE_CURRENT_LIST_DIR}/../linux-cross.cmake)
