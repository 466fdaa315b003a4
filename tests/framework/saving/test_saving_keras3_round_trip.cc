// Model::save("m.keras") + load_model: every layer class of the registry and every optimizer
// through the archive, training continued after loading landing on exactly the weights of
// training that never stopped, and the archive laid out as Keras 3's saving_lib writes it
// (entries, stored, metadata.json, config.json's keys and order, model.weights.h5's groups and
// the optimizer variables' order).
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>

#include <strata/strata.h>

#include "framework/saving/keras3_layer_config.h"
#include "layers/layer_registry.h"
#include "layers/load_model.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/keras_archive_test_util.h"
#include "tests/framework/saving/round_trip_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;
namespace k3 = testing::keras3;

using testing::round_trip::expect_same;
using testing::round_trip::OptimizerCase;
using testing::round_trip::mlp;
using testing::round_trip::randomize;

// Rebuilt from a's file: the same names too.
void expect_same_weights(const Model& a, const Model& b) {
  testing::round_trip::expect_same_weights(a, b, /*same_names=*/true);
}

struct Built {
  std::shared_ptr<Model> model;
  std::vector<Tensor> inputs;
};

Built seq(std::vector<std::shared_ptr<Layer>> layers, Shape input, Tensor x) {
  auto m = std::make_shared<Sequential>(std::move(layers));
  m->build(input);
  return {m, {x}};
}

Built functional(const std::function<KerasTensor(const KerasTensor&)>& body, Shape input, Tensor x,
                 DType dtype = float32) {
  auto in = Input(input, dtype);
  return {std::make_shared<Model>(in, body(in)), {x}};
}

template <typename L, typename... Args>
KerasTensor call(const KerasTensor& x, Args&&... args) {
  return (*std::make_shared<L>(std::forward<Args>(args)...))(x);
}

Tensor ints(std::vector<int64_t> v, Shape s) { return Tensor::from_vector(v, s); }

