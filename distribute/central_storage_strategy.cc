#include "distribute/central_storage_strategy.h"

#include "distribute/variables/central_variable.h"
#include "distribute/variables/replicated_variable.h"

namespace strata::distribute {

CentralStorageStrategy::CentralStorageStrategy(const std::vector<std::string>& compute_devices,
                                               const std::string& parameter_device)
    : replicas_(this, resolve_devices(compute_devices, "CentralStorageStrategy")),
      parameter_device_(parameter_device.empty()
                            ? Device::cpu()
                            : resolve_devices({parameter_device}, "CentralStorageStrategy")[0]) {}

VariablePtr CentralStorageStrategy::create_variable(const VariableSpec& spec, const NextCreator&) {
  if (spec.synchronization == VariableSynchronization::kOnRead) {
    return std::make_shared<SyncOnReadVariable>(spec, replicas_.devices());
  }
  VariableSpec central = spec;
  central.device = parameter_device_;
  return std::make_shared<CentralVariable>(central);
}

}  // namespace strata::distribute
