# Toolchain file for QEMU's mps2-an386 (cortex-m4): cmake --preset mps2-an386
set(ATTN_BOARD mps2-an386)
set(ATTN_BOARD_CPU cortex-m4)
set(ATTN_BOARD_FLAGS -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16)
set(ATTN_BOARD_CPU_HZ 25000000)
set(ATTN_BOARD_LD mps2.ld)
set(ATTN_BOARD_HAS_FPU ON)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
