#include "distribute/parameter_server/ps_trainer.h"

#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/step_registry.h"
#include "framework/metrics/metric.h"
#include "framework/model/model.h"
#include "framework/trainer/termination_signals.h"

namespace strata::distribute {
namespace {

// Whether the worker's `model` starts a new (fit, epoch) with this step: its metrics are reset
// then, as Keras resets them at each epoch's start.
bool first_step_of_epoch(const Model* model, int64_t fit_id, int64_t epoch) {
  static std::mutex mutex;
  static std::map<const Model*, std::pair<int64_t, int64_t>> last;  // per worker model
  std::lock_guard<std::mutex> lock(mutex);
  const std::pair<int64_t, int64_t> now{fit_id, epoch};
  auto [it, inserted] = last.try_emplace(model, now);
  if (inserted) return true;
  const bool changed = it->second != now;
  it->second = now;
  return changed;
}

// The worker's model, for the library's step `method` ("Model.fit", "Model.evaluate").
Model& worker_model(const StepContext& ctx, const char* method) {
  if (ctx.model == nullptr) {
    throw StateError(std::string(method) + ": worker " + std::to_string(ctx.worker_index) +
                     " has no model (the coordinator's set_model did not reach it)");
  }
  return *ctx.model;
}

std::vector<Tensor> fit_train_step(StepContext& ctx) {
  Model& model = worker_model(ctx, "Model.fit");
  if (ctx.args.size() != 1 || ctx.args[0].numel() != 2) {
    throw InternalError("Model.fit: the train step expects [fit id, epoch]");
  }
  const std::vector<int64_t> ids = ctx.args[0].to_vector<int64_t>();
  const bool reset = first_step_of_epoch(&model, ids[0], ids[1]);
  const data::Element batch = ctx.next();
  if (batch.size() < 2 || batch.size() > 3) {
    throw ValueError("Model.fit: a DatasetCreator's dataset must yield (x, y) or (x, y, "
                     "sample_weight); worker " + std::to_string(ctx.worker_index) + " got " +
                     std::to_string(batch.size()) + " component(s)");
  }
  const Logs logs = model.train_on_batch(batch[0], batch[1],
                                              batch.size() == 3 ? batch[2] : Tensor(), reset);
  std::vector<double> values;
  std::vector<uint8_t> names;
  for (const auto& [name, value] : logs.items()) {
    values.push_back(value);
    names.insert(names.end(), name.begin(), name.end());
    names.push_back('\n');
  }
  return {Tensor::from_vector(values), Tensor::from_vector(names)};
}

// The library's evaluation of one shard (exact evaluation): args {[shard, num_shards] (int64),
// the dataset function's name (uint8)}; evaluates every batch of shard `shard` of the function's
// dataset (one input pipeline) with the compiled metrics reset first, and returns the metrics'
// state variables' values in Model::metrics() order. The metrics are the worker's own (local
// state): a shard cut short by a failure leaves nothing behind on the coordinator.
std::vector<Tensor> evaluate_shard(StepContext& ctx) {
  Model& model = worker_model(ctx, "Model.evaluate");
  if (ctx.args.size() != 2 || ctx.args[0].numel() != 2) {
    throw InternalError("Model.evaluate: the shard step expects [shard, num_shards] and a name");
  }
  const std::vector<int64_t> where = ctx.args[0].to_vector<int64_t>();
  const std::vector<uint8_t> name_bytes = ctx.args[1].to_vector<uint8_t>();
  const std::string function(name_bytes.begin(), name_bytes.end());
  const data::Dataset dataset =
      find_dataset_function(function)(DatasetContext{0, 1}).shard(where[1], where[0]);
  model.reset_metrics();
  const std::unique_ptr<data::Iterator> it = dataset.make_iterator();
  while (const std::optional<data::Element> batch = it->next()) {
    if (batch->size() < 2 || batch->size() > 3) {
      throw ValueError("Model.evaluate: DatasetCreator(\"" + function + "\")'s dataset must yield "
                       "(x, y) or (x, y, sample_weight); worker " +
                       std::to_string(ctx.worker_index) + " got " +
                       std::to_string(batch->size()) + " component(s)");
    }
    model.test_on_batch((*batch)[0], (*batch)[1], batch->size() == 3 ? (*batch)[2] : Tensor(),
                        /*reset_metrics=*/false);
  }
  std::vector<Tensor> states;
  for (const std::shared_ptr<metrics::Metric>& m : model.metrics()) {
    for (const VariablePtr& v : m->variables()) states.push_back(v->read_value());
  }
  return states;
}

Logs decode_logs(const std::vector<Tensor>& out) {
  if (out.size() != 2) throw InternalError("Model.fit: the train step returned no logs");
  const std::vector<double> values = out[0].to_vector<double>();
  const std::vector<uint8_t> names = out[1].to_vector<uint8_t>();
  Logs logs;
  size_t i = 0;
  std::string name;
  for (uint8_t c : names) {
    if (c != '\n') {
      name.push_back(char(c));
      continue;
    }
    if (i < values.size()) logs.set(name, values[i++]);
    name.clear();
  }
  return logs;
}

// `strategy` as a shared pointer (a ClusterCoordinator holds one), or a ValueError saying how;
// `method`: "fit" or "evaluate".
std::shared_ptr<ParameterServerStrategy> shared_strategy(ParameterServerStrategy& strategy,
                                                         const std::string& method) {
  try {
    return std::static_pointer_cast<ParameterServerStrategy>(strategy.shared_from_this());
  } catch (const std::bad_weak_ptr&) {
    throw ValueError("Model." + method + ": under ParameterServerStrategy, " + method +
                     " makes a ClusterCoordinator for the strategy, which needs it held by a "
                     "std::shared_ptr (std::make_shared<ParameterServerStrategy>(...)); or "
                     "create a ClusterCoordinator for it before " + method);
  }
}

class Session : public RemoteTrainingSession {
 public:
  Session(ParameterServerStrategy& strategy, Model& model, const std::string& dataset_function) {
    coordinator_ = strategy.coordinator();
    if (coordinator_ == nullptr) {
      // TensorFlow makes one in fit; this one lives for the fit.
      owned_ = std::make_unique<ClusterCoordinator>(shared_strategy(strategy, "fit"));
      coordinator_ = owned_.get();
    }
    coordinator_->set_model(model);
    iterator_.emplace(coordinator_->create_per_worker_dataset(dataset_function).iterator());
    std::random_device seed;
    fit_id_ = (int64_t(seed()) << 31) ^ int64_t(seed());
  }

