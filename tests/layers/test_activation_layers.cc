// Activations reached by name (Dense(4, "elu"), Activation("leaky_relu"), a loaded config's
// "activation": "elu") against Keras 3's own references and defaults, the object form with
// arguments (gelu approximate), and the LeakyReLU, ELU and PReLU layers (Keras' tests ported).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "layers/keras_activation.h"
#include "layers/layer_test_utils.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_config_round_trip;
using testing::expect_error;
using testing::floats;
using testing::kLayerGrad;

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double softplus_ref(double x) { return std::log1p(std::exp(x)); }

struct NamedCase {
  const char* name;
  std::function<double(double)> ref;  // Keras 3's definition with its default arguments
};

// Every name keras.activations.get() resolves that Strata implements, with the references of
// keras/src/activations/activations_test.py (and the docstrings where the test has none).
std::vector<NamedCase> keras_named_activations() {
  const double selu_alpha = 1.6732632423543772, selu_scale = 1.0507009873554805;
  return {
      {"linear", [](double x) { return x; }},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"leaky_relu", [](double x) { return x > 0 ? x : 0.2 * x; }},  // negative_slope=0.2
      {"elu", [](double x) { return x > 0 ? x : std::expm1(x); }},  // alpha=1.0
      {"selu", [=](double x) { return selu_scale * (x > 0 ? x : selu_alpha * std::expm1(x)); }},
      {"gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},  // exact
      {"sigmoid", sigmoid_ref},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"silu", [](double x) { return x * sigmoid_ref(x); }},
      {"swish", [](double x) { return x * sigmoid_ref(x); }},
      {"softplus", softplus_ref},
      {"relu6", [](double x) { return std::min(std::max(0.0, x), 6.0); }},
      {"hard_sigmoid", [](double x) { return std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0); }},
      {"softsign", [](double x) { return x / (1 + std::fabs(x)); }},
      {"hard_silu", [](double x) { return x * std::min(std::max(0.0, x + 3.0), 6.0) / 6.0; }},
      {"hard_swish", [](double x) { return x * std::min(std::max(0.0, x + 3.0), 6.0) / 6.0; }},
      {"mish", [](double x) { return x * std::tanh(softplus_ref(x)); }},
      {"log_sigmoid", [](double x) { return -softplus_ref(-x); }},
      {"exponential", [](double x) { return std::exp(x); }},
      {"hard_tanh", [](double x) { return std::min(std::max(x, -1.0), 1.0); }},
  };
}

const std::vector<float> kInputs = {-5.0f, -2.5f, -1.3f, -0.4f, 0.2f, 0.7f, 1.6f, 4.5f};

Tensor inputs() { return Tensor::from_vector(kInputs, Shape{1, 8}); }

Tensor reference(const NamedCase& c) {
  std::vector<double> out;
  for (float x : kInputs) out.push_back(c.ref(double(x)));
  return Tensor::from_vector(out, Shape{1, 8}).cast(float32);
}

Tensor identity_matrix(int64_t n) {
  std::vector<float> v(size_t(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) v[size_t(i * n + i)] = 1.0f;
  return Tensor::from_vector(v, Shape{n, n});
}

// Makes `dense` pass its input through (identity kernel, zero bias) into its activation.
void make_identity(Dense& dense) {
  dense(zeros({1, 8}));  // builds
  dense.kernel()->assign(identity_matrix(8));
}

// A Dense layer from a Keras 2 config whose "activation" is `activation`.
std::shared_ptr<Dense> dense_from_keras_config(const std::string& activation) {
  const Json config = Json::parse(R"({"class_name": "Dense", "config": {"name": "d",
      "trainable": true, "dtype": "float32", "units": 8, "activation": ")" + activation + R"(",
      "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config":
      {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}},
      "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null,
      "kernel_constraint": null, "bias_constraint": null}})");
  return std::dynamic_pointer_cast<Dense>(layer_from_config(config));
}

