// The one training loop: fit, evaluate and predict for every kind of model, device and
// distribution strategy (they plug in through the strategy's distribute_input / run_step / join
// and the model's steps, not here).
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <typeinfo>
#include <utility>
#if defined(__GXX_ABI_VERSION)
#include <cxxabi.h>
#endif

#include "framework/autograd/grad_mode.h"
#include "framework/callbacks/progbar_logger.h"
#include "framework/core/device_scope.h"
#include "framework/data/file_sharding.h"
#include "framework/model/compiled_state.h"
#include "framework/model/dataset_creator.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/batch_split.h"
#include "framework/strategy/remote_training.h"
#include "framework/strategy/strategy.h"
#include "framework/trainer/epoch_iterator.h"
#include "framework/trainer/termination_error.h"
#include "framework/trainer/termination_signals.h"
#include "framework/trainer/trainer.h"

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

// For a loop's lifetime: the scope of the strategy that created the model, if any.
std::optional<distribute::Strategy::Scope> strategy_scope(const Model& model) {
  std::optional<distribute::Strategy::Scope> scope;
  if (distribute::Strategy* s = model.distribute_strategy()) scope.emplace(s);
  return scope;
}

// Without a strategy, batches are moved to and steps run on the model's device (device()).
struct OnModelDevice {
  explicit OnModelDevice(const Model& model) {
    if (model.distribute_strategy() == nullptr) scope.emplace(model.device());
  }
  std::optional<DeviceScope> scope;
};

std::map<std::string, double> to_map(const Logs& logs) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : logs.items()) out[k] = v;
  return out;
}

// Keras raises this when a loop ran no step ("Unexpected result of `train_function` (Empty
// logs)"): an empty input would otherwise report nothing, or a loss of 0.
ValueError no_batches(const char* who, const char* what) {
  return ValueError(std::string(who) + ": " + what + " produced no batches, so there is nothing "
                    "to " + (std::string(who) == "Model.predict" ? "predict" : "compute") +
                    "; check that the data is not empty (an empty file, a Dataset filtered "
                    "down to nothing, or steps = 0)");
}

// A callback's class name, for errors ("strata::TerminateOnNaN").
std::string class_name_of(const Callback& callback) {
  const char* mangled = typeid(callback).name();
#if defined(__GXX_ABI_VERSION)
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status == 0 && readable != nullptr) {
    std::string name(readable);
    std::free(readable);
    return name;
  }
#endif
  return mangled;
}

// The epochs of a Dataset. Under a multi-worker strategy a pipeline that reads files is divided
// among the workers by file (AutoShardPolicy::kAuto's choice, framework/strategy/auto_shard.h):
// each worker reads its own files in batches of its part of the global batch. Any other
// dataset is divided by data (distribute_input keeps each worker's part of every global batch).
std::unique_ptr<EpochIterator> dataset_epochs(const data::Dataset& dataset, int64_t steps,
                                              const char* method, const distribute::Strategy& s) {
  if (s.num_workers() > 1 && !s.elastic()) {
    if (std::optional<data::Dataset> own = data::shard_by_file(
            dataset, s.num_workers(), s.worker_index(), std::string("Model.") + method)) {
      auto it = std::make_unique<EpochIterator>(*own, steps, method);
      it->set_worker_batches(true);
      return it;
    }
  }
  return std::make_unique<EpochIterator>(dataset, steps, method);
}

// The strategy's RemoteTraining for a DatasetCreator, or a ValueError saying what it needs.
distribute::RemoteTraining& remote_training_for(const Model& model, const DatasetCreator& creator,
                                                const char* who) {
  distribute::Strategy* s = model.distribute_strategy();
  if (distribute::RemoteTraining* remote = s ? s->remote_training() : nullptr) return *remote;
  throw ValueError(std::string(who) + ": DatasetCreator(\"" + creator.function() +
                   "\") needs ParameterServerStrategy (its workers build their datasets from "
                   "the registered dataset function), but model '" + model.name() + "' " +
                   (s ? "was created under " + s->name() : std::string("has no strategy")) +
                   ". Create and compile the model in a ParameterServerStrategy's scope, or pass "
                   "a Dataset or tensors");
}

// What fit's callbacks did about it, for the message.
std::string fit_advice(const distribute::Strategy& s) {
  return s.num_workers() > 1
             ? "callbacks saved what they save on preemption: with BackupAndRestore, the chief "
               "wrote the backup; start every worker again with the same command and TF_CONFIG "
               "to resume; without such a callback, nothing was saved"
             : "callbacks saved what they save on preemption: with BackupAndRestore, run the "
               "same command again to resume; without such a callback, nothing was saved";
}

