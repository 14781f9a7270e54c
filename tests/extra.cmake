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
if(ATTN_CLANGXX)
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
