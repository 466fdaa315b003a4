#include <gtest/gtest.h>

#include <cmath>
#include <functional>
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

struct ActCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
};

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<ActCase> cases() {
  const double selu_alpha = 1.6732632423543772, selu_scale = 1.0507009873554805;
  return {
      {"relu", [](const Tensor& x) { return relu(x); }, [](double x) { return x > 0 ? x : 0; }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.3f); },
       [](double x) { return x > 0 ? x : 0.3 * x; }},
      {"elu", [](const Tensor& x) { return elu(x, 0.7f); },
       [](double x) { return x > 0 ? x : 0.7 * std::expm1(x); }},
      {"selu", [](const Tensor& x) { return selu(x); },
       [=](double x) { return selu_scale * (x > 0 ? x : selu_alpha * std::expm1(x)); }},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); },
       [](double x) {
         return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
       }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, sigmoid_ref},
      {"tanh", [](const Tensor& x) { return strata::tanh(x); }, [](double x) { return std::tanh(x); }},
      {"swish", [](const Tensor& x) { return swish(x); }, [](double x) { return x * sigmoid_ref(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x); },
       [](double x) { return std::log1p(std::exp(x)); }},
      {"relu6", [](const Tensor& x) { return relu6(x); },
       [](double x) { return std::min(std::max(x, 0.0), 6.0); }},
      {"hard_sigmoid", [](const Tensor& x) { return activation(x, Activation::kHardSigmoid); },
       [](double x) { return std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0); }},
      {"linear", [](const Tensor& x) { return activation(x, Activation::kLinear); },
       [](double x) { return x; }},
      // Keras 3's references (keras/src/activations/activations_test.py).
      {"softsign", [](const Tensor& x) { return softsign(x); },
       [](double x) { return x / (1 + std::fabs(x)); }},
      {"hard_silu", [](const Tensor& x) { return hard_silu(x); },
       [](double x) { return x * std::min(std::max(0.0, x + 3.0), 6.0) / 6.0; }},
      {"mish", [](const Tensor& x) { return mish(x); },
       [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }},
      {"log_sigmoid", [](const Tensor& x) { return log_sigmoid(x); },
       [](double x) { return -std::log1p(std::exp(-x)); }},
      {"exponential", [](const Tensor& x) { return activation(x, Activation::kExponential); },
       [](double x) { return std::exp(x); }},
      {"hard_tanh", [](const Tensor& x) { return hard_tanh(x); },
       [](double x) { return std::min(std::max(x, -1.0), 1.0); }},
  };
}

// Values covering every branch, away from kinks (0, 6, +-3, +-1) so finite differences are
// smooth.
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

TEST(Activations, ForwardMatchesReference) {
  // Large enough to take the multi-threaded path too.
  for (const Shape& shape : {Shape{3, 7}, Shape{300, 257}}) {
    const Tensor x = test_input(shape);
    const std::vector<double> xv = x.to_vector<double>();
    for (const ActCase& c : cases()) {
      SCOPED_TRACE(c.name);
      std::vector<double> ref(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) ref[i] = c.ref(xv[i]);
      const Tensor y = c.op(x);
      EXPECT_EQ(y.shape(), shape);
      expect_all_close(y, Tensor::from_vector(ref, shape).cast(float32), 2e-5, 2e-6);
    }
  }
}

TEST(Activations, SaturatingInputsKeepTheirRelativePrecision) {
  // Far out on the flat side these functions are tiny but not zero: softplus(-20) is 2.06e-9
  // (tf.nn.softplus(-20.) = 2.0611537e-09), never negative. oneDNN 2.6's soft_relu returned
  // -1.9e-6 here; the check is relative, so an absolute error of that size fails.
  const std::vector<double> xs = {-80.0, -30.0, -20.0, -12.0, 12.0, 20.0, 30.0, 80.0};
  const Tensor x = Tensor::from_vector(xs, Shape{int64_t(xs.size())}).cast(float32);
  for (const ActCase& c : cases()) {
    const std::string name = c.name;
    if (name != "softplus" && name != "mish" && name != "log_sigmoid") continue;
    SCOPED_TRACE(name);
    std::vector<double> ref(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) ref[i] = c.ref(xs[i]);
    expect_all_close(c.op(x), Tensor::from_vector(ref, x.shape()).cast(float32), 1e-5, 1e-37);
  }
}

