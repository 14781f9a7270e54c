// catch_helpers.h: Catch2 helpers shared by the host test files (the
// benchmark programs use host_helpers.h, which needs no Catch2).
#pragma once

#include <catch2/catch.hpp>

#include <vector>

#include "attn/attention.h"
#include "host_helpers.h"

// y of one causal (windowed unless window is 0) self-attention forward over
// all L rows of x: planned for cfg at dtype dt, run by
// forward(plan, weights, mask, io, arena), every step required to succeed.
template <class T, class Weights, class Io>
std::vector<T> causal_forward(const attn::AttentionConfig& cfg, attn::DType dt, const Weights& weights,
                              const std::vector<T>& x, int L, int window,
                              attn::Status (*forward)(const attn::Plan&, const Weights&, const attn::Mask&,
                                                      const Io&, attn::Arena&)) {
  attn::Plan plan;
  REQUIRE(attn::plan_attention(cfg, dt, L, L, &plan) == attn::Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == attn::Status::kOk);
  attn::Mask mask;
  mask.causal = true;
  mask.window = window;
  std::vector<T> y(x.size());
  REQUIRE(forward(plan, weights, mask, {x.data(), x.data(), x.data(), y.data()}, arena) == attn::Status::kOk);
  return y;
}
