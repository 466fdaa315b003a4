// Reductions: values over any axes, every dtype path, determinism across thread counts,
// error messages and gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gradients_match;
using testing::expect_error;
using testing::f64;
using testing::values;

// Reference reduction in double over `axes` of a [2,3,4] tensor with values 0..23.
std::vector<double> reference_sum(const std::vector<double>& x, const Shape& s, std::vector<int> axes) {
  std::vector<int64_t> kept = s.dims();
  for (int a : axes) kept[size_t(a)] = 1;
  const Shape ks(kept);
  std::vector<double> out(size_t(ks.numel()), 0.0);
  const auto st = s.strides(), kst = ks.strides();
  for (int64_t i = 0; i < s.numel(); ++i) {
    int64_t rem = i, o = 0;
    for (int d = 0; d < s.rank(); ++d) {
      const int64_t idx = rem / st[size_t(d)];
      rem %= st[size_t(d)];
      if (kept[size_t(d)] != 1) o += idx * kst[size_t(d)];
    }
    out[size_t(o)] += x[size_t(i)];
  }
  return out;
}

TEST(Reduce, SumOverEveryAxisCombination) {
  const Tensor x = arange(0, 24, 1, float64).reshape({2, 3, 4});
  const auto xv = values(x);
  const std::vector<std::vector<int>> cases = {{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const auto& axes : cases) {
    const Tensor r = reduce_sum(x, axes, /*keepdims=*/true);
    EXPECT_EQ(values(r), reference_sum(xv, x.shape(), axes)) << "axes size " << axes.size();
  }
  EXPECT_EQ(reduce_sum(x).shape(), Shape({}));
  EXPECT_EQ(reduce_sum(x).item<double>(), 276);
  EXPECT_EQ(reduce_sum(x, {-1}).shape(), Shape({2, 3}));
  EXPECT_EQ(reduce_sum(x, {2, 0}, true).shape(), Shape({1, 3, 1}));
  EXPECT_EQ(values(reduce_sum(x, {0, 2})), (std::vector<double>{60, 92, 124}));
}

TEST(Reduce, MeanMaxMinProd) {
  const Tensor x = tensor({1.f, 5.f, 3.f, -2.f, 4.f, 0.5f}, {2, 3});
  EXPECT_EQ(reduce_mean(x, {1}).to_vector<float>(), (std::vector<float>{3.f, 2.5f / 3.f}));
  EXPECT_EQ(values(reduce_max(x, {1})), (std::vector<double>{5, 4}));
  EXPECT_EQ(values(reduce_min(x, {0})), (std::vector<double>{-2, 4, 0.5}));
  EXPECT_EQ(values(reduce_prod(x, {1})), (std::vector<double>{15, -4}));
  EXPECT_EQ(reduce_max(x).item<float>(), 5);
  EXPECT_EQ(reduce_min(x).item<float>(), -2);
  EXPECT_FLOAT_EQ(reduce_mean(x).item<float>(), 11.5f / 6);
}

TEST(Reduce, AnyAll) {
  const Tensor b = tensor({true, false, false, false, true, false}, {2, 3});
  EXPECT_EQ(reduce_any(b, {1}).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(reduce_all(b, {0}).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_TRUE(reduce_any(b).item<bool>());
  EXPECT_FALSE(reduce_all(b).item<bool>());
  EXPECT_TRUE(reduce_all(tensor({true, true})).item<bool>());
  expect_error<DTypeError>([] { reduce_any(tensor({1.f})); }, {"reduce_any", "float32"});
}

TEST(Reduce, IntegerAndHalfDtypes) {
  const Tensor i = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(reduce_sum(i, {0}).dtype(), int32);
  EXPECT_EQ(reduce_sum(i, {0}).to_vector<int32_t>(), (std::vector<int32_t>{5, 7, 9}));
  EXPECT_EQ(reduce_prod(i).item<int32_t>(), 720);
  EXPECT_EQ(reduce_max(i, {1}).to_vector<int32_t>(), (std::vector<int32_t>{3, 6}));
  EXPECT_EQ(reduce_mean(i, {1}).to_vector<int32_t>(), (std::vector<int32_t>{2, 5}));
  EXPECT_EQ(reduce_sum(tensor({int64_t(1) << 40, int64_t(1) << 40})).item<int64_t>(), int64_t(1) << 41);
  EXPECT_EQ(reduce_sum(tensor({uint8_t(200), uint8_t(100)})).item<int32_t>(), 44);  // wraps
  const int32_t imax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(reduce_sum(tensor({imax, 1})).item<int32_t>(), std::numeric_limits<int32_t>::min());
  for (DType dt : {float16, bfloat16}) {
    const Tensor h = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}).cast(dt);
    EXPECT_EQ(reduce_sum(h, {1}).dtype(), dt);
    EXPECT_EQ(values(reduce_sum(h, {1})), (std::vector<double>{3, 7}));
    EXPECT_EQ(values(reduce_mean(h, {0})), (std::vector<double>{2, 3}));
    EXPECT_EQ(values(reduce_max(h)), (std::vector<double>{4}));
    // 4096 halves of 1: a float accumulator keeps it exact (a half one would stall at 2048).
    EXPECT_EQ(reduce_sum(ones({4096}, dt)).item<float>(), 4096);
  }
  expect_error<DTypeError>([] { reduce_sum(tensor({true})); }, {"reduce_sum", "bool"});
}

TEST(Reduce, EmptyAndNaN) {
  const Tensor e = zeros({0, 3});
  EXPECT_EQ(values(reduce_sum(e, {0})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(reduce_prod(e, {0})), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(reduce_max(e, {0}).to_vector<float>()[0], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(reduce_sum(e, {1}).shape(), Shape({0}));
  EXPECT_TRUE(std::isnan(reduce_mean(e).item<float>()));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(reduce_max(tensor({1.f, nan, 3.f})).item<float>()));
  EXPECT_TRUE(std::isnan(reduce_min(tensor({nan, 1.f})).item<float>()));
  EXPECT_EQ(reduce_sum(Tensor::scalar(2.5f)).item<float>(), 2.5f);
  EXPECT_EQ(reduce_sum(Tensor::scalar(2.5f), {0}).item<float>(), 2.5f);
}

TEST(Reduce, LargeColumnAndInterleavedPaths) {
  // Column path (reduce axis 0 of [1000, 300]) and the transpose path ({0, 2} of [30, 40, 50]).
  const Tensor a = random_uniform({1000, 300}, -1, 1, float64, 5);
  EXPECT_EQ(values(reduce_sum(a, {0}, true)), reference_sum(values(a), a.shape(), {0}));
  const Tensor b = random_uniform({30, 40, 50}, -1, 1, float64, 6);
  testing::expect_all_close(reduce_sum(b, {0, 2}, true),
                            Tensor::from_vector(reference_sum(values(b), b.shape(), {0, 2}), Shape{1, 40, 1}),
                            1e-12, 1e-12);
  EXPECT_EQ(reduce_sum(ones({1 << 20})).item<float>(), float(1 << 20));
}

bool bit_identical(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(Reduce, BitIdenticalForAnyThreadCount) {
  const int saved = get_num_threads();
  const Tensor x = random_normal({1 << 20}, 0, 1, float32, 77);
  const Tensor m = x.reshape({1024, 1024});
  const Tensor t = x.reshape({64, 128, 128});
  auto run = [&] {
    return std::vector<Tensor>{reduce_sum(x), reduce_mean(x), reduce_max(x), reduce_prod(x * 0.0 + 1.0),
                               reduce_sum(m, {0}), reduce_sum(m, {1}), reduce_sum(t, {0, 2}),
                               reduce_sum(x.reshape({2, 1 << 19}), {1}), softmax(m), argmax(m, 0)};
  };
  set_num_threads(1);
  const auto one = run();
  set_num_threads(2);
  const auto two = run();
  set_num_threads(4);
  const auto four = run();
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_TRUE(bit_identical(one[i], two[i])) << "result " << i;
    EXPECT_TRUE(bit_identical(one[i], four[i])) << "result " << i;
  }
  // And the full sum is accurate.
  double ref = 0;
  for (float v : x.to_vector<float>()) ref += v;
  EXPECT_NEAR(one[0].item<float>(), ref, 1e-3 * std::sqrt(double(1 << 20)));
}

TEST(Reduce, ArgMaxArgMin) {
  const Tensor x = tensor({1.f, 7.f, 7.f, 0.f, -1.f, 3.f}, {2, 3});
  EXPECT_EQ(argmax(x).dtype(), int64);
  EXPECT_EQ(argmax(x).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));  // first of ties
  EXPECT_EQ(argmin(x).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(argmin(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(argmax(tensor({3, 9, 2})).item<int64_t>(), 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(argmax(tensor({1.f, nan, 5.f})).item<int64_t>(), 1);
  expect_error<ValueError>([] { argmax(zeros({2, 0})); }, {"argmax", "[2,0]"});
  expect_error<ShapeError>([] { argmax(Tensor::scalar(1.f)); }, {"argmax", "scalar"});
  expect_error<ShapeError>([&] { argmin(x, 2); }, {"argmin", "axis 2", "rank 2"});
}

TEST(Reduce, ErrorMessages) {
  const Tensor x = zeros({2, 3});
  expect_error<ShapeError>([&] { reduce_sum(x, {3}); }, {"reduce_sum", "axis 3", "rank 2"});
  expect_error<ShapeError>([&] { reduce_mean(x, {-3}); }, {"reduce_mean", "axis -3"});
  expect_error<ValueError>([&] { reduce_max(x, {1, -1}); }, {"reduce_max", "duplicate"});
  expect_error<ShapeError>([&] { sum_to_shape(x, Shape{4}); }, {"sum_to_shape", "[2,3]", "[4]"});
}

TEST(Reduce, Norms) {
  EXPECT_DOUBLE_EQ(norm(tensor({3.0, 4.0})).item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(global_norm({tensor({3.0}), Tensor(), tensor({4.0, 12.0})}).item<double>(), 13.0);
  expect_error<DTypeError>([] { global_norm({tensor({3.0}), tensor({4.f})}); }, {"global_norm"});
  // The gradient of a norm at zero is zero, not NaN.
  GradientTape tape;
  const Tensor z = zeros({3}, float64);
  tape.watch(z);
  const Tensor g = tape.gradient(norm(z), z);
  EXPECT_EQ(values(g), (std::vector<double>{0, 0, 0}));
}

TEST(Reduce, SumToShape) {
  const Tensor x = arange(0, 6, 1, float64).reshape({2, 3});
  EXPECT_EQ(values(sum_to_shape(x, Shape{3})), (std::vector<double>{3, 5, 7}));
  EXPECT_EQ(values(sum_to_shape(x, Shape{2, 1})), (std::vector<double>{3, 12}));
  EXPECT_EQ(values(sum_to_shape(x, Shape{})), (std::vector<double>{15}));
  EXPECT_TRUE(sum_to_shape(x, Shape{2, 3}).shares_memory_with(x));
}

// ---- gradients ----------------------------------------------------------------------------

TEST(ReduceGrad, SumMeanOverAxes) {
  const Tensor x = random_uniform({2, 3, 4}, -1, 1, float64, 51);
  expect_gradients_match("reduce_sum_all", [](auto& in) { return reduce_sum(in[0]); }, {x});
  expect_gradients_match("reduce_sum_02", [](auto& in) { return reduce_sum(in[0], {0, 2}); }, {x});
  expect_gradients_match("reduce_sum_keep", [](auto& in) { return reduce_sum(in[0], {1}, true); }, {x});
  expect_gradients_match("reduce_mean", [](auto& in) { return reduce_mean(in[0], {-1}); }, {x});
  expect_gradients_match("reduce_mean_all", [](auto& in) { return reduce_mean(in[0]); }, {x});
  expect_gradients_match("sum_to_shape", [](auto& in) { return sum_to_shape(in[0], Shape{3, 1}); }, {x});
}

TEST(ReduceGrad, MaxMinProd) {
  const Tensor x = f64({0.3, -1.2, 2.5, 0.9, 1.7, -0.4, 0.1, 3.2, -2.0, 0.6, 1.1, -0.8}, {3, 4});
  expect_gradients_match("reduce_max", [](auto& in) { return reduce_max(in[0], {1}); }, {x});
  expect_gradients_match("reduce_min", [](auto& in) { return reduce_min(in[0], {0}); }, {x});
  expect_gradients_match("reduce_max_all", [](auto& in) { return reduce_max(in[0]); }, {x});
  expect_gradients_match("reduce_prod", [](auto& in) { return reduce_prod(in[0], {1}); }, {x});
  // Rows with one zero and with two zeros: the product of the others, computed without 0/0.
  const Tensor z = f64({0.0, 2.0, 3.0, 0.0, 0.0, 5.0, 1.5, 2.0, 0.5}, {3, 3});
  expect_gradients_match("reduce_prod_zeros", [](auto& in) { return reduce_prod(in[0], {1}); }, {z});
  // Ties split the gradient equally.
  GradientTape tape;
  const Tensor t = tensor({2.0, 2.0, 1.0});
  tape.watch(t);
  EXPECT_EQ(values(tape.gradient(reduce_max(t), t)), (std::vector<double>{0.5, 0.5, 0}));
}

TEST(ReduceGrad, Norms) {
  const Tensor a = random_uniform({2, 3}, -1, 1, float64, 61);
  const Tensor b = random_uniform({4}, -1, 1, float64, 62);
  expect_gradients_match("norm", [](auto& in) { return norm(in[0]); }, {a});
  expect_gradients_match("global_norm", [](auto& in) { return global_norm({in[0], in[1]}); }, {a, b});
}

}  // namespace
}  // namespace strata
