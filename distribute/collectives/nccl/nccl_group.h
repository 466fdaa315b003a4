// NcclGroup: the communicators of replicas that are threads of one process, one GPU each
// (MirroredStrategy over local GPUs), made together (nonblocking: ncclCommInitRankConfig per GPU
// in one NCCL group); each replica thread then calls the collectives of its own rank, which NCCL
// runs as one operation across the GPUs. abort() (a replica failed) ends the others'
// collectives through each rank's NcclCommGuard.
//
// Streams and the collectives: nccl_communicator.h.
// Internal to distribute/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distribute/collectives/communicator.h"

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
