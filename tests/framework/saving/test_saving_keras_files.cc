// load_weights on files laid out as Keras itself writes them, built here with the HDF5 C API:
// both string encodings h5py produces (fixed-length NUL-padded byte strings, variable-length
// UTF-8), chunked attributes, the float64 empty weight_names, full-model files, Keras 3's
// .weights.h5 layout; and the by-order / by_name / skip_mismatch rules.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;
using testing::expect_error;

// What a Keras file holds for one layer: its name and (weight name, values, shape) triples.
struct FileWeight {
  std::string name;
  std::vector<float> values;
  std::vector<hsize_t> dims;
};
struct FileLayer {
  std::string name;
  std::vector<FileWeight> weights;
};

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.125f * float(i);
  return v;
}

// d1: Dense(3) on 4 inputs; drop: Dropout; d2: Dense(2).
std::vector<FileLayer> keras_layers(const std::string& d1 = "d1", const std::string& d2 = "d2") {
  return {{d1, {{d1 + "/kernel:0", iota(12, 1.0f), {4, 3}}, {d1 + "/bias:0", iota(3, -1.0f), {3}}}},
          {"drop", {}},
          {d2, {{d2 + "/kernel:0", iota(6, 5.0f), {3, 2}}, {d2 + "/bias:0", iota(2, 9.0f), {2}}}}};
}

std::shared_ptr<Sequential> model_for(const std::string& d1 = "d1", const std::string& d2 = "d2",
                                      int64_t units = 3) {
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(units, DenseOptions().name(d1)), std::make_shared<Dropout>(0.5, -1, "drop"),
      std::make_shared<Dense>(2, DenseOptions().name(d2))});
  m->build({-1, 4});
  return m;
}

void expect_loaded(const Model& model, const std::vector<FileLayer>& file) {
  const auto layers = model.layers();
  ASSERT_EQ(layers.size(), file.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    const auto weights = layers[l]->weights();
    ASSERT_EQ(weights.size(), file[l].weights.size());
    for (size_t w = 0; w < weights.size(); ++w) {
      const std::vector<float> got = weights[w]->read_value().to_vector<float>();
      EXPECT_EQ(got, file[l].weights[w].values) << weights[w]->name();
    }
  }
}

enum class Encoding {
  kFixedNullPad,     // h5py 2 / numpy 'S' arrays: fixed-length, NUL-padded, ASCII
  kVariableUtf8,     // variable-length UTF-8 (str), scalars for backend / keras_version
  kChunkedNullTerm,  // layer_names0, layer_names1, ... fixed-length, NUL-terminated
};

void write_names(hid_t obj, const std::string& attr, const std::vector<std::string>& names,
                 Encoding enc) {
  if (names.empty()) {
    h5::write_empty_float64(obj, attr);  // what h5py writes for []
    return;
  }
  switch (enc) {
    case Encoding::kFixedNullPad:
      h5::write_fixed_strings(obj, attr, names, H5T_STR_NULLPAD);
      break;
    case Encoding::kVariableUtf8:
      h5::write_vlen_strings(obj, attr, names, H5T_CSET_UTF8);
      break;
    case Encoding::kChunkedNullTerm: {
      // Split in two, items padded to the longest + 3 bytes (an unusual but valid writer).
      size_t itemsize = 0;
      for (const auto& n : names) itemsize = std::max(itemsize, n.size() + 3);
      const size_t half = (names.size() + 1) / 2;
      h5::write_fixed_strings(obj, attr + "0", {names.begin(), names.begin() + long(half)},
                              H5T_STR_NULLTERM, itemsize);
      if (half < names.size()) {
        h5::write_fixed_strings(obj, attr + "1", {names.begin() + long(half), names.end()},
                                H5T_STR_NULLTERM, itemsize);
      }
      break;
    }
  }
}

// The Keras 2 weights layout of `layers` below `group`.
void write_keras2(hid_t group, const std::vector<FileLayer>& layers, Encoding enc) {
  std::vector<std::string> names;
  for (const auto& l : layers) names.push_back(l.name);
  write_names(group, "layer_names", names, enc);
  if (enc == Encoding::kVariableUtf8) {
    h5::write_vlen_strings(group, "backend", {"tensorflow"}, H5T_CSET_UTF8, true);
    h5::write_vlen_strings(group, "keras_version", {"2.15.0"}, H5T_CSET_UTF8, true);
  } else {
    h5::write_fixed_strings(group, "backend", {"tensorflow"}, H5T_STR_NULLPAD);
  }
  for (const auto& l : layers) {
    h5::Id g(h5::create_group(group, l.name));
    std::vector<std::string> weight_names;
    for (const auto& w : l.weights) weight_names.push_back(w.name);
    write_names(g, "weight_names", weight_names, enc);
    for (const auto& w : l.weights) h5::write_floats(g, w.name, w.values, w.dims);
  }
}

