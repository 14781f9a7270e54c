# Toolchain file for QEMU's mps2-an385 (cortex-m3): cmake --preset mps2-an385
set(ATTN_BOARD mps2-an385)
set(ATTN_BOARD_CPU cortex-m3)
set(ATTN_BOARD_FLAGS -mcpu=cortex-m3 -mfloat-abi=soft)
set(ATTN_BOARD_CPU_HZ 25000000)
set(ATTN_BOARD_LD mps2.ld)
set(ATTN_BOARD_HAS_FPU OFF)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
