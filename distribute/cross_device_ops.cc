#include "distribute/cross_device_ops.h"

#include "distribute/collectives/nccl_support.h"
#include "framework/core/device.h"
#include "framework/core/error.h"

namespace strata::distribute {

ReductionToOneDevice::ReductionToOneDevice(std::string reduce_to_device)
    : reduce_to_device_(std::move(reduce_to_device)) {
  if (!reduce_to_device_.empty()) Device::parse(reduce_to_device_);  // ValueError when malformed
}

HierarchicalCopyAllReduce::HierarchicalCopyAllReduce(int num_packs) : num_packs_(num_packs) {
  if (num_packs < 1) {
    throw ValueError("HierarchicalCopyAllReduce: num_packs must be >= 1, got " +
                     std::to_string(num_packs));
  }
}

NcclAllReduce::NcclAllReduce(int num_packs) {
  if (num_packs < 1) {
    throw ValueError("NcclAllReduce: num_packs must be >= 1, got " + std::to_string(num_packs));
  }
  if (!nccl_available()) make_nccl_group({});  // throws the build's reason
}

std::unique_ptr<CommunicatorGroup> NcclAllReduce::make_group(
    const std::vector<Device>& devices) const {
  return make_nccl_group(devices);
}

}  // namespace strata::distribute
