// The exact structure of the files Strata writes (Keras 2 weights, Keras 2 full model, Keras 3
// .weights.h5), read back with the HDF5 C API rather than Strata's wrapper.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "framework/saving/keras_attributes.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;

// Dense -> Dropout -> BatchNormalization -> Dense, built, compiled with Adam and trained one step
// so every weight and optimizer slot holds something other than its initial value.
std::shared_ptr<Sequential> trained_model() {
  set_random_seed(11);
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(4, "relu"), std::make_shared<Dropout>(0.1),
      std::make_shared<BatchNormalization>(), std::make_shared<Dense>(2)});
  model->build({-1, 3});
  model->compile("adam", "mse");
  model->train_on_batch(random_normal({8, 3}), random_normal({8, 2}));
  return model;
}

void expect_values(const h5::DatasetInfo& d, const VariablePtr& v) {
  ASSERT_TRUE(d.found) << v->name();
  const std::vector<double> expected = v->read_value().to_vector<double>();
  ASSERT_EQ(d.values.size(), expected.size()) << v->name();
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(d.values[i], expected[i]) << v->name();
}

std::vector<hsize_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

// Checks the Keras 2 weights layout below `group` (a file root or /model_weights).
void expect_keras2_weights_layout(hid_t group, const Model& model) {
  // layer_names: every layer in model order, weightless Dropout included; a fixed-length,
  // NUL-padded ASCII array (numpy 'S'), never variable-length strings (hdf5_file.h).
  std::vector<std::string> names;
  size_t longest = 0;
  for (const auto& l : model.layers()) {
    names.push_back(l->name());
    longest = std::max(longest, l->name().size());
  }
  const h5::AttrInfo info = h5::attr_info(group, "layer_names");
  EXPECT_EQ(info.type_class, H5T_STRING);
  EXPECT_FALSE(info.variable_length);
  EXPECT_EQ(info.pad, H5T_STR_NULLPAD);
  EXPECT_EQ(info.size, longest);
  EXPECT_EQ(info.cset, H5T_CSET_ASCII);
  EXPECT_EQ(info.dims, std::vector<hsize_t>{names.size()});
  EXPECT_EQ(h5::read_strings(group, "layer_names"), names);
  EXPECT_EQ(h5::read_strings(group, "backend"), std::vector<std::string>{"tensorflow"});
  EXPECT_EQ(h5::read_strings(group, "keras_version"), std::vector<std::string>{"2.15.0"});
  EXPECT_TRUE(h5::attr_info(group, "backend").scalar);

  for (const auto& layer : model.layers()) {
    SCOPED_TRACE(layer->name());
    ASSERT_TRUE(h5::is_group(group, layer->name()));
    h5::Id g(H5Gopen2(group, layer->name().c_str(), H5P_DEFAULT));
    const std::vector<VariablePtr> weights = layer->weights();
    if (weights.empty()) {
      // h5py's np.asarray([]): float64 of shape (0,).
      const h5::AttrInfo empty = h5::attr_info(g, "weight_names");
      EXPECT_TRUE(empty.is_float64);
      EXPECT_EQ(empty.dims, std::vector<hsize_t>{0});
      EXPECT_TRUE(h5::children(g).empty());
      continue;
    }
    std::vector<std::string> weight_names;
    for (const auto& w : layer->trainable_weights()) weight_names.push_back(w->name() + ":0");
    for (const auto& w : layer->non_trainable_weights()) weight_names.push_back(w->name() + ":0");
    EXPECT_EQ(h5::read_strings(g, "weight_names"), weight_names);
    for (const VariablePtr& w : weights) {
      const std::string path = layer->name() + "/" + w->name() + ":0";
      const h5::DatasetInfo d = h5::dataset(group, path);
      ASSERT_TRUE(d.found) << path;
      EXPECT_TRUE(d.f32le) << path;
      EXPECT_EQ(d.dims, dims_of(w->shape())) << path;
      expect_values(d, w);
    }
  }
  // Keras 2.15 also writes the model's own weights (none here) in a group of their own.
  ASSERT_TRUE(h5::is_group(group, "top_level_model_weights"));
  h5::Id top(H5Gopen2(group, "top_level_model_weights", H5P_DEFAULT));
  EXPECT_TRUE(h5::attr_info(top, "weight_names").is_float64);
}

