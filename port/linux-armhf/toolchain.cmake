# Cortex-A, 32-bit Linux (armv7-a, NEON, hard float), run under qemu-user.
#
#   cmake --workflow --preset linux-armhf
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)

set(ATTN_CROSS_TRIPLE arm-linux-gnueabihf)
set(ATTN_QEMU_CPU cortex-a7)

set(CMAKE_C_COMPILER ${ATTN_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ATTN_CROSS_TRIPLE}-g++)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon -mfloat-abi=hard")
# -Wno-psabi: silence GCC's note that std::pair passing changed in GCC 7.1 (all code here
# is built by one compiler).
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon -mfloat-abi=hard -Wno-psabi")

set(ATTN_SYSROOT /usr/${ATTN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${ATTN_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm;-cpu;${ATTN_QEMU_CPU};-L;${ATTN_SYSROOT})
# Prefix of every registered test, so a CI log shows where each test ran.
set(ATTN_TEST_PREFIX "qemu-arm[${ATTN_QEMU_CPU}]:")
