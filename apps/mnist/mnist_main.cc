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
// the final model.h5 (Keras' HDF5 layout). The directory is checked and locked before any work
// (one run at a time), and the backup is removed only once model.h5 is on disk.
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
#include "apps/mnist/mnist_flags.h"

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

// The scaled training images and labels, as the Keras example makes them.
std::pair<Tensor, Tensor> training_data(const mnist_app::Options& o) {
  auto [train, test] = o.dataset == "mnist" ? mnist::load_data(o.data_dir)
                                            : fashion_mnist::load_data(o.data_dir);
  return {cast(train.first, float32) / 255.0, train.second};
}

}  // namespace

static int run(int argc, char** argv) {
  const mnist_app::Options o = mnist_app::parse_flags(argc, argv);
  apps::apply_job_security_flags();  // the job token, TLS, the bind host

  // ---- parameter servers: every task runs this command; TF_CONFIG says which part it plays ----
  const bool parameter_server = o.distribution_strategy == "parameter_server";
  std::optional<apps::ParameterServerTask> ps_task;
  if (parameter_server) {
    // Each worker reads the data itself and draws shuffled batches for ever, at its own pace.
    distribute::register_dataset_function("mnist_train", [o](const distribute::DatasetContext& ctx) {
      auto [x, y] = training_data(o);
      return data::Dataset::from_tensor_slices({x, y})
          .shuffle(10000, o.seed + uint64_t(ctx.worker_index))
          .batch(o.batch_size)
          .repeat();
    });
    ps_task.emplace(apps::parameter_server_task(o.model_dir));
    if (ps_task->serves()) return ps_task->serve();
  }
  // The job's evaluator (parameter_server or multi_worker_mirrored) trains nothing: it evaluates
  // the checkpoints the chief writes, without a strategy.
  const bool evaluator = ps_task ? ps_task->evaluates()
                                 : apps::is_evaluator_task(o.distribution_strategy, o.model_dir);

  // --model_dir before any work: an unusable one is an error now, not after an epoch; the lock
  // keeps a second run off it for as long as this one lives.
  const std::filesystem::path dir(o.model_dir);
  // Workers of one multi-worker job share it: the chief locks it once the strategy says who
  // that is, and the others write only to their own workertemp_<i> folders.
  const bool multi_worker = o.distribution_strategy == "multi_worker_mirrored";
  auto claim = [&] {
    return apps::claim_model_dir(dir, {"checkpoints", "logs", "backup"},
                                 {"model.json", "model.h5", "history.csv"});
  };
  std::unique_ptr<apps::ModelDirLock> lock;
  if (!o.model_dir.empty() && !multi_worker && !evaluator) lock = claim();

  // The strategy comes before any variable; the global batch must split evenly over its
  // replicas (the library's ValueError otherwise, before the data is read).
  const std::shared_ptr<distribute::Strategy> strategy =
      evaluator          ? nullptr
      : parameter_server ? ps_task->strategy()
                         : apps::make_strategy(o.distribution_strategy, o.num_cpu_replicas,
                                               o.num_gpus, nullptr, o.elastic_min_workers);
  const bool chief = !strategy || strategy->should_checkpoint();
  if (!o.model_dir.empty() && multi_worker && chief && !evaluator) lock = claim();
  const Device off_device = apps::default_device_for(o.num_gpus);
  std::printf("Strategy: %s\n",
              apps::describe_strategy(strategy.get(), o.batch_size, off_device).c_str());

  set_random_seed(o.seed);
  auto [train, test] = o.dataset == "mnist" ? mnist::load_data(o.data_dir)
                                            : fashion_mnist::load_data(o.data_dir);
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
  std::shared_ptr<Sequential> model = o.model == "convnet"     ? convnet()
                                      : o.model == "conv_pool" ? conv_pool()
                                                               : seed_cnn();
  model->build({-1, 28, 28});
  model->summary();
  // seed_cnn ends in logits; convnet in a softmax, as in the Keras example.
  model->compile("adam",
                 std::make_shared<losses::SparseCategoricalCrossentropy>(/*from_logits=*/o.model == "seed_cnn"),
                 {"accuracy"});
  scope.reset();
  placement.reset();
  if (evaluator) {
    return apps::evaluate_checkpoints(
        model, data::Dataset::from_tensor_slices({x_test, y_test}).batch(o.batch_size),
        (dir / "checkpoints").string(), -1, o.epochs, (dir / "logs").string());
  }
  std::vector<CallbackPtr> callbacks;
  std::shared_ptr<BackupAndRestore> backup;
  if (!o.model_dir.empty()) {
    BackupAndRestoreOptions backup_options;
    if (o.backup_freq > 0) {
      backup_options.save_freq(o.backup_freq);
    } else {
      backup_options.save_freq("epoch");
    }
    // Kept after fit until model.h5 is on disk (apps::save_final_model).
    backup_options.delete_checkpoint(false);
    backup = std::make_shared<BackupAndRestore>((dir / "backup").string(), backup_options);
    if (chief) std::ofstream(dir / "model.json") << model->to_json(2) << "\n";
    callbacks = {backup,
                 std::make_shared<ModelCheckpoint>((dir / "checkpoints" / "ckpt-{epoch:02d}.h5").string()),
                 std::make_shared<TensorBoard>((dir / "logs").string()),
                 // append: a resumed run continues the file instead of starting it again
                 std::make_shared<CSVLogger>((dir / "history.csv").string(), ",", /*append=*/true)};
  }
  FitOptions fit_options = FitOptions()
                               .batch_size(o.batch_size)
                               .epochs(o.epochs)
                               .validation_split(0.1)
                               .callbacks(callbacks)
                               .verbose(o.verbose);
  if (o.steps_per_epoch > 0) fit_options.steps_per_epoch(o.steps_per_epoch);
  if (parameter_server) {
    // The workers' datasets repeat: an epoch is a pass's worth of steps unless given, and no
    // validation split (the workers read the whole training set).
    fit_options.validation_split(0.0);
    if (o.steps_per_epoch == 0) {
      fit_options.steps_per_epoch((x_train.shape()[0] + o.batch_size - 1) / o.batch_size);
    }
  }
  apps::fit_ending_job_if_interrupted(strategy.get(), [&] {
    apps::fit_explaining_interruption(!o.model_dir.empty(), [&] {
      if (parameter_server) {
        model->fit(DatasetCreator("mnist_train"), fit_options);
      } else {
        model->fit(x_train, y_train, fit_options);
      }
    });
  });
  apps::kill_point("after_fit");
  if (backup && chief) {
    apps::save_final_model(*model, dir / "model.h5", *backup);
    std::printf("saved %s\n", (dir / "model.h5").string().c_str());
  }
  const auto scores =
      model->evaluate(x_test, y_test, EvaluateOptions().batch_size(o.batch_size).verbose(0));
  std::printf("test_loss=%.4f\n", apps::score(scores, "loss", "the model on the test set"));
  std::printf("test_accuracy=%.4f\n", apps::score(scores, "accuracy", "the model on the test set"));
  apps::end_parameter_server_job(strategy.get());
  return 0;
}

int main(int argc, char** argv) {
  return apps::guarded_main([&] { return run(argc, argv); });
}
