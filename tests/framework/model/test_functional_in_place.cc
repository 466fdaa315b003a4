// The functional API as Keras users write it: layers constructed in place and called on
// KerasTensors (the graph owns them), Keras' name/dtype/trainable the same way on every layer,
// layers in place in Sequential's list, and the older forms still working.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include <strata/strata.h>

#include "layers/layer_registry.h"
#include "layers/layer_samples.h"
#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_error;

// int of "dense_7"'s suffix (0 for "dense").
int default_number(const std::string& name, const std::string& base) {
  if (name == base) return 0;
  return std::stoi(name.substr(base.size() + 1));
}

TEST(FunctionalInPlace, KerasStyleModelTrainsAndRoundTrips) {
  set_random_seed(7);
  std::shared_ptr<Model> model;
  {
    // x = layers.Dense(16, activation="relu", name="fc1")(inputs) ... the layers go out of
    // scope here: the graph owns them.
    auto inputs = Input({4}, float32, "features");
    auto x = Dense(16, "relu").name("fc1")(inputs);
    auto skip = Dense(16).name("proj")(inputs);
    x = Add().name("residual")({x, skip});
    x = Dropout(0.1).name("drop")(x);
    auto outputs = Dense(1).name("head")(x);
    model = std::make_shared<Model>(inputs, outputs, "in_place");
  }
  ASSERT_EQ(model->layers().size(), 5u);
  EXPECT_EQ(model->get_layer("fc1")->class_name(), "Dense");
  EXPECT_EQ(model->get_layer("fc1")->get_config().at("activation").as_string(), "relu");
  EXPECT_EQ(model->get_layer("residual")->class_name(), "Add");
  EXPECT_EQ(model->get_layer("fc1")->weights()[0]->name(), "fc1/kernel");

  // It learns y = sum(x).
  const Tensor xs = random_normal({256, 4});
  const Tensor ys = reduce_sum(xs, {1}, /*keepdims=*/true);
  model->compile("adam", "mse");
  const History h = model->fit(xs, ys, FitOptions().epochs(40).batch_size(32).verbose(0));
  EXPECT_LT(h.history.at("loss").back(), 0.05 * h.history.at("loss").front());

  // Keras JSON round trip rebuilds the same graph.
  std::shared_ptr<Model> copy = model_from_json(model->to_json());
  EXPECT_EQ(copy->to_json(), model->to_json());
}

TEST(FunctionalInPlace, SharedLayersStillUseMakeShared) {
  auto inputs = Input({3});
  auto shared = std::make_shared<Dense>(3, "tanh");
  auto a = (*shared)(inputs);
  auto b = (*shared)(a);  // the same weights twice
  Model model(inputs, Dense(2)(b));
  EXPECT_EQ(model.weights().size(), 4u);
  const Tensor x = random_normal({2, 3}, 0, 1, float32, 2);
  const Tensor expected = (*model.layers()[1])((*shared)((*shared)(x)));
  expect_all_close(model(x), expected, 1e-5, 1e-6);
}

TEST(FunctionalInPlace, OlderFormsStillWork) {
  auto inputs = Input({4});
  auto x = (*std::make_shared<Dense>(8, DenseOptions().activation("relu").name("opt_name")))(inputs);
  x = (*std::make_shared<Dropout>(0.5, /*seed=*/3, "positional_name"))(x);
  x = (*std::make_shared<ActivationLayer>("tanh", "act_name"))(x);
  Model model(inputs, x);
  EXPECT_TRUE(model.get_layer("opt_name"));
  EXPECT_TRUE(model.get_layer("positional_name"));
  EXPECT_TRUE(model.get_layer("act_name"));
}

TEST(FunctionalInPlace, SequentialTakesLayersInPlace) {
  Sequential model({Dense(8, "relu").name("hidden"), Dropout(0.2), Dense(2)});
  model.add(Dense(1).name("out"));
  model.add(std::make_shared<ActivationLayer>("sigmoid"));
  ASSERT_EQ(model.layers().size(), 5u);
  EXPECT_EQ(model.layers()[0]->name(), "hidden");
  EXPECT_EQ(model.layers()[3]->name(), "out");
  EXPECT_EQ(model(zeros({3, 5})).shape(), Shape({3, 1}));
}

TEST(FunctionalInPlace, NameDtypeTrainableTheSameForEveryLayer) {
  const std::map<std::string, Json> samples = testing::minimal_layer_configs();
  for (const std::string& cls : registered_layers()) {
    if (cls == "Sequential" || cls == "Functional") continue;
    SCOPED_TRACE(cls);
    ASSERT_TRUE(samples.count(cls)) << "add a minimal config for " << cls << " to layer_samples.h";
    std::shared_ptr<Layer> layer =
        layer_from_config(Json::object({{"class_name", cls}, {"config", samples.at(cls)}}));
    layer->name("renamed_" + cls).dtype("mixed_bfloat16").trainable(false);
    EXPECT_EQ(layer->name(), "renamed_" + cls);
    EXPECT_EQ(layer->dtype_policy().name(), "mixed_bfloat16");
    EXPECT_FALSE(layer->trainable());
    EXPECT_EQ(layer->get_config().at("name").as_string(), "renamed_" + cls);
    EXPECT_FALSE(layer->get_config().at("trainable").as_bool());
  }
}

