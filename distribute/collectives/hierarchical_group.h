// HierarchicalGroup: the communicators of one worker's local replicas in a multi-worker job
// (MultiWorkerMirroredStrategy on CPUs, or with kRing; GPUs with NCCL share one cross-process
// NCCL communicator instead: nccl/nccl_cross_process_group.h). A collective first
// combines the local replicas in this process (the local group: in-process, host-staged or NCCL),
// then local replica 0 combines that with the other workers over the cross-worker communicator
// (one rank per worker: Gloo), then local replica 0 shares the result with the local replicas.
// Ranks are global: worker w's local replica l is rank w * local_size + l, as
// replica_id_in_sync_group.
//
// With one local replica on the host the cross-worker communicator is the replica's own (no extra
// step); a replica on a GPU goes through the hierarchical path, which stages each value on the
// host for Gloo (handing Gloo the GPU tensor failed: found on an H200, 2026-11-28).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distribute/collectives/communicator.h"

namespace strata::distribute {

class HierarchicalGroup final : public CommunicatorGroup {
 public:
  // `cross`: this worker's rank among the workers. `abort_cross` makes its pending and later
  // collectives fail (GlooCommunicator::abort); called by abort().
  // `on_host`: every local replica's device is a CPU (else values are staged for Gloo).
  HierarchicalGroup(std::unique_ptr<CommunicatorGroup> local, std::shared_ptr<Communicator> cross,
                    std::function<void(const std::string&)> abort_cross, bool on_host);

  int world_size() const override;
  void abort(const std::string& reason) override;
  std::shared_ptr<Communicator> communicator(int local_rank) override;

 private:
  std::unique_ptr<CommunicatorGroup> local_;
  std::shared_ptr<Communicator> cross_;
  std::function<void(const std::string&)> abort_cross_;
  std::vector<std::shared_ptr<Communicator>> communicators_;
};

}  // namespace strata::distribute
