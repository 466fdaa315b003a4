// CUDA batch normalisation (cuDNN) against the CPU backend and a float64 reference: training
// (batch mean, biased variance), the fused ReLU and its mask, the backward pass from the saved
// statistics, inference, ranks 2 to 4, float32, float16 / bfloat16 with float32 statistics (mixed
// precision) or statistics in their own dtype, float64, and finite-difference gradients on
// /gpu:0. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/dnn_test_utils.h"

namespace strata {
namespace {

using testing::random_input;
using testing::Tolerance;

constexpr float kEpsilon = 1e-3f;

// Training forward, then the backward pass from its own statistics and workspace, through the
// backend's kernels on the inputs' device. The statistics and parameter gradients take gamma's
// dtype. Returns {y, mean, variance, dx, dgamma, dbeta}.
std::vector<Tensor> train_step(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& dy, bool fuse_relu) {
  const int64_t c = x.dim(-1);
  const Device d = x.device();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), d);
  Tensor mean = Tensor::empty({c}, gamma.dtype(), d);
  Tensor variance = Tensor::empty({c}, gamma.dtype(), d);
  const Tensor workspace =
      backend_for(x).batch_norm_training(x, gamma, beta, kEpsilon, fuse_relu, y, mean, variance);
  EXPECT_EQ(workspace.defined(), fuse_relu);
  Tensor dx = Tensor::empty(x.shape(), x.dtype(), d);
  Tensor dgamma = Tensor::empty({c}, gamma.dtype(), d);
  Tensor dbeta = Tensor::empty({c}, gamma.dtype(), d);
  backend_for(x).batch_norm_backward(x, dy, gamma, mean, variance, kEpsilon, workspace, dx,
                                     dgamma, dbeta);
  return {y, mean, variance, dx, dgamma, dbeta};
}

std::vector<Shape> shapes() {
  return {Shape{2, 3, 4, 5}, Shape{6, 3}, Shape{4, 5, 7}, Shape{3, 4, 4, 32}, Shape{64, 8},
          Shape{8, 7, 6, 12}};
}

struct Inputs {
  Tensor x, gamma, beta, dy;
};

Inputs inputs_for(const Shape& shape, int64_t seed) {
  const int64_t c = shape[shape.rank() - 1];
  // An offset mean and a spread unlike 1, so that both statistics matter.
  return {random_input(shape, float32, seed, -1.5, 4.5), random_input({c}, float32, seed + 1, 0.5, 1.5),
          random_input({c}, float32, seed + 2, -1.0, 1.0), random_input(shape, float32, seed + 3)};
}

TEST(CudaBatchNorm, TrainingAndBackwardMatchCpu) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 1;
  for (bool fuse_relu : {false, true}) {
    for (const Shape& shape : shapes()) {
      const Inputs in = inputs_for(shape, seed);
      seed += 4;
      const std::string name =
          shape.to_string() + (fuse_relu ? " fused relu" : "");
      testing::expect_gpu_matches_cpu(
          name.c_str(),
          [&](const std::vector<Tensor>& t) {
            return train_step(t[0], t[1], t[2], t[3], fuse_relu);
          },
          {in.x, in.gamma, in.beta, in.dy}, {1e-4, 1e-4});
    }
  }
}

TEST(CudaBatchNorm, FusedReluZeroesNegativesAndTheirGradients) {
  STRATA_REQUIRE_GPU();
  const Inputs in = inputs_for({4, 3, 3, 8}, 50);
  const Device gpu = Device::gpu(0);
  const std::vector<Tensor> plain =
      train_step(in.x.to(gpu), in.gamma.to(gpu), in.beta.to(gpu), in.dy.to(gpu), false);
  const std::vector<Tensor> fused =
      train_step(in.x.to(gpu), in.gamma.to(gpu), in.beta.to(gpu), in.dy.to(gpu), true);
  // y = relu(batch_norm(x)); the statistics are those of x either way.
  const std::vector<double> yp = plain[0].to_vector<double>(), yf = fused[0].to_vector<double>();
  for (size_t i = 0; i < yp.size(); ++i) {
    EXPECT_EQ(yf[i], yp[i] > 0 ? yp[i] : 0.0) << "element " << i;
  }
  testing::expect_all_close(fused[1].to(Device::cpu()), plain[1].to(Device::cpu()), 0.0, 0.0);
  testing::expect_all_close(fused[2].to(Device::cpu()), plain[2].to(Device::cpu()), 0.0, 0.0);
  // The fused backward equals the plain backward of dy masked where the output was clipped.
  const std::vector<double> dy = in.dy.to_vector<double>();
  std::vector<double> masked(dy.size());
  for (size_t i = 0; i < dy.size(); ++i) masked[i] = yp[i] > 0 ? dy[i] : 0.0;
  const std::vector<Tensor> reference =
      train_step(in.x.to(gpu), in.gamma.to(gpu), in.beta.to(gpu),
                 Tensor::from_vector(masked, in.dy.shape()).cast(float32).to(gpu), false);
  for (size_t i = 3; i < 6; ++i) {
    testing::expect_all_close(fused[i].to(Device::cpu()), reference[i].to(Device::cpu()), 1e-6,
                              1e-6);
  }
}