// fit's place for an elastic strategy (Strategy::LoopPosition): the epoch, the steps done in
// it, and the input position before the training step in flight (`in_flight`): the batches
// drawn from the pass and from the epoch before the ones `input` holds for it, as words; a
// worker that joins restores it as a resume point inside that pass. `input` is set once fit
// made it, before any step is in flight.
distribute::Strategy::LoopPosition loop_position(
    Model& m, const EpochIterator& train, const TrainingProgress& progress,
    const bool& in_flight, const std::unique_ptr<distribute::DistributedIterator>& input) {
  distribute::Strategy::LoopPosition position;
  position.save = [&train, &progress, &in_flight, &input]() -> std::vector<int64_t> {
    if (!in_flight || !input) return {};
    const DataPosition p = train.position();
    const int64_t ahead = input->batches_ahead();
    if (p.consumed < ahead) {
      // Only a step drawing several batches (an elastic job keeping the per-replica batch)
      // can start in the pass before this one; no place in one pass describes it.
      throw ValueError("Model.fit: a training step drew its batches from two passes of the "
                       "dataset (it ran out within the step and steps_per_epoch started it "
                       "again), so no worker could join at it; keeping the per-replica batch, "
                       "give fit an infinite dataset (repeat()) with steps_per_epoch");
    }
    std::vector<int64_t> words{progress.epoch,       progress.step,
                               p.consumed - ahead,   train.drawn_in_epoch() - ahead,
                               p.spans_epochs,       int64_t(p.pass_rng.seed),
                               int64_t(p.pass_rng.offset)};
    for (const std::vector<uint64_t>* state : {&p.pipeline_at_pass_start, &p.pipeline_now}) {
      words.push_back(int64_t(state->size()));
      for (uint64_t v : *state) words.push_back(int64_t(v));
    }
    return words;
  };
  position.restore = [&m](const std::vector<int64_t>& words) {
    size_t at = 0;
    auto next = [&]() -> int64_t {
      if (at >= words.size()) {
        throw StateError("Model.fit: the elastic job's loop position is truncated (" +
                         std::to_string(words.size()) + " words); every worker must run the "
                         "same program");
      }
      return words[at++];
    };
    ResumePoint point;
    point.epoch = int(next());
    point.step = next();
    point.data.consumed = next();
    point.batches_in_epoch = next();
    if (point.epoch < 0 || point.step < 0 || point.data.consumed < 0 || point.batches_in_epoch < 0) {
      throw StateError("Model.fit: the elastic job's loop position is not a place in the data "
                       "(epoch " + std::to_string(point.epoch) + ", step " +
                       std::to_string(point.step) + ", batches " +
                       std::to_string(point.data.consumed) + " and " +
                       std::to_string(point.batches_in_epoch) + "; none may be negative); every "
                       "worker must run the same program");
    }
    point.data.spans_epochs = next() != 0;
    point.data.pass_rng.seed = uint64_t(next());
    point.data.pass_rng.offset = uint64_t(next());
    for (std::vector<uint64_t>* state : {&point.data.pipeline_at_pass_start, &point.data.pipeline_now}) {
      const int64_t n = next();
      if (n < 0 || n > int64_t(words.size() - at)) {
        throw StateError("Model.fit: the elastic job's loop position names a dataset state of " +
                         std::to_string(n) + " words where " + std::to_string(words.size() - at) +
                         " are left; every worker must run the same program");
      }
      for (int64_t i = 0; i < n; ++i) state->push_back(uint64_t(next()));
    }
    point.rng = get_generator_state();  // the job's, as the strategy just set it
    point.mid_pass = true;
    m.resume_at(point);
  };
  return position;
}

// While it lives, the loop is one no worker can join an elastic job at, nor survive a worker
// lost in (evaluate, predict, fit's validation): an elastic strategy synchronizes first if it
// never did, then treats a lost worker as the job's error.
class NotATrainingLoop {
 public:
  explicit NotATrainingLoop(distribute::Strategy& s) : s_(s) {
    position_.save = [] { return std::vector<int64_t>(); };
    position_.restore = [](const std::vector<int64_t>&) {};
    s_.enter_training_loop(&position_);
  }
  ~NotATrainingLoop() { s_.leave_training_loop(); }
  NotATrainingLoop(const NotATrainingLoop&) = delete;
  NotATrainingLoop& operator=(const NotATrainingLoop&) = delete;