// One model per registered layer class (StringLookup reads strings, which Strata tensors do not
// hold: its config goes through Keras 3's form in LayerConfigsThroughKeras3Form).
std::map<std::string, std::function<Built()>> layer_cases() {
  return {
      {"Dense", [] { return seq({std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(2)}, {-1, 3}, random_normal({5, 3})); }},
      {"Embedding", [] { return seq({std::make_shared<Embedding>(10, 3), std::make_shared<Flatten>()}, {-1, 4}, ints({1, 2, 3, 9, 0, 4, 4, 8}, {2, 4})); }},
      {"Activation", [] { return seq({std::make_shared<ActivationLayer>("tanh")}, {-1, 3}, random_normal({2, 3})); }},
      {"ReLU", [] { return seq({std::make_shared<ReLU>(ReLUOptions().max_value(1.0))}, {-1, 3}, random_normal({2, 3})); }},
      {"Softmax", [] { return seq({std::make_shared<Softmax>()}, {-1, 3}, random_normal({2, 3})); }},
      {"LeakyReLU", [] { return seq({LeakyReLU(0.1)}, {-1, 3}, random_normal({2, 3})); }},
      {"ELU", [] { return seq({ELU(0.5)}, {-1, 3}, random_normal({2, 3})); }},
      {"PReLU", [] { return seq({Dense(4), PReLU(PReLUOptions().alpha_initializer(initializers::constant(0.2)))}, {-1, 3}, random_normal({2, 3})); }},
      {"Dropout", [] { return seq({std::make_shared<Dense>(3), std::make_shared<Dropout>(0.4)}, {-1, 3}, random_normal({2, 3})); }},
      {"Flatten", [] { return seq({std::make_shared<Flatten>()}, {-1, 2, 3}, random_normal({2, 2, 3})); }},
      {"Reshape", [] { return seq({std::make_shared<Reshape>(std::vector<int64_t>{2, 3})}, {-1, 6}, random_normal({2, 6})); }},
      {"Permute", [] { return seq({std::make_shared<Permute>(std::vector<int>{2, 1})}, {-1, 2, 3}, random_normal({2, 2, 3})); }},
      {"ZeroPadding2D", [] { return seq({std::make_shared<ZeroPadding2D>(1)}, {-1, 3, 3, 2}, random_normal({1, 3, 3, 2})); }},
      {"Conv2D", [] { return seq({std::make_shared<Conv2D>(3, 3, "relu"), std::make_shared<Flatten>(), std::make_shared<Dense>(2)}, {-1, 6, 6, 2}, random_normal({2, 6, 6, 2})); }},
      {"DepthwiseConv2D", [] { return seq({std::make_shared<DepthwiseConv2D>(3)}, {-1, 5, 5, 2}, random_normal({2, 5, 5, 2})); }},
      {"MaxPooling2D", [] { return seq({std::make_shared<MaxPooling2D>()}, {-1, 4, 4, 2}, random_normal({1, 4, 4, 2})); }},
      {"AveragePooling2D", [] { return seq({std::make_shared<AveragePooling2D>()}, {-1, 4, 4, 2}, random_normal({1, 4, 4, 2})); }},
      {"GlobalAveragePooling2D", [] { return seq({std::make_shared<GlobalAveragePooling2D>()}, {-1, 4, 4, 2}, random_normal({1, 4, 4, 2})); }},
      {"GlobalMaxPooling2D", [] { return seq({std::make_shared<GlobalMaxPooling2D>(true)}, {-1, 4, 4, 2}, random_normal({1, 4, 4, 2})); }},
      {"BatchNormalization", [] { return seq({std::make_shared<Dense>(4), std::make_shared<BatchNormalization>()}, {-1, 3}, random_normal({5, 3})); }},
      {"SyncBatchNormalization", [] { return seq({std::make_shared<Dense>(4), std::make_shared<SyncBatchNormalization>()}, {-1, 3}, random_normal({5, 3})); }},
      {"LayerNormalization", [] { return seq({std::make_shared<Dense>(4), std::make_shared<LayerNormalization>()}, {-1, 3}, random_normal({5, 3})); }},
      {"Add", [] { return functional([](const KerasTensor& x) { return (*std::make_shared<Add>())(std::vector<KerasTensor>{call<Dense>(x, 2), call<Dense>(x, 2)}); }, {3}, random_normal({2, 3})); }},
      {"Subtract", [] { return functional([](const KerasTensor& x) { return (*std::make_shared<Subtract>())(std::vector<KerasTensor>{call<Dense>(x, 2), x}); }, {2}, random_normal({2, 2})); }},
      {"Multiply", [] { return functional([](const KerasTensor& x) { return (*std::make_shared<Multiply>())(std::vector<KerasTensor>{x, call<Dense>(x, 3)}); }, {3}, random_normal({2, 3})); }},
      {"Concatenate", [] {
         // Two inputs: input_layers is a list in the file.
         auto a = Input({2}), b = Input({3});
         auto out = (*std::make_shared<Concatenate>())(std::vector<KerasTensor>{a, call<Dense>(b, 2)});
         return Built{std::make_shared<Model>(std::vector<KerasTensor>{a, b}, std::vector<KerasTensor>{out}),
                      {random_normal({2, 2}), random_normal({2, 3})}};
       }},
      {"Hashing", [] { return functional([](const KerasTensor& x) { return call<Hashing>(x, 7); }, {3}, ints({1, 2, 3, 40, 50, 60}, {2, 3}), int64); }},
      {"IntegerLookup", [] { return functional([](const KerasTensor& x) { return call<IntegerLookup>(x, IntegerLookupOptions().vocabulary({12, 36, 1138})); }, {3}, ints({12, 5, 1138, 36, 36, 0}, {2, 3}), int64); }},
      {"Normalization", [] {
         auto norm = std::make_shared<Normalization>();
         norm->adapt(random_normal({20, 3}, 2.0, 3.0));
         return seq({norm, std::make_shared<Dense>(2)}, {-1, 3}, random_normal({5, 3}));
       }},
      {"RandomCrop", [] { return seq({std::make_shared<RandomCrop>(2, 2)}, {-1, 4, 4, 1}, random_normal({1, 4, 4, 1})); }},
      {"RandomFlip", [] { return seq({std::make_shared<RandomFlip>("horizontal")}, {-1, 4, 4, 1}, random_normal({1, 4, 4, 1})); }},
      {"RandomTranslation", [] { return seq({std::make_shared<RandomTranslation>(0.1, 0.2)}, {-1, 4, 4, 1}, random_normal({1, 4, 4, 1})); }},
      {"Rescaling", [] { return seq({std::make_shared<Rescaling>(1.0 / 255, 0.5)}, {-1, 3}, random_normal({2, 3})); }},
      // Models used as layers.
      {"Sequential", [] {
         auto inner = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
             std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(3)});
         return functional([&](const KerasTensor& x) { return call<Dense>((*inner)(x), 2); }, {3}, random_normal({2, 3}));
       }},
      {"Functional", [] {
         auto in = Input({3});
         auto inner = std::make_shared<Model>(in, call<Dense>(call<Dense>(in, 4), 3));
         auto x = Input({3});
         auto h = (*inner)(x);
         return Built{std::make_shared<Model>(x, call<Dense>(h, 2)), {random_normal({2, 3})}};
       }},
  };
}

