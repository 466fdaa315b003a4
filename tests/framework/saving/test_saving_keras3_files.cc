// .keras archives built here exactly as Keras 3 (3.10) writes them - zip entries metadata.json,
// config.json (serialize_keras_object's form: "module", "registered_name", "build_config",
// DTypePolicy objects, "__keras_tensor__" inbound nodes, "compile_config") and model.weights.h5
// (layers keyed by class and counter, optimizer/vars with the step count and the learning rate)
// - read back by load_model and load_weights: architecture, weights, compile arguments and the
// optimizer's state, from which training continues as it would have in Keras. Also Keras 3's
// legacy .h5 (optimizer_weights named by Keras 3 variable paths) and its configs alone.
#include <gtest/gtest.h>

#include <map>

#include <strata/strata.h>

#include "framework/saving/keras3_compile_config.h"
#include "layers/load_model.h"
#include "layers/model_serialization.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/keras_archive_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;
namespace k3 = testing::keras3;
using testing::expect_error;

std::vector<float> seq(size_t n, float start, float step = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
  return v;
}

std::vector<float> values_of(const VariablePtr& v) { return v->read_value().to_vector<float>(); }

// One Keras variable as it sits in the file: its values and shape.
struct Var {
  std::vector<float> values;
  std::vector<hsize_t> dims;
};
Var var(std::vector<hsize_t> dims, float start) {
  size_t n = 1;
  for (hsize_t d : dims) n *= size_t(d);
  return {seq(n, start), dims};
}

void write_vars(hid_t f, const std::string& path, const std::string& name,
                const std::vector<Var>& vars) {
  k3::make_vars(f, path, name);
  const std::string prefix = path.empty() ? "vars/" : path + "/vars/";
  for (size_t i = 0; i < vars.size(); ++i) {
    h5::write_floats(f, prefix + std::to_string(i), vars[i].values, vars[i].dims);
  }
}

// Keras 3's optimizer/vars of an Adam: iteration, learning_rate, then (momentum, velocity) per
// trainable variable, interleaved (add_optimizer_variables).
struct AdamState {
  int64_t iteration;
  float learning_rate;
  std::vector<Var> momentum, velocity;  // per trainable variable
};

AdamState adam_state(const std::vector<Var>& trainable, int64_t iteration, float lr) {
  AdamState s{iteration, lr, {}, {}};
  float start = 0.5f;
  for (const Var& v : trainable) {
    s.momentum.push_back(var(v.dims, start));
    s.velocity.push_back(var(v.dims, start + 0.25f));
    start += 0.03f;
  }
  return s;
}

void write_adam(hid_t f, const std::string& name, const AdamState& s) {
  k3::make_vars(f, "optimizer", name);
  k3::write_int64_scalar(f, "optimizer/vars/0", s.iteration);
  h5::write_floats(f, "optimizer/vars/1", {s.learning_rate}, {});
  for (size_t i = 0; i < s.momentum.size(); ++i) {
    h5::write_floats(f, "optimizer/vars/" + std::to_string(2 + 2 * i), s.momentum[i].values,
                     s.momentum[i].dims);
    h5::write_floats(f, "optimizer/vars/" + std::to_string(3 + 2 * i), s.velocity[i].values,
                     s.velocity[i].dims);
  }
}

const char* kMetadata = R"({"keras_version": "3.10.0", "date_saved": "2025-06-02@10:14:07"})";

// What Keras 3.10 writes for
//   model = keras.Sequential([keras.Input((8,)), layers.Dense(4, activation="relu"),
//                             layers.Dense(3), layers.Dense(1, activation="sigmoid")])
//   model.compile(optimizer=keras.optimizers.Adam(5e-4), loss="binary_crossentropy",
//                 metrics=["accuracy"])
const char* kSequentialConfig = R"({"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "layers": [{"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_layer"}, "registered_name": null}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 4, "activation": "relu", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 8]}}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 3, "activation": "linear", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 4]}}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 1, "activation": "sigmoid", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 3]}}], "build_input_shape": [null, 8]}, "registered_name": null, "build_config": {"input_shape": [null, 8]}, "compile_config": {"optimizer": {"module": "keras.optimizers", "class_name": "Adam", "config": {"name": "adam", "learning_rate": 0.0005000000237487257, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": false}, "registered_name": null}, "loss": "binary_crossentropy", "loss_weights": null, "metrics": ["accuracy"], "weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 1, "jit_compile": false}})";

