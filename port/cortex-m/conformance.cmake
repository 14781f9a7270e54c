# The conformance runner images of this board: golden vectors from
# tests/data/golden, embedded by tools/golden_to_c.py, replayed on the board.
#   attn_conformance       libattn as dispatch.cpp configures it for this core
#   attn_conformance_ref   libattn with only the ref kernels (ATTN_FORCE_REF)
# f32 cases only where the core has an FPU; on mps2-an385 the runners report
# SKIP (exit 77) until fixed-point cases exist.
file(GLOB ATTN_GOLDEN_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/data/golden/*.bin)

set(_golden_f32 OFF)
if(ATTN_BOARD_HAS_FPU AND ATTN_GOLDEN_FILES)
  set(_golden_f32 ON)
  if(NOT Python3_Interpreter_FOUND)
    message(FATAL_ERROR "the conformance runner needs python3 (standard library only) to embed the golden vectors")
  endif()
  set(_golden_h ${CMAKE_CURRENT_BINARY_DIR}/golden_f32_cases.h)
  set(_golden_cpp ${CMAKE_CURRENT_BINARY_DIR}/golden_f32_cases.cpp)
  add_custom_command(OUTPUT ${_golden_h} ${_golden_cpp}
    COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/golden_to_c.py ${_golden_h} ${_golden_cpp}
            ${ATTN_GOLDEN_FILES}
    DEPENDS ${PROJECT_SOURCE_DIR}/tools/golden_to_c.py ${ATTN_GOLDEN_FILES}
    COMMENT "Embedding the golden vectors for ${ATTN_BOARD}"
    VERBATIM)
  # The data, compiled once for both runners (plain constants: -O1 is plenty).
  add_library(attn_golden_f32 OBJECT ${_golden_cpp} ${_golden_h})
  target_include_directories(attn_golden_f32 PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conformance
                                                     ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(attn_golden_f32 PRIVATE -O1)
elseif(ATTN_BOARD_HAS_FPU)
  message(WARNING "no golden vectors in tests/data/golden: the conformance runner has no cases")
endif()

foreach(variant auto ref)
  if(variant STREQUAL "ref")
    set(image attn_conformance_ref)
    set(lib attn_ref)
    set(test "${ATTN_TEST_PREFIX}conformance-ref")
  else()
    set(image attn_conformance)
    set(lib attn::attn)
    set(test "${ATTN_TEST_PREFIX}conformance")
  endif()
  attn_port_image(${image} SOURCES conformance/runner.cpp LIB ${lib} PRINTF_FLOAT)
  target_include_directories(${image} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conformance)
  if(_golden_f32)
    target_link_libraries(${image} PRIVATE attn_golden_f32)
    target_compile_definitions(${image} PRIVATE ATTN_GOLDEN_F32=1)
  endif()
  add_test(NAME "${test}" COMMAND ${image})
  set_tests_properties("${test}" PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
