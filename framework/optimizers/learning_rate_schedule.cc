#include "framework/optimizers/learning_rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "framework/core/error.h"

namespace strata::optimizers {
namespace {

// Shortest round-tripping text of a double (integers without an exponent).
std::string number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  // Prefer the short form when it round-trips (0.1 rather than 0.10000000000000001).
  for (int p = 1; p < 17; ++p) {
    std::ostringstream shorter;
    shorter.precision(p);
    shorter << v;
    if (std::stod(shorter.str()) == v) return shorter.str();
  }
  return s;
}

template <typename T>
std::string list(const std::vector<T>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + number(double(xs[i]));
  return s + "]";
}

void check_decay_steps(const char* schedule, int64_t decay_steps) {
  if (decay_steps <= 0) {
    throw ValueError(std::string(schedule) + ": decay_steps must be > 0, got " +
                     std::to_string(decay_steps));
  }
}

}  // namespace

// ---- PiecewiseConstantDecay ----

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<int64_t> boundaries,
                                               std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  if (values_.size() != boundaries_.size() + 1) {
    throw ValueError("PiecewiseConstantDecay: values must have one more element than "
                     "boundaries; got boundaries=" + list(boundaries_) + " (" +
                     std::to_string(boundaries_.size()) + ") and values=" + list(values_) + " (" +
                     std::to_string(values_.size()) + ")");
  }
  if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
    throw ValueError("PiecewiseConstantDecay: boundaries must be increasing, got " +
                     list(boundaries_));
  }
}

double PiecewiseConstantDecay::operator()(int64_t step) const {
  // The first boundary >= step: Keras uses values[i] while step <= boundaries[i].
  const auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), step);
  return values_[size_t(it - boundaries_.begin())];
}

std::string PiecewiseConstantDecay::get_config() const {
  return "{\"boundaries\": " + list(boundaries_) + ", \"values\": " + list(values_) +
         ", \"name\": \"PiecewiseConstantDecay\"}";
}

// ---- ExponentialDecay ----

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps,
                                   double decay_rate, bool staircase)
    : initial_learning_rate_(initial_learning_rate),
      decay_steps_(decay_steps),
      decay_rate_(decay_rate),
      staircase_(staircase) {
  check_decay_steps("ExponentialDecay", decay_steps);
}

double ExponentialDecay::operator()(int64_t step) const {
  double p = double(step) / double(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_learning_rate_ * std::pow(decay_rate_, p);
}

std::string ExponentialDecay::get_config() const {
  return "{\"initial_learning_rate\": " + number(initial_learning_rate_) +
         ", \"decay_steps\": " + std::to_string(decay_steps_) +
         ", \"decay_rate\": " + number(decay_rate_) +
         ", \"staircase\": " + (staircase_ ? "true" : "false") +
         ", \"name\": \"ExponentialDecay\"}";
}

// ---- CosineDecay ----

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha,
                         std::optional<double> warmup_target, int64_t warmup_steps)
    : initial_learning_rate_(initial_learning_rate),
      decay_steps_(decay_steps),
      alpha_(alpha),
      warmup_target_(warmup_target),
      warmup_steps_(warmup_steps) {
  check_decay_steps("CosineDecay", decay_steps);
  if (warmup_steps < 0) {
    throw ValueError("CosineDecay: warmup_steps must be >= 0, got " +
                     std::to_string(warmup_steps));
  }
}

double CosineDecay::operator()(int64_t step) const {
  // Half a cosine from `from` down to alpha * from over decay_steps, flat afterwards.
  const auto decay = [&](double s, double from) {
    const double fraction = std::min(s, double(decay_steps_)) / double(decay_steps_);
    const double cosine = 0.5 * (1.0 + std::cos(M_PI * fraction));
    return from * ((1.0 - alpha_) * cosine + alpha_);
  };
  const double s = double(std::max<int64_t>(step, 0));
  if (!warmup_target_) return decay(s, initial_learning_rate_);
  if (s < double(warmup_steps_)) {
    const double fraction = s / double(warmup_steps_);
    return initial_learning_rate_ + (*warmup_target_ - initial_learning_rate_) * fraction;
  }
  return decay(s - double(warmup_steps_), *warmup_target_);
}

std::string CosineDecay::get_config() const {
  return "{\"initial_learning_rate\": " + number(initial_learning_rate_) +
         ", \"decay_steps\": " + std::to_string(decay_steps_) + ", \"alpha\": " + number(alpha_) +
         ", \"name\": \"CosineDecay\", \"warmup_target\": " +
         (warmup_target_ ? number(*warmup_target_) : std::string("null")) +
         ", \"warmup_steps\": " + std::to_string(warmup_steps_) + "}";
}

// ---- LearningRate ----

LearningRate::LearningRate(double value) : value_(value) {
  if (!(value >= 0.0) || !std::isfinite(value)) {
    throw ValueError("learning_rate must be a finite number >= 0, got " + number(value));
  }
}

LearningRate::LearningRate(std::shared_ptr<LearningRateSchedule> schedule)
    : schedule_(std::move(schedule)) {
  if (!schedule_) throw ValueError("learning_rate: the LearningRateSchedule is null");
}

}  // namespace strata::optimizers