TEST(Keras3RoundTrip, EveryRegisteredLayerClass) {
  const auto dir = h5::temp_dir("k3layers");
  const auto cases = layer_cases();
  for (const std::string& cls : registered_layers()) {
    if (cls == "StringLookup") continue;  // strings: see LayerConfigsThroughKeras3Form
    EXPECT_TRUE(cases.count(cls)) << "no .keras round-trip case for registered layer " << cls;
  }
  for (const auto& [cls, make] : cases) {
    SCOPED_TRACE(cls);
    set_random_seed(3);
    Built b = make();
    if (cls != "Normalization") randomize(*b.model);  // keep adapt()'s statistics meaningful
    b.model->compile("adam", "mse");
    const std::string path = (dir / (cls + ".keras")).string();
    b.model->save(path);
    std::shared_ptr<Model> loaded = load_model(path);
    ASSERT_TRUE(loaded->compiled());
    expect_same_weights(*b.model, *loaded);
    const auto expected = b.model->call_outputs(b.inputs);
    const auto got = loaded->call_outputs(b.inputs);
    ASSERT_EQ(expected.size(), got.size());
    for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], expected[i], "output");
    if (cls == "SyncBatchNormalization") {
      // Keras 3 has no such class: BatchNormalization(synchronized=True).
      const auto bn = loaded->layers()[1];
      EXPECT_EQ(bn->class_name(), "BatchNormalization");
      EXPECT_TRUE(bn->get_config().at("synchronized").as_bool());
    } else {
      EXPECT_EQ(loaded->to_json(), b.model->to_json());
    }
  }
}

// Every registered layer's config through Keras 3's form (keras3_layer_entry, what config.json
// holds) and back through the registry: the same config.
TEST(Keras3RoundTrip, LayerConfigsThroughKeras3Form) {
  std::vector<std::shared_ptr<Layer>> layers{
      std::make_shared<StringLookup>(StringLookupOptions().vocabulary({"a", "b"}).mask_token("")),
      std::make_shared<IntegerLookup>(IntegerLookupOptions().vocabulary({3, 4}).oov_token(-2)),
      std::make_shared<Dense>(3, DenseOptions().use_bias(false).kernel_regularizer(regularizers::l2(0.01))),
      std::make_shared<Conv2D>(4, 3, Conv2DOptions().strides(2).padding("same")),
      std::make_shared<Hashing>(5, HashingOptions().salt(1, 2)),
  };
  for (const auto& l : layers) {
    SCOPED_TRACE(l->class_name());
    const Json keras2 = layer_to_json(*l);
    const Json keras3 = saving::keras3_layer_entry(keras2);
    EXPECT_EQ(keras3.at("module").as_string(), "keras.layers");
    EXPECT_TRUE(keras3.at("registered_name").is_null());
    EXPECT_EQ(keras3.at("config").at("dtype").at("class_name").as_string(), "DTypePolicy");
    EXPECT_EQ(layer_from_config(keras3)->get_config(), l->get_config());
  }
}

