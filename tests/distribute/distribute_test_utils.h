// Shared by the strategy tests: a small Conv2D/Dense classifier, its data, and comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata::testing {

// "sgd" and "sgd_momentum": SGD(0.1, momentum 0.9); any other name: optimizers::get(name).
inline std::shared_ptr<optimizers::Optimizer> test_optimizer(const std::string& name) {
  if (name == "sgd" || name == "sgd_momentum") return std::make_shared<optimizers::SGD>(0.1, 0.9);
  return optimizers::get(name);
}

// Conv2D(4, 3x3; no bias before a normalization) -> [BatchNormalization | SyncBatchNormalization]
// -> ReLU -> Flatten -> Dense(8, relu) -> Dense(3), on 6x6x1 images, compiled with `optimizer`.
// Same seed, same weights.
enum class Norm { kNone, kBatchNorm, kSyncBatchNorm };
inline std::shared_ptr<Sequential> small_classifier(const std::string& optimizer = "sgd",
                                                    Norm norm = Norm::kNone) {
  set_random_seed(1234);
  std::vector<std::shared_ptr<Layer>> layers;
  // No bias before a normalization (Keras practice): its gradient is 0 but for rounding, which
  // Adam magnifies, so it ended 1.5e-5 apart between runs split differently on a 16-core GPU
  // machine (2026-11-28), whatever else agreed.
  layers.push_back(std::make_shared<Conv2D>(4, 3, Conv2DOptions().use_bias(norm == Norm::kNone)));
  if (norm == Norm::kBatchNorm) layers.push_back(std::make_shared<BatchNormalization>());
  if (norm == Norm::kSyncBatchNorm) layers.push_back(std::make_shared<SyncBatchNormalization>());
  layers.push_back(std::make_shared<ReLU>());
  layers.push_back(std::make_shared<Flatten>());
  layers.push_back(std::make_shared<Dense>(8, "relu"));
  layers.push_back(std::make_shared<Dense>(3));
  auto model = std::make_shared<Sequential>(layers);
  model->build({-1, 6, 6, 1});
  std::shared_ptr<optimizers::Optimizer> opt = test_optimizer(optimizer);
  model->compile(CompileOptions()
                     .optimizer(opt)
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                     .metrics({"accuracy"}));
  return model;
}

// {"/cpu:0", ..., "/cpu:<n-1>"}: the first n logical CPU devices.
inline std::vector<std::string> cpus(int n) {
  std::vector<std::string> devices;
  for (int r = 0; r < n; ++r) devices.push_back("/cpu:" + std::to_string(r));
  return devices;
}

struct ClassifierData {
  Tensor x, y;
};
inline ClassifierData classifier_data(int64_t n, int64_t seed = 7) {
  Tensor x = random_normal({n, 6, 6, 1}, 0.0, 1.0, float32, seed);
  // Labels that depend on the input, so there is something to learn.
  std::vector<float> xs = x.to_vector<float>();
  std::vector<int64_t> ys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int k = 0; k < 36; ++k) s += xs[size_t(i * 36 + k)] * float((k % 5) - 2);
    ys[size_t(i)] = s > 1.5f ? 2 : s < -1.5f ? 0 : 1;
  }
  return {x, Tensor::from_vector(ys, Shape{n})};
}

// Element-wise |a - b| <= atol + rtol * |b| over every weight.
inline void expect_weights_near(const std::vector<Tensor>& a, const std::vector<Tensor>& b,
                                double rtol, double atol = 1e-6) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t w = 0; w < a.size(); ++w) {
    ASSERT_EQ(a[w].shape(), b[w].shape()) << "weight " << w;
    const std::vector<float> va = a[w].cast(float32).to_vector<float>();
    const std::vector<float> vb = b[w].cast(float32).to_vector<float>();
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < va.size(); ++i) {
      const double d = std::fabs(double(va[i]) - double(vb[i]));
      if (d > atol + rtol * std::fabs(double(vb[i]))) ++bad;
      worst = std::max(worst, d);
    }
    EXPECT_EQ(bad, 0u) << "weight " << w << ": " << bad << " of " << va.size()
                       << " elements differ, worst by " << worst;
  }
}

// Runs body(rank, communicator) on one thread per rank of `group`; rethrows the first error.
inline void on_ranks(distribute::CommunicatorGroup& group,
                     const std::function<void(int, distribute::Communicator&)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(size_t(group.world_size()));
  for (int r = 0; r < group.world_size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, *group.communicator(r));
      } catch (...) {
        errors[size_t(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace strata::testing
