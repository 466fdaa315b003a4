// NcclCrossProcessGroup: this worker's local GPUs as ranks of ONE NCCL communicator spanning
// every worker's GPUs (MultiWorkerMirroredStrategy with NCCL): local GPU l of worker w is global
// rank w * local + l of num_workers * local, as replica_id_in_sync_group. Gradients go GPU to GPU
// across machines (NCCL's network transport), with no host copy and no Gloo.
//
// Set-up (make_cross_process_nccl_group, nccl_support.h): worker 0 calls ncclGetUniqueId and
// publishes the id through the coordination store ("nccl/<generation>/unique_id"); every other
// worker waits for it; then each worker makes its ranks in one ncclGroupStart /
// ncclCommInitRankConfig per GPU / ncclGroupEnd. The communicators are nonblocking, so the
// set-up waits for the other workers at most the timeout and abort() can end it (or a
// collective waiting for a worker that is gone) from another thread: ncclCommAbort, through
// each rank's NcclCommGuard (distribute/collectives/nccl_comm_guard.h), so that no replica thread's
// call ever sees the communicator freed.
// Internal to distribute/ (the header itself includes no NCCL or CUDA header).
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distribute/cluster/coordination/key_value_store.h"
#include "distribute/collectives/communicator.h"
#include "distribute/collectives/nccl_support.h"

namespace strata::distribute {

struct NcclRank;

class NcclCrossProcessGroup final : public CommunicatorGroup {
 public:
  // Connects at once when options.connect_now, else on the first collective (or connect()).
  NcclCrossProcessGroup(std::vector<Device> local_gpus, KeyValueStore& store, int worker,
                        int num_workers, std::chrono::milliseconds timeout,
                        CrossProcessNcclOptions options);
  ~NcclCrossProcessGroup() override;
  NcclCrossProcessGroup(const NcclCrossProcessGroup&) = delete;
  NcclCrossProcessGroup& operator=(const NcclCrossProcessGroup&) = delete;

  // Every rank of every worker (the global world).
  int world_size() const override { return num_workers_ * int(devices_.size()); }
  void abort(const std::string& reason) override;
  // Local GPU `local_rank`'s communicator (global rank worker * local + local_rank).
  std::shared_ptr<Communicator> communicator(int local_rank) override;
  // Makes the communicators unless made; rethrows the set-up's failure on every later call.
  void connect();

 private:
  void connect_now();

  std::vector<Device> devices_;
  KeyValueStore& store_;
  int worker_, num_workers_;
  std::chrono::milliseconds timeout_;
  CrossProcessNcclOptions options_;
  std::vector<std::shared_ptr<NcclRank>> ranks_;
  std::vector<std::shared_ptr<Communicator>> communicators_;

  std::mutex connect_mutex_;  // held while connecting: one set-up for all local ranks
  std::atomic<bool> connect_done_{false};
  std::exception_ptr connect_error_;
  std::mutex comm_mutex_;  // guards aborted_ and abort_reason_
  bool aborted_ = false;   // abort() ran, or the group is being destroyed
  std::atomic<bool> abort_requested_{false};
  std::string abort_reason_;
};

}  // namespace strata::distribute
