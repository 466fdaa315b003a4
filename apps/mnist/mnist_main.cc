// Trains a CNN on MNIST or Fashion-MNIST with compile/fit, then prints the test accuracy.
//
//   mnist --model convnet --dataset mnist --epochs 15 --batch_size 128
//
// Models:
//   seed_cnn: Reshape(28,28,1) -> Conv2D(32,3,relu) -> Flatten -> Dense(128,relu) -> Dense(10)
//   convnet:  the Keras "simple MNIST convnet": two Conv2D+MaxPooling2D blocks, Dropout(0.5),
//             Dense(10, softmax); 34,826 parameters.
//   conv_pool: two "same"-padded Conv2D+MaxPooling2D blocks, Dense(256), Dropout(0.4),
//             Dense(10, softmax); for Fashion-MNIST.
// Data: scripts/get_datasets mnist|fashion_mnist (or --data_dir).
//
// With --model_dir the run is restartable: it keeps a backup there (BackupAndRestore), so a run
// killed at any moment and started again with the same command resumes where it was and ends
// with the same weights; it also writes per-epoch checkpoints, TensorBoard logs, history.csv and
// the final model.h5 (Keras' HDF5 layout).
//
// --distribution_strategy mirrored|central_storage --num_cpu_replicas N trains with
// MirroredStrategy / CentralStorageStrategy over N logical CPU devices (one_device: on /cpu:0);
// --batch_size is then the global batch, split over the replicas (a multiple of N). The model is
// built and compiled in the strategy's scope; fit, evaluate and the callbacks are unchanged.
#include <strata/strata.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "apps/common/main_guard.h"
#include "apps/common/strategy_setup.h"

using namespace strata;

namespace {

std::shared_ptr<Sequential> seed_cnn() {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      Reshape({28, 28, 1}),
      Conv2D(32, 3, "relu"),
      Flatten(),
      Dense(128, "relu"),
      Dense(10),
  }, "seed_cnn");
}

std::shared_ptr<Sequential> convnet() {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      Reshape({28, 28, 1}),
      Conv2D(32, 3, "relu"),
      MaxPooling2D(2),
      Conv2D(64, 3, "relu"),
      MaxPooling2D(2),
      Flatten(),
      Dropout(0.5),
      Dense(10, "softmax"),
  }, "convnet");
}

// Two Conv2D + MaxPooling2D blocks with "same" padding and a wider classifier: the model for
// Fashion-MNIST, where the smaller convnet stops near 90%.
std::shared_ptr<Sequential> conv_pool() {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      Reshape({28, 28, 1}),
      Conv2D(32, 3, Conv2DOptions().activation("relu").padding("same")),
      MaxPooling2D(2),
      Conv2D(64, 3, Conv2DOptions().activation("relu").padding("same")),
      MaxPooling2D(2),
      Flatten(),
      Dense(256, "relu"),
      Dropout(0.4),
      Dense(10, "softmax"),
  }, "conv_pool");
}

}  // namespace

