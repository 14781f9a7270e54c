# Proves the int8 path needs no floating point: builds the library for a
# Cortex-M3 (no FPU, soft-float ABI), links tests/no_float_main.cpp against it
# with --gc-sections as firmware would, and fails if the image contains any
# soft-float or libm routine.
# Run as: cmake -DCXX=<arm-none-eabi-g++> -DNM=<arm-none-eabi-nm> -DCMAKE_AR=<arm-none-eabi-ar> -DROOT=<repo>
#         -DOUT=<dir> [-DPROBE=ON]
#         -P check_no_float.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(flags -std=c++17 -mcpu=cortex-m3 -mthumb -mfloat-abi=soft -O2 -fno-exceptions -fno-rtti
          -fno-threadsafe-statics -ffunction-sections -fdata-sections -I${ROOT}/include -I${ROOT}/src)
if(PROBE)
  list(APPEND flags -DATTN_NO_FLOAT_PROBE=1)
endif()

file(GLOB_RECURSE sources ${ROOT}/src/*.cpp)
# The library's sources, as CMakeLists.txt takes them: the quantizer, the tokenizer blob writers and
# the .attn writer are host-only.
list(FILTER sources EXCLUDE REGEX "/src/quant/|/src/tokenizer/build/|/src/format/writer\\.cpp$")
set(objects "")
foreach(src IN LISTS sources ITEMS ${ROOT}/tests/no_float_main.cpp)
  string(MD5 tag "${src}")
  get_filename_component(name ${src} NAME_WE)
  set(obj ${OUT}/${name}_${tag}.o)
  execute_process(COMMAND ${CXX} ${flags} -c ${src} -o ${obj} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_no_float: compiling ${src} failed:\n${err}")
  endif()
  list(APPEND objects ${obj})
endforeach()
list(FILTER objects EXCLUDE REGEX "/no_float_main_[0-9a-f]+\\.o$")
execute_process(COMMAND ${CMAKE_AR} qc ${OUT}/libattn_m3.a ${objects} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_float: '${CMAKE_AR}' failed")
endif()
file(GLOB main_obj ${OUT}/no_float_main_*.o)
execute_process(COMMAND ${CXX} -mcpu=cortex-m3 -mthumb -mfloat-abi=soft --specs=nosys.specs -Wl,--gc-sections
                        ${main_obj} ${OUT}/libattn_m3.a -o ${OUT}/no_float.elf
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_float: linking failed:\n${err}")
endif()

execute_process(COMMAND ${NM} ${OUT}/no_float.elf OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_float: '${NM}' failed")
endif()
# ARM EABI soft-float helpers, libgcc's generic ones, and libm entry points.
set(pattern "^(__aeabi_[fd](add|sub|rsub|mul|div|neg|cmp.*|2.*)|__aeabi_[iul]+2[fd]|__aeabi_[fd]2.*|__(add|sub|mul|div|neg)[sdt]f3|__(eq|ne|lt|le|gt|ge|un)[sdt]f2|__(extend|trunc)[sdt]f[sdt]f2|__fix.*[sdt]f.*|__float.*[sdt]f|sqrtf?|expf?|exp2f?|logf?|powf?|floorf?|ceilf?|roundf?|lroundf?|frexpf?|ldexpf?)$")
include(${ROOT}/port/cmake/symbols.cmake)
attn_matching_symbols("${symbols}" "${pattern}" bad)
if(bad)
  message(FATAL_ERROR "the int8 image references floating point: ${bad}")
endif()
message(STATUS "check_no_float: no floating-point routine in the Cortex-M3 int8 image")
