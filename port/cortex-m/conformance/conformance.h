// conformance.h: the parts of the conformance runner image (runner.cpp).
#pragma once

// Fixed-point golden cases (fixed_cases.cpp): bit-exact against the host.
// Returns the number of failed cases; *cases receives how many ran.
int run_fixed_golden_cases(int* cases);

// decode_s8 / decode_s16 over a KV cache, in several prefill/step splits and
// with a window, against one causal forward on this board, bit-exact, for
// every fixed-point case of self-attention shape (fixed_cases.cpp). Returns
// the number of failed checks; *checks receives how many ran.
int run_decode_equivalence(int* checks);

// Every kernel variant of this build's tables against its table's ref row
// (kernel_equiv.cpp, through tests/variant_tester.h). Returns the number of
// failed checks; *checks receives how many ran.
int run_kernel_equivalence(int* checks);

// The integer model fixtures of tests/data/int_models (int_models.cpp): the
// forward, decode == forward and greedy generation of each, against the host
// ref build's results. Returns the failed fixtures; *fixtures and *checks
// receive how many ran.
int run_int_model_fixtures(int* fixtures, int* checks);
