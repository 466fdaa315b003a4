// Data-movement ops: transpose, concat, stack, split, slice, pad, gather, one_hot, cast,
// broadcast_to, stop_gradient, to_device; values, errors and gradients.
#include <gtest/gtest.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gradients_match;
using testing::expect_error;
using testing::values;

Tensor iota(const Shape& s, DType dt = float64) {
  return arange(0, double(s.numel()), 1, dt).reshape(s);
}

TEST(Transpose, TwoDAndDefaultPerm) {
  const Tensor x = iota({2, 3});
  const Tensor t = transpose(x);
  EXPECT_EQ(t.shape(), Shape({3, 2}));
  EXPECT_EQ(values(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_FALSE(t.shares_memory_with(x));
}

TEST(Transpose, TiledAndGeneralPathsMatchAHandLoop) {
  // Batched last-two swap (tiled path) on sizes that are not tile multiples, every element size.
  for (DType dt : {float64, float32, float16, uint8}) {
    const Tensor x = iota({3, 67, 45}, dt == uint8 ? int64 : float64).cast(dt);
    const auto xv = values(x);
    const auto tv = values(transpose(x, {0, 2, 1}));
    for (int b = 0; b < 3; ++b)
      for (int i = 0; i < 67; ++i)
        for (int j = 0; j < 45; ++j)
          ASSERT_EQ(tv[size_t(b * 45 * 67 + j * 67 + i)], xv[size_t(b * 67 * 45 + i * 45 + j)]);
  }
  const Tensor y = iota({2, 3, 4});
  const Tensor p = transpose(y, {2, 0, -2});
  ASSERT_EQ(p.shape(), Shape({4, 2, 3}));
  const auto yv = values(y), pv = values(p);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(pv[size_t(k * 6 + i * 3 + j)], yv[size_t(i * 12 + j * 4 + k)]);
  // Last axis kept in place: contiguous row copies.
  EXPECT_EQ(values(transpose(y, {1, 0, 2}))[4], yv[12]);
}

TEST(Transpose, Errors) {
  const Tensor x = zeros({2, 3});
  expect_error<ShapeError>([&] { transpose(x, {0, 0}); }, {"transpose", "[0,0]", "[2,3]"});
  expect_error<ShapeError>([&] { transpose(x, {0, 1, 2}); }, {"transpose", "[2,3]"});
  expect_error<ShapeError>([&] { transpose(x, {5, 0}); }, {"transpose"});
}

TEST(Concat, AxesAndErrors) {
  const Tensor a = iota({2, 2});
  const Tensor b = iota({2, 1}) + 10.0;
  const Tensor c = concat({a, b}, 1);
  EXPECT_EQ(c.shape(), Shape({2, 3}));
  EXPECT_EQ(values(c), (std::vector<double>{0, 1, 10, 2, 3, 11}));
  EXPECT_EQ(values(concat({a, a}, 0)), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(values(concat({a, zeros({0, 2}, float64)}, -2)), values(a));
  EXPECT_EQ(concat({tensor({1, 2}), tensor({3})}, 0).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  expect_error<ShapeError>([&] { concat({a, b}, 0); }, {"concat", "[2,2]", "[2,1]"});
  expect_error<DTypeError>([&] { concat({a, zeros({2, 2})}, 0); }, {"concat", "float64", "float32"});
  expect_error<ValueError>([] { concat({}, 0); }, {"concat"});
  expect_error<ShapeError>([&] { concat({a, a}, 2); }, {"concat", "axis 2"});
}

TEST(Stack, AxesAndErrors) {
  const Tensor a = tensor({1.0, 2.0}), b = tensor({3.0, 4.0});
  EXPECT_EQ(stack({a, b}).shape(), Shape({2, 2}));
  EXPECT_EQ(values(stack({a, b})), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(values(stack({a, b}, 1)), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(stack({a, b}, -1).shape(), Shape({2, 2}));
  EXPECT_EQ(stack({Tensor::scalar(1.f), Tensor::scalar(2.f)}).shape(), Shape({2}));
  expect_error<ShapeError>([&] { stack({a, tensor({1.0})}); }, {"stack", "[2]", "[1]"});
  expect_error<ShapeError>([&] { stack({a, b}, 3); }, {"stack", "axis 3"});
}

TEST(Split, EqualAndSizedParts) {
  const Tensor x = iota({2, 6});
  const auto parts = split(x, 3, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(values(parts[1]), (std::vector<double>{2, 3, 8, 9}));
  const auto sized = split(x, std::vector<int64_t>{1, -1, 2}, -1);
  EXPECT_EQ(sized[1].shape(), Shape({2, 3}));
  EXPECT_EQ(values(sized[2]), (std::vector<double>{4, 5, 10, 11}));
  expect_error<ValueError>([&] { split(x, 4, 1); }, {"split", "[2,6]", "4"});
  expect_error<ValueError>([&] { split(x, std::vector<int64_t>{2, 2}, 1); }, {"split", "[2,2]"});
  expect_error<ValueError>([&] { split(x, std::vector<int64_t>{-1, -1}, 1); }, {"split"});
}

TEST(Slice, ValuesAndBounds) {
  const Tensor x = iota({3, 4});
  const Tensor s = slice(x, {1, 1}, {2, -1});
  EXPECT_EQ(s.shape(), Shape({2, 3}));
  EXPECT_EQ(values(s), (std::vector<double>{5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(slice(x, {3, 0}, {0, 4}).shape(), Shape({0, 4}));
  expect_error<IndexError>([&] { slice(x, {2, 0}, {2, 4}); }, {"slice", "[3,4]"});
  expect_error<IndexError>([&] { slice(x, {-1, 0}, {1, 1}); }, {"slice"});
  expect_error<ShapeError>([&] { slice(x, {0}, {1}); }, {"slice", "[3,4]"});
}

TEST(Pad, ConstantValue) {
  const Tensor x = tensor({1, 2, 3, 4}, {2, 2});
  const Tensor p = pad(x, {{1, 0}, {0, 2}}, 9);
  EXPECT_EQ(p.shape(), Shape({3, 4}));
  EXPECT_EQ(p.to_vector<int32_t>(), (std::vector<int32_t>{9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}));
  expect_error<ValueError>([&] { pad(x, {{-1, 0}, {0, 0}}); }, {"pad", "non-negative"});
  expect_error<ShapeError>([&] { pad(x, {{1, 0}}); }, {"pad", "[2,2]"});
  expect_error<ValueError>([&] { pad(x, {{0, 0}, {0, 0}}, 1e12); }, {"pad", "int32"});
}

TEST(Gather, AnyAxisAndIndexDtypes) {
  const Tensor p = iota({3, 4});
  EXPECT_EQ(values(gather(p, tensor({2, 0}))), (std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3}));
  const Tensor g1 = gather(p, tensor({int64_t(3), int64_t(1), int64_t(3)}), 1);
  EXPECT_EQ(g1.shape(), Shape({3, 3}));
  EXPECT_EQ(values(g1), (std::vector<double>{3, 1, 3, 7, 5, 7, 11, 9, 11}));
  const Tensor g2 = gather(p, tensor({0, 1, 1, 2}, {2, 2}), -1);
  EXPECT_EQ(g2.shape(), Shape({3, 2, 2}));
  EXPECT_EQ(values(g2)[4], 4);
  EXPECT_EQ(gather(tensor({1, 2, 3}), tensor({2, 2})).to_vector<int32_t>(), (std::vector<int32_t>{3, 3}));
  expect_error<IndexError>([&] { gather(p, tensor({0, 3})); }, {"gather", "index 3", "[3,4]"});
  expect_error<IndexError>([&] { gather(p, tensor({-1})); }, {"gather", "index -1"});
  expect_error<DTypeError>([&] { gather(p, tensor({0.f})); }, {"gather", "float32"});
  expect_error<ShapeError>([&] { gather(p, tensor({0}), 2); }, {"gather", "axis 2"});
}

TEST(OneHot, ValuesAndErrors) {
  const Tensor h = one_hot(tensor({0, 2, 5, -1}), 3);
  EXPECT_EQ(h.shape(), Shape({4, 3}));
  EXPECT_EQ(h.dtype(), float32);
  EXPECT_EQ(values(h), (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));  // out of range: off
  const Tensor i = one_hot(tensor({int64_t(1)}, {1, 1}), 2, 5, -5, int32);
  EXPECT_EQ(i.shape(), Shape({1, 1, 2}));
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{-5, 5}));
  expect_error<ValueError>([] { one_hot(tensor({1}), -2); }, {"one_hot", "-2"});
  expect_error<DTypeError>([] { one_hot(tensor({1.f}), 2); }, {"one_hot", "float32"});
}

TEST(BroadcastTo, ValuesAndErrors) {
  const Tensor x = tensor({1, 2, 3});
  const Tensor b = broadcast_to(x, {2, 3});
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(values(broadcast_to(tensor({true}, {1, 1}), {2, 2})), (std::vector<double>{1, 1, 1, 1}));
  expect_error<ShapeError>([&] { broadcast_to(x, {2, 2}); }, {"broadcast_to", "[3]", "[2,2]"});
  expect_error<ShapeError>([&] { broadcast_to(zeros({2, 3}), {3}); }, {"broadcast_to", "[2,3]", "[3]"});
}

TEST(Devices, ToDeviceAndErrors) {
  const Tensor x = tensor({1.f, 2.f});
  EXPECT_TRUE(to_device(x, Device::cpu()).shares_memory_with(x));
  EXPECT_TRUE(x.to(Device::cpu()).shares_memory_with(x));
  if (!has_backend(DeviceType::kCUDA)) {
    EXPECT_THROW(to_device(x, Device::gpu()), DeviceError);
  }
}

TEST(StopGradient, CutsTheGraph) {
  GradientTape tape;
  const Tensor x = tensor({1.0, 2.0});
  tape.watch(x);
  const Tensor y = x * stop_gradient(x);
  EXPECT_TRUE(stop_gradient(x).shares_memory_with(x));
  EXPECT_EQ(values(tape.gradient(reduce_sum(y), x)), (std::vector<double>{1, 2}));
}

// ---- gradients ----------------------------------------------------------------------------

TEST(ShapeOpsGrad, Movement) {
  const Tensor x = random_uniform({2, 3, 4}, -1, 1, float64, 71);
  const Tensor y = random_uniform({2, 2, 4}, -1, 1, float64, 72);
  expect_gradients_match("transpose", [](auto& in) { return transpose(in[0], {2, 0, 1}); }, {x});
  expect_gradients_match("transpose_last2", [](auto& in) { return transpose(in[0], {0, 2, 1}); }, {x});
  expect_gradients_match("concat", [](auto& in) { return concat({in[0], in[1]}, 1); }, {x, y});
  expect_gradients_match("stack", [](auto& in) { return stack({in[0], in[0] * 2.0}, 1); }, {x});
  expect_gradients_match("split", [](auto& in) {
    const auto parts = split(in[0], std::vector<int64_t>{1, 3}, 2);
    return parts[0] * parts[1];
  }, {x});
  expect_gradients_match("slice", [](auto& in) { return slice(in[0], {1, 0, 1}, {1, 2, -1}); }, {x});
  expect_gradients_match("pad", [](auto& in) { return pad(in[0], {{0, 1}, {2, 0}, {1, 1}}, 3.0); }, {x});
  expect_gradients_match("broadcast_to", [](auto& in) { return broadcast_to(in[0], {3, 2, 2, 4}); }, {y});
}

TEST(ShapeOpsGrad, GatherWithRepeatedIndices) {
  const Tensor p = random_uniform({4, 3}, -1, 1, float64, 81);
  const Tensor idx = tensor({2, 0, 2, 2}, {2, 2});
  expect_gradients_match("gather0", [idx](auto& in) { return gather(in[0], idx, 0); }, {p});
  expect_gradients_match("gather1", [](auto& in) {
    return gather(in[0], tensor({int64_t(1), int64_t(1), int64_t(0)}), 1);
  }, {p});
}

TEST(ShapeOpsGrad, CastBetweenFloatingDtypes) {
  const Tensor x = random_uniform({5}, -1, 1, float64, 91);
  expect_gradients_match("cast", [](auto& in) { return cast(cast(in[0], float32), float64) * in[0]; },
                         {x}, {1e-3, 1e-2, 1e-4});
  GradientTape tape;
  const Tensor w = tensor({1.5f});
  tape.watch(w);
  EXPECT_EQ(cast(w, int32).grad_node(), nullptr);  // not differentiable into integers
}

}  // namespace
}  // namespace strata
