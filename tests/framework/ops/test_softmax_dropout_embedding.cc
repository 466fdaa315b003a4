// softmax / log_softmax, dropout, embedding_lookup and bias_add.
#include <gtest/gtest.h>

#include <cmath>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gradients_match;
using testing::expect_error;
using testing::values;

TEST(Softmax, ValuesAndStability) {
  const Tensor x = tensor({1.0, 2.0, 3.0, 1000.0, 1001.0, 1002.0}, {2, 3});
  const double z = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  const std::vector<double> row = {std::exp(-2.0) / z, std::exp(-1.0) / z, 1.0 / z};
  const Tensor s = softmax(x);
  testing::expect_all_close(s, Tensor::from_vector(std::vector<double>{row[0], row[1], row[2], row[0], row[1], row[2]},
                                                   Shape{2, 3}), 1e-12, 1e-15);
  const Tensor ls = log_softmax(x);
  EXPECT_NEAR(values(ls)[5], -std::log(z), 1e-12);  // large inputs stay finite
  // Along axis 0 (a strided axis).
  const Tensor s0 = softmax(x.cast(float32), 0);
  EXPECT_NEAR(values(s0)[0] + values(s0)[3], 1.0, 1e-6);
  EXPECT_NEAR(values(s0)[3], 1.0, 1e-6);
  for (DType dt : {float16, bfloat16}) {
    EXPECT_NEAR(values(softmax(x.cast(dt)))[2], row[2], 1e-2);
  }
  EXPECT_EQ(softmax(Tensor::scalar(3.f)).item<float>(), 1.f);
  EXPECT_EQ(softmax(zeros({0, 4})).shape(), Shape({0, 4}));
  expect_error<DTypeError>([] { softmax(tensor({1, 2})); }, {"softmax", "int32"});
  expect_error<ShapeError>([&] { log_softmax(x, 2); }, {"log_softmax", "axis 2"});
}

TEST(SoftmaxGrad, BothAxesAndFloat32) {
  const Tensor x = random_uniform({2, 3, 4}, -2, 2, float64, 101);
  expect_gradients_match("softmax", [](auto& in) { return softmax(in[0]); }, {x});
  expect_gradients_match("softmax_axis1", [](auto& in) { return softmax(in[0], 1); }, {x});
  expect_gradients_match("log_softmax", [](auto& in) { return log_softmax(in[0]); }, {x});
  expect_gradients_match("log_softmax_axis0", [](auto& in) { return log_softmax(in[0], 0); }, {x});
  expect_gradients_match("softmax_f32", [](auto& in) { return softmax(in[0]); },
                         {x.cast(float32)}, {1e-2, 2e-2, 2e-3});
}

TEST(Dropout, MaskScaleAndSeeds) {
  const Tensor x = ones({1000});
  EXPECT_TRUE(dropout(x, 0.0f).shares_memory_with(x));
  const Tensor a = dropout(x, 0.25f, 7), b = dropout(x, 0.25f, 7);
  EXPECT_EQ(values(a), values(b));  // explicit seed: same mask
  int kept = 0;
  for (double v : values(a)) {
    EXPECT_TRUE(v == 0.0 || std::fabs(v - 1.0 / 0.75) < 1e-6) << v;
    kept += v != 0.0;
  }
  EXPECT_GT(kept, 650);
  EXPECT_LT(kept, 850);
  // Without a seed the global generator advances: two calls differ.
  set_random_seed(3);
  const Tensor c = dropout(x, 0.5f), d = dropout(x, 0.5f);
  EXPECT_NE(values(c), values(d));
  set_random_seed(3);
  EXPECT_EQ(values(dropout(x, 0.5f)), values(c));  // reproducible from the seed
  EXPECT_EQ(dropout(ones({2, 2}, float64), 0.5f, 1).dtype(), float64);
  expect_error<ValueError>([&] { dropout(x, 1.0f); }, {"dropout", "rate"});
  expect_error<ValueError>([&] { dropout(x, -0.1f); }, {"dropout", "rate"});
  expect_error<ValueError>([&] { dropout(x, std::nanf("")); }, {"dropout"});
  expect_error<DTypeError>([] { dropout(tensor({1, 2}), 0.5f); }, {"dropout", "int32"});
}

TEST(DropoutGrad, GradientIsUpstreamTimesMask) {
  const Tensor x = random_uniform({3, 4}, -1, 1, float64, 111);
  expect_gradients_match("dropout", [](auto& in) { return dropout(in[0], 0.4f, 5); }, {x});
  GradientTape tape;
  const Tensor w = ones({50}, float64);
  tape.watch(w);
  const Tensor y = dropout(w, 0.5f, 9);
  EXPECT_EQ(values(tape.gradient(reduce_sum(y), w)), values(y));  // mask = y when x = 1
}

TEST(Embedding, LookupValuesAndErrors) {
  const Tensor table = arange(0, 8, 1, float32).reshape({4, 2});
  const Tensor e = embedding_lookup(table, tensor({3, 0, 3}, {1, 3}));
  EXPECT_EQ(e.shape(), Shape({1, 3, 2}));
  EXPECT_EQ(values(e), (std::vector<double>{6, 7, 0, 1, 6, 7}));
  EXPECT_EQ(values(embedding_lookup(table, tensor({int64_t(2)}))), (std::vector<double>{4, 5}));
  expect_error<IndexError>([&] { embedding_lookup(table, tensor({1, 4})); },
                           {"embedding_lookup", "id 4", "[0, 4)"});
  expect_error<IndexError>([&] { embedding_lookup(table, tensor({-1})); }, {"embedding_lookup", "id -1"});
  expect_error<DTypeError>([&] { embedding_lookup(table, tensor({1.f})); }, {"embedding_lookup", "float32"});
  expect_error<ShapeError>([&] { embedding_lookup(zeros({4}), tensor({1})); }, {"embedding_lookup", "[4]"});
}

TEST(EmbeddingGrad, RepeatedIdsAccumulate) {
  const Tensor table = random_uniform({5, 3}, -1, 1, float64, 121);
  const Tensor ids = tensor({4, 1, 4, 4, 0, 1}, {2, 3});
  expect_gradients_match("embedding_lookup", [ids](auto& in) { return embedding_lookup(in[0], ids); }, {table});
  GradientTape tape;
  tape.watch(table);
  const Tensor g = tape.gradient(reduce_sum(embedding_lookup(table, ids)), table);
  EXPECT_EQ(values(reduce_sum(g, {1})), (std::vector<double>{3, 6, 0, 0, 9}));
}

TEST(BiasAdd, ValuesErrorsAndGradient) {
  const Tensor x = zeros({2, 3});
  EXPECT_EQ(values(bias_add(x, tensor({1.f, 2.f, 3.f}))), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  expect_error<ShapeError>([&] { bias_add(x, tensor({1.f, 2.f})); }, {"bias_add", "[2,3]", "[2]"});
  expect_error<DTypeError>([&] { bias_add(x, tensor({1.0, 2.0, 3.0})); }, {"bias_add", "float32", "float64"});
  const Tensor a = random_uniform({2, 2, 3}, -1, 1, float64, 131);
  const Tensor b = random_uniform({3}, -1, 1, float64, 132);
  expect_gradients_match("bias_add", [](auto& in) { return bias_add(in[0], in[1]); }, {a, b});
}

}  // namespace
}  // namespace strata
