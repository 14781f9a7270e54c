// consumer.cpp: what a C++ project does with attn: one attention forward
// through the C++ API (attn/attn.hpp), on a static arena whose size is a
// constant expression. Exits 0 when the result is the hand-computed one
// (the case of consumer.c).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "attn/attn.hpp"

namespace {

constexpr attn::AttentionConfig kConfig{/*embed_dim=*/2, /*num_heads=*/1,
                                        /*head_dim=*/0,  /*kdim=*/0,
                                        /*vdim=*/0,      /*bias=*/false};
constexpr size_t kArenaBytes = attn::attention_arena_bytes(kConfig, attn::DType::kF32, 1, 2);
static_assert(kArenaBytes > 0, "a valid configuration");
alignas(ATTN_ARENA_ALIGN) uint8_t arena_buf[kArenaBytes];

attn::Status run(float* y) {
  static const float eye[4] = {1, 0, 0, 1};  // [2, 2]
  static const float q[2] = {1, 2};          // [L=1, E=2]
  static const float kv[4] = {1, 0, 0, 1};   // [S=2, E=2]
  attn::Plan plan;
  ATTN_TRY(attn::plan_attention(kConfig, attn::DType::kF32, 1, 2, &plan));
  attn::Arena arena;
  ATTN_TRY(arena.init(arena_buf, sizeof arena_buf));
  attn::WeightsF32 w;
  w.wq = w.wk = w.wv = w.wo = eye;
  attn::IoF32 io;
  io.query = q;
  io.key = io.value = kv;
  io.output = y;
  return attn::forward_f32(plan, w, attn::Mask{}, io, arena);
}

}  // namespace

int main() {
  float y[2] = {0, 0};
  const attn::Status s = run(y);
  if (s != attn::Status::kOk) {
    std::printf("consumer (C++): %s\n", attn::status_name(s));
    return 1;
  }
  const double s0 = 1.0 / std::sqrt(2.0), s1 = 2.0 / std::sqrt(2.0);
  const double p0 = std::exp(s0) / (std::exp(s0) + std::exp(s1));
  std::printf("consumer (C++): y = [%.6f, %.6f], want [%.6f, %.6f]\n", static_cast<double>(y[0]),
              static_cast<double>(y[1]), p0, 1.0 - p0);
  return std::fabs(static_cast<double>(y[0]) - p0) < 1e-6 &&
                 std::fabs(static_cast<double>(y[1]) - (1.0 - p0)) < 1e-6
             ? 0
             : 1;
}