 private:
  distribute::Strategy& s_;
  distribute::Strategy::LoopPosition position_;
};

}  // namespace

distribute::Strategy& Trainer::strategy() const {
  if (distribute::Strategy* s = model_.distribute_strategy()) return *s;
  return *distribute::get_strategy();  // the default strategy outlives every loop
}

void Trainer::build_state(const std::function<std::optional<data::Element>()>& first,
                          bool training) {
  if (model_.compiled() && training) model_.optimizer()->build(model_.trainable_variables());
  const bool metrics_pending = model_.compiled() && !model_.compiled_state()->metrics_built;
  if (model_.built() && !metrics_pending) return;  // nothing needs data: no batch is drawn
  const std::optional<data::Element> batch = first();
  if (!batch) return;
  NoGradGuard no_grad;
  // On the device the steps will run on (a strategy's first replica's), data included.
  distribute::Strategy* s = model_.distribute_strategy();
  const Device on = s ? s->worker_devices()[0] : model_.device();
  DeviceScope on_device(on);
  data::Element moved;
  for (const Tensor& t : *batch) moved.push_back(t.defined() ? t.to(on) : t);
  // As Keras, the model is built from the data before any callback runs, so on_train_begin sees
  // every weight (BackupAndRestore restores into them).
  if (!model_.built()) model_.predict_step(moved);
  if (metrics_pending) model_.build_metrics_from(moved);
  // Slots of weights the build above just made.
  if (model_.compiled() && training) model_.optimizer()->build(model_.trainable_variables());
}

// Runs the test loop over `it`, reporting batches to `callbacks`; returns the final logs. With
// `stopped_after`, a termination request (SIGTERM / SIGINT, agreed by every worker) ends it after
// the current batch: *stopped_after is then the batches done, and the logs are empty.
Logs Trainer::run_evaluation(EpochIterator& it, CallbackList& callbacks, const char* who,
                             int* stopped_after) {
  build_state([&it] { return it.peek(); }, /*training=*/false);
  model_.reset_metrics();
  callbacks.on_test_begin(Logs());
  it.begin_epoch();
  distribute::Strategy& s = strategy();
  OnModelDevice device(model_);
  const NotATrainingLoop not_training(s);
  auto input = s.distribute_input([&it] { return it.next(); },
                                  {it.batch_size(), who, it.worker_batches()});
  int step = 0;
  while (auto batch = input->next()) {
    callbacks.on_test_batch_begin(step, Logs());
    s.run_step([this](const data::Element& b) { model_.test_step(b); return Tensor(); }, *batch);
    const Logs logs = Logs::deferred([this] { return model_.metrics_logs(); });
    callbacks.on_test_batch_end(step, logs);
    logs.resolve_if_shared();
    ++step;
    if (stopped_after != nullptr && s.termination_request()) {
      s.join();
      *stopped_after = step;
      return Logs();
    }
  }
  s.join();
  if (step == 0) throw no_batches(who, "the evaluation data");
  Logs logs = model_.metrics_logs();
  callbacks.on_test_end(logs);
  return logs;
}

void Trainer::begin_epoch(EpochIterator& train, int epoch, const ResumePoint* resume) {
  Model& m = model_;
  m.progress_.epoch = epoch;
  m.progress_.step = 0;
  if (resume && (resume->step > 0 || resume->data.spans_epochs || resume->mid_pass)) {
    // Remake the pass the backup was in and skip what it had consumed; then the generator
    // continues from where it was after the backup's last step (dropout masks, ...).
    train.begin_epoch_at(resume->data,
                         resume->batches_in_epoch >= 0 ? resume->batches_in_epoch : resume->step);
    m.progress_.step = resume->step;
    set_generator_state(resume->rng);
    return;
  }
  if (resume) {
    train.restore_pipeline(resume->data.pipeline_now);
    set_generator_state(resume->rng);
  }
  train.begin_epoch();
}

