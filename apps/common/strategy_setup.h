// What the apps and strata_bench do with --distribution_strategy and --num_cpu_replicas: make the
// strategy over logical CPU devices and describe it in one line.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include <strata/strata.h>

#include "apps/common/flags.h"

namespace apps {

// Checks --num_cpu_replicas and --num_gpus against --distribution_strategy (FlagError otherwise).
inline void check_replica_flags(const std::string& strategy, int64_t num_cpu_replicas,
                                int64_t num_gpus) {
  if (num_cpu_replicas < 1) {
    throw FlagError("--num_cpu_replicas must be >= 1, got " + std::to_string(num_cpu_replicas));
  }
  if (num_cpu_replicas > 1 && strategy != "mirrored" && strategy != "central_storage") {
    throw FlagError("--num_cpu_replicas=" + std::to_string(num_cpu_replicas) +
                    " needs --distribution_strategy=mirrored or central_storage (" + strategy +
                    " runs one replica)");
  }
  if (num_gpus < 0) throw FlagError("--num_gpus must be >= 0, got " + std::to_string(num_gpus));
  if (num_gpus > 0) {
    throw FlagError("--num_gpus=" + std::to_string(num_gpus) +
                    ": GPUs are not supported yet (the CUDA backend arrives in a later issue); "
                    "use --num_gpus=0");
  }
}

// null for "off"; OneDeviceStrategy on /cpu:0 for "one_device"; Mirrored / CentralStorage over
// `num_cpu_replicas` logical CPU devices for "mirrored" / "central_storage" (cross_device_ops:
// Mirrored's, null for its default).
inline std::shared_ptr<strata::distribute::Strategy> make_cpu_strategy(
    const std::string& name, int num_cpu_replicas,
    std::shared_ptr<strata::distribute::CrossDeviceOps> cross_device_ops = nullptr) {
  if (name == "off") return nullptr;
  if (name == "one_device") return std::make_shared<strata::distribute::OneDeviceStrategy>("/cpu:0");
  strata::config::set_logical_cpu_devices(num_cpu_replicas);
  if (name == "central_storage") return std::make_shared<strata::distribute::CentralStorageStrategy>();
  return std::make_shared<strata::distribute::MirroredStrategy>(std::vector<std::string>{},
                                                        std::move(cross_device_ops));
}

// "MirroredStrategy, 2 replicas (/cpu:0, /cpu:1); global batch 128, 64 per replica, 1 thread(s)
// per replica". Throws the library's ValueError when the global batch does not divide evenly.
inline std::string describe_strategy(const strata::distribute::Strategy* strategy, int64_t global_batch) {
  const int n = strategy ? strategy->num_replicas_in_sync() : 1;
  std::string devices = "/cpu:0";
  if (strategy) {
    devices.clear();
    for (const strata::Device& d : strategy->worker_devices()) devices += (devices.empty() ? "" : ", ") + d.to_string();
  }
  const int64_t per_replica = strata::distribute::InputContext{1, 0, n}.get_per_replica_batch_size(global_batch);
  return (strategy ? strategy->name() : std::string("off (no distribution strategy)")) + ", " +
         std::to_string(n) + (n == 1 ? " replica (" : " replicas (") + devices + "); global batch " +
         std::to_string(global_batch) + ", " + std::to_string(per_replica) + " per replica, " +
         std::to_string(std::max(1, strata::get_num_threads() / n)) + " thread(s) per replica";
}

}  // namespace apps
