#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_gradients_match;
using testing::expect_error;

struct ConvCase {
  int64_t n, h, w, c, kh, kw, o;
  std::pair<int, int> strides{1, 1};
  std::string padding = "valid";
  std::pair<int, int> dilation{1, 1};
  int groups = 1;
};

// Geometry of a case (conv_geometry is tested on its own below).
struct Geom {
  int64_t oh, ow;
  int pt, pl;
};
Geom geometry(const ConvCase& c) {
  const ConvGeometry gh = conv_geometry(c.h, int(c.kh), c.strides.first, c.dilation.first,
                                        c.padding, "test");
  const ConvGeometry gw = conv_geometry(c.w, int(c.kw), c.strides.second, c.dilation.second,
                                        c.padding, "test");
  return Geom{gh.out, gw.out, gh.pad_before, gw.pad_before};
}

// Visits every (output, input, filter) index triple of the convolution: the forward pass and both
// backward passes are the same loop nest with a different accumulation.
template <typename Fn>
void for_each_tap(const ConvCase& c, Fn fn) {
  const Geom g = geometry(c);
  const int64_t cg = c.c / c.groups, og = c.o / c.groups;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t o = 0; o < c.o; ++o)
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t iy = oy * c.strides.first - g.pt + ky * c.dilation.first;
              const int64_t ix = ox * c.strides.second - g.pl + kx * c.dilation.second;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              for (int64_t i = 0; i < cg; ++i) {
                const int64_t ic = (o / og) * cg + i;
                fn(((n * g.oh + oy) * g.ow + ox) * c.o + o, ((n * c.h + iy) * c.w + ix) * c.c + ic,
                   ((ky * c.kw + kx) * cg + i) * c.o + o);
              }
            }
}

Shape out_shape(const ConvCase& c) {
  const Geom g = geometry(c);
  return Shape{c.n, g.oh, g.ow, c.o};
}

Tensor reference_forward(const ConvCase& c, const Tensor& x, const Tensor& w) {
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  std::vector<double> y(size_t(out_shape(c).numel()), 0.0);
  for_each_tap(c, [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += xv[xi] * wv[wi]; });
  return Tensor::from_vector(y, out_shape(c)).cast(float32);
}

Tensor reference_backward_data(const ConvCase& c, const Tensor& dy, const Tensor& w) {
  const std::vector<double> dyv = dy.to_vector<double>(), wv = w.to_vector<double>();
  std::vector<double> dx(size_t(c.n * c.h * c.w * c.c), 0.0);
  for_each_tap(c, [&](int64_t yi, int64_t xi, int64_t wi) { dx[xi] += dyv[yi] * wv[wi]; });
  return Tensor::from_vector(dx, Shape{c.n, c.h, c.w, c.c}).cast(float32);
}

Tensor reference_backward_filter(const ConvCase& c, const Tensor& x, const Tensor& dy) {
  const std::vector<double> dyv = dy.to_vector<double>(), xv = x.to_vector<double>();
  std::vector<double> dw(size_t(c.kh * c.kw * (c.c / c.groups) * c.o), 0.0);
  for_each_tap(c, [&](int64_t yi, int64_t xi, int64_t wi) { dw[wi] += dyv[yi] * xv[xi]; });
  return Tensor::from_vector(dw, Shape{c.kh, c.kw, c.c / c.groups, c.o}).cast(float32);
}

Conv2DParams params(const ConvCase& c) {
  const ConvGeometry gh = conv_geometry(c.h, int(c.kh), c.strides.first, c.dilation.first,
                                        c.padding, "test");
  const ConvGeometry gw = conv_geometry(c.w, int(c.kw), c.strides.second, c.dilation.second,
                                        c.padding, "test");
  Conv2DParams p;
  p.stride_h = c.strides.first;
  p.stride_w = c.strides.second;
  p.dilation_h = c.dilation.first;
  p.dilation_w = c.dilation.second;
  p.pad_top = gh.pad_before;
  p.pad_bottom = gh.pad_after;
  p.pad_left = gw.pad_before;
  p.pad_right = gw.pad_after;
  p.groups = c.groups;
  return p;
}

std::string describe(const ConvCase& c) {
  return "x[" + std::to_string(c.n) + "," + std::to_string(c.h) + "," + std::to_string(c.w) +
         "," + std::to_string(c.c) + "] k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
         "->" + std::to_string(c.o) + " s(" + std::to_string(c.strides.first) + "," +
         std::to_string(c.strides.second) + ") " + c.padding + " d(" +
         std::to_string(c.dilation.first) + "," + std::to_string(c.dilation.second) + ") g" +
         std::to_string(c.groups);
}

