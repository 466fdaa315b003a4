// The CPU backend's oneDNN kernels on float16 and bfloat16 tensors (computed in float32 inside,
// framework/cpu/cpu_widen.h): each op and its gradients must equal the float32 op on the same
// rounded inputs, rounded to 16 bits. Batch norm takes 16-bit x with float32 parameters and
// statistics and nothing else.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_error;

Tensor rounded(const Tensor& t, DType dtype) { return t.cast(dtype).cast(float32); }

class Cpu16BitKernels : public ::testing::TestWithParam<DType> {
 protected:
  DType dt() const { return GetParam(); }
  // One rounding of the float32 result to 16 bits (values of order 1-10).
  double tol() const { return dt() == bfloat16 ? 1e-2 : 1e-3; }

  // f(16-bit inputs) and its gradients against f(float32 rounded inputs): same values within one
  // 16-bit rounding, 16-bit outputs and gradients. Inputs must be floating.
  void expect_matches_float32(const char* name,
                              const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& inputs, double grad_tol) {
    SCOPED_TRACE(name);
    std::vector<Tensor> narrow, wide;
    for (const Tensor& t : inputs) {
      narrow.push_back(t.cast(dt()));
      wide.push_back(rounded(t, dt()));
    }
    GradientTape t16, t32;
    for (const Tensor& t : narrow) t16.watch(t);
    for (const Tensor& t : wide) t32.watch(t);
    const Tensor y16 = f(narrow), y32 = f(wide);
    EXPECT_EQ(y16.dtype(), dt());
    expect_all_close(y16.cast(float32), y32, tol(), tol());
    const Tensor w = random_uniform(y32.shape(), 0.5, 1.5, float32, 77);
    const std::vector<Tensor> g16 = t16.gradient(reduce_sum(y16 * w.cast(dt())), narrow);
    const std::vector<Tensor> g32 = t32.gradient(reduce_sum(y32 * rounded(w, dt())), wide);
    for (size_t i = 0; i < inputs.size(); ++i) {
      ASSERT_TRUE(g16[i].defined()) << "input " << i;
      EXPECT_EQ(g16[i].dtype(), dt()) << "input " << i;
      expect_all_close(g16[i].cast(float32), g32[i], grad_tol, grad_tol);
    }
  }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, Cpu16BitKernels, ::testing::Values(float16, bfloat16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(Cpu16BitKernels, Matmul) {
  set_random_seed(1);
  // Batched a against a shared b (one GEMM), transposes, and a batched b.
  expect_matches_float32("shared b", [](const auto& in) { return matmul(in[0], in[1]); },
                         {random_normal({3, 4, 5}), random_normal({5, 6})}, 3 * tol());
  expect_matches_float32("transposed",
                         [](const auto& in) { return matmul(in[0], in[1], true, true); },
                         {random_normal({5, 4}), random_normal({6, 5})}, 3 * tol());
  expect_matches_float32("batched b", [](const auto& in) { return matmul(in[0], in[1]); },
                         {random_normal({2, 3, 4}), random_normal({2, 4, 2})}, 3 * tol());
}

TEST_P(Cpu16BitKernels, Conv2DForwardAndBackward) {
  set_random_seed(2);
  expect_matches_float32("same",
                         [](const auto& in) { return conv2d(in[0], in[1], {1, 1}, "same"); },
                         {random_normal({2, 6, 6, 3}), random_normal({3, 3, 3, 4})}, 4 * tol());
  expect_matches_float32(
      "strided grouped",
      [](const auto& in) { return conv2d(in[0], in[1], {2, 2}, "valid", {1, 1}, 2); },
      {random_normal({1, 7, 7, 4}), random_normal({3, 3, 2, 4})}, 4 * tol());
}

TEST_P(Cpu16BitKernels, Pooling) {
  set_random_seed(3);
  const Tensor x = random_normal({2, 6, 6, 3});
  expect_matches_float32("max", [](const auto& in) { return max_pool2d(in[0], {2, 2}, {2, 2}); },
                         {x}, tol());
  expect_matches_float32(
      "avg same", [](const auto& in) { return avg_pool2d(in[0], {3, 3}, {2, 2}, "same"); }, {x},
      tol());
}

TEST_P(Cpu16BitKernels, Activations) {
  set_random_seed(4);
  const Tensor x = random_uniform({64}, -4.0, 4.0);
  for (Activation act : {Activation::kReLU, Activation::kLeakyReLU, Activation::kELU,
                         Activation::kSELU, Activation::kGELU, Activation::kGELUTanh,
                         Activation::kSigmoid, Activation::kTanh, Activation::kSwish,
                         Activation::kSoftplus, Activation::kReLU6, Activation::kHardSigmoid,
                         Activation::kSoftsign, Activation::kHardSwish, Activation::kMish,
                         Activation::kLogSigmoid, Activation::kExponential,
                         Activation::kHardTanh}) {
    expect_matches_float32("activation", [act](const auto& in) { return activation(in[0], act, 0.2f); },
                           {x}, 2 * tol());
  }
  expect_matches_float32("add_relu", [](const auto& in) { return add_relu(in[0], in[1]); },
                         {x, random_uniform({64}, -1.0, 1.0)}, tol());
}

TEST_P(Cpu16BitKernels, BatchNormTakesFloat32ParametersAndStatistics) {
  set_random_seed(5);
  const Tensor x = random_normal({4, 3, 3, 5}, 2.0, 3.0);
  const Tensor gamma = random_uniform({5}, 0.5, 1.5), beta = random_normal({5});
  for (bool fuse_relu : {false, true}) {
    SCOPED_TRACE(fuse_relu ? "fused relu" : "plain");
    const Tensor x16 = x.cast(dt()), xr = rounded(x, dt());
    const Tensor g = gamma.detach(), b = beta.detach();
    GradientTape tape(/*persistent=*/true);
    tape.watch(x16);
    tape.watch(g);
    tape.watch(b);
    const BatchNormResult r = batch_norm_training(x16, g, b, 1e-3f, fuse_relu);
    EXPECT_EQ(r.y.dtype(), dt());
    EXPECT_EQ(r.mean.dtype(), float32);
    EXPECT_EQ(r.variance.dtype(), float32);
    const BatchNormResult ref = batch_norm_training(xr, gamma, beta, 1e-3f, fuse_relu);
    expect_all_close(r.mean, ref.mean, 1e-5, 1e-5);
    expect_all_close(r.variance, ref.variance, 1e-5, 1e-5);
    expect_all_close(r.y.cast(float32), ref.y, tol(), tol());
    const Tensor w = random_uniform(x.shape(), 0.5, 1.5, float32, 9);
    const Tensor loss = reduce_sum(r.y.cast(float32) * w);
    const std::vector<Tensor> grads = tape.gradient(loss, std::vector<Tensor>{x16, g, b});
    EXPECT_EQ(grads[0].dtype(), dt());
    EXPECT_EQ(grads[1].dtype(), float32);
    EXPECT_EQ(grads[2].dtype(), float32);
    // The float32 reference, with the same rounded upstream gradient.
    const Tensor xw = xr.detach(), gw = gamma.detach(), bw = beta.detach();
    GradientTape t32;
    t32.watch(xw);
    t32.watch(gw);
    t32.watch(bw);
    const Tensor y32 = batch_norm_training(xw, gw, bw, 1e-3f, fuse_relu).y;
    const std::vector<Tensor> want =
        t32.gradient(reduce_sum(y32 * rounded(w, dt())), std::vector<Tensor>{xw, gw, bw});
    expect_all_close(grads[0].cast(float32), want[0], 4 * tol(), 4 * tol());
    expect_all_close(grads[1], want[1], 4 * tol(), 4 * tol());
    expect_all_close(grads[2], want[2], 4 * tol(), 4 * tol());
  }
  // Inference with float32 moving statistics.
  const Tensor mm = random_normal({5}), mv = random_uniform({5}, 0.5, 2.0);
  const Tensor y = batch_norm_inference(x.cast(dt()), gamma, beta, mm, mv);
  EXPECT_EQ(y.dtype(), dt());
  expect_all_close(y.cast(float32), batch_norm_inference(rounded(x, dt()), gamma, beta, mm, mv),
                   tol(), tol());
}

TEST_P(Cpu16BitKernels, OnlyTheMixedCombinationsAreAccepted) {
  const Tensor x = zeros({2, 4, 4, 3}, dt());
  // 16-bit batch-norm parameters: float32 is what 16-bit x takes (cuDNN and oneDNN alike).
  expect_error<DTypeError>([&] { batch_norm_training(x, ones({3}, dt()), zeros({3}, dt())); },
                           {"batch_norm_training", "gamma", "float32", dtype_name(dt())});
  expect_error<DTypeError>(
      [&] { batch_norm_training(zeros({2, 3}), ones({3}, dt()), zeros({3}, dt())); },
      {"batch_norm_training", "gamma", "float32"});
  expect_error<DTypeError>(
      [&] { batch_norm_inference(x, ones({3}), zeros({3}), zeros({3}, dt()), ones({3})); },
      {"batch_norm_inference", "moving_mean", "float32"});
  // x and filters of different dtypes, and float64 (no such kernel), are errors naming both.
  expect_error<DTypeError>([&] { conv2d(x, zeros({3, 3, 3, 2})); },
                           {"conv2d", dtype_name(dt()), "float32"});
  expect_error<DTypeError>([&] { conv2d(zeros({1, 4, 4, 1}, float64), zeros({1, 1, 1, 1}, float64)); },
                           {"conv2d", "float64"});
  expect_error<DTypeError>([&] { max_pool2d(zeros({1, 4, 4, 1}, float64), {2, 2}, {2, 2}); },
                           {"max_pool2d", "float64"});
  EXPECT_THROW(matmul(zeros({2, 2}, dt()), zeros({2, 2})), DTypeError);
}

}  // namespace
}  // namespace strata
