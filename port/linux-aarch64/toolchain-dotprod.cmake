# Cortex-A, aarch64 with the Armv8.2 dot-product extension (SDOT/UDOT), for
# the int8 NEON kernels that use it. Runs under qemu-aarch64 -cpu cortex-a76,
# a core that has dotprod; the plain linux-aarch64 preset (cortex-a53, no
# dotprod) tests the fallback.
set(ATTN_AARCH64_MARCH armv8.2-a+dotprod)
set(ATTN_QEMU_CPU cortex-a76)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain.cmake)