struct SequentialFile {
  std::string path;
  std::vector<Var> weights;  // kernel, bias of dense, dense_1, dense_2
  AdamState adam;
};

SequentialFile keras3_sequential_file(const std::string& test) {
  const auto dir = h5::temp_dir(test).string();
  SequentialFile file;
  file.path = dir + "/model.keras";
  file.weights = {var({8, 4}, -0.3f), var({4}, 0.1f), var({4, 3}, -0.2f),
                  var({3}, 0.2f),     var({3, 1}, 0.3f), var({1}, -0.1f)};
  file.adam = adam_state(file.weights, /*iteration=*/10, /*lr=*/5e-4f);
  const std::string weights = k3::hdf5_image(dir, [&](hid_t f) {
    k3::make_vars(f, "", "sequential");
    const char* keys[] = {"dense", "dense_1", "dense_2"};
    const char* names[] = {"dense", "dense_1", "dense_2"};
    for (size_t l = 0; l < 3; ++l) {
      write_vars(f, std::string("layers/") + keys[l], names[l],
                 {file.weights[2 * l], file.weights[2 * l + 1]});
    }
    write_adam(f, "adam", file.adam);
  });
  k3::write_zip(file.path, {{"metadata.json", kMetadata},
                            {"config.json", kSequentialConfig},
                            {"model.weights.h5", weights}});
  return file;
}

TEST(Keras3Files, SequentialWithAdamStateLoads) {
  const SequentialFile file = keras3_sequential_file("k3seq");
  std::shared_ptr<Model> model = load_model(file.path);

  EXPECT_EQ(model->class_name(), "Sequential");
  EXPECT_EQ(model->name(), "sequential");
  const auto layers = model->layers();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0]->name(), "dense");
  EXPECT_EQ(layers[2]->get_config().at("activation").as_string(), "sigmoid");
  const auto weights = model->weights();
  ASSERT_EQ(weights.size(), file.weights.size());
  for (size_t i = 0; i < weights.size(); ++i) EXPECT_EQ(values_of(weights[i]), file.weights[i].values);

  // compile_config: Adam(5e-4), binary cross-entropy; the optimizer's state continues Keras'.
  ASSERT_TRUE(model->compiled());
  const auto& opt = model->optimizer();
  EXPECT_EQ(opt->class_name(), "Adam");
  EXPECT_EQ(opt->iteration_count(), 10);
  EXPECT_EQ(float(opt->learning_rate()), 5e-4f);
  const auto trainable = model->trainable_variables();
  for (size_t i = 0; i < trainable.size(); ++i) {
    EXPECT_EQ(values_of(opt->get_slot(trainable[i], "m")), file.adam.momentum[i].values);
    EXPECT_EQ(values_of(opt->get_slot(trainable[i], "v")), file.adam.velocity[i].values);
  }
}

