// Conv2D, DepthwiseConv2D and the pooling layers.
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

Initializer fixed(std::vector<float> v) {
  return [v](const Shape& s, DType) { return Tensor::from_vector(v, s); };
}

Tensor one_to_nine() { return arange(1, 10, 1, float32).reshape({1, 3, 3, 1}); }

// ---- Conv2D ----

TEST(Conv2D, KerasWeightNamesAndShapes) {
  Conv2D conv(32, 3, Conv2DOptions().name("conv2d_probe"));
  conv(zeros({2, 8, 8, 1}));
  ASSERT_EQ(conv.weights().size(), 2u);
  EXPECT_EQ(conv.weights()[0]->name(), "conv2d_probe/kernel");
  EXPECT_EQ(conv.weights()[0]->shape(), Shape({3, 3, 1, 32}));
  EXPECT_EQ(conv.weights()[1]->name(), "conv2d_probe/bias");
  EXPECT_EQ(conv.weights()[1]->shape(), Shape({32}));
  Conv2D grouped(6, {1, 2}, Conv2DOptions().groups(2).use_bias(false));
  EXPECT_EQ(grouped.name().rfind("conv2d", 0), 0u);
  grouped(zeros({1, 4, 4, 4}));
  ASSERT_EQ(grouped.weights().size(), 1u);
  EXPECT_EQ(grouped.weights()[0]->shape(), Shape({1, 2, 2, 6}));
}

TEST(Conv2D, ForwardValidAndSameStrided) {
  // Kernel [[1, 2], [3, 4]] over 1..9: valid 2x2 windows, then +0.5.
  Conv2D valid(1, 2, Conv2DOptions().kernel_initializer(fixed({1, 2, 3, 4}))
                         .bias_initializer(initializers::constant(0.5)));
  const Tensor y = valid(one_to_nine());
  EXPECT_EQ(y.shape(), Shape({1, 2, 2, 1}));
  EXPECT_EQ(floats(y), (std::vector<float>{37.5f, 47.5f, 67.5f, 77.5f}));
  // "same" with stride 2: TF pads one row/column after; windows at (0,0), (0,2), (2,0), (2,2).
  Conv2D same(1, 2, Conv2DOptions().strides(2).padding("SAME").use_bias(false)
                        .kernel_initializer(fixed({1, 2, 3, 4})));
  const Tensor z = same(one_to_nine());
  EXPECT_EQ(z.shape(), Shape({1, 2, 2, 1}));
  EXPECT_EQ(floats(z), (std::vector<float>{37, 21, 23, 9}));
  // Positional activation, as Conv2D(1, 2, activation="relu").
  Conv2D neg(1, 2, Conv2DOptions().activation("relu").kernel_initializer(fixed({-1, 0, 0, 0})));
  EXPECT_EQ(floats(neg(one_to_nine())), (std::vector<float>{0, 0, 0, 0}));
  Conv2D dilated(1, 2, Conv2DOptions().dilation_rate(2).use_bias(false).kernel_initializer(fixed({1, 1, 1, 1})));
  EXPECT_EQ(floats(dilated(one_to_nine())), (std::vector<float>{1 + 3 + 7 + 9}));
}

TEST(Conv2D, GradientsThroughLayer) {
  set_random_seed(3);
  Conv2D conv(2, {2, 3}, Conv2DOptions().padding("same").activation("tanh").strides({1, 2}));
  const Tensor x = random_normal({1, 3, 4, 2}, 0, 1, float32, 8);
  conv(x);
  // A non-zero bias, so tanh is not probed only around the origin.
  conv.bias()->assign(tensor({0.1f, -0.2f}, {2}));
  testing::expect_gradients_match("conv2d", [&](const std::vector<Tensor>& in) { return conv(in[0]); },
                                  {x}, kLayerGrad);
  testing::expect_variable_gradients_match("conv2d", [&] { return conv(x); }, conv.trainable_weights());
}

