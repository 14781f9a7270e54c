# Cost probe images for tools/bench/mcu-cost: instructions per forward on the MCU
# shapes (cost/*.cpp), per dtype the board runs, linked against libattn as
# the kernel table picks them (attn_cost_<dtype>) and against the ref-only
# copy (attn_cost_<dtype>_ref) for the "variant vs ref" comparison. The first
# is also a ctest, so the probes keep building and running.
if(ATTN_BOARD_HAS_FPU)
  attn_port_image(attn_cost_f32 SOURCES cost/cost_f32.cpp)
  attn_port_image(attn_cost_f32_ref SOURCES cost/cost_f32.cpp LIB attn_ref)
  add_test(NAME "${ATTN_TEST_PREFIX}cost-f32" COMMAND attn_cost_f32)
  set_tests_properties("${ATTN_TEST_PREFIX}cost-f32" PROPERTIES TIMEOUT 600)
endif()
# The spreads of the data sweep that remain (instructions; port/README.md,
# "Timing", says where they come from). Not listed: 0.
set(_attn_sweep_spread_mps2-an385_s8 33071)      # ref kernels: requantization clamps, rounding
set(_attn_sweep_spread_mps2-an385_s16 32640)     # ref kernels: requantization clamps
set(_attn_sweep_spread_mps2-an386_s16 24480)     # ref s16 kernels: requantization clamps
set(_attn_sweep_spread_mps2-an500_s16 24480)     # ref s16 kernels: requantization clamps
set(_attn_sweep_spread_mps3-an547_s8 11968)      # mve kernels: the Q.K^T fold
set(_attn_sweep_spread_mps3-an547_s16 32640)     # ref s16 kernels: requantization clamps
set("_attn_sweep_spread_mps3-an547,clang_s8" 11718)  # mve kernels: the Q.K^T fold (+ 6: see port/README.md)
# Integer probes on every board (the M3 included): cost/cost_fixed.cpp built
# for s8 and s16.
foreach(bits 8 16)
  if("s${bits}" IN_LIST ATTN_DTYPES)
    foreach(suffix "" "_ref")
      set(image attn_cost_s${bits}${suffix})
      if(suffix STREQUAL "_ref")
        attn_port_image(${image} SOURCES cost/cost_fixed.cpp LIB attn_ref)
      else()
        attn_port_image(${image} SOURCES cost/cost_fixed.cpp)
      endif()
      target_compile_definitions(${image} PRIVATE ATTN_COST_BITS=${bits})
    endforeach()
    add_test(NAME "${ATTN_TEST_PREFIX}cost-s${bits}" COMMAND attn_cost_s${bits})
    set_tests_properties("${ATTN_TEST_PREFIX}cost-s${bits}" PROPERTIES TIMEOUT 600)
    # The data sweep (tools/bench/mcu-cost --data-sweep): the 64/64/4 forward on six
    # kinds of data; fails if their instruction counts differ by more than
    # ATTN_COST_SWEEP_SPREAD_S<bits> (port/README.md, "Timing").
    set(image attn_cost_sweep_s${bits})
    attn_port_image(${image} SOURCES cost/cost_fixed.cpp)
    set(spread 0)
    if(DEFINED ATTN_COST_SWEEP_SPREAD_S${bits})
      set(spread ${ATTN_COST_SWEEP_SPREAD_S${bits}})
    elseif(DEFINED _attn_sweep_spread_${ATTN_BOARD_LABEL}_s${bits})
      set(spread ${_attn_sweep_spread_${ATTN_BOARD_LABEL}_s${bits}})
    endif()
    target_compile_definitions(${image} PRIVATE ATTN_COST_BITS=${bits} ATTN_COST_SWEEP=1
                                                ATTN_COST_SWEEP_SPREAD=${spread})
    add_test(NAME "${ATTN_TEST_PREFIX}cost-sweep-s${bits}" COMMAND ${image})
    set_tests_properties("${ATTN_TEST_PREFIX}cost-sweep-s${bits}" PROPERTIES TIMEOUT 120)
  endif()
endforeach()
# Per-kernel instructions at the 64/64/4 shape, dispatched vs ref (cost/cost_kernels.cpp).
if("s8" IN_LIST ATTN_DTYPES)
  attn_port_image(attn_cost_kernels SOURCES cost/cost_kernels.cpp)
  add_test(NAME "${ATTN_TEST_PREFIX}cost-kernels" COMMAND attn_cost_kernels)
endif()
# The s8/s16 decode and model images build their Q1.14 rotary tables on the
# device with attn::rope_table, which belongs to the offline quantizer (not
# in libattn.a): they compile that one file themselves.
set(ATTN_PORT_ROPE_TABLE ${PROJECT_SOURCE_DIR}/src/quant/rope_table.cpp)
# Instructions per decoded token at contexts 64, 256, 1024 (cost/cost_decode.cpp):
# s8 and s16 on every board, f32 where the board has an FPU.
foreach(bits 8 16)
  if("s${bits}" IN_LIST ATTN_DTYPES)
    attn_port_image(attn_cost_decode_s${bits} SOURCES cost/cost_decode.cpp ${ATTN_PORT_ROPE_TABLE})
    target_compile_definitions(attn_cost_decode_s${bits} PRIVATE ATTN_COST_DECODE_F32=0
                                                                  ATTN_COST_DECODE_BITS=${bits})
    add_test(NAME "${ATTN_TEST_PREFIX}cost-decode-s${bits}" COMMAND attn_cost_decode_s${bits})
    set_tests_properties("${ATTN_TEST_PREFIX}cost-decode-s${bits}" PROPERTIES TIMEOUT 600)
  endif()
endforeach()
if(ATTN_BOARD_HAS_FPU AND "f32" IN_LIST ATTN_DTYPES)
  attn_port_image(attn_cost_decode_f32 SOURCES cost/cost_decode.cpp)
  target_compile_definitions(attn_cost_decode_f32 PRIVATE ATTN_COST_DECODE_F32=1)
  add_test(NAME "${ATTN_TEST_PREFIX}cost-decode-f32" COMMAND attn_cost_decode_f32)
  set_tests_properties("${ATTN_TEST_PREFIX}cost-decode-f32" PROPERTIES TIMEOUT 600)
endif()
# Whole s8 models (cost/cost_model.cpp, cost/model_s8.h): a BERT-style encoder
# forward and one decode step of a stories260K-shaped decoder (decoder_s4:
# the same with int4 FFN weights), with random weights made on the device;
# attn_minimal_model_s8 is their flash figure.
if("s8" IN_LIST ATTN_DTYPES)
  attn_port_image(attn_minimal_model_s8 SOURCES images/minimal_model.cpp)
  add_test(NAME "${ATTN_TEST_PREFIX}minimal-model-s8" COMMAND attn_minimal_model_s8)
  foreach(model encoder decoder decoder_s4)
    set(image attn_cost_model_${model})
    attn_port_image(${image} SOURCES cost/cost_model.cpp ${ATTN_PORT_ROPE_TABLE})
    if(model MATCHES "^decoder")
      target_compile_definitions(${image} PRIVATE ATTN_COST_MODEL_DECODER=1)
    endif()
    if(model MATCHES "_s4$")
      target_compile_definitions(${image} PRIVATE ATTN_COST_MODEL_S4=1)
    endif()
    add_test(NAME "${ATTN_TEST_PREFIX}cost-model-${model}" COMMAND ${image})
    set_tests_properties("${ATTN_TEST_PREFIX}cost-model-${model}" PROPERTIES TIMEOUT 600)
  endforeach()
endif()
