# attn.mk: the attn library for a plain Makefile. Include it, then compile
# $(ATTN_SRCS) with $(ATTN_CPPFLAGS) $(ATTN_CXXFLAGS):
#
#   ATTN_ROOT := path/to/attn
#   ATTN_DTYPES := s8            # optional: f32 s8 s16 (default all three)
#   include $(ATTN_ROOT)/port/make/attn.mk
#
# Everything here is the rule port/README.md writes out for vendor IDEs;
# nothing is generated. tests/consumers/run.cmake (ctest
# plain_makefile) checks that ATTN_SRCS is exactly the list CMake compiles.

ATTN_ROOT ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
ATTN_DTYPES ?= f32 s8 s16
ATTN_KERNELS ?= auto

# Sources: every .cpp under src/ (the deepest today is src/kernels/<isa>/x.cpp).
ATTN_ALL_SRCS := $(sort $(wildcard $(ATTN_ROOT)/src/*.cpp $(ATTN_ROOT)/src/*/*.cpp \
                                   $(ATTN_ROOT)/src/*/*/*.cpp $(ATTN_ROOT)/src/*/*/*/*.cpp))

# A dtype left out drops every file whose name carries its token
# (x_f32.cpp, x_f32_ref.cpp, ...) and is defined to 0 (ATTN_WITH_F32=0).
ATTN_DROPPED_DTYPES := $(filter-out $(ATTN_DTYPES),f32 s8 s16)
attn_has_dtype = $(or $(filter %_$(2).cpp,$(notdir $(1))),$(findstring _$(2)_,$(notdir $(1))))
attn_dropped = $(strip $(foreach d,$(ATTN_DROPPED_DTYPES),$(call attn_has_dtype,$(1),$(d))))
ATTN_SRCS := $(foreach f,$(ATTN_ALL_SRCS),$(if $(call attn_dropped,$(f)),,$(f)))
# Host-only tooling, never part of the library (as in CMakeLists.txt): the
# offline quantizer (src/quant/) with the tokenizer blob writers
# (src/tokenizer/build/), and the .attn writer (src/format/writer.cpp,
# std::vector and exceptions: compile it without -fno-exceptions). A host
# program that calibrates models or writes tokenizers adds $(ATTN_QUANT_SRCS),
# one that writes .attn files $(ATTN_WRITER_SRCS).
ATTN_QUANT_SRCS := $(filter $(ATTN_ROOT)/src/quant/% $(ATTN_ROOT)/src/tokenizer/build/%,$(ATTN_SRCS))
ATTN_WRITER_SRCS := $(filter $(ATTN_ROOT)/src/format/writer.cpp,$(ATTN_SRCS))
ATTN_SRCS := $(filter-out $(ATTN_ROOT)/src/quant/% $(ATTN_ROOT)/src/tokenizer/build/% \
                          $(ATTN_ROOT)/src/format/writer.cpp,$(ATTN_SRCS))

# Include paths: include/ for users and the library, src/ for the library only.
ATTN_INCLUDES := -I$(ATTN_ROOT)/include
ATTN_PRIVATE_INCLUDES := -I$(ATTN_ROOT)/src

# Defines users must share with the library (all optional; see attn/config.h
# for the limits ATTN_MAX_DIM, ATTN_MAX_HEADS, ATTN_MAX_SEQ, ...).
attn_define_f32 := -DATTN_WITH_F32=0
attn_define_s8 := -DATTN_WITH_S8=0
attn_define_s16 := -DATTN_WITH_S16=0
ATTN_DEFINES := $(foreach d,$(ATTN_DROPPED_DTYPES),$(attn_define_$(d)))
ifeq ($(ATTN_KERNELS),ref)
ATTN_DEFINES += -DATTN_FORCE_REF=1
endif

# x86-64 targets (GCC or clang): each ISA's kernel files are compiled with
# that ISA's flags, whatever CXXFLAGS say, and the kernel table runs them
# only on a CPU that has the ISA (CPUID, read once at run time);
# CMakeLists.txt does the same. ATTN_X86_KERNELS=no leaves them out (only
# what CXXFLAGS target); ATTN_X86_AVX512VNNI=no leaves out the AVX-512 VNNI
# files (a compiler without -mavx512vnni). Any other target gets none of these
# flags and defines.
#
# The target is what `$(CXX) $(CXXFLAGS) -dumpmachine` says (clang's
# --target=... in CXXFLAGS counts), asked once, when first needed: CXX and
# CXXFLAGS may be set after this file is included. A Makefile that compiles
# the library with another compiler than $(CXX) names the target itself,
# e.g. ATTN_TARGET_MACHINE := arm-none-eabi (port/cortex-m/examples/c-firmware).
ATTN_TARGET_MACHINE ?= $(eval ATTN_TARGET_MACHINE := $(shell $(CXX) $(CXXFLAGS) -dumpmachine 2>/dev/null))$(ATTN_TARGET_MACHINE)
ATTN_X86_KERNELS ?= $(if $(and $(filter auto,$(ATTN_KERNELS)),$(filter x86_64-%,$(ATTN_TARGET_MACHINE))),yes,no)
ATTN_X86_AVX512VNNI ?= yes
ATTN_AVX2_FLAGS := -mavx2 -mfma
ATTN_AVX512VNNI_FLAGS := $(ATTN_AVX2_FLAGS) -mavx512f -mavx512bw -mavx512vl -mavx512vnni
# The split of large products over a caller's parallel-for (attn/parallel.h):
# off for bare-metal targets (*-none-eabi), as in CMake's Generic builds;
# ATTN_PARALLEL=1 for a multi-core part.
ATTN_PARALLEL ?= $(if $(filter %-none-eabi,$(ATTN_TARGET_MACHINE)),0,1)
# Deferred (=, not :=): decided when a compile line is written, with the final CXX.
ATTN_LIB_DEFINES = $(if $(filter yes,$(ATTN_X86_KERNELS)),-DATTN_AVX2_KERNELS=1 \
  $(if $(filter yes,$(ATTN_X86_AVX512VNNI)),-DATTN_AVX512VNNI_KERNELS=1)) \
  $(if $(filter 0,$(ATTN_PARALLEL)),-DATTN_PARALLEL=0)
# The extra flags of source file $(1): its ISA's, or nothing.
attn_isa_flags = $(if $(filter yes,$(ATTN_X86_KERNELS)),$(if $(filter %_avx2.cpp,$(1)),$(ATTN_AVX2_FLAGS),$(if $(and $(filter yes,$(ATTN_X86_AVX512VNNI)),$(filter %_avx512vnni.cpp,$(1))),$(ATTN_AVX512VNNI_FLAGS))))

# For users of the headers (C or C++), and for compiling the library itself.
ATTN_USER_CPPFLAGS := $(ATTN_INCLUDES) $(ATTN_DEFINES)
ATTN_CPPFLAGS = $(ATTN_INCLUDES) $(ATTN_PRIVATE_INCLUDES) $(ATTN_DEFINES) $(ATTN_LIB_DEFINES)
# C++17; the library needs no exceptions, RTTI or thread-safe statics.
ATTN_CXXFLAGS := -std=c++17 -fno-exceptions -fno-rtti -fno-threadsafe-statics
