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

#include "apps/common/main_guard.h"
#include "apps/common/strategy_setup.h"
#include "apps/resnet_cifar/cifar_input.h"
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

}  // namespace

static int run(int argc, char** argv) {
  apps::Flags flags("resnet_cifar",
                    "Trains a ResNet on CIFAR-10 (TensorFlow's official resnet_cifar_main.py).");
  std::string& data_dir = flags.add_string(
      "data_dir", "",
      "Folder holding cifar-10-batches-bin/ (or that folder). Default: $STRATA_DATA_DIR/cifar10, "
      "then ~/.strata/datasets/cifar10.");
  std::string& model_dir = flags.add_string(
      "model_dir", "",
      "If set: backup/ (a killed run resumes when started again with the same command), "
      "model.ckpt-<epoch>.h5 weights each epoch, logs/ for TensorBoard, training_log.csv, "
      "model.json, and model.h5 (the whole model, Keras' HDF5 layout) at the end.");
  bool& eval_only = flags.add_bool(
      "eval_only", false, "Skip training: load <model_dir>/model.h5 and evaluate it on the test set.");
  int64_t& batch_size = flags.add_int("batch_size", 128, "Global batch size for training and evaluation (split over the replicas).");
  int64_t& train_epochs = flags.add_int("train_epochs", 182, "Number of epochs to train.");
  int64_t& train_steps = flags.add_int(
      "train_steps", 0, "If > 0: train only this many steps in total (one epoch of that many steps).");
  int64_t& resnet_size = flags.add_int(
      "resnet_size", 20, "Depth of the ResNet: one of " + resnet_cifar::supported_sizes_text() + ".");
  bool& use_synthetic_data = flags.add_bool(
      "use_synthetic_data", false, "Train and evaluate on random images and labels (no files needed).");
  bool& skip_eval = flags.add_bool("skip_eval", false, "Skip evaluation (in fit and at the end).");
  int64_t& epochs_between_evals = flags.add_int(
      "epochs_between_evals", 1, "Evaluate on the test set during fit every this many epochs.");
  int64_t& log_steps = flags.add_int("log_steps", 100, "Print examples/second every this many steps.");
  std::string& distribution_strategy = flags.add_string(
      "distribution_strategy", "one_device",
      "How to distribute training: 'off' (no strategy), 'one_device' (OneDeviceStrategy on "
      "/gpu:0 with --num_gpus=1, else /cpu:0), 'mirrored' (MirroredStrategy) or 'central_storage' "
      "(CentralStorageStrategy) over --num_gpus GPUs, or --num_cpu_replicas logical CPU devices "
      "when --num_gpus=0; --batch_size is the global batch, split over the replicas. multi_worker_mirrored and parameter_server are not available yet.",
      {"off", "one_device", "mirrored", "central_storage", "multi_worker_mirrored", "parameter_server"});
  int64_t& num_cpu_replicas = flags.add_int(
      "num_cpu_replicas", 1,
      "With --num_gpus=0 and mirrored or central_storage: split the CPU into this many logical "
      "devices /cpu:0.. (each with its share of the threads) and run one replica on each. "
      "--batch_size must be a multiple of it.");
  int64_t& num_gpus = flags.add_int(
      "num_gpus", 0,
      "GPUs to use (0: the CPU). 1 with off/one_device trains on /gpu:0; N with mirrored or "
      "central_storage runs one replica per GPU (mirrored: NCCL all-reduce by default).");
  std::string& all_reduce_alg = flags.add_string(
      "all_reduce_alg", "",
      "With mirrored: the cross-device all-reduce, 'hierarchical_copy' or 'nccl' (GPUs only, "
      "not available yet). Default: ReductionToOneDevice.",
      {"hierarchical_copy", "nccl"});
  int64_t& num_packs = flags.add_int("num_packs", 1, "With --all_reduce_alg: the number of packs (>= 1).");
  std::string& dtype = flags.add_string(
      "dtype", "fp32",
      "Compute dtype: fp16 / bf16 set the Keras mixed-precision policy mixed_float16 / "
      "mixed_bfloat16 (16-bit compute, float32 variables; fp16 adds dynamic loss scaling).",
      {"fp32", "fp16", "bf16"});
  int64_t& seed = flags.add_int("seed", 42, "Random seed (weights, shuffling, augmentation).");
  flags.parse(argc, argv);

  if (batch_size < 1) throw apps::FlagError("--batch_size must be >= 1, got " + std::to_string(batch_size));
  if (train_epochs < 1) throw apps::FlagError("--train_epochs must be >= 1, got " + std::to_string(train_epochs));
  if (train_steps < 0) throw apps::FlagError("--train_steps must be >= 0, got " + std::to_string(train_steps));
  if (log_steps < 1) throw apps::FlagError("--log_steps must be >= 1, got " + std::to_string(log_steps));
  if (epochs_between_evals < 1) throw apps::FlagError("--epochs_between_evals must be >= 1");
  {
    const auto& sizes = resnet_cifar::supported_sizes();
    if (std::find(sizes.begin(), sizes.end(), resnet_size) == sizes.end()) {
      throw apps::FlagError("--resnet_size " + std::to_string(resnet_size) +
                            " is not supported; use one of " + resnet_cifar::supported_sizes_text());
    }
  }
  if (distribution_strategy == "multi_worker_mirrored" || distribution_strategy == "parameter_server") {
    throw apps::FlagError("--distribution_strategy=" + distribution_strategy +
                          " is not available yet: multi-worker strategies arrive with the "
                          "distribute issues; use off, one_device, mirrored or central_storage");
  }
  apps::check_replica_flags(distribution_strategy, num_cpu_replicas, num_gpus);
  if (!all_reduce_alg.empty() && distribution_strategy != "mirrored") {
    throw apps::FlagError("--all_reduce_alg applies to --distribution_strategy=mirrored only");
  }
  if (num_packs < 1) throw apps::FlagError("--num_packs must be >= 1, got " + std::to_string(num_packs));
  if (!use_synthetic_data && batch_size > resnet_cifar::kNumTrainImages) {
    throw apps::FlagError("--batch_size " + std::to_string(batch_size) + " exceeds the " +
                          std::to_string(resnet_cifar::kNumTrainImages) + " training images");
  }

  // ---- distribution strategy (before any variable exists) ----
  std::shared_ptr<distribute::CrossDeviceOps> cross_device_ops;
  if (distribution_strategy == "mirrored" && all_reduce_alg == "hierarchical_copy") {
    cross_device_ops = std::make_shared<distribute::HierarchicalCopyAllReduce>(int(num_packs));
  } else if (distribution_strategy == "mirrored" && all_reduce_alg == "nccl") {
    cross_device_ops = std::make_shared<distribute::NcclAllReduce>(int(num_packs));
  }
  const std::shared_ptr<distribute::Strategy> strategy =
      apps::make_strategy(distribution_strategy, int(num_cpu_replicas), int(num_gpus),
                          cross_device_ops);
  const Device off_device = apps::default_device_for(num_gpus);
  // The global batch must split evenly over the replicas: the library's error, before any work.
  std::printf("Strategy: %s\n",
              apps::describe_strategy(strategy.get(), batch_size, off_device).c_str());
  set_random_seed(uint64_t(seed));
  // Before any layer exists: layers take the global policy when they are created.
  if (dtype != "fp32") {
    mixed_precision::set_global_policy(dtype == "fp16" ? "mixed_float16" : "mixed_bfloat16");
    std::printf("Mixed precision: %s\n", mixed_precision::global_policy().name().c_str());
  }

  // ---- input ----
  const int64_t steps_per_epoch_full = std::max<int64_t>(1, resnet_cifar::kNumTrainImages / batch_size);
  std::optional<data::Dataset> train_ds, eval_ds;
  int64_t eval_steps = -1;
  if (use_synthetic_data) {
    std::printf("Using synthetic data: one batch of %lld random 32x32x3 images, repeated\n",
                static_cast<long long>(batch_size));
    train_ds = resnet_cifar::synthetic_dataset(batch_size, uint64_t(seed));
    eval_ds = resnet_cifar::synthetic_dataset(batch_size, uint64_t(seed) + 1);
    eval_steps = std::max<int64_t>(1, resnet_cifar::kNumEvalImages / batch_size);
  } else {
    const auto start = Clock::now();
    auto [train, test] = cifar10::load_data(data_dir);
    std::printf("CIFAR-10: x_train %s, x_test %s (loaded in %.2fs)\n",
                train.first.shape().to_string().c_str(), test.first.shape().to_string().c_str(),
                seconds_since(start));
    train_ds = resnet_cifar::train_dataset(train.first, train.second, batch_size, uint64_t(seed));
    eval_ds = resnet_cifar::eval_dataset(test.first, test.second, batch_size);
  }

  // The model is created and compiled in the strategy's scope, so its variables (and the
  // optimizer's and metrics') are the strategy's; fit and evaluate re-enter the strategy.
  // Without a strategy, the model lives where --num_gpus puts it (a DeviceScope).
  std::optional<distribute::Strategy::Scope> scope;
  if (strategy) scope.emplace(strategy->scope());
  std::optional<DeviceScope> placement;
  if (!strategy) placement.emplace(off_device);

  const std::filesystem::path dir(model_dir);
  if (eval_only) {
    if (model_dir.empty()) throw apps::FlagError("--eval_only needs --model_dir (where model.h5 is)");
    if (skip_eval) throw apps::FlagError("--eval_only and --skip_eval contradict each other");
    std::shared_ptr<Model> saved = load_model((dir / "model.h5").string());
    EvaluateOptions eval_options = EvaluateOptions().verbose(0);
    if (eval_steps > 0) eval_options.steps(eval_steps);
    const auto start = Clock::now();
    const auto scores = saved->evaluate(*eval_ds, eval_options);
    std::printf("Evaluation of %s (%.2fs): loss %.4f, accuracy %.4f\n",
                (dir / "model.h5").string().c_str(), seconds_since(start), scores.at("loss"),
                scores.at("accuracy"));
    return 0;
  }

  // ---- model ----
  std::shared_ptr<Model> model = resnet_cifar::resnet(int(resnet_size));
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

  int64_t steps_per_epoch = steps_per_epoch_full;
  int epochs = int(train_epochs);
  if (train_steps > 0) {
    steps_per_epoch = train_steps;
    epochs = 1;
  }
  std::printf("Training %d epoch(s) of %lld steps, batch size %lld, learning rate %g "
              "(/10 at steps %lld, %lld, %lld), %d threads\n",
              epochs, static_cast<long long>(steps_per_epoch), static_cast<long long>(batch_size),
              initial_lr, static_cast<long long>(boundaries[0]), static_cast<long long>(boundaries[1]),
              static_cast<long long>(boundaries[2]), get_num_threads());

  // ---- callbacks ----
  auto time_history = std::make_shared<TimeHistory>(batch_size, log_steps);
  std::vector<CallbackPtr> callbacks{time_history};
  if (!model_dir.empty()) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "model.json") << model->to_json(2) << "\n";
    // BackupAndRestore first: on resume it restores the state the other callbacks then see.
    callbacks.insert(callbacks.begin(), std::make_shared<BackupAndRestore>((dir / "backup").string()));
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
  if (!skip_eval) {
    fit_options.validation_data(*eval_ds).validation_freq(int(epochs_between_evals));
    if (eval_steps > 0) fit_options.validation_steps(eval_steps);
  }
  model->fit(*train_ds, fit_options);
  if (!model_dir.empty()) model->save((dir / "model.h5").string());

  const int64_t steps = time_history->global_steps();
  std::printf("Trained %lld steps (%lld examples) in %.2fs: %.1f examples/sec overall, "
              "%.1f examples/sec after the first log window\n",
              static_cast<long long>(steps), static_cast<long long>(steps * batch_size),
              time_history->train_seconds(),
              time_history->train_seconds() > 0 ? double(steps * batch_size) / time_history->train_seconds() : 0.0,
              time_history->average_examples_per_second());

  if (!skip_eval) {
    EvaluateOptions eval_options = EvaluateOptions().verbose(0);
    if (eval_steps > 0) eval_options.steps(eval_steps);
    const auto start = Clock::now();
    const auto scores = model->evaluate(*eval_ds, eval_options);
    std::printf("Evaluation (%.2fs): loss %.4f, accuracy %.4f\n", seconds_since(start),
                scores.at("loss"), scores.at("accuracy"));
  }
  return 0;
}

int main(int argc, char** argv) {
  return apps::guarded_main([&] { return run(argc, argv); });
}