TEST(CudaBatchNorm, SingleValuePerChannel) {
  STRATA_REQUIRE_GPU();
  // One row: the mean is x, the biased variance 0, y = beta, dx = 0 and dbeta = dy.
  for (const Shape& shape : {Shape{1, 5}, Shape{1, 1, 1, 6}}) {
    const Inputs in = inputs_for(shape, 60);
    for (bool fuse_relu : {false, true}) {
      testing::expect_gpu_matches_cpu(
          (shape.to_string() + (fuse_relu ? " fused relu" : "")).c_str(),
          [&](const std::vector<Tensor>& t) {
            return train_step(t[0], t[1], t[2], t[3], fuse_relu);
          },
          {in.x, in.gamma, in.beta, in.dy}, {1e-5, 1e-6});
    }
  }
}

TEST(CudaBatchNorm, SixteenBitWithFloat32Statistics) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  int64_t seed = 100;
  for (DType dtype : {float16, bfloat16}) {
    for (const Shape& shape : shapes()) {
      SCOPED_TRACE(shape.to_string() + " " + dtype_name(dtype));
      const Inputs in = inputs_for(shape, seed);
      seed += 4;
      const Tensor x = in.x.cast(dtype), dy = in.dy.cast(dtype);
      for (bool fuse_relu : {false, true}) {
        const std::vector<Tensor> expected =
            train_step(x.cast(float32), in.gamma, in.beta, dy.cast(float32), fuse_relu);
        const std::vector<Tensor> actual =
            train_step(x.to(gpu), in.gamma.to(gpu), in.beta.to(gpu), dy.to(gpu), fuse_relu);
        const Tolerance data_tol = testing::tolerance_against_float32(dtype);
        for (size_t i = 0; i < actual.size(); ++i) {
          SCOPED_TRACE("output " + std::to_string(i) + (fuse_relu ? " fused" : ""));
          const bool data = i == 0 || i == 3;  // y and dx in x's dtype, the rest float32
          EXPECT_EQ(actual[i].dtype(), data ? dtype : float32);
          testing::expect_all_close(actual[i].to(Device::cpu()).cast(float32), expected[i],
                                    data ? data_tol.rtol : 1e-3, data ? data_tol.atol : 1e-3);
        }
      }
    }
  }
}

TEST(CudaBatchNorm, StatisticsInTheDataDtype) {
  STRATA_REQUIRE_GPU();
  // gamma, beta, mean and variance in x's own dtype (what the op front-end would pass).
  int64_t seed = 200;
  for (DType dtype : {float16, bfloat16, float64}) {
    for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{64, 8}}) {
      const Inputs in = inputs_for(shape, seed);
      seed += 4;
      for (bool fuse_relu : {false, true}) {
        Tolerance tol = testing::tolerance_against_float32(dtype);
        if (dtype == float64) tol = {1e-4, 1e-4};
        testing::expect_gpu_in_dtype_matches_cpu(
            shape.to_string() + (fuse_relu ? " fused" : ""),
            [&](const std::vector<Tensor>& t) {
              return train_step(t[0], t[1], t[2], t[3], fuse_relu);
            },
            {in.x, in.gamma, in.beta, in.dy}, dtype, tol);
      }
    }
  }
}