std::vector<OptimizerCase> optimizer_cases() {
  using namespace optimizers;
  return {
      {"SGD", [] { return std::make_shared<SGD>(0.05, SGDOptions().momentum(0.9)); }},
      {"SGD", [] { return std::make_shared<SGD>(0.05, SGDOptions().momentum(0.5).nesterov(true)); }},
      {"Adam", [] { return std::make_shared<Adam>(0.01); }},
      {"Adam", [] { return std::make_shared<Adam>(0.01, AdamOptions().amsgrad(true)); }},
      {"Adam", [] { return std::make_shared<Adam>(std::make_shared<ExponentialDecay>(0.02, 3, 0.5)); }},
      {"AdamW", [] { return std::make_shared<AdamW>(0.01, AdamWOptions().weight_decay(0.05)); }},
      {"RMSprop", [] { return std::make_shared<RMSprop>(0.01, RMSpropOptions().momentum(0.5).centered(true)); }},
      {"Adagrad", [] { return std::make_shared<Adagrad>(0.1, AdagradOptions()); }},
  };
}

// As LoadModel.TrainingContinuesExactlyForEveryOptimizer does for .h5.
TEST(Keras3RoundTrip, TrainingContinuesExactlyForEveryOptimizer) {
  const auto dir = h5::temp_dir("k3continue");
  int n = 0;
  for (const OptimizerCase& c : optimizer_cases()) {
    const std::string tag = c.name + std::to_string(n++);
    SCOPED_TRACE(tag);
    testing::round_trip::expect_training_continues_exactly(c, (dir / (tag + ".keras")).string());
  }
}

TEST(Keras3RoundTrip, LossScaleOptimizerStateRoundTrips) {
  const auto dir = h5::temp_dir("k3lso");
  auto model = mlp();
  model->compile(std::make_shared<optimizers::LossScaleOptimizer>(
                     std::make_shared<optimizers::SGD>(0.05, optimizers::SGDOptions().momentum(0.9)),
                     optimizers::LossScaleOptimizerOptions().initial_scale(64).dynamic_growth_steps(3)),
                 "mse");
  model->fit(random_normal({32, 3}), random_normal({32, 2}), FitOptions().batch_size(8).verbose(0));
  const std::string path = (dir / "lso.keras").string();
  model->save(path);

  auto& lso = dynamic_cast<optimizers::LossScaleOptimizer&>(*model->optimizer());
  std::shared_ptr<Model> loaded = load_model(path);
  auto& back = dynamic_cast<optimizers::LossScaleOptimizer&>(*loaded->optimizer());
  EXPECT_EQ(back.loss_scale(), lso.loss_scale());
  expect_same(back.step_counter()->read_value(), lso.step_counter()->read_value(), "step_counter");
  EXPECT_EQ(back.iteration_count(), lso.iteration_count());
  for (size_t i = 0; i < model->trainable_variables().size(); ++i) {
    expect_same(back.get_slot(loaded->trainable_variables()[i], "momentum")->read_value(),
                lso.get_slot(model->trainable_variables()[i], "momentum")->read_value(), "momentum");
  }
  // Keras 3's layout: the wrapper's own (unused) iteration and learning rate, step_counter,
  // dynamic_scale, then the inner optimizer's variables; those again under inner_optimizer/.
  k3::Hdf5Image h(dir.string(), k3::zip_entry(path, "model.weights.h5"));
  EXPECT_EQ(h5::dataset(h.id(), "optimizer/vars/2").values, std::vector<double>{double(lso.step_counter()->read_value().item<int64_t>())});
  EXPECT_EQ(h5::dataset(h.id(), "optimizer/vars/3").values, std::vector<double>{lso.loss_scale()});
  EXPECT_EQ(h5::dataset(h.id(), "optimizer/vars/4").values, std::vector<double>{4.0});  // inner steps
  EXPECT_TRUE(h5::dataset(h.id(), "optimizer/vars/9").found);
  EXPECT_FALSE(h5::dataset(h.id(), "optimizer/vars/10").found);
  EXPECT_TRUE(h5::dataset(h.id(), "optimizer/inner_optimizer/vars/5").found);
  EXPECT_FALSE(h5::dataset(h.id(), "optimizer/inner_optimizer/vars/6").found);
}

