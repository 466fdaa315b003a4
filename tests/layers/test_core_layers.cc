// Embedding, Activation, ReLU, Softmax, Dropout, Flatten, Reshape, Permute, ZeroPadding2D.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "layers/layer_test_utils.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_config_round_trip;
using testing::expect_error;
using testing::kLayerGrad;

using testing::floats;

// ---- Embedding ----

TEST(Embedding, LooksUpRowsWithKerasWeight) {
  Embedding emb(3, 2, EmbeddingOptions().name("emb").embeddings_initializer(
                          [](const Shape& s, DType) { return tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, s); }));
  Tensor y = emb(tensor<int64_t>({2, 0, 1, 1}, {2, 2}));
  EXPECT_EQ(y.shape(), Shape({2, 2, 2}));
  EXPECT_EQ(floats(y), (std::vector<float>{4, 5, 0, 1, 2, 3, 2, 3}));
  ASSERT_EQ(emb.weights().size(), 1u);
  EXPECT_EQ(emb.weights()[0]->name(), "emb/embeddings");
  EXPECT_EQ(emb.weights()[0]->shape(), Shape({3, 2}));
  // Float ids are cast, as Keras does.
  EXPECT_EQ(floats(emb(tensor({1.f}, {1, 1}))), (std::vector<float>{2, 3}));
}

TEST(Embedding, DefaultInitializerIsUniform005AndNameEmbedding) {
  Embedding emb(50, 4);
  EXPECT_EQ(emb.name().rfind("embedding", 0), 0u);
  emb(tensor<int64_t>({0}, {1, 1}));
  for (float v : floats(emb.embeddings()->value())) {
    EXPECT_GE(v, -0.05f);
    EXPECT_LE(v, 0.05f);
  }
  EXPECT_EQ(emb.get_config().at("embeddings_initializer").at("class_name").as_string(), "RandomUniform");
}

TEST(Embedding, GradientAccumulatesRepeatedIds) {
  set_random_seed(1);
  Embedding emb(4, 3);
  const Tensor ids = tensor<int64_t>({0, 2, 0, 3}, {2, 2});
  testing::expect_variable_gradients_match("embedding", [&] { return tanh(emb(ids)); }, emb.weights());
}

TEST(Embedding, BadIdsAndArguments) {
  expect_error<ValueError>([] { Embedding(0, 2); }, {"input_dim"});
  Embedding emb(3, 2, EmbeddingOptions().name("emb_bad"));
  expect_error<IndexError>([&] { emb(tensor<int64_t>({3}, {1, 1})); }, {"emb_bad", "3"});
  expect_error<IndexError>([&] { emb(tensor<int64_t>({-1}, {1, 1})); }, {"-1"});
}

TEST(Embedding, ConfigRoundTrip) {
  Embedding emb(7, 3, EmbeddingOptions().mask_zero(true).embeddings_regularizer(regularizers::l2(0.1)));
  const Json c = emb.get_config();
  EXPECT_EQ(c.at("input_dim").as_int(), 7);
  EXPECT_EQ(c.at("output_dim").as_int(), 3);
  EXPECT_TRUE(c.at("mask_zero").as_bool());
  expect_config_round_trip(emb);
}

// ---- Activation / ReLU / Softmax ----

TEST(ActivationLayer, AppliesByKerasName) {
  ActivationLayer relu_layer("relu");
  EXPECT_EQ(relu_layer.class_name(), "Activation");
  EXPECT_EQ(relu_layer.name().rfind("activation", 0), 0u);
  EXPECT_EQ(floats(relu_layer(tensor({-1.f, 2.f}, {1, 2}))), (std::vector<float>{0, 2}));
  ActivationLayer sm("softmax");
  expect_all_close(sm(tensor({0.f, 0.f}, {1, 2})), tensor({0.5f, 0.5f}, {1, 2}));
  ActivationLayer lin("linear");
  EXPECT_EQ(floats(lin(tensor({-3.f}, {1, 1}))), (std::vector<float>{-3}));
  expect_error<ValueError>([] { ActivationLayer("nope"); }, {"nope"});
  expect_config_round_trip(ActivationLayer("tanh"));
}

TEST(ActivationLayer, GradientThroughLayer) {
  ActivationLayer a("sigmoid");
  testing::expect_gradients_match("activation", [&](const std::vector<Tensor>& in) { return a(in[0]); },
                                  {tensor({-1.f, 0.5f, 2.f}, {1, 3})}, kLayerGrad);
}

