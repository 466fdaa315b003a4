// Device configuration (TensorFlow's tf.config): logical CPU devices.
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
// The logical devices of a type ("CPU"; "GPU" lists none until the CUDA backend), in order.
std::vector<Device> list_logical_devices(const std::string& device_type = "CPU");

}  // namespace strata::config
