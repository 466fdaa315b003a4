// RandomCrop: crops each image of a batch to (height, width), like keras.layers.RandomCrop.
// Training: at a random offset drawn per image; inference: the centred window (Keras 2's rule;
// Keras 3 resizes the largest centred crop instead, which equals it when the aspect ratios
// match). Inputs smaller than the target are rejected (Keras would resize them up).
// Images are NHWC (a batch) or HWC (one image); integer images are cast to float32.
//
//   auto crop = std::make_shared<RandomCrop>(32, 32);   // after padding CIFAR images to 40x40
#pragma once

#include "framework/model/layer.h"
#include "layers/preprocessing/preprocessing_utils.h"

namespace strata {

class RandomCrop : public Layer {
 public:
  STRATA_LAYER(RandomCrop)
  RandomCrop(int64_t height, int64_t width, int64_t seed = -1, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "RandomCrop"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t height_, width_;
  preprocessing::LayerRandom random_;
};

}  // namespace strata
