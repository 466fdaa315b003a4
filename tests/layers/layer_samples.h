// The smallest Keras config of each registered layer class (its required arguments only), for
// tests that run over every class. A class registered without an entry here fails those tests,
// so new layers are covered too.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <strata/strata.h>

namespace strata::testing {

inline std::map<std::string, Json> minimal_layer_configs() {
  const auto p = [](const char* text) { return Json::parse(text); };
  std::map<std::string, Json> m = {
      {"Dense", p(R"({"units": 3})")},
      {"Embedding", p(R"({"input_dim": 5, "output_dim": 2})")},
      {"Activation", p(R"({"activation": "relu"})")},
      {"ReLU", p("{}")},
      {"Softmax", p("{}")},
      {"LeakyReLU", p("{}")},
      {"ELU", p("{}")},
      {"PReLU", p("{}")},
      {"Dropout", p(R"({"rate": 0.5})")},
      {"Flatten", p("{}")},
      {"Reshape", p(R"({"target_shape": [2, 2]})")},
      {"Permute", p(R"({"dims": [2, 1]})")},
      {"ZeroPadding2D", p("{}")},
      {"Conv2D", p(R"({"filters": 2, "kernel_size": 3})")},
      {"DepthwiseConv2D", p(R"({"kernel_size": 3})")},
      {"MaxPooling2D", p("{}")},
      {"AveragePooling2D", p("{}")},
      {"GlobalAveragePooling2D", p("{}")},
      {"GlobalMaxPooling2D", p("{}")},
      {"BatchNormalization", p("{}")},
      {"SyncBatchNormalization", p("{}")},
      {"LayerNormalization", p("{}")},
      {"Add", p("{}")},
      {"Subtract", p("{}")},
      {"Multiply", p("{}")},
      {"Concatenate", p("{}")},
      {"Hashing", p(R"({"num_bins": 4})")},
      {"IntegerLookup", p("{}")},
      {"StringLookup", p("{}")},
      {"Normalization", p("{}")},
      {"RandomCrop", p(R"({"height": 2, "width": 2})")},
      {"RandomFlip", p("{}")},
      {"RandomTranslation", p(R"({"height_factor": 0.1, "width_factor": 0.1})")},
      {"Rescaling", p(R"({"scale": 0.5})")},
      {"Sequential", p(R"({"name": "seq", "layers": [{"class_name": "Dense",
                           "config": {"units": 2}}]})")},
  };
  auto inputs = Input({4});
  Model functional(inputs, (*std::make_shared<Dense>(2))(inputs), "functional_sample");
  m["Functional"] = functional.get_config();
  return m;
}

}  // namespace strata::testing
