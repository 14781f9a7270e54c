// attn/attn.hpp: the whole C++ API.
#pragma once

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/config.h"
#include "attn/decode.h"
#include "attn/kernel_set.h"
#include "attn/kernels.h"
#include "attn/sampler.h"
#include "attn/status.h"
#include "attn/tensor.h"
