// The real data sets, when installed by scripts/get_datasets (skipped otherwise): shapes,
// dtypes, the well-known first labels, per-class counts and a few known pixels.
#include <array>

#include "datasets/cifar10.h"
#include "datasets/fashion_mnist.h"
#include "framework/core/error.h"
#include "datasets/mnist.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using Splits = std::pair<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>>;

#define LOAD_OR_SKIP(var, loader, name)                                                      \
  Splits var;                                                                                \
  try {                                                                                      \
    var = loader();                                                                          \
  } catch (const IOError&) {                                                                 \
    GTEST_SKIP() << name " is not installed; run scripts/get_datasets " name;               \
  }

std::vector<int> first_labels(const Tensor& y, int n = 10) {
  return y.reshape({-1}).slice(0, n).to_vector<int>();
}

std::array<int, 10> per_class(const Tensor& y) {
  std::array<int, 10> counts{};
  for (uint8_t l : y.to_vector<uint8_t>()) ++counts[l];
  return counts;
}

TEST(RealData, Mnist) {
  LOAD_OR_SKIP(d, [] { return mnist::load_data(); }, "mnist");
  const auto& [train, test] = d;
  EXPECT_EQ(train.first.shape(), (Shape{60000, 28, 28}));
  EXPECT_EQ(train.first.dtype(), uint8);
  EXPECT_EQ(train.second.shape(), (Shape{60000}));
  EXPECT_EQ(test.first.shape(), (Shape{10000, 28, 28}));
  EXPECT_EQ(test.second.shape(), (Shape{10000}));
  EXPECT_EQ(first_labels(train.second), (std::vector<int>{5, 0, 4, 1, 9, 2, 1, 3, 1, 4}));
  EXPECT_EQ(first_labels(test.second), (std::vector<int>{7, 2, 1, 0, 4, 1, 4, 9, 5, 9}));
  EXPECT_EQ(per_class(train.second),
            (std::array<int, 10>{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}));
  EXPECT_EQ(per_class(test.second),
            (std::array<int, 10>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}));
  int64_t sum = 0;
  for (int v : train.first[0].to_vector<int>()) sum += v;
  EXPECT_EQ(sum, 27525);  // the first training digit, a 5
}

TEST(RealData, FashionMnist) {
  LOAD_OR_SKIP(d, [] { return fashion_mnist::load_data(); }, "fashion_mnist");
  const auto& [train, test] = d;
  EXPECT_EQ(train.first.shape(), (Shape{60000, 28, 28}));
  EXPECT_EQ(test.first.shape(), (Shape{10000, 28, 28}));
  EXPECT_EQ(first_labels(train.second), (std::vector<int>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  EXPECT_EQ(first_labels(test.second), (std::vector<int>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  std::array<int, 10> train_counts, test_counts;
  train_counts.fill(6000);
  test_counts.fill(1000);
  EXPECT_EQ(per_class(train.second), train_counts);
  EXPECT_EQ(per_class(test.second), test_counts);
}

TEST(RealData, Cifar10) {
  LOAD_OR_SKIP(d, [] { return cifar10::load_data(); }, "cifar10");
  const auto& [train, test] = d;
  EXPECT_EQ(train.first.shape(), (Shape{50000, 32, 32, 3}));
  EXPECT_EQ(train.first.dtype(), uint8);
  EXPECT_EQ(train.second.shape(), (Shape{50000, 1}));
  EXPECT_EQ(test.first.shape(), (Shape{10000, 32, 32, 3}));
  EXPECT_EQ(test.second.shape(), (Shape{10000, 1}));
  EXPECT_EQ(first_labels(train.second), (std::vector<int>{6, 9, 9, 4, 1, 1, 2, 7, 8, 3}));
  EXPECT_EQ(first_labels(test.second), (std::vector<int>{3, 8, 8, 0, 6, 6, 1, 6, 3, 1}));
  std::array<int, 10> train_counts, test_counts;
  train_counts.fill(5000);
  test_counts.fill(1000);
  EXPECT_EQ(per_class(train.second), train_counts);
  EXPECT_EQ(per_class(test.second), test_counts);
  // keras.datasets.cifar10: x_train[0, 0, 0] == [59, 62, 63] (the frog's top-left pixel).
  EXPECT_EQ(train.first[0][0][0].to_vector<int>(), (std::vector<int>{59, 62, 63}));
}

}  // namespace
}  // namespace strata
