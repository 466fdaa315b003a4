#include "distribute/mirrored_strategy.h"

#include "distribute/replicated_variable.h"

namespace strata::distribute {

MirroredStrategy::MirroredStrategy(const std::vector<std::string>& devices,
                                   std::shared_ptr<CrossDeviceOps> cross_device_ops)
    : cross_device_ops_(cross_device_ops ? std::move(cross_device_ops)
                                         : std::make_shared<ReductionToOneDevice>()),
      replicas_(this, resolve_devices(devices, "MirroredStrategy")) {}

VariablePtr MirroredStrategy::create_variable(const VariableSpec& spec, const NextCreator&) {
  if (spec.synchronization == VariableSynchronization::kOnRead) {
    return std::make_shared<SyncOnReadVariable>(spec, replicas_.devices());
  }
  return std::make_shared<MirroredVariable>(spec, replicas_.devices());
}

}  // namespace strata::distribute
