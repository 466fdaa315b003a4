// The seam through which Model::fit / evaluate on a DatasetCreator reach a strategy whose steps
// run in other processes (distribute/parameter_server/: ParameterServerStrategy). framework/ does
// not know how the steps get there; the strategy returns one of these from remote_training().
// The epoch loop, callbacks, validation and checkpoints stay in the trainer, on this task (the
// coordinator): only the training steps and their datasets are remote.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/callbacks/logs.h"
#include "framework/data/dataset.h"

namespace strata {
class Model;
}

namespace strata::distribute {

// One fit(): the model set up on the workers and their per-worker datasets made.
class RemoteTrainingSession {
 public:
  virtual ~RemoteTrainingSession() = default;
  // Schedules `steps` training steps of (0-based) `epoch` on the workers, waits until all have
  // run and returns the logs of the epoch's last scheduled step (the metrics its worker
  // accumulated over its own steps of the epoch, as TensorFlow reports). A step's error is
  // raised here. When SIGTERM / SIGINT arrives meanwhile (TerminationSignalScope::pending), it
  // stops at a step boundary: the steps not started are dropped, the running ones waited for,
  // and it returns nullopt (the trainer then lets callbacks save on preemption).
  virtual std::optional<Logs> run_epoch(int epoch, int64_t steps) = 0;
};

class RemoteTraining {
 public:
  virtual ~RemoteTraining() = default;
  // Starts remote training of `model` (created and compiled in the strategy's scope) over the
  // per-worker datasets made by the registered dataset function `dataset_function`.
  virtual std::unique_ptr<RemoteTrainingSession> start_training(
      Model& model, const std::string& dataset_function) = 0;
  // The registered dataset function's dataset for this task alone (one input pipeline), for what
  // runs here: evaluate(DatasetCreator).
  virtual data::Dataset local_dataset(const std::string& dataset_function) = 0;
  // Exact evaluation (CompileOptions::pss_evaluation_shards): the dataset of one input pipeline
  // cut into `num_shards` shards (kAutoEvaluationShards: 5 per worker), shard k evaluated whole
  // by one closure on a worker, with the model's compiled metrics reset first; returns, per
  // shard, the values of the metrics' state variables in Model::metrics() order. A shard whose
  // worker fails runs again elsewhere from scratch, so each counts exactly once.
  virtual std::vector<std::vector<Tensor>> evaluate_shards(Model& model,
                                                           const std::string& dataset_function,
                                                           int64_t num_shards) = 0;
};

}  // namespace strata::distribute
