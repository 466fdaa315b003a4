// CUDA conv2d (cuDNN) against the CPU backend and a float64 reference, through the backend's three
// kernels and through the op's autograd: strides, dilation, groups (including depthwise), "valid"
// and "same" with symmetric and asymmetric padding, float32 with TF32 off (tight) and on (loose),
// float16, bfloat16 and float64, missing input channels, the algorithm cache, and
// finite-difference gradients on /gpu:0. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/dnn_test_utils.h"
#include "framework/backend/gpu_algorithm_stats.h"

namespace strata {
namespace {

using testing::random_input;
using testing::Tf32Scope;
using testing::Tolerance;

struct ConvCase {
  int64_t n, h, w, c, kh, kw, o;
  std::pair<int, int> strides{1, 1};
  std::string padding = "valid";
  std::pair<int, int> dilation{1, 1};
  int groups = 1;
};

std::string describe(const ConvCase& c) {
  auto s = [](int64_t v) { return std::to_string(v); };
  return "x[" + s(c.n) + "," + s(c.h) + "," + s(c.w) + "," + s(c.c) + "] k" + s(c.kh) + "x" +
         s(c.kw) + "->" + s(c.o) + " s(" + s(c.strides.first) + "," + s(c.strides.second) +
         ") d(" + s(c.dilation.first) + "," + s(c.dilation.second) + ") g" + s(c.groups) + " " +
         c.padding;
}

std::vector<ConvCase> cases() {
  return {
      {2, 7, 7, 3, 3, 3, 4},                                  // valid
      {2, 8, 7, 4, 3, 3, 8, {1, 1}, "same"},                  // symmetric padding 1
      {1, 8, 8, 3, 3, 3, 5, {2, 2}, "same"},                  // asymmetric: 0 before, 1 after
      {2, 7, 6, 4, 2, 2, 6, {1, 1}, "same"},                  // even window: 0 / 1
      {1, 9, 9, 2, 3, 3, 4, {1, 1}, "same", {2, 2}},          // dilation, symmetric
      {1, 10, 9, 2, 3, 2, 3, {2, 1}, "same", {2, 3}},         // dilation, asymmetric
      {2, 6, 6, 8, 3, 3, 8, {1, 1}, "same", {1, 1}, 2},       // groups
      {1, 6, 6, 4, 3, 3, 4, {2, 2}, "same", {1, 1}, 4},       // depthwise, asymmetric
      {2, 5, 5, 16, 1, 1, 32},                                // 1x1
      {4, 16, 16, 32, 3, 3, 64, {1, 1}, "same"},              // tensor-core sized
  };
}

Conv2DParams params(const ConvCase& c) {
  const ConvGeometry gh =
      conv_geometry(c.h, int(c.kh), c.strides.first, c.dilation.first, c.padding, "test");
  const ConvGeometry gw =
      conv_geometry(c.w, int(c.kw), c.strides.second, c.dilation.second, c.padding, "test");
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

Shape out_shape(const ConvCase& c) {
  const ConvGeometry gh =
      conv_geometry(c.h, int(c.kh), c.strides.first, c.dilation.first, c.padding, "test");
  const ConvGeometry gw =
      conv_geometry(c.w, int(c.kw), c.strides.second, c.dilation.second, c.padding, "test");
  return Shape{c.n, gh.out, gw.out, c.o};
}
Shape x_shape(const ConvCase& c) { return Shape{c.n, c.h, c.w, c.c}; }
Shape w_shape(const ConvCase& c) { return Shape{c.kh, c.kw, c.c / c.groups, c.o}; }

// The backend's three kernels on whatever device the inputs live on (the op front-end accepts
// float32 only; the kernels take every floating dtype).
Tensor forward(const ConvCase& c, const Tensor& x, const Tensor& w) {
  Tensor y = Tensor::empty(out_shape(c), x.dtype(), x.device());
  backend_for(x).conv2d_forward(x, w, params(c), y);
  return y;
}
Tensor backward_data(const ConvCase& c, const Tensor& dy, const Tensor& w) {
  Tensor dx = Tensor::empty(x_shape(c), dy.dtype(), dy.device());
  backend_for(dy).conv2d_backward_data(dy, w, params(c), dx);
  return dx;
}
Tensor backward_filter(const ConvCase& c, const Tensor& x, const Tensor& dy) {
  Tensor dw = Tensor::empty(w_shape(c), x.dtype(), x.device());
  backend_for(x).conv2d_backward_filter(x, dy, params(c), dw);
  return dw;
}

// Rounding errors grow with the number of terms each output sums (both sides round, in
// different orders): the absolute tolerance scales with its square root beyond 64 terms.
Tolerance for_terms(Tolerance base, int64_t terms) {
  const double scale = std::max(1.0, std::sqrt(double(terms) / 64.0));
  return {base.rtol, base.atol * scale};
}

// All three kernels of case `c`, GPU in `dtype` against the float32 CPU.
void expect_case_matches(const ConvCase& c, DType dtype, Tolerance base, int64_t seed) {
  const Tensor x = random_input(x_shape(c), float32, seed);
  const Tensor w = random_input(w_shape(c), float32, seed + 1);
  const Tensor dy = random_input(out_shape(c), float32, seed + 2);
  const Shape ys = out_shape(c);
  const std::string name = describe(c);
  testing::expect_gpu_in_dtype_matches_cpu(
      name + " forward", [&](const std::vector<Tensor>& in) { return forward(c, in[0], in[1]); },
      {x, w}, dtype, for_terms(base, c.kh * c.kw * (c.c / c.groups)));
  testing::expect_gpu_in_dtype_matches_cpu(
      name + " backward data",
      [&](const std::vector<Tensor>& in) { return backward_data(c, in[0], in[1]); }, {dy, w},
      dtype, for_terms(base, c.kh * c.kw * (c.o / c.groups)));
  testing::expect_gpu_in_dtype_matches_cpu(
      name + " backward filter",
      [&](const std::vector<Tensor>& in) { return backward_filter(c, in[0], in[1]); }, {x, dy},
      dtype, for_terms(base, c.n * ys[1] * ys[2]));
}

TEST(CudaConv2D, Float32WithTf32DisabledMatchesCpu) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);
  int64_t seed = 1;
  for (const ConvCase& c : cases()) {
    expect_case_matches(c, float32, {1e-4, 1e-4}, seed);
    seed += 3;
  }
}

TEST(CudaConv2D, Float32WithTf32EnabledIsClose) {
  STRATA_REQUIRE_GPU();
  Tf32Scope fast(true);
  // TF32 keeps 10 mantissa bits: about 1e-3 relative error per product.
  expect_case_matches({4, 16, 16, 32, 3, 3, 64, {1, 1}, "same"}, float32, {1e-2, 5e-2}, 100);
  expect_case_matches({2, 8, 7, 4, 3, 3, 8, {1, 1}, "same"}, float32, {1e-2, 5e-2}, 110);
}

TEST(CudaConv2D, SixteenBitAndFloat64MatchTheFloat32Cpu) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);
  int64_t seed = 200;
  for (DType dtype : {float16, bfloat16, float64}) {
    for (const ConvCase& c : cases()) {
      Tolerance tol = testing::tolerance_against_float32(dtype);
      if (dtype == float64) tol = {1e-4, 1e-4};  // the float32 CPU's own rounding
      expect_case_matches(c, dtype, tol, seed);
      seed += 3;
    }
  }
}

