// Internal: what an elastic MultiWorkerMirroredStrategy keeps between steps (its member
// functions are in multi_worker_mirrored_elastic.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "distribute/multi_worker_mirrored_strategy.h"
#include "framework/core/random.h"
#include "framework/core/tensor.h"

namespace strata::distribute {

struct MultiWorkerMirroredStrategy::Elastic {
  // Every variable the strategy made, in creation order (the same on every worker running the
  // same program): what a synchronization carries.
  std::mutex variables_mutex;
  std::vector<std::weak_ptr<ReplicatedVariable>> variables;
  // Whether this worker holds the job's state (false until its first synchronization).
  bool synced = false;
  // Steps this worker completed (the job's count once synchronized).
  int64_t completed = 0;
  // Set by a step's state exchange when some worker has heard of a newer membership: every
  // worker re-forms before the next training step (they all read the same exchange).
  bool reform_pending = false;
  // Inside run_elastic_step: the inner run_replicas call runs once, without retrying.
  bool in_step = false;
  // The loops entered (enter_training_loop; fit's validation nests in fit).
  std::vector<const LoopPosition*> loops;
  // The innermost loop's place (null outside any loop: a custom loop's steps).
  const LoopPosition* position() const { return loops.empty() ? nullptr : loops.back(); }
  // This worker's state at the start of the step in flight: copies of the variables' values
  // (on the host, in their own dtypes: a copy per step, no conversion), the generator, and
  // fit's place (empty outside fit's training steps).
  std::vector<Tensor> snapshot;
  GeneratorState snapshot_generator;
  std::vector<int64_t> snapshot_position;
  // The replica count on_replicas_changed was last called with (0: never).
  int replicas_told = 0;
  ElasticCounts counts;
  std::function<void()> synchronization_hook;  // tests
};

}  // namespace strata::distribute