// A mixed_float16 model: the layers keep their DTypePolicy objects and the automatic
// LossScaleOptimizer keeps its scale and counter (as MixedTrainingSaving checks for .h5).
TEST(Keras3RoundTrip, MixedPrecisionModelKeepsPoliciesAndLossScale) {
  const auto dir = h5::temp_dir("k3mixed");
  std::shared_ptr<Sequential> model;
  {
    mixed_precision::PolicyScope policy("mixed_float16");
    model = mlp();
    model->compile("adam", "mse");
  }
  const Tensor x = random_normal({16, 3}), y = random_normal({16, 2});
  for (int i = 0; i < 3; ++i) model->train_on_batch(x, y);
  auto lso = std::dynamic_pointer_cast<optimizers::LossScaleOptimizer>(model->optimizer());
  ASSERT_NE(lso, nullptr);
  lso->dynamic_scale()->assign(Tensor::scalar<float>(512.f));
  lso->step_counter()->assign(Tensor::scalar<int64_t>(5));
  const std::string path = (dir / "mixed.keras").string();
  model->save(path);

  const Json config = Json::parse(k3::zip_entry(path, "config.json"));
  EXPECT_EQ(config.at("config").at("layers").at(1).at("config").at("dtype").at("config").at("name").as_string(),
            "mixed_float16");
  std::shared_ptr<Model> loaded = load_model(path);
  for (const auto& layer : loaded->layers()) EXPECT_EQ(layer->dtype_policy().name(), "mixed_float16");
  auto back = std::dynamic_pointer_cast<optimizers::LossScaleOptimizer>(loaded->optimizer());
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->loss_scale(), 512.0);
  EXPECT_EQ(back->step_counter()->read_value().item<int64_t>(), 5);
  EXPECT_EQ(back->iteration_count(), 3);
  model->train_on_batch(x, y);
  loaded->train_on_batch(x, y);
  expect_same_weights(*model, *loaded);
}

