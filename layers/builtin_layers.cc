#include "layers/builtin_layers.h"

#include "layers/preprocessing/preprocessing_layers.h"

#include "layers/activation_layers.h"
#include "layers/batch_normalization.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/depthwise_conv2d.h"
#include "layers/dropout.h"
#include "layers/embedding.h"
#include "layers/layer_normalization.h"
#include "layers/merging.h"
#include "layers/model_serialization.h"
#include "layers/pooling.h"
#include "layers/prelu.h"
#include "layers/reshaping.h"

namespace strata {
namespace {
// A model nested in another one's config, as a layer.
LayerFactory nested_model(const char* class_name) {
  return [class_name](const Json& config) -> std::shared_ptr<Layer> {
    return model_from_config(Json::object({{"class_name", class_name}, {"config", config}}));
  };
}
}  // namespace

// One line per layer class. Layers added to layers/ must be added here too.
std::map<std::string, LayerFactory> builtin_layer_factories() {
  std::map<std::string, LayerFactory> factories = {
      {"Dense", &Dense::from_config},
      {"Embedding", &Embedding::from_config},
      {"Activation", &ActivationLayer::from_config},
      {"ReLU", &ReLU::from_config},
      {"Softmax", &Softmax::from_config},
      {"LeakyReLU", &LeakyReLU::from_config},
      {"ELU", &ELU::from_config},
      {"PReLU", &PReLU::from_config},
      {"Dropout", &Dropout::from_config},
      {"Flatten", &Flatten::from_config},
      {"Reshape", &Reshape::from_config},
      {"Permute", &Permute::from_config},
      {"ZeroPadding2D", &ZeroPadding2D::from_config},
      {"Conv2D", &Conv2D::from_config},
      {"DepthwiseConv2D", &DepthwiseConv2D::from_config},
      {"MaxPooling2D", &MaxPooling2D::from_config},
      {"AveragePooling2D", &AveragePooling2D::from_config},
      {"GlobalAveragePooling2D", &GlobalAveragePooling2D::from_config},
      {"GlobalMaxPooling2D", &GlobalMaxPooling2D::from_config},
      {"BatchNormalization", &BatchNormalization::from_config},
      {"SyncBatchNormalization", &SyncBatchNormalization::from_config},
      {"LayerNormalization", &LayerNormalization::from_config},
      {"Add", &Add::from_config},
      {"Subtract", &Subtract::from_config},
      {"Multiply", &Multiply::from_config},
      {"Concatenate", &Concatenate::from_config},
      // Models nest as layers (a Sequential augmentation block inside a functional model).
      {"Sequential", nested_model("Sequential")},
      {"Functional", nested_model("Functional")},
  };
  factories.merge(preprocessing_layer_factories());
  return factories;
}

}  // namespace strata