std::string keras2_file(const std::string& test, const std::vector<FileLayer>& layers,
                        Encoding enc, bool full_model = false) {
  const std::string path = (h5::temp_dir(test) / "keras.h5").string();
  h5::Id f(h5::create_file(path));
  EXPECT_TRUE(f.ok());
  if (full_model) {
    h5::write_vlen_strings(f, "model_config", {"{\"class_name\": \"Sequential\"}"}, H5T_CSET_ASCII, true);
    h5::Id g(h5::create_group(f, "model_weights"));
    write_keras2(g, layers, enc);
  } else {
    write_keras2(f, layers, enc);
  }
  return path;
}

TEST(SavingKerasFiles, FixedLengthNullPaddedStrings) {
  const auto file = keras_layers();
  const std::string path = keras2_file("nullpad", file, Encoding::kFixedNullPad);
  auto model = model_for();
  model->load_weights(path);
  expect_loaded(*model, file);
}

TEST(SavingKerasFiles, VariableLengthUtf8StringsAndNonAsciiNames) {
  const auto file = keras_layers("dénse_α", "d2");
  const std::string path = keras2_file("vlen", file, Encoding::kVariableUtf8);
  auto model = model_for("dénse_α", "d2");
  model->load_weights(path, /*by_name=*/true);  // by name: the UTF-8 name must decode exactly
  expect_loaded(*model, file);
}

TEST(SavingKerasFiles, ChunkedAttributes) {
  const auto file = keras_layers();
  const std::string path = keras2_file("chunks", file, Encoding::kChunkedNullTerm);
  auto model = model_for();
  model->load_weights(path);
  expect_loaded(*model, file);
}

TEST(SavingKerasFiles, FullModelFileThroughLoadWeights) {
  const auto file = keras_layers();
  const std::string path = keras2_file("full", file, Encoding::kVariableUtf8, /*full_model=*/true);
  auto model = model_for();
  model->load_weights(path);
  expect_loaded(*model, file);
}

TEST(SavingKerasFiles, ByOrderIgnoresNamesAndWeightlessLayers) {
  // The file's layers are named differently and it has an extra weightless layer: by order,
  // Keras pairs the layers that have weights.
  auto file = keras_layers("other_a", "other_b");
  file.insert(file.begin(), FileLayer{"input_1", {}});
  const std::string path = keras2_file("order", file, Encoding::kFixedNullPad);
  auto model = model_for("x1", "x2");
  model->load_weights(path);
  file.erase(file.begin());
  expect_loaded(*model, file);
}

TEST(SavingKerasFiles, ByOrderLayerCountMismatch) {
  auto file = keras_layers();
  file.pop_back();
  const std::string path = keras2_file("count", file, Encoding::kFixedNullPad);
  auto model = model_for();
  expect_error<ValueError>([&] { model->load_weights(path); },
                           {path, "layer count mismatch", "2 layer(s)", "1 [d1]", "by_name"});
}

TEST(SavingKerasFiles, ByNameLoadsMatchingLayersOnly) {
  // The file holds d2 and an unrelated layer; d1 keeps its values.
  auto file = keras_layers();
  std::vector<FileLayer> partial{{"unrelated", {{"unrelated/kernel:0", iota(4, 0.f), {2, 2}}}},
                                 file[2]};
  const std::string path = keras2_file("byname", partial, Encoding::kVariableUtf8);
  auto model = model_for();
  const Tensor d1_before = model->layers()[0]->weights()[0]->read_value();
  model->load_weights(path, /*by_name=*/true);
  EXPECT_EQ(model->layers()[0]->weights()[0]->read_value().to_vector<float>(),
            d1_before.to_vector<float>());
  EXPECT_EQ(model->layers()[2]->weights()[0]->read_value().to_vector<float>(),
            file[2].weights[0].values);
}

TEST(SavingKerasFiles, ShapeMismatchThrowsOrSkipsWithAWarning) {
  const auto file = keras_layers();
  const std::string path = keras2_file("shape", file, Encoding::kFixedNullPad);
  auto model = model_for("d1", "d2", /*units=*/5);  // d1 kernel [4,5] vs the file's [4,3]
  expect_error<ShapeError>([&] { model->load_weights(path); },
                           {path, "layer 'd1'", "d1/kernel", "[4,5]", "[4,3]"});
  expect_error<ShapeError>([&] { model->load_weights(path, true); },
                           {path, "layer 'd1'", "d1/kernel", "[4,5]", "[4,3]"});
  // skip_mismatch: d1's kernel and bias are skipped with warnings, d2 (now [5,2]) too; nothing
  // of a mismatched weight is assigned.
  auto small = model_for("d1", "d2", 3);
  auto wide = model_for("d1", "d2", 5);
  const Tensor kernel_before = wide->layers()[0]->weights()[0]->read_value();
  ::testing::internal::CaptureStderr();
  wide->load_weights(path, /*by_name=*/true, /*skip_mismatch=*/true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("WARNING: Skipping loading weight"), std::string::npos) << err;
  EXPECT_NE(err.find("d1/kernel"), std::string::npos) << err;
  EXPECT_EQ(wide->layers()[0]->weights()[0]->read_value().to_vector<float>(),
            kernel_before.to_vector<float>());
  // d2's bias ([2]) still matches and is loaded.
  EXPECT_EQ(wide->layers()[2]->weights()[1]->read_value().to_vector<float>(),
            file[2].weights[1].values);
  // And the matching model loads everything.
  small->load_weights(path, true, true);
  expect_loaded(*small, file);
}

