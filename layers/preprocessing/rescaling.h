// Rescaling: y = x * scale + offset, like keras.layers.Rescaling. Integer inputs (uint8 images)
// are cast to float32 first, as Keras computes in the layer's dtype.
//
//   Rescaling r(1.0 / 255);              // [0, 255] -> [0, 1]
//   Rescaling s(1.0 / 127.5, -1.0);      // [0, 255] -> [-1, 1]
#pragma once

#include "framework/model/layer.h"

namespace strata {

class Rescaling : public Layer {
 public:
  STRATA_LAYER(Rescaling)
  explicit Rescaling(double scale, double offset = 0.0, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "Rescaling"; }
  Json get_config() const override;
  double scale() const { return scale_; }
  double offset() const { return offset_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  double scale_, offset_;
};

}  // namespace strata
