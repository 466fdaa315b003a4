// What the rest of the framework may ask about GPUs, without CUDA headers: implemented by the
// CUDA backend (framework/cuda/gpu_runtime_cuda.cc) in CUDA builds and by gpu_runtime_none.cc
// otherwise, where there are no GPUs. config::list_physical_devices, strata-info and the GPU
// tests' skip checks go through here.
#pragma once

#include <cstddef>
#include <string>

#include "framework/core/device.h"

namespace strata::gpu {

// Whether this build of Strata contains the CUDA backend.
bool built_with_cuda();

// GPUs visible to this process (0 in CPU-only builds, without a driver or without a GPU).
int device_count();

struct DeviceProperties {
  int index = 0;
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int compute_major = 0;       // compute capability, e.g. 9.0
  int compute_minor = 0;
  int multiprocessors = 0;
  size_t total_memory = 0;     // bytes
  size_t free_memory = 0;      // bytes free on the device now (all processes)
  std::string pci_bus_id;      // "0000:19:00.0"
};
// DeviceError unless 0 <= index < device_count().
DeviceProperties properties(int index);

// Versions as "13.0" / "9.19.0"; empty where not built or not loadable. `driver` is the CUDA
// version the installed driver supports; `cuda_runtime` the one Strata was built with.
struct Versions {
  std::string cuda_runtime, cuda_driver, cudnn, cudnn_loaded, cublas;
};
Versions versions();

// Waits until the device has run everything queued on its compute stream.
void synchronize(Device device);

}  // namespace strata::gpu