TEST(Conv2D, BadArgumentsAndInputs) {
  expect_error<ValueError>([] { Conv2D(0, 3); }, {"filters"});
  expect_error<ValueError>([] { Conv2D(4, {0, 3}); }, {"kernel_size", "(0, 3)"});
  expect_error<ValueError>([] { Conv2D(4, 3, Conv2DOptions().padding("full")); }, {"padding", "full"});
  expect_error<ValueError>([] { Conv2D(4, 3, Conv2DOptions().groups(3)); }, {"groups"});
  expect_error<ValueError>([] { Conv2D(4, 3, Conv2DOptions().data_format("channels_first")); },
                           {"channels_last"});
  expect_error<ValueError>([] { Conv2D(4, 3, Conv2DOptions().strides(2).dilation_rate(2)); },
                           {"dilation_rate"});
  expect_error<ValueError>([] { Conv2D(4, 3, "nonsense"); }, {"nonsense"});
  Conv2D conv(4, 3, Conv2DOptions().name("c_bad"));
  expect_error<ShapeError>([&] { conv(zeros({2, 8, 8})); }, {"c_bad", "rank 4", "[2,8,8]"});
  conv(zeros({1, 5, 5, 3}));
  expect_error<ShapeError>([&] { conv(zeros({1, 5, 5, 2})); }, {"c_bad", "3", "[1,5,5,2]"});
  expect_error<ShapeError>([&] { conv(zeros({1, 2, 2, 3})); }, {"c_bad"});  // window > input
  Conv2D g(4, 1, Conv2DOptions().groups(2).name("g_bad"));
  expect_error<ShapeError>([&] { g(zeros({1, 2, 2, 3})); }, {"g_bad", "groups"});
}

