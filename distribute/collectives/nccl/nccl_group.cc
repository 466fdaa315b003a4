#include "distribute/collectives/nccl/nccl_group.h"

#include <chrono>
#include <string>

#include "distribute/collectives/nccl/nccl_communicator.h"
#include "distribute/collectives/nccl/nccl_library.h"
#include "distribute/collectives/nccl_support.h"
#include "framework/backend/lazy_library.h"
#include "framework/cuda/cuda_context.h"

namespace strata::distribute {

namespace {

// How long the GPUs of one process may take to connect, and to quiesce at the end: far more than
// they need (seconds); past it, something is broken and an error beats a hang.
constexpr std::chrono::seconds kLocalTimeout{120};

}  // namespace

NcclGroup::NcclGroup(std::vector<Device> devices) : devices_(std::move(devices)) {
  const int n = int(devices_.size());
  std::string names;
  for (const Device& d : devices_) names += (names.empty() ? "" : ", ") + d.to_string();
  const std::string what = "NCCL set-up of " + std::to_string(n) + " GPU(s) (" + names + ")";
  // ncclCommInitAll would make blocking communicators, whose first collective can block the
  // host (connecting to the other ranks) where abort() could not reach it without freeing the
  // communicator under the call (NcclCommGuard). So: ncclCommInitAll's own steps (one unique id,
  // one ncclCommInitRankConfig per GPU in one group), nonblocking.
  ncclUniqueId id;
  {
    cuda::DeviceGuard guard(devices_[0]);
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId (" + what + ")", devices_[0]);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  std::vector<ncclComm_t> comms(size_t(n), nullptr);
  check_nccl(ncclGroupStart(), "ncclGroupStart (" + what + ")", devices_[0]);
  ncclResult_t status = ncclSuccess;
  for (int r = 0; r < n && (status == ncclSuccess || status == ncclInProgress); ++r) {
    cuda::DeviceGuard guard(devices_[size_t(r)]);
    status = ncclCommInitRankConfig(&comms[size_t(r)], n, id, r, &config);
  }
  const ncclResult_t end = ncclGroupEnd();
  try {
    check_nccl(status, "ncclCommInitRankConfig (" + what + ")", devices_[0]);
    check_nccl(end, "ncclGroupEnd (" + what + ")", devices_[0]);
  } catch (...) {
    abort_comms(comms);
    throw;
  }
  wait_until_connected(comms, std::chrono::steady_clock::now() + kLocalTimeout, nullptr,
                       [&](int r, ncclResult_t state, const std::string& last) {
                         check_nccl(state, "ncclCommInitRankConfig (" + what + ")",
                                    devices_[size_t(r)], nullptr, last);
                         throw CollectiveError(what + ": the GPUs did not connect within " +
                                               std::to_string(kLocalTimeout.count()) +
                                               " s (NCCL_DEBUG=INFO shows why)");
                       });
  for (int r = 0; r < n; ++r) {
    auto rank = std::make_shared<NcclRank>(r, n, devices_[size_t(r)]);
    rank->guard.publish(comms[size_t(r)]);  // nothing can have aborted it yet
    ranks_.push_back(rank);
    communicators_.push_back(make_nccl_communicator(rank));
  }
  try {
    for (const auto& rank : ranks_) {
      cuda::DeviceGuard guard(rank->device);
      STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&rank->comm_stream, cudaStreamNonBlocking),
                        rank->device.index);
    }
  } catch (const std::exception& e) {
    // No destructor runs for a constructor that throws: end what was made here.
    for (const auto& rank : ranks_) {
      rank->guard.abort(e.what());
      if (rank->comm_stream != nullptr) cudaStreamDestroy(rank->comm_stream);
    }
    throw;
  }
}

NcclGroup::~NcclGroup() {
  shut_down_ranks(ranks_, "the NCCL group was destroyed", kLocalTimeout);
  for (const auto& rank : ranks_) {
    cuda::DeviceGuard guard(rank->device);
    cudaStreamDestroy(rank->comm_stream);
  }
}

void NcclGroup::abort(const std::string& reason) {
  // Ends the ranks' in-flight collectives (kernels waiting for a replica that has given up);
  // through the guards, so no replica thread's call sees a communicator freed.
  for (const auto& rank : ranks_) rank->guard.abort(reason);
}

std::shared_ptr<Communicator> NcclGroup::communicator(int rank) {
  if (rank < 0 || rank >= world_size()) {
    throw ValueError("NcclGroup::communicator: rank " + std::to_string(rank) + " is outside [0, " +
                     std::to_string(world_size()) + ")");
  }
  return communicators_[size_t(rank)];
}

bool nccl_available() { return true; }

std::string nccl_version() {
  if (!nccl_library().available()) return "";  // loads libnccl: only strata-info asks
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "";
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
         std::to_string(v % 100);
}

std::unique_ptr<CommunicatorGroup> make_nccl_group(const std::vector<Device>& devices) {
  if (devices.empty()) throw ValueError("NcclAllReduce: no devices");
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].type != DeviceType::kCUDA) {
      throw ValueError("NcclAllReduce: device " + devices[i].to_string() +
                       " is not a GPU; NCCL all-reduces across GPUs (use ReductionToOneDevice "
                       "for CPU devices)");
    }
    cuda::check_device(devices[i]);
    for (size_t j = 0; j < i; ++j) {
      if (devices[j] == devices[i]) {
        throw ValueError("NcclAllReduce: device " + devices[i].to_string() + " is listed twice");
      }
    }
  }
  return std::make_unique<NcclGroup>(devices);
}

}  // namespace strata::distribute
