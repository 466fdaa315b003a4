// Trains a ResNet on CIFAR-10 with compile/fit: a port of TensorFlow's official
// resnet_cifar_main.py (models/official/legacy/image_classification/resnet), same flags and
// recipe:
//   model     ResNet-(6n+2), n = (resnet_size - 2) / 6 (resnet_model.h)
//   input     pad 4 + random 32x32 crop + random horizontal flip + per-image standardization
//             (cifar_input.h), shuffled each epoch
//   optimizer SGD, momentum 0.9, learning rate 0.1 * batch_size / 128, divided by 10 at epochs
//             91, 136 and 182 (PiecewiseConstantDecay over steps)
//   loss      sparse_categorical_crossentropy (+ L2 2e-4 on conv and dense kernels)
//
//   resnet_cifar --resnet_size 20 --batch_size 128 --train_epochs 182
//   resnet_cifar --use_synthetic_data --train_steps 20 --batch_size 32
// Data: scripts/get_datasets cifar10 (or --data_dir). Prints examples/sec every --log_steps
// steps (the official TimeHistory callback) and the evaluation loss and accuracy at the end.
//
// --model_dir makes the run restartable and keeps its results (see the flag's help);
// --eval_only evaluates the model.h5 a finished run left in --model_dir.
//
// --distribution_strategy (the official distribute_utils.get_distribution_strategy):
//   off              no strategy (plain variables, one replica)
//   one_device       OneDeviceStrategy on /cpu:0 (the default, as in the official script)
//   mirrored         MirroredStrategy over --num_cpu_replicas logical CPU devices
//   central_storage  CentralStorageStrategy over --num_cpu_replicas logical CPU devices
// --batch_size is the global batch (split over the replicas; it must be a multiple of their
// number), and the learning rate scales with it, as in the official script.
//
//   resnet_cifar --use_synthetic_data --train_steps 20 --distribution_strategy mirrored --num_cpu_replicas 2
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/final_save.h"
#include "apps/common/interruption.h"
#include "apps/common/job_security_flags.h"
#include "apps/common/main_guard.h"
#include "apps/common/model_dir.h"
#include "apps/common/scores.h"
#include "apps/common/parameter_server_task.h"
#include "apps/common/strategy_setup.h"
#include "distribute/parameter_server/step_registry.h"
#include "apps/common/test_hooks.h"
#include "apps/resnet_cifar/cifar_input.h"
#include "apps/resnet_cifar/resnet_cifar_flags.h"
#include "apps/resnet_cifar/resnet_model.h"

using namespace strata;

namespace {

constexpr double kBaseLearningRate = 0.1;  // for batch size 128
// (multiplier, epoch it starts at), the official LR_SCHEDULE.
const std::vector<std::pair<double, int64_t>> kLrSchedule = {{0.1, 91}, {0.01, 136}, {0.001, 182}};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The official TimeHistory callback: every log_steps steps, the examples/second since the last
// report; the average over all reports but the first (which includes start-up) at the end.
class TimeHistory : public Callback {
 public:
  TimeHistory(int64_t batch_size, int64_t log_steps) : batch_size_(batch_size), log_steps_(log_steps) {}

  void on_train_batch_begin(int, const Logs&) override {
    ++global_steps_;
    if (global_steps_ == 1) window_start_ = Clock::now();
  }
  void on_train_batch_end(int, const Logs&) override {
    last_batch_end_ = Clock::now();
    if (global_steps_ % log_steps_ != 0) return;
    const double elapsed = seconds_since(window_start_);
    const double examples_per_second = double(log_steps_ * batch_size_) / elapsed;
    std::printf("TimeHistory: %.2f seconds, %.2f examples/second between steps %lld and %lld\n",
                elapsed, examples_per_second, static_cast<long long>(last_log_step_),
                static_cast<long long>(global_steps_));
    std::fflush(stdout);
    if (reports_++ > 0) {
      steady_seconds_ += elapsed;
      steady_steps_ += global_steps_ - last_log_step_;
    }
    last_log_step_ = global_steps_;
    window_start_ = Clock::now();
  }
  void on_epoch_begin(int, const Logs&) override { epoch_start_ = Clock::now(); }
  // Validation runs after the epoch's last step, so the training time stops there.
  void on_epoch_end(int epoch, const Logs&) override {
    const double training = std::chrono::duration<double>(last_batch_end_ - epoch_start_).count();
    train_seconds_ += training;
    std::printf("Epoch %d: %.2f seconds training, %.2f with evaluation\n", epoch + 1, training,
                seconds_since(epoch_start_));
  }

