#include "framework/config/devices.h"

#include <algorithm>
#include <atomic>
#include <cctype>

#include "framework/backend/gpu_runtime.h"
#include "framework/core/error.h"

namespace strata::config {
namespace {
std::atomic<int> g_logical_cpus{1};
}  // namespace

void set_logical_cpu_devices(int n) {
  if (n < 1) {
    throw ValueError("config::set_logical_cpu_devices: expected n >= 1, got " + std::to_string(n));
  }
  g_logical_cpus = n;
}

int logical_cpu_device_count() { return g_logical_cpus; }

namespace {

std::string checked_type(const std::string& device_type, const char* fn) {
  std::string t = device_type;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  if (t != "CPU" && t != "GPU") {
    throw ValueError(std::string("config::") + fn + ": unknown device type '" + device_type +
                     "'; expected \"CPU\" or \"GPU\"");
  }
  return t;
}

std::vector<Device> gpus() {
  std::vector<Device> out;
  for (int i = 0; i < gpu::device_count(); ++i) out.push_back(Device::gpu(i));
  return out;
}

}  // namespace

std::vector<Device> list_logical_devices(const std::string& device_type) {
  if (checked_type(device_type, "list_logical_devices") == "GPU") return gpus();
  std::vector<Device> out;
  for (int i = 0; i < g_logical_cpus; ++i) out.push_back(Device::cpu(i));
  return out;
}

std::vector<Device> list_physical_devices(const std::string& device_type) {
  if (checked_type(device_type, "list_physical_devices") == "GPU") return gpus();
  return {Device::cpu(0)};
}

DeviceDetails get_device_details(Device gpu_device) {
  if (gpu_device.type != DeviceType::kCUDA) {
    throw ValueError("config::get_device_details: expected a GPU, got " + gpu_device.to_string());
  }
  const gpu::DeviceProperties p = gpu::properties(gpu_device.index);
  DeviceDetails d;
  d.device_name = p.name;
  d.compute_capability[0] = p.compute_major;
  d.compute_capability[1] = p.compute_minor;
  return d;
}

}  // namespace strata::config
