#include "apps/resnet_cifar/resnet_cifar_flags.h"

#include <algorithm>

#include <absl/flags/flag.h>

#include "apps/common/strategy_setup.h"
#include "apps/resnet_cifar/resnet_model.h"

namespace resnet_cifar {

// --resnet_size: one of the depths resnet_model.h builds.
struct ResnetSize {
  int value = 20;
};

bool AbslParseFlag(absl::string_view text, ResnetSize* size, std::string* error) {
  const auto& sizes = supported_sizes();
  int64_t v = 0;
  if (!apps::parse_integer(std::string_view(text.data(), text.size()), sizes.front(),
                           sizes.back(), &v, error) ||
      std::find(sizes.begin(), sizes.end(), v) == sizes.end()) {
    *error = "expected one of " + supported_sizes_text();
    return false;
  }
  size->value = int(v);
  return true;
}
std::string AbslUnparseFlag(ResnetSize size) { return std::to_string(size.value); }

// Ranges: nothing a real run needs is outside them, and every value inside fits the type the
// library takes (FitOptions' epochs are an int). Aliases, as ABSL_FLAG's type takes no commas.
using BatchSizeFlag = apps::Ranged<int64_t, 1, 1'000'000>;
using EpochsFlag = apps::Ranged<int, 1, 1'000'000>;
using StepsFlag = apps::Ranged<int64_t, 0, 1'000'000'000>;
using LogStepsFlag = apps::Ranged<int64_t, 1, 1'000'000'000>;
using NumPacksFlag = apps::Ranged<int, 1, 1024>;
using SeedFlag = apps::Ranged<int64_t, 0, std::numeric_limits<int64_t>::max()>;

}  // namespace resnet_cifar

ABSL_FLAG(std::string, data_dir, "",
          "Folder holding cifar-10-batches-bin/ (or that folder). Default: "
          "$STRATA_DATA_DIR/cifar10, then ~/.strata/datasets/cifar10.");
ABSL_FLAG(std::string, data_format, "binary",
          "What --data_dir holds: 'binary' (CIFAR-10's cifar-10-batches-bin) or 'tfrecord' "
          "(TFRecord files of tf.train.Example, train-* and validation-*, as "
          "strata_cifar10_to_tfrecord writes them; read through the input pipeline, and under "
          "multi_worker_mirrored each worker reads only its own files).");
ABSL_FLAG(std::string, model_dir, "",
          "If set: backup/ (a killed run resumes when started again with the same command), "
          "model.ckpt-<epoch>.h5 weights each epoch, logs/ for TensorBoard, training_log.csv, "
          "model.json, and model.h5 (the whole model, Keras' HDF5 layout) at the end. Locked "
          "while a run trains in it (<model_dir>/.lock).");
ABSL_FLAG(bool, eval_only, false,
          "Skip training: load <model_dir>/model.h5 and evaluate it on the test set.");
ABSL_FLAG(resnet_cifar::BatchSizeFlag, batch_size, 128,
          "Global batch size for training and evaluation (1 to 1000000; split over the replicas; "
          "at most the number of training images).");
ABSL_FLAG(resnet_cifar::EpochsFlag, train_epochs, 182, "Number of epochs to train (1 to 1000000).");
ABSL_FLAG(resnet_cifar::StepsFlag, train_steps, 0,
          "If > 0: train only this many steps in total (one epoch of that many steps).");
ABSL_FLAG(resnet_cifar::ResnetSize, resnet_size, resnet_cifar::ResnetSize{},
          "Depth of the ResNet: 20, 32, 44, 56 or 110.");
ABSL_FLAG(bool, use_synthetic_data, false,
          "Train and evaluate on random images and labels (no files needed).");
ABSL_FLAG(bool, skip_eval, false, "Skip evaluation (in fit and at the end).");
ABSL_FLAG(resnet_cifar::EpochsFlag, epochs_between_evals, 1,
          "Evaluate on the test set during fit every this many epochs.");
ABSL_FLAG(resnet_cifar::LogStepsFlag, log_steps, 100,
          "Print examples/second every this many steps.");
ABSL_FLAG(std::string, distribution_strategy, "one_device",
          "How to distribute training: 'off' (no strategy), 'one_device' (OneDeviceStrategy on "
          "/gpu:0 with --num_gpus=1, else /cpu:0), 'mirrored' (MirroredStrategy) or "
          "'central_storage' (CentralStorageStrategy) over --num_gpus GPUs, or "
          "--num_cpu_replicas logical CPU devices when --num_gpus=0; --batch_size is the global "
          "batch, split over the replicas. 'multi_worker_mirrored' (MultiWorkerMirroredStrategy): "
          "the same command on every machine, each told its role by TF_CONFIG; the global batch is "
          "split over every worker's replicas. 'parameter_server' (ParameterServerStrategy): the same "
          "command on every task, TF_CONFIG naming ps, worker and chief tasks; variables on the "
          "ps tasks, each worker trains --batch_size batches asynchronously.");