// The next step from the loaded state is the step Keras would take: the same as a model given
// the same weights, slots, step count and learning rate by hand.
TEST(Keras3Files, TrainingContinuesFromKerasState) {
  const SequentialFile file = keras3_sequential_file("k3cont");
  std::shared_ptr<Model> loaded = load_model(file.path);

  auto by_hand = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(3),
      std::make_shared<Dense>(1, "sigmoid")});
  by_hand->build({-1, 8});
  std::vector<Tensor> values;
  for (const Var& w : file.weights) {
    values.push_back(Tensor::from_vector(w.values, Shape(std::vector<int64_t>(w.dims.begin(), w.dims.end()))));
  }
  by_hand->set_weights(values);
  by_hand->compile(std::make_shared<optimizers::Adam>(double(5e-4f)), "binary_crossentropy");
  const auto& opt = by_hand->optimizer();
  const auto trainable = by_hand->trainable_variables();
  opt->build(trainable);
  opt->iterations()->assign(full(Shape{}, 10, int64));
  for (size_t i = 0; i < trainable.size(); ++i) {
    opt->get_slot(trainable[i], "m")->assign(Tensor::from_vector(file.adam.momentum[i].values, trainable[i]->shape()));
    opt->get_slot(trainable[i], "v")->assign(Tensor::from_vector(file.adam.velocity[i].values, trainable[i]->shape()));
  }

  set_random_seed(3);
  const Tensor x = random_normal({16, 8});
  const Tensor y = Tensor::from_vector(seq(16, 0.0f, 1.0f / 16), {16, 1});
  for (int step = 0; step < 3; ++step) {
    loaded->train_on_batch(x, y);
    by_hand->train_on_batch(x, y);
  }
  EXPECT_EQ(loaded->optimizer()->iteration_count(), 13);
  for (size_t i = 0; i < trainable.size(); ++i) {
    EXPECT_EQ(values_of(loaded->weights()[i]), values_of(by_hand->weights()[i])) << i;
  }
}

TEST(Keras3Files, LoadWeightsFromAKerasArchive) {
  const SequentialFile file = keras3_sequential_file("k3lw");
  Sequential model({std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(3),
                    std::make_shared<Dense>(1, "sigmoid")});
  model.build({-1, 8});
  model.load_weights(file.path);
  for (size_t i = 0; i < file.weights.size(); ++i) {
    EXPECT_EQ(values_of(model.weights()[i]), file.weights[i].values);
  }
  expect_error<ValueError>([&] { model.load_weights(file.path, /*by_name=*/true); },
                           {file.path, "by_name", ".keras"});
  // compile=false: the architecture and weights only.
  std::shared_ptr<Model> uncompiled = load_model(file.path, /*compile=*/false);
  EXPECT_FALSE(uncompiled->compiled());
  EXPECT_EQ(values_of(uncompiled->weights()[0]), file.weights[0].values);
}

// A functional model as Keras 3.10 writes it:
//   x = keras.Input((4, 4, 2));  c = layers.Conv2D(3, 3, padding="same")(x)
//   b = layers.BatchNormalization()(c);  p = layers.GlobalAveragePooling2D()(layers.Add()([c, b]))
//   a = layers.Dense(2, name="head_a")(p);  h = layers.Dense(5, name="head_c")(p)
//   out = layers.Add(name="sum")([a, layers.Dense(2, name="head_b")(h)])
// Keras orders its operations by depth: head_c (deeper) comes before head_a, so the weights
// file keys head_c as "dense", head_a as "dense_1", head_b as "dense_2".
std::string dense_json(const std::string& name, int units, const std::string& input, int in_units) {
  return R"({"module": "keras.layers", "class_name": "Dense", "config": {"name": ")" + name +
         R"(", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": )" +
         std::to_string(units) +
         R"(, "activation": "linear", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, )" +
         std::to_string(in_units) + R"(]}, "name": ")" + name +
         R"(", "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, )" +
         std::to_string(in_units) + R"(], "dtype": "float32", "keras_history": [")" + input +
         R"(", 0, 0]}}], "kwargs": {}}]})";
}