TEST(SavingKerasFiles, WeightCountMismatch) {
  auto file = keras_layers();
  file[0].weights.pop_back();  // d1 without its bias
  const std::string path = keras2_file("wcount", file, Encoding::kFixedNullPad);
  auto model = model_for();
  expect_error<ValueError>([&] { model->load_weights(path); },
                           {path, "weight count mismatch", "layer 'd1'", "2 weight(s)"});
  ::testing::internal::CaptureStderr();
  model->load_weights(path, true, true);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("Skipping"), std::string::npos);
}

// Keras 3's layout (saving_lib.H5IOStore), as Keras 3 writes it: a "vars" group per saveable,
// layers keyed by snake_case class name with a per-class counter.
std::string keras3_file(const std::string& test, const std::vector<FileLayer>& file,
                        const std::string& layers_group = "layers") {
  const std::string path = (h5::temp_dir(test) / "k3.weights.h5").string();
  h5::Id f(h5::create_file(path));
  h5::Id root_vars(h5::create_group(f, "vars"));
  const std::vector<std::string> keys{"dense", "dropout", "dense_1"};
  for (size_t l = 0; l < file.size(); ++l) {
    const std::string group = layers_group + "/" + keys[l] + "/vars";
    h5::Id g(h5::create_group(f, group));
    for (size_t w = 0; w < file[l].weights.size(); ++w) {
      h5::write_floats(g, std::to_string(w), file[l].weights[w].values, file[l].weights[w].dims);
    }
  }
  // Keras 3 also stores optimizer/metric state elsewhere; those groups are not read.
  h5::Id opt(h5::create_group(f, "optimizer/vars"));
  return path;
}

TEST(SavingKerasFiles, Keras3LayoutBuiltByHand) {
  const auto file = keras_layers();
  const std::string path = keras3_file("k3", file);
  auto model = model_for("any_name", "other_name");  // Keras 3 keys by class, not name
  model->load_weights(path);
  expect_loaded(*model, file);
  // Keras 2.13 spelled "layers" as "_layer_checkpoint_dependencies".
  const std::string legacy = keras3_file("k3legacy", file, "_layer_checkpoint_dependencies");
  auto again = model_for();
  again->load_weights(legacy);
  expect_loaded(*again, file);
}

TEST(SavingKerasFiles, Keras3Mismatches) {
  auto file = keras_layers();
  const std::string path = keras3_file("k3shape", file);
  auto wide = model_for("a", "b", 5);
  expect_error<ShapeError>([&] { wide->load_weights(path); },
                           {path, "layer 'a'", "a/kernel", "[4,5]", "[4,3]", "layers/dense/vars/0"});
  expect_error<ValueError>([&] { wide->load_weights(path, /*by_name=*/true); },
                           {path, "by_name", "Keras 3"});
  ::testing::internal::CaptureStderr();
  wide->load_weights(path, false, /*skip_mismatch=*/true);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("Skipping"), std::string::npos);
  EXPECT_EQ(wide->layers()[2]->weights()[1]->read_value().to_vector<float>(),
            file[2].weights[1].values);

  file[2].weights.pop_back();
  const std::string fewer = keras3_file("k3count", file);
  auto model = model_for();
  expect_error<ValueError>([&] { model->load_weights(fewer); },
                           {fewer, "layer 'd2'", "expects 2 variables", "holds 1"});
}

TEST(SavingKerasFiles, Keras3RoundTripOfOwnFiles) {
  set_random_seed(21);
  auto a = model_for();
  auto b = model_for();
  const std::string path = (h5::temp_dir("k3own") / "m.weights.h5").string();
  a->save_weights(path);
  b->load_weights(path);
  for (size_t i = 0; i < a->weights().size(); ++i) {
    EXPECT_EQ(a->weights()[i]->read_value().to_vector<float>(),
              b->weights()[i]->read_value().to_vector<float>());
  }
}

}  // namespace
}  // namespace strata
