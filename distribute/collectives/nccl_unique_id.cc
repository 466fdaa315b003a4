// The NCCL unique-id exchange through the coordination store (nccl_support.h): in every build,
// since it needs no NCCL, so that its waits and errors are tested on machines without GPUs.
#include <string>

#include "distribute/collectives/nccl_support.h"

namespace strata::distribute {
namespace {

std::string prefix(const CrossProcessNcclOptions& options) {
  return "nccl/" + std::to_string(options.generation) + "/";
}

std::string name_of(const CrossProcessNcclOptions& options, int worker) {
  return options.worker_name ? options.worker_name(worker) : "worker " + std::to_string(worker);
}

}  // namespace

std::string nccl_unique_id_key(int generation) {
  return "nccl/" + std::to_string(generation) + "/unique_id";
}

std::string exchange_nccl_unique_id(KeyValueStore& store, int worker, int local_ranks,
                                    const std::function<std::string()>& make_id,
                                    std::chrono::milliseconds timeout,
                                    const CrossProcessNcclOptions& options) {
  // Lets a set-up that times out later say which workers never got this far.
  store.set(prefix(options) + "joined/" + std::to_string(worker), "1");
  const std::string key = nccl_unique_id_key(options.generation);
  const std::string ranks_key = prefix(options) + "local_ranks";
  const std::string chief = name_of(options, 0);
  if (worker == 0) {
    std::string id = make_id();
    // The rank count first: whoever reads the id finds it next to it.
    store.set(ranks_key, std::to_string(local_ranks));
    store.set(key, id);
    return id;
  }
  std::string id;
  try {
    id = store.get(key, timeout);
  } catch (const CoordinationError& e) {
    throw CoordinationError(
        "cross-process NCCL set-up: " + name_of(options, worker) + " waited " +
        std::to_string(timeout.count()) + " ms for the NCCL unique id that " + chief +
        " publishes (key '" + key + "'), in vain (" + e.what() + "): " + chief +
        " failed or has not reached the NCCL set-up; see its log, or raise "
        "CommunicationOptions.timeout_seconds if it starts slowly");
  }
  const std::optional<std::string> theirs = store.try_get(ranks_key);
  if (theirs && *theirs != std::to_string(local_ranks)) {
    throw ValueError("cross-process NCCL set-up: " + name_of(options, worker) + " has " +
                     std::to_string(local_ranks) + " GPU replicas but " + chief + " has " +
                     *theirs + "; every worker needs the same number of GPUs (pass the same "
                     "number of devices to the strategy on every worker)");
  }
  return id;
}

std::string nccl_workers_missing(KeyValueStore& store, int num_workers,
                                 const CrossProcessNcclOptions& options) {
  std::string missing;
  for (int w = 0; w < num_workers; ++w) {
    if (store.try_get(prefix(options) + "joined/" + std::to_string(w))) continue;
    missing += (missing.empty() ? "" : ", ") + name_of(options, w);
  }
  return missing;
}

}  // namespace strata::distribute
