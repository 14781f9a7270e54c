# Extra tests, included by tests/CMakeLists.txt.

# The .attn loader fuzzer (libFuzzer + ASan + UBSan), run for a bounded time.
# Needs clang++; skipped (not registered) without it.
find_program(ATTN_CLANGXX NAMES clang++ clang++-14)
if(ATTN_CLANGXX)
  add_test(NAME fuzz_model
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh 30)
  set_tests_properties(fuzz_model PROPERTIES
    ENVIRONMENT "CLANGXX=${ATTN_CLANGXX};ATTN_FUZZ_DIR=${CMAKE_CURRENT_BINARY_DIR}/fuzz"
    TIMEOUT 300 LABELS fuzz)
endif()

# tests/cli_test.cpp runs the `attn` tools binary.
if(TARGET attn_cli)
  add_dependencies(attn_tests attn_cli)
  target_compile_definitions(attn_tests PRIVATE ATTN_CLI_PATH="$<TARGET_FILE:attn_cli>")
endif()