std::string functional_config() {
  const std::string policy =
      R"({"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null})";
  auto tensor = [](const std::string& layer, const std::string& shape) {
    return R"({"class_name": "__keras_tensor__", "config": {"shape": )" + shape +
           R"(, "dtype": "float32", "keras_history": [")" + layer + R"(", 0, 0]}})";
  };
  return R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "functional", "trainable": true, "layers": [)"
         R"({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 2], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_layer"}, "registered_name": null, "name": "input_layer", "inbound_nodes": []}, )"
         R"({"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, "dtype": )" + policy +
         R"(, "filters": 3, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "linear", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 4, 4, 2]}, "name": "conv2d", "inbound_nodes": [{"args": [)" +
         tensor("input_layer", "[null, 4, 4, 2]") + R"(], "kwargs": {}}]}, )"
         R"({"module": "keras.layers", "class_name": "BatchNormalization", "config": {"name": "batch_normalization", "trainable": true, "dtype": )" + policy +
         R"(, "axis": -1, "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true, "beta_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "gamma_initializer": {"module": "keras.initializers", "class_name": "Ones", "config": {}, "registered_name": null}, "moving_mean_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "moving_variance_initializer": {"module": "keras.initializers", "class_name": "Ones", "config": {}, "registered_name": null}, "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null, "synchronized": false}, "registered_name": null, "build_config": {"input_shape": [null, 4, 4, 3]}, "name": "batch_normalization", "inbound_nodes": [{"args": [)" +
         tensor("conv2d", "[null, 4, 4, 3]") + R"(], "kwargs": {"training": false}}]}, )"
         R"({"module": "keras.layers", "class_name": "Add", "config": {"name": "add", "trainable": true, "dtype": )" + policy +
         R"(}, "registered_name": null, "build_config": {"input_shape": [[null, 4, 4, 3], [null, 4, 4, 3]]}, "name": "add", "inbound_nodes": [{"args": [[)" +
         tensor("conv2d", "[null, 4, 4, 3]") + ", " + tensor("batch_normalization", "[null, 4, 4, 3]") +
         R"(]], "kwargs": {}}]}, )"
         R"({"module": "keras.layers", "class_name": "GlobalAveragePooling2D", "config": {"name": "global_average_pooling2d", "trainable": true, "dtype": )" + policy +
         R"(, "data_format": "channels_last", "keepdims": false}, "registered_name": null, "name": "global_average_pooling2d", "inbound_nodes": [{"args": [)" +
         tensor("add", "[null, 4, 4, 3]") + R"(], "kwargs": {}}]}, )" +
         dense_json("head_c", 5, "global_average_pooling2d", 3) + ", " +
         dense_json("head_a", 2, "global_average_pooling2d", 3) + ", " +
         dense_json("head_b", 2, "head_c", 5) + ", " +
         R"({"module": "keras.layers", "class_name": "Add", "config": {"name": "sum", "trainable": true, "dtype": )" + policy +
         R"(}, "registered_name": null, "build_config": {"input_shape": [[null, 2], [null, 2]]}, "name": "sum", "inbound_nodes": [{"args": [[)" +
         tensor("head_a", "[null, 2]") + ", " + tensor("head_b", "[null, 2]") +
         R"(]], "kwargs": {}}]}], "input_layers": ["input_layer", 0, 0], "output_layers": ["sum", 0, 0]}, "registered_name": "Functional", "build_config": {"input_shape": null}, "compile_config": {"optimizer": {"module": "keras.optimizers", "class_name": "Adam", "config": {"name": "adam", "learning_rate": 0.0010000000474974513, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": false}, "registered_name": null}, "loss": {"module": "keras.losses", "class_name": "MeanSquaredError", "config": {"name": "mean_squared_error", "reduction": "sum_over_batch_size"}, "registered_name": null}, "loss_weights": null, "metrics": null, "weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 1, "jit_compile": false}})";
}

// Trainable variables in Keras' order: conv2d (kernel, bias), batch_normalization (gamma,
// beta), head_c, head_a, head_b (kernel, bias each).
struct FunctionalFile {
  std::string path;
  std::map<std::string, std::vector<Var>> layer_vars;  // by layer name
  AdamState adam;
};