ABSL_FLAG(apps::NumCpuReplicasFlag, num_cpu_replicas, 1,
          "With --num_gpus=0 and mirrored, central_storage or multi_worker_mirrored: split the CPU into this many "
          "logical devices /cpu:0.. (1 to 256; each with its share of the threads) and run one "
          "replica on each. --batch_size must be a multiple of it.");
ABSL_FLAG(apps::ElasticMinWorkersFlag, elastic_min_workers, 0,
          "With multi_worker_mirrored: an elastic job. TF_CONFIG's chief and worker tasks are "
          "slots; training goes on with whichever are up, at least this many (the chief "
          "included): a worker lost leaves, one started in a free slot joins, each step keeps "
          "--batch_size as the global batch. 0: a lost worker ends the job.");
ABSL_FLAG(apps::NumGpusFlag, num_gpus, 0,
          "GPUs to use (0: the CPU). 1 with off/one_device trains on /gpu:0; N with mirrored or "
          "central_storage runs one replica per GPU (mirrored: NCCL all-reduce by default).");
ABSL_FLAG(std::string, all_reduce_alg, "",
          "With mirrored: the cross-device all-reduce, 'hierarchical_copy' or 'nccl' (GPUs only, "
          "not available yet). Default: ReductionToOneDevice.");
ABSL_FLAG(resnet_cifar::NumPacksFlag, num_packs, 1,
          "With --all_reduce_alg: the number of packs (1 to 1024).");
ABSL_FLAG(std::string, dtype, "fp32",
          "Compute dtype: fp32, or fp16 / bf16 to set the Keras mixed-precision policy "
          "mixed_float16 / mixed_bfloat16 (16-bit compute, float32 variables; fp16 adds dynamic "
          "loss scaling).");
ABSL_FLAG(resnet_cifar::SeedFlag, seed, 42,
          "Random seed (weights, shuffling, augmentation); >= 0.");

namespace resnet_cifar {

Options parse_flags(int argc, char** argv, apps::ParseMode mode) {
  apps::read_argv(argc, argv, mode,
                  "Trains a ResNet on CIFAR-10 (TensorFlow's official resnet_cifar_main.py).");
  apps::require_one_of(FLAGS_distribution_strategy,
                       {"off", "one_device", "mirrored", "central_storage", "multi_worker_mirrored",
                        "parameter_server"});
  apps::require_one_of(FLAGS_all_reduce_alg, {"", "hierarchical_copy", "nccl"});
  apps::require_one_of(FLAGS_dtype, {"fp32", "fp16", "bf16"});
  apps::require_one_of(FLAGS_data_format, {"binary", "tfrecord"});
  Options o;
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.data_format = absl::GetFlag(FLAGS_data_format);
  o.model_dir = absl::GetFlag(FLAGS_model_dir);
  o.distribution_strategy = absl::GetFlag(FLAGS_distribution_strategy);
  o.all_reduce_alg = absl::GetFlag(FLAGS_all_reduce_alg);
  o.dtype = absl::GetFlag(FLAGS_dtype);
  o.eval_only = absl::GetFlag(FLAGS_eval_only);
  o.use_synthetic_data = absl::GetFlag(FLAGS_use_synthetic_data);
  o.skip_eval = absl::GetFlag(FLAGS_skip_eval);
  o.batch_size = absl::GetFlag(FLAGS_batch_size).value;
  o.train_epochs = absl::GetFlag(FLAGS_train_epochs).value;
  o.train_steps = absl::GetFlag(FLAGS_train_steps).value;
  o.resnet_size = absl::GetFlag(FLAGS_resnet_size).value;
  o.epochs_between_evals = absl::GetFlag(FLAGS_epochs_between_evals).value;
  o.log_steps = absl::GetFlag(FLAGS_log_steps).value;
  o.num_cpu_replicas = absl::GetFlag(FLAGS_num_cpu_replicas).value;
  o.num_gpus = absl::GetFlag(FLAGS_num_gpus).value;
  o.elastic_min_workers = absl::GetFlag(FLAGS_elastic_min_workers).value;
  o.num_packs = absl::GetFlag(FLAGS_num_packs).value;
  o.seed = uint64_t(absl::GetFlag(FLAGS_seed).value);

  apps::check_replica_flags(o.distribution_strategy, o.num_cpu_replicas, o.num_gpus);
  apps::check_elastic_flag(o.distribution_strategy, o.elastic_min_workers);
  if (!o.all_reduce_alg.empty() && o.distribution_strategy != "mirrored") {
    throw apps::FlagError("--all_reduce_alg applies to --distribution_strategy=mirrored only");
  }
  if (o.eval_only && o.model_dir.empty()) {
    throw apps::FlagError("--eval_only needs --model_dir (where model.h5 is)");
  }
  if (o.data_format == "tfrecord" && o.data_dir.empty() && !o.use_synthetic_data) {
    throw apps::FlagError("--data_format tfrecord needs --data_dir (the folder of train-* and "
                          "validation-* files strata_cifar10_to_tfrecord wrote)");
  }
  if (o.eval_only && o.skip_eval) {
    throw apps::FlagError("--eval_only and --skip_eval contradict each other");
  }
  return o;
}

}  // namespace resnet_cifar
