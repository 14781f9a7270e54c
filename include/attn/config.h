// attn/config.h: compile-time limits. Override any of them with -D on the
// compiler command line (the same value for the library and its users).
#pragma once

// Largest embed_dim, head_dim, kdim or vdim the library accepts.
#ifndef ATTN_MAX_DIM
#define ATTN_MAX_DIM 4096
#endif

// Largest number of heads.
#ifndef ATTN_MAX_HEADS
#define ATTN_MAX_HEADS 64
#endif

// Largest query or key sequence length.
#ifndef ATTN_MAX_SEQ
#define ATTN_MAX_SEQ 65536
#endif

// Alignment of the arena buffer and of every buffer carved from it, in bytes.
#ifndef ATTN_ARENA_ALIGN
#define ATTN_ARENA_ALIGN 16
#endif

// Query rows processed per tile by forward(); the score scratch is
// ATTN_TILE_ROWS x S. Larger tiles reuse weights better, smaller ones save RAM.
// Application cores (x86-64, AArch64, ARMv7-A) have caches and RAM for a
// 48-row tile (a multiple of the 6-row and 4-row SIMD blocks; measured on
// x86-64, 16..64 rows are within noise of each other, 4 rows is up to 20%
// slower); microcontrollers keep 4.
#ifndef ATTN_TILE_ROWS
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'A')
#define ATTN_TILE_ROWS 48
#else
#define ATTN_TILE_ROWS 4
#endif
#endif

// Which dtypes the library carries (1: compiled in, 0: left out). CMake sets
// them from ATTN_DTYPES; a plain-Makefile build passes -DATTN_WITH_F32=0 and
// leaves out the *_f32*.cpp files (see port/make/attn.mk). The same values
// for the library and its users.
#ifndef ATTN_WITH_F32
#define ATTN_WITH_F32 1
#endif
#ifndef ATTN_WITH_S8
#define ATTN_WITH_S8 1
#endif
#ifndef ATTN_WITH_S16
#define ATTN_WITH_S16 1
#endif