int Trainer::run_epoch_steps(distribute::DistributedIterator& input, int64_t steps,
                             CallbackList& callbacks, int epoch) {
  Model& m = model_;
  distribute::Strategy& s = strategy();
  const int every = m.compiled_->steps_per_execution;
  const auto train_step = [&m](const data::Element& b) {
    m.train_step(b);
    return Tensor();
  };
  int step = int(m.progress_.step);
  while (auto batch = input.next()) {
    // Keras runs steps_per_execution steps between batch callbacks.
    const bool report = (step + 1) % every == 0 || step + 1 == steps;
    if (step % every == 0) callbacks.on_train_batch_begin(step, Logs());
    {
      struct InFlight {
        bool& flag;
        ~InFlight() { flag = false; }
      } in_flight{step_in_flight_};
      step_in_flight_ = true;
      s.run_step(train_step, *batch);
    }
    m.progress_.step = step + 1;
    if (report) {
      // Read from the device only if a callback looks (logs.h).
      const Logs logs = Logs::deferred([&m] { return m.metrics_logs(); });
      callbacks.on_train_batch_end(step, logs);
      logs.resolve_if_shared();
    }
    ++step;
    // Under a multi-worker strategy, the answer every worker got from this step's all-gather.
    if (const distribute::Strategy::TerminationRequest request = s.termination_request()) {
      s.join();
      callbacks.on_preemption(request.signal);
      throw termination_error(
          "Model.fit", s, request,
          "after epoch " + std::to_string(epoch + 1) + ", batch " + std::to_string(step),
          fit_advice(s));
    }
    if (m.stop_training) break;
  }
  return step;
}

History Trainer::run_fit(EpochIterator& train, EpochIterator* validation, const FitOptions& o) {
  Model& m = model_;
  if (o.epochs_ < 0 || o.initial_epoch_ < 0) {
    throw ValueError("Model.fit: epochs and initial_epoch must be >= 0, got " +
                     std::to_string(o.epochs_) + " and " + std::to_string(o.initial_epoch_));
  }
  if (o.validation_freq_ < 1) {
    throw ValueError("Model.fit: validation_freq must be >= 1, got " + std::to_string(o.validation_freq_));
  }
  const auto scope = strategy_scope(m);
  auto history = std::make_shared<History>();
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, &m, o.epochs_,
                                          train.steps(), history);
  TerminationSignalScope signals;
  m.stop_training = false;
  m.progress_ = TrainingProgress{};
  m.fit_data_ = &train;
  struct ForgetData {
    const EpochIterator*& data;
    ~ForgetData() { data = nullptr; }  // also when fit() throws
  } forget_data{m.fit_data_};
  build_state([&train] { return train.peek(); }, /*training=*/true);
  callbacks.on_train_begin(Logs());
  // An elastic strategy brings a worker that joins a running job to its state and place (a
  // resume point, as a backup would).
  distribute::Strategy& s = strategy();
  std::unique_ptr<distribute::DistributedIterator> input;  // made below, once entered
  const distribute::Strategy::LoopPosition position =
      loop_position(m, train, m.progress_, step_in_flight_, input);
  s.enter_training_loop(&position);
  struct LeaveLoop {
    distribute::Strategy& s;
    ~LeaveLoop() { s.leave_training_loop(); }
  } leave_loop{s};
  // A callback (BackupAndRestore) may have asked to resume from a backup.
  std::optional<ResumePoint> resume = std::exchange(m.resume_point_, std::nullopt);
  const int first_epoch = resume ? std::max(o.initial_epoch_, resume->epoch) : o.initial_epoch_;
  OnModelDevice device(m);
  input = s.distribute_input([&train] { return train.next(); },
                             {train.batch_size(), "Model.fit", train.worker_batches()});
  for (int epoch = first_epoch; epoch < o.epochs_ && !m.stop_training; ++epoch) {
    m.reset_metrics();
    begin_epoch(train, epoch, resume && resume->epoch == epoch ? &*resume : nullptr);
    callbacks.on_epoch_begin(epoch, Logs());
    const int first_step = int(m.progress_.step);
    const int step = run_epoch_steps(*input, train.steps(), callbacks, epoch);
    s.join();
    // A fit whose first epoch has no batch at all (resuming at an epoch's end is not one) has no
    // data.
    if (epoch == first_epoch && first_step == 0 && step == 0) {
      throw no_batches("Model.fit", "the training data");
    }
    resume.reset();
    Logs epoch_logs = m.metrics_logs();
    if (validation && (epoch + 1) % o.validation_freq_ == 0) {
      // As Keras, the user's callbacks see the validation run (on_test_*: TensorBoard writes
      // evaluation_*_vs_iterations); the progress bar and History do not. Their params and
      // model stay those of the fit.
      CallbackList validation_callbacks(o.callbacks_);
      const GeneratorState before_validation = get_generator_state();
      int stopped_after = -1;
      const Logs val_logs =
          run_evaluation(*validation, validation_callbacks, "Model.fit", &stopped_after);
      if (stopped_after >= 0) {
        // SIGTERM / SIGINT during the validation (every worker after the same validation
        // batch): the backup resumes at the end of this epoch's training steps, where the
        // validation starts again from the generator state it started from here.
        set_generator_state(before_validation);
        const distribute::Strategy::TerminationRequest request = s.termination_request();
        callbacks.on_preemption(request.signal);
        throw termination_error("Model.fit", s, request,
                                "after epoch " + std::to_string(epoch + 1) + ", batch " +
                                    std::to_string(step) + ", during its validation",
                                fit_advice(s));
      }
      for (const auto& [k, v] : val_logs.items()) epoch_logs.set("val_" + k, v);
    }
    callbacks.on_epoch_end(epoch, epoch_logs);
  }
  callbacks.on_train_end(Logs());
  return *history;
}