TEST(Activations, Gradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const Tensor x = test_input({4, 10});
  for (const ActCase& c : cases()) {
    auto op = c.op;
    expect_gradients_match(c.name, [op](const std::vector<Tensor>& in) { return op(in[0]); }, {x},
                           opts);
  }
}

TEST(Activations, AddReluIsReluOfSum) {
  const Tensor a = test_input({4, 10});
  const Tensor b = random_normal({4, 10}, 0, 1, float32, 5);
  expect_all_close(add_relu(a, b), relu(a + b), 0, 0);
  // Broadcasting as add(): a bias row over every row.
  const Tensor row = random_normal({10}, 0, 1, float32, 6);
  expect_all_close(add_relu(a, row), relu(a + row), 0, 0);
  EXPECT_THROW(add_relu(a, zeros({3})), ShapeError);
  EXPECT_THROW(add_relu(ones({2}, int64), ones({2}, int64)), DTypeError);
}

TEST(Activations, AddReluGradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  expect_gradients_match(
      "add_relu", [](const std::vector<Tensor>& in) { return add_relu(in[0], in[1]); },
      {test_input({4, 10}), random_normal({4, 10}, 0, 1, float32, 7)}, opts);
  expect_gradients_match(
      "add_relu (broadcast)", [](const std::vector<Tensor>& in) { return add_relu(in[0], in[1]); },
      {test_input({4, 10}), random_normal({10}, 0, 1, float32, 8)}, opts);
}

TEST(Activations, FromName) {
  EXPECT_EQ(activation_from_name("relu"), Activation::kReLU);
  EXPECT_EQ(activation_from_name("linear"), Activation::kLinear);
  EXPECT_EQ(activation_from_name("leaky_relu"), Activation::kLeakyReLU);
  EXPECT_EQ(activation_from_name("elu"), Activation::kELU);
  EXPECT_EQ(activation_from_name("selu"), Activation::kSELU);
  EXPECT_EQ(activation_from_name("gelu"), Activation::kGELU);
  EXPECT_EQ(activation_from_name("sigmoid"), Activation::kSigmoid);
  EXPECT_EQ(activation_from_name("tanh"), Activation::kTanh);
  EXPECT_EQ(activation_from_name("swish"), Activation::kSwish);
  EXPECT_EQ(activation_from_name("silu"), Activation::kSwish);
  EXPECT_EQ(activation_from_name("softplus"), Activation::kSoftplus);
  EXPECT_EQ(activation_from_name("relu6"), Activation::kReLU6);
  EXPECT_EQ(activation_from_name("hard_sigmoid"), Activation::kHardSigmoid);
  EXPECT_EQ(activation_from_name("softsign"), Activation::kSoftsign);
  EXPECT_EQ(activation_from_name("hard_silu"), Activation::kHardSwish);
  EXPECT_EQ(activation_from_name("hard_swish"), Activation::kHardSwish);
  EXPECT_EQ(activation_from_name("mish"), Activation::kMish);
  EXPECT_EQ(activation_from_name("log_sigmoid"), Activation::kLogSigmoid);
  EXPECT_EQ(activation_from_name("exponential"), Activation::kExponential);
  EXPECT_EQ(activation_from_name("hard_tanh"), Activation::kHardTanh);
  expect_error<ValueError>([] { activation_from_name("relu7"); }, {"relu7"});
}

TEST(Activations, ParameterDefaultsAreKeras3s) {
  // activation(x, act) without a parameter: Keras' leaky_relu slope 0.2 and elu alpha 1.0.
  const Tensor x = tensor({-2.0f, 3.0f}, {2});
  expect_all_close(activation(x, Activation::kLeakyReLU), tensor({-0.4f, 3.0f}, {2}));
  expect_all_close(activation(x, Activation::kELU),
                   tensor({float(std::expm1(-2.0)), 3.0f}, {2}));
  EXPECT_EQ(default_activation_alpha(Activation::kLeakyReLU), 0.2f);
  EXPECT_EQ(default_activation_alpha(Activation::kELU), 1.0f);
  EXPECT_EQ(default_activation_alpha(Activation::kReLU), 0.0f);
}

TEST(Activations, RejectsIntegerInput) {
  EXPECT_THROW(relu(zeros({3}, int64)), DTypeError);
}

}  // namespace
}  // namespace strata
