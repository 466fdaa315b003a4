// Internal to distribute/nccl/: one rank's NCCL communicator and communication stream, and the
// Communicator on it, shared by NcclGroup (the GPUs of one process, ncclCommInitAll) and
// NcclCrossProcessGroup (one communicator spanning every worker's GPUs, ncclCommInitRank).
//
// Streams: collectives run on a communication stream per device, so an all-reduce of a gradient
// bucket overlaps with the backward pass still running on the compute stream. Before a
// collective, the communication stream waits for the compute stream (the tensor's producers);
// wait() makes the compute stream wait for the collective. Neither blocks the host, and the
// tensor is only reused after wait(), which the caching allocator's stream-ordering requires.
// Includes NCCL and CUDA headers.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "distribute/communicator.h"

namespace strata::distribute {

struct NcclRank {
  int rank = 0, world = 1;  // in the whole communicator (global ranks across workers)
  Device device;
  ncclComm_t comm = nullptr;
  cudaStream_t comm_stream = nullptr;
  // Set for a nonblocking communicator (ncclConfig_t::blocking = 0): a call may return
  // ncclInProgress, and the next one waits until ncclCommGetAsyncError says it is done.
  bool nonblocking = false;
  // Called before every collective when set: makes `comm` (a group that connects lazily). Throws
  // when the group cannot be made.
  std::function<void()> connect;
  std::atomic<bool> aborted{false};
  std::mutex reason_mutex;
  std::string abort_reason;

  // Records `reason`; false when the rank was aborted already.
  bool mark_aborted(const std::string& reason);
  std::string reason();
};

// A CollectiveError for a failed NCCL call: "NCCL error in <what> on <device>: <NCCL's text>",
// then `fix` when given.
void check_nccl(ncclResult_t status, const std::string& what, Device device,
                ncclComm_t comm = nullptr, const std::string& fix = "");

// The communicator of `rank` (collectives on its comm_stream, ordered after the compute stream).
std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<NcclRank> rank);

}  // namespace strata::distribute