FunctionalFile keras3_functional_file(const std::string& test) {
  const auto dir = h5::temp_dir(test).string();
  FunctionalFile file;
  file.path = dir + "/functional.keras";
  file.layer_vars = {
      {"conv2d", {var({3, 3, 2, 3}, -0.2f), var({3}, 0.05f)}},
      {"batch_normalization", {var({3}, 1.0f), var({3}, 0.1f), var({3}, 0.2f), var({3}, 1.5f)}},
      {"head_c", {var({3, 5}, -0.1f), var({5}, 0.3f)}},
      {"head_a", {var({3, 2}, 0.4f), var({2}, -0.3f)}},
      {"head_b", {var({5, 2}, -0.5f), var({2}, 0.6f)}},
  };
  std::vector<Var> trainable;
  for (const char* name : {"conv2d", "batch_normalization", "head_c", "head_a", "head_b"}) {
    trainable.push_back(file.layer_vars[name][0]);
    trainable.push_back(file.layer_vars[name][1]);
  }
  file.adam = adam_state(trainable, /*iteration=*/5, /*lr=*/1e-3f);
  const std::string weights = k3::hdf5_image(dir, [&](hid_t f) {
    k3::make_vars(f, "", "functional");
    k3::make_vars(f, "layers/input_layer", "input_layer");
    write_vars(f, "layers/conv2d", "conv2d", file.layer_vars["conv2d"]);
    write_vars(f, "layers/batch_normalization", "batch_normalization",
               file.layer_vars["batch_normalization"]);
    k3::make_vars(f, "layers/add", "add");
    k3::make_vars(f, "layers/global_average_pooling2d", "global_average_pooling2d");
    write_vars(f, "layers/dense", "head_c", file.layer_vars["head_c"]);
    write_vars(f, "layers/dense_1", "head_a", file.layer_vars["head_a"]);
    write_vars(f, "layers/dense_2", "head_b", file.layer_vars["head_b"]);
    k3::make_vars(f, "layers/add_1", "sum");
    write_adam(f, "adam", file.adam);
  });
  k3::write_zip(file.path, {{"metadata.json", kMetadata},
                            {"config.json", functional_config()},
                            {"model.weights.h5", weights}});
  return file;
}

TEST(Keras3Files, FunctionalWithConvBatchNormAndBranchesLoads) {
  const FunctionalFile file = keras3_functional_file("k3func");
  std::shared_ptr<Model> model = load_model(file.path);
  EXPECT_EQ(model->class_name(), "Functional");
  EXPECT_EQ(model->name(), "functional");
  for (const auto& [name, vars] : file.layer_vars) {
    const auto weights = model->get_layer(name)->weights();
    ASSERT_EQ(weights.size(), vars.size()) << name;
    for (size_t i = 0; i < vars.size(); ++i) EXPECT_EQ(values_of(weights[i]), vars[i].values) << name;
  }
  EXPECT_EQ(model->predict(random_normal({2, 4, 4, 2})).shape(), Shape({2, 2}));

  ASSERT_TRUE(model->compiled());
  EXPECT_EQ(model->optimizer()->iteration_count(), 5);
  // Keras' slot order follows its own order of the trainable variables (head_c before head_a).
  const auto& opt = model->optimizer();
  const auto head_c = model->get_layer("head_c")->weights();
  const auto head_a = model->get_layer("head_a")->weights();
  EXPECT_EQ(values_of(opt->get_slot(head_c[0], "m")), file.adam.momentum[4].values);
  EXPECT_EQ(values_of(opt->get_slot(head_a[1], "v")), file.adam.velocity[7].values);
}

TEST(Keras3Files, FunctionalConfigJsonParses) {
  // The config alone (what Keras 3's model.to_json() holds): it used to fail with "json:
  // expected an array, got object" on the {"args", "kwargs"} inbound nodes.
  std::shared_ptr<Model> model = model_from_json(functional_config());
  std::vector<std::string> names;
  for (const auto& l : model->layers()) names.push_back(l->name());
  EXPECT_EQ(names.size(), 8u);
  EXPECT_EQ(model->get_layer("head_b")->get_config().at("units").as_int(), 2);
  EXPECT_EQ(model->get_layer("sum")->class_name(), "Add");
  EXPECT_EQ(model->predict(random_normal({3, 4, 4, 2})).shape(), Shape({3, 2}));
}

