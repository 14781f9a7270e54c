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
if(NOT DEFINED ATTN_AARCH64_MARCH)
  set(ATTN_AARCH64_MARCH armv8-a)
endif()
if(NOT DEFINED ATTN_QEMU_CPU)
  set(ATTN_QEMU_CPU cortex-a53)
endif()

set(CMAKE_C_COMPILER ${ATTN_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ATTN_CROSS_TRIPLE}-g++)
set(CMAKE_C_FLAGS_INIT "-march=${ATTN_AARCH64_MARCH}")
set(CMAKE_CXX_FLAGS_INIT "-march=${ATTN_AARCH64_MARCH}")

set(ATTN_SYSROOT /usr/${ATTN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${ATTN_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;${ATTN_QEMU_CPU};-L;${ATTN_SYSROOT})
# Prefix of every registered test, so a CI log shows where each test ran.
set(ATTN_TEST_PREFIX "qemu-aarch64[${ATTN_QEMU_CPU}]:")
