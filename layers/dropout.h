// Dropout: during training (training=true) zeroes inputs with probability `rate` and scales the
// rest by 1/(1-rate); inference is the identity. Like keras.layers.Dropout.
//
// seed < 0 draws masks from the global generator (set_random_seed), as strata::dropout does. A
// seed >= 0 makes the layer's masks a fixed sequence (Keras' SeedGenerator): two layers with the
// same seed drop the same elements call for call, yet successive calls of one layer differ, so
// training does not drop the same units at every step.
#pragma once

#include <mutex>
#include <unordered_map>

#include "framework/model/layer.h"

namespace strata {

class Dropout : public Layer {
 public:
  STRATA_LAYER(Dropout)
  explicit Dropout(double rate, int64_t seed = -1, const std::string& name = "");
  // For STRATA_LAYER's move (a Dropout constructed in place): everything but the mutex moves.
  Dropout(Dropout&& other) noexcept;
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Dropout"; }
  Json get_config() const override;
  double rate() const { return rate_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  double rate_;
  int64_t seed_;
  // Training calls so far per random stream (replicas call the layer concurrently, each on its
  // own stream; see thread_random_stream()), to derive each mask's seed.
  std::mutex calls_mutex_;
  std::unordered_map<uint64_t, uint64_t> calls_;
};

}  // namespace strata