History Trainer::fit(const Tensor& x, const Tensor& y, const FitOptions& o) {
  model_.require_compiled("fit");
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
    val = dataset_epochs(*o.validation_dataset_, o.validation_steps_, "fit", strategy());
  }
  return run_fit(train, val.get(), o);
}

History Trainer::fit(const data::Dataset& dataset, const FitOptions& o) {
  model_.require_compiled("fit");
  if (o.validation_split_ > 0) {
    throw ValueError("Model.fit: validation_split is only supported for tensor inputs; pass "
                     "validation_data with a Dataset");
  }
  std::unique_ptr<EpochIterator> train =
      dataset_epochs(dataset, o.steps_per_epoch_, "fit", strategy());
  std::unique_ptr<EpochIterator> val;
  if (o.validation_dataset_) {
    val = dataset_epochs(*o.validation_dataset_, o.validation_steps_, "fit", strategy());
  } else if (o.validation_data_) {
    val = std::make_unique<EpochIterator>(
        std::vector<Tensor>{o.validation_data_->first, o.validation_data_->second}, o.batch_size_,
        false, o.validation_steps_, "fit");
  }
  return run_fit(*train, val.get(), o);
}

History Trainer::fit(const DatasetCreator& creator, const FitOptions& o) {
  model_.require_compiled("fit");
  distribute::RemoteTraining& remote = remote_training_for(model_, creator, "Model.fit");
  if (o.steps_per_epoch_ <= 0) {
    throw ValueError("Model.fit: steps_per_epoch must be specified with ParameterServerStrategy "
                     "(the workers' datasets from DatasetCreator(\"" + creator.function() +
                     "\") have no known end): pass FitOptions().steps_per_epoch(n)");
  }
  if (o.validation_split_ > 0) {
    throw ValueError("Model.fit: validation_split is not supported with a DatasetCreator; pass "
                     "validation_data");
  }
  if (!o.class_weight_.empty() || o.sample_weight_.defined()) {
    throw ValueError("Model.fit: class_weight and sample_weight are not supported with a "
                     "DatasetCreator; let its dataset yield (x, y, sample_weight)");
  }
  std::unique_ptr<EpochIterator> val;
  if (o.validation_dataset_) {
    val = dataset_epochs(*o.validation_dataset_, o.validation_steps_, "fit", strategy());
  } else if (o.validation_data_) {
    val = std::make_unique<EpochIterator>(
        std::vector<Tensor>{o.validation_data_->first, o.validation_data_->second}, o.batch_size_,
        false, o.validation_steps_, "fit");
  }
  return run_remote_fit(remote, creator, val.get(), o);
}

