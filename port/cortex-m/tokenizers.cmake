# The tokenizer goldens on the board (tokenizers/run_tokenizers.cpp, image
# attn_tokenizers, ctest "tokenizers"): every committed golden line of
# tests/data/tokenizers, encoded and decoded byte for byte, and the cost
# lines of tools/bench/mcu-cost (instructions to encode a 64-byte prompt and
# to decode one token). The blobs and lines come from
# tools/fixtures/tokenizer_goldens/tokenizer_goldens_to_c.cpp, built for the
# HOST with the host's C++ compiler and the same tokenizer file readers as
# `attn import`; it refuses to write anything the host library does not
# itself encode and decode as the goldens say.
find_program(ATTN_HOST_CXX NAMES c++ g++ clang++)
if(NOT ATTN_HOST_CXX)
  message(WARNING "no host C++ compiler: the tokenizer goldens do not run on this board")
  return()
endif()
file(GLOB _tok_data CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/data/tokenizers/*
                                       ${PROJECT_SOURCE_DIR}/tests/data/tokenizers/*/*)
file(GLOB _tok_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/tokenizer/*.cpp
                                          ${PROJECT_SOURCE_DIR}/src/tokenizer/build/*.cpp
                                          ${PROJECT_SOURCE_DIR}/src/core/*.cpp ${PROJECT_SOURCE_DIR}/src/format/*.cpp
                                          ${PROJECT_SOURCE_DIR}/tools/cli/tokenizer_files*.cpp)
list(FILTER _tok_sources EXCLUDE REGEX "/src/format/writer\\.cpp$")
# The readers' file helpers (tools/cli/cli_util.cpp) reach Model::load: src/format comes along.
# The loader's CRC asks CPUID for PCLMULQDQ on an x86-64 host: kernels/x86/cpu_x86.cpp.
list(APPEND _tok_sources ${PROJECT_SOURCE_DIR}/tools/cli/cli_util.cpp ${PROJECT_SOURCE_DIR}/src/kernels/x86/cpu_x86.cpp)
file(GLOB _tok_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/attn/*.h ${PROJECT_SOURCE_DIR}/src/tokenizer/*.h
                                          ${PROJECT_SOURCE_DIR}/tools/cli/*.h)
set(_tok_gen_src ${PROJECT_SOURCE_DIR}/tools/fixtures/tokenizer_goldens/tokenizer_goldens_to_c.cpp)
set(_tok_gen ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_goldens_to_c)
add_custom_command(OUTPUT ${_tok_gen}
  COMMAND ${ATTN_HOST_CXX} -std=c++17 -O1 -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/src
          -I${PROJECT_SOURCE_DIR}/tools -I${PROJECT_SOURCE_DIR}/tests ${_tok_gen_src} ${_tok_sources} -o ${_tok_gen}
  DEPENDS ${_tok_gen_src} ${_tok_sources} ${_tok_headers} ${PROJECT_SOURCE_DIR}/tests/tokenizer_golden_lines.h
  COMMENT "Building the host generator of the tokenizer goldens (${ATTN_HOST_CXX})"
  VERBATIM)
set(_tok_cpp ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_goldens.cpp)
add_custom_command(OUTPUT ${_tok_cpp}
  COMMAND ${_tok_gen} ${PROJECT_SOURCE_DIR}/tests/data ${_tok_cpp}
  DEPENDS ${_tok_gen} ${_tok_data}
  COMMENT "Checking the tokenizer goldens on the host and embedding them for ${ATTN_BOARD}"
  VERBATIM)
# The data, compiled once (plain constants: -O1 is plenty).
add_library(attn_tokenizer_goldens OBJECT ${_tok_cpp})
target_include_directories(attn_tokenizer_goldens PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tokenizers)
target_compile_options(attn_tokenizer_goldens PRIVATE -O1)
attn_port_image(attn_tokenizers SOURCES tokenizers/run_tokenizers.cpp)
target_include_directories(attn_tokenizers PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tokenizers)
target_link_libraries(attn_tokenizers PRIVATE attn_tokenizer_goldens)
add_test(NAME "${ATTN_TEST_PREFIX}tokenizers" COMMAND attn_tokenizers)
set_tests_properties("${ATTN_TEST_PREFIX}tokenizers" PROPERTIES TIMEOUT 300)
