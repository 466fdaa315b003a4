// Learning-rate schedules (keras.optimizers.schedules): a schedule maps the optimizer's step
// count (its `iterations` before the update) to the learning rate for that step.
//
//   auto schedule = std::make_shared<optimizers::ExponentialDecay>(0.1, 1000, 0.96);
//   optimizers::SGD sgd(schedule);
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata::optimizers {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  // The learning rate at 0-based `step`.
  virtual double operator()(int64_t step) const = 0;
  // The constructor arguments as a JSON object, e.g. {"initial_learning_rate": 0.1, ...}.
  virtual std::string get_config() const = 0;
  // The Keras class name, e.g. "ExponentialDecay".
  virtual std::string name() const = 0;
};

// values[0] up to and including step boundaries[0], values[1] up to boundaries[1], ...,
// values.back() after the last boundary.
class PiecewiseConstantDecay : public LearningRateSchedule {
 public:
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values);
  double operator()(int64_t step) const override;
  std::string get_config() const override;
  std::string name() const override { return "PiecewiseConstantDecay"; }

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

// initial_learning_rate * decay_rate ^ (step / decay_steps); with staircase the exponent is
// floored, so the rate drops in steps every decay_steps.
class ExponentialDecay : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                   bool staircase = false);
  double operator()(int64_t step) const override;
  std::string get_config() const override;
  std::string name() const override { return "ExponentialDecay"; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// Keras 3's CosineDecay: with a warmup_target, the rate first rises linearly from
// initial_learning_rate to warmup_target over warmup_steps; then it follows a half cosine from
// its peak (warmup_target, else initial_learning_rate) down to alpha * peak over decay_steps, and
// stays there.
class CosineDecay : public LearningRateSchedule {
 public:
  CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha = 0.0,
              std::optional<double> warmup_target = std::nullopt, int64_t warmup_steps = 0);
  double operator()(int64_t step) const override;
  std::string get_config() const override;
  std::string name() const override { return "CosineDecay"; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double alpha_;
  std::optional<double> warmup_target_;
  int64_t warmup_steps_;
};

// An optimizer's learning_rate argument: a constant or a schedule, as in Keras.
class LearningRate {
 public:
  LearningRate(double value);  // NOLINT: implicit, so Adam(1e-3) reads like Keras
  LearningRate(std::shared_ptr<LearningRateSchedule> schedule);  // NOLINT
  template <typename S>
    requires std::derived_from<S, LearningRateSchedule>
  LearningRate(std::shared_ptr<S> schedule)  // NOLINT
      : LearningRate(std::shared_ptr<LearningRateSchedule>(std::move(schedule))) {}

  bool is_schedule() const { return schedule_ != nullptr; }
  const std::shared_ptr<LearningRateSchedule>& schedule() const { return schedule_; }
  double at(int64_t step) const { return schedule_ ? (*schedule_)(step) : value_; }

 private:
  double value_ = 0.0;
  std::shared_ptr<LearningRateSchedule> schedule_;
};

}  // namespace strata::optimizers
