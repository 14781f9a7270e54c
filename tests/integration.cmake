# Integration tests (the recipes of port/README.md), included by tests/CMakeLists.txt:
#   c_api_c99               the C99 API from a C program (tests/c_api_c99.c), on the golden cases
#   consumer_install        attn built and installed to a temp prefix (fixture)
#   consumer_find_package   a CMake project using find_package(attn CONFIG)
#   consumer_pkg_config     C and C++ programs built from `pkg-config --cflags --libs attn`
#   consumer_add_subdirectory  a CMake project vendoring attn with add_subdirectory()
#   dtypes_s8_only          ATTN_DTYPES=s8 builds a library without one f32 symbol
#   plain_makefile          port/make builds the library from the documented list
#                           (the same files CMake globs), links a C program with cc

# ---- C API test: compiled as C99, run on every golden vector ------------------
# Hosted targets only (the host, or Cortex-A under qemu-user): it reads files.
# Bare-metal boards replay the same vectors with port/cortex-m/conformance.
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Generic")
  add_executable(attn_c_api_c99 c_api_c99.c)
  set_target_properties(attn_c_api_c99 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_options(attn_c_api_c99 PRIVATE -Wall -Wextra -Wpedantic -Werror)
  target_link_libraries(attn_c_api_c99 PRIVATE attn::attn m)
  file(GLOB ATTN_GOLDEN_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/data/golden/*.bin)
  set(c99_args ${ATTN_GOLDEN_FILES})
  # The quantized files from C, against the C++ path's output: `attn run`
  # writes it (host builds, where the tools binary runs) before the test.
  if(TARGET attn_cli AND NOT CMAKE_CROSSCOMPILING)
    set(q ${CMAKE_CURRENT_SOURCE_DIR}/data/format/quant)
    set(want ${CMAKE_CURRENT_BINARY_DIR}/c_api_c99)
    add_test(NAME c_api_c99_reference
             COMMAND sh -c "set -e; mkdir -p \"$2\"; \"$0\" run \"$1/mha_self.s8.attn\" --input \"$1/mha_self.x.npy\" --causal -o \"$2/mha_self.s8.y.npy\"; \"$0\" run \"$1/mha_cross.s16.attn\" --input \"$1/mha_cross.x.npy\" --kv \"$1/mha_cross.kv.npy\" --value \"$1/mha_cross.v.npy\" -o \"$2/mha_cross.s16.y.npy\""
                     $<TARGET_FILE:attn_cli> ${q} ${want})
    set_tests_properties(c_api_c99_reference PROPERTIES FIXTURES_SETUP attn_c99_reference)
    list(APPEND c99_args --quant ${q}/mha_self.s8.attn ${q}/mha_self.x.npy - - 1 ${want}/mha_self.s8.y.npy
                         --quant ${q}/mha_cross.s16.attn ${q}/mha_cross.x.npy ${q}/mha_cross.kv.npy
                         ${q}/mha_cross.v.npy 0 ${want}/mha_cross.s16.y.npy)
  endif()
  add_test(NAME ${ATTN_TEST_PREFIX}c_api_c99 COMMAND attn_c_api_c99 ${c99_args})
  if(TARGET attn_cli AND NOT CMAKE_CROSSCOMPILING)
    set_tests_properties(${ATTN_TEST_PREFIX}c_api_c99 PROPERTIES FIXTURES_REQUIRED attn_c99_reference)
  endif()
endif()

# ---- Whole models from C: compiled as C99, on the committed model files ---------
# tests/c_api_model_c99.c: load, bind to a static arena, forward, decode =
# forward (byte for byte for s8/s16), greedy generation; f32, s8 and s16.
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Generic")
  add_executable(attn_c_api_model_c99 c_api_model_c99.c)
  set_target_properties(attn_c_api_model_c99 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_options(attn_c_api_model_c99 PRIVATE -Wall -Wextra -Wpedantic -Werror)
  target_link_libraries(attn_c_api_model_c99 PRIVATE attn::attn m)
  set(m ${CMAKE_CURRENT_SOURCE_DIR}/data/model)
  add_test(NAME ${ATTN_TEST_PREFIX}c_api_model_c99
           COMMAND attn_c_api_model_c99 ${m}/llama1.s8.attn ${m}/bert1.s16.attn ${m}/llama.attn
                   ${m}/llama_tied.attn ${m}/bert_cls.attn)
endif()

# ---- Consumer builds: host only (they configure, build and run programs) ------
if(NOT CMAKE_CROSSCOMPILING AND ATTN_TEST_PACKAGING)
  set(ATTN_CONSUMER_WORK ${CMAKE_CURRENT_BINARY_DIR}/consumers)
  # The compilers and flags of this build (the sanitizer preset's, say), as an
  # initial cache for every nested configure.
  set(ATTN_CONSUMER_CACHE ${ATTN_CONSUMER_WORK}/initial-cache.cmake)
  set(cache_lines "")
  foreach(var IN ITEMS CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_BUILD_TYPE CMAKE_C_FLAGS CMAKE_CXX_FLAGS
                       CMAKE_EXE_LINKER_FLAGS CMAKE_AR CMAKE_RANLIB CMAKE_NM ATTN_KERNELS ATTN_DEFINES)
    string(APPEND cache_lines "set(${var} [==[${${var}}]==] CACHE STRING \"\")\n")
  endforeach()
  file(WRITE ${ATTN_CONSUMER_CACHE} "${cache_lines}")

  # The sources CMake compiles into the library, for the Makefile test to compare.
  get_target_property(attn_lib_sources attn SOURCES)
  set(rel_sources "")
  foreach(src IN LISTS attn_lib_sources)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${src})
    list(APPEND rel_sources ${rel})
  endforeach()
  list(SORT rel_sources)
  string(REPLACE ";" "\n" rel_sources "${rel_sources}")
  file(WRITE ${ATTN_CONSUMER_WORK}/cmake-sources.txt "${rel_sources}\n")

  set(run_args -DATTN_SOURCE_DIR=${PROJECT_SOURCE_DIR} -DWORK=${ATTN_CONSUMER_WORK}
               -DINITIAL_CACHE=${ATTN_CONSUMER_CACHE} "-DGENERATOR=${CMAKE_GENERATOR}")
  set(run_script ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run.cmake)
  foreach(step IN ITEMS install find_package pkg_config add_subdirectory s8_only make)
    set(name consumer_${step})
    if(step STREQUAL "s8_only")
      set(name dtypes_s8_only)
    elseif(step STREQUAL "make")
      set(name plain_makefile)
    endif()
    add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${run_args} -DSTEP=${step} -P ${run_script})
    # Each step runs a nested parallel build: never two at once (and not beside other tests).
    set_tests_properties(${name} PROPERTIES TIMEOUT 600 LABELS integration RUN_SERIAL TRUE)
  endforeach()
  set_tests_properties(consumer_install PROPERTIES FIXTURES_SETUP attn_installed)
  set_tests_properties(consumer_find_package consumer_pkg_config PROPERTIES FIXTURES_REQUIRED attn_installed)
endif()

# ---- C firmware example on QEMU: c_firmware_m4_gcc, _m55_gcc, _m55_clang ------
# port/cortex-m/examples/c-firmware (C startup, linker script, Makefile over
# port/make/attn.mk, a model header from `attn emit-c`) built and run on
# mps2-an386 and mps3-an547; port/cortex-m/examples/check_c_firmware.py compares
# every int8 output byte with `attn run --raw` of the same model and input.
# Host builds with the tools binary, when the cross tools and QEMU are found;
# with ATTN_TEST_PACKAGING (host-release): the examples cross-compile the
# library the same way whatever the host preset, so one preset runs them.
if(TARGET attn_cli AND NOT CMAKE_CROSSCOMPILING AND ATTN_TEST_PACKAGING)
  find_program(ATTN_FW_ARM_GCC arm-none-eabi-gcc)
  find_program(ATTN_FW_QEMU qemu-system-arm)
  find_program(ATTN_FW_MAKE NAMES make gmake)
  find_program(ATTN_FW_PYTHON NAMES python3)
  find_program(ATTN_FW_CLANG clang-14)
  if(ATTN_FW_ARM_GCC AND ATTN_FW_QEMU AND ATTN_FW_MAKE AND ATTN_FW_PYTHON)
    set(fw_cases "m4_gcc an386 gcc" "m55_gcc an547 gcc")
    if(ATTN_FW_CLANG)
      list(APPEND fw_cases "m55_clang an547 clang")
    endif()
    foreach(fw_case IN LISTS fw_cases)
      separate_arguments(fw_case)
      list(GET fw_case 0 fw_name)
      list(GET fw_case 1 fw_board)
      list(GET fw_case 2 fw_cc)
      add_test(NAME c_firmware_${fw_name}
               COMMAND ${ATTN_FW_PYTHON} ${PROJECT_SOURCE_DIR}/port/cortex-m/examples/check_c_firmware.py
                       --attn $<TARGET_FILE:attn_cli> --board ${fw_board} --cc ${fw_cc}
                       --work ${CMAKE_CURRENT_BINARY_DIR}/c_firmware/${fw_name})
      # make -j2 inside: ctest counts two processors for each.
      set_tests_properties(c_firmware_${fw_name} PROPERTIES TIMEOUT 300 PROCESSORS 2 LABELS "integration;c_firmware")
    endforeach()
  endif()
endif()

# ---- whole-model C example on QEMU: c_llm_m4_gcc, _m55_gcc, _m55_clang -------
# port/cortex-m/examples/c-llm (the demo's byte-level Llama with its tokenizer,
# s8, two buffers in two RAM regions, sized by `attn emit-c`);
# port/cortex-m/examples/check_c_llm.py compares its text with `attn generate`
# and its two sections with `attn info --target`. After the C firmware tests of
# the same board (both compile the library: one at a time on two cores).
if(TARGET attn_cli AND NOT CMAKE_CROSSCOMPILING AND ATTN_TEST_PACKAGING AND ATTN_FW_ARM_GCC AND ATTN_FW_QEMU
   AND ATTN_FW_MAKE AND ATTN_FW_PYTHON)
  # The model, imported and quantized once by the example's own Makefile rule, for every board.
  set(c_llm_model ${CMAKE_CURRENT_BINARY_DIR}/c_llm/model/tiny_llama.s8.attn)
  add_test(NAME c_llm_model
           COMMAND ${ATTN_FW_MAKE} -s -C ${PROJECT_SOURCE_DIR}/port/cortex-m/examples/c-llm
                   ATTN=$<TARGET_FILE:attn_cli> BUILD=${CMAKE_CURRENT_BINARY_DIR}/c_llm/model ${c_llm_model})
  set_tests_properties(c_llm_model PROPERTIES TIMEOUT 600 FIXTURES_SETUP c_llm_model
                                              LABELS "integration;c_firmware")
  foreach(fw_case IN LISTS fw_cases)
    separate_arguments(fw_case)
    list(GET fw_case 0 fw_name)
    list(GET fw_case 1 fw_board)
    list(GET fw_case 2 fw_cc)
    add_test(NAME c_llm_${fw_name}
             COMMAND ${ATTN_FW_PYTHON} ${PROJECT_SOURCE_DIR}/port/cortex-m/examples/check_c_llm.py
                     --attn $<TARGET_FILE:attn_cli> --board ${fw_board} --cc ${fw_cc}
                     --work ${CMAKE_CURRENT_BINARY_DIR}/c_llm/${fw_name} --model ${c_llm_model})
    set_tests_properties(c_llm_${fw_name} PROPERTIES TIMEOUT 600 PROCESSORS 2 DEPENDS c_firmware_${fw_name}
                                                     FIXTURES_REQUIRED c_llm_model LABELS "integration;c_firmware")
  endforeach()
endif()

# ---- cli_help: every option of every subcommand in `attn --help` and `attn CMD --help`
if(TARGET attn_cli AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME cli_help
           COMMAND ${CMAKE_COMMAND} -DATTN_CLI=$<TARGET_FILE:attn_cli> -DCLI_DIR=${PROJECT_SOURCE_DIR}/tools/cli
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_cli_help.cmake)
endif()
