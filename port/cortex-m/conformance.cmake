# The conformance runner images of this board: golden vectors from
# tests/data/golden, embedded by tools/fixtures/golden_to_c.py, replayed on the board.
#   attn_conformance       libattn as dispatch.cpp configures it for this core
#   attn_conformance_ref   libattn with only the ref kernels (ATTN_FORCE_REF)
# f32 cases only where the core has an FPU. Fixed-point cases (s8, s16) on
# every board: tools/fixtures/golden_fixed/golden_fixed_to_c.cpp, built for the HOST
# with the host's C++ compiler and the ref kernels, quantizes the golden
# cases, runs forward_s8 / forward_s16 and writes the expected bytes; the
# runner requires them bit-exact. Both runners also run the variant tester
# (tests/variant_tester.h, shared with the host suite) over every row of the
# kernel tables (kernel_equiv.cpp): the ref image checks its ref rows and the
# tester's controls. And every board runs the whole integer models of
# tests/data/int_models (int_models.cpp): forward, decode and greedy
# generation, bit-exact with the host ref build's committed results.
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
    COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/fixtures/golden_to_c.py ${_golden_h} ${_golden_cpp}
            ${ATTN_GOLDEN_FILES}
    DEPENDS ${PROJECT_SOURCE_DIR}/tools/fixtures/golden_to_c.py ${ATTN_GOLDEN_FILES}
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

set(_golden_fixed OFF)
find_program(ATTN_HOST_CXX NAMES c++ g++ clang++)
if(ATTN_GOLDEN_FILES AND ATTN_HOST_CXX AND "s8" IN_LIST ATTN_DTYPES AND "s16" IN_LIST ATTN_DTYPES)
  set(_golden_fixed ON)
  # The host build of the generator: the whole library (every dtype: the
  # quantizer runs the f32 forward), ref kernels only.
  file(GLOB_RECURSE _host_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.cpp)
  set(_gen ${CMAKE_CURRENT_BINARY_DIR}/golden_fixed_to_c)
  add_custom_command(OUTPUT ${_gen}
    COMMAND ${ATTN_HOST_CXX} -std=c++17 -O1 -DATTN_FORCE_REF=1 -DATTN_TEST_DATA_DIR=\"unused\"
            -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/src -I${PROJECT_SOURCE_DIR}/tests
            ${PROJECT_SOURCE_DIR}/tools/fixtures/golden_fixed/golden_fixed_to_c.cpp ${_host_sources} -o ${_gen}
    DEPENDS ${PROJECT_SOURCE_DIR}/tools/fixtures/golden_fixed/golden_fixed_to_c.cpp ${_host_sources}
            ${PROJECT_SOURCE_DIR}/tests/golden.h
    COMMENT "Building the host generator of the fixed-point golden outputs (${ATTN_HOST_CXX}, ref kernels)"
    VERBATIM)
  set(_fixed_h ${CMAKE_CURRENT_BINARY_DIR}/golden_fixed_cases.h)
  set(_fixed_cpp ${CMAKE_CURRENT_BINARY_DIR}/golden_fixed_cases.cpp)
  add_custom_command(OUTPUT ${_fixed_h} ${_fixed_cpp}
    COMMAND ${_gen} ${_fixed_h} ${_fixed_cpp} ${ATTN_GOLDEN_FILES}
    DEPENDS ${_gen} ${ATTN_GOLDEN_FILES}
    COMMENT "Quantizing the golden vectors and computing the s8/s16 outputs on the host"
    VERBATIM)
  add_library(attn_golden_fixed OBJECT ${_fixed_cpp} ${_fixed_h})
  target_include_directories(attn_golden_fixed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conformance
                                                       ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(attn_golden_fixed PRIVATE -O1)
elseif(NOT ATTN_HOST_CXX)
  message(WARNING "no host C++ compiler: the conformance runner has no fixed-point cases")
endif()

# Whole integer models (tests/data/int_models): the model files and the host
# ref build's results, embedded as arrays; int_models.cpp runs them through
# tests/int_model_fixture.h, as the host test does.
set(_int_models OFF)
if("s8" IN_LIST ATTN_DTYPES AND "s16" IN_LIST ATTN_DTYPES)
  set(_int_models ON)
  set(_int_dir ${PROJECT_SOURCE_DIR}/tests/data/int_models)
  file(STRINGS ${_int_dir}/fixtures.txt _int_lines REGEX "^[^#]")
  set(_int_files ${_int_dir}/fixtures.txt)
  foreach(_line IN LISTS _int_lines)
    string(REGEX REPLACE "[ \t]+" ";" _fields "${_line}")
    list(GET _fields 0 _name)
    list(GET _fields 1 _model)
    list(APPEND _int_files ${PROJECT_SOURCE_DIR}/tests/data/${_model} ${_int_dir}/${_name}.expect)
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_int_dir}/fixtures.txt)
  set(_int_cpp ${CMAKE_CURRENT_BINARY_DIR}/int_model_fixtures.cpp)
  add_custom_command(OUTPUT ${_int_cpp}
    COMMAND ${CMAKE_COMMAND} -DDATA=${PROJECT_SOURCE_DIR}/tests/data -DOUT=${_int_cpp}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/embed-int-models.cmake
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/embed-int-models.cmake ${_int_files}
    COMMENT "Embedding the integer model fixtures for ${ATTN_BOARD}"
    VERBATIM)
  add_library(attn_int_models OBJECT ${_int_cpp})
  target_include_directories(attn_int_models PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conformance)
  target_compile_options(attn_int_models PRIVATE -O1)
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
  attn_port_image(${image} SOURCES conformance/runner.cpp conformance/fixed_cases.cpp
                  conformance/kernel_equiv.cpp LIB ${lib} PRINTF_FLOAT)
  target_include_directories(${image} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conformance ${PROJECT_SOURCE_DIR}/tests)
  # The variant tester's static pools: 2 x 256 KiB in, 2 x 64 KiB out by
  # default (every case); the M55's data RAM (DTCM) is 512 KiB.
  if(ATTN_BOARD STREQUAL "mps3-an547")
    target_compile_definitions(${image} PRIVATE ATTN_VARIANT_TESTER_IN_KIB=64 ATTN_VARIANT_TESTER_OUT_KIB=24)
  endif()
  if(_golden_f32)
    target_link_libraries(${image} PRIVATE attn_golden_f32)
    target_compile_definitions(${image} PRIVATE ATTN_GOLDEN_F32=1)
  endif()
  if(_int_models)
    target_sources(${image} PRIVATE conformance/int_models.cpp)
    target_link_libraries(${image} PRIVATE attn_int_models)
    target_compile_definitions(${image} PRIVATE ATTN_INT_MODELS=1)
  endif()
  if(_golden_fixed)
    target_link_libraries(${image} PRIVATE attn_golden_fixed)
    target_compile_definitions(${image} PRIVATE ATTN_GOLDEN_FIXED=1)
  endif()
  add_test(NAME "${test}" COMMAND ${image})
  set_tests_properties("${test}" PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
