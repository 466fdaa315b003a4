// BatchNormalization and LayerNormalization.
#include <gtest/gtest.h>

#include <cmath>

#include <strata/strata.h>

#include "layers/layer_test_utils.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_config_round_trip;
using testing::expect_error;
using testing::kLayerGrad;

using testing::floats;

// ---- BatchNormalization ----

TEST(BatchNormalization, KerasWeightsTrainabilityAndAggregation) {
  BatchNormalization bn(BatchNormalizationOptions().name("bn_probe"));
  bn(zeros({2, 3, 3, 4}));
  const auto w = bn.weights();
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0]->name(), "bn_probe/gamma");
  EXPECT_EQ(w[1]->name(), "bn_probe/beta");
  EXPECT_EQ(w[2]->name(), "bn_probe/moving_mean");
  EXPECT_EQ(w[3]->name(), "bn_probe/moving_variance");
  for (const auto& v : w) EXPECT_EQ(v->shape(), Shape({4}));
  EXPECT_EQ(bn.trainable_weights().size(), 2u);
  EXPECT_EQ(bn.non_trainable_weights().size(), 2u);
  EXPECT_EQ(w[2]->aggregation(), VariableAggregation::kMean);
  EXPECT_EQ(w[3]->aggregation(), VariableAggregation::kMean);
  EXPECT_EQ(floats(w[0]->value()), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(floats(w[3]->value()), (std::vector<float>{1, 1, 1, 1}));
  // Freezing then unfreezing leaves the moving statistics non-trainable.
  bn.set_trainable(false);
  EXPECT_EQ(bn.trainable_weights().size(), 0u);
  bn.set_trainable(true);
  EXPECT_EQ(bn.trainable_weights().size(), 2u);
  BatchNormalization plain(BatchNormalizationOptions().center(false).scale(false));
  EXPECT_EQ(plain.name().rfind("batch_normalization", 0), 0u);
  plain(zeros({2, 3}));
  EXPECT_EQ(plain.weights().size(), 2u);  // moving statistics only
}

TEST(BatchNormalization, TrainingUsesBatchStatsAndUpdatesMovingStats) {
  BatchNormalization bn(BatchNormalizationOptions().momentum(0.9));
  // Channel 0: {1, 3} (mean 2, biased variance 1); channel 1: {10, 30} (mean 20, variance 100).
  const Tensor x = tensor({1.f, 10.f, 3.f, 30.f}, {2, 2});
  const Tensor y = bn(x, /*training=*/true);
  const float a = 1.0f / std::sqrt(1.001f), b = 10.0f / std::sqrt(100.001f);
  expect_all_close(y, tensor({-a, -b, a, b}, {2, 2}), 1e-4, 1e-5);
  // moving = moving * 0.9 + batch * 0.1
  expect_all_close(bn.moving_mean()->value(), tensor({0.2f, 2.0f}, {2}), 1e-5, 1e-6);
  expect_all_close(bn.moving_variance()->value(), tensor({1.0f, 10.9f}, {2}), 1e-5, 1e-6);
  // Inference uses the moving statistics (and changes nothing).
  const Tensor z = bn(x);
  expect_all_close(z, tensor({0.8f / std::sqrt(1.001f), 8.0f / std::sqrt(10.901f),
                              2.8f / std::sqrt(1.001f), 28.0f / std::sqrt(10.901f)}, {2, 2}),
                   1e-4, 1e-5);
  expect_all_close(bn.moving_mean()->value(), tensor({0.2f, 2.0f}, {2}), 1e-5, 1e-6);
}

TEST(BatchNormalization, FrozenLayerRunsInInferenceMode) {
  BatchNormalization bn(BatchNormalizationOptions().moving_mean_initializer(initializers::constant(1)));
  const Tensor x = tensor({1.f, 3.f}, {2, 1});
  bn(x);
  bn.set_trainable(false);
  const Tensor y = bn(x, /*training=*/true);
  // (x - 1) / sqrt(1 + 0.001), and the moving mean is untouched.
  expect_all_close(y, tensor({0.f, 2.f / std::sqrt(1.001f)}, {2, 1}), 1e-5, 1e-6);
  EXPECT_EQ(floats(bn.moving_mean()->value()), (std::vector<float>{1}));
}