std::vector<ConvCase> forward_cases() {
  return {
      {2, 7, 6, 3, 3, 3, 4},                                 // valid, odd sizes
      {2, 7, 6, 3, 3, 3, 4, {1, 1}, "same"},                 // same
      {2, 7, 7, 3, 3, 3, 5, {2, 2}, "same"},                 // stride 2 same, odd input
      {1, 8, 6, 2, 3, 3, 4, {2, 2}, "valid"},                // stride 2 valid
      {1, 6, 7, 3, 2, 3, 4, {2, 1}, "same"},                 // asymmetric kernel and strides
      {2, 9, 8, 3, 3, 3, 4, {1, 1}, "same", {2, 2}},         // dilation 2 same
      {1, 9, 9, 2, 3, 2, 3, {1, 1}, "valid", {2, 3}},        // dilation (2,3) valid
      {2, 6, 6, 4, 3, 3, 6, {1, 1}, "same", {1, 1}, 2},      // groups 2
      {2, 6, 5, 4, 3, 3, 8, {2, 2}, "same", {1, 1}, 4},      // depthwise, multiplier 2
      {2, 5, 5, 6, 1, 1, 6, {1, 1}, "valid", {1, 1}, 6},     // depthwise 1x1
      {2, 5, 5, 3, 1, 1, 7},                                 // 1x1
      {2, 8, 8, 16, 3, 3, 32, {1, 1}, "same"},               // blocked-layout weights
      {2, 9, 9, 32, 3, 3, 16, {2, 2}, "same"},               // blocked, stride 2
      {1, 6, 6, 32, 3, 3, 32, {1, 1}, "same", {1, 1}, 32},   // depthwise, blocked
  };
}

TEST(Conv2D, ForwardMatchesReference) {
  int seed = 1;
  for (const ConvCase& c : forward_cases()) {
    SCOPED_TRACE(describe(c));
    const Tensor x = random_normal({c.n, c.h, c.w, c.c}, 0, 1, float32, seed++);
    const Tensor w = random_normal({c.kh, c.kw, c.c / c.groups, c.o}, 0, 1, float32, seed++);
    const Tensor y = conv2d(x, w, c.strides, c.padding, c.dilation, c.groups);
    ASSERT_EQ(y.shape(), out_shape(c));
    expect_all_close(y, reference_forward(c, x, w), 1e-4, 1e-4);
  }
}

TEST(Conv2D, BackwardKernelsMatchReference) {
  int seed = 100;
  for (const ConvCase& c : forward_cases()) {
    SCOPED_TRACE(describe(c));
    const Tensor x = random_normal({c.n, c.h, c.w, c.c}, 0, 1, float32, seed++);
    const Tensor w = random_normal({c.kh, c.kw, c.c / c.groups, c.o}, 0, 1, float32, seed++);
    const Tensor dy = random_normal(out_shape(c), 0, 1, float32, seed++);
    Tensor dx = Tensor::empty(x.shape()), dw = Tensor::empty(w.shape());
    backend_for(x).conv2d_backward_data(dy, w, params(c), dx);
    backend_for(x).conv2d_backward_filter(x, dy, params(c), dw);
    expect_all_close(dx, reference_backward_data(c, dy, w), 1e-4, 1e-4);
    expect_all_close(dw, reference_backward_filter(c, x, dy), 1e-4, 2e-4);
    // Through autograd too: the gradient of sum(y * dy).
    GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    const Tensor y = conv2d(x, w, c.strides, c.padding, c.dilation, c.groups);
    const std::vector<Tensor> g = tape.gradient(y, {x, w}, dy);
    expect_all_close(g[0], dx, 1e-6, 1e-6);
    expect_all_close(g[1], dw, 1e-6, 1e-6);
  }
}

TEST(Conv2D, Gradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const std::vector<ConvCase> cases = {
      {1, 5, 5, 2, 3, 3, 3, {1, 1}, "same"},
      {2, 6, 5, 2, 3, 3, 2, {2, 2}, "valid"},
      {1, 5, 6, 2, 3, 2, 2, {2, 1}, "same"},
      {1, 7, 7, 2, 3, 3, 2, {1, 1}, "same", {2, 2}},
      {1, 5, 5, 4, 3, 3, 4, {1, 1}, "same", {1, 1}, 2},
      {1, 5, 5, 3, 3, 3, 3, {2, 2}, "same", {1, 1}, 3},
  };
  int seed = 200;
  for (const ConvCase& c : cases) {
    const std::string name = "conv2d " + describe(c);
    expect_gradients_match(
        name.c_str(),
        [c](const std::vector<Tensor>& in) {
          return conv2d(in[0], in[1], c.strides, c.padding, c.dilation, c.groups);
        },
        {random_normal({c.n, c.h, c.w, c.c}, 0, 1, float32, seed),
         random_normal({c.kh, c.kw, c.c / c.groups, c.o}, 0, 1, float32, seed + 1)},
        opts);
    seed += 2;
  }
}

