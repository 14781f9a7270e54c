// attn/attn.hpp: the whole C++ API of the run-time library (libattn).
//
// Every public header but these (the X-macro lists status_list.h and
// role_list.h come in through status.h and model.h):
//   attn/attn.h      the C99 API over the same library (include it from C);
//   attn/tokenizer_build.h  host-side writers of tokenizer blobs (std::vector,
//                    in the attn_quant target);
//   attn/quantize.h  the offline quantizer (calibration and conversion in
//                    double), host-only tooling: its definitions live in the
//                    separate attn_quant target, which bare-metal builds never
//                    build. Include it, and link attn::quant, where a tool
//                    converts float models. (The transformer converter,
//                    quantize_transformer_s8 / _s16, is declared beside its
//                    types in attn/transformer_fixed.h; it too links only
//                    with attn::quant.)
#pragma once

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/config.h"
#include "attn/decode.h"
#include "attn/kernel_set.h"
#include "attn/kernels.h"
#include "attn/kernels_fixed.h"
#include "attn/model.h"
#include "attn/model_bytes.h"
#include "attn/parallel.h"
#include "attn/sampler.h"
#include "attn/status.h"
#include "attn/tensor.h"
#include "attn/tokenizer.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