TEST(BatchNormalization, GradientsInTrainingAndInference) {
  set_random_seed(6);
  BatchNormalization bn(BatchNormalizationOptions().gamma_initializer(initializers::random_normal(1.0, 0.3))
                            .beta_initializer(initializers::random_normal(0.0, 0.3)));
  const Tensor x = random_normal({2, 2, 2, 3}, 0, 1, float32, 21);
  bn(x);
  bn.moving_variance()->assign(tensor({0.5f, 2.0f, 1.5f}, {3}));
  for (bool training : {true, false}) {
    testing::expect_gradients_match(training ? "bn_training" : "bn_inference",
                                    [&](const std::vector<Tensor>& in) { return bn(in[0], training); },
                                    {x}, kLayerGrad);
    testing::expect_variable_gradients_match(training ? "bn_training" : "bn_inference",
                                             [&] { return bn(x, training); }, bn.trainable_weights());
  }
}

TEST(BatchNormalization, BadAxisInputsAndArguments) {
  BatchNormalization axis1(BatchNormalizationOptions().axis(1).name("bn_axis"));
  expect_error<ValueError>([&] { axis1(zeros({2, 3, 3, 4})); }, {"bn_axis", "axis=1", "channels"});
  BatchNormalization axis3(BatchNormalizationOptions().axis(3));
  EXPECT_EQ(axis3(zeros({2, 3, 3, 4})).shape(), Shape({2, 3, 3, 4}));  // 3 is the last axis
  BatchNormalization bn(BatchNormalizationOptions().name("bn_bad"));
  expect_error<ShapeError>([&] { bn(zeros({4})); }, {"bn_bad", "[4]"});
  bn(zeros({2, 4}));
  expect_error<ShapeError>([&] { bn(zeros({2, 5})); }, {"bn_bad", "4", "[2,5]"});
  expect_error<ValueError>([] { BatchNormalization(BatchNormalizationOptions().momentum(1.5)); }, {"momentum"});
  expect_error<ValueError>([] { BatchNormalization(BatchNormalizationOptions().epsilon(0)); }, {"epsilon"});
}

TEST(BatchNormalization, KerasConfigRoundTrip) {
  BatchNormalization bn(BatchNormalizationOptions().momentum(0.9).epsilon(1e-5).center(false)
                            .gamma_regularizer(regularizers::l2(1e-4)));
  const Json c = bn.get_config();
  EXPECT_EQ(c.at("axis").as_int(), -1);
  EXPECT_DOUBLE_EQ(c.at("momentum").as_double(), 0.9);
  EXPECT_DOUBLE_EQ(c.at("epsilon").as_double(), 1e-5);
  EXPECT_FALSE(c.at("center").as_bool());
  EXPECT_TRUE(c.at("scale").as_bool());
  EXPECT_EQ(c.at("beta_initializer").at("class_name").as_string(), "Zeros");
  EXPECT_EQ(c.at("gamma_initializer").at("class_name").as_string(), "Ones");
  EXPECT_EQ(c.at("moving_mean_initializer").at("class_name").as_string(), "Zeros");
  EXPECT_EQ(c.at("moving_variance_initializer").at("class_name").as_string(), "Ones");
  expect_config_round_trip(bn);
  // Keras 2 writes the built axis as a list.
  auto k2 = layer_from_config(Json::parse(R"({"class_name": "BatchNormalization",
      "config": {"axis": [3], "momentum": 0.9}})"));
  EXPECT_EQ(k2->get_config().at("axis").as_int(), 3);
}

// ---- LayerNormalization ----

