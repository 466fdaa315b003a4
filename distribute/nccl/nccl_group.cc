#include "distribute/nccl/nccl_group.h"

#include <string>

#include "distribute/nccl/nccl_communicator.h"
#include "distribute/nccl/nccl_library.h"
#include "distribute/nccl_support.h"
#include "framework/backend/lazy_library.h"
#include "framework/cuda/cuda_context.h"

namespace strata::distribute {

NcclGroup::NcclGroup(std::vector<Device> devices) : devices_(std::move(devices)) {
  const int n = int(devices_.size());
  std::vector<int> ordinals;
  for (const Device& d : devices_) ordinals.push_back(d.index);
  std::vector<ncclComm_t> comms(size_t(n), nullptr);
  check_nccl(ncclCommInitAll(comms.data(), n, ordinals.data()), "ncclCommInitAll", devices_[0]);
  for (int r = 0; r < n; ++r) {
    auto rank = std::make_shared<NcclRank>();
    rank->rank = r;
    rank->world = n;
    rank->device = devices_[size_t(r)];
    rank->comm = comms[size_t(r)];
    cuda::DeviceGuard guard(rank->device);
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&rank->comm_stream, cudaStreamNonBlocking),
                      rank->device.index);
    ranks_.push_back(rank);
    communicators_.push_back(make_nccl_communicator(rank));
  }
}

NcclGroup::~NcclGroup() {
  for (const auto& rank : ranks_) {
    cuda::DeviceGuard guard(rank->device);
    if (!rank->aborted) {
      cudaStreamSynchronize(rank->comm_stream);
      ncclCommDestroy(rank->comm);
    }
    cudaStreamDestroy(rank->comm_stream);
  }
}

void NcclGroup::abort(const std::string& reason) {
  for (const auto& rank : ranks_) {
    if (!rank->mark_aborted(reason)) continue;
    // Ends the rank's in-flight collectives (kernels waiting for a peer that will never come).
    ncclCommAbort(rank->comm);
  }
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
