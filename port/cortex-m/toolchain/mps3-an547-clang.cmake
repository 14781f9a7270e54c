# Toolchain file for QEMU's mps3-an547 (cortex-m55 + Helium), compiled with
# Debian's clang-14 instead of GCC 12.2 (which crashes on some MVE intrinsic
# code, and schedules it worse), linked by arm-none-eabi-g++ against GCC's
# newlib-nano and libstdc++: cmake --preset mps3-an547-clang
# The board (CPU, flags, linker script) is the GCC preset's.
include(${CMAKE_CURRENT_LIST_DIR}/mps3-an547.cmake)

# Compile with clang for the bare-metal target, against GCC's newlib and
# libstdc++ headers (the multilib GCC picks for these flags).
set(CMAKE_C_COMPILER clang-14)
set(CMAKE_CXX_COMPILER clang++-14)
set(CMAKE_ASM_COMPILER clang-14)
set(CMAKE_C_COMPILER_TARGET arm-none-eabi)
set(CMAKE_CXX_COMPILER_TARGET arm-none-eabi)
set(CMAKE_ASM_COMPILER_TARGET arm-none-eabi)
set(_attn_gcc_inc /usr/lib/arm-none-eabi/include)
execute_process(COMMAND arm-none-eabi-gcc -mthumb ${ATTN_BOARD_FLAGS} -print-multi-directory
                OUTPUT_VARIABLE _attn_multi OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND arm-none-eabi-gcc -dumpversion OUTPUT_VARIABLE _attn_gcc_ver OUTPUT_STRIP_TRAILING_WHITESPACE)
# -fshort-enums: the enum size arm-none-eabi-gcc (and so newlib) uses.
set(_attn_clang_sys "-fshort-enums -nostdlibinc -isystem ${_attn_gcc_inc}")
set(_attn_clang_cxx
    "-nostdinc++ -isystem ${_attn_gcc_inc}/c++/${_attn_gcc_ver} -isystem ${_attn_gcc_inc}/c++/${_attn_gcc_ver}/arm-none-eabi/${_attn_multi} -isystem ${_attn_gcc_inc}/c++/${_attn_gcc_ver}/backward")
string(APPEND CMAKE_C_FLAGS_INIT " ${_attn_clang_sys}")
string(APPEND CMAKE_ASM_FLAGS_INIT " ${_attn_clang_sys}")
string(APPEND CMAKE_CXX_FLAGS_INIT " ${_attn_clang_cxx} ${_attn_clang_sys}")

# Link with GCC's driver: it knows newlib's multilibs, specs and libgcc.
# -z noexecstack: clang marks its objects, newlib does not; silence ld.
string(JOIN " " _attn_link_cpu -mthumb ${ATTN_BOARD_FLAGS} -Wl,-z,noexecstack)
set(CMAKE_C_LINK_EXECUTABLE "arm-none-eabi-gcc ${_attn_link_cpu} <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
set(CMAKE_CXX_LINK_EXECUTABLE "arm-none-eabi-g++ ${_attn_link_cpu} <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
set(CMAKE_NM arm-none-eabi-nm CACHE FILEPATH "")
set(ATTN_BOARD_LABEL mps3-an547,clang)