TEST(LayerNormalization, NormalisesEachSampleOverTheLastAxis) {
  LayerNormalization ln(LayerNormalizationOptions().name("ln_probe"));
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f, 2.f, 2.f, 2.f, 2.f}, {2, 4});
  const Tensor y = ln(x);
  const float s = 1.0f / std::sqrt(1.25f + 1e-3f);  // mean 2.5, biased variance 1.25
  expect_all_close(y, tensor({-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s, 0.f, 0.f, 0.f, 0.f}, {2, 4}),
                   1e-5, 1e-6);
  ASSERT_EQ(ln.weights().size(), 2u);
  EXPECT_EQ(ln.weights()[0]->name(), "ln_probe/gamma");
  EXPECT_EQ(ln.weights()[1]->name(), "ln_probe/beta");
  EXPECT_EQ(ln.weights()[0]->shape(), Shape({4}));
  LayerNormalization d;
  EXPECT_EQ(d.name().rfind("layer_normalization", 0), 0u);
}

TEST(LayerNormalization, GammaBetaAndSeveralAxes) {
  LayerNormalization ln(LayerNormalizationOptions().gamma_initializer(initializers::constant(2))
                            .beta_initializer(initializers::constant(1)));
  const Tensor y = ln(tensor({0.f, 2.f}, {1, 2}));  // normalised: -1/sqrt(1+eps), +1/sqrt(1+eps)
  const float n = 1.0f / std::sqrt(1.001f);
  expect_all_close(y, tensor({1 - 2 * n, 1 + 2 * n}, {1, 2}), 1e-5, 1e-6);
  LayerNormalization hw(LayerNormalizationOptions().axis(std::vector<int>{1, 2}).center(false));
  const Tensor x = tensor({1.f, 5.f, 3.f, 7.f}, {1, 2, 2, 1});
  const Tensor z = hw(x);  // mean 4, variance 5
  const float t = 1.0f / std::sqrt(5.001f);
  expect_all_close(z, tensor({-3 * t, 1 * t, -1 * t, 3 * t}, {1, 2, 2, 1}), 1e-5, 1e-6);
  ASSERT_EQ(hw.weights().size(), 1u);
  EXPECT_EQ(hw.weights()[0]->shape(), Shape({2, 2}));
  expect_config_round_trip(hw);
  EXPECT_EQ(hw.get_config().at("axis").as_int_vector(), (std::vector<int64_t>{1, 2}));
}

TEST(LayerNormalization, GradientsThroughLayer) {
  set_random_seed(8);
  LayerNormalization ln(LayerNormalizationOptions().gamma_initializer(initializers::random_normal(1.0, 0.3))
                            .beta_initializer(initializers::random_normal(0.0, 0.3)));
  const Tensor x = random_normal({3, 4}, 0, 1, float32, 31);
  ln(x);
  testing::expect_gradients_match("layer_norm", [&](const std::vector<Tensor>& in) { return ln(in[0]); },
                                  {x}, kLayerGrad);
  testing::expect_variable_gradients_match("layer_norm", [&] { return ln(x); }, ln.trainable_weights());
}

TEST(LayerNormalization, ErrorsAndConfig) {
  LayerNormalization ln(LayerNormalizationOptions().name("ln_bad").epsilon(1e-6));
  expect_error<ValueError>([&] { LayerNormalization(LayerNormalizationOptions().axis(0))(zeros({2, 3})); },
                           {"axis 0"});
  ln(zeros({2, 3}));
  expect_error<ShapeError>([&] { ln(zeros({2, 4})); }, {"ln_bad", "[2,4]"});
  expect_error<ValueError>([] { LayerNormalization(LayerNormalizationOptions().epsilon(-1)); }, {"epsilon"});
  const Json c = ln.get_config();
  EXPECT_EQ(c.at("axis").as_int(), -1);
  EXPECT_DOUBLE_EQ(c.at("epsilon").as_double(), 1e-6);
  EXPECT_TRUE(c.at("center").as_bool());
  EXPECT_TRUE(c.at("scale").as_bool());
  expect_config_round_trip(ln);
}

}  // namespace
}  // namespace strata