TEST(CudaBatchNorm, Float64HasDoublePrecision) {
  STRATA_REQUIRE_GPU();
  const Shape shape{4, 3, 5, 6};
  const int64_t c = 6, rows = shape.numel() / c;
  const Tensor x = random_input(shape, float64, 300, -1.5, 4.5);
  const Tensor gamma = random_input({c}, float64, 301, 0.5, 1.5);
  const Tensor beta = random_input({c}, float64, 302);
  const std::vector<double> xv = x.to_vector<double>(), g = gamma.to_vector<double>(),
                            b = beta.to_vector<double>();
  std::vector<double> mean(size_t(c), 0.0), var(size_t(c), 0.0), y(xv.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) mean[size_t(j)] += xv[size_t(r * c + j)] / double(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) {
      const double d = xv[size_t(r * c + j)] - mean[size_t(j)];
      var[size_t(j)] += d * d / double(rows);
    }
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t j = i % size_t(c);
    y[i] = g[j] * (xv[i] - mean[j]) / std::sqrt(var[j] + double(kEpsilon)) + b[j];
  }
  const Device gpu = Device::gpu(0);
  const std::vector<Tensor> out =
      train_step(x.to(gpu), gamma.to(gpu), beta.to(gpu), random_input(shape, float64, 303).to(gpu),
                 false);
  testing::expect_all_close(out[0].to(Device::cpu()), Tensor::from_vector(y, shape), 1e-9, 1e-11);
  testing::expect_all_close(out[1].to(Device::cpu()), Tensor::from_vector(mean), 1e-9, 1e-11);
  testing::expect_all_close(out[2].to(Device::cpu()), Tensor::from_vector(var), 1e-9, 1e-11);
}

TEST(CudaBatchNorm, InferenceMatchesCpu) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 400;
  for (DType dtype : testing::dnn_dtypes()) {
    for (const Shape& shape : shapes()) {
      const int64_t c = shape[shape.rank() - 1];
      const Inputs in = inputs_for(shape, seed);
      const Tensor mean = random_input({c}, float32, seed + 10, -1.0, 2.0);
      const Tensor variance = random_input({c}, float32, seed + 11, 0.2, 3.0);
      seed += 12;
      Tolerance tol = testing::tolerance_against_float32(dtype);
      if (dtype == float32 || dtype == float64) tol = {1e-5, 1e-5};
      testing::expect_gpu_in_dtype_matches_cpu(
          shape.to_string(),
          [&](const std::vector<Tensor>& t) {
            Tensor y = Tensor::empty(t[0].shape(), t[0].dtype(), t[0].device());
            backend_for(t[0]).batch_norm_inference(t[0], t[1], t[2], t[3], t[4], kEpsilon, y);
            return y;
          },
          {in.x, in.gamma, in.beta, mean, variance}, dtype, tol);
    }
  }
}

TEST(CudaBatchNorm, EmptyBatchGivesZeroStatistics) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  const BatchNormResult r =
      batch_norm_training(zeros({0, 4}).to(gpu), ones({4}).to(gpu), zeros({4}).to(gpu));
  EXPECT_EQ(r.y.shape(), Shape({0, 4}));
  testing::expect_all_close(r.mean.to(Device::cpu()), zeros({4}), 0.0, 0.0);
  testing::expect_all_close(r.variance.to(Device::cpu()), zeros({4}), 0.0, 0.0);
}

TEST(CudaBatchNorm, FiniteDifferenceGradients) {
  STRATA_REQUIRE_GPU();
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const Device gpu = Device::gpu(0);
  for (bool fuse_relu : {false, true}) {
    for (const Shape& shape : {Shape{2, 3, 2, 3}, Shape{5, 4}}) {
      const int64_t c = shape[shape.rank() - 1];
      testing::expect_gradients_match(
          ("batch_norm_training " + shape.to_string() + (fuse_relu ? " fused relu" : "")).c_str(),
          [fuse_relu](const std::vector<Tensor>& in) {
            return batch_norm_training(in[0], in[1], in[2], kEpsilon, fuse_relu).y;
          },
          {random_input(shape, float32, 500).to(gpu),
           random_input({c}, float32, 501, 0.5, 1.5).to(gpu),
           random_input({c}, float32, 502).to(gpu)},
          opts);
    }
  }
  const Tensor mean = random_input({3}, float32, 510).to(gpu);
  const Tensor var = random_input({3}, float32, 511, 0.5, 2.0).to(gpu);
  testing::expect_gradients_match(
      "batch_norm_inference",
      [mean, var](const std::vector<Tensor>& in) {
        return batch_norm_inference(in[0], in[1], in[2], mean, var, kEpsilon);
      },
      {random_input({2, 2, 2, 3}, float32, 512).to(gpu),
       random_input({3}, float32, 513, 0.5, 1.5).to(gpu), random_input({3}, float32, 514).to(gpu)},
      opts);
}

}  // namespace
}  // namespace strata
