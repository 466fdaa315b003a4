// Helpers shared by the preprocessing layers: per-layer random streams, image-batch views, and
// small config (JSON) conversions. Not part of the public API (installed because the layers'
// headers include it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/config/json.h"
#include "framework/core/tensor.h"

namespace strata::preprocessing {

// Keras 3's SeedGenerator for a random layer: with seed >= 0 the layer draws from its own
// Philox stream keyed by the seed (so two layers built with the same seed augment identically,
// and successive calls differ); with seed < 0 it takes counters from the global generator, so
// set_random_seed() makes a run reproducible.
class LayerRandom {
 public:
  explicit LayerRandom(int64_t seed) : seed_(seed) {}
  // `count` uniform doubles in [0, 1) for one call.
  std::vector<double> uniform(size_t count);
  int64_t seed() const { return seed_; }

 private:
  int64_t seed_;
  uint64_t offset_ = 0;
};

// A batch of NHWC images as contiguous float32. A single image [H, W, C] is viewed as a batch
// of one (`batched` false), as Keras' image layers accept both.
struct ImageBatch {
  Tensor data;  // [N, H, W, C] float32, contiguous
  bool batched = true;
  int64_t n = 0, h = 0, w = 0, c = 0;
};
ImageBatch to_image_batch(const Tensor& x, const std::string& layer);
// Back to the caller's rank: drops the batch axis again for a single image.
Tensor from_image_batch(const Tensor& y, const ImageBatch& like);

// Config helpers: an optional seed is null in Keras configs when unset.
Json seed_to_json(int64_t seed);
int64_t seed_from_json(const Json& c);
Json doubles_to_json(const std::vector<double>& v);
std::vector<double> doubles_from_json(const Json& j);  // a number is read as one element
// Keras' image layers only accept "channels_last" here (Strata's images are NHWC).
void check_channels_last(const Json& c, const std::string& layer);

}  // namespace strata::preprocessing
