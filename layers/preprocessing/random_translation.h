// RandomTranslation: shifts each image of a batch by a random fraction of its height and width,
// during training only (identity at inference), like keras.layers.RandomTranslation.
// A factor f means a shift uniform in [-f, f] of the size; a pair {lower, upper} gives the
// range directly (positive = down / right). Pixels shifted in come from fill_mode:
//   "reflect"  (d c b a | a b c d | d c b a)   Keras' default
//   "wrap"     (a b c d | a b c d | a b c d)
//   "nearest"  (a a a a | a b c d | d d d d)
//   "constant" (k k k k | a b c d | k k k k)   k = fill_value
// interpolation "bilinear" (default) or "nearest". Fill rules apply to each sampled pixel index
// (at image borders TF's bilinear sampler may differ by a fraction of a pixel).
// Images are NHWC (a batch) or HWC (one image); integer images are cast to float32.
#pragma once

#include <utility>

#include "framework/model/layer.h"
#include "layers/preprocessing/preprocessing_utils.h"

namespace strata {

struct RandomTranslationOptions {
  std::string fill_mode_ = "reflect";
  std::string interpolation_ = "bilinear";
  double fill_value_ = 0.0;
  int64_t seed_ = -1;  // < 0: the global generator
  std::string name_;

  RandomTranslationOptions& fill_mode(std::string m) { fill_mode_ = std::move(m); return *this; }
  RandomTranslationOptions& interpolation(std::string i) { interpolation_ = std::move(i); return *this; }
  RandomTranslationOptions& fill_value(double v) { fill_value_ = v; return *this; }
  RandomTranslationOptions& seed(int64_t s) { seed_ = s; return *this; }
  RandomTranslationOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class RandomTranslation : public Layer {
 public:
  STRATA_LAYER(RandomTranslation)
  using Range = std::pair<double, double>;  // {lower, upper}, fractions in [-1, 1]
  // Keras' factor: a number f (the range [-f, f]) or a {lower, upper} pair.
  struct Factor {
    Factor(double f) : range{-f, f}, scalar(true) {}           // NOLINT: implicit, as in Keras
    Factor(Range r) : range(r), scalar(false) {}               // NOLINT
    Range range;
    bool scalar;
  };
  RandomTranslation(Factor height_factor, Factor width_factor,
                    const RandomTranslationOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "RandomTranslation"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  Range height_, width_;
  bool height_scalar_, width_scalar_;  // given as one number (config writes it back so)
  RandomTranslationOptions options_;
  int fill_;  // index of fill_mode
  preprocessing::LayerRandom random_;
};

}  // namespace strata