  int64_t global_steps() const { return global_steps_; }
  // Time spent in training epochs, up to each epoch's last step (validation excluded).
  double train_seconds() const { return train_seconds_; }
  // Examples/second over the reports after the first; over the whole run when there are fewer
  // than two reports.
  double average_examples_per_second() const {
    if (steady_steps_ > 0) return double(steady_steps_ * batch_size_) / steady_seconds_;
    return train_seconds_ > 0 ? double(global_steps_ * batch_size_) / train_seconds_ : 0.0;
  }

 private:
  int64_t batch_size_, log_steps_;
  int64_t global_steps_ = 0, last_log_step_ = 0, reports_ = 0, steady_steps_ = 0;
  double steady_seconds_ = 0, train_seconds_ = 0;
  Clock::time_point window_start_, epoch_start_, last_batch_end_;
};

std::string with_commas(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}

int64_t count(const std::vector<VariablePtr>& vars) {
  int64_t n = 0;
  for (const auto& v : vars) n += v->shape().numel();
  return n;
}

// The training input a worker of a parameter-server job makes for itself (the chief's own
// below is the same).
data::Dataset training_input(const resnet_cifar::Options& o) {
  if (o.use_synthetic_data) return resnet_cifar::synthetic_dataset(o.batch_size, o.seed);
  if (o.data_format == "tfrecord") return resnet_cifar::train_records(o.data_dir, o.batch_size, o.seed);
  auto [train, test] = cifar10::load_data(o.data_dir);
  return resnet_cifar::train_dataset(train.first, train.second, o.batch_size, o.seed);
}

}  // namespace

