/* c_check.h: the checks of the C99 test programs (c_api_c99.c,
 * c_api_model_c99.c): each counts into g_checks, and a failure into
 * g_failures with its place on stderr. One program includes it once. */
#ifndef ATTN_TESTS_C_CHECK_H
#define ATTN_TESTS_C_CHECK_H

#include <stdio.h>

#include "attn/attn.h"

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                      \
  do {                                                                   \
    ++g_checks;                                                          \
    if (!(cond)) {                                                       \
      ++g_failures;                                                      \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                    \
  } while (0)

/* CHECK that a call returns `want`, printing both names otherwise. */
#define CHECK_STATUS(call, want)                                                             \
  do {                                                                                       \
    const attn_status got_ = (call);                                                         \
    ++g_checks;                                                                              \
    if (got_ != (want)) {                                                                    \
      ++g_failures;                                                                          \
      fprintf(stderr, "%s:%d: FAILED: %s returned %s, want %s\n", __FILE__, __LINE__, #call, \
              attn_status_name(got_), attn_status_name(want));                               \
    }                                                                                        \
  } while (0)

#endif