History Trainer::run_remote_fit(distribute::RemoteTraining& remote, const DatasetCreator& creator,
                                EpochIterator* validation, const FitOptions& o) {
  Model& m = model_;
  if (o.epochs_ < 0 || o.initial_epoch_ < 0) {
    throw ValueError("Model.fit: epochs and initial_epoch must be >= 0, got " +
                     std::to_string(o.epochs_) + " and " + std::to_string(o.initial_epoch_));
  }
  if (o.validation_freq_ < 1) {
    throw ValueError("Model.fit: validation_freq must be >= 1, got " +
                     std::to_string(o.validation_freq_));
  }
  // As TensorFlow: no batch-level callbacks, since steps run asynchronously on the workers.
  std::string batch_level;
  for (const CallbackPtr& c : o.callbacks_) {
    if (c && c->implements_batch_hooks()) {
      batch_level += (batch_level.empty() ? "" : ", ") + class_name_of(*c);
    }
  }
  if (!batch_level.empty()) {
    throw ValueError("Model.fit: batch-level callbacks are not supported with "
                     "ParameterServerStrategy (steps run asynchronously on the workers; only "
                     "epoch-level hooks run, on the coordinator). Found unsupported callbacks: " +
                     batch_level + ". Use epoch-level settings (save_freq / update_freq \"epoch\"); a callback "
                     "of your own with no batch hooks: derive it from EpochCallback (or override "
                     "implements_batch_hooks() to return false)");
  }
  const auto scope = strategy_scope(m);
  if (!m.built()) {
    throw ValueError("Model.fit: model '" + m.name() + "' must be built before fit under "
                     "ParameterServerStrategy (the workers rebuild it from its config): give it "
                     "an Input, or call it once in the strategy's scope");
  }
  // The optimizer's slots, made on the ps tasks beside their variables before any worker pushes,
  // so the coordinator's checkpoints include them.
  m.optimizer()->build(m.trainable_variables());
  auto history = std::make_shared<History>();
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, &m, o.epochs_,
                                          o.steps_per_epoch_, history);
  TerminationSignalScope signals;
  m.stop_training = false;
  m.progress_ = TrainingProgress{};
  // The workers get the model and make their datasets (an unknown function fails here).
  const std::unique_ptr<distribute::RemoteTrainingSession> session =
      remote.start_training(m, creator.function());
  callbacks.on_train_begin(Logs());
  // A backup restored by BackupAndRestore: training goes on at its epoch (one it ended inside
  // starts over: the workers' datasets cannot be positioned).
  const std::optional<ResumePoint> resume = std::exchange(m.resume_point_, std::nullopt);
  const int first_epoch = resume ? std::max(o.initial_epoch_, resume->epoch) : o.initial_epoch_;
  for (int epoch = first_epoch; epoch < o.epochs_ && !m.stop_training; ++epoch) {
    m.progress_.epoch = epoch;
    m.progress_.step = 0;
    callbacks.on_epoch_begin(epoch, Logs());
    std::optional<Logs> ran = session->run_epoch(epoch, o.steps_per_epoch_);
    if (!ran) {
      // Stopped by a signal at a step boundary inside the epoch: a backup made now resumes at
      // this epoch's start (the workers' datasets cannot be positioned), with the updates so far.
      const int sig = TerminationSignalScope::pending();
      callbacks.on_preemption(sig);
      throw TrainingInterrupted(
          std::string("Model.fit: stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
              " during epoch " + std::to_string(epoch + 1) +
              " (the steps running finished, the rest were dropped; callbacks saved what they "
              "save on preemption: with BackupAndRestore, run the same command again to resume "
              "at this epoch; without such a callback, nothing was saved)",
          sig);
    }
    Logs epoch_logs = std::move(*ran);
    m.progress_.step = o.steps_per_epoch_;
    if (validation && (epoch + 1) % o.validation_freq_ == 0) {
      // Inline on the coordinator, reading the variables from the ps tasks.
      CallbackList validation_callbacks(o.callbacks_);
      const Logs val_logs = run_evaluation(*validation, validation_callbacks, "Model.fit");
      for (const auto& [k, v] : val_logs.items()) epoch_logs.set("val_" + k, v);
    }
    callbacks.on_epoch_end(epoch, epoch_logs);
    if (const int sig = TerminationSignalScope::pending()) {
      // The epoch is whole: a backup made now resumes at the next one (not this one again).
      m.progress_.epoch = epoch + 1;
      m.progress_.step = 0;
      callbacks.on_preemption(sig);
      throw TrainingInterrupted(
          std::string("Model.fit: stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
              " after epoch " + std::to_string(epoch + 1) +
              " (callbacks saved what they save on preemption: with BackupAndRestore, run the "
              "same command again to resume; without such a callback, nothing was saved)",
          sig);
    }
  }
  callbacks.on_train_end(Logs());
  return *history;
}

std::map<std::string, double> Trainer::evaluate(const DatasetCreator& creator,
                                                const EvaluateOptions& o) {
  model_.require_compiled("evaluate");
  distribute::RemoteTraining& remote = remote_training_for(model_, creator, "Model.evaluate");
  if (const int64_t shards = model_.compiled_->pss_evaluation_shards; shards != 0) {
    return to_map(run_exact_evaluation(remote, creator, shards, o));
  }
  if (o.steps_ <= 0) {
    throw ValueError("Model.evaluate: steps must be specified with a DatasetCreator (its dataset "
                     "DatasetCreator(\"" + creator.function() + "\") has no known end): pass "
                     "EvaluateOptions().steps(n)");
  }
  EpochIterator it(remote.local_dataset(creator.function()), o.steps_, "evaluate");
  const auto scope = strategy_scope(model_);
  CallbackList callbacks =
      make_callbacks(o.callbacks_, o.verbose_, &model_, 1, it.steps(), nullptr);
  return to_map(run_evaluation(it, callbacks, "Model.evaluate"));  // ParameterServerStrategy
}

Logs Trainer::run_exact_evaluation(distribute::RemoteTraining& remote,
                                   const DatasetCreator& creator, int64_t shards,
                                   const EvaluateOptions& o) {
  // TensorFlow's exact evaluation: the shards run as closures on the workers, each with its
  // own metrics from zero; their state variables (sums, for every metric) are added up here.
  // The data is finite and visited once, so `steps` is not needed.
  const data::Dataset dataset = remote.local_dataset(creator.function());
  if (dataset.cardinality() == data::kInfiniteCardinality) {
    throw ValueError("Model.evaluate: exact evaluation (pss_evaluation_shards) visits every "
                     "element of DatasetCreator(\"" + creator.function() + "\")'s dataset once, "
                     "so it must be finite: do not repeat() it");
  }
  EpochIterator local(dataset, 1, "evaluate");
  const auto scope = strategy_scope(model_);
  build_state([&local] { return local.peek(); }, /*training=*/false);   // this model's metrics
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, &model_, 1, 0, nullptr);
  callbacks.on_test_begin(Logs());
  const std::vector<std::vector<Tensor>> states =
      remote.evaluate_shards(model_, creator.function(), shards);
  model_.reset_metrics();
  std::vector<VariablePtr> vars;
  for (const std::shared_ptr<metrics::Metric>& m : model_.metrics()) {
    for (const VariablePtr& v : m->variables()) vars.push_back(v);
  }
  NoGradGuard no_grad;
  for (size_t k = 0; k < states.size(); ++k) {
    if (states[k].size() != vars.size()) {
      throw ValueError("Model.evaluate: shard " + std::to_string(k) + " returned " +
                       std::to_string(states[k].size()) + " metric variables, expected " +
                       std::to_string(vars.size()) + ": every task must compile the same "
                       "metrics");
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      vars[i]->assign_add(states[k][i].to(vars[i]->device()));
    }
  }
  Logs logs = model_.metrics_logs();
  callbacks.on_test_end(logs);
  return logs;
}

