// port/kernel_tag.h: one token naming the kernels a dtype runs on this board,
// for the images' result lines: the ISA when every op runs the same one
// ("dsp", "mve", "ref"), else each op's ("linear:ref,scores:ref,softmax:dsp,
// weighted_sum:ref"). From attn::kernel_set(), the kernel table's own names.
#pragma once

#include <cstdio>
#include <cstring>

#include "attn/kernel_set.h"

inline const char* port_kernel_tag(attn::DType dtype) {
  static char tag[96];
  attn::KernelSet k;
  if (attn::kernel_set(dtype, &k) != attn::Status::kOk) return "none";
  if (std::strcmp(k.linear, k.scores) == 0 && std::strcmp(k.linear, k.softmax) == 0 &&
      std::strcmp(k.linear, k.weighted_sum) == 0) {
    return k.linear;
  }
  std::snprintf(tag, sizeof tag, "linear:%s,scores:%s,softmax:%s,weighted_sum:%s", k.linear, k.scores,
                k.softmax, k.weighted_sum);
  return tag;
}
