#include "step_timer.h"

#include <algorithm>

namespace strata::bench {

void synchronize(const std::vector<Device>& devices) {
  for (const Device& d : devices) {
    if (d.type == DeviceType::kCUDA) gpu::synchronize(d);
  }
}

void StepTimes::add(double interval_ms, int64_t steps) {
  if (steps <= 0) return;
  intervals_.push_back({interval_ms / double(steps), steps});
  steps_ += steps;
  total_ms_ += interval_ms;
}

double StepTimes::mean() const { return steps_ > 0 ? total_ms_ / double(steps_) : 0.0; }

double StepTimes::median() const {
  if (intervals_.empty()) return 0.0;
  std::vector<Interval> sorted = intervals_;
  std::sort(sorted.begin(), sorted.end(),
            [](const Interval& a, const Interval& b) { return a.ms_per_step < b.ms_per_step; });
  // The step at index steps_ / 2 of the sorted steps (the upper median, as before).
  int64_t seen = 0;
  for (const Interval& i : sorted) {
    seen += i.steps;
    if (seen > steps_ / 2) return i.ms_per_step;
  }
  return sorted.back().ms_per_step;
}

double StepTimes::best() const {
  double best = 0.0;
  for (const Interval& i : intervals_) {
    if (best == 0.0 || i.ms_per_step < best) best = i.ms_per_step;
  }
  return best;
}

void StepTimer::start() {
  synchronize(devices_);
  last_ = std::chrono::steady_clock::now();
  last_batch_ = -1;
}

void StepTimer::on_train_batch_end(int batch, const Logs& logs) {
  synchronize(devices_);
  const auto now = std::chrono::steady_clock::now();
  times_.add(std::chrono::duration<double, std::milli>(now - last_).count(), batch - last_batch_);
  last_ = now;
  last_batch_ = batch;
}

}  // namespace strata::bench
