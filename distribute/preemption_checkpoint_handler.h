// PreemptionCheckpointHandler: SIGTERM / SIGINT in a custom training loop, as fit() handles them
// (tf.distribute.experimental.PreemptionCheckpointHandler). While a handler lives, the two
// signals do not end the process: run(step) runs one distributed step (a function that calls
// strategy.run), and once the job has agreed to stop after it, calls `save` and throws
// TrainingInterrupted, whose signal() the program turns into its exit status (128 + signal, what
// schedulers expect of a preempted task; the apps' main does).
//
// Under MultiWorkerMirroredStrategy the agreement costs nothing extra: each worker's "signal
// received" flag travels with the all-gather that ends every step (Strategy::termination_request),
// so a signal to any one worker stops every worker after the same step, and every worker calls
// `save` there. Write the real files only where strategy.should_checkpoint() (the chief), the
// others to a temporary place or nowhere, as TensorFlow's handler does. A second signal ends the
// process at once.
//
//   distribute::PreemptionCheckpointHandler preemption(strategy, [&] {
//     if (strategy.should_checkpoint()) save_my_checkpoint(step);
//   });
//   for (; step < steps; ++step) {
//     preemption.run([&] { strategy.run(train_step, *iterator->next()); });
//   }
//
// Unlike TensorFlow's handler it manages no checkpoint files itself: `save` writes what the loop
// needs to resume (weights, optimizer state, its step), and the loop restores it on restart.
// A loop that prefers to stop by itself calls termination_request() after its own steps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "framework/strategy/strategy.h"

namespace strata {
class TerminationSignalScope;
}

namespace strata::distribute {

class PreemptionCheckpointHandler {
 public:
  // Catches SIGTERM and SIGINT from now on. `save` may be empty (nothing to save).
  PreemptionCheckpointHandler(Strategy& strategy, std::function<void()> save);
  ~PreemptionCheckpointHandler();  // the signals' previous handlers again
  PreemptionCheckpointHandler(const PreemptionCheckpointHandler&) = delete;
  PreemptionCheckpointHandler& operator=(const PreemptionCheckpointHandler&) = delete;

  // Runs `distributed_step` (exactly one strategy.run or other step of the strategy, so that the
  // answer below is the one every worker got). Then, when a worker received SIGTERM or SIGINT:
  // calls `save` and throws TrainingInterrupted (its signal(): this process's own signal when it
  // received one, else the one that stopped the job).
  void run(const std::function<void()>& distributed_step);
  // After a step of the strategy: whether to stop, and why (Strategy::termination_request).
  Strategy::TerminationRequest termination_request() const;
  // The run() calls that completed in this process.
  int64_t total_run_calls() const { return runs_; }

 private:
  Strategy& strategy_;
  std::function<void()> save_;
  std::unique_ptr<TerminationSignalScope> signals_;
  int64_t runs_ = 0;
};

}  // namespace strata::distribute
