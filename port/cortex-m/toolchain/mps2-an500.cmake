# Toolchain file for QEMU's mps2-an500 (cortex-m7): cmake --preset mps2-an500
set(ATTN_BOARD mps2-an500)
set(ATTN_BOARD_CPU cortex-m7)
set(ATTN_BOARD_FLAGS -mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-d16)
set(ATTN_BOARD_CPU_HZ 25000000)
set(ATTN_BOARD_LD mps2.ld)
set(ATTN_BOARD_HAS_FPU ON)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
