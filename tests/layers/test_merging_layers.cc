// Add, Subtract, Multiply and Concatenate.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "layers/layer_test_utils.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_config_round_trip;
using testing::expect_error;
using testing::kLayerGrad;

using testing::floats;

const Tensor& a() { static Tensor t = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}); return t; }
const Tensor& b() { static Tensor t = tensor({10.f, 20.f, 30.f, 40.f}, {2, 2}); return t; }

TEST(Merging, AddSubtractMultiplyValues) {
  Add add_layer;
  EXPECT_EQ(add_layer.name().rfind("add", 0), 0u);
  EXPECT_EQ(floats(add_layer({a(), b(), a()})), (std::vector<float>{12, 24, 36, 48}));
  Subtract sub;
  EXPECT_EQ(sub.name().rfind("subtract", 0), 0u);
  EXPECT_EQ(floats(sub({b(), a()})), (std::vector<float>{9, 18, 27, 36}));
  Multiply mul;
  EXPECT_EQ(mul.name().rfind("multiply", 0), 0u);
  EXPECT_EQ(floats(mul({a(), b()})), (std::vector<float>{10, 40, 90, 160}));
  // Keras broadcasts dims of 1.
  EXPECT_EQ(floats(Add()({a(), tensor({1.f, 1.f}, {2, 1})})), (std::vector<float>{2, 3, 4, 5}));
}

TEST(Merging, ShapeAndCountErrors) {
  Add add_layer("add_bad");
  expect_error<ShapeError>([&] { add_layer({zeros({2, 3}), zeros({2, 4})}); }, {"add_bad", "[2,3]", "[2,4]"});
  expect_error<ValueError>([&] { Add()(std::vector<Tensor>{zeros({2, 3})}); }, {"at least 2"});
  Subtract sub("sub_bad");
  expect_error<ValueError>([&] { sub({a(), a(), a()}); }, {"sub_bad", "exactly 2", "3"});
  Multiply mul("mul_bad");
  mul({a(), b()});
  expect_error<ShapeError>([&] { mul({a(), zeros({3, 2})}); }, {"mul_bad", "[2,2]", "[3,2]"});
}

TEST(Merging, Gradients) {
  Add add_layer;
  Subtract sub;
  Multiply mul;
  const std::vector<Tensor> in{random_normal({2, 3}, 0, 1, float32, 1), random_normal({2, 3}, 0, 1, float32, 2)};
  testing::expect_gradients_match("add", [&](const std::vector<Tensor>& x) { return add_layer(x); }, in, kLayerGrad);
  testing::expect_gradients_match("subtract", [&](const std::vector<Tensor>& x) { return sub(x); }, in, kLayerGrad);
  testing::expect_gradients_match("multiply", [&](const std::vector<Tensor>& x) { return mul(x); }, in, kLayerGrad);
}

TEST(Concatenate, AxisValuesErrorsAndGradients) {
  Concatenate last;
  EXPECT_EQ(last.name().rfind("concatenate", 0), 0u);
  const Tensor y = last({a(), tensor({5.f, 6.f}, {2, 1})});
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  Concatenate first(1, "cat1");
  const Tensor x3 = arange(0, 8, 1, float32).reshape({2, 2, 2});
  EXPECT_EQ(first({x3, x3}).shape(), Shape({2, 4, 2}));
  expect_error<ShapeError>([&] { first({x3, zeros({2, 2, 3})}); }, {"cat1", "[2,2,2]", "[2,2,3]"});
  expect_error<ValueError>([&] { Concatenate(0)({a(), a()}); }, {"axis"});
  expect_error<ValueError>([&] { Concatenate()(std::vector<Tensor>{a()}); }, {"at least 2"});
  const std::vector<Tensor> in{random_normal({2, 3}, 0, 1, float32, 1), random_normal({2, 2}, 0, 1, float32, 2)};
  testing::expect_gradients_match("concatenate", [&](const std::vector<Tensor>& x) { return last(x); }, in, kLayerGrad);
}

TEST(Merging, ConfigRoundTripAndFunctional) {
  expect_config_round_trip(Add());
  expect_config_round_trip(Subtract());
  expect_config_round_trip(Multiply());
  Concatenate c(2);
  EXPECT_EQ(c.get_config().at("axis").as_int(), 2);
  expect_config_round_trip(c);
  auto cat = std::make_shared<Concatenate>();
  KerasTensor k = (*cat)(std::vector<KerasTensor>{Input({3}), Input({5})});
  EXPECT_EQ(k.shape(), Shape({-1, 8}));
  auto add_layer = std::make_shared<Add>();
  EXPECT_EQ((*add_layer)(std::vector<KerasTensor>{Input({4}), Input({4})}).shape(), Shape({-1, 4}));
}

}  // namespace
}  // namespace strata
