// What the apps and strata_bench do with --distribution_strategy, --num_gpus and
// --num_cpu_replicas (the flags of TensorFlow's official models, whose
// distribution_utils.get_distribution_strategy this follows): make the strategy, say where a model
// without one runs, and describe it in one line.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include <strata/strata.h>

#include "apps/common/flags.h"
#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "distribute/parameter_server/parameter_server_strategy.h"

namespace apps {

// The flags' types (ranges that also keep the values within int): a machine with more than 256
// devices of one kind is not one these apps will meet.
using NumCpuReplicasFlag = Ranged<int, 1, 256>;
using NumGpusFlag = Ranged<int, 0, 256>;

// Checks --num_cpu_replicas and --num_gpus against --distribution_strategy and the machine
// (FlagError otherwise).
inline void check_replica_flags(const std::string& strategy, int64_t num_cpu_replicas,
                                int64_t num_gpus) {
  if (num_cpu_replicas < 1) {
    throw FlagError("--num_cpu_replicas must be >= 1, got " + std::to_string(num_cpu_replicas));
  }
  const bool replicated = strategy == "mirrored" || strategy == "central_storage" ||
                          strategy == "multi_worker_mirrored";
  if (num_cpu_replicas > 1 && !replicated) {
    throw FlagError("--num_cpu_replicas=" + std::to_string(num_cpu_replicas) +
                    " needs --distribution_strategy=mirrored, central_storage or "
                    "multi_worker_mirrored (" + strategy + " runs one replica)");
  }
  if (num_gpus < 0) throw FlagError("--num_gpus must be >= 0, got " + std::to_string(num_gpus));
  if (num_gpus > 0 && num_cpu_replicas > 1) {
    throw FlagError("--num_cpu_replicas applies with --num_gpus=0 only (the replicas are then "
                    "logical CPU devices); with GPUs there is one replica per GPU");
  }
  if (num_gpus > 1 && !replicated) {
    throw FlagError("--num_gpus=" + std::to_string(num_gpus) + " needs --distribution_strategy="
                    "mirrored, central_storage or multi_worker_mirrored (" + strategy +
                    " runs one replica)");
  }
  // Asked only when GPUs are wanted: the first call initializes the CUDA runtime.
  const int visible = num_gpus > 0 ? strata::gpu::device_count() : 0;
  if (num_gpus > visible) {
    throw FlagError("--num_gpus=" + std::to_string(num_gpus) + ", but " +
                    (strata::gpu::built_with_cuda()
                         ? "this process sees " + std::to_string(visible) + " GPU(s)"
                         : std::string("this build of Strata has no CUDA backend (configure "
                                       "found no nvcc, cuBLAS or cuDNN)")) +
                    "; run `strata-info` to list devices, or use --num_gpus=" +
                    std::to_string(visible));
  }
}

// --elastic_min_workers: 0 (a lost worker ends the job) or, with multi_worker_mirrored, the
// fewest workers an elastic job trains with (FlagError otherwise).
using ElasticMinWorkersFlag = Ranged<int, 0, 100000>;
inline void check_elastic_flag(const std::string& strategy, int64_t elastic_min_workers) {
  if (elastic_min_workers > 0 && strategy != "multi_worker_mirrored") {
    throw FlagError("--elastic_min_workers=" + std::to_string(elastic_min_workers) +
                    " needs --distribution_strategy=multi_worker_mirrored (an elastic job goes on "
                    "when its workers change; " + strategy + " is not one)");
  }
}

// FlagError unless the evaluator task has --model_dir, where the chief writes the checkpoints it
// evaluates.
inline void check_evaluator_model_dir(const std::string& model_dir) {
  if (model_dir.empty()) {
    throw FlagError("the evaluator task evaluates the checkpoints the chief writes to "
                    "--model_dir: give it (and the chief) --model_dir");
  }
}

// The evaluator of a multi-process job (TensorFlow's side-car evaluator): under
// --distribution_strategy parameter_server or multi_worker_mirrored, a task whose TF_CONFIG names
// it {"type": "evaluator"} trains nothing and makes no strategy; it evaluates the checkpoints the
// chief writes under --model_dir. Its TF_CONFIG may list the whole cluster, only the evaluator
// ({"cluster": {"evaluator": ["host7:2222"]}, ...}), or no cluster at all (the Keras tutorial:
// "the cluster part in the evaluator's TF_CONFIG is optional"). The library's ValueError for a
// TF_CONFIG that does not validate; FlagError without --model_dir (check_evaluator_model_dir).
inline bool is_evaluator_task(const std::string& strategy, const std::string& model_dir) {
  if (strategy != "parameter_server" && strategy != "multi_worker_mirrored") return false;
  const char* tf_config = std::getenv("TF_CONFIG");
  if (tf_config == nullptr || *tf_config == '\0') return false;
  const strata::distribute::TFConfigClusterResolver resolver;
  if (resolver.task_type() != "evaluator") return false;
  resolver.validate();
  check_evaluator_model_dir(model_dir);
  return true;
}

// Where a model runs without a strategy ("off"): /gpu:0 when --num_gpus >= 1, else /cpu:0.
inline strata::Device default_device_for(int64_t num_gpus) {
  return num_gpus > 0 ? strata::Device::gpu(0) : strata::Device::cpu(0);
}

// null for "off" (create the model under DeviceScope(default_device_for(num_gpus)));
// OneDeviceStrategy on /gpu:0 or /cpu:0 for "one_device"; Mirrored / CentralStorage over the
// first `num_gpus` GPUs, or over `num_cpu_replicas` logical CPU devices when num_gpus is 0, for
// "mirrored" / "central_storage" (cross_device_ops: Mirrored's, null for its default: NCCL on
// GPUs). multi_worker_mirrored with elastic_min_workers > 0 is elastic (ElasticOptions).
inline std::shared_ptr<strata::distribute::Strategy> make_strategy(
    const std::string& name, int num_cpu_replicas, int num_gpus,
    std::shared_ptr<strata::distribute::CrossDeviceOps> cross_device_ops = nullptr,
    int elastic_min_workers = 0) {
  namespace distribute = strata::distribute;
  if (name == "off") return nullptr;
  if (name == "one_device") {
    return std::make_shared<distribute::OneDeviceStrategy>(default_device_for(num_gpus).to_string());
  }
  std::vector<std::string> devices;
  if (num_gpus > 0) {
    for (int i = 0; i < num_gpus; ++i) devices.push_back(strata::Device::gpu(i).to_string());
  } else {
    strata::config::set_logical_cpu_devices(num_cpu_replicas);
    for (int i = 0; i < num_cpu_replicas; ++i) devices.push_back(strata::Device::cpu(i).to_string());
  }
  if (name == "central_storage") return std::make_shared<distribute::CentralStorageStrategy>(devices);
  if (name == "multi_worker_mirrored") {
    // The cluster and this task's role come from TF_CONFIG, or inside a Slurm step without it
    // from Slurm's variables; this waits for every worker.
    std::shared_ptr<distribute::ClusterResolver> resolver;
    if (std::getenv("TF_CONFIG") == nullptr && std::getenv("SLURM_PROCID") != nullptr) {
      resolver = std::make_shared<distribute::SlurmClusterResolver>();
    }
    distribute::CommunicationOptions options;
    if (elastic_min_workers > 0) {
      options.elastic(distribute::ElasticOptions().min_workers(elastic_min_workers));
    }
    return std::make_shared<distribute::MultiWorkerMirroredStrategy>(resolver, options, devices);
  }
  return std::make_shared<distribute::MirroredStrategy>(devices, std::move(cross_device_ops));
}

// "MirroredStrategy, 2 replicas (/cpu:0, /cpu:1); global batch 128, 64 per replica, 1 thread(s)
// per replica". Throws the library's ValueError when the global batch does not divide evenly.
// `off_device`: where the model runs without a strategy.
inline std::string describe_strategy(const strata::distribute::Strategy* strategy,
                                     int64_t global_batch,
                                     strata::Device off_device = strata::Device::cpu(0)) {
  const int n = strategy ? strategy->num_replicas_in_sync() : 1;
  std::string devices = off_device.to_string();
  bool on_gpu = off_device.type == strata::DeviceType::kCUDA;
  if (strategy) {
    devices.clear();
    on_gpu = false;
    for (const strata::Device& d : strategy->worker_devices()) {
      devices += (devices.empty() ? "" : ", ") + d.to_string();
      on_gpu = on_gpu || d.type == strata::DeviceType::kCUDA;
    }
  }
  // An elastic job splits each global batch over the workers up at each step, evenly or not.
  const bool elastic = strategy && strategy->elastic();
  const int64_t per_replica =
      elastic ? global_batch / n
              : strata::distribute::InputContext{1, 0, n}.get_per_replica_batch_size(global_batch);
  std::string text = (strategy ? strategy->name() : std::string("off (no distribution strategy)")) + ", ";
  if (const auto* ps = dynamic_cast<const strata::distribute::ParameterServerStrategy*>(strategy)) {
    // "2 workers and 2 ps tasks (asynchronous); batch 128 per step on each worker"
    return text + std::to_string(ps->num_worker_tasks()) +
           (ps->num_worker_tasks() == 1 ? " worker and " : " workers and ") +
           std::to_string(ps->num_ps()) + (ps->num_ps() == 1 ? " ps task" : " ps tasks") +
           " (asynchronous); batch " + std::to_string(global_batch) + " per step on each worker";
  }
  if (strategy && strategy->name() == "MultiWorkerMirroredStrategy") {
    // "2 workers x 1 replica (/cpu:0); this is worker 0 (chief)"
    const int local = strategy->num_local_replicas();
    text += std::to_string(strategy->num_workers()) +
            (strategy->num_workers() == 1 ? " worker x " : " workers x ") + std::to_string(local) +
            (local == 1 ? " replica (" : " replicas (") + devices + "); this is worker " +
            std::to_string(strategy->worker_index()) + (strategy->is_chief() ? " (chief)" : "");
  } else {
    text += std::to_string(n) + (n == 1 ? " replica (" : " replicas (") + devices + ")";
  }
  text += "; global batch " + std::to_string(global_batch) + ", " +
          std::to_string(per_replica) + " per replica" +
          (elastic ? std::string(" now (elastic: split over the workers up at each step)") : "");
  if (!on_gpu) {
    // This process's threads are shared by its own replicas only.
    const int local = strategy ? strategy->num_local_replicas() : 1;
    text += ", " + std::to_string(std::max(1, strata::get_num_threads() / local)) +
            " thread(s) per replica";
  }
  return text;
}

}  // namespace apps
