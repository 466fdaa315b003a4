// NcclGroup: the communicators of replicas that are threads of one process, one GPU each
// (MirroredStrategy over local GPUs). ncclCommInitAll creates them together; each replica thread
// then calls the collectives of its own rank, which NCCL runs as one operation across the GPUs.
//
// Streams: collectives run on a communication stream per device, so an all-reduce of a gradient
// bucket overlaps with the backward pass still running on the compute stream. Before a
// collective, the communication stream waits for the compute stream (the tensor's producers);
// wait() makes the compute stream wait for the collective. Neither blocks the host, and the
// tensor is only reused after wait(), which the caching allocator's stream-ordering requires.
// Internal to distribute/; includes NCCL and CUDA headers.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <vector>

#include "distribute/communicator.h"

namespace strata::distribute {

struct NcclRank;

class NcclGroup final : public CommunicatorGroup {
 public:
  explicit NcclGroup(std::vector<Device> devices);
  ~NcclGroup() override;
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int world_size() const override { return int(devices_.size()); }
  void abort(const std::string& reason) override;
  std::shared_ptr<Communicator> communicator(int rank) override;


 private:
  std::vector<Device> devices_;
  std::vector<std::shared_ptr<NcclRank>> ranks_;  // nccl_communicator.h
  std::vector<std::shared_ptr<Communicator>> communicators_;
};

}  // namespace strata::distribute
