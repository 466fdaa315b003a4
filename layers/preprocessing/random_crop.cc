#include "layers/preprocessing/random_crop.h"

#include <algorithm>
#include <cstring>

namespace strata {

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t seed, const std::string& name)
    : Layer("random_crop", name), height_(height), width_(width), random_(seed) {
  if (height <= 0 || width <= 0) {
    throw ValueError("RandomCrop: height and width must be positive, got height=" +
                     std::to_string(height) + " width=" + std::to_string(width));
  }
}

Tensor RandomCrop::call(const Tensor& x, bool training) {
  const preprocessing::ImageBatch b = preprocessing::to_image_batch(x, "RandomCrop '" + name() + "'");
  if (b.h < height_ || b.w < width_) {
    throw ShapeError("RandomCrop '" + name() + "': images of " + std::to_string(b.h) + "x" +
                     std::to_string(b.w) + " are smaller than the crop " +
                     std::to_string(height_) + "x" + std::to_string(width_) +
                     " (resizing up is not supported)");
  }
  const int64_t dh = b.h - height_, dw = b.w - width_;
  std::vector<double> u;
  if (training) u = random_.uniform(size_t(2 * b.n));
  Tensor y = Tensor::empty(Shape{b.n, height_, width_, b.c}, float32);
  const float* src = b.data.data<float>();
  float* dst = y.data<float>();
  const size_t out_row = size_t(width_ * b.c);
  for (int64_t n = 0; n < b.n; ++n) {
    // Offsets uniform in [0, dh] (inclusive), or centred (floor) at inference.
    const int64_t top = training ? std::min(dh, int64_t(u[size_t(2 * n)] * double(dh + 1))) : dh / 2;
    const int64_t left = training ? std::min(dw, int64_t(u[size_t(2 * n + 1)] * double(dw + 1))) : dw / 2;
    for (int64_t i = 0; i < height_; ++i) {
      const float* in = src + ((n * b.h + top + i) * b.w + left) * b.c;
      std::memcpy(dst + (n * height_ + i) * int64_t(out_row), in, sizeof(float) * out_row);
    }
  }
  return preprocessing::from_image_batch(y, b);
}

Json RandomCrop::get_config() const {
  Json c = Layer::get_config();
  c.set("height", height_);
  c.set("width", width_);
  c.set("seed", preprocessing::seed_to_json(random_.seed()));
  c.set("data_format", "channels_last");
  return c;
}

std::shared_ptr<Layer> RandomCrop::from_config(const Json& c) {
  preprocessing::check_channels_last(c, "RandomCrop");
  auto layer = std::make_shared<RandomCrop>(c.at("height").as_int(), c.at("width").as_int(),
                                            preprocessing::seed_from_json(c),
                                            c.get("name", "").as_string());
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
