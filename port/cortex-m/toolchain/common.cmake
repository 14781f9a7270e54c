# Shared part of the Cortex-M toolchain files: bare metal (arm-none-eabi GCC
# 12 + newlib-nano + semihosting), images run by ../run-qemu.sh on QEMU.
# A board file sets, then includes this file:
#   ATTN_BOARD          QEMU machine name (-M), e.g. mps2-an386
#   ATTN_BOARD_CPU      e.g. cortex-m4
#   ATTN_BOARD_FLAGS    -mcpu/-mfpu/-mfloat-abi flags
#   ATTN_BOARD_CPU_HZ   CPU (SysTick) clock in QEMU, for the instruction counter
#   ATTN_BOARD_LD       linker script (in port/cortex-m)
#   ATTN_BOARD_HAS_FPU  ON if the core has single-precision float
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
# No startup code during compiler checks: test static libraries, not programs.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

string(JOIN " " _attn_cm_flags -mthumb ${ATTN_BOARD_FLAGS} -ffunction-sections -fdata-sections)
set(CMAKE_C_FLAGS_INIT "${_attn_cm_flags}")
set(CMAKE_ASM_FLAGS_INIT "${_attn_cm_flags}")
set(CMAKE_CXX_FLAGS_INIT
    "${_attn_cm_flags} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
# Own startup (port/cortex-m/startup.c), newlib-nano, semihosting syscalls.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles --specs=nano.specs --specs=rdimon.specs -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../run-qemu.sh;${ATTN_BOARD})

# The top-level CMakeLists.txt adds port/${ATTN_PORT} when this is set.
set(ATTN_PORT cortex-m)
