#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_gradients_match;
using testing::expect_error;

struct PoolCase {
  int64_t n, h, w, c;
  std::pair<int, int> window, strides;
  std::string padding;
};

// Reference pooling; average excludes padding (TF "SAME"). Also returns, for max pooling, the
// flat input index of each output's winner (first maximum) for the backward reference.
Tensor reference_pool(bool is_max, const PoolCase& p, const Tensor& x,
                      std::vector<int64_t>* argmax = nullptr) {
  const ConvGeometry gh = conv_geometry(p.h, p.window.first, p.strides.first, 1, p.padding, "t");
  const ConvGeometry gw = conv_geometry(p.w, p.window.second, p.strides.second, 1, p.padding, "t");
  const std::vector<double> xv = x.to_vector<double>();
  std::vector<double> y;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oy = 0; oy < gh.out; ++oy)
      for (int64_t ox = 0; ox < gw.out; ++ox)
        for (int64_t c = 0; c < p.c; ++c) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t count = 0, best_i = -1;
          for (int ky = 0; ky < p.window.first; ++ky)
            for (int kx = 0; kx < p.window.second; ++kx) {
              const int64_t iy = oy * p.strides.first - gh.pad_before + ky;
              const int64_t ix = ox * p.strides.second - gw.pad_before + kx;
              if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
              const int64_t i = ((n * p.h + iy) * p.w + ix) * p.c + c;
              if (xv[i] > best) best = xv[i], best_i = i;
              sum += xv[i];
              ++count;
            }
          y.push_back(is_max ? best : sum / double(count));
          if (argmax) argmax->push_back(best_i);
        }
  return Tensor::from_vector(y, Shape{p.n, gh.out, gw.out, p.c}).cast(float32);
}

// Distinct values at least 0.05 apart, so finite differences never flip a max.
Tensor distinct_input(const Shape& shape, uint64_t seed) {
  std::vector<float> v(size_t(shape.numel()));
  std::iota(v.begin(), v.end(), 0.0f);
  const std::vector<float> r = random_uniform({shape.numel()}, 0, 1, float32, int64_t(seed)).to_vector<float>();
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r[a] < r[b]; });
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[order[i]] = 0.05f * float(i) - 0.025f * float(v.size());
  return Tensor::from_vector(out, shape);
}

std::vector<PoolCase> cases() {
  return {
      {2, 6, 6, 3, {2, 2}, {2, 2}, "valid"},
      {2, 7, 7, 3, {2, 2}, {2, 2}, "valid"},
      {2, 7, 7, 3, {3, 3}, {2, 2}, "same"},
      {1, 6, 5, 2, {3, 3}, {1, 1}, "same"},
      {1, 7, 6, 2, {2, 3}, {1, 2}, "same"},
      {2, 8, 8, 16, {3, 3}, {2, 2}, "same"},
      {1, 5, 5, 17, {5, 5}, {1, 1}, "valid"},
  };
}

std::string describe(const PoolCase& p) {
  return "x[" + std::to_string(p.n) + "," + std::to_string(p.h) + "," + std::to_string(p.w) +
         "," + std::to_string(p.c) + "] window(" + std::to_string(p.window.first) + "," +
         std::to_string(p.window.second) + ") strides(" + std::to_string(p.strides.first) + "," +
         std::to_string(p.strides.second) + ") " + p.padding;
}

TEST(Pooling, ForwardMatchesReference) {
  uint64_t seed = 1;
  for (const PoolCase& p : cases()) {
    SCOPED_TRACE(describe(p));
    const Tensor x = random_normal({p.n, p.h, p.w, p.c}, 0, 1, float32, int64_t(seed++));
    expect_all_close(max_pool2d(x, p.window, p.strides, p.padding), reference_pool(true, p, x),
                     1e-6, 1e-6);
    expect_all_close(avg_pool2d(x, p.window, p.strides, p.padding), reference_pool(false, p, x),
                     1e-5, 1e-6);
  }
}

TEST(Pooling, MaxBackwardRoutesToTheWinner) {
  uint64_t seed = 50;
  for (const PoolCase& p : cases()) {
    SCOPED_TRACE(describe(p));
    const Tensor x = distinct_input({p.n, p.h, p.w, p.c}, seed++);
    std::vector<int64_t> winner;
    const Tensor ref = reference_pool(true, p, x, &winner);
    const Tensor dy = random_normal(ref.shape(), 0, 1, float32, int64_t(seed++));
    std::vector<double> dx_ref(size_t(x.numel()), 0.0);
    const std::vector<double> dyv = dy.to_vector<double>();
    for (size_t i = 0; i < winner.size(); ++i) dx_ref[size_t(winner[i])] += dyv[i];
    GradientTape tape;
    tape.watch(x);
    const Tensor y = max_pool2d(x, p.window, p.strides, p.padding);
    const Tensor dx = tape.gradient(y, {x}, dy)[0];
    expect_all_close(dx, Tensor::from_vector(dx_ref, x.shape()).cast(float32), 1e-5, 1e-6);
  }
}

TEST(Pooling, Gradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const std::vector<PoolCase> small = {
      {1, 4, 4, 2, {2, 2}, {2, 2}, "valid"},
      {1, 5, 5, 2, {3, 3}, {2, 2}, "same"},
      {2, 5, 4, 1, {2, 3}, {1, 2}, "same"},
  };
  uint64_t seed = 80;
  for (const PoolCase& p : small) {
    const Tensor x = distinct_input({p.n, p.h, p.w, p.c}, seed++);
    expect_gradients_match(("max_pool2d " + describe(p)).c_str(),
                           [p](const std::vector<Tensor>& in) {
                             return max_pool2d(in[0], p.window, p.strides, p.padding);
                           },
                           {x}, opts);
    expect_gradients_match(("avg_pool2d " + describe(p)).c_str(),
                           [p](const std::vector<Tensor>& in) {
                             return avg_pool2d(in[0], p.window, p.strides, p.padding);
                           },
                           {x}, opts);
  }
}

TEST(Pooling, Errors) {
  EXPECT_THROW(max_pool2d(zeros({4, 4, 2}), {2, 2}, {2, 2}), ShapeError);
  expect_error<ShapeError>([] { avg_pool2d(zeros({4, 4, 2}), {2, 2}, {2, 2}); },
                           {"avg_pool2d", "[4,4,2]"});
  EXPECT_THROW(max_pool2d(zeros({1, 2, 2, 1}), {3, 3}, {1, 1}, "valid"), ShapeError);
  EXPECT_EQ(max_pool2d(zeros({1, 2, 2, 1}), {3, 3}, {1, 1}, "same").shape(), Shape({1, 2, 2, 1}));
  EXPECT_THROW(max_pool2d(zeros({1, 4, 4, 1}), {0, 2}, {1, 1}), ValueError);
  EXPECT_THROW(max_pool2d(zeros({1, 4, 4, 1}), {2, 2}, {2, 2}, "causal"), ValueError);
  EXPECT_THROW(max_pool2d(zeros({1, 4, 4, 1}, int64), {2, 2}, {2, 2}), DTypeError);
}

}  // namespace
}  // namespace strata
