#include "layers/preprocessing/preprocessing_utils.h"

#include "framework/core/random.h"
#include "framework/kernels_math/philox.h"

namespace strata::preprocessing {

std::vector<double> LayerRandom::uniform(size_t count) {
  GeneratorState s;
  if (seed_ >= 0) {
    s = {uint64_t(seed_), offset_};
    offset_ += count;
  } else {
    s = reserve_random(count);
  }
  std::vector<double> out(count);
  uint32_t r[4];
  for (size_t i = 0; i < count; ++i) {
    // The same mapping as random_uniform's CPU kernel: a seeded layer's first call draws what
    // random_uniform(shape, 0, 1, float64, seed) would.
    philox::block(s.offset + i, 0, s.seed, r);
    out[i] = philox::to_unit_double(r[0], r[1]);
  }
  return out;
}

ImageBatch to_image_batch(const Tensor& x, const std::string& layer) {
  if (x.rank() != 3 && x.rank() != 4) {
    throw ShapeError(layer + ": expected images of shape [batch, height, width, channels] or "
                     "[height, width, channels], got " + x.shape().to_string());
  }
  ImageBatch b;
  b.batched = x.rank() == 4;
  Tensor t = x.to(Device::cpu());
  if (t.dtype() != float32) t = t.cast(float32);  // Keras computes in the layer dtype
  if (!b.batched) t = t.reshape(Shape{1, t.dim(0), t.dim(1), t.dim(2)});
  b.data = t;
  b.n = t.dim(0); b.h = t.dim(1); b.w = t.dim(2); b.c = t.dim(3);
  return b;
}

Tensor from_image_batch(const Tensor& y, const ImageBatch& like) {
  return like.batched ? y : y.reshape(Shape{y.dim(1), y.dim(2), y.dim(3)});
}

Json seed_to_json(int64_t seed) { return seed >= 0 ? Json(seed) : Json(); }

int64_t seed_from_json(const Json& c) {
  const Json s = c.get("seed", Json());
  return s.is_null() ? -1 : s.as_int();
}

Json doubles_to_json(const std::vector<double>& v) {
  Json a = Json::array();
  for (double d : v) a.push_back(d);
  return a;
}

std::vector<double> doubles_from_json(const Json& j) {
  if (j.is_number()) return {j.as_double()};
  std::vector<double> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(j.at(i).as_double());
  return out;
}

void check_channels_last(const Json& c, const std::string& layer) {
  const Json f = c.get("data_format", Json());
  if (!f.is_null() && f.as_string() != "channels_last") {
    throw ValueError(layer + ": only data_format=\"channels_last\" (NHWC) is supported, got \"" +
                     f.as_string() + "\"");
  }
}

}  // namespace strata::preprocessing
