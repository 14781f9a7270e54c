/* consumer.c: what a C firmware project does with attn: one attention
 * forward through the C API (attn/attn.h), on a static arena sized at
 * compile time. Built by every consumer project (CMake find_package,
 * add_subdirectory, pkg-config, plain Makefile); exits 0 when the result is
 * the hand-computed one.
 *
 * E = 2, H = 1, L = 1, S = 2, identity projections, no bias:
 * p = softmax([q.k0, q.k1] / sqrt(2)), y = p0 k0 + p1 k1. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn/attn.h"

static ATTN_ALIGNED_ARENA uint8_t arena[ATTN_ARENA_BYTES_F32(2, 2, 1, 2)];

int main(void) {
  static const float eye[4] = {1, 0, 0, 1};
  static const float q[2] = {1, 2};
  static const float kv[4] = {1, 0, 0, 1};
  float y[2] = {0, 0};
  attn_config cfg;
  attn_plan plan;
  attn_weights_f32 w = {eye, eye, eye, eye, NULL, NULL, NULL, NULL};
  attn_io_f32 io = {q, kv, kv, y, NULL, 0};
  attn_status s;
  const double s0 = 1.0 / sqrt(2.0), s1 = 2.0 / sqrt(2.0);
  const double p0 = exp(s0) / (exp(s0) + exp(s1));

  memset(&cfg, 0, sizeof cfg);
  cfg.embed_dim = 2;
  cfg.num_heads = 1;
  s = attn_plan_init(&plan, &cfg, ATTN_DTYPE_F32, 1, 2, 0);
  if (s == ATTN_OK) s = attn_forward_f32(&plan, &w, NULL, &io, arena, sizeof arena);
  if (s != ATTN_OK) {
    printf("consumer (C): %s\n", attn_status_name(s));
    return 1;
  }
  printf("consumer (C): y = [%.6f, %.6f], want [%.6f, %.6f]\n", (double)y[0], (double)y[1], p0, 1.0 - p0);
  return fabs((double)y[0] - p0) < 1e-6 && fabs((double)y[1] - (1.0 - p0)) < 1e-6 ? 0 : 1;
}