TEST(SavingLayout, Keras2WeightsFile) {
  auto model = trained_model();
  const auto dir = h5::temp_dir("keras2_weights");
  const std::string path = (dir / "w.h5").string();
  model->save_weights(path);

  h5::Id f(h5::open_file(path));
  ASSERT_TRUE(f.ok());
  expect_keras2_weights_layout(f, *model);
  // BatchNormalization: trainable gamma/beta first, then the moving statistics.
  const std::string bn = model->layers()[2]->name();
  h5::Id g(H5Gopen2(f, bn.c_str(), H5P_DEFAULT));
  EXPECT_EQ(h5::read_strings(g, "weight_names"),
            (std::vector<std::string>{bn + "/gamma:0", bn + "/beta:0", bn + "/moving_mean:0",
                                      bn + "/moving_variance:0"}));
  EXPECT_TRUE(h5::dataset(f, bn + "/" + bn + "/moving_mean:0").found);
  // Only the Keras layout: no model_config, no optimizer state.
  EXPECT_FALSE(h5::exists(f, "optimizer_weights"));
  EXPECT_LE(H5Aexists(f, "model_config"), 0);
}

TEST(SavingLayout, FullModelFile) {
  auto model = trained_model();
  const auto dir = h5::temp_dir("full_model");
  const std::string path = (dir / "model.h5").string();
  model->save(path);

  h5::Id f(h5::open_file(path));
  ASSERT_TRUE(f.ok());
  // Fixed-length byte-string scalars (numpy.bytes_), as Keras wrote them with h5py 2.
  for (const char* attr : {"keras_version", "backend", "model_config", "training_config"}) {
    const h5::AttrInfo info = h5::attr_info(f, attr);
    EXPECT_EQ(info.type_class, H5T_STRING) << attr;
    EXPECT_FALSE(info.variable_length) << attr;
    EXPECT_EQ(info.pad, H5T_STR_NULLPAD) << attr;
    EXPECT_TRUE(info.scalar) << attr;
  }
  EXPECT_EQ(h5::attr_info(f, "backend").size, std::string("tensorflow").size());
  const Json config = Json::parse(h5::read_strings(f, "model_config")[0]);
  EXPECT_EQ(config.at("class_name").as_string(), "Sequential");
  EXPECT_EQ(config.at("config").at("name").as_string(), model->name());
  EXPECT_EQ(config.keys(), (std::vector<std::string>{"class_name", "config"}));
  const Json training = Json::parse(h5::read_strings(f, "training_config")[0]);
  EXPECT_EQ(training.at("optimizer_config").at("class_name").as_string(), "Adam");

  ASSERT_TRUE(h5::is_group(f, "model_weights"));
  h5::Id weights(H5Gopen2(f, "model_weights", H5P_DEFAULT));
  expect_keras2_weights_layout(weights, *model);

  // optimizer_weights: the step counter (int64 scalar) then every slot, Keras 2 names.
  ASSERT_TRUE(h5::is_group(f, "optimizer_weights"));
  h5::Id opt(H5Gopen2(f, "optimizer_weights", H5P_DEFAULT));
  const std::vector<VariablePtr> vars = model->optimizer()->variables();
  std::vector<std::string> names;
  for (const auto& v : vars) names.push_back(v->name() + ":0");
  EXPECT_EQ(h5::read_strings(opt, "weight_names"), names);
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "Adam/iter:0");
  const std::string first = model->layers()[0]->name();
  EXPECT_EQ(names[1], "Adam/" + first + "/kernel/m:0");
  const h5::DatasetInfo iter = h5::dataset(opt, "Adam/iter:0");
  ASSERT_TRUE(iter.found);
  EXPECT_TRUE(iter.i64le);
  EXPECT_TRUE(iter.scalar);
  EXPECT_EQ(iter.values, std::vector<double>{1.0});
  for (size_t i = 1; i < vars.size(); ++i) {
    const h5::DatasetInfo d = h5::dataset(opt, names[i]);
    EXPECT_TRUE(d.f32le) << names[i];
    EXPECT_EQ(d.dims, dims_of(vars[i]->shape())) << names[i];
    expect_values(d, vars[i]);
  }
}

