// cost_common.h: what the cost probes (cost_*.cpp) share: the compiler named
// in their output lines, the MCU shapes of the forward probes, the random
// data they count on and the integer projections they point into it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "attn/attention.h"
#include "port/kernel_tag.h"
#include "port/port.h"

namespace cost {

#if defined(__clang__)
constexpr const char* kCompiler = "clang-" __clang_version__;
#else
constexpr const char* kCompiler = "gcc-" __VERSION__;
#endif

// The forward probes' shapes (cost_f32.cpp, cost_fixed.cpp).
struct Shape {
  int32_t L, E, H, head_dim;  // S == L (self-attention)
};
constexpr Shape kShapes[] = {{64, 64, 4, 0}, {81, 32, 8, 4}, {128, 64, 4, 0}};

constexpr attn::AttentionConfig config_of(const Shape& s) { return {s.E, s.H, s.head_dim}; }
constexpr size_t dim_of(const Shape& s) { return static_cast<size_t>(config_of(s).inner_dim()); }
constexpr size_t io_of(const Shape& s) { return static_cast<size_t>(s.L) * static_cast<size_t>(s.E); }
// The largest f(s) over kShapes: static buffers sized for every shape.
constexpr size_t max_of(size_t (*f)(const Shape&)) {
  size_t m = 0;
  for (const Shape& s : kShapes) m = f(s) > m ? f(s) : m;
  return m;
}

// The result line of one forward of shape s (D = d) in dtype `name`, for
// tools/bench/mcu-cost: its instructions, the plan's arena bytes and an op-by-op
// execution's peak bytes.
inline void print_measure(attn::DType dtype, const char* name, const Shape& s, size_t d, uint64_t insns,
                          size_t arena, size_t opbyop) {
  std::printf(
      "measure board=%s dtype=%s L=%ld S=%ld E=%ld H=%ld D=%ld insns=%lu arena=%lu opbyop=%lu kernels=%s "
      "compiler=%s\n",
      port_board_name(), name, static_cast<long>(s.L), static_cast<long>(s.L), static_cast<long>(s.E),
      static_cast<long>(s.H), static_cast<long>(d), static_cast<unsigned long>(insns),
      static_cast<unsigned long>(arena), static_cast<unsigned long>(opbyop), port_kernel_tag(dtype),
      kCompiler);
}

// The stack line of one forward of shape s, for tools/bench/mcu-cost: its whole-call
// stack peak in bytes (stack_peak below).
inline void print_stack(const char* name, const Shape& s, size_t stack) {
  std::printf("measure-stack board=%s dtype=%s L=%ld S=%ld E=%ld H=%ld stack=%lu\n", port_board_name(), name,
              static_cast<long>(s.L), static_cast<long>(s.L), static_cast<long>(s.E), static_cast<long>(s.H),
              static_cast<unsigned long>(stack));
}

// A forward probe's main(): count(s) for every shape (instructions), then
// stack(s) for every shape. The stack pass comes last, and is a function of
// its own (the probes instantiate one template twice), so that the counted
// runs execute exactly the instructions they did without it. 0 if all passed.
inline int measure_all(bool (*count)(const Shape&), bool (*stack)(const Shape&)) {
  bool ok = true;
  for (const Shape& s : kShapes) ok = count(s) && ok;
  for (const Shape& s : kShapes) ok = stack(s) && ok;
  return ok ? 0 : 1;
}

// ---- stack painting -------------------------------------------------------
// The free stack (from the linker script's __stack_limit up to just below the
// caller) is painted with a word; after the call the deepest word that
// changed gives its whole-call peak: every frame of the library and its
// kernels, their spills and buffers.
extern "C" uint32_t __stack_limit[];  // sections.ld
constexpr uint32_t kStackPaint = 0xC0DEC0DEu;

__attribute__((always_inline)) inline uintptr_t stack_pointer() {
  uintptr_t sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

// Word by word through a volatile pointer (no memset, whose own frame would
// sit in the painted range), stopping 64 bytes below this function's frame.
__attribute__((noinline)) inline void stack_paint() {
  const uintptr_t end = stack_pointer() - 64;
  for (volatile uint32_t* p = __stack_limit; reinterpret_cast<uintptr_t>(p) < end; ++p) *p = kStackPaint;
}

// The bytes of stack `*result = call()` used below the caller's stack pointer, with
// interrupts masked meanwhile (the counter's SysTick would otherwise add an
// exception frame wherever it lands). The SysTick wraps this misses make the
// instruction counter wrong afterwards: use it after the last counted region.
template <typename F, typename R>
__attribute__((always_inline)) inline size_t stack_peak(F&& call, R* result) {
  const uintptr_t sp = stack_pointer();
  stack_paint();
  __asm volatile("cpsid i" ::: "memory");
  *result = call();
  __asm volatile("cpsie i" ::: "memory");
  const volatile uint32_t* p = __stack_limit;
  while (reinterpret_cast<uintptr_t>(p) < sp && *p == kStackPaint) ++p;
  return static_cast<size_t>(sp - reinterpret_cast<uintptr_t>(p));
}

// A fixed LCG: the same data on every board.
struct Rng {
  uint32_t state;
  uint32_t next() { return state = state * 1664525u + 1013904223u; }
  int32_t uniform(int32_t spread) {  // [-spread, spread]
    return static_cast<int32_t>((next() >> 8) % static_cast<uint32_t>(2 * spread + 1)) - spread;
  }
};

// The integer projections' arrays: W weights, C output channels (biases of
// type Bias, requantization multipliers and shifts), filled with the spreads
// the probes count on: weights over all of int8, biases +-2000, multipliers
// in [0.5, 1) (Q31) and one shift.
template <typename Bias, size_t W, size_t C>
struct Projections {
  int8_t weight[W];
  Bias bias[C];
  int32_t multiplier[C];
  int32_t shift[C];

  // The first n_weights weights, then the first n_channels channels.
  void fill(Rng& rng, size_t n_weights, size_t n_channels, int32_t channel_shift) {
    for (size_t i = 0; i < n_weights; ++i) weight[i] = static_cast<int8_t>(rng.uniform(127));
    for (size_t i = 0; i < n_channels; ++i) {
      bias[i] = rng.uniform(2000);
      multiplier[i] = 0x40000000 + rng.uniform(0x3FFFFFFF / 2) + 0x1FFFFFFF;
      shift[i] = channel_shift;
    }
  }
  // ProjectionS8 / ProjectionS16 from weight w0 and channel c0 on.
  template <typename P>
  P at(size_t w0, size_t c0) const {
    P p;
    p.weight = weight + w0;
    p.bias = bias + c0;
    p.multiplier = multiplier + c0;
    p.shift = shift + c0;
    return p;
  }
};

}  // namespace cost
