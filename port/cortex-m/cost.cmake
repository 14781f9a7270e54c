# Cost probe images for tools/mcu-cost: instructions per forward on the MCU
# shapes (cost/*.cpp), one image per dtype the board runs. Also registered
# with ctest so the probes keep building and running.
if(ATTN_BOARD_HAS_FPU)
  attn_port_image(attn_cost_f32 SOURCES cost/cost_f32.cpp)
  add_test(NAME "${ATTN_TEST_PREFIX}cost-f32" COMMAND attn_cost_f32)
  set_tests_properties("${ATTN_TEST_PREFIX}cost-f32" PROPERTIES TIMEOUT 600)
endif()
