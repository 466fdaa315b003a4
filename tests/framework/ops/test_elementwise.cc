// Elementwise ops: forward values per dtype, broadcasting, error messages and gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gradients_match;
using testing::expect_error;
using testing::f64;
using testing::values;

TEST(Elementwise, AddSameShape) {
  const Tensor a = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
  const Tensor b = tensor({10.f, 20.f, 30.f, 40.f}, {2, 2});
  EXPECT_EQ(values(a + b), (std::vector<double>{11, 22, 33, 44}));
  EXPECT_EQ(values(b - a), (std::vector<double>{9, 18, 27, 36}));
  EXPECT_EQ(values(a * b), (std::vector<double>{10, 40, 90, 160}));
  EXPECT_EQ(values(b / a), (std::vector<double>{10, 10, 10, 10}));
  EXPECT_EQ((a + b).shape(), Shape({2, 2}));
}

TEST(Elementwise, BroadcastingCases) {
  const Tensor m = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  EXPECT_EQ(values(m + tensor({10.f, 20.f, 30.f}, {3})),
            (std::vector<double>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(values(m + tensor({100.f, 200.f}, {2, 1})),
            (std::vector<double>{101, 102, 103, 204, 205, 206}));
  EXPECT_EQ(values(m * Tensor::scalar(2.f)), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(values(Tensor::scalar(2.f) - m), (std::vector<double>{1, 0, -1, -2, -3, -4}));
  // [2,1] x [1,3] -> outer product shape.
  const Tensor outer = tensor({1.f, 2.f}, {2, 1}) * tensor({1.f, 10.f, 100.f}, {1, 3});
  EXPECT_EQ(outer.shape(), Shape({2, 3}));
  EXPECT_EQ(values(outer), (std::vector<double>{1, 10, 100, 2, 20, 200}));
  // [4,1,3] + [2,1] -> [4,2,3], against a hand loop.
  const Tensor a = arange(0, 12, 1, float64).reshape({4, 1, 3});
  const Tensor b = f64({100, 200}, {2, 1});
  const Tensor c = a + b;
  ASSERT_EQ(c.shape(), Shape({4, 2, 3}));
  const auto cv = values(c);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(cv[size_t(i * 6 + j * 3 + k)], i * 3 + k + 100 * (j + 1));
}

TEST(Elementwise, LargeBroadcastRunsInParallelChunks) {
  const Tensor a = random_uniform({300, 1000}, -1, 1, float32, 1);
  const Tensor v = random_uniform({1000}, -1, 1, float32, 2);
  const Tensor col = random_uniform({300, 1}, -1, 1, float32, 3);
  const auto av = a.to_vector<float>(), vv = v.to_vector<float>(), cv = col.to_vector<float>();
  const auto r1 = (a - v).to_vector<float>();
  const auto r2 = (a * col).to_vector<float>();
  for (size_t i = 0; i < av.size(); ++i) {
    ASSERT_EQ(r1[i], av[i] - vv[i % 1000]);
    ASSERT_EQ(r2[i], av[i] * cv[i / 1000]);
  }
}

TEST(Elementwise, IntegerArithmeticIsDefinedEverywhere) {
  const Tensor a = tensor({7, -7, 7, -7, 5}, {5});
  const Tensor b = tensor({2, 2, -2, -2, 0}, {5});
  // Floor division and Python modulo; division by zero gives 0.
  EXPECT_EQ((a / b).to_vector<int32_t>(), (std::vector<int32_t>{3, -4, -4, 3, 0}));
  const int32_t imax = std::numeric_limits<int32_t>::max(), imin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ((tensor({imax}) + tensor({1})).item<int32_t>(), imin);  // wraps
  EXPECT_EQ((tensor({imin}) / tensor({-1})).item<int32_t>(), imin);
  EXPECT_EQ(negative(tensor({imin})).item<int32_t>(), imin);
  EXPECT_EQ(pow(tensor({2, 3, -1, 2}), tensor({10, 3, -3, -1})).to_vector<int32_t>(),
            (std::vector<int32_t>{1024, 27, -1, 0}));
  EXPECT_EQ((tensor({int64_t(1) << 40}) * tensor({int64_t(4)})).item<int64_t>(), int64_t(1) << 42);
  EXPECT_EQ((tensor({uint8_t(250)}) + tensor({uint8_t(10)})).item<int32_t>(), 4);
  EXPECT_EQ(abs(tensor({-3, 4})).to_vector<int32_t>(), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(square(tensor({int64_t(-3)})).item<int64_t>(), 9);
  EXPECT_EQ(sign(tensor({-3, 0, 4})).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ((tensor({5, 6}) + 1.0).to_vector<int32_t>(), (std::vector<int32_t>{6, 7}));
}

TEST(Elementwise, HalfAndBFloat16ComputeInFloat) {
  for (DType dt : {float16, bfloat16}) {
    const Tensor a = tensor({1.f, 2.f, -3.f}).cast(dt);
    const Tensor b = tensor({0.5f, 4.f, 2.f}).cast(dt);
    EXPECT_EQ((a + b).dtype(), dt);
    EXPECT_EQ(values(a + b), (std::vector<double>{1.5, 6, -1}));
    EXPECT_EQ(values(a * b), (std::vector<double>{0.5, 8, -6}));
    EXPECT_EQ(values(maximum(a, b)), (std::vector<double>{1, 4, 2}));
    testing::expect_all_close(exp(a), tensor({std::exp(1.0), std::exp(2.0), std::exp(-3.0)}), 1e-2, 1e-3);
    EXPECT_EQ(less(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  }
}

TEST(Elementwise, Float64AndPow) {
  const Tensor a = f64({2, 9, 0.5}, {3});
  const Tensor b = f64({3, 0.5, -1}, {3});
  testing::expect_all_close(pow(a, b), f64({8, 3, 2}, {3}), 1e-12, 0);
  testing::expect_all_close(pow(a, 2.0), f64({4, 81, 0.25}, {3}), 1e-12, 0);
}

TEST(Elementwise, ComparisonsAndLogicWriteBool) {
  const Tensor a = tensor({1.f, 2.f, 3.f});
  const Tensor b = tensor({2.f, 2.f, 2.f});
  EXPECT_EQ(equal(a, b).dtype(), bool_);
  EXPECT_EQ(equal(a, b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(not_equal(a, b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(less(a, b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(less_equal(a, b).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(greater(a, b).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(greater_equal(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(less(tensor({int64_t(1), int64_t(5)}), tensor({int64_t(3)})).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  const Tensor p = tensor({true, true, false, false});
  const Tensor q = tensor({true, false, true, false});
  EXPECT_EQ(logical_and(p, q).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(logical_or(p, q).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(logical_not(p).to_vector<bool>(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(equal(p, q).to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  expect_error<DTypeError>([&] { logical_and(a, b); }, {"logical_and", "bool", "float32"});
  expect_error<DTypeError>([&] { logical_not(a); }, {"logical_not", "float32"});
}

TEST(Elementwise, UnaryMathValues) {
  const Tensor x = f64({0.25, 1.0, 4.0}, {3});
  auto close = [](const Tensor& t, std::vector<double> expected) {
    testing::expect_all_close(t, Tensor::from_vector(expected, t.shape()), 1e-12, 1e-15);
  };
  close(exp(x), {std::exp(0.25), std::exp(1.0), std::exp(4.0)});
  close(log(x), {std::log(0.25), 0, std::log(4.0)});
  close(log1p(x), {std::log1p(0.25), std::log1p(1.0), std::log1p(4.0)});
  close(sqrt(x), {0.5, 1, 2});
  close(rsqrt(x), {2, 1, 0.5});
  close(square(x), {0.0625, 1, 16});
  close(reciprocal(x), {4, 1, 0.25});
  close(sin(x), {std::sin(0.25), std::sin(1.0), std::sin(4.0)});
  close(cos(x), {std::cos(0.25), std::cos(1.0), std::cos(4.0)});
  close(-x, {-0.25, -1, -4});
  const Tensor y = f64({-1.5, -0.5, 0.5, 1.5, 2.5, 0.0}, {6});
  close(abs(y), {1.5, 0.5, 0.5, 1.5, 2.5, 0});
  close(sign(y), {-1, -1, 1, 1, 1, 0});
  close(floor(y), {-2, -1, 0, 1, 2, 0});
  close(ceil(y), {-1, -0.0, 1, 2, 3, 0});
  close(round(y), {-2, -0.0, 0, 2, 2, 0});  // half to even
}

TEST(Elementwise, NanHandling) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor x = tensor({1.f, nan, inf, -inf});
  EXPECT_EQ(is_nan(x).to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(is_finite(x).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_TRUE(std::isnan(maximum(tensor({nan}), tensor({1.f})).item<float>()));
  EXPECT_TRUE(std::isnan(minimum(tensor({1.f}), tensor({nan})).item<float>()));
  EXPECT_TRUE(std::isnan(clip_by_value(tensor({nan}), 0, 1).item<float>()));
  expect_error<DTypeError>([] { is_nan(tensor({1, 2})); }, {"is_nan", "int32"});
}

TEST(Elementwise, CastSaturatesAndConverts) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = tensor({1.7f, -2.7f, 3e10f, -3e10f, nan});
  EXPECT_EQ(x.cast(int32).to_vector<int32_t>(),
            (std::vector<int32_t>{1, -2, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0}));
  EXPECT_EQ(tensor({-5.f, 300.f, 7.9f}).cast(uint8).to_vector<int32_t>(), (std::vector<int32_t>{0, 255, 7}));
  EXPECT_EQ(tensor({0.f, 2.f, -0.5f}).cast(bool_).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(tensor({true, false}).cast(float32).to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_EQ(tensor({1.5, -2.25}).cast(float16).cast(float64).to_vector<double>(), (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(tensor({1.5f}).cast(bfloat16).cast(int64).item<int64_t>(), 1);
  EXPECT_EQ(tensor({int64_t(1) << 40}).cast(int32).item<int32_t>(), 0);  // modular narrowing
  const Tensor same = tensor({1.f});
  EXPECT_TRUE(same.cast(float32).shares_memory_with(same));
}

TEST(Elementwise, WhereBroadcasts) {
  const Tensor cond = tensor({true, false, true}, {1, 3});
  const Tensor a = tensor({1.f, 2.f}, {2, 1});
  const Tensor b = Tensor::scalar(-1.f);
  const Tensor w = where(cond, a, b);
  ASSERT_EQ(w.shape(), Shape({2, 3}));
  EXPECT_EQ(values(w), (std::vector<double>{1, -1, 1, 2, -1, 2}));
  EXPECT_EQ(where(tensor({true, false}), tensor({1, 2}), tensor({3, 4})).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 4}));
  expect_error<DTypeError>([&] { where(a, a, a); }, {"where", "bool"});
  expect_error<DTypeError>([&] { where(cond, a, tensor({1})); }, {"where", "float32", "int32"});
  expect_error<ShapeError>([&] { where(cond, tensor({1.f, 2.f}), b); }, {"where", "[1,3]", "[2]"});
}

TEST(Elementwise, ClipByValue) {
  EXPECT_EQ(values(clip_by_value(tensor({-2.f, 0.5f, 3.f}), -1, 1)), (std::vector<double>{-1, 0.5, 1}));
  EXPECT_EQ(clip_by_value(tensor({-200, 5, 300}), -1e20, 10).to_vector<int32_t>(),
            (std::vector<int32_t>{-200, 5, 10}));
  expect_error<ValueError>([] { clip_by_value(tensor({1.f}), 2, 1); }, {"clip_by_value"});
}

TEST(Elementwise, ScalarOverloadsTakeTheTensorDtype) {
  const Tensor x = tensor({1.0, 2.0, 4.0});
  EXPECT_EQ((x + 1.0).dtype(), float64);
  EXPECT_EQ(values(2.0 - x), (std::vector<double>{1, 0, -2}));
  EXPECT_EQ(values(x - 1.0), (std::vector<double>{0, 1, 3}));
  EXPECT_EQ(values(x / 2.0), (std::vector<double>{0.5, 1, 2}));
  EXPECT_EQ(values(4.0 / x), (std::vector<double>{4, 2, 1}));
  EXPECT_EQ(values(3.0 * x), (std::vector<double>{3, 6, 12}));
  EXPECT_EQ(values(1.0 + x), (std::vector<double>{2, 3, 5}));
  expect_error<ValueError>([] { tensor({1, 2}) + 1e20; }, {"add", "int32"});
  expect_error<ValueError>([] { tensor({1, 2}) / 2.5; }, {"divide", "int32"});
}

TEST(Elementwise, ErrorMessagesNameOpShapesAndDtypes) {
  const Tensor a = zeros({2, 3});
  expect_error<ShapeError>([&] { add(a, zeros({4})); }, {"add", "[2,3]", "[4]"});
  expect_error<ShapeError>([&] { multiply(a, zeros({3, 2})); }, {"multiply", "[2,3]", "[3,2]"});
  expect_error<DTypeError>([&] { add(a, zeros({2, 3}, int64)); },
                           {"add: dtypes differ: float32 vs int64; cast one operand"});
  expect_error<DTypeError>([] { log(tensor({1, 2})); }, {"log", "int32"});
  expect_error<DTypeError>([] { exp(tensor({int64_t(1)})); }, {"exp", "int64"});
  expect_error<DTypeError>([] { add(tensor({true}), tensor({false})); }, {"add", "bool"});
  expect_error<ValueError>([] { add(Tensor(), tensor({1.f})); }, {"add", "undefined"});
}

TEST(Elementwise, EmptyTensors) {
  const Tensor e = zeros({0, 3});
  EXPECT_EQ((e + tensor({1.f, 2.f, 3.f})).shape(), Shape({0, 3}));
  EXPECT_EQ(exp(e).shape(), Shape({0, 3}));
  EXPECT_EQ(where(tensor({true}), e, e).shape(), Shape({0, 3}));
}

// ---- gradients (float64, small tensors) ---------------------------------------------------

TEST(ElementwiseGrad, BinaryOpsWithBroadcasting) {
  const Tensor a = random_uniform({2, 3}, 0.5, 2.0, float64, 11);
  const Tensor b = random_uniform({3}, 0.5, 2.0, float64, 12);
  const Tensor c = random_uniform({2, 1}, 0.5, 2.0, float64, 13);
  expect_gradients_match("add", [](auto& in) { return add(in[0], in[1]); }, {a, b});
  expect_gradients_match("subtract", [](auto& in) { return subtract(in[0], in[1]); }, {c, b});
  expect_gradients_match("multiply", [](auto& in) { return multiply(in[0], in[1]); }, {a, c});
  expect_gradients_match("divide", [](auto& in) { return divide(in[0], in[1]); }, {a, b});
  expect_gradients_match("pow", [](auto& in) { return pow(in[0], in[1]); }, {a, b});
  expect_gradients_match("pow_scalar", [](auto& in) { return pow(in[0], 3.0); }, {a});
  expect_gradients_match("self_multiply", [](auto& in) { return in[0] * in[0]; }, {a});
}

TEST(ElementwiseGrad, MaximumMinimum) {
  const Tensor a = f64({0.1, 0.9, -0.5, 2.0, 1.0, -3.0}, {2, 3});
  const Tensor b = f64({0.5, 0.4, 0.0}, {3});
  expect_gradients_match("maximum", [](auto& in) { return maximum(in[0], in[1]); }, {a, b});
  expect_gradients_match("minimum", [](auto& in) { return minimum(in[0], in[1]); }, {a, b});
}

TEST(ElementwiseGrad, ScalarOperators) {
  const Tensor x = random_uniform({4}, 0.5, 2.0, float64, 21);
  expect_gradients_match("scalar_ops", [](auto& in) {
    return (2.0 - in[0]) * 3.0 + in[0] / 4.0 - 1.0 + 5.0 / in[0] + (1.0 + in[0]) * (in[0] + 2.0);
  }, {x});
  expect_gradients_match("negate", [](auto& in) { return -in[0]; }, {x});
}

TEST(ElementwiseGrad, UnaryMath) {
  const Tensor pos = random_uniform({2, 3}, 0.5, 2.0, float64, 31);
  const Tensor any = f64({-1.3, -0.4, 0.3, 0.8, 1.7, -2.2}, {2, 3});
  expect_gradients_match("abs", [](auto& in) { return abs(in[0]); }, {any});
  expect_gradients_match("exp", [](auto& in) { return exp(in[0]); }, {any});
  expect_gradients_match("log", [](auto& in) { return log(in[0]); }, {pos});
  expect_gradients_match("log1p", [](auto& in) { return log1p(in[0]); }, {pos});
  expect_gradients_match("sqrt", [](auto& in) { return sqrt(in[0]); }, {pos});
  expect_gradients_match("rsqrt", [](auto& in) { return rsqrt(in[0]); }, {pos});
  expect_gradients_match("square", [](auto& in) { return square(in[0]); }, {any});
  expect_gradients_match("reciprocal", [](auto& in) { return reciprocal(in[0]); }, {pos});
  expect_gradients_match("sin", [](auto& in) { return sin(in[0]); }, {any});
  expect_gradients_match("cos", [](auto& in) { return cos(in[0]); }, {any});
  expect_gradients_match("sign", [](auto& in) { return sign(in[0]) * in[0]; }, {any});
  expect_gradients_match("clip_by_value", [](auto& in) { return clip_by_value(in[0], -1.0, 1.0); }, {any});
}

TEST(ElementwiseGrad, WhereAndFloat32) {
  const Tensor cond = tensor({true, false, true}, {3});
  const Tensor a = random_uniform({2, 3}, -1, 1, float64, 41);
  const Tensor b = random_uniform({2, 1}, -1, 1, float64, 42);
  expect_gradients_match("where", [cond](auto& in) { return where(cond, in[0], in[1]); }, {a, b});
  // The float32 path, with a coarser step.
  const Tensor x = random_uniform({3, 2}, 0.5, 2.0, float32, 43);
  expect_gradients_match("float32_chain", [](auto& in) { return exp(in[0]) * log(in[0]) / in[0]; },
                         {x}, {1e-2, 2e-2, 2e-3});
}

TEST(ElementwiseGrad, NotRecordedForRoundingAndComparisons) {
  GradientTape tape;
  const Tensor x = tensor({1.5, 2.5});
  tape.watch(x);
  EXPECT_EQ(floor(x).grad_node(), nullptr);
  EXPECT_EQ(less(x, x).grad_node(), nullptr);
  EXPECT_NE(exp(x).grad_node(), nullptr);
}

}  // namespace
}  // namespace strata