static int run(int argc, char** argv) {
  const resnet_cifar::Options o = resnet_cifar::parse_flags(argc, argv);
  apps::apply_job_security_flags();  // the job token, TLS, the bind host
  const int64_t batch_size = o.batch_size;

  // --model_dir before any work: an unusable one is an error now, not after an epoch; the lock
  // keeps a second training run off it for as long as this one lives. --eval_only only reads
  // model.h5 (replaced atomically by a training run), so it neither creates nor locks the dir.
  const std::filesystem::path dir(o.model_dir);

  // ---- parameter servers: every task runs this command; TF_CONFIG says which part it plays ----
  const bool parameter_server = o.distribution_strategy == "parameter_server";
  std::optional<apps::ParameterServerTask> ps_task;
  if (parameter_server) {
    // Each worker makes its own training input (its own copy of the data), repeated: workers
    // take steps at their own pace. Registered before serving.
    distribute::register_dataset_function("resnet_cifar_train", [o](const distribute::DatasetContext&) {
      return training_input(o).repeat();
    });
    ps_task.emplace(apps::parameter_server_task(o.model_dir));
    if (ps_task->serves()) return ps_task->serve();
  }
  // The job's evaluator (parameter_server or multi_worker_mirrored) trains nothing: it evaluates
  // the checkpoints the chief writes, without a strategy.
  const bool evaluator = ps_task ? ps_task->evaluates()
                                 : apps::is_evaluator_task(o.distribution_strategy, o.model_dir);

  // Workers of one multi-worker job share it: the chief locks it once the strategy says who
  // that is, and the others write only to their own workertemp_<i> folders.
  const bool multi_worker = o.distribution_strategy == "multi_worker_mirrored";
  auto claim = [&] {
    return apps::claim_model_dir(dir, {"logs", "backup"},
                                 {"model.json", "model.h5", "training_log.csv"});
  };
  std::unique_ptr<apps::ModelDirLock> lock;
  if (!o.model_dir.empty() && !o.eval_only && !multi_worker && !evaluator) lock = claim();

  // ---- distribution strategy (before any variable exists) ----
  std::shared_ptr<distribute::CrossDeviceOps> cross_device_ops;
  if (o.distribution_strategy == "mirrored" && o.all_reduce_alg == "hierarchical_copy") {
    cross_device_ops = std::make_shared<distribute::HierarchicalCopyAllReduce>(o.num_packs);
  } else if (o.distribution_strategy == "mirrored" && o.all_reduce_alg == "nccl") {
    cross_device_ops = std::make_shared<distribute::NcclAllReduce>(o.num_packs);
  }
  // (The job's evaluator evaluates without a strategy.)
  const std::shared_ptr<distribute::Strategy> strategy =
      evaluator          ? nullptr
      : parameter_server ? ps_task->strategy()
                         : apps::make_strategy(o.distribution_strategy, o.num_cpu_replicas,
                                               o.num_gpus, cross_device_ops,
                                               o.elastic_min_workers);
  const bool chief = !strategy || strategy->should_checkpoint();
  if (!o.model_dir.empty() && !o.eval_only && multi_worker && chief && !evaluator) lock = claim();
  const Device off_device = apps::default_device_for(o.num_gpus);
  // The global batch must split evenly over the replicas: the library's error, before any work.
  std::printf("Strategy: %s\n",
              apps::describe_strategy(strategy.get(), batch_size, off_device).c_str());
  set_random_seed(o.seed);
  // Before any layer exists: layers take the global policy when they are created.
  if (o.dtype != "fp32") {
    mixed_precision::set_global_policy(o.dtype == "fp16" ? "mixed_float16" : "mixed_bfloat16");
    std::printf("Mixed precision: %s\n", mixed_precision::global_policy().name().c_str());
  }

  // ---- input ----
  // An epoch is a pass over the training images loaded (the official script's NUM_IMAGES,
  // which synthetic data stands in for): steps per epoch and the learning-rate boundaries
  // follow from it.
  int64_t num_train_images = resnet_cifar::kNumTrainImages;
  std::optional<data::Dataset> train_ds, eval_ds;
  int64_t eval_steps = -1;
  if (o.use_synthetic_data) {
    std::printf("Using synthetic data: one batch of %lld random 32x32x3 images, repeated\n",
                static_cast<long long>(batch_size));
    train_ds = resnet_cifar::synthetic_dataset(batch_size, o.seed);
    eval_ds = resnet_cifar::synthetic_dataset(batch_size, o.seed + 1);
    eval_steps = std::max<int64_t>(1, resnet_cifar::kNumEvalImages / batch_size);
  } else {
    const auto start = Clock::now();
    int64_t num_test_images = 0;
    const bool evaluates = o.eval_only || !o.skip_eval || evaluator;
    if (o.data_format == "tfrecord") {
      num_train_images = resnet_cifar::count_records(resnet_cifar::record_files(o.data_dir, "train"));
      if (evaluates) {
        num_test_images =
            resnet_cifar::count_records(resnet_cifar::record_files(o.data_dir, "validation"));
      }
      std::printf("CIFAR-10 TFRecords in %s: %lld training and %lld validation records "
                  "(counted in %.2fs)\n",
                  o.data_dir.c_str(), static_cast<long long>(num_train_images),
                  static_cast<long long>(num_test_images), seconds_since(start));
      train_ds = resnet_cifar::train_records(o.data_dir, batch_size, o.seed);
      if (evaluates) eval_ds = resnet_cifar::eval_records(o.data_dir, batch_size);
    } else {
      auto [train, test] = cifar10::load_data(o.data_dir);
      std::printf("CIFAR-10: x_train %s, x_test %s (loaded in %.2fs)\n",
                  train.first.shape().to_string().c_str(), test.first.shape().to_string().c_str(),
                  seconds_since(start));
      num_train_images = train.first.shape()[0];
      num_test_images = test.first.shape()[0];
      train_ds = resnet_cifar::train_dataset(train.first, train.second, batch_size, o.seed);
      eval_ds = resnet_cifar::eval_dataset(test.first, test.second, batch_size);
    }
    const std::string where =
        o.data_dir.empty() ? "the CIFAR-10 data" : "--data_dir " + o.data_dir;
    if (!o.eval_only && batch_size > num_train_images) {
      // Batches drop their remainder: no full batch, no training step.
      throw apps::FlagError("--batch_size " + std::to_string(batch_size) + " exceeds the " +
                            std::to_string(num_train_images) + " training images of " + where +
                            "; use at most " + std::to_string(num_train_images));
    }
    if (num_test_images == 0 && evaluates) {
      throw ValueError("the CIFAR-10 test set (" +
                       std::string(o.data_format == "tfrecord" ? "validation-*" : "test_batch.bin") +
                       ") of " + where + " has no images, so there is nothing to evaluate; "
                       "restore it (scripts/get_datasets cifar10)" +
                       (o.eval_only ? "" : " or train without evaluating (--skip_eval)"));
    }
  }
  const int64_t steps_per_epoch_full = std::max<int64_t>(1, num_train_images / batch_size);

  // The model is created and compiled in the strategy's scope, so its variables (and the
  // optimizer's and metrics') are the strategy's; fit and evaluate re-enter the strategy.
  // Without a strategy, the model lives where --num_gpus puts it (a DeviceScope).
  std::optional<distribute::Strategy::Scope> scope;
  if (strategy) scope.emplace(strategy->scope());
  std::optional<DeviceScope> placement;
  if (!strategy) placement.emplace(off_device);

  if (o.eval_only) {
    std::shared_ptr<Model> saved = load_model((dir / "model.h5").string());
    EvaluateOptions eval_options = EvaluateOptions().verbose(0);
    if (eval_steps > 0) eval_options.steps(eval_steps);
    const auto start = Clock::now();
    const auto scores = saved->evaluate(*eval_ds, eval_options);
    const std::string what = (dir / "model.h5").string() + " on the test set";
    std::printf("Evaluation of %s (%.2fs): loss %.4f, accuracy %.4f\n",
                (dir / "model.h5").string().c_str(), seconds_since(start),
                apps::score(scores, "loss", what), apps::score(scores, "accuracy", what));
    return 0;
  }

  // ---- model ----
  std::shared_ptr<Model> model = resnet_cifar::resnet(o.resnet_size);
  const int64_t trainable = count(model->trainable_weights());
  const int64_t non_trainable = count(model->non_trainable_weights());
  std::printf("Model %s: %zu layers, %s params (trainable %s, non-trainable %s)\n",
              model->name().c_str(), model->layers().size(),
              with_commas(trainable + non_trainable).c_str(), with_commas(trainable).c_str(),
              with_commas(non_trainable).c_str());

  // ---- optimizer: boundaries in steps of a full epoch, as the official use_tensor_lr ----
  const double initial_lr = kBaseLearningRate * double(batch_size) / 128.0;
  std::vector<int64_t> boundaries;
  std::vector<double> values{initial_lr};
  for (const auto& [mult, epoch] : kLrSchedule) {
    boundaries.push_back(epoch * steps_per_epoch_full);
    values.push_back(initial_lr * mult);
  }
  auto schedule = std::make_shared<optimizers::PiecewiseConstantDecay>(boundaries, values);
  auto optimizer = std::make_shared<optimizers::SGD>(schedule, optimizers::SGDOptions().momentum(0.9));
  model->compile(optimizer, "sparse_categorical_crossentropy", {"accuracy"});
  scope.reset();

  if (evaluator) {
    return apps::evaluate_checkpoints(model, *eval_ds, o.model_dir, eval_steps > 0 ? eval_steps : -1,
                                      o.train_steps > 0 ? 1 : o.train_epochs,
                                      (dir / "logs").string());
  }

  int64_t steps_per_epoch = steps_per_epoch_full;
  int epochs = o.train_epochs;
  if (o.train_steps > 0) {
    steps_per_epoch = o.train_steps;
    epochs = 1;
  }
  std::printf("Training %d epoch(s) of %lld steps, batch size %lld, learning rate %g "
              "(/10 at steps %lld, %lld, %lld), %d threads\n",
              epochs, static_cast<long long>(steps_per_epoch), static_cast<long long>(batch_size),
              initial_lr, static_cast<long long>(boundaries[0]), static_cast<long long>(boundaries[1]),
              static_cast<long long>(boundaries[2]), get_num_threads());

  // ---- callbacks ----
  // (Under parameter servers steps run on the workers: no batch-level callbacks, as in
  // TensorFlow, so no TimeHistory; the whole fit is timed instead.)
  auto time_history = std::make_shared<TimeHistory>(batch_size, o.log_steps);
  std::vector<CallbackPtr> callbacks;
  if (!parameter_server) callbacks.push_back(time_history);
  std::shared_ptr<BackupAndRestore> backup;
  if (!o.model_dir.empty()) {
    if (chief) std::ofstream(dir / "model.json") << model->to_json(2) << "\n";
    // Kept after fit until model.h5 is on disk (apps::save_final_model).
    backup = std::make_shared<BackupAndRestore>(
        (dir / "backup").string(), BackupAndRestoreOptions().delete_checkpoint(false));
    // BackupAndRestore first: on resume it restores the state the other callbacks then see.
    callbacks.insert(callbacks.begin(), backup);
    callbacks.push_back(std::make_shared<ModelCheckpoint>(
        (dir / "model.ckpt-{epoch:04d}.h5").string(), ModelCheckpointOptions().save_weights_only(true)));
    callbacks.push_back(std::make_shared<TensorBoard>((dir / "logs").string()));
    callbacks.push_back(
        std::make_shared<CSVLogger>((dir / "training_log.csv").string(), ",", /*append=*/true));
  }

  FitOptions fit_options = FitOptions()
                               .epochs(epochs)
                               .steps_per_epoch(steps_per_epoch)
                               .callbacks(callbacks)
                               .verbose(2);
  if (!o.skip_eval) {
    fit_options.validation_data(*eval_ds).validation_freq(o.epochs_between_evals);
    if (eval_steps > 0) fit_options.validation_steps(eval_steps);
  }
  const auto fit_start = Clock::now();
  apps::fit_ending_job_if_interrupted(strategy.get(), [&] {
    apps::fit_explaining_interruption(backup != nullptr, [&] {
      if (parameter_server) {
        model->fit(DatasetCreator("resnet_cifar_train"), fit_options);
      } else {
        model->fit(*train_ds, fit_options);
      }
    });
  });
  const double fit_seconds = seconds_since(fit_start);
  apps::kill_point("after_fit");
  if (backup && chief) apps::save_final_model(*model, dir / "model.h5", *backup);

  if (parameter_server) {
    const int64_t steps = int64_t(epochs) * steps_per_epoch;
    std::printf("Trained %lld steps (%lld examples) on the workers in %.2fs (evaluation "
                "included): %.1f examples/sec\n",
                static_cast<long long>(steps), static_cast<long long>(steps * batch_size),
                fit_seconds, double(steps * batch_size) / fit_seconds);
  } else {
    const int64_t steps = time_history->global_steps();
    std::printf("Trained %lld steps (%lld examples) in %.2fs: %.1f examples/sec overall, "
                "%.1f examples/sec after the first log window\n",
                static_cast<long long>(steps), static_cast<long long>(steps * batch_size),
                time_history->train_seconds(),
                time_history->train_seconds() > 0 ? double(steps * batch_size) / time_history->train_seconds() : 0.0,
                time_history->average_examples_per_second());
  }

  if (!o.skip_eval) {
    EvaluateOptions eval_options = EvaluateOptions().verbose(0);
    if (eval_steps > 0) eval_options.steps(eval_steps);
    const auto start = Clock::now();
    const auto scores = model->evaluate(*eval_ds, eval_options);
    std::printf("Evaluation (%.2fs): loss %.4f, accuracy %.4f\n", seconds_since(start),
                apps::score(scores, "loss", "the model on the test set"),
                apps::score(scores, "accuracy", "the model on the test set"));
  }
  apps::end_parameter_server_job(strategy.get());
  return 0;
}

int main(int argc, char** argv) {
  return apps::guarded_main([&] { return run(argc, argv); });
}
