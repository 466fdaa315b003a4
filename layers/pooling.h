// Pooling layers over NHWC inputs: keras.layers.MaxPooling2D, AveragePooling2D,
// GlobalAveragePooling2D and GlobalMaxPooling2D (channels_last only).
//
//   auto pool = std::make_shared<MaxPooling2D>(2);                 // 2x2, strides 2
//   auto pool3 = std::make_shared<MaxPooling2D>(3, 2, "same");     // pool_size, strides, padding
#pragma once

#include <optional>

#include "framework/model/layer.h"
#include "layers/layer_utils.h"

namespace strata {

// The shared part of MaxPooling2D and AveragePooling2D. strides default to pool_size (Keras'
// strides=None).
class Pooling2D : public Layer {
 public:
  Json get_config() const override;
  const IntPair& pool_size() const { return pool_size_; }
  const IntPair& strides() const { return strides_; }
  const std::string& padding() const { return padding_; }

 protected:
  Pooling2D(const std::string& base_name, const char* cls, IntPair pool_size,
            std::optional<IntPair> strides, const std::string& padding, const std::string& name);
  Tensor call(const Tensor& x, bool training) override;
  virtual Tensor pool(const Tensor& x) const = 0;
  // from_config's arguments: pool_size, strides (null -> pool_size), padding, name.
  struct Args {
    IntPair pool_size = 2;
    std::optional<IntPair> strides;
    std::string padding, name;
  };
  static Args args_from_config(const Json& config, const char* cls);

  IntPair pool_size_, strides_;
  std::string padding_;
};

class MaxPooling2D : public Pooling2D {
 public:
  STRATA_LAYER(MaxPooling2D)
  explicit MaxPooling2D(IntPair pool_size = 2, std::optional<IntPair> strides = std::nullopt,
                        const std::string& padding = "valid", const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "MaxPooling2D"; }

 protected:
  Tensor pool(const Tensor& x) const override;
};

// Averages only over non-padding elements under "same" padding (TensorFlow's rule).
class AveragePooling2D : public Pooling2D {
 public:
  STRATA_LAYER(AveragePooling2D)
  explicit AveragePooling2D(IntPair pool_size = 2, std::optional<IntPair> strides = std::nullopt,
                            const std::string& padding = "valid", const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "AveragePooling2D"; }

 protected:
  Tensor pool(const Tensor& x) const override;
};

// [N, H, W, C] -> [N, C] (or [N, 1, 1, C] with keepdims).
class GlobalPooling2D : public Layer {
 public:
  Json get_config() const override;
  bool keepdims() const { return keepdims_; }

 protected:
  GlobalPooling2D(const std::string& base_name, bool keepdims, const std::string& name)
      : Layer(base_name, name), keepdims_(keepdims) {}
  Tensor call(const Tensor& x, bool training) override;
  virtual Tensor reduce(const Tensor& x) const = 0;

  bool keepdims_;
};

class GlobalAveragePooling2D : public GlobalPooling2D {
 public:
  STRATA_LAYER(GlobalAveragePooling2D)
  explicit GlobalAveragePooling2D(bool keepdims = false, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "GlobalAveragePooling2D"; }

 protected:
  Tensor reduce(const Tensor& x) const override;
};

class GlobalMaxPooling2D : public GlobalPooling2D {
 public:
  STRATA_LAYER(GlobalMaxPooling2D)
  explicit GlobalMaxPooling2D(bool keepdims = false, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "GlobalMaxPooling2D"; }

 protected:
  Tensor reduce(const Tensor& x) const override;
};

}  // namespace strata
