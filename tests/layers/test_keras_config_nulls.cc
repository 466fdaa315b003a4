// Keras configs write None for "use the default" ("mask_zero": null, "input_length": null,
// "kernel_initializer": null): for every registered layer class, a null value must load exactly
// as the key being absent. Also the error for a class Strata does not know.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <strata/strata.h>

#include "layers/layer_registry.h"
#include "layers/layer_samples.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

Json without(const Json& object, const std::string& key) {
  Json out = Json::object();
  for (const std::string& k : object.keys()) {
    if (k != key) out.set(k, object.at(k));
  }
  return out;
}

// The config with "name" dropped: two loads of one config get different default names.
Json unnamed(const Json& config) { return without(config, "name"); }

TEST(KerasConfigNulls, NullLoadsAsTheDefaultForEveryKeyOfEveryLayer) {
  const std::map<std::string, Json> samples = testing::minimal_layer_configs();
  for (const std::string& cls : registered_layers()) {
    SCOPED_TRACE(cls);
    auto sample = samples.find(cls);
    ASSERT_NE(sample, samples.end()) << "add a minimal config for " << cls << " above";
    const std::shared_ptr<Layer> layer =
        layer_from_config(Json::object({{"class_name", cls}, {"config", sample->second}}));
    const Json full = layer->get_config();  // every key Strata writes
    for (const std::string& key : full.keys()) {
      SCOPED_TRACE(key);
      Json with_null = full;
      with_null.set(key, Json());
      std::shared_ptr<Layer> from_missing, from_null;
      std::string missing_error, null_error;
      try {
        from_missing =
            layer_from_config(Json::object({{"class_name", cls}, {"config", without(full, key)}}));
      } catch (const Error& e) {
        missing_error = e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not a strata::Error: " << e.what();
        missing_error = e.what();
      }
      try {
        from_null = layer_from_config(Json::object({{"class_name", cls}, {"config", with_null}}));
      } catch (const Error& e) {
        null_error = e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not a strata::Error: " << e.what();
        null_error = e.what();
      }
      if (!missing_error.empty()) {
        // A required argument (units, filters, ...): null is an error too, as in Keras.
        EXPECT_FALSE(null_error.empty()) << "null accepted where the key is required";
        continue;
      }
      ASSERT_TRUE(null_error.empty()) << "null failed: " << null_error;
      EXPECT_EQ(unnamed(from_null->get_config()), unnamed(from_missing->get_config()))
          << from_null->get_config().dump() << "\nvs\n"
          << from_missing->get_config().dump();
    }
  }
}

TEST(KerasConfigNulls, EmbeddingWithKeras2Nulls) {
  // The reported file: Keras 2's Embedding config with "mask_zero": null, "input_length": null.
  auto layer = layer_from_config(Json::parse(R"({"class_name": "Embedding", "config": {
      "name": "embedding", "trainable": true, "batch_input_shape": [null, null],
      "dtype": "float32", "input_dim": 10, "output_dim": 4,
      "embeddings_initializer": {"class_name": "RandomUniform",
                                 "config": {"minval": -0.05, "maxval": 0.05, "seed": null}},
      "embeddings_regularizer": null, "activity_regularizer": null,
      "embeddings_constraint": null, "mask_zero": null, "input_length": null}})"));
  EXPECT_FALSE(layer->get_config().at("mask_zero").as_bool());
  EXPECT_EQ((*layer)(tensor<int64_t>({1, 2, 3}, {1, 3})).shape(), Shape({1, 3, 4}));
}

TEST(KerasConfigNulls, ReshapeNullDimensionIsInferred) {
  auto layer = layer_from_config(
      Json::parse(R"({"class_name": "Reshape", "config": {"target_shape": [null, 4]}})"));
  EXPECT_EQ((*layer)(zeros({2, 12})).shape(), Shape({2, 3, 4}));
  expect_error<ValueError>(
      [] {
        layer_from_config(
            Json::parse(R"({"class_name": "Reshape", "config": {"target_shape": 4}})"));
      },
      {"target_shape", "list"});
}

TEST(KerasConfigNulls, UnknownClassNamesClassLayerAndFix) {
  expect_error<ValueError>(
      [] {
        layer_from_config(Json::parse(
            R"({"class_name": "Lambda", "config": {"name": "lambda_1", "function": "..."}})"));
      },
      {"unknown layer class 'Lambda'", "layer 'lambda_1'", "register_layer(\"Lambda\"",
       "Known classes", "Dense"});
}

}  // namespace
}  // namespace strata
