#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

// A graph with a residual branch (Add) and a shared layer.
TEST(Functional, ResidualBranchAndSharedLayer) {
  set_random_seed(3);
  auto in = Input({4}, float32, "features");
  auto shared = std::make_shared<Dense>(4, DenseOptions().activation("relu").name("shared"));
  auto add = std::make_shared<Add>("residual_add");
  auto head = std::make_shared<Dense>(2, DenseOptions().name("head"));
  auto h = (*shared)(in);
  auto h2 = (*shared)(h);                                 // the same layer twice: one set of weights
  auto merged = (*add)(std::vector<KerasTensor>{h2, in});  // the skip connection
  Model model(in, (*head)(merged), "residual");
  EXPECT_EQ(model.class_name(), "Functional");
  ASSERT_EQ(model.layers().size(), 3u);  // shared layer listed once
  EXPECT_EQ(model.weights().size(), 4u);

  Tensor x = random_normal({3, 4});
  Tensor expected = (*head)((*shared)((*shared)(x)) + x);
  testing::expect_all_close(model(x), expected, 1e-5, 1e-6);
  EXPECT_EQ(model.get_layer("head"), head);
  testing::expect_error<ValueError>([&] { model.get_layer("nope"); }, {"nope", "shared", "head"});

  // The shared layer appears with two inbound nodes in the config, and the round trip rebuilds
  // the same graph.
  const Json layers = Json::parse(model.to_json()).at("config").at("layers");
  EXPECT_EQ(layers.at(1).at("name").as_string(), "shared");
  EXPECT_EQ(layers.at(1).at("inbound_nodes").size(), 2u);
  std::shared_ptr<Model> copy = model_from_json(model.to_json());
  EXPECT_EQ(copy->to_json(), model.to_json());
  // Gradients flow through both branches.
  GradientTape tape;
  Tensor loss = reduce_sum(model(x, true));
  auto grads = tape.gradient(loss, model.trainable_variables());
  for (const Tensor& g : grads) EXPECT_TRUE(g.defined());
}

// A functional model folds BatchNormalization -> ReLU and Add -> ReLU into fused kernels, but
// only where nothing else reads the pre-activation value; results and gradients are those of
// the layers called one by one.
TEST(Functional, ReluFusionGivesTheUnfusedResults) {
  set_random_seed(5);
  auto in = Input({4, 4, 3});
  auto conv = std::make_shared<Conv2D>(8, 3, Conv2DOptions().padding("same"));
  auto bn1 = std::make_shared<BatchNormalization>();
  auto relu1 = std::make_shared<ActivationLayer>("relu");
  auto bn2 = std::make_shared<BatchNormalization>();
  auto relu2 = std::make_shared<ReLU>();
  auto proj = std::make_shared<Conv2D>(8, 1);
  auto add = std::make_shared<Add>();
  auto relu3 = std::make_shared<ReLU>();
  auto leaky = std::make_shared<ReLU>(ReLUOptions().negative_slope(0.1));  // not plain
  auto pool = std::make_shared<GlobalAveragePooling2D>();
  auto bn1_out = (*bn1)((*conv)(in));
  auto h = (*relu1)(bn1_out);          // fusable
  auto bn2_out = (*bn2)(h);
  auto h2 = (*relu2)(bn2_out);         // not fused: bn2_out is read twice
  auto sum = (*add)(std::vector<KerasTensor>{h2, (*proj)(bn2_out)});
  auto out = (*pool)((*leaky)((*relu3)(sum)));  // Add -> ReLU fusable, leaky ReLU not
  Model model(in, out);

  const Tensor x = random_normal({2, 4, 4, 3});
  auto eager = [&](bool training) {
    const Tensor b1 = (*bn1)((*conv)(x, training), training);
    const Tensor b2 = (*bn2)((*relu1)(b1), training);
    const Tensor s = (*add)(std::vector<Tensor>{(*relu2)(b2), (*proj)(b2)}, training);
    return (*pool)((*leaky)((*relu3)(s)));
  };
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    GradientTape tape1(/*persistent=*/false);
    const Tensor y_model = model(x, training);
    auto g_model = tape1.gradient(reduce_sum(y_model * y_model), model.trainable_variables());
    GradientTape tape2(/*persistent=*/false);
    const Tensor y_eager = eager(training);
    auto g_eager = tape2.gradient(reduce_sum(y_eager * y_eager), model.trainable_variables());
    testing::expect_all_close(y_model, y_eager, 1e-5, 1e-6);
    ASSERT_EQ(g_model.size(), g_eager.size());
    for (size_t i = 0; i < g_model.size(); ++i) testing::expect_all_close(g_model[i], g_eager[i], 1e-4, 1e-5);
  }
}

