// Save / load round trips: every layer type with weights through save() + load_model() and the
// three weights layouts, every optimizer's state, and training continued after load_model()
// landing on exactly the weights of training that never stopped.
#include <gtest/gtest.h>

#include <functional>

#include <strata/strata.h>

#include "layers/load_model.h"
#include "support/gradient_check.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"
#include "tests/framework/saving/round_trip_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;

using testing::round_trip::expect_same;
using testing::round_trip::expect_same_weights;
using testing::round_trip::OptimizerCase;
using testing::round_trip::mlp;
using testing::round_trip::randomize;

struct LayerCase {
  std::string name;
  std::function<std::shared_ptr<Sequential>()> make;  // built
  std::function<Tensor()> input;
};

std::vector<LayerCase> layer_cases() {
  auto seq = [](std::vector<std::shared_ptr<Layer>> layers, Shape input) {
    auto m = std::make_shared<Sequential>(std::move(layers));
    m->build(input);
    return m;
  };
  return {
      {"Dense", [=] { return seq({std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(2)}, {-1, 3}); },
       [] { return random_normal({5, 3}); }},
      {"Conv2D",
       [=] { return seq({std::make_shared<Conv2D>(3, 3, "relu"), std::make_shared<Flatten>(), std::make_shared<Dense>(2)}, {-1, 6, 6, 2}); },
       [] { return random_normal({2, 6, 6, 2}); }},
      {"DepthwiseConv2D",
       [=] { return seq({std::make_shared<DepthwiseConv2D>(3), std::make_shared<Flatten>()}, {-1, 5, 5, 2}); },
       [] { return random_normal({2, 5, 5, 2}); }},
      {"BatchNormalization",
       [=] { return seq({std::make_shared<Dense>(4), std::make_shared<BatchNormalization>()}, {-1, 3}); },
       [] { return random_normal({5, 3}); }},
      {"LayerNormalization",
       [=] { return seq({std::make_shared<Dense>(4), std::make_shared<LayerNormalization>()}, {-1, 3}); },
       [] { return random_normal({5, 3}); }},
      {"Embedding",
       [=] { return seq({std::make_shared<Embedding>(10, 3), std::make_shared<Flatten>()}, {-1, 4}); },
       [] { return Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 9, 0, 4, 4, 8}, {2, 4}); }},
      {"Normalization",
       [=] {
         auto norm = std::make_shared<Normalization>();
         norm->adapt(random_normal({20, 3}, 2.0, 3.0));
         return seq({norm, std::make_shared<Dense>(2)}, {-1, 3});
       },
       [] { return random_normal({5, 3}); }},
  };
}

// The weights-only layouts (Keras 2 .h5 and Keras 3 .weights.h5) into a fresh model of the same
// architecture made by `make`.
void expect_weights_round_trip(Model& model, const std::function<std::shared_ptr<Model>()>& make,
                               const Tensor& x, const std::filesystem::path& dir) {
  const Tensor expected = model.predict(x);
  for (const std::string file : {"w.h5", "w.weights.h5"}) {
    SCOPED_TRACE(file);
    set_random_seed(4);
    auto other = make();
    model.save_weights((dir / file).string());
    other->load_weights((dir / file).string());
    expect_same_weights(model, *other, /*same_names=*/false);
    expect_same(other->predict(x), expected, "predictions");
  }
}

TEST(LoadModel, EveryLayerTypeRoundTrips) {
  const auto dir = h5::temp_dir("layers");
  for (const LayerCase& c : layer_cases()) {
    SCOPED_TRACE(c.name);
    set_random_seed(3);
    auto model = c.make();
    const bool normalization = c.name == "Normalization";
    if (!normalization) randomize(*model);  // keep adapt()'s statistics meaningful
    const Tensor x = c.input();
    expect_weights_round_trip(*model, c.make, x, dir);

    const std::string path = (dir / (c.name + ".h5")).string();
    model->save(path);
    ::testing::internal::CaptureStderr();  // "No training configuration found": saved uncompiled
    std::shared_ptr<Model> loaded = load_model(path);
    EXPECT_NE(::testing::internal::GetCapturedStderr().find("not* compiled"), std::string::npos);
    EXPECT_EQ(loaded->class_name(), "Sequential");
    EXPECT_FALSE(loaded->compiled());
    expect_same_weights(*model, *loaded, /*same_names=*/true);
    expect_same(loaded->predict(x), model->predict(x), "predictions");
  }
}

TEST(LoadModel, FunctionalModelRoundTrips) {
  set_random_seed(5);
  auto in = Input({3});
  auto h = (*std::make_shared<Dense>(4, "relu"))(in);
  auto bn = (*std::make_shared<BatchNormalization>())(h);
  auto out = (*std::make_shared<Dense>(2))((*std::make_shared<Dropout>(0.2))(bn));
  Model model(in, out);
  randomize(model);
  model.compile("sgd", "mse");
  const Tensor x = random_normal({4, 3});
  const std::string path = (h5::temp_dir("functional") / "m.h5").string();
  model.save(path);
  auto loaded = load_model(path);
  EXPECT_EQ(loaded->class_name(), "Functional");
  EXPECT_TRUE(loaded->compiled());
  expect_same_weights(model, *loaded, /*same_names=*/true);
  expect_same(loaded->predict(x), model.predict(x), "predictions");
}