// The archive as saving_lib writes it.
TEST(Keras3RoundTrip, ArchiveLayoutIsKeras3s) {
  const auto dir = h5::temp_dir("k3layout");
  auto model = mlp();
  model->compile(std::make_shared<optimizers::RMSprop>(0.01, optimizers::RMSpropOptions().momentum(0.5).centered(true)),
                 "mse", {"mae"});
  model->fit(random_normal({32, 3}), random_normal({32, 2}), FitOptions().batch_size(16).verbose(0));
  const std::string path = (dir / "m.keras").string();
  model->save(path);
  model->save(path);  // over the previous file: atomically replaced, nothing left beside it
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().filename());
  EXPECT_EQ(files, std::vector<std::string>{"m.keras"});

  const auto entries = k3::read_zip(path);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "metadata.json");
  EXPECT_EQ(entries[1].name, "config.json");
  EXPECT_EQ(entries[2].name, "model.weights.h5");
  for (const auto& e : entries) EXPECT_EQ(e.method, ZIP_CM_STORE) << e.name;  // as zipfile's default

  const Json metadata = Json::parse(entries[0].bytes);
  EXPECT_EQ(metadata.keys(), (std::vector<std::string>{"keras_version", "date_saved"}));
  EXPECT_EQ(metadata.at("keras_version").as_string().substr(0, 2), "3.");
  EXPECT_TRUE(std::regex_match(metadata.at("date_saved").as_string(),
                               std::regex(R"(\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d)")));
  EXPECT_NE(entries[0].bytes.find("\"keras_version\": \""), std::string::npos);  // json.dumps

  const Json config = Json::parse(entries[1].bytes);
  EXPECT_EQ(config.keys(), (std::vector<std::string>{"module", "class_name", "config", "registered_name",
                                                     "build_config", "compile_config"}));
  EXPECT_EQ(config.at("module").as_string(), "keras");
  EXPECT_EQ(config.at("build_config").at("input_shape").dump(), "[null,3]");
  const Json layers = config.at("config").at("layers");
  EXPECT_EQ(layers.at(size_t(0)).at("config").at("batch_shape").dump(), "[null,3]");
  EXPECT_EQ(layers.at(1).at("config").at("dtype").at("class_name").as_string(), "DTypePolicy");
  EXPECT_EQ(layers.at(1).at("build_config").at("input_shape").dump(), "[null,3]");
  EXPECT_EQ(layers.at(2).at("build_config").at("input_shape").dump(), "[null,8]");
  const Json compile = config.at("compile_config");
  EXPECT_EQ(compile.keys(), (std::vector<std::string>{"optimizer", "loss", "loss_weights", "metrics",
                                                      "weighted_metrics", "run_eagerly",
                                                      "steps_per_execution", "jit_compile"}));
  const Json opt = compile.at("optimizer").at("config");
  EXPECT_FALSE(opt.contains("jit_compile"));  // Keras 3's optimizers reject Keras 2's keys
  EXPECT_FALSE(opt.contains("is_legacy_optimizer"));
  EXPECT_TRUE(opt.contains("gradient_accumulation_steps"));
  EXPECT_EQ(compile.at("metrics").dump(), "[\"mae\"]");

  k3::Hdf5Image h(dir.string(), entries[2].bytes);
  EXPECT_TRUE(h5::is_group(h.id(), "vars"));  // the model's own (empty) variables
  h5::Id root_vars(H5Gopen2(h.id(), "vars", H5P_DEFAULT));
  EXPECT_EQ(h5::read_strings(root_vars, "name"), std::vector<std::string>{model->name()});
  const auto layers_of = model->layers();
  h5::Id d1(H5Gopen2(h.id(), "layers/dense_1/vars", H5P_DEFAULT));
  EXPECT_EQ(h5::read_strings(d1, "name"), std::vector<std::string>{layers_of[1]->name()});
  // optimizer/vars: iteration (int64), learning rate (float32), then RMSprop's slots one kind at
  // a time: velocity ("rms") for each variable, then momentum, then average_gradient ("mg").
  const auto& rms = *model->optimizer();
  const auto iteration = h5::dataset(h.id(), "optimizer/vars/0");
  EXPECT_TRUE(iteration.i64le && iteration.scalar);
  EXPECT_EQ(iteration.values, std::vector<double>{2.0});
  const auto lr = h5::dataset(h.id(), "optimizer/vars/1");
  EXPECT_TRUE(lr.f32le && lr.scalar);
  EXPECT_EQ(lr.values, std::vector<double>{double(0.01f)});
  const auto trainable = model->trainable_variables();
  int index = 2;
  for (const char* slot : {"rms", "momentum", "mg"}) {
    for (const auto& v : trainable) {
      const auto saved = h5::dataset(h.id(), "optimizer/vars/" + std::to_string(index++));
      EXPECT_EQ(saved.values, rms.get_slot(v, slot)->read_value().to_vector<double>()) << slot;
    }
  }
  EXPECT_FALSE(h5::dataset(h.id(), "optimizer/vars/" + std::to_string(index)).found);
}