Logs Trainer::run_evaluate(EpochIterator& it, CallbackList& callbacks) {
  distribute::Strategy& s = strategy();
  if (s.num_workers() <= 1) return run_evaluation(it, callbacks, "Model.evaluate");
  TerminationSignalScope signals;
  int stopped_after = -1;
  Logs logs = run_evaluation(it, callbacks, "Model.evaluate", &stopped_after);
  if (stopped_after >= 0) {
    throw termination_error("Model.evaluate", s, s.termination_request(),
                            "after batch " + std::to_string(stopped_after),
                            "evaluate saves nothing");
  }
  return logs;
}

std::map<std::string, double> Trainer::evaluate(const Tensor& x, const Tensor& y,
                                                const EvaluateOptions& o) {
  model_.require_compiled("evaluate");
  std::vector<Tensor> data{x, y};
  if (o.sample_weight_.defined()) data.push_back(o.sample_weight_);
  EpochIterator it(data, o.batch_size_, false, o.steps_, "evaluate");
  const auto scope = strategy_scope(model_);
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, &model_, 1, it.steps(), nullptr);
  return to_map(run_evaluate(it, callbacks));
}

std::map<std::string, double> Trainer::evaluate(const data::Dataset& dataset,
                                                const EvaluateOptions& o) {
  model_.require_compiled("evaluate");
  std::unique_ptr<EpochIterator> it = dataset_epochs(dataset, o.steps_, "evaluate", strategy());
  const auto scope = strategy_scope(model_);
  CallbackList callbacks = make_callbacks(o.callbacks_, o.verbose_, &model_, 1, it->steps(), nullptr);
  return to_map(run_evaluate(*it, callbacks));
}

