# run.cmake: one step of the integration tests (see tests/integration.cmake).
#   cmake -DSTEP=<step> -DATTN_SOURCE_DIR=<attn> -DWORK=<scratch dir>
#         -DINITIAL_CACHE=<compilers and flags> -DGENERATOR=<generator> -P run.cmake
cmake_minimum_required(VERSION 3.20)
foreach(var IN ITEMS STEP ATTN_SOURCE_DIR WORK INITIAL_CACHE GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()
include(${INITIAL_CACHE})  # CMAKE_C_COMPILER, CMAKE_CXX_FLAGS, ... of the enclosing build
set(PREFIX ${WORK}/prefix)
set(LIBDIR lib)  # the install's libdir, fixed so this script needs no GNUInstallDirs
set(CONSUMERS ${ATTN_SOURCE_DIR}/tests/consumers)

# run(<what> COMMAND...): run a command, fail the test with its output if it fails.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# configure_and_build(<source> <build dir> <cache args>...)
function(configure_and_build src bin)
  file(REMOVE_RECURSE ${bin})
  run("configure ${src}" ${CMAKE_COMMAND} -G ${GENERATOR} -C ${INITIAL_CACHE} -S ${src} -B ${bin} ${ARGN})
  run("build ${src}" ${CMAKE_COMMAND} --build ${bin} --parallel 2)
endfunction()

if(STEP STREQUAL "install")
  # The library as a parent project would get it: no tests, no tools.
  file(REMOVE_RECURSE ${PREFIX})
  configure_and_build(${ATTN_SOURCE_DIR} ${WORK}/attn-build -DATTN_BUILD_TESTS=OFF -DATTN_BUILD_TOOLS=OFF
                      -DCMAKE_INSTALL_PREFIX=${PREFIX} -DCMAKE_INSTALL_LIBDIR=${LIBDIR})
  run("install" ${CMAKE_COMMAND} --install ${WORK}/attn-build)
  foreach(f IN ITEMS ${LIBDIR}/libattn.a include/attn/attn.h include/attn/attn.hpp
                     include/attn/config.h ${LIBDIR}/cmake/attn/attnConfig.cmake
                     ${LIBDIR}/cmake/attn/attnConfigVersion.cmake
                     ${LIBDIR}/cmake/attn/attnTargets.cmake ${LIBDIR}/pkgconfig/attn.pc)
    if(NOT EXISTS ${PREFIX}/${f})
      message(FATAL_ERROR "install: ${f} missing under ${PREFIX}")
    endif()
  endforeach()
  if(EXISTS ${WORK}/attn-build/tests OR EXISTS ${WORK}/attn-build/tools)
    message(FATAL_ERROR "install: tests or tools were configured although switched off")
  endif()

elseif(STEP STREQUAL "find_package")
  set(bin ${WORK}/find_package)
  configure_and_build(${CONSUMERS}/find_package ${bin} -DCMAKE_PREFIX_PATH=${PREFIX})
  run("consumer_cpp" ${bin}/consumer_cpp)
  run("consumer_c" ${bin}/consumer_c)
  # The version file: an incompatible request must fail.
  file(WRITE ${WORK}/version-check/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.20)\nproject(v LANGUAGES NONE)\nfind_package(attn 9.0 CONFIG REQUIRED)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/version-check -B ${WORK}/version-check/build
                          -DCMAKE_PREFIX_PATH=${PREFIX} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    message(FATAL_ERROR "find_package(attn 9.0) succeeded: the version file does not check versions")
  endif()

elseif(STEP STREQUAL "pkg_config")
  find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
  set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
  run("pkg-config" ${PKG_CONFIG} --cflags --libs attn)
  separate_arguments(pc_flags UNIX_COMMAND "${run_output}")
  message(STATUS "pkg-config --cflags --libs attn: ${run_output}")
  separate_arguments(cflags UNIX_COMMAND "${CMAKE_C_FLAGS}")
  separate_arguments(cxxflags UNIX_COMMAND "${CMAKE_CXX_FLAGS}")
  file(MAKE_DIRECTORY ${WORK}/pkg_config)
  # C: linked by the C compiler, which proves libattn needs no C++ runtime.
  run("cc consumer.c" ${CMAKE_C_COMPILER} -std=c99 -Wall -Wextra -Wpedantic -Werror ${cflags}
      ${CONSUMERS}/common/consumer.c ${pc_flags} -o ${WORK}/pkg_config/consumer_c)
  run("consumer_c" ${WORK}/pkg_config/consumer_c)
  run("c++ consumer.cpp" ${CMAKE_CXX_COMPILER} -std=c++17 -Wall -Wextra -Werror ${cxxflags}
      ${CONSUMERS}/common/consumer.cpp ${pc_flags} -o ${WORK}/pkg_config/consumer_cpp)
  run("consumer_cpp" ${WORK}/pkg_config/consumer_cpp)

elseif(STEP STREQUAL "add_subdirectory")
  set(bin ${WORK}/add_subdirectory)
  configure_and_build(${CONSUMERS}/add_subdirectory ${bin} -DATTN_SOURCE_DIR=${ATTN_SOURCE_DIR})
  run("consumer_cpp" ${bin}/consumer_cpp)
  run("consumer_c" ${bin}/consumer_c)

elseif(STEP STREQUAL "s8_only")
  # An s8-only library carries no float kernels: no f32 file compiled, no
  # f32 symbol defined or referenced.
  set(bin ${WORK}/s8-only)
  configure_and_build(${ATTN_SOURCE_DIR} ${bin} -DATTN_BUILD_TESTS=OFF -DATTN_BUILD_TOOLS=OFF
                      -DATTN_DTYPES=s8)
  run("nm" ${CMAKE_NM} -A ${bin}/libattn.a)
  string(REGEX MATCHALL "[^\n]*[_]f32[^\n]*" hits "${run_output}")
  if(hits)
    message(FATAL_ERROR "ATTN_DTYPES=s8 still carries f32 symbols:\n${hits}")
  endif()
  string(REGEX MATCHALL "[^\n]*attn_c\\.cpp\\.o[^\n]*attn_status_name[^\n]*" capi "${run_output}")
  if(NOT capi)
    message(FATAL_ERROR "ATTN_DTYPES=s8: the C API (attn_status_name) is missing from libattn.a")
  endif()

elseif(STEP STREQUAL "make")
  # port/make/Makefile builds the library from port/make/attn.mk's list.
  find_program(MAKE NAMES gmake make REQUIRED)
  set(bin ${WORK}/make)
  file(REMOVE_RECURSE ${bin})
  set(make_args -C ${ATTN_SOURCE_DIR}/port/make BUILD=${bin} CC=${CMAKE_C_COMPILER} CXX=${CMAKE_CXX_COMPILER}
                "CFLAGS=-O2 ${CMAKE_C_FLAGS}" "CXXFLAGS=-O2 ${CMAKE_CXX_FLAGS}"
                "WARNFLAGS=-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wdouble-promotion -Werror")
  # 1. The documented list is the list CMake compiles.
  run("make print-sources" ${MAKE} -s ${make_args} print-sources)
  string(STRIP "${run_output}" make_sources)
  string(REGEX REPLACE "[ \n]+" ";" make_sources "${make_sources}")
  list(SORT make_sources)
  file(STRINGS ${WORK}/cmake-sources.txt cmake_sources)
  list(SORT cmake_sources)
  if(NOT make_sources STREQUAL cmake_sources)
    set(only_cmake ${cmake_sources})
    list(REMOVE_ITEM only_cmake ${make_sources})
    set(only_make ${make_sources})
    list(REMOVE_ITEM only_make ${cmake_sources})
    message(FATAL_ERROR "port/make/attn.mk lists other sources than CMake compiles.\n"
                        "Only CMake: [${only_cmake}]\nOnly attn.mk: [${only_make}]")
  endif()
  # Vendor IDEs (Keil, IAR) put every object in one folder: no two sources may share a name.
  set(names "")
  foreach(src IN LISTS make_sources)
    get_filename_component(name ${src} NAME_WE)
    if(name IN_LIST names)
      message(FATAL_ERROR "two sources named ${name}.cpp: their objects collide in a flat IDE build")
    endif()
    list(APPEND names ${name})
  endforeach()
  # 2. Build the library and the C example (linked by cc), run the example.
  run("make check" ${MAKE} ${make_args} -j2 check)
  message(STATUS "${run_output}")
  # 3. The same list without f32.
  run("make ATTN_DTYPES=s8" ${MAKE} ${make_args} BUILD=${bin}/s8 ATTN_DTYPES=s8 -j2 lib)
  run("nm" ${CMAKE_NM} -A ${bin}/s8/libattn.a)
  string(REGEX MATCHALL "[^\n]*[_]f32[^\n]*" hits "${run_output}")
  if(hits)
    message(FATAL_ERROR "make ATTN_DTYPES=s8 still carries f32 symbols:\n${hits}")
  endif()
  # (The same list for a Cortex-M firmware: the mps2-an386 preset compiles CMake's list, equal to
  # this one by 1., with warnings as errors; the C firmware tests compile it through attn.mk.)
  # 4. The x86 kernels' flags and defines reach x86-64 targets only (dry runs,
  # `make -n`: the compile lines): the host build has them when the host is
  # x86-64; an Arm target has none, whether its compiler says so itself, says
  # so through clang's --target= in CXXFLAGS, or is not $(CXX) at all (the C
  # firmware example, which names ATTN_TARGET_MACHINE).
  function(x86_lines what want)
    run("${what}" ${MAKE} -n ${ARGN})
    string(REGEX MATCH "ATTN_AVX[A-Z0-9]*_KERNELS|-mavx" hit "${run_output}")
    if(want AND NOT hit)
      message(FATAL_ERROR "${what}: no x86 kernel flags or defines on an x86-64 target")
    elseif(NOT want AND hit)
      message(FATAL_ERROR "${what}: x86 kernel flags or defines (${hit}) on a target that is not x86-64")
    endif()
  endfunction()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -dumpmachine OUTPUT_VARIABLE host_machine
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(host_machine MATCHES "^x86_64-")
    x86_lines("make -n lib (x86-64 host)" TRUE ${make_args} BUILD=${bin}/dry lib)
  endif()
  find_program(ARM_GXX arm-none-eabi-g++)
  if(ARM_GXX)
    x86_lines("make -n lib (arm-none-eabi-g++)" FALSE -C ${ATTN_SOURCE_DIR}/port/make BUILD=${bin}/dry
              CXX=${ARM_GXX} "CXXFLAGS=-Os -mcpu=cortex-m4 -mthumb" lib)
    x86_lines("make -n (the C firmware example)" FALSE -C ${ATTN_SOURCE_DIR}/port/cortex-m/examples/c-firmware
              BUILD=${bin}/dry-fw ATTN=${CMAKE_COMMAND} all)
  endif()
  find_program(CLANGXX NAMES clang++ clang++-14)
  if(CLANGXX)
    x86_lines("make -n lib (clang++ --target=arm-none-eabi)" FALSE -C ${ATTN_SOURCE_DIR}/port/make
              BUILD=${bin}/dry CXX=${CLANGXX} "CXXFLAGS=--target=arm-none-eabi -mcpu=cortex-m4 -mthumb" lib)
  endif()

else()
  message(FATAL_ERROR "run.cmake: unknown STEP '${STEP}'")
endif()
