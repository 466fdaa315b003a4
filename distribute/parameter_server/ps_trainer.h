// fit / evaluate on a DatasetCreator under ParameterServerStrategy: the strategy's
// RemoteTraining (framework/strategy/remote_training.h). TensorFlow's fit with a
// _cluster_coordinator:
//
//   - fit uses the ClusterCoordinator that lives for the strategy (made by the user), or makes
//     one for the fit's duration;
//   - set_model(model): every worker rebuilds the model from its Keras and compile configs;
//   - create_per_worker_dataset(DatasetCreator's function);
//   - per epoch, steps_per_epoch closures of the library's train step (kFitTrainStep), then
//     join(); the epoch's logs are those of its last scheduled step (a RemoteValue fetched at the
//     epoch's end, as TensorFlow's): the metrics that step's worker accumulated over its own
//     steps of the epoch (each worker resets its metrics at its first step of an epoch).
//
// evaluate(DatasetCreator) runs on the coordinator over the registered function's dataset for
// one input pipeline (DatasetContext{0, 1}), unless the model was compiled with
// pss_evaluation_shards: then it is TensorFlow's exact evaluation (evaluate_shards), the shards
// evaluated as closures on the workers and their metric states summed on the coordinator.
#pragma once

#include <memory>
#include <string>

#include "framework/strategy/remote_training.h"

namespace strata::distribute {

class ParameterServerStrategy;

// The library's train step: args {[fit id, epoch] (int64)}; runs train_on_batch on the worker's
// next batch ((x, y) or (x, y, sample_weight)), resetting the metrics when the (fit, epoch)
// differs from the worker's previous step; returns {values (float64), names ('\n'-separated
// uint8)} of the logs.
inline constexpr const char* kFitTrainStep = "__strata_fit_train_step";
// The library's exact-evaluation step (evaluate_shards): args {[shard, num_shards] (int64), the
// dataset function's name (uint8)}; returns the metrics' state variables' values.
inline constexpr const char* kEvaluateShardStep = "__strata_evaluate_shard";

// Registers the library's step functions (idempotent). WorkerServer and the coordinator's fit
// call it, so every task has them whatever the user registered.
void register_library_step_functions();

class ParameterServerTraining : public RemoteTraining {
 public:
  explicit ParameterServerTraining(ParameterServerStrategy& strategy) : strategy_(strategy) {}

  std::unique_ptr<RemoteTrainingSession> start_training(
      Model& model, const std::string& dataset_function) override;
  data::Dataset local_dataset(const std::string& dataset_function) override;
  std::vector<std::vector<Tensor>> evaluate_shards(Model& model,
                                                   const std::string& dataset_function,
                                                   int64_t num_shards) override;

 private:
  ParameterServerStrategy& strategy_;
};

}  // namespace strata::distribute
