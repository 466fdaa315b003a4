// Where a tensor's memory lives. TensorFlow's names: "/cpu:0", "/gpu:1".
#pragma once

#include <string>

namespace strata {

enum class DeviceType : uint8_t { kCPU = 0, kCUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  static Device cpu(int index = 0) { return {DeviceType::kCPU, index}; }
  static Device gpu(int index = 0) { return {DeviceType::kCUDA, index}; }
  // Parses "/cpu:0", "cpu", "/gpu:1", "GPU:1", "/device:GPU:0"; throws ValueError otherwise.
  static Device parse(const std::string& name);

  std::string to_string() const;  // "/cpu:0"
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// Whether tensors on `a` and `b` share one memory space, so a kernel may read both: logical CPU
// devices (/cpu:0, /cpu:1, ... see config::set_logical_cpu_devices) all live in host memory.
inline bool same_memory_space(const Device& a, const Device& b) {
  return a.type == b.type && (a.type == DeviceType::kCPU || a.index == b.index);
}

}  // namespace strata
