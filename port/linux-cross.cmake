# What the Cortex-A Linux toolchain files (linux-aarch64/, linux-armhf/) share:
# the GCC cross compilers of ATTN_CROSS_TRIPLE, its Debian sysroot, and
# qemu-user (ATTN_QEMU, pinned to ATTN_QEMU_CPU) as the emulator the tests run
# through. The including file sets CMAKE_SYSTEM_*, those three variables and
# CMAKE_C_FLAGS_INIT / CMAKE_CXX_FLAGS_INIT first.
set(CMAKE_C_COMPILER ${ATTN_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ATTN_CROSS_TRIPLE}-g++)

set(ATTN_SYSROOT /usr/${ATTN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${ATTN_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(CMAKE_CROSSCOMPILING_EMULATOR ${ATTN_QEMU};-cpu;${ATTN_QEMU_CPU};-L;${ATTN_SYSROOT})
# Prefix of every registered test, so a CI log shows where each test ran.
set(ATTN_TEST_PREFIX "${ATTN_QEMU}[${ATTN_QEMU_CPU}]:")