// ---- float64 against a float64 reference ----

// Visits every (output, input, filter) index triple: the three passes are this loop nest with
// different accumulations.
template <typename Fn>
void for_each_tap(const ConvCase& c, Fn fn) {
  const Conv2DParams p = params(c);
  const Shape ys = out_shape(c);
  const int64_t oh = ys[1], ow = ys[2], cg = c.c / c.groups, og = c.o / c.groups;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t o = 0; o < c.o; ++o)
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              for (int64_t i = 0; i < cg; ++i) {
                const int64_t ic = (o / og) * cg + i;
                fn(((n * oh + oy) * ow + ox) * c.o + o, ((n * c.h + iy) * c.w + ix) * c.c + ic,
                   ((ky * c.kw + kx) * cg + i) * c.o + o);
              }
            }
}

TEST(CudaConv2D, Float64HasDoublePrecision) {
  STRATA_REQUIRE_GPU();
  const std::vector<ConvCase> f64_cases = {
      {1, 8, 8, 3, 3, 3, 5, {2, 2}, "same"},
      {1, 10, 9, 2, 3, 2, 3, {2, 1}, "same", {2, 3}},
      {2, 6, 6, 8, 3, 3, 8, {1, 1}, "same", {1, 1}, 2},
  };
  const Device gpu = Device::gpu(0);
  const Tolerance tol = testing::tolerance_for(float64);
  int64_t seed = 300;
  for (const ConvCase& c : f64_cases) {
    SCOPED_TRACE(describe(c));
    const Tensor x = random_input(x_shape(c), float64, seed++);
    const Tensor w = random_input(w_shape(c), float64, seed++);
    const Tensor dy = random_input(out_shape(c), float64, seed++);
    const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(),
                              dyv = dy.to_vector<double>();
    std::vector<double> y(size_t(out_shape(c).numel()), 0.0), dx(xv.size(), 0.0),
        dw(wv.size(), 0.0);
    for_each_tap(c, [&](int64_t yi, int64_t xi, int64_t wi) {
      y[size_t(yi)] += xv[size_t(xi)] * wv[size_t(wi)];
      dx[size_t(xi)] += dyv[size_t(yi)] * wv[size_t(wi)];
      dw[size_t(wi)] += xv[size_t(xi)] * dyv[size_t(yi)];
    });
    testing::expect_all_close(forward(c, x.to(gpu), w.to(gpu)).to(Device::cpu()),
                              Tensor::from_vector(y, out_shape(c)), tol.rtol, tol.atol);
    testing::expect_all_close(backward_data(c, dy.to(gpu), w.to(gpu)).to(Device::cpu()),
                              Tensor::from_vector(dx, x_shape(c)), tol.rtol, tol.atol);
    testing::expect_all_close(backward_filter(c, x.to(gpu), dy.to(gpu)).to(Device::cpu()),
                              Tensor::from_vector(dw, w_shape(c)), tol.rtol, tol.atol);
  }
}