// Keras 3 numbers a nested functional model's calls from 1 (its node 0 is its construction).
TEST(Keras3Files, NestedFunctionalModelReferencesNodeOne) {
  const std::string json = R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "outer", "trainable": true, "layers": [
    {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 3], "dtype": "float32", "sparse": false, "ragged": false, "name": "x"}, "registered_name": null, "name": "x", "inbound_nodes": []},
    {"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "inner", "trainable": true, "layers": [
       {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 3], "dtype": "float32", "sparse": false, "ragged": false, "name": "inner_input"}, "registered_name": null, "name": "inner_input", "inbound_nodes": []},
       {"module": "keras.layers", "class_name": "Dense", "config": {"name": "inner_dense", "trainable": true, "dtype": "float32", "units": 4, "activation": "relu"}, "registered_name": null, "build_config": {"input_shape": [null, 3]}, "name": "inner_dense", "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 3], "dtype": "float32", "keras_history": ["inner_input", 0, 0]}}], "kwargs": {}}]}],
     "input_layers": [["inner_input", 0, 0]], "output_layers": [["inner_dense", 0, 0]]}, "registered_name": "Functional", "build_config": {"input_shape": null}, "compile_config": {}, "name": "inner",
     "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 3], "dtype": "float32", "keras_history": ["x", 0, 0]}}], "kwargs": {}}]},
    {"module": "keras.layers", "class_name": "Dense", "config": {"name": "out", "trainable": true, "dtype": "float32", "units": 1}, "registered_name": null, "name": "out", "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 4], "dtype": "float32", "keras_history": ["inner", 1, 0]}}], "kwargs": {}}]}],
  "input_layers": [["x", 0, 0]], "output_layers": [["out", 0, 0]]}, "registered_name": "Functional", "build_config": {"input_shape": null}, "compile_config": {}})";
  std::shared_ptr<Model> model = model_from_json(json);
  ASSERT_EQ(model->layers().size(), 2u);
  EXPECT_EQ(model->layers()[0]->class_name(), "Functional");
  EXPECT_EQ(model->predict(random_normal({2, 3})).shape(), Shape({2, 1}));
}

// A layer shared at two depths, A(B(A(x))), listed before the layer its second call reads:
// calls are replayed as their inputs appear (Keras' functional_from_config), not in list order.
TEST(Keras3Files, SharedLayerListedOutOfOrderIsReplayedByDependency) {
  auto node = [](const std::string& layer, int index) {
    return R"({"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 3], "dtype": "float32", "keras_history": [")" +
           layer + R"(", )" + std::to_string(index) + R"(, 0]}}], "kwargs": {}})";
  };
  const std::string json =
      R"({"class_name": "Functional", "config": {"name": "shared", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 3], "name": "x"}, "name": "x", "inbound_nodes": []}, )"
      R"({"class_name": "Dense", "config": {"name": "b", "units": 3}, "name": "b", "inbound_nodes": [)" +
      node("a", 0) + R"(]}, )"
      R"({"class_name": "Dense", "config": {"name": "a", "units": 3}, "name": "a", "inbound_nodes": [)" +
      node("x", 0) + ", " + node("b", 0) +
      R"(]}], "input_layers": [["x", 0, 0]], "output_layers": [["a", 1, 0]]}})";
  std::shared_ptr<Model> model = model_from_json(json);
  const Tensor x = random_normal({2, 3});
  auto a = model->get_layer("a");
  auto b = model->get_layer("b");
  const Tensor expected = (*a)((*b)((*a)(x)));
  EXPECT_EQ(model->predict(x).to_vector<float>(), expected.to_vector<float>());
}

