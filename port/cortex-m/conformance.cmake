# The conformance runner image of this board: golden vectors from
# tests/data/golden embedded by tools/golden_to_c.py, replayed on the board.
# f32 cases only where the core has an FPU; on mps2-an385 the runner reports
# SKIP (exit 77) until fixed-point cases exist.
file(GLOB ATTN_GOLDEN_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/data/golden/*.bin)

attn_port_image(attn_conformance SOURCES conformance/runner.cpp PRINTF_FLOAT)
target_include_directories(attn_conformance PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conformance)
if(ATTN_BOARD_HAS_FPU AND ATTN_GOLDEN_FILES)
  if(NOT Python3_Interpreter_FOUND)
    message(FATAL_ERROR "the conformance runner needs python3 (std-lib only) to embed the golden vectors")
  endif()
  set(_golden_h ${CMAKE_CURRENT_BINARY_DIR}/golden_f32_cases.h)
  add_custom_command(OUTPUT ${_golden_h}
    COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/golden_to_c.py ${_golden_h} ${ATTN_GOLDEN_FILES}
    DEPENDS ${PROJECT_SOURCE_DIR}/tools/golden_to_c.py ${ATTN_GOLDEN_FILES}
    COMMENT "Embedding ${CMAKE_CURRENT_LIST_DIR} golden vectors for ${ATTN_BOARD}"
    VERBATIM)
  target_sources(attn_conformance PRIVATE ${_golden_h})
  target_compile_definitions(attn_conformance PRIVATE ATTN_GOLDEN_F32=1)
  # The generated data is big and simple: no need to optimize it.
  set_source_files_properties(conformance/runner.cpp PROPERTIES COMPILE_OPTIONS "-O2")
elseif(ATTN_BOARD_HAS_FPU)
  message(WARNING "no golden vectors in tests/data/golden: the conformance runner has no cases")
endif()
add_test(NAME "${ATTN_TEST_PREFIX}conformance" COMMAND attn_conformance)
set_tests_properties("${ATTN_TEST_PREFIX}conformance" PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
