# attn.mk: the attn library for a plain Makefile. Include it, then compile
# $(ATTN_SRCS) with $(ATTN_CPPFLAGS) $(ATTN_CXXFLAGS):
#
#   ATTN_ROOT := path/to/attn
#   ATTN_DTYPES := s8            # optional: f32 s8 s16 (default all three)
#   include $(ATTN_ROOT)/tools/make/attn.mk
#
# Everything here is the rule port/README.md writes out for vendor IDEs;
# nothing is generated. tests/consumers/run.cmake (ctest
# plain_makefile) checks that ATTN_SRCS is exactly the list CMake compiles.

ATTN_ROOT ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
ATTN_DTYPES ?= f32 s8 s16
ATTN_KERNELS ?= auto

# Sources: every .cpp under src/ (the deepest today is src/kernels/<op>/x.cpp).
ATTN_ALL_SRCS := $(sort $(wildcard $(ATTN_ROOT)/src/*.cpp $(ATTN_ROOT)/src/*/*.cpp \
                                   $(ATTN_ROOT)/src/*/*/*.cpp $(ATTN_ROOT)/src/*/*/*/*.cpp))

# A dtype left out drops every file whose name carries its token
# (x_f32.cpp, x_f32_ref.cpp, ...) and is defined to 0 (ATTN_WITH_F32=0).
ATTN_DROPPED_DTYPES := $(filter-out $(ATTN_DTYPES),f32 s8 s16)
attn_has_dtype = $(or $(filter %_$(2).cpp,$(notdir $(1))),$(findstring _$(2)_,$(notdir $(1))))
attn_dropped = $(strip $(foreach d,$(ATTN_DROPPED_DTYPES),$(call attn_has_dtype,$(1),$(d))))
ATTN_SRCS := $(foreach f,$(ATTN_ALL_SRCS),$(if $(call attn_dropped,$(f)),,$(f)))
# Without f32, the offline quantizer goes too: it reads float weights and runs the f32 forward.
ifneq ($(filter f32,$(ATTN_DROPPED_DTYPES)),)
ATTN_SRCS := $(filter-out $(ATTN_ROOT)/src/quant/%,$(ATTN_SRCS))
endif

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

# For users of the headers (C or C++), and for compiling the library itself.
ATTN_USER_CPPFLAGS := $(ATTN_INCLUDES) $(ATTN_DEFINES)
ATTN_CPPFLAGS := $(ATTN_INCLUDES) $(ATTN_PRIVATE_INCLUDES) $(ATTN_DEFINES)
# C++17; the library needs no exceptions, RTTI or thread-safe statics.
ATTN_CXXFLAGS := -std=c++17 -fno-exceptions -fno-rtti -fno-threadsafe-statics
