// What strata-info reports: this build of Strata, the libraries it runs on, the CPU and every
// visible GPU, gathered through the public API only (gpu_runtime.h, cpu_runtime.h,
// nccl_support.h, config::list_physical_devices).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace strata_info {

struct GpuReport {
  strata::Device device;
  strata::gpu::DeviceProperties properties;
  std::string error;  // set instead of `properties` when the GPU could not be queried
};

struct SystemReport {
  std::string strata_version;     // "0.1.0"
  bool built_with_cuda = false;
  strata::gpu::Versions cuda;     // empty strings where not built / not loadable
  bool nccl = false;
  std::string nccl_version;
  std::string onednn_version;
  std::string cpu_model;          // /proc/cpuinfo's "model name"; empty where unknown
  int cpu_cores = 0;              // logical processors online
  int intra_op_threads = 0;       // strata::get_num_threads()
  uint64_t host_memory_bytes = 0; // physical memory; 0 where unknown
  std::string cuda_visible_devices;  // the environment variable; empty when unset
  bool cuda_visible_devices_set = false;
  std::vector<GpuReport> gpus;
  std::string no_gpu_reason;      // why `gpus` is empty (set only then)
};

// `strata_version`: the version this program was built with (the project's CMake version).
SystemReport collect_system_report(const std::string& strata_version);

}  // namespace strata_info