TEST(ReLU, KerasFormulaWithMaxValueSlopeThreshold) {
  const Tensor x = tensor({-2.f, 0.5f, 1.5f, 3.f, 8.f}, {1, 5});
  ReLU plain;
  EXPECT_EQ(plain.name().rfind("re_lu", 0), 0u);
  EXPECT_EQ(floats(plain(x)), (std::vector<float>{0, 0.5f, 1.5f, 3, 8}));
  ReLU six(ReLUOptions().max_value(6));
  EXPECT_EQ(floats(six(x)), (std::vector<float>{0, 0.5f, 1.5f, 3, 6}));
  // x >= max: max; threshold <= x < max: x; else slope * (x - threshold).
  ReLU full(ReLUOptions().max_value(4).negative_slope(0.5).threshold(1));
  expect_all_close(full(x), tensor({-1.5f, -0.25f, 1.5f, 3.f, 4.f}, {1, 5}));
  ReLU thr(ReLUOptions().threshold(1));
  EXPECT_EQ(floats(thr(x)), (std::vector<float>{0, 0, 1.5f, 3, 8}));
  expect_error<ValueError>([] { ReLU(ReLUOptions().max_value(-1)); }, {"max_value"});
  expect_error<ValueError>([] { ReLU(ReLUOptions().negative_slope(-1)); }, {"negative_slope"});
  auto copy = expect_config_round_trip(full);
  EXPECT_EQ(copy->get_config().at("max_value").as_double(), 4.0);
  EXPECT_TRUE(plain.get_config().at("max_value").is_null());
  expect_config_round_trip(plain);
  testing::expect_gradients_match("relu", [&](const std::vector<Tensor>& in) { return full(in[0]); },
                                  {tensor({-2.f, 0.5f, 1.5f, 3.f, 5.f}, {1, 5})}, kLayerGrad);
}

TEST(Softmax, AxisAndErrors) {
  Softmax s0(0);
  expect_all_close(s0(tensor({1.f, 5.f, 1.f, 5.f}, {2, 2})), tensor({0.5f, 0.5f, 0.5f, 0.5f}, {2, 2}));
  Softmax s;
  EXPECT_EQ(s.name().rfind("softmax", 0), 0u);
  const Tensor y = s(tensor({0.f, std::log(3.f)}, {1, 2}));
  expect_all_close(y, tensor({0.25f, 0.75f}, {1, 2}), 1e-5, 1e-6);
  Softmax bad(3, "sm_bad");
  expect_error<ShapeError>([&] { bad(zeros({2, 2})); }, {"sm_bad", "[2,2]"});
  expect_config_round_trip(s0);
  testing::expect_gradients_match("softmax", [&](const std::vector<Tensor>& in) { return s(in[0]); },
                                  {tensor({0.1f, -0.3f, 0.7f, 0.2f}, {2, 2})}, kLayerGrad);
}

// ---- Dropout ----

TEST(Dropout, OnlyActiveWhenTraining) {
  Dropout d(0.5, /*seed=*/3);
  EXPECT_EQ(d.name().rfind("dropout", 0), 0u);
  const Tensor x = ones({8, 16});
  EXPECT_EQ(floats(d(x)), floats(x));                 // inference: identity
  EXPECT_EQ(floats(d(x, false)), floats(x));
  const std::vector<float> y = floats(d(x, /*training=*/true));
  int zeros_count = 0;
  for (float v : y) {
    EXPECT_TRUE(v == 0.0f || v == 2.0f) << v;  // kept values scaled by 1/(1-rate)
    zeros_count += v == 0.0f;
  }
  EXPECT_GT(zeros_count, 30);
  EXPECT_LT(zeros_count, 98);
}

TEST(Dropout, SeededLayersRepeatTheSameSequence) {
  Dropout a(0.3, 11), b(0.3, 11);
  const Tensor x = ones({4, 32});
  const auto a1 = floats(a(x, true)), a2 = floats(a(x, true));
  EXPECT_EQ(a1, floats(b(x, true)));   // same seed, same first mask
  EXPECT_EQ(a2, floats(b(x, true)));   // and same second one
  EXPECT_NE(a1, a2);                   // successive calls draw new masks
  set_random_seed(4);
  Dropout u(0.3);
  const auto u1 = floats(u(x, true));
  set_random_seed(4);
  EXPECT_EQ(u1, floats(u(x, true)));   // unseeded: the global generator
}

TEST(Dropout, GradientIsTheMaskAndConfig) {
  Dropout d(0.25, 5);
  const Tensor x = random_normal({3, 4}, 0, 1, float32, 7);
  Tensor xw = x.clone();
  GradientTape tape;
  tape.watch(xw);
  const Tensor y = d(xw, true);
  const std::vector<float> g = floats(tape.gradient(y, xw)), yv = floats(y), xv = floats(x);
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i] * xv[i], yv[i], 1e-5);  // dy/dx = mask / (1 - rate)
    EXPECT_TRUE(g[i] == 0.0f || std::fabs(g[i] - 1.0f / 0.75f) < 1e-5f);
  }
  expect_error<ValueError>([] { Dropout(1.0); }, {"rate"});
  expect_error<ValueError>([] { Dropout(-0.1); }, {"rate"});
  const Json c = expect_config_round_trip(d)->get_config();
  EXPECT_EQ(c.at("seed").as_int(), 5);
  EXPECT_DOUBLE_EQ(c.at("rate").as_double(), 0.25);
  EXPECT_TRUE(Dropout(0.1).get_config().at("seed").is_null());
  expect_config_round_trip(Dropout(0.1));
}

