#include "distribute/mirrored_strategy.h"

#include <algorithm>

#include "distribute/collectives/nccl_support.h"
#include "distribute/variables/replicated_variable.h"

namespace strata::distribute {
namespace {

// TensorFlow's choice: NCCL when every device is a GPU (and NCCL is there), else reduction to
// one device.
std::shared_ptr<CrossDeviceOps> default_cross_device_ops(const std::vector<Device>& devices) {
  const bool all_gpus = std::all_of(devices.begin(), devices.end(), [](const Device& d) {
    return d.type == DeviceType::kCUDA;
  });
  if (all_gpus && nccl_available()) return std::make_shared<NcclAllReduce>();
  return std::make_shared<ReductionToOneDevice>();
}

}  // namespace

MirroredStrategy::MirroredStrategy(const std::vector<std::string>& devices,
                                   std::shared_ptr<CrossDeviceOps> cross_device_ops)
    : MirroredStrategy(Resolved{}, resolve_devices(devices, "MirroredStrategy"),
                       std::move(cross_device_ops)) {}

MirroredStrategy::MirroredStrategy(Resolved, std::vector<Device> devices,
                                   std::shared_ptr<CrossDeviceOps> cross_device_ops)
    : cross_device_ops_(cross_device_ops ? std::move(cross_device_ops)
                                         : default_cross_device_ops(devices)),
      replicas_(this, devices, [ops = cross_device_ops_](const std::vector<Device>& d) {
        return ops->make_group(d);
      }) {}

VariablePtr MirroredStrategy::create_variable(const VariableSpec& spec, const NextCreator&) {
  if (spec.synchronization == VariableSynchronization::kOnRead) {
    return std::make_shared<SyncOnReadVariable>(spec, replicas_.devices());
  }
  return std::make_shared<MirroredVariable>(spec, replicas_.devices());
}

}  // namespace strata::distribute
