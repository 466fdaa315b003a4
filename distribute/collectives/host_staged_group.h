// HostStagedGroup: collectives for replicas on GPUs when NCCL is not used (ReductionToOneDevice,
// HierarchicalCopyAllReduce, CentralStorageStrategy on GPUs, builds without NCCL). Each rank
// copies its tensor to host memory, the ranks meet in an InProcessGroup there, and each copies
// the result back to its device. Correct on any devices, and as slow as two PCIe copies per
// collective: NcclGroup (distribute/collectives/nccl/) is what GPU training uses by default.
#pragma once

#include <memory>

#include "distribute/collectives/in_process_communicator.h"

namespace strata::distribute {

class HostStagedGroup final : public CommunicatorGroup {
 public:
  explicit HostStagedGroup(int world_size);
  int world_size() const override { return host_.world_size(); }
  void abort(const std::string& reason) override { host_.abort(reason); }
  std::shared_ptr<Communicator> communicator(int rank) override;

 private:
  InProcessGroup host_;
  std::vector<std::shared_ptr<Communicator>> communicators_;
};

}  // namespace strata::distribute
