#include "distribute/collectives/nccl/nccl_cross_process_group.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <thread>

#include "distribute/collectives/nccl/nccl_communicator.h"
#include "distribute/collectives/nccl/nccl_library.h"
#include "framework/backend/lazy_library.h"
#include "framework/cuda/cuda_context.h"

namespace strata::distribute {
namespace {

constexpr const char* kSetUpFix =
    "check that every worker runs with the same number of GPUs and that the workers can reach "
    "each other (NCCL_SOCKET_IFNAME picks the network interface; NCCL_DEBUG=INFO shows why), "
    "or use CommunicationImplementation::kRing";

}  // namespace

NcclCrossProcessGroup::NcclCrossProcessGroup(std::vector<Device> local_gpus, KeyValueStore& store,
                                             int worker, int num_workers,
                                             std::chrono::milliseconds timeout,
                                             CrossProcessNcclOptions options)
    : devices_(std::move(local_gpus)),
      store_(store),
      worker_(worker),
      num_workers_(num_workers),
      timeout_(timeout),
      options_(std::move(options)) {
  const int n = int(devices_.size());
  for (int l = 0; l < n; ++l) {
    auto rank = std::make_shared<NcclRank>(worker_ * n + l, num_workers_ * n, devices_[size_t(l)]);
    rank->connect = [this] { connect(); };
    rank->failure_hint =
        "another worker may have failed (see its log), or the workers cannot reach each other "
        "(NCCL_DEBUG=INFO shows why)";
    cuda::DeviceGuard guard(rank->device);
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&rank->comm_stream, cudaStreamNonBlocking),
                      rank->device.index);
    ranks_.push_back(rank);
    communicators_.push_back(make_nccl_communicator(rank));
  }
  if (!options_.connect_now) return;
  try {
    connect();
  } catch (...) {
    for (const auto& rank : ranks_) {
      rank->connect = nullptr;
      cuda::DeviceGuard guard(rank->device);
      cudaStreamDestroy(rank->comm_stream);
    }
    throw;
  }
}

NcclCrossProcessGroup::~NcclCrossProcessGroup() {
  {
    std::lock_guard<std::mutex> lock(comm_mutex_);
    aborted_ = true;  // a late abort() finds nothing to do
  }
  for (const auto& rank : ranks_) rank->connect = nullptr;
  // Finalize (flush, and quiesce with the peers) then destroy; a peer that never gets there
  // leaves the communicators to ncclCommAbort after the timeout, rather than hanging the exit.
  // A communicator still held by a replica (the group is being remade) fails cleanly.
  shut_down_ranks(ranks_, "the cross-process NCCL group was destroyed", timeout_);
  for (const auto& rank : ranks_) {
    cuda::DeviceGuard guard(rank->device);
    cudaStreamDestroy(rank->comm_stream);
  }
}

void NcclCrossProcessGroup::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(comm_mutex_);
    if (aborted_) return;
    aborted_ = true;
    abort_reason_ = reason;
    abort_requested_ = true;  // a set-up in progress sees it and aborts its own communicators
  }
  // Each guard waits for a call in progress on its communicator to return (nonblocking: at
  // once), then ncclCommAbort ends the in-flight collectives (kernels waiting for a peer that
  // will never come) and the replicas waiting for them fail naming `reason`. A rank not yet
  // connected is only marked: the set-up aborts its communicator when it publishes it.
  for (const auto& rank : ranks_) rank->guard.abort(reason);
}

std::shared_ptr<Communicator> NcclCrossProcessGroup::communicator(int local_rank) {
  if (local_rank < 0 || local_rank >= int(devices_.size())) {
    throw ValueError("NcclCrossProcessGroup::communicator: local rank " +
                     std::to_string(local_rank) + " is outside [0, " +
                     std::to_string(devices_.size()) + ")");
  }
  return communicators_[size_t(local_rank)];
}

void NcclCrossProcessGroup::connect() {
  if (connect_done_) return;  // every collective asks
  std::lock_guard<std::mutex> lock(connect_mutex_);
  if (connect_error_) std::rethrow_exception(connect_error_);
  if (connect_done_) return;
  try {
    connect_now();
    connect_done_ = true;
  } catch (...) {
    connect_error_ = std::current_exception();
    throw;
  }
}

