#include "distribute/one_device_strategy.h"

namespace strata::distribute {

OneDeviceStrategy::OneDeviceStrategy(const std::string& device)
    : replicas_(this, resolve_devices({device}, "OneDeviceStrategy")) {}

VariablePtr OneDeviceStrategy::create_variable(const VariableSpec& spec, const NextCreator& next) {
  VariableSpec placed = spec;
  placed.device = replicas_.devices()[0];
  return next(placed);
}

}  // namespace strata::distribute
