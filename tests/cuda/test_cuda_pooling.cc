// CUDA max / average pooling (cuDNN, and own kernels for asymmetric average pooling) against the
// CPU backend, through the backend's kernels and the ops' autograd: "valid", "same" with
// symmetric and asymmetric padding, non-square windows and strides, float32, float16, bfloat16
// and float64, and finite-difference gradients on /gpu:0. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/dnn_test_utils.h"

namespace strata {
namespace {

using testing::random_input;
using testing::Tolerance;

struct PoolCase {
  int64_t n, h, w, c;
  std::pair<int, int> window, strides;
  std::string padding;
};

std::string describe(const PoolCase& p) {
  auto s = [](int64_t v) { return std::to_string(v); };
  return "x[" + s(p.n) + "," + s(p.h) + "," + s(p.w) + "," + s(p.c) + "] window(" +
         s(p.window.first) + "," + s(p.window.second) + ") strides(" + s(p.strides.first) + "," +
         s(p.strides.second) + ") " + p.padding;
}

// Float32 averages of up to 25 values as large as +-51 (distinct_input) round at ~1e-5, and the
// CPU and the GPU sum in different orders.
const Tolerance kFloat32Tolerance{1e-5, 2e-5};

std::vector<PoolCase> cases() {
  return {
      {2, 6, 6, 3, {2, 2}, {2, 2}, "valid"},
      {2, 7, 7, 3, {2, 2}, {2, 2}, "valid"},   // a leftover row and column nobody reads
      {2, 7, 7, 3, {3, 3}, {2, 2}, "same"},    // symmetric padding 1
      {1, 6, 5, 2, {3, 3}, {1, 1}, "same"},    // symmetric padding 1
      {1, 7, 6, 2, {2, 3}, {1, 2}, "same"},    // asymmetric: 0 / 1 rows, 0 / 1 columns
      {2, 8, 8, 16, {3, 3}, {2, 2}, "same"},   // asymmetric: 0 / 1
      {1, 5, 5, 17, {5, 5}, {1, 1}, "valid"},
      {1, 8, 10, 4, {4, 2}, {1, 3}, "same"},   // rows 1 / 2 (symmetric part 1), columns 0 / 1
  };
}

Pool2DParams params(const PoolCase& p) {
  const ConvGeometry gh = conv_geometry(p.h, p.window.first, p.strides.first, 1, p.padding, "t");
  const ConvGeometry gw = conv_geometry(p.w, p.window.second, p.strides.second, 1, p.padding, "t");
  Pool2DParams k;
  k.window_h = p.window.first;
  k.window_w = p.window.second;
  k.stride_h = p.strides.first;
  k.stride_w = p.strides.second;
  k.pad_top = gh.pad_before;
  k.pad_bottom = gh.pad_after;
  k.pad_left = gw.pad_before;
  k.pad_right = gw.pad_after;
  return k;
}

Shape out_shape(const PoolCase& p) {
  const ConvGeometry gh = conv_geometry(p.h, p.window.first, p.strides.first, 1, p.padding, "t");
  const ConvGeometry gw = conv_geometry(p.w, p.window.second, p.strides.second, 1, p.padding, "t");
  return Shape{p.n, gh.out, gw.out, p.c};
}

// Forward then backward through the backend's kernels on the inputs' device (the op front-ends
// take float32 only): returns {y, dx}.
std::vector<Tensor> forward_backward(PoolKind kind, const PoolCase& p, const Tensor& x,
                                     const Tensor& dy) {
  Tensor y = Tensor::empty(out_shape(p), x.dtype(), x.device());
  const Tensor workspace = backend_for(x).pool2d_forward(kind, x, params(p), y);
  Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).pool2d_backward(kind, x, y, dy, workspace, params(p), dx);
  return {y, dx};
}

// Values at least 0.05 apart, so no window has a tie (the GPU and the CPU may route a tie's
// gradient to different elements) and finite differences never flip a maximum.
Tensor distinct_input(const Shape& shape, int64_t seed) {
  const std::vector<double> r = random_uniform({shape.numel()}, 0, 1, float64, seed).to_vector<double>();
  std::vector<size_t> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r[a] < r[b]; });
  std::vector<float> out(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    out[order[i]] = 0.05f * float(i) - 0.025f * float(r.size());
  }
  return Tensor::from_vector(out, shape);
}

