// Device configuration (TensorFlow's tf.config): physical GPUs, logical CPU devices.
//
// config::list_physical_devices("GPU") lists the GPUs this process sees (none in a build without
// CUDA or on a machine without a GPU); "/gpu:0" names the first. Tensors and variables go where
// a DeviceScope (device_scope.h) or a strategy puts them; the default is /cpu:0.
//
// config::set_logical_cpu_devices(n) splits the CPU into n logical devices /cpu:0 .. /cpu:n-1
// (as TensorFlow's set_logical_device_configuration), so MirroredStrategy can run n replicas on
// one CPU — what tests and machines without GPUs use. A strategy's replicas split the intra-op
// threads between them (set_num_threads / STRATA_NUM_THREADS: the total). Set it before creating
// strategies; it does not move existing tensors.
#pragma once

#include <string>
#include <vector>

#include "framework/core/device.h"

namespace strata::config {

// n >= 1 (ValueError otherwise). The default is one logical CPU device.
void set_logical_cpu_devices(int n);
int logical_cpu_device_count();
// The logical devices of a type ("CPU" or "GPU"; a GPU is one logical device), in order.
std::vector<Device> list_logical_devices(const std::string& device_type = "CPU");
// The physical devices of a type: "CPU" is always one, "GPU" every visible GPU.
std::vector<Device> list_physical_devices(const std::string& device_type = "GPU");

// tf.config.experimental.get_device_details: a GPU's name and compute capability.
struct DeviceDetails {
  std::string device_name;       // "NVIDIA H100 80GB HBM3"
  int compute_capability[2] = {0, 0};
};
DeviceDetails get_device_details(Device gpu);

}  // namespace strata::config
