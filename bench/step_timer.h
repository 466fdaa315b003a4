// Timing training steps on devices that run asynchronously. A GPU step returns to the host as
// soon as its kernels are queued, so a clock read then measures the queueing, not the work: the
// clock starts and stops only after the devices have finished everything queued, and inside
// model.fit the steps are timed in groups between the points where fit reads its metrics back
// (every steps_per_execution steps) instead of one host wait per step.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include <strata/strata.h>

namespace strata::bench {

// Waits until every GPU among `devices` has run what is queued on it (CPUs: nothing to wait for).
void synchronize(const std::vector<Device>& devices);

// Milliseconds per step over timed intervals. An interval of n steps counts as n steps at its
// mean, so mean() is total time / total steps; median() and best() are over steps (with
// one-step intervals: over the individual steps).
class StepTimes {
 public:
  void add(double interval_ms, int64_t steps);
  int64_t steps() const { return steps_; }
  double total_ms() const { return total_ms_; }
  double mean() const;
  double median() const;
  double best() const;

 private:
  struct Interval {
    double ms_per_step;
    int64_t steps;
  };
  std::vector<Interval> intervals_;
  int64_t steps_ = 0;
  double total_ms_ = 0;
};

// A fit() callback that times its steps on `devices`: call start() right before fit(); at each
// batch end fit reports (every steps_per_execution steps and at an epoch's last step) it waits
// for the devices and records the interval since the previous report.
class StepTimer : public Callback {
 public:
  explicit StepTimer(std::vector<Device> devices) : devices_(std::move(devices)) {}

  // Waits for the devices, then starts the clock.
  void start();
  void on_epoch_begin(int epoch, const Logs& logs) override { last_batch_ = -1; }
  void on_train_batch_end(int batch, const Logs& logs) override;
  const StepTimes& times() const { return times_; }
  // Seconds from start() to the last report.
  double elapsed_s() const { return times_.total_ms() / 1e3; }

 private:
  std::vector<Device> devices_;
  std::chrono::steady_clock::time_point last_;
  int last_batch_ = -1;
  StepTimes times_;
};

}  // namespace strata::bench