TEST(FunctionalInPlace, EveryBuiltInLayerWorksInPlace) {
  // Each class constructed in place and moved into a std::shared_ptr<Layer> (STRATA_LAYER).
  const std::vector<std::shared_ptr<Layer>> layers = {
      Dense(2), Embedding(5, 2), ActivationLayer("relu"), ReLU(), Softmax(), LeakyReLU(), ELU(),
      PReLU(), Dropout(0.5), Flatten(), Reshape({2, 2}), Permute({2, 1}), ZeroPadding2D(),
      Conv2D(2, 3), DepthwiseConv2D(3), MaxPooling2D(), AveragePooling2D(),
      GlobalAveragePooling2D(), GlobalMaxPooling2D(), BatchNormalization(),
      SyncBatchNormalization(), LayerNormalization(), Add(), Subtract(), Multiply(), Concatenate(),
      Hashing(4), IntegerLookup(), StringLookup(), Normalization(), RandomCrop(2, 2), RandomFlip(),
      RandomTranslation(0.1, 0.1), Rescaling(0.5)};
  std::set<std::string> classes;
  for (const auto& l : layers) {
    ASSERT_TRUE(l);
    classes.insert(l->class_name());
  }
  for (const std::string& cls : registered_layers()) {
    if (cls == "Sequential" || cls == "Functional") continue;
    EXPECT_TRUE(classes.count(cls)) << cls << " is registered but not checked in place here";
  }
  // A moved layer computes as one made with make_shared: the same default config.
  auto moved = std::shared_ptr<Layer>(Dense(3, "tanh").name("moved"));
  EXPECT_EQ(moved->get_config().at("activation").as_string(), "tanh");
  EXPECT_EQ((*moved)(ones({2, 4})).shape(), Shape({2, 3}));
}

TEST(FunctionalInPlace, DtypeAndTrainableInPlace) {
  auto inputs = Input({4});
  auto h = Dense(4).name("frozen").trainable(false)(inputs);
  auto out = Dense(2).name("mixed").dtype("mixed_float16")(h);
  Model model(inputs, out);
  EXPECT_TRUE(model.get_layer("frozen")->trainable_weights().empty());
  EXPECT_EQ(model.get_layer("frozen")->non_trainable_weights().size(), 2u);
  EXPECT_EQ(model.get_layer("mixed")->compute_dtype(), float16);
  EXPECT_EQ(model.get_layer("mixed")->variable_dtype(), float32);
  EXPECT_EQ(model.trainable_weights().size(), 2u);
}

TEST(FunctionalInPlace, ANameGivenInPlaceTakesNoDefaultNumber) {
  // Keras' Dense(2, name="fc") leaves the default numbering alone: the next unnamed Dense gets
  // the number after the previous unnamed one.
  Dense before(2);
  auto inputs = Input({2});
  auto x = Dense(2).name("explicitly_named")(inputs);
  Dense after(2);
  EXPECT_EQ(default_number(after.name(), "dense"), default_number(before.name(), "dense") + 1);
}

TEST(FunctionalInPlace, RenamingABuiltLayerIsAnError) {
  Dense dense(2);
  dense(zeros({1, 3}));
  expect_error<StateError>([&] { dense.name("late"); }, {"renamed", "late", "before its first call"});
  expect_error<ValueError>([&] { Dense(2).name(""); }, {"empty"});
}

TEST(FunctionalInPlace, ANamedLocalLayerSaysHowToOwnIt) {
  Dense local(2);
  auto inputs = Input({3});
  expect_error<ValueError>([&] { local(inputs); }, {"Dense(...)(x)", "std::make_shared<Dense>"});
}

// A user's layer: STRATA_LAYER makes it usable in place; without it, a clear error.
class TimesTwo : public Layer {
 public:
  STRATA_LAYER(TimesTwo)
  TimesTwo() : Layer("times_two") {}
  std::string class_name() const override { return "TimesTwo"; }

 protected:
  Tensor call(const Tensor& x, bool) override { return x * 2.0; }
};

class TimesThree : public Layer {
 public:
  TimesThree() : Layer("times_three") {}
  std::string class_name() const override { return "TimesThree"; }

 protected:
  Tensor call(const Tensor& x, bool) override { return x * 3.0; }
};

TEST(FunctionalInPlace, UserLayers) {
  auto inputs = Input({2});
  Model model(inputs, TimesTwo().name("double")(inputs));
  expect_all_close(model(ones({1, 2})), full({1, 2}, 2.0));
  expect_error<ValueError>([&] { TimesThree()(inputs); },
                           {"TimesThree", "STRATA_LAYER(TimesThree)", "std::make_shared"});
  // make_shared works for it as before.
  auto three = std::make_shared<TimesThree>();
  Model model3(inputs, (*three)(inputs));
  expect_all_close(model3(ones({1, 2})), full({1, 2}, 3.0));
}

TEST(FunctionalInPlace, RankOneInputSaysTheBatchAxisIsMissing) {
  auto inputs = Input({12});
  Model functional(inputs, Dense(3)(inputs));
  expect_error<ShapeError>([&] { functional(zeros({12})); },
                           {"[12]", "batch axis is missing", "reshape({1, 12})"});
  Sequential sequential({Dense(3)});
  sequential.build({-1, 12});
  expect_error<ShapeError>([&] { sequential(zeros({12})); },
                           {"[12]", "batch axis is missing", "reshape({1, 12})"});
  Dense dense(3);
  dense(zeros({2, 12}));
  expect_error<ShapeError>([&] { dense(zeros({12})); }, {"batch axis is missing"});
  // A wrong feature size is not called a missing batch axis.
  try {
    functional(zeros({2, 11}));
    ADD_FAILURE() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()).find("batch axis"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
