// The one training loop: fit, evaluate and predict for every kind of model (and, later, every
// device and distribution strategy: they plug in around train_step, not here).
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "framework/callbacks/progbar_logger.h"
#include "framework/model/compiled_state.h"
#include "framework/model/epoch_iterator.h"
#include "framework/core/device_scope.h"
#include "framework/model/model.h"
#include "framework/model/termination_signals.h"
#include "framework/autograd/grad_mode.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/strategy.h"

namespace strata {
namespace {

CallbackList make_callbacks(const std::vector<CallbackPtr>& user, int verbose, Model* model,
                            int epochs, int64_t steps, std::shared_ptr<History> history) {
  CallbackList list(user);
  if (history) list.append(history);
  if (verbose > 0) list.append(std::make_shared<ProgbarLogger>());
  list.set_model(model);
  list.set_params({epochs, steps, verbose});
  return list;
}

// Re-enters the scope of the strategy that created `model` (if any) for a loop's lifetime.
std::optional<distribute::Strategy::Scope> strategy_scope(const Model& model) {
  std::optional<distribute::Strategy::Scope> scope;
  if (distribute::Strategy* s = model.distribute_strategy()) scope.emplace(s);
  return scope;
}

std::map<std::string, double> to_map(const Logs& logs) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : logs.items()) out[k] = v;
  return out;
}

}  // namespace

// Runs the test loop over `it`, reporting batches to `callbacks`; returns the final logs.
static Logs run_evaluation(Model& model, EpochIterator& it, CallbackList& callbacks) {
  model.reset_metrics();
  callbacks.on_test_begin(Logs());
  it.begin_epoch();
  int step = 0;
  int64_t global_size = it.batch_size();
  while (auto batch = it.next()) {
    callbacks.on_test_batch_begin(step, Logs());
    model.distributed_test_step(*batch, global_size);
    const Logs logs = Logs::deferred([&model] { return model.metrics_logs(); });
    callbacks.on_test_batch_end(step, logs);
    logs.resolve_if_shared();
    ++step;
  }
  Logs logs = model.metrics_logs();
  callbacks.on_test_end(logs);
  return logs;
}

History Model::run_fit(EpochIterator& train, EpochIterator* validation, const FitOptions& o) {
  if (o.epochs_ < 0 || o.initial_epoch_ < 0) {
    throw ValueError("Model.fit: epochs and initial_epoch must be >= 0, got " +
                     std::to_string(o.epochs_) + " and " + std::to_string(o.initial_epoch_));
  }
  if (o.validation_freq_ < 1) {
    throw ValueError("Model.fit: validation_freq must be >= 1, got " + std::to_string(o.validation_freq_));
  }
  const auto scope = strategy_scope(*this);
  auto history = std::make_shared<History>();
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, this, o.epochs_,
                                          train.steps(), history);
  TerminationSignalScope signals;
  stop_training = false;
  progress_ = TrainingProgress{};
  fit_data_ = &train;
  struct ForgetData {
    const EpochIterator*& data;
    ~ForgetData() { data = nullptr; }  // also when fit() throws
  } forget_data{fit_data_};
  // As Keras, build the model from the data before any callback runs, so on_train_begin sees
  // every weight (BackupAndRestore restores into them).
  if (!built()) {
    if (std::optional<data::Element> first = train.peek()) {
      NoGradGuard no_grad;
      // On the device the steps will run on (a strategy's first replica's), data included.
      distribute::Strategy* strategy = distribute_strategy();
      const Device build_on = strategy ? strategy->worker_devices()[0] : device();
      DeviceScope on_device(build_on);
      data::Element moved;
      for (const Tensor& t : *first) moved.push_back(t.defined() ? t.to(build_on) : t);
      predict_step(moved);
    }
  }
  callbacks.on_train_begin(Logs());
  // A callback (BackupAndRestore) may have asked to resume from a backup.
  std::optional<ResumePoint> resume = std::exchange(resume_point_, std::nullopt);
  const int first_epoch = resume ? std::max(o.initial_epoch_, resume->epoch) : o.initial_epoch_;
  const int every = compiled_->steps_per_execution;
  int64_t global_size = train.batch_size();
  for (int epoch = first_epoch; epoch < o.epochs_ && !stop_training; ++epoch) {
    reset_metrics();
    progress_.epoch = epoch;
    progress_.step = 0;
    const bool resuming = resume && resume->epoch == epoch;
    if (resuming && (resume->step > 0 || resume->data.spans_epochs)) {
      // Remake the pass the backup was in and skip what it had consumed; then the generator
      // continues from where it was after the backup's last step (dropout masks, ...).
      train.begin_epoch_at(resume->data, resume->step);
      progress_.step = resume->step;
      set_generator_state(resume->rng);
    } else {
      if (resuming) {
        train.restore_pipeline(resume->data.pipeline_now);
        set_generator_state(resume->rng);
      }
      train.begin_epoch();
    }
    callbacks.on_epoch_begin(epoch, Logs());
    int step = int(progress_.step);
    while (auto batch = train.next()) {
      // Keras runs steps_per_execution steps between batch callbacks.
      const bool report = (step + 1) % every == 0 || step + 1 == train.steps();
      if (step % every == 0) callbacks.on_train_batch_begin(step, Logs());
      distributed_train_step(*batch, global_size);
      progress_.step = step + 1;
      if (report) {
        // Read from the device only if a callback looks (logs.h).
        const Logs logs = Logs::deferred([this] { return metrics_logs(); });
        callbacks.on_train_batch_end(step, logs);
        logs.resolve_if_shared();
      }
      ++step;
      if (const int sig = TerminationSignalScope::pending()) {
        callbacks.on_preemption(sig);
        throw TrainingInterrupted(
            std::string("Model.fit: stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                " after epoch " + std::to_string(epoch + 1) + ", batch " + std::to_string(step) +
                " (callbacks saved what they save on preemption, e.g. BackupAndRestore's backup; "
                "run the same command again to resume)",
            sig);
      }
      if (stop_training) break;
    }
    resume.reset();
    Logs epoch_logs = metrics_logs();
    if (validation && (epoch + 1) % o.validation_freq_ == 0) {
      // As Keras, the user's callbacks see the validation run (on_test_*: TensorBoard writes
      // evaluation_*_vs_iterations); the progress bar and History do not. Their params and
      // model stay those of the fit.
      CallbackList validation_callbacks(o.callbacks_);
      const Logs val_logs = run_evaluation(*this, *validation, validation_callbacks);
      for (const auto& [k, v] : val_logs.items()) epoch_logs.set("val_" + k, v);
    }
    callbacks.on_epoch_end(epoch, epoch_logs);
  }
  callbacks.on_train_end(Logs());
  return *history;
}

