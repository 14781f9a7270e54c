# Cost probe images for tools/mcu-cost: instructions per forward on the MCU
# shapes (cost/*.cpp), per dtype the board runs, linked against libattn as
# dispatch.cpp configures it (attn_cost_<dtype>) and against the ref-only
# copy (attn_cost_<dtype>_ref) for the "variant vs ref" comparison. The first
# is also a ctest, so the probes keep building and running.
if(ATTN_BOARD_HAS_FPU)
  attn_port_image(attn_cost_f32 SOURCES cost/cost_f32.cpp)
  attn_port_image(attn_cost_f32_ref SOURCES cost/cost_f32.cpp LIB attn_ref)
  add_test(NAME "${ATTN_TEST_PREFIX}cost-f32" COMMAND attn_cost_f32)
  set_tests_properties("${ATTN_TEST_PREFIX}cost-f32" PROPERTIES TIMEOUT 600)
endif()
