#include "layers/preprocessing/random_flip.h"

#include <cstring>

namespace strata {

RandomFlip::RandomFlip(const std::string& mode, int64_t seed, const std::string& name)
    : Layer("random_flip", name),
      mode_(mode),
      horizontal_(mode == "horizontal" || mode == "horizontal_and_vertical"),
      vertical_(mode == "vertical" || mode == "horizontal_and_vertical"),
      random_(seed) {
  if (!horizontal_ && !vertical_) {
    throw ValueError("RandomFlip: invalid mode \"" + mode + "\"; expected one of "
                     "\"horizontal\", \"vertical\", \"horizontal_and_vertical\"");
  }
}

Tensor RandomFlip::call(const Tensor& x, bool training) {
  if (!training) return x;
  const preprocessing::ImageBatch b = preprocessing::to_image_batch(x, "RandomFlip '" + name() + "'");
  // Two draws per image (horizontal, vertical) whatever the mode, so the stream's layout does
  // not depend on it.
  const std::vector<double> u = random_.uniform(size_t(2 * b.n));
  Tensor y = Tensor::empty(b.data.shape(), float32);
  const float* src = b.data.data<float>();
  float* dst = y.data<float>();
  const int64_t row = b.w * b.c, image = b.h * row;
  for (int64_t n = 0; n < b.n; ++n) {
    const bool fh = horizontal_ && u[size_t(2 * n)] < 0.5;
    const bool fv = vertical_ && u[size_t(2 * n + 1)] < 0.5;
    const float* in = src + n * image;
    float* out = dst + n * image;
    for (int64_t i = 0; i < b.h; ++i) {
      const float* in_row = in + (fv ? b.h - 1 - i : i) * row;
      float* out_row = out + i * row;
      if (!fh) {
        std::memcpy(out_row, in_row, sizeof(float) * size_t(row));
        continue;
      }
      for (int64_t j = 0; j < b.w; ++j) {
        std::memcpy(out_row + j * b.c, in_row + (b.w - 1 - j) * b.c, sizeof(float) * size_t(b.c));
      }
    }
  }
  return preprocessing::from_image_batch(y, b);
}

Json RandomFlip::get_config() const {
  Json c = Layer::get_config();
  c.set("mode", mode_);
  c.set("seed", preprocessing::seed_to_json(random_.seed()));
  c.set("data_format", "channels_last");
  return c;
}

std::shared_ptr<Layer> RandomFlip::from_config(const Json& c) {
  preprocessing::check_channels_last(c, "RandomFlip");
  auto layer = std::make_shared<RandomFlip>(c.get("mode", "horizontal_and_vertical").as_string(),
                                            preprocessing::seed_from_json(c),
                                            c.get("name", "").as_string());
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
