// CUDA activations (own kernels) against the CPU backend's oneDNN formulas and a float64
// reference: every Activation forward and backward, leaky_relu / elu alphas, every floating
// dtype, saturating inputs, and finite-difference gradients on /gpu:0. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "cuda/dnn_test_utils.h"

namespace strata {
namespace {

using testing::Tolerance;

struct ActCase {
  const char* name;
  Activation act;
  float alpha;
  std::function<double(double)> ref;   // the function
  std::function<double(double)> dref;  // its derivative
};

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<ActCase> cases() {
  const double sa = 1.6732632423543772848170429916717, ss = 1.0507009873554804934193349852946;
  const double k = std::sqrt(2.0 / M_PI);
  // The kernels take alpha as a float: the references use the same rounded value.
  const double leaky = double(0.3f), elu_alpha = double(0.7f);
  return {
      {"relu", Activation::kReLU, 0.0f, [](double x) { return x > 0 ? x : 0.0; },
       [](double x) { return x > 0 ? 1.0 : 0.0; }},
      {"leaky_relu", Activation::kLeakyReLU, 0.3f,
       [=](double x) { return x > 0 ? x : leaky * x; },
       [=](double x) { return x > 0 ? 1.0 : leaky; }},
      {"elu", Activation::kELU, 0.7f,
       [=](double x) { return x > 0 ? x : elu_alpha * std::expm1(x); },
       [=](double x) { return x > 0 ? 1.0 : elu_alpha * std::exp(x); }},
      {"selu", Activation::kSELU, 0.0f,
       [=](double x) { return ss * (x > 0 ? x : sa * std::expm1(x)); },
       [=](double x) { return ss * (x > 0 ? 1.0 : sa * std::exp(x)); }},
      {"gelu", Activation::kGELU, 0.0f,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); },
       [](double x) {
         return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) +
                x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
       }},
      {"gelu_tanh", Activation::kGELUTanh, 0.0f,
       [=](double x) { return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x))); },
       [=](double x) {
         const double t = std::tanh(k * (x + 0.044715 * x * x * x));
         return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
       }},
      {"sigmoid", Activation::kSigmoid, 0.0f, sigmoid_ref,
       [](double x) { return sigmoid_ref(x) * (1 - sigmoid_ref(x)); }},
      {"tanh", Activation::kTanh, 0.0f, [](double x) { return std::tanh(x); },
       [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
      {"swish", Activation::kSwish, 0.0f, [](double x) { return x * sigmoid_ref(x); },
       [](double x) {
         const double s = sigmoid_ref(x);
         return s + x * s * (1 - s);
       }},
      {"softplus", Activation::kSoftplus, 0.0f, [](double x) { return std::log1p(std::exp(x)); },
       sigmoid_ref},
      {"relu6", Activation::kReLU6, 0.0f, [](double x) { return std::min(std::max(x, 0.0), 6.0); },
       [](double x) { return x > 0 && x < 6 ? 1.0 : 0.0; }},
      {"hard_sigmoid", Activation::kHardSigmoid, 0.0f,
       [](double x) { return std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0); },
       [](double x) { return x > -3 && x < 3 ? 1.0 / 6.0 : 0.0; }},
      {"linear", Activation::kLinear, 0.0f, [](double x) { return x; },
       [](double) { return 1.0; }},
      {"softsign", Activation::kSoftsign, 0.0f, [](double x) { return x / (1 + std::fabs(x)); },
       [](double x) { return 1 / ((1 + std::fabs(x)) * (1 + std::fabs(x))); }},
      {"hard_silu", Activation::kHardSwish, 0.0f,
       [](double x) { return x * std::min(std::max(0.0, x + 3.0), 6.0) / 6.0; },
       [](double x) { return x < -3 ? 0.0 : x > 3 ? 1.0 : (2 * x + 3) / 6; }},
      {"mish", Activation::kMish, 0.0f,
       [](double x) { return x * std::tanh(std::log1p(std::exp(x))); },
       [](double x) {
         const double t = std::tanh(std::log1p(std::exp(x)));
         return t + x * (1 - t * t) * sigmoid_ref(x);
       }},
      {"log_sigmoid", Activation::kLogSigmoid, 0.0f,
       [](double x) { return -std::log1p(std::exp(-x)); },
       [](double x) { return sigmoid_ref(-x); }},
      {"exponential", Activation::kExponential, 0.0f, [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); }},
      {"hard_tanh", Activation::kHardTanh, 0.0f,
       [](double x) { return std::min(std::max(x, -1.0), 1.0); },
       [](double x) { return x > -1 && x < 1 ? 1.0 : 0.0; }},
  };
}

