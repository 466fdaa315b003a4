// Views: reshape / squeeze / expand_dims / flatten / axis-0 slices share memory (offset kept)
// and still carry gradients.
#include <gtest/gtest.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gradients_match;
using testing::expect_error;
using testing::values;

TEST(Views, ReshapeSharesMemoryAndInfers) {
  const Tensor x = arange(0, 12, 1, float32);
  const Tensor r = x.reshape({3, -1});
  EXPECT_EQ(r.shape(), Shape({3, 4}));
  EXPECT_TRUE(r.shares_memory_with(x));
  EXPECT_EQ(r.raw_data(), x.raw_data());
  r.data<float>()[5] = 100;  // a write through the view shows in the base
  EXPECT_EQ(x.to_vector<float>()[5], 100);
  EXPECT_EQ(reshape(x, {2, 2, 3}).shape(), Shape({2, 2, 3}));
  EXPECT_EQ(reshape(zeros({0, 4}), {-1, 2}).shape(), Shape({0, 2}));
  EXPECT_EQ(reshape(Tensor::scalar(1.f), {1, 1}).shape(), Shape({1, 1}));
  expect_error<ShapeError>([&] { x.reshape({5, -1}); }, {"reshape", "[12]", "[5,-1]"});
  expect_error<ShapeError>([&] { x.reshape({5, 3}); }, {"reshape", "[12]", "[5,3]"});
  expect_error<ShapeError>([&] { x.reshape({-1, -1}); }, {"reshape", "-1"});
  expect_error<ShapeError>([&] { x.reshape({-2, -6}); }, {"reshape", "negative"});
  expect_error<ShapeError>([&] { zeros({0}).reshape({0, -1}); }, {"reshape"});
  expect_error<ShapeError>([&] { x.reshape({int64_t(1) << 40, int64_t(1) << 40, 0}); }, {"reshape"});
}

TEST(Views, SqueezeExpandFlatten) {
  const Tensor x = zeros({1, 3, 1, 2});
  EXPECT_EQ(squeeze(x).shape(), Shape({3, 2}));
  EXPECT_EQ(squeeze(x, {-2}).shape(), Shape({1, 3, 2}));
  EXPECT_TRUE(squeeze(x).shares_memory_with(x));
  expect_error<ShapeError>([&] { squeeze(x, {1}); }, {"squeeze", "[1,3,1,2]", "size 3"});
  expect_error<ShapeError>([&] { squeeze(x, {4}); }, {"squeeze", "axis 4"});
  EXPECT_EQ(expand_dims(x, 0).shape(), Shape({1, 1, 3, 1, 2}));
  EXPECT_EQ(expand_dims(x, -1).shape(), Shape({1, 3, 1, 2, 1}));
  EXPECT_EQ(expand_dims(Tensor::scalar(1.f), 0).shape(), Shape({1}));
  EXPECT_TRUE(expand_dims(x, 2).shares_memory_with(x));
  expect_error<ShapeError>([&] { expand_dims(x, 5); }, {"expand_dims", "axis 5"});
  EXPECT_EQ(flatten(zeros({2, 3, 4})).shape(), Shape({2, 12}));
  EXPECT_EQ(flatten(zeros({5})).shape(), Shape({5, 1}));
  EXPECT_TRUE(flatten(x).shares_memory_with(x));
  expect_error<ShapeError>([] { flatten(Tensor::scalar(1.f)); }, {"flatten", "scalar"});
}

TEST(Views, AxisZeroSlicesKeepTheOffset) {
  const Tensor x = arange(0, 12, 1, float64).reshape({4, 3});
  const Tensor rows = x.slice(1, 3);
  EXPECT_TRUE(rows.shares_memory_with(x));
  EXPECT_EQ(values(rows), (std::vector<double>{3, 4, 5, 6, 7, 8}));
  // A view of a view keeps the byte offset.
  const Tensor flat = rows.reshape({6});
  EXPECT_TRUE(flat.shares_memory_with(x));
  EXPECT_EQ(values(flat)[0], 3);
  const Tensor row = x[2];
  EXPECT_EQ(row.shape(), Shape({3}));
  EXPECT_TRUE(row.shares_memory_with(x));
  EXPECT_EQ(values(row), (std::vector<double>{6, 7, 8}));
  EXPECT_EQ(values(x[-1]), (std::vector<double>{9, 10, 11}));
  EXPECT_EQ(values(expand_dims(row, 0) + 1.0), (std::vector<double>{7, 8, 9}));
  // Ops on offset views read the right memory.
  EXPECT_EQ(values(reduce_sum(x.slice(2, 4), {0})), (std::vector<double>{15, 17, 19}));
  EXPECT_EQ(values(transpose(x.slice(1, 2))), (std::vector<double>{3, 4, 5}));
  EXPECT_THROW(x[4], IndexError);
  EXPECT_THROW(x.slice(3, 5), IndexError);
}

TEST(Views, TensorMethodsRouteThroughOps) {
  const Tensor x = tensor({1.5f, -2.5f});
  EXPECT_EQ(x.cast(int64).to_vector<int64_t>(), (std::vector<int64_t>{1, -2}));
  EXPECT_TRUE(x.to(Device::cpu()).shares_memory_with(x));
  EXPECT_FALSE(x.clone().shares_memory_with(x));
}

TEST(ViewsGrad, ViewsRecordGradients) {
  const Tensor x = random_uniform({2, 3, 1}, -1, 1, float64, 141);
  expect_gradients_match("reshape", [](auto& in) { return reshape(in[0], {3, -1}) * 2.0; }, {x});
  expect_gradients_match("squeeze", [](auto& in) { return squeeze(in[0]) * squeeze(in[0]); }, {x});
  expect_gradients_match("expand_dims", [](auto& in) { return expand_dims(in[0], 1) * 3.0; }, {x});
  expect_gradients_match("flatten", [](auto& in) { return exp(flatten(in[0])); }, {x});
  // Tensor::slice / operator[] on a recorded tensor go through the slice op.
  expect_gradients_match("tensor_slice", [](auto& in) { return in[0].slice(1, 2) * in[0][0]; }, {x});
  GradientTape tape;
  const Tensor y = ones({3, 2}, float64);
  tape.watch(y);
  EXPECT_EQ(values(tape.gradient(reduce_sum(y[1]), y)), (std::vector<double>{0, 0, 1, 1, 0, 0}));
}

}  // namespace
}  // namespace strata
