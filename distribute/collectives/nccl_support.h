// NCCL behind the CommunicatorGroup interface, without NCCL headers: implemented in
// distribute/collectives/nccl/ (nccl_group.cc, nccl_cross_process_group.cc) when Strata is built
// with NCCL, by nccl_unavailable.cc otherwise; the store exchange (nccl_unique_id.cc) is in every
// build.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distribute/cluster/coordination/key_value_store.h"
#include "distribute/collectives/communicator.h"
#include "distribute/collectives/nccl_available.h"

namespace strata::distribute {

// One NCCL communicator per device (as ncclCommInitAll, but nonblocking, so abort() can end a
// collective waiting for a replica that failed), every device a distinct visible GPU:
// ValueError otherwise, or when the build has no NCCL.
std::unique_ptr<CommunicatorGroup> make_nccl_group(const std::vector<Device>& devices);

// The rest of a cross-process NCCL group's set-up (make_cross_process_nccl_group).
struct CrossProcessNcclOptions {
  // Store keys are "nccl/<generation>/...": a group made again (after a failure) never reads a
  // spent generation's id. Every worker must use the same generation for the same group.
  int generation = 0;
  // How errors name worker w ("chief 0 (host:port)"); unset: "worker <w>".
  std::function<std::string(int)> worker_name;
  // false: the communicators are made on the first collective instead (a group that may never
  // be used must not block its maker until the other workers join).
  bool connect_now = true;
};

// A group for this worker's local GPUs in which every GPU is one rank of ONE NCCL communicator
// spanning every worker's GPUs: local GPU l of worker w is global rank w * local + l of
// num_workers * local (every worker must have the same number of GPUs). communicator(l) is local
// GPU l's, with global rank() and world_size(); the collectives are NcclGroup's, over all ranks.
// Worker 0 makes the unique id (ncclGetUniqueId) and publishes it in `store`; the others wait up
// to `timeout` for it (CoordinationError naming the chief), then every worker makes its ranks
// (ncclCommInitRank, nonblocking; CoordinationError when not every worker joins within
// `timeout`). abort() aborts the communicators (ncclCommAbort, each under its NcclCommGuard:
// nccl_comm_guard.h), and collectives in flight fail naming its reason. ValueError when the
// build has no NCCL, a device is not a distinct visible GPU, or worker / num_workers are out of
// range.
std::unique_ptr<CommunicatorGroup> make_cross_process_nccl_group(
    const std::vector<Device>& local_gpus, KeyValueStore& store, int worker, int num_workers,
    std::chrono::milliseconds timeout, const CrossProcessNcclOptions& options = {});

// The store side of make_cross_process_nccl_group, without NCCL (the id is opaque bytes), so it
// is tested on machines without GPUs. Every worker first marks itself as having reached the
// set-up ("nccl/<generation>/joined/<worker>"). Worker 0 then publishes make_id() and its
// `local_ranks` under nccl_unique_id_key(generation) and returns the id; another worker waits up
// to `timeout` for it and returns it: CoordinationError naming worker 0 when it never comes,
// ValueError when worker 0 has a different number of local ranks.
std::string nccl_unique_id_key(int generation);
std::string exchange_nccl_unique_id(KeyValueStore& store, int worker, int local_ranks,
                                    const std::function<std::string()>& make_id,
                                    std::chrono::milliseconds timeout,
                                    const CrossProcessNcclOptions& options = {});
// The names of the workers (of `num_workers`) that have not reached exchange_nccl_unique_id of
// this generation, ", "-separated; empty when all have: what a timed-out set-up reports.
std::string nccl_workers_missing(KeyValueStore& store, int num_workers,
                                 const CrossProcessNcclOptions& options = {});

}  // namespace strata::distribute
