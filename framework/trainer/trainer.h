// Internal: the loops behind Model::fit / evaluate / predict and the *_on_batch calls (Keras 3's
// trainers/trainer.py). Model keeps the model (layers, compile, the train / test / predict
// steps); the Trainer turns inputs into epochs of batches (epoch_iterator.h), builds the state
// the steps need before the first one runs, runs the callbacks, and reaches the distribution
// strategy only through its entry points: distribute_input(), run_step() and join().
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "framework/model/model.h"

namespace strata {

class EpochIterator;
class CallbackList;
class DatasetCreator;
namespace distribute {
class DistributedIterator;
class RemoteTraining;
}

class Trainer {
 public:
  explicit Trainer(Model& model) : model_(model) {}

  History fit(const Tensor& x, const Tensor& y, const FitOptions& options);
  History fit(const data::Dataset& dataset, const FitOptions& options);
  History fit(const DatasetCreator& creator, const FitOptions& options);
  std::map<std::string, double> evaluate(const DatasetCreator& creator,
                                         const EvaluateOptions& options);
  std::map<std::string, double> evaluate(const Tensor& x, const Tensor& y,
                                         const EvaluateOptions& options);
  std::map<std::string, double> evaluate(const data::Dataset& dataset,
                                         const EvaluateOptions& options);
  Tensor predict(const Tensor& x, const PredictOptions& options);
  Tensor predict(const data::Dataset& dataset, const PredictOptions& options);
  Logs train_on_batch(const data::Element& batch, bool reset_metrics);
  Logs test_on_batch(const data::Element& batch, bool reset_metrics);
  Tensor predict_on_batch(const Tensor& x);

 private:
  // The model's strategy, or the default one (one replica on the model's device).
  distribute::Strategy& strategy() const;
  // What every step needs, made once in the cross-replica context before the first step: the
  // model's weights (built from the first batch), the compiled metrics (their kind depends on
  // its shapes) and, when training, the optimizer's slots. Never lazily inside a replica.
  // `first` is called (a batch drawn) only when something still has to be built.
  void build_state(const std::function<std::optional<data::Element>()>& first, bool training);

  History run_fit(EpochIterator& train, EpochIterator* validation, const FitOptions& options);
  // fit(DatasetCreator) under a strategy that trains remotely: the epochs' steps run on its
  // workers, the rest here.
  History run_remote_fit(distribute::RemoteTraining& remote, const DatasetCreator& creator,
                         EpochIterator* validation, const FitOptions& options);
  // Starts epoch `epoch` of `train`: at its beginning, or where `resume` (a restored backup in
  // this epoch, or null) left it.
  void begin_epoch(EpochIterator& train, int epoch, const ResumePoint* resume);
  // Runs the epoch's training steps from `input` with their batch callbacks until the input
  // ends or stop_training; returns the step count reached. SIGTERM / SIGINT (on any worker of
  // the job: Strategy::termination_request): on_preemption, then TrainingInterrupted.
  int run_epoch_steps(distribute::DistributedIterator& input, int64_t steps,
                      CallbackList& callbacks, int epoch);
  // The test loop. With `stopped_after`, SIGTERM / SIGINT (Strategy::termination_request)
  // end it after the current batch, *stopped_after then the batches done (fit's validation).
  Logs run_evaluation(EpochIterator& it, CallbackList& callbacks, const char* who,
                      int* stopped_after = nullptr);
  // Model.evaluate's loop: under a multi-worker strategy SIGTERM / SIGINT stop every worker
  // after the same batch with TrainingInterrupted (alone, the signalled worker would die and
  // the others fail in their next collective); else the signals' default action.
  Logs run_evaluate(EpochIterator& it, CallbackList& callbacks);
  // evaluate(DatasetCreator) with pss_evaluation_shards: the shards on the workers, their
  // metric states summed into this model's metrics.
  Logs run_exact_evaluation(distribute::RemoteTraining& remote, const DatasetCreator& creator,
                            int64_t shards, const EvaluateOptions& options);
  Tensor run_predict(EpochIterator& it, const PredictOptions& options);
  // train_on_batch / test_on_batch: one step on a batch of any size, split as evenly as it goes.
  Logs run_one_batch(const data::Element& batch, bool reset_metrics, bool training);

  Model& model_;
  // Whether a training step is running (an elastic strategy's LoopPosition reads it).
  bool step_in_flight_ = false;
};

}  // namespace strata