TEST(Conv2D, KerasConfigRoundTrip) {
  Conv2D conv(8, {3, 5}, Conv2DOptions().strides({2, 1}).padding("same").activation("relu")
                             .use_bias(false).kernel_regularizer(regularizers::l2(1e-4))
                             .kernel_initializer(initializers::he_normal()));
  const Json c = conv.get_config();
  EXPECT_EQ(c.at("filters").as_int(), 8);
  EXPECT_EQ(c.at("kernel_size").as_int_vector(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(c.at("strides").as_int_vector(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(c.at("padding").as_string(), "same");
  EXPECT_EQ(c.at("data_format").as_string(), "channels_last");
  EXPECT_EQ(c.at("dilation_rate").as_int_vector(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(c.at("groups").as_int(), 1);
  EXPECT_EQ(c.at("activation").as_string(), "relu");
  EXPECT_FALSE(c.at("use_bias").as_bool());
  EXPECT_EQ(c.at("kernel_initializer").at("class_name").as_string(), "HeNormal");
  EXPECT_EQ(c.at("bias_initializer").at("class_name").as_string(), "Zeros");
  EXPECT_EQ(c.at("kernel_regularizer").at("class_name").as_string(), "L2");
  EXPECT_TRUE(c.at("bias_regularizer").is_null());
  expect_config_round_trip(conv);
  // A Keras config with ints for pairs loads too.
  Json keras = Json::parse(R"({"class_name": "Conv2D", "config": {"name": "k", "filters": 2,
      "kernel_size": 3, "strides": 1, "padding": "valid", "trainable": false}})");
  auto loaded = layer_from_config(keras);
  EXPECT_EQ(loaded->get_config().at("kernel_size").as_int_vector(), (std::vector<int64_t>{3, 3}));
  EXPECT_FALSE(loaded->trainable());
}

TEST(Conv2D, RegularizerLoss) {
  Conv2D conv(1, 1, Conv2DOptions().kernel_initializer(fixed({2})).kernel_regularizer(regularizers::l2(0.5)));
  conv(zeros({1, 1, 1, 1}));
  ASSERT_EQ(conv.losses().size(), 1u);
  EXPECT_FLOAT_EQ(conv.losses()[0].item<float>(), 2.0f);  // 0.5 * 2^2
}

// ---- DepthwiseConv2D ----

TEST(DepthwiseConv2D, PerChannelFiltersInKerasOrder) {
  // Channels [1,2,3,4] and [10,20,30,40] (interleaved NHWC).
  const Tensor x = tensor({1.f, 10.f, 2.f, 20.f, 3.f, 30.f, 4.f, 40.f}, {1, 2, 2, 2});
  DepthwiseConv2D dw(2, DepthwiseConv2DOptions().name("dw_probe").use_bias(false)
                            .depthwise_initializer(fixed({1, 0.5f, 1, 0.5f, 1, 0.5f, 1, 0.5f})));
  EXPECT_EQ(floats(dw(x)), (std::vector<float>{10, 50}));
  ASSERT_EQ(dw.weights().size(), 1u);
  EXPECT_EQ(dw.weights()[0]->name(), "dw_probe/depthwise_kernel");
  EXPECT_EQ(dw.weights()[0]->shape(), Shape({2, 2, 2, 1}));
  // depth_multiplier 2: kernel (h, w, c, m) = c0:(1, 2), c1:(0.1, 0); output c*2 + m.
  DepthwiseConv2D dm(2, DepthwiseConv2DOptions().depth_multiplier(2)
                            .bias_initializer(initializers::constant(1))
                            .depthwise_initializer(fixed({1, 2, 0.1f, 0, 1, 2, 0.1f, 0, 1, 2, 0.1f, 0,
                                                          1, 2, 0.1f, 0})));
  EXPECT_EQ(dm.name().rfind("depthwise_conv2d", 0), 0u);
  testing::expect_all_close(dm(x), tensor({11.f, 21.f, 11.f, 1.f}, {1, 1, 1, 4}));
  EXPECT_EQ(dm.weights()[0]->shape(), Shape({2, 2, 2, 2}));
  EXPECT_EQ(dm.weights()[1]->name(), dm.name() + "/bias");
  EXPECT_EQ(dm.weights()[1]->shape(), Shape({4}));
}

TEST(DepthwiseConv2D, GradientsErrorsAndConfig) {
  set_random_seed(4);
  DepthwiseConv2D dw(2, DepthwiseConv2DOptions().depth_multiplier(2).padding("same").activation("tanh")
                            .name("dw_g"));
  const Tensor x = random_normal({1, 3, 3, 2}, 0, 1, float32, 9);
  dw(x);
  dw.bias()->assign(tensor({0.1f, -0.1f, 0.2f, 0.0f}, {4}));
  testing::expect_gradients_match("depthwise", [&](const std::vector<Tensor>& in) { return dw(in[0]); },
                                  {x}, kLayerGrad);
  testing::expect_variable_gradients_match("depthwise", [&] { return dw(x); }, dw.trainable_weights());
  expect_error<ShapeError>([&] { dw(zeros({1, 3, 3, 3})); }, {"dw_g", "[1,3,3,3]"});
  expect_error<ValueError>([] { DepthwiseConv2D(3, DepthwiseConv2DOptions().depth_multiplier(0)); },
                           {"depth_multiplier"});
  const Json c = dw.get_config();
  EXPECT_EQ(c.at("depth_multiplier").as_int(), 2);
  EXPECT_EQ(c.at("depthwise_initializer").at("class_name").as_string(), "GlorotUniform");
  EXPECT_EQ(c.at("kernel_size").as_int_vector(), (std::vector<int64_t>{2, 2}));
  expect_config_round_trip(dw);
}

// ---- Pooling ----

TEST(Pooling2D, MaxAndAverageValues) {
  const Tensor x = arange(0, 16, 1, float32).reshape({1, 4, 4, 1});
  MaxPooling2D mp;
  EXPECT_EQ(mp.name().rfind("max_pooling2d", 0), 0u);
  EXPECT_EQ(floats(mp(x)), (std::vector<float>{5, 7, 13, 15}));
  AveragePooling2D ap;
  EXPECT_EQ(ap.name().rfind("average_pooling2d", 0), 0u);
  EXPECT_EQ(floats(ap(x)), (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
  // Overlapping windows and "same": the corner averages only real elements.
  AveragePooling2D same(3, 1, "same");
  const Tensor y = same(one_to_nine());
  EXPECT_EQ(y.shape(), Shape({1, 3, 3, 1}));
  EXPECT_FLOAT_EQ(floats(y)[0], 3.0f);  // (1 + 2 + 4 + 5) / 4
  EXPECT_FLOAT_EQ(floats(y)[4], 5.0f);
  MaxPooling2D strided({2, 1}, IntPair{1, 2});
  EXPECT_EQ(strided(x).shape(), Shape({1, 3, 2, 1}));
}

TEST(Pooling2D, GradientsErrorsAndConfig) {
  MaxPooling2D mp(2, std::nullopt, "valid", "mp_g");
  AveragePooling2D ap(2, 1);
  // Distinct values so max pooling's argmax is stable under the finite-difference step.
  const Tensor x = tensor({0.1f, 0.9f, 0.4f, 1.7f, 1.3f, 0.2f, 2.5f, 0.6f, 1.1f,
                           -0.8f, 0.3f, -1.4f, 2.1f, -0.5f, 0.7f, 1.9f}, {1, 4, 4, 1});
  testing::expect_gradients_match("max_pooling2d", [&](const std::vector<Tensor>& in) { return mp(in[0]); },
                                  {x}, kLayerGrad);
  testing::expect_gradients_match("average_pooling2d", [&](const std::vector<Tensor>& in) { return ap(in[0]); },
                                  {x}, kLayerGrad);
  expect_error<ShapeError>([&] { mp(zeros({4, 4})); }, {"mp_g", "[4,4]"});
  expect_error<ShapeError>([&] { MaxPooling2D(3)(zeros({1, 2, 2, 1})); }, {"MaxPooling2D"});
  expect_error<ValueError>([] { MaxPooling2D(0); }, {"pool_size"});
  expect_error<ValueError>([] { AveragePooling2D(2, 2, "causal"); }, {"padding"});
  const Json c = mp.get_config();
  EXPECT_EQ(c.at("pool_size").as_int_vector(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.at("strides").as_int_vector(), (std::vector<int64_t>{2, 2}));  // None -> pool_size
  EXPECT_EQ(c.at("padding").as_string(), "valid");
  EXPECT_EQ(c.at("data_format").as_string(), "channels_last");
  expect_config_round_trip(mp);
  expect_config_round_trip(AveragePooling2D(3, 2, "same"));
  auto loaded = layer_from_config(Json::parse(
      R"({"class_name": "MaxPooling2D", "config": {"pool_size": [3, 3], "strides": null}})"));
  EXPECT_EQ(loaded->get_config().at("strides").as_int_vector(), (std::vector<int64_t>{3, 3}));
  expect_error<ValueError>([] {
    layer_from_config(Json::parse(
        R"({"class_name": "MaxPooling2D", "config": {"data_format": "channels_first"}})"));
  }, {"channels_last"});
}

TEST(GlobalPooling2D, AverageAndMaxWithKeepdims) {
  // Channel 0: 1..4, channel 1: -1..-4.
  const Tensor x = tensor({1.f, -1.f, 2.f, -2.f, 3.f, -3.f, 4.f, -4.f}, {1, 2, 2, 2});
  GlobalAveragePooling2D gap;
  EXPECT_EQ(gap.name().rfind("global_average_pooling2d", 0), 0u);
  const Tensor a = gap(x);
  EXPECT_EQ(a.shape(), Shape({1, 2}));
  EXPECT_EQ(floats(a), (std::vector<float>{2.5f, -2.5f}));
  GlobalMaxPooling2D gmp(/*keepdims=*/true);
  EXPECT_EQ(gmp.name().rfind("global_max_pooling2d", 0), 0u);
  const Tensor m = gmp(x);
  EXPECT_EQ(m.shape(), Shape({1, 1, 1, 2}));
  EXPECT_EQ(floats(m), (std::vector<float>{4, -1}));
  GlobalAveragePooling2D bad(false, "gap_bad");
  expect_error<ShapeError>([&] { bad(zeros({2, 3})); }, {"gap_bad", "[2,3]"});
  EXPECT_TRUE(gmp.get_config().at("keepdims").as_bool());
  EXPECT_EQ(gap.get_config().at("data_format").as_string(), "channels_last");
  expect_config_round_trip(gap);
  expect_config_round_trip(gmp);
  testing::expect_gradients_match("global_average_pooling2d",
                                  [&](const std::vector<Tensor>& in) { return gap(in[0]); }, {x}, kLayerGrad);
  testing::expect_gradients_match("global_max_pooling2d",
                                  [&](const std::vector<Tensor>& in) { return gmp(in[0]); }, {x}, kLayerGrad);
}

}  // namespace
}  // namespace strata
