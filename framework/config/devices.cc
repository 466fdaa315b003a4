#include "framework/config/devices.h"

#include <algorithm>
#include <atomic>
#include <cctype>

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

std::vector<Device> list_logical_devices(const std::string& device_type) {
  std::string t = device_type;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  std::vector<Device> out;
  if (t == "CPU") {
    for (int i = 0; i < g_logical_cpus; ++i) out.push_back(Device::cpu(i));
  } else if (t != "GPU") {
    throw ValueError("config::list_logical_devices: unknown device type '" + device_type +
                     "'; expected \"CPU\" or \"GPU\"");
  }
  return out;
}

}  // namespace strata::config