TEST(CudaConv2D, NoInputChannelsGivesZeros) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  const Tensor y = conv2d(zeros({2, 5, 5, 0}).to(gpu), zeros({3, 3, 0, 4}).to(gpu), {1, 1}, "same");
  EXPECT_EQ(y.shape(), Shape({2, 5, 5, 4}));
  testing::expect_all_close(y.to(Device::cpu()), zeros({2, 5, 5, 4}), 0.0, 0.0);
  const Tensor empty_batch =
      conv2d(zeros({0, 5, 5, 2}).to(gpu), random_input({3, 3, 2, 4}, float32, 1).to(gpu));
  EXPECT_EQ(empty_batch.shape(), Shape({0, 3, 3, 4}));
}

TEST(CudaConv2D, SecondCallReusesTheCachedAlgorithms) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  // A shape no other test uses, so each direction searches exactly once.
  const ConvCase c{3, 11, 13, 5, 3, 3, 7, {1, 1}, "same"};
  const Tensor x = random_input(x_shape(c), float32, 400).to(gpu);
  const Tensor w = random_input(w_shape(c), float32, 401).to(gpu);
  const Tensor dy = random_input(out_shape(c), float32, 402).to(gpu);
  auto run_all = [&] {
    return std::vector<Tensor>{forward(c, x, w), backward_data(c, dy, w),
                               backward_filter(c, x, dy)};
  };
  const int64_t before = gpu::algorithm_search_counts().convolution;
  const std::vector<Tensor> first = run_all();
  const int64_t after_first = gpu::algorithm_search_counts().convolution;
  const std::vector<Tensor> second = run_all();
  EXPECT_EQ(after_first - before, 3);  // forward, backward data, backward filter
  EXPECT_EQ(gpu::algorithm_search_counts().convolution, after_first);
  for (size_t i = 0; i < first.size(); ++i) {
    testing::expect_all_close(second[i].to(Device::cpu()), first[i].to(Device::cpu()), 1e-5,
                              1e-5);
  }
}

TEST(CudaConv2D, OpGradientsMatchTheCpuOp) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);
  // Through the op's autograd: the same tape on both devices.
  int64_t seed = 500;
  for (const ConvCase& c : cases()) {
    const Tensor x = random_input(x_shape(c), float32, seed++);
    const Tensor w = random_input(w_shape(c), float32, seed++);
    const Tensor dy = random_input(out_shape(c), float32, seed++);
    testing::expect_gpu_matches_cpu(
        describe(c).c_str(),
        [&](const std::vector<Tensor>& in) {
          GradientTape tape;
          tape.watch(in[0]);
          tape.watch(in[1]);
          const Tensor y = conv2d(in[0], in[1], c.strides, c.padding, c.dilation, c.groups);
          std::vector<Tensor> out = tape.gradient(y, {in[0], in[1]}, in[2]);
          out.insert(out.begin(), y);
          return out;
        },
        {x, w, dy}, {1e-4, 1e-3});
  }
}

TEST(CudaConv2D, FiniteDifferenceGradients) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const std::vector<ConvCase> small = {
      {1, 5, 5, 2, 3, 3, 3, {1, 1}, "same"},
      {2, 6, 5, 2, 3, 3, 2, {2, 2}, "valid"},
      {1, 5, 6, 2, 3, 2, 2, {2, 1}, "same"},
      {1, 7, 7, 2, 3, 3, 2, {1, 1}, "same", {2, 2}},
      {1, 5, 5, 4, 3, 3, 4, {1, 1}, "same", {1, 1}, 2},
  };
  const Device gpu = Device::gpu(0);
  int64_t seed = 600;
  for (const ConvCase& c : small) {
    testing::expect_gradients_match(
        ("conv2d " + describe(c)).c_str(),
        [c](const std::vector<Tensor>& in) {
          return conv2d(in[0], in[1], c.strides, c.padding, c.dilation, c.groups);
        },
        {random_input(x_shape(c), float32, seed).to(gpu),
         random_input(w_shape(c), float32, seed + 1).to(gpu)},
        opts);
    seed += 2;
  }
}

}  // namespace
}  // namespace strata