TEST(ActivationByName, EveryNameMatchesKeras3ThroughEveryPath) {
  for (const NamedCase& c : keras_named_activations()) {
    SCOPED_TRACE(c.name);
    const Tensor expected = reference(c);
    // keras.layers.Activation("name")
    ActivationLayer layer(c.name);
    expect_all_close(layer(inputs()), expected, 1e-5, 1e-6);
    // Dense(units, "name"): the activation argument of a layer with weights.
    Dense dense(8, c.name);
    make_identity(dense);
    expect_all_close(dense(inputs()), expected, 1e-5, 1e-6);
    // A Keras config's "activation": "name", through the layer registry.
    std::shared_ptr<Dense> loaded = dense_from_keras_config(c.name);
    ASSERT_TRUE(loaded);
    make_identity(*loaded);
    expect_all_close((*loaded)(inputs()), expected, 1e-5, 1e-6);
    // Activation layer from a Keras config.
    auto from_json = layer_from_config(Json::parse(
        std::string(R"({"class_name": "Activation", "config": {"name": "a", "activation": ")") +
        c.name + "\"}}"));
    expect_all_close((*from_json)(inputs()), expected, 1e-5, 1e-6);
  }
}

TEST(ActivationByName, EluAndLeakyReluTakeKerasDefaults) {
  // The defect: alpha 0 gave -0 for negative inputs.
  ActivationLayer elu_layer("elu");
  // Keras' test_elu: negative values give exp(x) - 1.
  expect_all_close(elu_layer(tensor({-1.0f, -2.0f}, {1, 2})),
                   tensor({float(std::expm1(-1.0)), float(std::expm1(-2.0))}, {1, 2}));
  ActivationLayer leaky("leaky_relu");
  expect_all_close(leaky(tensor({-10.0f, -5.0f, 0.0f, 5.0f}, {1, 4})),
                   tensor({-2.0f, -1.0f, 0.0f, 5.0f}, {1, 4}));
}

TEST(ActivationByName, SoftmaxAndLogSoftmaxByName) {
  const Tensor x = tensor({1.0f, 2.0f, 3.0f}, {1, 3});
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  expect_all_close(ActivationLayer("softmax")(x),
                   tensor({float(std::exp(1.0) / z), float(std::exp(2.0) / z),
                           float(std::exp(3.0) / z)}, {1, 3}));
  expect_all_close(ActivationLayer("log_softmax")(x),
                   tensor({float(1 - std::log(z)), float(2 - std::log(z)), float(3 - std::log(z))},
                          {1, 3}));
  // Keras' softmax(x, axis=0) through the object form.
  expect_all_close(ActivationLayer(activation_config("softmax", Json::object({{"axis", 0}})))(x),
                   ones({1, 3}));
}

// keras/src/activations/activations_test.py: test_relu_* with every argument.
TEST(ActivationByName, ReluArgumentsAsKeras) {
  const Tensor x = tensor({-10.0f, -5.0f, 0.0f, 5.0f, 10.0f}, {1, 5});
  auto relu_with = [&](Json args) { return ActivationLayer(activation_config("relu", args))(x); };
  expect_all_close(relu_with(Json::object({{"negative_slope", 0.5}})),
                   tensor({-5.0f, -2.5f, 0.0f, 5.0f, 10.0f}, {1, 5}));
  expect_all_close(relu_with(Json::object({{"max_value", 5.0}})),
                   tensor({0.0f, 0.0f, 0.0f, 5.0f, 5.0f}, {1, 5}));
  expect_all_close(relu_with(Json::object({{"threshold", 5.0}})),
                   tensor({0.0f, 0.0f, 0.0f, 0.0f, 10.0f}, {1, 5}));
  expect_all_close(relu_with(Json::object({{"threshold", 5.0}, {"max_value", 5.0}})),
                   tensor({0.0f, 0.0f, 0.0f, 0.0f, 5.0f}, {1, 5}));
  expect_all_close(
      relu_with(Json::object({{"negative_slope", 0.5}, {"max_value", 5.0}, {"threshold", 5.0}})),
      tensor({-7.5f, -5.0f, -2.5f, 0.0f, 5.0f}, {1, 5}));
  const Tensor x6 = tensor({-10.0f, -5.0f, 0.0f, 5.0f, 10.0f, 12.0f}, {1, 6});
  expect_all_close(ActivationLayer(activation_config("relu", Json::object({{"max_value", 6.0}})))(x6),
                   tensor({0.0f, 0.0f, 0.0f, 5.0f, 6.0f, 6.0f}, {1, 6}));
  // The ReLU layer computes the same function (keras/src/layers/activations/relu_test.py).
  ReLU layer(ReLUOptions().negative_slope(0.5).max_value(5.0).threshold(5.0));
  expect_all_close(layer(x), tensor({-7.5f, -5.0f, -2.5f, 0.0f, 5.0f}, {1, 5}));
}

