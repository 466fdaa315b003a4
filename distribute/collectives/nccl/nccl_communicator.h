// Internal to distribute/collectives/nccl/: one rank's NCCL communicator and communication stream,
// and the Communicator on it, shared by NcclGroup (the GPUs of one process) and
// NcclCrossProcessGroup (one communicator spanning every worker's GPUs); both make them with
// ncclCommInitRankConfig.
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

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distribute/collectives/communicator.h"
#include "distribute/collectives/nccl_comm_guard.h"

namespace strata::distribute {

// One rank: its device, communication stream and guarded communicator. Every NCCL call on the
// communicator goes through `guard` (distribute/collectives/nccl_comm_guard.h), so a group's
// abort() on another thread never frees it under a collective. The communicators are nonblocking
// (ncclConfig_t::blocking = 0), which the guard relies on: no call blocks the host.
struct NcclRank {
  NcclRank(int rank, int world, Device device);

  const int rank, world;  // in the whole communicator (global ranks across workers)
  const Device device;
  cudaStream_t comm_stream = nullptr;
  // Called before every collective when set: makes the communicator (a group that connects
  // lazily) and publishes it to `guard`. Throws when the group cannot be made.
  std::function<void()> connect;
  // Appended to NCCL's failures of this rank's collectives: what to check.
  std::string failure_hint;
  NcclCommGuard guard;
};

// The real NCCL functions the guard calls (nccl_forwarders.cc: through the lazily loaded
// libnccl).
const NcclCommCalls& nccl_comm_calls();

// A CollectiveError for a failed NCCL call: "NCCL error in <what> on <device>: <NCCL's text>",
// then `fix` when given.
void check_nccl(ncclResult_t status, const std::string& what, Device device,
                ncclComm_t comm = nullptr, const std::string& fix = "");

// The communicator of `rank` (collectives on its comm_stream, ordered after the compute stream).
std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<NcclRank> rank);

// Waits until every one of `comms` (nonblocking, just made by one ncclGroupStart /
// ncclCommInitRankConfig... / ncclGroupEnd) is connected: ncclCommGetAsyncError stops saying
// ncclInProgress. On a failure, a timeout or `stop()` returning true, aborts them all, then
// calls `fail(l, status, last_error)`, which throws the error for rank l (status ncclInProgress:
// the deadline passed, or stop() said so; last_error: ncclGetLastError's text, read before the
// abort). Only the set-up's thread knows these communicators yet: nothing else can abort them.
using ConnectFailure =
    std::function<void(int l, ncclResult_t status, const std::string& last_error)>;
void wait_until_connected(const std::vector<ncclComm_t>& comms,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool()>& stop, const ConnectFailure& fail);

// Aborts every non-null one of `comms` (a set-up's, before they are published).
void abort_comms(const std::vector<ncclComm_t>& comms);

// The end of a group: ranks' queued work is flushed, then every communicator is finalized and,
// once quiescent, destroyed; one still busy after `timeout` (a peer that never finalizes) is
// aborted. Ranks closed (aborted) before are skipped. Collectives called later fail naming
// `reason`.
void shut_down_ranks(const std::vector<std::shared_ptr<NcclRank>>& ranks, const std::string& reason,
                     std::chrono::milliseconds timeout);

}  // namespace strata::distribute