// ---- Flatten / Reshape / Permute / ZeroPadding2D ----

TEST(Flatten, CollapsesAllButBatch) {
  Flatten f;
  EXPECT_EQ(f.name().rfind("flatten", 0), 0u);
  const Tensor x = arange(0, 24, 1, float32).reshape({2, 3, 2, 2});
  const Tensor y = f(x);
  EXPECT_EQ(y.shape(), Shape({2, 12}));
  EXPECT_EQ(floats(y), floats(x));
  EXPECT_EQ(f(zeros({5})).shape(), Shape({5, 1}));
  EXPECT_EQ(f.get_config().at("data_format").as_string(), "channels_last");
  expect_config_round_trip(f);
  testing::expect_gradients_match("flatten", [&](const std::vector<Tensor>& in) { return f(in[0]); },
                                  {random_normal({2, 2, 3}, 0, 1, float32, 3)}, kLayerGrad);
}

TEST(Reshape, TargetShapeWithOneUnknown) {
  Reshape r({3, -1}, "rs");
  const Tensor x = arange(0, 12, 1, float32).reshape({2, 6});
  const Tensor y = r(x);
  EXPECT_EQ(y.shape(), Shape({2, 3, 2}));
  EXPECT_EQ(floats(y), floats(x));
  EXPECT_EQ(Reshape({2, 3})(x).shape(), Shape({2, 2, 3}));
  expect_error<ShapeError>([&] { r(zeros({2, 7})); }, {"rs", "[2,7]", "(3, -1)"});
  expect_error<ShapeError>([] { Reshape({4})(zeros({2, 6})); }, {"[2,6]"});
  expect_error<ValueError>([] { Reshape({-1, -1}); }, {"-1"});
  expect_error<ValueError>([] { Reshape({0, 2}); }, {"target_shape"});
  EXPECT_EQ(r.get_config().at("target_shape").as_int_vector(), (std::vector<int64_t>{3, -1}));
  expect_config_round_trip(r);
  testing::expect_gradients_match("reshape", [&](const std::vector<Tensor>& in) { return r(in[0]); },
                                  {random_normal({1, 6}, 0, 1, float32, 3)}, kLayerGrad);
}

TEST(Permute, OneBasedDims) {
  Permute p({2, 1}, "perm");
  const Tensor x = arange(0, 6, 1, float32).reshape({1, 2, 3});
  const Tensor y = p(x);
  EXPECT_EQ(y.shape(), Shape({1, 3, 2}));
  EXPECT_EQ(floats(y), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  expect_error<ValueError>([] { Permute({0, 1}); }, {"permutation"});
  expect_error<ValueError>([] { Permute({1, 1}); }, {"permutation"});
  expect_error<ShapeError>([&] { p(zeros({1, 2, 3, 4})); }, {"perm", "[1,2,3,4]"});
  EXPECT_EQ(p.get_config().at("dims").as_int_vector(), (std::vector<int64_t>{2, 1}));
  expect_config_round_trip(p);
  testing::expect_gradients_match("permute", [&](const std::vector<Tensor>& in) { return p(in[0]); },
                                  {random_normal({2, 2, 3}, 0, 1, float32, 3)}, kLayerGrad);
}

TEST(ZeroPadding2D, IntPairAndNestedForms) {
  const Tensor x = ones({1, 1, 2, 1});
  ZeroPadding2D all(1);
  EXPECT_EQ(all.name().rfind("zero_padding2d", 0), 0u);
  EXPECT_EQ(all(x).shape(), Shape({1, 3, 4, 1}));
  ZeroPadding2D hw({1, 0});
  EXPECT_EQ(hw(x).shape(), Shape({1, 3, 2, 1}));
  ZeroPadding2D nested({{0, 1}, {2, 0}});
  const Tensor y = nested(x);
  EXPECT_EQ(y.shape(), Shape({1, 2, 4, 1}));
  EXPECT_EQ(floats(y), (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0}));
  const Json c = nested.get_config();
  EXPECT_EQ(c.at("padding").dump(), "[[0,1],[2,0]]");
  expect_config_round_trip(nested);
  expect_config_round_trip(all);
  expect_error<ValueError>([] { ZeroPadding2D(-1); }, {"non-negative"});
  expect_error<ShapeError>([&] { all(zeros({2, 3})); }, {"rank 4", "[2,3]"});
  testing::expect_gradients_match("zero_padding2d", [&](const std::vector<Tensor>& in) { return nested(in[0]); },
                                  {random_normal({1, 2, 2, 1}, 0, 1, float32, 3)}, kLayerGrad);
}

TEST(CoreLayers, FunctionalCallInfersShapes) {
  auto f = std::make_shared<Flatten>();
  auto r = std::make_shared<Reshape>(std::vector<int64_t>{2, -1});
  KerasTensor y = (*r)((*f)(Input({4, 3})));
  EXPECT_EQ(y.shape(), Shape({-1, 2, 6}));
}

}  // namespace
}  // namespace strata