TEST(CudaPooling, Float32MatchesCpu) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 1;
  for (const PoolCase& p : cases()) {
    const Tensor x = distinct_input({p.n, p.h, p.w, p.c}, seed++);
    const Tensor dy = random_input(out_shape(p), float32, seed++);
    for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage}) {
      const std::string name =
          std::string(kind == PoolKind::kMax ? "max " : "avg ") + describe(p);
      testing::expect_gpu_matches_cpu(
          name.c_str(),
          [&](const std::vector<Tensor>& in) { return forward_backward(kind, p, in[0], in[1]); },
          {x, dy}, kFloat32Tolerance);
    }
  }
}

TEST(CudaPooling, OtherDtypesMatchTheFloat32Cpu) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 100;
  for (DType dtype : {float16, bfloat16, float64}) {
    for (const PoolCase& p : cases()) {
      // Few enough elements (values within +-4) that 0.05-spaced values stay distinct after
      // rounding to bfloat16's 8-bit mantissa.
      PoolCase small = p;
      small.n = 1;
      small.c = std::min<int64_t>(p.c, 2);
      const Tensor x = distinct_input({small.n, small.h, small.w, small.c}, seed++);
      const Tensor dy = random_input(out_shape(small), float32, seed++);
      for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage}) {
        const std::string name =
            std::string(kind == PoolKind::kMax ? "max " : "avg ") + describe(small);
        testing::expect_gpu_in_dtype_matches_cpu(
            name,
            [&](const std::vector<Tensor>& in) {
              return forward_backward(kind, small, in[0], in[1]);
            },
            {x, dy}, dtype,
            dtype == float64 ? kFloat32Tolerance : testing::tolerance_against_float32(dtype));
      }
    }
  }
}

TEST(CudaPooling, OpsAndTheirGradientsMatchTheCpu) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 200;
  for (const PoolCase& p : cases()) {
    const Tensor x = distinct_input({p.n, p.h, p.w, p.c}, seed++);
    const Tensor dy = random_input(out_shape(p), float32, seed++);
    for (bool is_max : {true, false}) {
      const std::string name = std::string(is_max ? "max_pool2d " : "avg_pool2d ") + describe(p);
      testing::expect_gpu_matches_cpu(
          name.c_str(),
          [&](const std::vector<Tensor>& in) {
            GradientTape tape;
            tape.watch(in[0]);
            const Tensor y = is_max ? max_pool2d(in[0], p.window, p.strides, p.padding)
                                    : avg_pool2d(in[0], p.window, p.strides, p.padding);
            return std::vector<Tensor>{y, tape.gradient(y, {in[0]}, in[1])[0]};
          },
          {x, dy}, kFloat32Tolerance);
    }
  }
}

TEST(CudaPooling, FiniteDifferenceGradients) {
  STRATA_REQUIRE_GPU();
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const std::vector<PoolCase> small = {
      {1, 4, 4, 2, {2, 2}, {2, 2}, "valid"},
      {1, 5, 5, 2, {3, 3}, {2, 2}, "same"},
      {2, 5, 4, 1, {2, 3}, {1, 2}, "same"},
  };
  const Device gpu = Device::gpu(0);
  int64_t seed = 300;
  for (const PoolCase& p : small) {
    const Tensor x = distinct_input({p.n, p.h, p.w, p.c}, seed++).to(gpu);
    testing::expect_gradients_match(("max_pool2d " + describe(p)).c_str(),
                                    [p](const std::vector<Tensor>& in) {
                                      return max_pool2d(in[0], p.window, p.strides, p.padding);
                                    },
                                    {x}, opts);
    testing::expect_gradients_match(("avg_pool2d " + describe(p)).c_str(),
                                    [p](const std::vector<Tensor>& in) {
                                      return avg_pool2d(in[0], p.window, p.strides, p.padding);
                                    },
                                    {x}, opts);
  }
}

TEST(CudaPooling, EmptyBatch) {
  STRATA_REQUIRE_GPU();
  const Tensor x = zeros({0, 6, 6, 3}).to(Device::gpu(0));
  EXPECT_EQ(max_pool2d(x, {2, 2}, {2, 2}).shape(), Shape({0, 3, 3, 3}));
  EXPECT_EQ(avg_pool2d(x, {3, 3}, {2, 2}, "same").shape(), Shape({0, 3, 3, 3}));
}

}  // namespace
}  // namespace strata
