// RandomFlip: flips each image of a batch horizontally and/or vertically with probability 1/2
// each, during training only (identity at inference), like keras.layers.RandomFlip.
// Images are NHWC (a batch) or HWC (one image); integer images are cast to float32.
//
//   auto flip = std::make_shared<RandomFlip>("horizontal");
//   Tensor augmented = (*flip)(images, /*training=*/true);
//
// Randomness: seed >= 0 gives the layer its own reproducible stream (successive calls differ);
// seed < 0 (Keras' seed=None) draws from the global generator (set_random_seed).
#pragma once

#include "framework/model/layer.h"
#include "layers/preprocessing/preprocessing_utils.h"

namespace strata {

class RandomFlip : public Layer {
 public:
  STRATA_LAYER(RandomFlip)
  // mode: "horizontal_and_vertical" (Keras' default), "horizontal" or "vertical".
  explicit RandomFlip(const std::string& mode = "horizontal_and_vertical", int64_t seed = -1,
                      const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "RandomFlip"; }
  Json get_config() const override;
  const std::string& mode() const { return mode_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::string mode_;
  bool horizontal_, vertical_;
  preprocessing::LayerRandom random_;
};

}  // namespace strata
