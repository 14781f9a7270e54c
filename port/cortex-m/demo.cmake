# The Cortex-M images of tools/demo.sh: the s8 encoder (the 佛跳墙 classifier,
# demo/demo_encoder_s8.cpp) and the s8 byte-level Llama (demo/demo_decoder_s8.cpp:
# prompt text in, text out, through the tokenizer in its model file).
# Each embeds an s8 model file (`attn emit-c`: demo_<part>_model.h) and what
# the host demo wrote to compare with (demo_<part>_data.h, --emit-mcu: the
# encoder's predictions; the decoder's prompt text and the host's s8 text).
# Configure with -DATTN_DEMO_MCU_DIR=DIR (tools/demo.sh: out/mcu); each image
# is defined when both its headers are in DIR. Not built otherwise.
set(ATTN_DEMO_MCU_DIR "" CACHE PATH "directory of the demo's generated headers (tools/demo.sh: out/mcu)")
if(ATTN_DEMO_MCU_DIR)
  foreach(part encoder decoder)
    if(EXISTS ${ATTN_DEMO_MCU_DIR}/demo_${part}_model.h AND EXISTS ${ATTN_DEMO_MCU_DIR}/demo_${part}_data.h)
      attn_port_image(attn_demo_${part}_s8 SOURCES demo/demo_${part}_s8.cpp)
      target_include_directories(attn_demo_${part}_s8 PRIVATE ${ATTN_DEMO_MCU_DIR})
      # The classifier's float sums as the host computes them (no fused multiply-add).
      target_compile_options(attn_demo_${part}_s8 PRIVATE -ffp-contract=off)
      add_test(NAME "${ATTN_TEST_PREFIX}demo-${part}-s8" COMMAND attn_demo_${part}_s8)
    endif()
  endforeach()
endif()