// Cached primitives and per-thread scratch buffers must be safe to use from several threads at
// once (the trainer runs one replica per thread).
TEST(Conv2D, ConcurrentCallsFromSeveralThreads) {
  const ConvCase c{2, 8, 8, 16, 3, 3, 32, {1, 1}, "same"};
  const Tensor x = random_normal({c.n, c.h, c.w, c.c}, 0, 1, float32, 300);
  const Tensor w = random_normal({c.kh, c.kw, c.c, c.o}, 0, 1, float32, 301);
  const Tensor expected = reference_forward(c, x, w);
  std::vector<Tensor> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) results[t] = conv2d(x, w, c.strides, c.padding);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Tensor& r : results) expect_all_close(r, expected, 1e-4, 1e-4);
}

TEST(Conv2D, GeometryFollowsTensorFlow) {
  ConvGeometry g = conv_geometry(7, 3, 2, 1, "same", "t");
  EXPECT_EQ(g.out, 4);
  EXPECT_EQ(g.pad_before, 1);
  EXPECT_EQ(g.pad_after, 1);
  g = conv_geometry(6, 3, 2, 1, "same", "t");  // odd total padding: the extra goes after
  EXPECT_EQ(g.out, 3);
  EXPECT_EQ(g.pad_before, 0);
  EXPECT_EQ(g.pad_after, 1);
  g = conv_geometry(5, 1, 2, 1, "same", "t");
  EXPECT_EQ(g.out, 3);
  EXPECT_EQ(g.pad_before + g.pad_after, 0);
  g = conv_geometry(7, 3, 2, 1, "valid", "t");
  EXPECT_EQ(g.out, 3);
  EXPECT_EQ(g.pad_before + g.pad_after, 0);
  g = conv_geometry(9, 3, 1, 2, "valid", "t");  // dilated extent 5
  EXPECT_EQ(g.out, 5);
  g = conv_geometry(9, 3, 1, 2, "same", "t");
  EXPECT_EQ(g.out, 9);
  EXPECT_EQ(g.pad_before, 2);
  EXPECT_EQ(g.pad_after, 2);
  EXPECT_THROW(conv_geometry(2, 3, 1, 1, "valid", "t"), ShapeError);
  EXPECT_THROW(conv_geometry(5, 3, 1, 1, "full", "t"), ValueError);
  EXPECT_THROW(conv_geometry(5, 3, 0, 1, "same", "t"), ValueError);
}

TEST(Conv2D, Errors) {
  const Tensor x = zeros({2, 8, 8, 3});
  expect_error<ShapeError>([&] { conv2d(x, zeros({3, 3, 4, 8})); },
                           {"conv2d", "[2,8,8,3]", "[3,3,4,8]"});
  expect_error<ShapeError>([&] { conv2d(zeros({8, 8, 3}), zeros({3, 3, 3, 8})); },
                           {"conv2d", "[8,8,3]", "[3,3,3,8]"});
  expect_error<ShapeError>([&] { conv2d(x, zeros({3, 3, 3})); }, {"conv2d", "[2,8,8,3]", "[3,3,3]"});
  expect_error<ValueError>([&] { conv2d(zeros({2, 8, 8, 4}), zeros({3, 3, 2, 5}), {1, 1}, "same", {1, 1}, 2); },
                           {"conv2d", "groups", "[2,8,8,4]", "[3,3,2,5]"});
  expect_error<ShapeError>([&] { conv2d(x, zeros({9, 9, 3, 4})); }, {"conv2d", "larger"});
  expect_error<ShapeError>([&] { conv2d(x, zeros({3, 3, 3, 4}), {1, 1}, "valid", {4, 4}); },
                           {"conv2d"});
  expect_error<ValueError>([&] { conv2d(x, zeros({3, 3, 3, 4}), {1, 1}, "full"); },
                           {"conv2d", "full"});
  expect_error<ValueError>([&] { conv2d(x, zeros({3, 3, 3, 4}), {0, 1}); }, {"conv2d", "strides"});
  expect_error<DTypeError>([&] { conv2d(zeros({2, 8, 8, 3}, int64), zeros({3, 3, 3, 4})); },
                           {"conv2d", "int64"});
  // "same" never runs out of input.
  EXPECT_EQ(conv2d(x, zeros({9, 9, 3, 4}), {1, 1}, "same").shape(), Shape({2, 8, 8, 4}));
}

}  // namespace
}  // namespace strata
