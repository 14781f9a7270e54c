# Extra tests, included by tests/CMakeLists.txt. Host builds only: a cross
# build runs its test binary under an emulator, where neither a host fuzzer
# nor launching the (cross-built) `attn` binary makes sense.
if(CMAKE_CROSSCOMPILING)
  return()
endif()

# The .attn loader fuzzer (libFuzzer + ASan + UBSan), run for a bounded time
# (ATTN_FUZZ_SECONDS). Needs clang++; not registered without it.
set(ATTN_FUZZ_SECONDS 30 CACHE STRING "Seconds the fuzz_model ctest runs the fuzzer")
find_program(ATTN_CLANGXX NAMES clang++ clang++-14)
if(ATTN_CLANGXX AND ATTN_TEST_PACKAGING)
  add_test(NAME fuzz_model COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh ${ATTN_FUZZ_SECONDS})
  set_tests_properties(fuzz_model PROPERTIES
    ENVIRONMENT "CLANGXX=${ATTN_CLANGXX};ATTN_FUZZ_DIR=${CMAKE_CURRENT_BINARY_DIR}/fuzz"
    TIMEOUT 300 LABELS fuzz)
endif()

# tests/cli_test.cpp runs the `attn` tools binary.
if(TARGET attn_cli)
  add_dependencies(attn_tests attn_cli)
  target_compile_definitions(attn_tests PRIVATE ATTN_CLI_PATH="$<TARGET_FILE:attn_cli>")
endif()

# The int8 forward (one block, and a whole s8 model: forward and decode) must
# run on cores without an FPU: link it for a Cortex-M3
# with soft-float and check that no floating-point routine is in the image.
# The probe run adds one float multiply and must be caught.
find_program(ATTN_ARM_CXX arm-none-eabi-g++)
find_program(ATTN_ARM_NM arm-none-eabi-nm)
find_program(ATTN_ARM_AR arm-none-eabi-ar)
if(ATTN_ARM_CXX AND ATTN_ARM_NM AND ATTN_ARM_AR AND ATTN_TEST_PACKAGING)
  foreach(probe OFF ON)
    set(name s8_forward_has_no_float)
    if(probe)
      set(name no_float_check_rejects_float)
    endif()
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DCXX=${ATTN_ARM_CXX} -DNM=${ATTN_ARM_NM} -DCMAKE_AR=${ATTN_ARM_AR}
                     -DROOT=${PROJECT_SOURCE_DIR} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/no_float_${probe}
                     -DPROBE=${probe} -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_no_float.cmake)
  endforeach()
  set_tests_properties(s8_forward_has_no_float PROPERTIES
                       PASS_REGULAR_EXPRESSION "no floating-point routine in the Cortex-M3 int8 image")
  set_tests_properties(no_float_check_rejects_float PROPERTIES PASS_REGULAR_EXPRESSION "__aeabi_fmul")
elseif(ATTN_TEST_PACKAGING)
  message(WARNING "arm-none-eabi-g++/nm/ar not found: the int8 no-float check is not registered")
endif()

# tools/export/attn_export.py, which runs `attn import` (tests/attn_export_test.py):
# numpy for the Hugging Face layouts, the blocks of a state dict and the attn
# layout; the nn.Module and nn.TransformerEncoder cases skip themselves without
# torch. Debian's python3 is the one with numpy and torch.
find_program(ATTN_EXPORT_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(ATTN_EXPORT_PYTHON AND TARGET attn_cli)
  execute_process(COMMAND ${ATTN_EXPORT_PYTHON} -c "import numpy" RESULT_VARIABLE _attn_no_numpy
                  OUTPUT_QUIET ERROR_QUIET)
  if(_attn_no_numpy EQUAL 0)
    add_test(NAME attn_export_py COMMAND ${ATTN_EXPORT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/attn_export_test.py)
    set_tests_properties(attn_export_py PROPERTIES ENVIRONMENT "ATTN_BIN=$<TARGET_FILE:attn_cli>")
  endif()
endif()

# The README's library examples compile (C++17 and C99, warnings as errors;
# the C one with the header attn emit-c writes).
if(TARGET attn_cli)
  add_test(NAME readme_examples
           COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/readme
                   -DCXX=${CMAKE_CXX_COMPILER} -DCC=${CMAKE_C_COMPILER} -DATTN=$<TARGET_FILE:attn_cli>
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_readme_snippets.cmake)
endif()
# attn/attn.hpp is the whole C++ API: it includes every public C++ header.
add_test(NAME umbrella_header
         COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_umbrella.cmake)

# The integer model fixtures' generator (tests/data/int_models): the expected
# outputs are the ref kernels' results, so it is built where the library has
# only those (ATTN_KERNELS=ref, preset host-ref). tests/int_model_fixtures_test.cpp
# checks in every build that the committed files are what it would write.
if(ATTN_KERNELS STREQUAL "ref")
  add_executable(attn_int_model_fixtures int_model_fixtures_gen.cpp)
  target_link_libraries(attn_int_model_fixtures PRIVATE attn::quant attn::writer attn::attn)
  target_include_directories(attn_int_model_fixtures PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
endif()