TEST(ActivationByName, GeluApproximateByConfig) {
  const Json approximate = activation_config("gelu", Json::object({{"approximate", true}}));
  const Tensor x = tensor({-2.0f, -0.5f, 0.3f, 1.7f}, {1, 4});
  const double k = std::sqrt(2.0 / M_PI);
  std::vector<double> ref;
  for (float v : floats(x)) {
    ref.push_back(0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v))));
  }
  const Tensor expected = Tensor::from_vector(ref, Shape{1, 4}).cast(float32);
  ActivationLayer layer(approximate);
  expect_all_close(layer(x), expected, 1e-5, 1e-6);
  // Saved and reloaded with its argument; the exact form differs from it.
  auto copy = expect_config_round_trip(layer);
  expect_all_close((*copy)(x), expected, 1e-5, 1e-6);
  EXPECT_GT(std::fabs(floats(ActivationLayer("gelu")(x))[3] - floats(expected)[3]), 1e-5f);
  // In a Dense layer's Keras config too.
  auto dense = layer_from_config(Json::parse(R"({"class_name": "Dense", "config": {"units": 2,
      "activation": {"class_name": "gelu", "config": {"approximate": true}}}})"));
  EXPECT_EQ(dense->get_config().at("activation"), approximate);
  // Keras 3's serialised function form of a plain name.
  ActivationLayer function_form(Json::parse(
      R"({"module": "keras.activations", "class_name": "function", "config": "elu",
          "registered_name": "function"})"));
  expect_all_close(function_form(tensor({-1.0f}, {1, 1})), tensor({float(std::expm1(-1.0))}, {1, 1}));
}

TEST(ActivationByName, ArgumentsOfLeakyReluAndElu) {
  const Tensor x = tensor({-2.0f, 3.0f}, {1, 2});
  expect_all_close(
      ActivationLayer(activation_config("leaky_relu", Json::object({{"negative_slope", 0.5}})))(x),
      tensor({-1.0f, 3.0f}, {1, 2}));
  expect_all_close(ActivationLayer(activation_config("elu", Json::object({{"alpha", 0.5}})))(x),
                   tensor({float(0.5 * std::expm1(-2.0)), 3.0f}, {1, 2}));
}

TEST(ActivationByName, ErrorsNameTheActivationAndWhatIsKnown) {
  expect_error<ValueError>([] { ActivationLayer("relu7"); }, {"relu7", "mish", "softmax"});
  expect_error<ValueError>([] { Dense(3, "sigmoidal"); }, {"sigmoidal"});
  expect_error<ValueError>(
      [] { ActivationLayer(activation_config("gelu", Json::object({{"alpha", 1.0}}))); },
      {"gelu", "alpha", "approximate"});
  expect_error<ValueError>(
      [] { ActivationLayer(activation_config("tanh", Json::object({{"alpha", 1.0}}))); },
      {"tanh", "takes none"});
  expect_error<ValueError>([] { ActivationLayer(Json(3)); }, {"activation", "name"});
}

// ---- LeakyReLU, ELU, PReLU (keras/src/layers/activations/*_test.py) ----

TEST(LeakyReLULayer, CorrectnessAndKeras3Default) {
  LeakyReLU layer(0.5);
  expect_all_close(layer(tensor({-10.0f, -5.0f, 0.0f, 5.0f, 10.0f}, {1, 5})),
                   tensor({-5.0f, -2.5f, 0.0f, 5.0f, 10.0f}, {1, 5}));
  LeakyReLU plain;  // Keras 3's layer default is 0.3
  EXPECT_DOUBLE_EQ(plain.negative_slope(), 0.3);
  EXPECT_EQ(plain.name().rfind("leaky_re_lu", 0), 0u);
  expect_all_close(plain(tensor({-1.0f}, {1, 1})), tensor({-0.3f}, {1, 1}));
  auto copy = expect_config_round_trip(layer);
  EXPECT_DOUBLE_EQ(copy->get_config().at("negative_slope").as_double(), 0.5);
  // Keras 2 configs call the slope "alpha".
  auto keras2 = layer_from_config(
      Json::parse(R"({"class_name": "LeakyReLU", "config": {"name": "lr", "alpha": 0.1}})"));
  expect_all_close((*keras2)(tensor({-1.0f}, {1, 1})), tensor({-0.1f}, {1, 1}));
  expect_error<ValueError>([] { LeakyReLU(-1.0); }, {"negative_slope", "-1"});
  expect_error<ValueError>([] { LeakyReLU(std::nan("")); }, {"negative_slope"});
}

