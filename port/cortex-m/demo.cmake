# The s8 demo image of tools/demo.sh: the trained 佛跳墙 classifier on the
# board, checked against the host's predictions. Its data header comes from
# the host demo (attn_example_demo --emit-mcu FILE.h); configure with
# -DATTN_DEMO_MCU_HEADER=FILE.h to build it. Not built otherwise.
set(ATTN_DEMO_MCU_HEADER "" CACHE FILEPATH "demo_mcu.h from attn_example_demo --emit-mcu")
if(ATTN_DEMO_MCU_HEADER)
  attn_port_image(attn_demo_s8 SOURCES demo/demo_s8.cpp)
  get_filename_component(_attn_demo_dir ${ATTN_DEMO_MCU_HEADER} DIRECTORY)
  target_include_directories(attn_demo_s8 PRIVATE ${_attn_demo_dir})
  add_test(NAME "${ATTN_TEST_PREFIX}demo-s8" COMMAND attn_demo_s8)
endif()
