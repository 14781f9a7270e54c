# Fails when the static library LIB defines a symbol of the offline quantizer
# (attn/quantize.h: calibration, conversion, rope tables, multipliers). It is
# host tooling, its own target attn_quant: firmware's libattn.a never holds it.
# Run as: cmake -DNM=<nm> -DLIB=<libattn.a> -P check_no_quantizer.cmake
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/symbols.cmake)
execute_process(COMMAND ${NM} --defined-only ${LIB} OUTPUT_VARIABLE defined RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_quantizer: '${NM} --defined-only ${LIB}' failed")
endif()
attn_matching_symbols("${defined}"
  "(calibrate_|quantize_attention|quantize_transformer|quantize_multiplier|choose_activation_quant|softmax_s8_params|rope_table)"
  found)
if(found)
  list(JOIN found "\n  " names)
  message(FATAL_ERROR "${LIB} defines offline-quantizer symbols:\n  ${names}")
endif()
message(STATUS "no offline-quantizer symbol in ${LIB}")