TEST(Functional, ChecksInputShapesAndCasts) {
  auto in = Input({3});
  Model model(in, (*std::make_shared<Dense>(1))(in));
  testing::expect_error<ShapeError>([&] { model(zeros({2, 5})); }, {"[-1,3]", "[2,5]"});
  // Integer inputs are cast to the Input's dtype, as Keras does.
  EXPECT_EQ(model(ones({2, 3}, int64)).shape(), Shape({2, 1}));
}

TEST(Functional, DisconnectedGraphIsAnError) {
  auto a = Input({2}), b = Input({2});
  auto y = (*std::make_shared<Dense>(1))(b);
  testing::expect_error<ValueError>([&] { Model m(a, y); }, {"disconnected"});
}

TEST(Functional, LayerMustBeSharedPtrForSymbolicCalls) {
  Dense d(2);
  testing::expect_error<ValueError>([&] { d(Input({3})); }, {"shared_ptr"});
}

TEST(Functional, JsonRoundTripRebuildsTheSameArchitecture) {
  auto in = Input({6}, float32, "x");
  auto h = (*std::make_shared<Dense>(5, DenseOptions().activation("tanh").name("hidden")))(in);
  auto y = (*std::make_shared<Dense>(2, DenseOptions().name("logits")))(h);
  Model model(in, y, "round_trip");
  const std::string json = model.to_json();
  std::shared_ptr<Model> copy = model_from_json(json);
  EXPECT_EQ(copy->to_json(), json);
  EXPECT_EQ(copy->name(), "round_trip");
  EXPECT_EQ(copy->get_layer("hidden")->get_config().at("activation").as_string(), "tanh");
  EXPECT_EQ(copy->count_params(), model.count_params());
  // The config is Keras' functional layout.
  const Json j = Json::parse(json);
  EXPECT_EQ(j.at("class_name").as_string(), "Functional");
  EXPECT_EQ(j.at("config").at("layers").at(size_t(0)).at("class_name").as_string(), "InputLayer");
  EXPECT_EQ(j.at("config").at("output_layers").at(size_t(0)).at(size_t(0)).as_string(), "logits");
}

TEST(Sequential, JsonRoundTripAndSummary) {
  Sequential model({std::make_shared<Dense>(64, DenseOptions().activation("relu").name("d1")),
                    std::make_shared<Dense>(10, DenseOptions().name("d2"))},
                   "mlp");
  model.build({-1, 784});
  const std::string s = model.summary_string();
  EXPECT_NE(s.find("Model: \"mlp\""), std::string::npos) << s;
  EXPECT_NE(s.find(" d1 (Dense)                  (None, 64)                50240"), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: 50890 (198.79 KB)"), std::string::npos) << s;
  EXPECT_NE(s.find("Non-trainable params: 0 (0.00 Byte)"), std::string::npos) << s;
  std::shared_ptr<Model> copy = model_from_json(model.to_json());
  EXPECT_EQ(copy->class_name(), "Sequential");
  EXPECT_EQ(copy->count_params(), 50890);
  EXPECT_EQ(copy->to_json(), model.to_json());
}

TEST(Sequential, PopAndDuplicateNames) {
  Sequential model({std::make_shared<Dense>(2, DenseOptions().name("a"))});
  testing::expect_error<ValueError>(
      [&] { model.add(std::make_shared<Dense>(2, DenseOptions().name("a"))); }, {"'a'"});
  model.pop();
  EXPECT_TRUE(model.layers().empty());
  testing::expect_error<ValueError>([&] { model.pop(); }, {"no layers"});
}

// A subclassed model: call() overridden, layers tracked.
class TwoLayer : public Model {
 public:
  TwoLayer() : Model("two_layer") {
    hidden_ = track(std::make_shared<Dense>(8, "relu"));
    out_ = track(std::make_shared<Dense>(1));
  }

 protected:
  Tensor call(const Tensor& x, bool training) override { return (*out_)((*hidden_)(x, training), training); }

 private:
  std::shared_ptr<Dense> hidden_, out_;
};

TEST(Subclassed, TracksLayersAndTrains) {
  set_random_seed(9);
  TwoLayer model;
  Tensor x = random_normal({64, 3});
  Tensor y = reduce_sum(x, {1}, true);
  model.compile(std::make_shared<optimizers::Adam>(0.02), "mse");
  History h = model.fit(x, y, FitOptions().epochs(30).batch_size(16).verbose(0));
  EXPECT_EQ(model.weights().size(), 4u);
  ASSERT_EQ(h.history["loss"].size(), 30u);
  EXPECT_LT(h.history["loss"].back(), 0.2 * h.history["loss"].front());
}

}  // namespace
}  // namespace strata