Tensor Trainer::run_predict(EpochIterator& it, const PredictOptions& o) {
  const auto scope = strategy_scope(model_);
  // Under a multi-worker strategy SIGTERM / SIGINT stop every worker after the same batch (see
  // run_evaluate).
  std::optional<TerminationSignalScope> signals;
  if (strategy().num_workers() > 1) signals.emplace();
  build_state([&it] { return it.peek(); }, /*training=*/false);
  CallbackList callbacks(o.callbacks_);
  callbacks.set_model(&model_);
  callbacks.set_params({1, it.steps(), o.verbose_});
  callbacks.on_predict_begin(Logs());
  it.begin_epoch();
  distribute::Strategy& s = strategy();
  OnModelDevice device(model_);
  const NotATrainingLoop not_training(s);
  auto input = s.distribute_input([&it] { return it.next(); }, {it.batch_size(), "Model.predict"});
  std::vector<Tensor> outputs;
  int step = 0;
  while (auto batch = input->next()) {
    callbacks.on_predict_batch_begin(step, Logs());
    const distribute::PerReplica out = s.run_step(
        [this](const data::Element& b) { return model_.predict_step(b); }, *batch);
    // Returned on the host, as Keras returns NumPy arrays (and GPU memory stays free).
    outputs.push_back(s.gather_outputs(out, *batch).to(Device::cpu()));
    callbacks.on_predict_batch_end(step, Logs());
    ++step;
    if (signals) {
      if (const distribute::Strategy::TerminationRequest request = s.termination_request()) {
        s.join();
        throw termination_error("Model.predict", s, request,
                                "after batch " + std::to_string(step), "predict saves nothing");
      }
    }
  }
  s.join();
  callbacks.on_predict_end(Logs());
  if (outputs.empty()) throw no_batches("Model.predict", "the input");
  return outputs.size() == 1 ? outputs[0] : concat(outputs, 0);  // in input order
}

Tensor Trainer::predict(const Tensor& x, const PredictOptions& o) {
  EpochIterator it({x}, o.batch_size_, false, o.steps_, "predict");
  return run_predict(it, o);
}

Tensor Trainer::predict(const data::Dataset& dataset, const PredictOptions& o) {
  EpochIterator it(dataset, o.steps_, "predict");
  return run_predict(it, o);
}

namespace {
// A single batch as a source of one: any size, split as evenly as it goes.
distribute::BatchSource just(const data::Element& batch) {
  return [batch, done = false]() mutable -> std::optional<data::Element> {
    if (std::exchange(done, true)) return std::nullopt;
    return batch;
  };
}
}  // namespace

Logs Trainer::train_on_batch(const data::Element& batch, bool reset_metrics) {
  return run_one_batch(batch, reset_metrics, /*training=*/true);
}

Logs Trainer::test_on_batch(const data::Element& batch, bool reset_metrics) {
  return run_one_batch(batch, reset_metrics, /*training=*/false);
}

Logs Trainer::run_one_batch(const data::Element& batch, bool reset_metrics, bool training) {
  const char* who = training ? "Model.train_on_batch" : "Model.test_on_batch";
  model_.require_compiled(training ? "train_on_batch" : "test_on_batch");
  const auto scope = strategy_scope(model_);
  build_state([&batch] { return std::optional<data::Element>(batch); }, training);
  if (reset_metrics) model_.reset_metrics();
  distribute::Strategy& s = strategy();
  OnModelDevice device(model_);
  auto input = s.distribute_input(just(batch), {-1, who});
  s.run_step(
      [this, training](const data::Element& b) {
        training ? model_.train_step(b) : model_.test_step(b);
        return Tensor();
      },
      *input->next());
  s.join();
  return model_.metrics_logs();
}

Tensor Trainer::predict_on_batch(const Tensor& x) {
  const auto scope = strategy_scope(model_);
  const data::Element batch{x};
  build_state([&batch] { return std::optional<data::Element>(batch); }, /*training=*/false);
  distribute::Strategy& s = strategy();
  OnModelDevice device(model_);
  auto input = s.distribute_input(just(batch), {-1, "Model.predict_on_batch"});
  const std::optional<distribute::DistributedBatch> split = input->next();
  const distribute::PerReplica out = s.run_step(
      [this](const data::Element& b) { return model_.predict_step(b); }, *split);
  s.join();
  return s.gather_outputs(out, *split);
}

}  // namespace strata