// An adapted IntegerLookup: Keras 3 keeps its vocabulary (special tokens first) in the
// archive's assets/ folder and writes "vocabulary": null in its config.
TEST(Keras3Files, LookupVocabularyFromAssets) {
  const auto dir = h5::temp_dir("k3assets").string();
  const std::string config =
      R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "ids", "trainable": true, "layers": [)"
      R"({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 3], "dtype": "int64", "sparse": false, "ragged": false, "name": "input_layer"}, "registered_name": null, "name": "input_layer", "inbound_nodes": []}, )"
      R"({"module": "keras.layers", "class_name": "IntegerLookup", "config": {"name": "integer_lookup", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "int64"}, "registered_name": null}, "invert": false, "max_tokens": null, "num_oov_indices": 1, "oov_token": -1, "mask_token": null, "output_mode": "int", "sparse": false, "pad_to_max_tokens": false, "vocabulary_dtype": "int64", "idf_weights": null, "vocabulary": null, "vocabulary_size": 4}, "registered_name": null, "name": "integer_lookup", "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 3], "dtype": "int64", "keras_history": ["input_layer", 0, 0]}}], "kwargs": {}}]}], )"
      R"("input_layers": ["input_layer", 0, 0], "output_layers": ["integer_lookup", 0, 0]}, "registered_name": "Functional", "build_config": {"input_shape": null}, "compile_config": {}})";
  const std::string weights = k3::hdf5_image(dir, [&](hid_t f) {
    k3::make_vars(f, "", "ids");
    k3::make_vars(f, "layers/input_layer", "input_layer");
    k3::make_vars(f, "layers/integer_lookup", "integer_lookup");
  });
  const std::string path = dir + "/ids.keras";
  k3::write_zip(path, {{"metadata.json", kMetadata},
                       {"config.json", config},
                       {"model.weights.h5", weights},
                       {"assets/layers/integer_lookup/vocabulary.txt", "-1\n12\n36\n1138"}});
  std::shared_ptr<Model> model = load_model(path);
  EXPECT_FALSE(model->compiled());  // "compile_config": {}
  const Tensor ids = model->predict(Tensor::from_vector(std::vector<int64_t>{36, 12, 7}, {1, 3}));
  EXPECT_EQ(ids.to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 0}));  // OOV -> 0
}