TEST(SavingLayout, ChunksLongLayerNameListsAsKerasDoes) {
  // 300 layers named with 250 characters: 75,000 bytes as numpy 'S250', over the 64,512-byte
  // limit, so Keras writes two fixed-length chunks of 150 names each.
  std::vector<std::shared_ptr<Layer>> layers{std::make_shared<Dense>(2)};
  for (int i = 1; i < 300; ++i) {
    std::string name = "act_" + std::to_string(i) + "_";
    name.resize(250, 'x');
    layers.push_back(std::make_shared<ActivationLayer>("linear", name));
  }
  Sequential model(layers);
  model.build({-1, 3});
  const auto dir = h5::temp_dir("chunked");
  const std::string path = (dir / "w.h5").string();
  model.save_weights(path);
  {
    h5::Id f(h5::open_file(path));
    EXPECT_LE(H5Aexists(f, "layer_names"), 0);
    EXPECT_LE(H5Aexists(f, "layer_names2"), 0);
    std::vector<std::string> joined;
    for (const char* chunk : {"layer_names0", "layer_names1"}) {
      const h5::AttrInfo info = h5::attr_info(f, chunk);
      EXPECT_FALSE(info.variable_length) << chunk;
      EXPECT_EQ(info.pad, H5T_STR_NULLPAD) << chunk;
      EXPECT_EQ(info.size, 250u) << chunk;
      EXPECT_EQ(info.dims, std::vector<hsize_t>{150}) << chunk;
      for (const auto& n : h5::read_strings(f, chunk)) joined.push_back(n);
    }
    std::vector<std::string> expected;
    for (const auto& l : model.layers()) expected.push_back(l->name());
    EXPECT_EQ(joined, expected);
  }
  // And it loads back.
  const std::vector<Tensor> before = model.get_weights();
  for (const auto& v : model.weights()) v->assign(zeros(v->shape()));
  model.load_weights(path);
  EXPECT_EQ(model.get_weights()[0].to_vector<float>(), before[0].to_vector<float>());
}

TEST(SavingLayout, Keras3WeightsFile) {
  set_random_seed(12);
  auto inner = std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(3)});
  Sequential model({std::make_shared<Dense>(4), std::make_shared<BatchNormalization>(),
                    std::make_shared<Flatten>(), std::make_shared<Dense>(3), inner});
  model.build({-1, 2});
  const auto dir = h5::temp_dir("keras3");
  const std::string path = (dir / "model.weights.h5").string();
  model.save_weights(path);

  h5::Id f(h5::open_file(path));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(h5::attribute_names(f).empty());
  EXPECT_EQ(h5::children(f), (std::vector<std::string>{"layers", "vars"}));
  h5::Id layers(H5Gopen2(f, "layers", H5P_DEFAULT));
  // Keyed by class (snake_case) with Keras' per-class counter, not by layer name.
  EXPECT_EQ(h5::children(layers),
            (std::vector<std::string>{"batch_normalization", "dense", "dense_1", "flatten",
                                      "sequential"}));
  auto expect_vars = [&](const std::string& path, const std::vector<VariablePtr>& vars) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(h5::is_group(f, path));
    h5::Id g(H5Gopen2(f, path.c_str(), H5P_DEFAULT));
    EXPECT_EQ(h5::children(g).size(), vars.size());
    for (size_t i = 0; i < vars.size(); ++i) {
      const h5::DatasetInfo d = h5::dataset(g, std::to_string(i));
      EXPECT_TRUE(d.f32le);
      EXPECT_EQ(d.dims, dims_of(vars[i]->shape()));
      expect_values(d, vars[i]);
    }
  };
  const auto all = model.layers();
  expect_vars("vars", {});
  expect_vars("layers/dense/vars", all[0]->weights());
  expect_vars("layers/batch_normalization/vars", all[1]->weights());  // gamma, beta, mean, var
  expect_vars("layers/flatten/vars", {});
  expect_vars("layers/dense_1/vars", all[3]->weights());
  expect_vars("layers/sequential/vars", {});
  expect_vars("layers/sequential/layers/dense/vars", inner->layers()[0]->weights());
}

TEST(SavingLayout, StringListAttributeChunkSizesFollowArraySplit) {
  // 7 names of 20,000 bytes: 140,000 bytes -> 3 chunks of sizes 3, 2, 2 (numpy.array_split).
  const auto dir = h5::temp_dir("split");
  const std::string path = (dir / "a.h5").string();
  std::vector<std::string> values;
  for (int i = 0; i < 7; ++i) values.push_back(std::string(20000, char('a' + i)));
  {
    saving::hdf5::File file = saving::hdf5::File::create(path);
    {
      saving::hdf5::Group root = file.root();
      saving::write_string_list_attribute(root, "names", values);
      EXPECT_EQ(saving::read_string_list_attribute(root, "names"), values);
    }
    file.close();
  }
  h5::Id f(h5::open_file(path));
  EXPECT_EQ(h5::attr_info(f, "names0").dims, std::vector<hsize_t>{3});
  EXPECT_EQ(h5::attr_info(f, "names1").dims, std::vector<hsize_t>{2});
  EXPECT_EQ(h5::attr_info(f, "names2").dims, std::vector<hsize_t>{2});
  EXPECT_LE(H5Aexists(f, "names3"), 0);
}

}  // namespace
}  // namespace strata