void NcclCrossProcessGroup::connect_now() {
  const int n = int(devices_.size());
  const int world = num_workers_ * n;
  const std::string where = "worker " + std::to_string(worker_) + " of " +
                            std::to_string(num_workers_) + ", " + std::to_string(n) + " GPU(s)";
  // The id: made by global rank 0 (the chief's first GPU), read by everyone else.
  const std::string bytes = exchange_nccl_unique_id(
      store_, worker_, n,
      [&] {
        ncclUniqueId id;
        cuda::DeviceGuard guard(devices_[0]);
        check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId (" + where + ")", devices_[0], nullptr,
                   "NCCL found no usable network interface for the bootstrap; set "
                   "NCCL_SOCKET_IFNAME, or use CommunicationImplementation::kRing");
        return std::string(id.internal, sizeof id.internal);
      },
      timeout_, options_);
  if (bytes.size() != sizeof(ncclUniqueId)) {
    throw CoordinationError("cross-process NCCL set-up (" + where + "): the unique id has " +
                            std::to_string(bytes.size()) + " bytes, not " +
                            std::to_string(sizeof(ncclUniqueId)) +
                            ": every worker must run a build of Strata with the same NCCL");
  }
  ncclUniqueId id;
  std::memcpy(id.internal, bytes.data(), sizeof id.internal);

  // Nonblocking: ncclGroupEnd returns while the ranks connect, so the wait below has a
  // deadline and can be aborted.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  std::vector<ncclComm_t> comms(size_t(n), nullptr);
  const std::string init = "ncclCommInitRankConfig (" + where + ", ranks " +
                           std::to_string(worker_ * n) + ".." +
                           std::to_string(worker_ * n + n - 1) + " of " +
                           std::to_string(world) + ")";
  check_nccl(ncclGroupStart(), "ncclGroupStart", devices_[0], nullptr, kSetUpFix);
  ncclResult_t status = ncclSuccess;
  for (int l = 0; l < n && (status == ncclSuccess || status == ncclInProgress); ++l) {
    cuda::DeviceGuard guard(devices_[size_t(l)]);
    status = ncclCommInitRankConfig(&comms[size_t(l)], world, id, worker_ * n + l, &config);
  }
  const ncclResult_t end = ncclGroupEnd();
  try {
    check_nccl(status, init, devices_[0], nullptr, kSetUpFix);
    check_nccl(end, "ncclGroupEnd after " + init, devices_[0], nullptr, kSetUpFix);
  } catch (...) {
    abort_comms(comms);
    throw;
  }
  const auto aborted_while_connecting = [&] {
    std::lock_guard<std::mutex> lock(comm_mutex_);
    return CollectiveError("cross-process NCCL set-up (" + where +
                           "): aborted while connecting (" + abort_reason_ + ")");
  };
  wait_until_connected(
      comms, std::chrono::steady_clock::now() + timeout_, [&] { return bool(abort_requested_); },
      [&](int l, ncclResult_t state, const std::string& last) {
        if (state != ncclInProgress) {
          check_nccl(state, init, devices_[size_t(l)], nullptr,
                     (last.empty() ? "" : "(" + last + "); ") + kSetUpFix);
        }
        if (abort_requested_) throw aborted_while_connecting();
        const std::string missing = nccl_workers_missing(store_, num_workers_, options_);
        throw CoordinationError(
            "cross-process NCCL set-up (" + where + "): not every worker's GPUs joined the " +
            std::to_string(world) + "-rank NCCL communicator (" + init + ") within " +
            std::to_string(timeout_.count()) + " ms: " +
            (missing.empty() ? "every worker reached the set-up, but NCCL could not connect "
                               "them; "
                             : missing + " never reached the set-up (failed or still starting: "
                               "see its log), or ") +
            kSetUpFix);
      });
  // Hand each communicator to its rank's guard; one aborted meanwhile aborts it there (then
  // every communicator of this set-up ends aborted: abort() marks every guard).
  bool published = true;
  for (int l = 0; l < n; ++l) {
    if (!ranks_[size_t(l)]->guard.publish(comms[size_t(l)])) published = false;
  }
  if (!published) {
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(comm_mutex_);
      reason = abort_reason_;
    }
    for (const auto& rank : ranks_) rank->guard.abort(reason);  // those abort() has not reached
    throw aborted_while_connecting();
  }
}

std::unique_ptr<CommunicatorGroup> make_cross_process_nccl_group(
    const std::vector<Device>& local_gpus, KeyValueStore& store, int worker, int num_workers,
    std::chrono::milliseconds timeout, const CrossProcessNcclOptions& options) {
  const char* who = "cross-process NCCL";
  if (local_gpus.empty()) throw ValueError(std::string(who) + ": no local GPUs");
  if (num_workers < 1 || worker < 0 || worker >= num_workers) {
    throw ValueError(std::string(who) + ": worker " + std::to_string(worker) + " is outside [0, " +
                     std::to_string(num_workers) + ")");
  }
  if (timeout.count() <= 0) {
    throw ValueError(std::string(who) + ": the timeout must be > 0 ms, got " +
                     std::to_string(timeout.count()));
  }
  for (size_t i = 0; i < local_gpus.size(); ++i) {
    if (local_gpus[i].type != DeviceType::kCUDA) {
      throw ValueError(std::string(who) + ": device " + local_gpus[i].to_string() +
                       " is not a GPU; NCCL all-reduces across GPUs (use "
                       "CommunicationImplementation::kRing for CPU devices)");
    }
    cuda::check_device(local_gpus[i]);
    for (size_t j = 0; j < i; ++j) {
      if (local_gpus[j] == local_gpus[i]) {
        throw ValueError(std::string(who) + ": device " + local_gpus[i].to_string() +
                         " is listed twice");
      }
    }
  }
  return std::make_unique<NcclCrossProcessGroup>(local_gpus, store, worker, num_workers, timeout,
                                                 options);
}

}  // namespace strata::distribute
