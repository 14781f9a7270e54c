// A linear's output does not depend on which other outputs the same call
// computes: the product over all N output rows of w equals, bit for bit, the
// products over any split of those rows into ranges, which is what a split of
// the output rows over threads computes. Every variant of the kernel table
// this CPU runs, f32 and int8, at M = 1 .. 3 (a decode step: the dot-product
// paths, one weight row at a time from kernels/stream.h's size on, blocks of
// 4 rows below it, so a range and the whole matrix take different paths)
// and M = 4, 7 (the panel paths); ranges cut at arbitrary rows, and at
// multiples of 16 for weights packed into panels of 16 rows. The integer
// variants are also compared with the ref row: the variant tester's buffers
// are smaller than the size from which the weights are streamed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "kernels/kernel_table.h"
#include "kernels/stream.h"

namespace d = attn::detail;

namespace {

struct Shape {
  int32_t N, K;
};
// Small; f32 from the streaming size on (300 x 300 x 4 bytes, 1100 x 64 x 4);
// int8 from it too (600 x 450, 1100 x 250).
constexpr Shape kShapes[] = {{37, 29}, {300, 300}, {1100, 64}, {600, 450}, {1100, 250}};
constexpr int32_t kRows[] = {1, 2, 3, 4, 7};

// Cut points of [0, N): 0, N and `cuts` random rows between, sorted (a
// multiple of `align` each), plus 1 and N - 1 for one-row ranges at the ends.
std::vector<int32_t> cut_points(int32_t N, int32_t align, std::mt19937& rng) {
  std::vector<int32_t> c{0, N};
  if (align == 1 && N > 2) c.insert(c.end(), {1, N - 1});
  std::uniform_int_distribution<int32_t> pick(1, N - 1);
  for (int i = 0; i < 6; ++i) c.push_back(pick(rng) / align * align);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

#if ATTN_WITH_F32
TEST_CASE("f32 linears give the same bits on any range of output rows as on all of them",
          "[kernels][split]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const Shape& s : kShapes) {
    for (int32_t M : kRows) {
      std::vector<float> x(static_cast<size_t>(M) * s.K), w(static_cast<size_t>(s.N) * s.K),
          b(static_cast<size_t>(s.N));
      for (auto& v : x) v = dist(rng);
      for (auto& v : w) v = dist(rng);
      for (auto& v : b) v = dist(rng);
      const size_t out = static_cast<size_t>(M) * s.N;
      const auto xm = attn::matrix(x.data(), M, s.K);
      for (const auto& row : d::kLinearF32) {
        if (!d::row_runs(row)) continue;
        INFO("isa " << row.isa << " M " << M << " N " << s.N << " K " << s.K << " streams "
                    << d::stream_weights(M, s.N, s.K, sizeof(float)));
        std::vector<float> all(out), parts(out);
        row.fn(xm, attn::matrix(w.data(), s.N, s.K), b.data(), attn::matrix(all.data(), M, s.N));
        const std::vector<int32_t> c = cut_points(s.N, 1, rng);
        for (size_t i = 0; i + 1 < c.size(); ++i) {
          const int32_t n0 = c[i], n = c[i + 1] - c[i];
          row.fn(xm, attn::ConstMatF32{w.data() + static_cast<ptrdiff_t>(n0) * s.K, n, s.K, s.K},
                 b.data() + n0, attn::MatF32{parts.data() + n0, M, n, s.N});
        }
        CHECK(same_bytes(all, parts));
      }
      // Packed panels of 16 rows: ranges at multiples of 16 (panels + n0 K).
      for (const auto& row : d::kPackedLinearF32) {
        if (!d::row_runs(row) || row.fn.linear == nullptr) continue;
        INFO("packed isa " << row.isa << " M " << M << " N " << s.N << " K " << s.K);
        std::vector<float> panels(row.fn.panels_floats(s.N, s.K));
        row.fn.pack(attn::matrix(w.data(), s.N, s.K), panels.data());
        std::vector<float> all(out), parts(out);
        row.fn.linear(xm, attn::matrix(w.data(), s.N, s.K), panels.data(), b.data(),
                      attn::matrix(all.data(), M, s.N));
        const std::vector<int32_t> c = cut_points(s.N, 16, rng);
        for (size_t i = 0; i + 1 < c.size(); ++i) {
          const int32_t n0 = c[i], n = c[i + 1] - c[i];
          row.fn.linear(xm, attn::ConstMatF32{w.data() + static_cast<ptrdiff_t>(n0) * s.K, n, s.K, s.K},
                        panels.data() + static_cast<ptrdiff_t>(n0) * s.K, b.data() + n0,
                        attn::MatF32{parts.data() + n0, M, n, s.N});
        }
        CHECK(same_bytes(all, parts));
      }
    }
  }
}
#endif

#if ATTN_WITH_S8
TEST_CASE("int8 linears give the ref's bytes on all output rows and on any range of them",
          "[kernels][split]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> d8(-128, 127);
  std::uniform_int_distribution<int32_t> mult(1 << 29, (1 << 30) + (1 << 29)), bias_d(-40000, 40000);
  for (const Shape& s : kShapes) {
    for (int32_t M : kRows) {
      std::vector<int8_t> x(static_cast<size_t>(M) * s.K), w(static_cast<size_t>(s.N) * s.K);
      for (auto& v : x) v = static_cast<int8_t>(d8(rng));
      for (auto& v : w) v = static_cast<int8_t>(d8(rng));
      std::vector<int32_t> bias(static_cast<size_t>(s.N)), m(bias.size()), sh(bias.size());
      for (size_t n = 0; n < bias.size(); ++n) {
        bias[n] = bias_d(rng);
        m[n] = mult(rng);
        sh[n] = -12 + static_cast<int32_t>(n % 5);
      }
      attn::LinearS8Params p;
      p.input_zero_point = 5;
      p.output_zero_point = -3;
      p.multiplier = m.data();
      p.shift = sh.data();
      const size_t out = static_cast<size_t>(M) * s.N;
      const auto xm = attn::matrix(x.data(), M, s.K);
      const auto wm = attn::matrix(w.data(), s.N, s.K);
      const auto wrows = [&](int32_t n0, int32_t n) {
        return attn::ConstMatS8{w.data() + static_cast<ptrdiff_t>(n0) * s.K, n, s.K, s.K};
      };
      const std::vector<int32_t> c = cut_points(s.N, 1, rng);
      {  // linear_s8
        const auto& ref = d::kLinearS8[std::size(d::kLinearS8) - 1];
        std::vector<int8_t> want(out);
        ref.fn(xm, wm, bias.data(), p, attn::matrix(want.data(), M, s.N));
        for (const auto& row : d::kLinearS8) {
          if (!d::row_runs(row)) continue;
          INFO("linear_s8 " << row.isa << " M " << M << " N " << s.N << " K " << s.K);
          std::vector<int8_t> all(out), parts(out);
          row.fn(xm, wm, bias.data(), p, attn::matrix(all.data(), M, s.N));
          for (size_t i = 0; i + 1 < c.size(); ++i) {
            const int32_t n0 = c[i], n = c[i + 1] - c[i];
            attn::LinearS8Params q = p;
            q.multiplier += n0;
            q.shift += n0;
            row.fn(xm, wrows(n0, n), bias.data() + n0, q, attn::MatS8{parts.data() + n0, M, n, s.N});
          }
          CHECK(same_bytes(all, want));
          CHECK(same_bytes(parts, want));
        }
      }
      // The int32-output rows: the LM head's logits, and W2 added into a residual.
      for (const auto* table : {&d::kLogitsS8, &d::kLinearResidualS8}) {
        const auto& ref = (*table)[std::size(*table) - 1];
        std::vector<int32_t> start(out);
        for (auto& v : start) v = bias_d(rng);
        std::vector<int32_t> want = start;
        ref.fn(xm, wm, bias.data(), m.data(), sh.data(), attn::matrix(want.data(), M, s.N));
        for (const auto& row : *table) {
          if (!d::row_runs(row)) continue;
          INFO((table == &d::kLogitsS8 ? "logits_s8 " : "linear_residual_s8 ")
               << row.isa << " M " << M << " N " << s.N << " K " << s.K);
          std::vector<int32_t> all = start, parts = start;
          row.fn(xm, wm, bias.data(), m.data(), sh.data(), attn::matrix(all.data(), M, s.N));
          for (size_t i = 0; i + 1 < c.size(); ++i) {
            const int32_t n0 = c[i], n = c[i + 1] - c[i];
            row.fn(xm, wrows(n0, n), bias.data() + n0, m.data() + n0, sh.data() + n0,
                   attn::MatS32{parts.data() + n0, M, n, s.N});
          }
          CHECK(same_bytes(all, want));
          CHECK(same_bytes(parts, want));
        }
      }
    }
  }
}
#endif
