// Rescaling and Normalization: hand-computed outputs, adapt statistics, configs, bad inputs.
#include <gtest/gtest.h>

#include <cmath>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

TEST(PreprocessingRescaling, ScalesAndCastsIntegers) {
  Rescaling r(1.0 / 127.5, -1.0);
  EXPECT_EQ(r.name().rfind("rescaling", 0), 0u);
  Tensor y = r(Tensor::from_vector(std::vector<uint8_t>{0, 255, 51}, {1, 3}));
  EXPECT_EQ(y.dtype(), float32);
  auto v = y.to_vector<float>();
  EXPECT_NEAR(v[0], -1.f, 1e-6);
  EXPECT_NEAR(v[1], 1.f, 1e-6);
  EXPECT_NEAR(v[2], -0.6f, 1e-6);
  Json c = r.get_config();
  EXPECT_DOUBLE_EQ(c.at("scale").as_double(), 1.0 / 127.5);
  auto r2 = Rescaling::from_config(c);
  EXPECT_EQ(r2->get_config(), c);
  EXPECT_THROW(Rescaling(std::nan("")), ValueError);
}

TEST(PreprocessingNormalization, AdaptComputesPerFeatureStatistics) {
  // Keras' docstring example: per-feature mean [1, 8, 5], variance [1, 1, 1].
  Normalization norm(NormalizationOptions().name("norm_probe"));
  norm.adapt(tensor({0.f, 7.f, 4.f, 2.f, 9.f, 6.f, 0.f, 7.f, 4.f, 2.f, 9.f, 6.f}, {4, 3}));
  ASSERT_EQ(norm.weights().size(), 3u);
  EXPECT_EQ(norm.weights()[0]->name(), "norm_probe/mean");
  EXPECT_EQ(norm.weights()[1]->name(), "norm_probe/variance");
  EXPECT_EQ(norm.weights()[2]->name(), "norm_probe/count");
  EXPECT_TRUE(norm.trainable_weights().empty());
  EXPECT_EQ(norm.weights()[0]->value().to_vector<float>(), (std::vector<float>{1, 8, 5}));
  EXPECT_EQ(norm.weights()[1]->value().to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(norm.weights()[2]->value().item<int64_t>(), 4);
  Tensor y = norm(tensor({0.f, 7.f, 4.f}, {1, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-1, -1, -1}));
}

TEST(PreprocessingNormalization, GlobalAxisAndInvert) {
  Normalization norm(NormalizationOptions().axis(std::vector<int>{}));  // Keras axis=None
  norm.adapt(tensor({1.f, 2.f, 3.f, 4.f, 5.f}, {5}));  // mean 3, variance 2
  auto v = norm(tensor({1.f, 2.f, 3.f}, {3})).to_vector<float>();
  EXPECT_NEAR(v[0], -1.4142135f, 1e-6);
  EXPECT_NEAR(v[1], -0.70710677f, 1e-6);
  EXPECT_NEAR(v[2], 0.f, 1e-6);
  Normalization inv(NormalizationOptions().mean(3.0).variance(2.0).invert(true));
  auto w = inv(tensor({-1.4142135f, 0.f}, {2, 1})).to_vector<float>();
  EXPECT_NEAR(w[0], 1.f, 1e-5);
  EXPECT_NEAR(w[1], 3.f, 1e-6);
}

TEST(PreprocessingNormalization, GivenStatisticsAndEpsilon) {
  Normalization norm(NormalizationOptions().mean(std::vector<double>{1, 2}).variance(std::vector<double>{4, 0}));
  Tensor y = norm(tensor({3.f, 2.f, 5.f, 2.f}, {2, 2}));
  // feature 0: (x - 1) / 2; feature 1: variance 0 -> divides by epsilon 1e-7, 0 / eps = 0.
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 0, 2, 0}));
  EXPECT_TRUE(norm.weights().empty());  // Keras: given statistics are constants, not weights
  Json c = norm.get_config();
  EXPECT_EQ(c.at("mean").dump(), "[1.0,2.0]");
  EXPECT_EQ(Normalization::from_config(c)->get_config(), c);
}

TEST(PreprocessingNormalization, ConfigRoundTripAndErrors) {
  Normalization norm(NormalizationOptions().axis(std::vector<int>{1, 2}).name("n3"));
  Json c = norm.get_config();
  EXPECT_EQ(c.at("axis").as_int_vector(), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(c.at("mean").is_null());
  EXPECT_FALSE(c.at("invert").as_bool());
  EXPECT_EQ(Normalization::from_config(c)->get_config(), c);

  Normalization fresh;
  // Not adapted: Keras' initial statistics (mean 0, variance 1) apply, so the values pass through.
  EXPECT_EQ(fresh(tensor({1.f, -2.f, 3.f}, {1, 3})).to_vector<float>(),
            (std::vector<float>{1.f, -2.f, 3.f}));
  expect_error<ValueError>([] { Normalization(NormalizationOptions().mean(1.0)); },
                           {"both `mean` and `variance`"});
  Normalization bad_axis(NormalizationOptions().axis(3));
  expect_error<ValueError>([&] { bad_axis.adapt(zeros({2, 3})); }, {"axis", "ndim=2"});
  Normalization adapted;
  adapted.adapt(tensor({1.f, 2.f, 3.f, 5.f}, {2, 2}));
  expect_error<ShapeError>([&] { adapted(zeros({2, 3})); }, {"[2,3]"});
  expect_error<ValueError>([&] { adapted.adapt(zeros({2, 3})); }, {"incompatible shape"});
  Normalization given(NormalizationOptions().mean(0.0).variance(1.0));
  expect_error<ValueError>([&] { given.adapt(zeros({2, 3})); }, {"adapt()"});
}

TEST(PreprocessingNormalization, RestoredWeightsCountAsAdapted) {
  Normalization a, b;
  a.adapt(tensor({1.f, 3.f}, {2, 1}));  // mean 2, variance 1
  EXPECT_EQ(b(tensor({4.f}, {1, 1})).to_vector<float>(), (std::vector<float>{4}));  // builds b
  EXPECT_FALSE(b.is_adapted());
  ASSERT_EQ(b.weights().size(), 3u);
  for (size_t i = 0; i < 3; ++i) b.weights()[i]->assign(a.weights()[i]->value());  // a "load"
  EXPECT_TRUE(b.is_adapted());
  EXPECT_EQ(b(tensor({4.f}, {1, 1})).to_vector<float>(), (std::vector<float>{2}));
}

}  // namespace
}  // namespace strata