// Keras 3's legacy HDF5 format (model.save("m.h5") in Keras 3): Keras 2's layout, but the
// optimizer's variables are Keras 3's, named by path and including the learning rate.
TEST(Keras3Files, LegacyH5FromKeras3KeepsTheOptimizerState) {
  const auto dir = h5::temp_dir("k3legacy");
  const std::string path = (dir / "keras3.h5").string();
  const std::string model_config =
      R"({"class_name": "Sequential", "config": {"name": "sequential", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 3], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_layer"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 2, "activation": "linear", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}], "build_input_shape": [null, 3]}})";
  const std::string training_config =
      R"({"loss": "mean_squared_error", "loss_weights": null, "metrics": null, "weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 1, "jit_compile": false, "optimizer_config": {"class_name": "Adam", "config": {"name": "adam", "learning_rate": 0.0020000000949949026, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": false}}})";
  const Var kernel = var({3, 2}, 0.1f), bias = var({2}, -0.2f);
  const AdamState adam = adam_state({kernel, bias}, /*iteration=*/7, /*lr=*/2e-3f);
  {
    h5::Id f(h5::create_file(path));
    h5::write_vlen_strings(f, "keras_version", {"3.10.0"}, H5T_CSET_UTF8, true);
    h5::write_vlen_strings(f, "backend", {"tensorflow"}, H5T_CSET_UTF8, true);
    h5::write_vlen_strings(f, "model_config", {model_config}, H5T_CSET_UTF8, true);
    h5::write_vlen_strings(f, "training_config", {training_config}, H5T_CSET_UTF8, true);
    h5::Id mw(h5::create_group(f, "model_weights"));
    h5::write_vlen_strings(mw, "layer_names", {"dense"}, H5T_CSET_UTF8);
    h5::Id dense(h5::create_group(mw, "dense"));
    h5::write_vlen_strings(dense, "weight_names", {"sequential/dense/kernel", "sequential/dense/bias"},
                           H5T_CSET_UTF8);
    h5::write_floats(dense, "sequential/dense/kernel", kernel.values, kernel.dims);
    h5::write_floats(dense, "sequential/dense/bias", bias.values, bias.dims);
    h5::Id top(h5::create_group(mw, "top_level_model_weights"));
    h5::write_empty_float64(top, "weight_names");
    h5::Id ow(h5::create_group(f, "optimizer_weights"));
    const std::vector<std::string> names{
        "adam/iteration",
        "adam/learning_rate",
        "adam/sequential_dense_kernel_momentum",
        "adam/sequential_dense_kernel_velocity",
        "adam/sequential_dense_bias_momentum",
        "adam/sequential_dense_bias_velocity"};
    h5::write_vlen_strings(ow, "weight_names", names, H5T_CSET_UTF8);
    k3::write_int64_scalar(ow, names[0], adam.iteration);
    h5::write_floats(ow, names[1], {adam.learning_rate}, {});
    h5::write_floats(ow, names[2], adam.momentum[0].values, adam.momentum[0].dims);
    h5::write_floats(ow, names[3], adam.velocity[0].values, adam.velocity[0].dims);
    h5::write_floats(ow, names[4], adam.momentum[1].values, adam.momentum[1].dims);
    h5::write_floats(ow, names[5], adam.velocity[1].values, adam.velocity[1].dims);
  }
  ::testing::internal::CaptureStderr();
  std::shared_ptr<Model> model = load_model(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("freshly initialized"), std::string::npos) << err;
  const auto& opt = model->optimizer();
  EXPECT_EQ(opt->iteration_count(), 7);
  EXPECT_EQ(float(opt->learning_rate()), 2e-3f);
  const auto trainable = model->trainable_variables();
  EXPECT_EQ(values_of(opt->get_slot(trainable[0], "m")), adam.momentum[0].values);
  EXPECT_EQ(values_of(opt->get_slot(trainable[1], "v")), adam.velocity[1].values);
  EXPECT_EQ(values_of(trainable[0]), kernel.values);
}

// compile_config as Keras 3 also writes it: the optimizer as a name, the loss as a serialized
// function, metrics as functions and names.
TEST(Keras3Files, CompileConfigWithNamesAndFunctions) {
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  model->build({-1, 2});
  const Json config = Json::parse(
      R"({"optimizer": "rmsprop", "loss": {"module": "keras.losses", "class_name": "function", "config": "mean_squared_error", "registered_name": "mean_squared_error"}, "loss_weights": null, "metrics": [{"module": "builtins", "class_name": "function", "config": "mae", "registered_name": "function"}], "weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 2, "jit_compile": "auto"})");
  ASSERT_TRUE(saving::compile_from_keras3_config(*model, config, "test.keras"));
  EXPECT_EQ(model->optimizer()->class_name(), "RMSprop");
  const auto logs = model->evaluate(random_normal({4, 2}), random_normal({4, 1}),
                                    EvaluateOptions().verbose(0));
  EXPECT_TRUE(logs.count("mae")) << "metrics: " << logs.size();

  // No loss (a custom train_step in Keras): not compiled, with a warning naming the file.
  auto other = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(saving::compile_from_keras3_config(*other, Json::parse(R"({"optimizer": "adam", "loss": null})"),
                                                  "custom.keras"));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("custom.keras"), std::string::npos);
  EXPECT_FALSE(other->compiled());

  // Keras 3 features Strata lacks are named.
  expect_error<ValueError>(
      [&] {
        saving::compile_from_keras3_config(
            *other, Json::parse(R"({"optimizer": {"class_name": "SGD", "config": {"gradient_accumulation_steps": 4}}, "loss": "mse"})"),
            "acc.keras");
      },
      {"gradient_accumulation_steps", "not supported"});
}

}  // namespace
}  // namespace strata
