// MSE, MAE and Huber by hand; rank matching; errors; finite-difference gradients.
#include <gtest/gtest.h>

#include <string>

#include <strata/strata.h>

#include "support/gradient_check.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_gradients_match;

TEST(RegressionLosses, ByHand) {
  // errors [[1, 0], [0, -1]]: squared mean per row [0.5, 0.5], absolute mean [0.5, 0.5].
  const Tensor y = tensor({0.0f, 1.0f, 1.0f, 1.0f}, {2, 2});
  const Tensor p = tensor({1.0f, 1.0f, 1.0f, 0.0f}, {2, 2});
  expect_all_close(losses::mean_squared_error(y, p), tensor({0.5f, 0.5f}));
  expect_all_close(losses::mean_absolute_error(y, p), tensor({0.5f, 0.5f}));
  expect_all_close(losses::mse(y, p * 3.0), tensor({6.5f, 2.5f}));  // errors [3,2], [2,-1]
  expect_all_close(losses::mae(y, p * 3.0), tensor({2.5f, 1.5f}));
  EXPECT_NEAR(losses::MeanSquaredError()(y, p).item<double>(), 0.5, 1e-7);
  EXPECT_NEAR(losses::MeanAbsoluteError()(y, p).item<double>(), 0.5, 1e-7);
}

TEST(RegressionLosses, HuberByHand) {
  // delta 1, errors [0.5, 2]: 0.5 * 0.25 = 0.125 (quadratic) and 1 * 2 - 0.5 = 1.5 (linear);
  // mean 0.8125. With delta 3 both are quadratic: (0.125 + 2) / 2 = 1.0625.
  const Tensor y = tensor({0.0f, 0.0f}, {1, 2});
  const Tensor p = tensor({0.5f, -2.0f}, {1, 2});
  EXPECT_NEAR(losses::huber(y, p).item<double>(), 0.8125, 1e-7);
  EXPECT_NEAR(losses::Huber(3.0)(y, p).item<double>(), 1.0625, 1e-7);
  EXPECT_EQ(losses::Huber().name(), "huber_loss");
  EXPECT_THROW(losses::Huber(-1.0), ValueError);
}

TEST(RegressionLosses, RanksAreMatchedLikeKeras) {
  // [N] targets against [N, 1] predictions: one loss per sample, not an [N, N] broadcast.
  const Tensor y = tensor({1.0f, 2.0f, 3.0f});
  const Tensor p = tensor({1.0f, 4.0f, 0.0f}, {3, 1});
  expect_all_close(losses::mean_squared_error(y, p), tensor({0.0f, 4.0f, 9.0f}));
  expect_all_close(losses::mean_squared_error(reshape(y, {3, 1}), reshape(p, {3})),
                   tensor({0.0f, 4.0f, 9.0f}));
  // Integer targets are cast to the prediction's dtype.
  expect_all_close(losses::mean_absolute_error(tensor<int32_t>({1, 2, 3}, {3, 1}), p),
                   tensor({0.0f, 2.0f, 3.0f}));
}

TEST(RegressionLosses, ShapeAndDtypeErrors) {
  try {
    losses::mean_squared_error(ones({2, 3}), ones({2, 2}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("mean_squared_error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2,2]"), std::string::npos) << msg;
  }
  EXPECT_THROW(losses::mean_absolute_error(ones({3}), ones({3}, int32)), DTypeError);
}

TEST(RegressionLosses, GradientsMatchFiniteDifferences) {
  testing::GradCheckOptions opt;
  const Tensor y = tensor({0.3, -1.0, 2.0, 0.5, 1.5, -0.2}, {2, 3});
  const Tensor p = tensor({1.0, -0.2, 0.4, 0.1, 3.2, 0.6}, {2, 3});
  expect_gradients_match("mse", [](const std::vector<Tensor>& in) {
    return losses::mean_squared_error(in[0], in[1]);
  }, {y, p}, opt);
  expect_gradients_match("mae", [](const std::vector<Tensor>& in) {
    return losses::mean_absolute_error(in[0], in[1]);
  }, {y, p}, opt);
  // |errors| = 0.7, 0.8, 1.6, 0.4, 1.7, 0.8: both Huber branches, none at delta = 1.
  expect_gradients_match("huber", [](const std::vector<Tensor>& in) {
    return losses::huber(in[0], in[1]);
  }, {y, p}, opt);
}

}  // namespace
}  // namespace strata