// A model used as a layer: one entry of layer_names (Keras 2) / its own "layers" container
// (Keras 3). (load_model of it needs model_from_json to rebuild nested models; see the report.)
TEST(LoadModel, NestedModelWeightsRoundTrip) {
  const auto dir = h5::temp_dir("nested");
  auto make = [] {
    auto inner = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
        std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(4)});
    auto in = Input({3});
    auto h = (*std::make_shared<Dense>(4))(in);
    auto out = (*std::make_shared<Dense>(2))((*inner)(h));
    return std::make_shared<Model>(in, out);
  };
  set_random_seed(5);
  auto model = make();
  randomize(*model);
  const Tensor x = random_normal({4, 3});
  expect_weights_round_trip(*model, make, x, dir);

  const std::string path = (dir / "w.h5").string();
  model->save_weights(path);
  h5::Id f(h5::open_file(path));
  std::shared_ptr<Layer> inner;
  for (const auto& l : model->layers()) {
    if (l->class_name() == "Sequential") inner = l;
  }
  ASSERT_TRUE(inner);
  const auto inner_layers = std::dynamic_pointer_cast<Model>(inner)->layers();
  const std::string d = inner_layers[1]->name();
  EXPECT_TRUE(h5::dataset(f, inner->name() + "/" + d + "/kernel:0").found);
  EXPECT_EQ(h5::read_strings(f, "layer_names").size(), model->layers().size());

  // The whole model too: the nested Sequential comes back from its config as a layer.
  const std::string full = (dir / "m.h5").string();
  model->save(full);
  ::testing::internal::CaptureStderr();  // saved uncompiled: load_model warns
  std::shared_ptr<Model> loaded = load_model(full);
  ::testing::internal::GetCapturedStderr();
  testing::expect_all_close(loaded->predict(x), model->predict(x), 0, 0);
  EXPECT_EQ(loaded->to_json(), model->to_json());
}

std::vector<OptimizerCase> optimizer_cases() {
  using namespace optimizers;
  return {
      {"SGD", [] { return std::make_shared<SGD>(0.05, SGDOptions().momentum(0.9)); }},
      {"Adam", [] { return std::make_shared<Adam>(0.01); }},
      {"AdamW", [] { return std::make_shared<AdamW>(0.01, AdamWOptions().weight_decay(0.05)); }},
      {"RMSprop", [] { return std::make_shared<RMSprop>(0.01, RMSpropOptions().momentum(0.5)); }},
      {"Adagrad", [] { return std::make_shared<Adagrad>(0.1, AdagradOptions()); }},
  };
}

// Training interrupted by save() + load_model() ends exactly where uninterrupted training does:
// the weights, the optimizer's slots and its step counter all survive the file.
TEST(LoadModel, TrainingContinuesExactlyForEveryOptimizer) {
  const auto dir = h5::temp_dir("continue");
  for (const OptimizerCase& c : optimizer_cases()) {
    SCOPED_TRACE(c.name);
    testing::round_trip::expect_training_continues_exactly(c, (dir / (c.name + ".h5")).string());
  }
}

TEST(LoadModel, CompileFalseSkipsTheOptimizer) {
  auto model = mlp();
  model->compile("adam", "mse");
  model->train_on_batch(random_normal({4, 3}), random_normal({4, 2}));
  const std::string path = (h5::temp_dir("nocompile") / "m.h5").string();
  model->save(path);
  auto loaded = load_model(path, /*compile=*/false);
  EXPECT_FALSE(loaded->compiled());
  expect_same_weights(*model, *loaded, /*same_names=*/false);
}

TEST(LoadModel, MismatchedOptimizerStateWarnsAndStartsFresh) {
  // A file whose optimizer_weights do not fit the rebuilt optimizer (a slot removed by hand):
  // Keras' warning, and a freshly initialized optimizer.
  auto model = mlp();
  model->compile("adam", "mse");
  model->train_on_batch(random_normal({4, 3}), random_normal({4, 2}));
  const std::string path = (h5::temp_dir("badopt") / "m.h5").string();
  model->save(path);
  {
    h5::Id f(h5::open_for_editing(path));
    h5::Id g(H5Gopen2(f, "optimizer_weights", H5P_DEFAULT));
    std::vector<std::string> names = h5::read_strings(g, "weight_names");
    names.pop_back();
    ASSERT_GE(H5Adelete(g, "weight_names"), 0);
    h5::write_vlen_strings(g, "weight_names", names, H5T_CSET_ASCII);
  }
  ::testing::internal::CaptureStderr();
  auto loaded = load_model(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("freshly initialized optimizer"), std::string::npos) << err;
  EXPECT_EQ(loaded->optimizer()->iteration_count(), 0);
  expect_same_weights(*model, *loaded, /*same_names=*/false);
}

}  // namespace
}  // namespace strata
