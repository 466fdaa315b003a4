#include "distribute/cross_device_ops.h"

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

NcclAllReduce::NcclAllReduce(int) {
  throw ValueError("NcclAllReduce: this build has no CUDA backend yet, so there are no GPUs to "
                   "all-reduce across; use ReductionToOneDevice or HierarchicalCopyAllReduce "
                   "with logical CPU devices");
}

}  // namespace strata::distribute