  std::optional<Logs> run_epoch(int epoch, int64_t steps) override {
    const std::vector<Tensor> args{Tensor::from_vector(std::vector<int64_t>{fit_id_, epoch})};
    RemoteValue last;
    int64_t scheduled = 0;
    for (; scheduled < steps && !TerminationSignalScope::pending(); ++scheduled) {
      last = coordinator_->schedule(kFitTrainStep, args, &*iterator_);
    }
    // Waits in short slices, so that SIGTERM / SIGINT stop the epoch at a step boundary.
    while (!coordinator_->join_for(std::chrono::milliseconds(100))) {
      if (TerminationSignalScope::pending()) break;
    }
    if (const int signal = TerminationSignalScope::pending()) {
      const int64_t dropped = coordinator_->cancel_queued(
          std::string("Model.fit: stopped by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
          " before this step ran");
      coordinator_->join();  // the steps running finish (their updates land whole)
      if (dropped > 0 || scheduled < steps) {
        std::cerr << "Model.fit: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                  << " during epoch " << epoch + 1 << ": the steps running finished, "
                  << dropped + (steps - scheduled) << " of " << steps
                  << " were not run" << std::endl;
        return std::nullopt;
      }
      // Every step ran: the epoch is whole; the trainer stops after its end.
    }
    return decode_logs(last.fetch());
  }

 private:
  std::unique_ptr<ClusterCoordinator> owned_;
  ClusterCoordinator* coordinator_ = nullptr;
  std::optional<PerWorkerIterator> iterator_;
  int64_t fit_id_ = 0;
};

}  // namespace

void register_library_step_functions() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_step_function(kFitTrainStep, fit_train_step);
    register_step_function(kEvaluateShardStep, evaluate_shard);
  });
}

std::unique_ptr<RemoteTrainingSession> ParameterServerTraining::start_training(
    Model& model, const std::string& dataset_function) {
  register_library_step_functions();
  find_dataset_function(dataset_function);  // ValueError naming the registered ones
  return std::make_unique<Session>(strategy_, model, dataset_function);
}

std::vector<std::vector<Tensor>> ParameterServerTraining::evaluate_shards(
    Model& model, const std::string& dataset_function, int64_t num_shards) {
  register_library_step_functions();
  find_dataset_function(dataset_function);   // ValueError naming the registered ones
  if (num_shards == CompileOptions::kAutoEvaluationShards) {
    num_shards = 5 * int64_t(strategy_.num_worker_tasks());   // TensorFlow's "auto"
  }
  ClusterCoordinator* coordinator = strategy_.coordinator();
  std::unique_ptr<ClusterCoordinator> owned;
  if (coordinator == nullptr) {
    owned = std::make_unique<ClusterCoordinator>(shared_strategy(strategy_, "evaluate"));
    coordinator = owned.get();
  }
  coordinator->set_model(model);
  const std::vector<uint8_t> name(dataset_function.begin(), dataset_function.end());
  std::vector<RemoteValue> shards;
  for (int64_t k = 0; k < num_shards; ++k) {
    shards.push_back(coordinator->schedule(
        kEvaluateShardStep,
        {Tensor::from_vector(std::vector<int64_t>{k, num_shards}), Tensor::from_vector(name)}));
  }
  coordinator->join();
  std::vector<std::vector<Tensor>> states;
  for (const RemoteValue& v : shards) states.push_back(v.fetch());
  return states;
}

data::Dataset ParameterServerTraining::local_dataset(const std::string& dataset_function) {
  return find_dataset_function(dataset_function)(DatasetContext{0, 1});
}

}  // namespace strata::distribute