TrainingProgress Model::training_progress() const {
  TrainingProgress p = progress_;
  if (fit_data_) p.data = fit_data_->position();
  return p;
}

History Model::fit(const Tensor& x, const Tensor& y, const FitOptions& o) {
  require_compiled("fit");
  std::vector<Tensor> data{x, y};
  Tensor sw = o.sample_weight_;
  if (!o.class_weight_.empty()) sw = class_weights_to_sample_weights(o.class_weight_, y, sw);
  if (sw.defined()) data.push_back(sw);
  std::vector<Tensor> val_data;
  if (o.validation_split_ > 0) {
    auto [train_part, val_part] = split_validation(data, o.validation_split_);
    data = train_part;
    val_data = val_part;
  } else if (o.validation_data_) {
    val_data = {o.validation_data_->first, o.validation_data_->second};
  }
  EpochIterator train(data, o.batch_size_, o.shuffle_, o.steps_per_epoch_, "fit");
  std::unique_ptr<EpochIterator> val;
  if (!val_data.empty()) {
    val = std::make_unique<EpochIterator>(val_data, o.batch_size_, false, o.validation_steps_, "fit");
  } else if (o.validation_dataset_) {
    val = std::make_unique<EpochIterator>(*o.validation_dataset_, o.validation_steps_, "fit");
  }
  return run_fit(train, val.get(), o);
}

History Model::fit(const data::Dataset& dataset, const FitOptions& o) {
  require_compiled("fit");
  if (o.validation_split_ > 0) {
    throw ValueError("Model.fit: validation_split is only supported for tensor inputs; pass "
                     "validation_data with a Dataset");
  }
  EpochIterator train(dataset, o.steps_per_epoch_, "fit");
  std::unique_ptr<EpochIterator> val;
  if (o.validation_dataset_) {
    val = std::make_unique<EpochIterator>(*o.validation_dataset_, o.validation_steps_, "fit");
  } else if (o.validation_data_) {
    val = std::make_unique<EpochIterator>(
        std::vector<Tensor>{o.validation_data_->first, o.validation_data_->second}, o.batch_size_,
        false, o.validation_steps_, "fit");
  }
  return run_fit(train, val.get(), o);
}

std::map<std::string, double> Model::evaluate(const Tensor& x, const Tensor& y,
                                              const EvaluateOptions& o) {
  require_compiled("evaluate");
  std::vector<Tensor> data{x, y};
  if (o.sample_weight_.defined()) data.push_back(o.sample_weight_);
  EpochIterator it(data, o.batch_size_, false, o.steps_, "evaluate");
  const auto scope = strategy_scope(*this);
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, this, 1, it.steps(), nullptr);
  return to_map(run_evaluation(*this, it, callbacks));
}

std::map<std::string, double> Model::evaluate(const data::Dataset& dataset, const EvaluateOptions& o) {
  require_compiled("evaluate");
  EpochIterator it(dataset, o.steps_, "evaluate");
  const auto scope = strategy_scope(*this);
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, this, 1, it.steps(), nullptr);
  return to_map(run_evaluation(*this, it, callbacks));
}

namespace {
Tensor predict_loop(Model& model, EpochIterator& it, const PredictOptions& o) {
  const auto scope = strategy_scope(model);
  CallbackList callbacks(o.callbacks_);
  callbacks.set_model(&model);
  callbacks.set_params({1, it.steps(), o.verbose_});
  callbacks.on_predict_begin(Logs());
  it.begin_epoch();
  std::vector<Tensor> outputs;
  int step = 0;
  int64_t global_size = it.batch_size();
  while (auto batch = it.next()) {
    callbacks.on_predict_batch_begin(step, Logs());
    // Returned on the host, as Keras returns NumPy arrays (and GPU memory stays free).
    outputs.push_back(model.distributed_predict_step(*batch, global_size).to(Device::cpu()));
    callbacks.on_predict_batch_end(step, Logs());
    ++step;
  }
  callbacks.on_predict_end(Logs());
  if (outputs.empty()) throw ValueError("Model.predict: the input produced no batches");
  return outputs.size() == 1 ? outputs[0] : concat(outputs, 0);  // in input order
}
}  // namespace

Tensor Model::predict(const Tensor& x, const PredictOptions& o) {
  EpochIterator it({x}, o.batch_size_, false, o.steps_, "predict");
  return predict_loop(*this, it, o);
}

Tensor Model::predict(const data::Dataset& dataset, const PredictOptions& o) {
  EpochIterator it(dataset, o.steps_, "predict");
  return predict_loop(*this, it, o);
}

}  // namespace strata
