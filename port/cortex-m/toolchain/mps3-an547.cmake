# Toolchain file for QEMU's mps3-an547 (cortex-m55): cmake --preset mps3-an547
set(ATTN_BOARD mps3-an547)
set(ATTN_BOARD_CPU cortex-m55)
set(ATTN_BOARD_FLAGS -mcpu=cortex-m55 -mfloat-abi=hard)
set(ATTN_BOARD_CPU_HZ 32000000)
set(ATTN_BOARD_LD mps3-an547.ld)
set(ATTN_BOARD_HAS_FPU ON)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