// Keras 3 orders a functional model's layers by depth, not by construction: the deeper branch
// comes first in config.json and takes the first "dense" key of the weights file.
TEST(Keras3RoundTrip, FunctionalLayersInKerasOrder) {
  const auto dir = h5::temp_dir("k3order");
  auto x = Input({3}, float32, "x");
  auto a = (*std::make_shared<Dense>(2, DenseOptions().name("head_a")))(x);
  auto c = (*std::make_shared<Dense>(5, DenseOptions().name("head_c")))(x);
  auto b = (*std::make_shared<Dense>(2, DenseOptions().name("head_b")))(c);
  auto sum = (*std::make_shared<Add>("sum"))(std::vector<KerasTensor>{a, b});
  Model model(x, sum, "branches");
  model.compile("adam", "mse");
  model.fit(random_normal({8, 3}), random_normal({8, 2}), FitOptions().verbose(0));
  const std::string path = (dir / "branches.keras").string();
  model.save(path);

  const Json config = Json::parse(k3::zip_entry(path, "config.json"));
  std::vector<std::string> names;
  const Json layers = config.at("config").at("layers");
  for (size_t i = 0; i < layers.size(); ++i) names.push_back(layers.at(i).at("name").as_string());
  EXPECT_EQ(names, (std::vector<std::string>{"x", "head_c", "head_a", "head_b", "sum"}));
  EXPECT_EQ(config.at("config").at("input_layers").dump(), "[\"x\",0,0]");
  EXPECT_EQ(layers.at(4).at("inbound_nodes").at(size_t(0)).at("args").at(size_t(0)).size(), 2u);

  k3::Hdf5Image h(dir.string(), k3::zip_entry(path, "model.weights.h5"));
  h5::Id dense(H5Gopen2(h.id(), "layers/dense/vars", H5P_DEFAULT));
  EXPECT_EQ(h5::read_strings(dense, "name"), std::vector<std::string>{"head_c"});
  EXPECT_EQ(h5::dataset(h.id(), "layers/dense/vars/0").dims, (std::vector<hsize_t>{3, 5}));
  EXPECT_TRUE(h5::is_group(h.id(), "layers/input_layer/vars"));
  EXPECT_TRUE(h5::is_group(h.id(), "layers/add/vars"));

  std::shared_ptr<Model> loaded = load_model(path);
  const Tensor in = random_normal({4, 3});
  expect_same(loaded->predict(in), model.predict(in), "predictions");
  // The .weights.h5 file uses the same keys.
  const std::string weights = (dir / "w.weights.h5").string();
  model.save_weights(weights);
  h5::Id w(h5::open_file(weights));
  EXPECT_EQ(h5::dataset(w, "layers/dense_1/vars/0").dims, (std::vector<hsize_t>{3, 2}));
  loaded->load_weights(weights);
}

// Keras 3's save_model(zipped=False) writes the same files into a directory.
TEST(Keras3RoundTrip, UnzippedModelDirectoryLoads) {
  const auto dir = h5::temp_dir("k3dir");
  auto model = mlp();
  model->compile("sgd", "mse");
  const std::string path = (dir / "m.keras").string();
  model->save(path);
  const auto folder = dir / "unzipped";
  std::filesystem::create_directories(folder);
  for (const auto& e : k3::read_zip(path)) k3::write_bytes((folder / e.name).string(), e.bytes);
  std::shared_ptr<Model> loaded = load_model(folder.string());
  expect_same_weights(*model, *loaded);
  EXPECT_EQ(loaded->optimizer()->class_name(), "SGD");
}

// The format is read from the file, not its name: a .keras archive renamed .h5 loads, and so
// does an HDF5 model renamed .keras.
TEST(Keras3RoundTrip, FormatIsSniffedNotTakenFromTheName) {
  const auto dir = h5::temp_dir("k3sniff");
  auto model = mlp();
  const std::string archive = (dir / "a.keras").string();
  const std::string hdf5 = (dir / "b.h5").string();
  model->save(archive);
  model->save(hdf5);
  std::filesystem::rename(archive, dir / "a.h5");
  std::filesystem::rename(hdf5, dir / "b.keras");
  ::testing::internal::CaptureStderr();  // saved uncompiled: the .h5 path warns
  expect_same_weights(*model, *load_model((dir / "a.h5").string()));
  expect_same_weights(*model, *load_model((dir / "b.keras").string()));
  ::testing::internal::GetCapturedStderr();
}

}  // namespace
}  // namespace strata