// Values over [-8, 8] covering every branch, away from the kinks (0, 6, +-3) where CPU and GPU
// may legitimately pick different sides after rounding.
Tensor test_input(const Shape& shape) {
  std::vector<float> v(size_t(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    float t = -8.0f + 16.0f * float(i) / float(v.size()) + 0.0371f;
    for (float kink : {0.0f, 6.0f, 3.0f, -3.0f, 1.0f, -1.0f}) {
      if (std::fabs(t - kink) < 0.05f) t += 0.1f;
    }
    v[i] = t;
  }
  return Tensor::from_vector(v, shape);
}

// Forward and backward through the backend's kernels on the inputs' device: {y, dx}.
std::vector<Tensor> forward_backward(const ActCase& c, const Tensor& x, const Tensor& dy) {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).activation_forward(c.act, x, c.alpha, y);
  Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).activation_backward(c.act, x, y, dy, c.alpha, dx);
  return {y, dx};
}

TEST(CudaActivations, EveryActivationMatchesCpuInEveryDtype) {
  STRATA_REQUIRE_GPU();
  // Large enough for several blocks and a grid-stride pass.
  for (const Shape& shape : {Shape{3, 7}, Shape{300, 257}}) {
    const Tensor x = test_input(shape);
    const Tensor dy = random_uniform(shape, -2.0, 2.0, float32, 7);
    for (DType dtype : testing::dnn_dtypes()) {
      for (const ActCase& c : cases()) {
        Tolerance tol = testing::tolerance_against_float32(dtype);
        if (dtype == float32 || dtype == float64) tol = {3e-5, 3e-6};  // different exp/erf/tanh
        testing::expect_gpu_in_dtype_matches_cpu(
            std::string(c.name) + " " + shape.to_string(),
            [&](const std::vector<Tensor>& in) { return forward_backward(c, in[0], in[1]); },
            {x, dy}, dtype, tol);
      }
    }
  }
}

TEST(CudaActivations, Float64HasDoublePrecision) {
  STRATA_REQUIRE_GPU();
  const Shape shape{40, 25};
  const Tensor x = test_input(shape).cast(float64);
  const Tensor dy = random_uniform(shape, -2.0, 2.0, float64, 8);
  const std::vector<double> xv = x.to_vector<double>(), dyv = dy.to_vector<double>();
  const Device gpu = Device::gpu(0);
  for (const ActCase& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<double> y(xv.size()), dx(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      y[i] = c.ref(xv[i]);
      dx[i] = dyv[i] * c.dref(xv[i]);
    }
    const std::vector<Tensor> out = forward_backward(c, x.to(gpu), dy.to(gpu));
    testing::expect_all_close(out[0].to(Device::cpu()), Tensor::from_vector(y, shape), 1e-12,
                              1e-14);
    testing::expect_all_close(out[1].to(Device::cpu()), Tensor::from_vector(dx, shape), 1e-12,
                              1e-14);
  }
}

TEST(CudaActivations, SaturatingInputsStayFinite) {
  STRATA_REQUIRE_GPU();
  // exp() overflows beyond ~88.7 in float32: sigmoid, swish and softplus must not divide by
  // infinity or return NaN there, exactly as on the CPU.
  const Tensor x = tensor<float>({-1000.f, -100.f, -90.f, -20.f, 20.f, 90.f, 100.f, 1000.f}, {8});
  const Tensor dy = ones({8});
  for (const ActCase& c : cases()) {
    testing::expect_gpu_matches_cpu(
        c.name, [&](const std::vector<Tensor>& in) { return forward_backward(c, in[0], in[1]); },
        {x, dy}, {1e-5, 1e-12});
  }
}

TEST(CudaActivations, OpOnTheGpuAndEmptyTensors) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  const Tensor x = test_input({5, 6});
  testing::expect_gpu_matches_cpu(
      "gelu op", [](const std::vector<Tensor>& in) { return gelu(in[0]); }, {x}, {3e-5, 3e-6});
  testing::expect_gpu_matches_cpu(
      "leaky_relu op", [](const std::vector<Tensor>& in) { return leaky_relu(in[0], 0.1f); }, {x},
      {1e-6, 1e-7});
  const Tensor empty = relu(zeros({0, 3}).to(gpu));
  EXPECT_EQ(empty.shape(), Shape({0, 3}));
  EXPECT_EQ(empty.device(), gpu);
}

TEST(CudaActivations, FiniteDifferenceGradients) {
  STRATA_REQUIRE_GPU();
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const Tensor x = test_input({4, 10}).to(Device::gpu(0));
  for (const ActCase& c : cases()) {
    const Activation act = c.act;
    const float alpha = c.alpha;
    testing::expect_gradients_match(
        c.name, [act, alpha](const std::vector<Tensor>& in) { return activation(in[0], act, alpha); },
        {x}, opts);
  }
}

}  // namespace
}  // namespace strata
