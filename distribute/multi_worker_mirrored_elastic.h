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
  // The loops entered (enter_training_loop; fit's validation nests in fit): the innermost's
  // place is `position` (null outside any loop: a custom loop's steps).
  std::vector<const LoopPosition*> loops;
  const LoopPosition* position = nullptr;
  // This worker's state at the start of the step in flight: copies of the variables' values
  // (on the host, in their own dtypes: a copy per step, no conversion), the generator, and
  // fit's place (empty outside fit's training steps). snapshot_words: the values' count + 2
  // (the generator), what a synchronization sends of it as float64 bits.
  std::vector<Tensor> snapshot;
  GeneratorState snapshot_generator;
  int64_t snapshot_words = 0;
  std::vector<int64_t> snapshot_position;
  ElasticCounts counts;
  std::function<void()> synchronization_hook;  // tests
};

}  // namespace strata::distribute
