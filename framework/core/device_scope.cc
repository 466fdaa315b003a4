#include "framework/core/device_scope.h"

namespace strata {
namespace {
thread_local Device t_device = Device::cpu();
}  // namespace

Device default_device() { return t_device; }

DeviceScope::DeviceScope(Device device) : previous_(t_device) { t_device = device; }
DeviceScope::~DeviceScope() { t_device = previous_; }

}  // namespace strata
