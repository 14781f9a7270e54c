# Cortex-A, 32-bit Linux (armv7-a, NEON, hard float), run under qemu-user.
#
#   cmake --workflow --preset linux-armhf
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)

set(ATTN_CROSS_TRIPLE arm-linux-gnueabihf)
set(ATTN_QEMU qemu-arm)
set(ATTN_QEMU_CPU cortex-a7)

set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon -mfloat-abi=hard")
# -Wno-psabi: silence GCC's note that std::pair passing changed in GCC 7.1 (all code here
# is built by one compiler).
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon -mfloat-abi=hard -Wno-psabi")
include(${CMAKE_CURRENT_LIST_DIR}/../linux-cross.cmake)
