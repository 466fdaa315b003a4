#include "layers/dropout.h"

#include "framework/core/random.h"
#include "framework/ops/nn_ops.h"

namespace strata {
namespace {
// SplitMix64 finaliser: decorrelates (seed, call) pairs into mask seeds.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

Dropout::Dropout(double rate, int64_t seed, const std::string& name)
    : Layer("dropout", name), rate_(rate), seed_(seed) {
  if (!(rate >= 0.0 && rate < 1.0)) {
    throw ValueError("Dropout: rate must be a float in [0, 1), got " + std::to_string(rate));
  }
}

Dropout::Dropout(Dropout&& other) noexcept
    : Layer(std::move(other)), rate_(other.rate_), seed_(other.seed_) {
  std::lock_guard<std::mutex> lock(other.calls_mutex_);
  calls_ = std::move(other.calls_);
}

Tensor Dropout::call(const Tensor& x, bool training) {
  if (!training || rate_ == 0.0) return x;
  int64_t seed = -1;
  if (seed_ >= 0) {
    const uint64_t stream = thread_random_stream();
    uint64_t call = 0;
    {
      std::lock_guard<std::mutex> lock(calls_mutex_);
      call = calls_[stream]++;
    }
    // Stream 0 (no strategy, replica 0) keeps the single-device sequence.
    const uint64_t key = uint64_t(seed_) * 0x9e3779b97f4a7c15ULL + call +
                         (stream == 0 ? 0 : mix(stream ^ 0xd1b54a32d192ed03ULL));
    seed = int64_t(mix(key) >> 1);  // non-negative
  }
  return dropout(x, float(rate_), seed);
}

Json Dropout::get_config() const {
  Json c = Layer::get_config();
  c.set("rate", rate_);
  c.set("seed", seed_ >= 0 ? Json(seed_) : Json());
  c.set("noise_shape", Json());
  return c;
}

std::shared_ptr<Layer> Dropout::from_config(const Json& c) {
  const Json seed = c.get("seed", Json());
  auto layer = std::make_shared<Dropout>(c.at("rate").as_double(), seed.is_null() ? -1 : seed.as_int(),
                                         c.get("name", "").as_string());
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