TEST(ELULayer, CorrectnessDefaultAndConfig) {
  ELU layer;
  EXPECT_DOUBLE_EQ(layer.alpha(), 1.0);
  EXPECT_EQ(layer.name().rfind("elu", 0), 0u);
  expect_all_close(layer(tensor({-1.0f, 2.0f}, {1, 2})),
                   tensor({float(std::expm1(-1.0)), 2.0f}, {1, 2}));
  ELU half(0.5);
  expect_all_close(half(tensor({-1.0f}, {1, 1})), tensor({float(0.5 * std::expm1(-1.0))}, {1, 1}));
  auto copy = expect_config_round_trip(half);
  // Keras 3's ELU writes no "alpha" in its config: missing means 1.0.
  auto keras3 = layer_from_config(Json::parse(R"({"class_name": "ELU", "config": {"name": "e"}})"));
  expect_all_close((*keras3)(tensor({-1.0f}, {1, 1})), tensor({float(std::expm1(-1.0))}, {1, 1}));
}

TEST(PReLULayer, KerasCorrectnessWithSharedAxes) {
  // test_prelu_correctness: alpha of shape (1, 1, 3) with shared_axes (1, 2).
  PReLU layer(PReLUOptions().shared_axes({1, 2}).alpha_initializer(initializers::glorot_uniform()));
  const Tensor x = random_normal({2, 10, 5, 3}, 0, 1, float32, 3);
  layer(x);  // builds
  ASSERT_TRUE(layer.alpha());
  EXPECT_EQ(layer.alpha()->shape(), Shape({1, 1, 3}));
  EXPECT_EQ(layer.alpha()->name(), layer.name() + "/alpha");
  const Tensor alpha = tensor({0.1f, 0.5f, 0.9f}, {1, 1, 3});
  layer.alpha()->assign(alpha);
  const std::vector<float> xv = floats(x), yv = floats(layer(x));
  for (size_t i = 0; i < xv.size(); ++i) {
    const float a = floats(alpha)[i % 3];
    EXPECT_FLOAT_EQ(yv[i], xv[i] > 0 ? xv[i] : a * xv[i]) << i;
  }
}

TEST(PReLULayer, DefaultsConfigAndGradients) {
  PReLU layer;
  EXPECT_EQ(layer.name().rfind("p_re_lu", 0), 0u);
  const Tensor x = tensor({-2.0f, -0.5f, 0.5f, 2.0f, -1.0f, 3.0f}, {2, 3});
  // alpha starts at zeros: a plain ReLU.
  expect_all_close(layer(x), relu(x));
  EXPECT_EQ(layer.alpha()->shape(), Shape({3}));
  const Json c = layer.get_config();
  EXPECT_TRUE(c.at("shared_axes").is_null());
  EXPECT_EQ(c.at("alpha_initializer").at("class_name").as_string(), "Zeros");
  expect_config_round_trip(PReLU(PReLUOptions().shared_axes({1})));
  // Keras writes one shared axis as a list or a number.
  auto one_axis = layer_from_config(
      Json::parse(R"({"class_name": "PReLU", "config": {"shared_axes": 1}})"));
  (*one_axis)(x);
  EXPECT_EQ(std::dynamic_pointer_cast<PReLU>(one_axis)->alpha()->shape(), Shape({1}));
  layer.alpha()->assign(tensor({0.2f, 0.4f, 0.6f}, {3}));
  testing::expect_variable_gradients_match("prelu", [&] { return layer(x); },
                                           {layer.alpha()}, kLayerGrad);
  expect_error<ValueError>([] { PReLU(PReLUOptions().shared_axes({0})); }, {"shared_axes"});
  expect_error<ValueError>([&] { PReLU(PReLUOptions().shared_axes({3}))(x); }, {"shared axis 3"});
}

TEST(PReLULayer, LearnsANegativeSlope) {
  // y = 0.25 * x for x < 0, x otherwise: PReLU fits alpha to 0.25 by gradient descent.
  set_random_seed(1);
  const Tensor x = random_uniform({256, 1}, -2.0, 2.0);
  const Tensor y = where(greater(x, zeros_like(x)), x, x * 0.25);
  auto inputs = Input({1});
  auto prelu = std::make_shared<PReLU>();
  Model model(inputs, (*prelu)(inputs));
  model.compile(std::make_shared<optimizers::SGD>(0.5), "mse");
  model.fit(x, y, FitOptions().epochs(30).batch_size(64).verbose(0));
  EXPECT_NEAR(prelu->alpha()->read_value().to_vector<float>()[0], 0.25, 0.01);
}

}  // namespace
}  // namespace strata
