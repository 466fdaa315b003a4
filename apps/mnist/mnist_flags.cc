#include "apps/mnist/mnist_flags.h"

#include <absl/flags/flag.h>

#include "apps/common/strategy_setup.h"

namespace mnist_app {

// --backup_freq: "epoch" or a number of batches (BackupAndRestore's save_freq).
struct BackupFreq {
  int64_t batches = 0;  // 0: "epoch"
};
constexpr int64_t kMaxBackupFreq = 1'000'000'000;

bool AbslParseFlag(absl::string_view text, BackupFreq* freq, std::string* error) {
  if (text == "epoch") {
    freq->batches = 0;
    return true;
  }
  if (!apps::parse_integer(std::string_view(text.data(), text.size()), 1, kMaxBackupFreq,
                           &freq->batches, error)) {
    *error = "expected 'epoch' or " + apps::range_text(1, kMaxBackupFreq) + " (batches)";
    return false;
  }
  return true;
}
std::string AbslUnparseFlag(BackupFreq freq) {
  return freq.batches == 0 ? "epoch" : std::to_string(freq.batches);
}

// Ranges: nothing a real run needs is outside them, and every value inside fits the type the
// library takes (FitOptions' epochs are an int). Aliases, as ABSL_FLAG's type takes no commas.
using EpochsFlag = apps::Ranged<int, 1, 1'000'000>;
using BatchSizeFlag = apps::Ranged<int64_t, 1, 1'000'000>;
using StepsFlag = apps::Ranged<int64_t, 0, 1'000'000'000>;
using SeedFlag = apps::Ranged<int64_t, 0, std::numeric_limits<int64_t>::max()>;
using VerboseFlag = apps::Ranged<int, 0, 2>;

}  // namespace mnist_app

ABSL_FLAG(std::string, model, "convnet", "Model to train: seed_cnn, convnet or conv_pool.");
ABSL_FLAG(std::string, dataset, "mnist", "Data set: mnist or fashion_mnist.");
ABSL_FLAG(std::string, data_dir, "",
          "Folder with the IDX files (default: $STRATA_DATA_DIR/<dataset>, then "
          "~/.strata/datasets/<dataset>).");
ABSL_FLAG(mnist_app::EpochsFlag, epochs, 15, "Training epochs (1 to 1000000).");
ABSL_FLAG(mnist_app::BatchSizeFlag, batch_size, 128,
          "Batch size (1 to 1000000; the global batch: split over the replicas of a strategy).");
ABSL_FLAG(mnist_app::StepsFlag, steps_per_epoch, 0,
          "If > 0: train only this many batches per epoch (Keras' steps_per_epoch).");
ABSL_FLAG(std::string, distribution_strategy, "off",
          "'off' (no strategy), 'one_device' (OneDeviceStrategy on /cpu:0), 'mirrored' "
          "(MirroredStrategy) or 'central_storage' (CentralStorageStrategy) over --num_gpus GPUs, "
          "or over --num_cpu_replicas logical CPU devices when --num_gpus=0; "
          "'multi_worker_mirrored' (MultiWorkerMirroredStrategy): the same command on every "
          "machine, each told its role by TF_CONFIG, --batch_size split over every worker's "
          "replicas; 'parameter_server' (ParameterServerStrategy): the same command on every "
          "task, TF_CONFIG naming ps, worker and chief tasks, each worker training batches of "
          "--batch_size asynchronously.");
ABSL_FLAG(apps::NumCpuReplicasFlag, num_cpu_replicas, 1,
          "With mirrored or central_storage: split the CPU into this many logical devices "
          "/cpu:0.. (1 to 256; each with its share of the threads), one replica on each; "
          "--batch_size must be a multiple of it.");
ABSL_FLAG(apps::ElasticMinWorkersFlag, elastic_min_workers, 0,
          "With multi_worker_mirrored: an elastic job. TF_CONFIG's chief and worker tasks are "
          "slots; training goes on with whichever are up, at least this many (the chief "
          "included): a worker lost leaves, one started in a free slot joins, each step keeps "
          "--batch_size as the global batch. 0: a lost worker ends the job.");
ABSL_FLAG(apps::NumGpusFlag, num_gpus, 0,
          "GPUs to use (0: the CPU). 1 with off/one_device trains on /gpu:0; N with mirrored runs "
          "one replica per GPU (NCCL all-reduce).");
ABSL_FLAG(std::string, model_dir, "",
          "If set: backup/ (resume after a kill: run the same command again), "
          "checkpoints/ckpt-<epoch>.h5, logs/ (TensorBoard), history.csv, model.json and model.h5. "
          "Locked while a run uses it (<model_dir>/.lock).");
ABSL_FLAG(mnist_app::BackupFreq, backup_freq, mnist_app::BackupFreq{},
          "With --model_dir: back up at each epoch end ('epoch') or every N batches.");
ABSL_FLAG(mnist_app::SeedFlag, seed, 42,
          "Random seed (weights, shuffling, dropout); >= 0.");
ABSL_FLAG(mnist_app::VerboseFlag, verbose, 1, "0 silent, 1 progress bar, 2 one line per epoch.");

namespace mnist_app {

Options parse_flags(int argc, char** argv, apps::ParseMode mode) {
  apps::read_argv(argc, argv, mode,
                  "Trains a CNN on MNIST or Fashion-MNIST and prints test_accuracy.");
  apps::require_one_of(FLAGS_model, {"seed_cnn", "convnet", "conv_pool"});
  apps::require_one_of(FLAGS_dataset, {"mnist", "fashion_mnist"});
  apps::require_one_of(FLAGS_distribution_strategy,
                       {"off", "one_device", "mirrored", "central_storage",
                        "multi_worker_mirrored", "parameter_server"});
  Options o;
  o.model = absl::GetFlag(FLAGS_model);
  o.dataset = absl::GetFlag(FLAGS_dataset);
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.distribution_strategy = absl::GetFlag(FLAGS_distribution_strategy);
  o.model_dir = absl::GetFlag(FLAGS_model_dir);
  o.epochs = absl::GetFlag(FLAGS_epochs).value;
  o.batch_size = absl::GetFlag(FLAGS_batch_size).value;
  o.steps_per_epoch = absl::GetFlag(FLAGS_steps_per_epoch).value;
  o.num_cpu_replicas = absl::GetFlag(FLAGS_num_cpu_replicas).value;
  o.num_gpus = absl::GetFlag(FLAGS_num_gpus).value;
  o.elastic_min_workers = absl::GetFlag(FLAGS_elastic_min_workers).value;
  o.backup_freq = absl::GetFlag(FLAGS_backup_freq).batches;
  o.seed = uint64_t(absl::GetFlag(FLAGS_seed).value);
  o.verbose = absl::GetFlag(FLAGS_verbose).value;
  apps::check_replica_flags(o.distribution_strategy, o.num_cpu_replicas, o.num_gpus);
  apps::check_elastic_flag(o.distribution_strategy, o.elastic_min_workers);
  if (o.distribution_strategy == "parameter_server" && o.backup_freq > 0) {
    throw apps::FlagError("--backup_freq in batches needs batch-level callbacks, which "
                          "parameter_server does not run (steps run on the workers); back up "
                          "every epoch (--backup_freq=epoch)");
  }
  if (o.backup_freq > 0 && o.model_dir.empty()) {
    throw apps::FlagError("--backup_freq=" + std::to_string(o.backup_freq) +
                          " needs --model_dir (where the backup goes)");
  }
  return o;
}

}  // namespace mnist_app