static int run(int argc, char** argv) {
  apps::Flags flags("mnist", "Trains a CNN on MNIST or Fashion-MNIST and prints test_accuracy.");
  std::string& model_name = flags.add_string("model", "convnet", "Model to train.", {"seed_cnn", "convnet", "conv_pool"});
  std::string& dataset = flags.add_string("dataset", "mnist", "Data set.", {"mnist", "fashion_mnist"});
  std::string& data_dir = flags.add_string("data_dir", "", "Folder with the IDX files (default: $STRATA_DATA_DIR/<dataset>, then ~/.strata/datasets/<dataset>).");
  int64_t& epochs = flags.add_int("epochs", 15, "Training epochs.");
  int64_t& batch_size = flags.add_int(
      "batch_size", 128, "Batch size (the global batch: split over the replicas of a strategy).");
  int64_t& steps_per_epoch = flags.add_int(
      "steps_per_epoch", 0, "If > 0: train only this many batches per epoch (Keras' steps_per_epoch).");
  std::string& distribution_strategy = flags.add_string(
      "distribution_strategy", "off",
      "'off' (no strategy), 'one_device' (OneDeviceStrategy on /cpu:0), 'mirrored' "
      "(MirroredStrategy) or 'central_storage' (CentralStorageStrategy) over --num_gpus GPUs, or "
      "over --num_cpu_replicas logical CPU devices when --num_gpus=0.",
      {"off", "one_device", "mirrored", "central_storage"});
  int64_t& num_cpu_replicas = flags.add_int(
      "num_cpu_replicas", 1,
      "With mirrored or central_storage: split the CPU into this many logical devices /cpu:0.. "
      "(each with its share of the threads), one replica on each; --batch_size must be a "
      "multiple of it.");
  int64_t& num_gpus = flags.add_int(
      "num_gpus", 0,
      "GPUs to use (0: the CPU). 1 with off/one_device trains on /gpu:0; N with mirrored runs one "
      "replica per GPU (NCCL all-reduce).");
  std::string& model_dir = flags.add_string(
      "model_dir", "",
      "If set: backup/ (resume after a kill: run the same command again), "
      "checkpoints/ckpt-<epoch>.h5, logs/ (TensorBoard), history.csv, model.json and model.h5.");
  std::string& backup_freq = flags.add_string(
      "backup_freq", "epoch", "With --model_dir: back up at each epoch end ('epoch') or every N batches.");
  int64_t& seed = flags.add_int("seed", 42, "Random seed (weights, shuffling, dropout).");
  int64_t& verbose = flags.add_int("verbose", 1, "0 silent, 1 progress bar, 2 one line per epoch.");
  flags.parse(argc, argv);
  if (epochs < 1 || batch_size < 1) throw apps::FlagError("--epochs and --batch_size must be >= 1");
  if (verbose < 0 || verbose > 2) throw apps::FlagError("--verbose must be 0, 1 or 2");
  if (steps_per_epoch < 0) throw apps::FlagError("--steps_per_epoch must be >= 0");
  apps::check_replica_flags(distribution_strategy, num_cpu_replicas, num_gpus);

  // The strategy comes before any variable; the global batch must split evenly over its
  // replicas (the library's ValueError otherwise, before the data is read).
  const std::shared_ptr<distribute::Strategy> strategy =
      apps::make_strategy(distribution_strategy, int(num_cpu_replicas), int(num_gpus));
  const Device off_device = apps::default_device_for(num_gpus);
  std::printf("Strategy: %s\n",
              apps::describe_strategy(strategy.get(), batch_size, off_device).c_str());

  set_random_seed(uint64_t(seed));
  auto [train, test] = dataset == "mnist" ? mnist::load_data(data_dir) : fashion_mnist::load_data(data_dir);
  // Scale to [0, 1] floats, as the Keras example does.
  const Tensor x_train = cast(train.first, float32) / 255.0, y_train = train.second;
  const Tensor x_test = cast(test.first, float32) / 255.0, y_test = test.second;
  std::cout << "x_train " << x_train.shape().to_string() << ", x_test " << x_test.shape().to_string() << "\n";

  // Built and compiled in the strategy's scope: its variables (and the optimizer's and metrics')
  // are the strategy's, and fit / evaluate / save re-enter it.
  // Without a strategy, the model lives where --num_gpus puts it (a DeviceScope).
  std::optional<distribute::Strategy::Scope> scope;
  if (strategy) scope.emplace(strategy->scope());
  std::optional<DeviceScope> placement;
  if (!strategy) placement.emplace(off_device);
  std::shared_ptr<Sequential> model = model_name == "convnet"     ? convnet()
                                      : model_name == "conv_pool" ? conv_pool()
                                                                  : seed_cnn();
  model->build({-1, 28, 28});
  model->summary();
  // seed_cnn ends in logits; convnet in a softmax, as in the Keras example.
  model->compile("adam",
                 std::make_shared<losses::SparseCategoricalCrossentropy>(/*from_logits=*/model_name == "seed_cnn"),
                 {"accuracy"});
  scope.reset();
  placement.reset();
  std::vector<CallbackPtr> callbacks;
  const std::filesystem::path dir(model_dir);
  if (!model_dir.empty()) {
    BackupAndRestoreOptions backup;
    if (backup_freq == "epoch") {
      backup.save_freq("epoch");
    } else {
      try {
        backup.save_freq(std::stoll(backup_freq));
      } catch (const std::logic_error&) {
        throw apps::FlagError("--backup_freq must be 'epoch' or a number of batches, got '" +
                              backup_freq + "'");
      }
    }
    std::filesystem::create_directories(dir / "checkpoints");
    std::ofstream(dir / "model.json") << model->to_json(2) << "\n";
    callbacks = {std::make_shared<BackupAndRestore>((dir / "backup").string(), backup),
                 std::make_shared<ModelCheckpoint>((dir / "checkpoints" / "ckpt-{epoch:02d}.h5").string()),
                 std::make_shared<TensorBoard>((dir / "logs").string()),
                 // append: a resumed run continues the file instead of starting it again
                 std::make_shared<CSVLogger>((dir / "history.csv").string(), ",", /*append=*/true)};
  }
  FitOptions fit_options = FitOptions()
                               .batch_size(batch_size)
                               .epochs(int(epochs))
                               .validation_split(0.1)
                               .callbacks(callbacks)
                               .verbose(int(verbose));
  if (steps_per_epoch > 0) fit_options.steps_per_epoch(steps_per_epoch);
  model->fit(x_train, y_train, fit_options);
  auto scores = model->evaluate(x_test, y_test, EvaluateOptions().batch_size(batch_size).verbose(0));
  std::printf("test_loss=%.4f\n", scores.at("loss"));
  if (!model_dir.empty()) {
    model->save((dir / "model.h5").string());
    std::printf("saved %s\n", (dir / "model.h5").string().c_str());
  }
  std::printf("test_accuracy=%.4f\n", scores.at("accuracy"));
  return 0;
}

int main(int argc, char** argv) {
  return apps::guarded_main([&] { return run(argc, argv); });
}
