#include "framework/config/memory.h"

#include <limits>
#include <string>

#include "framework/backend/gpu_memory.h"
#include "framework/backend/gpu_runtime.h"
#include "framework/config/devices.h"
#include "framework/core/error.h"
#include "framework/cpu/cpu_caching_allocator.h"
#include "framework/memory/gpu_memory_settings.h"

namespace strata::config {
namespace {

constexpr int kBytesPerMegabyteShift = 20;  // TensorFlow's memory_limit MB are MiB

std::string name(const char* fn) { return std::string("config::") + fn; }

// ValueError unless `device` is a GPU: the checks that need no GPU come first.
void require_gpu_type(Device device, const char* fn) {
  if (device.type != DeviceType::kCUDA) {
    throw ValueError(name(fn) + ": expected a GPU (/gpu:N), got " + device.to_string() +
                     "; memory options and figures exist for GPUs only");
  }
}

// DeviceError unless `device` is a visible GPU.
void require_visible_gpu(Device device, const char* fn) {
  const int n = gpu::device_count();
  if (device.index >= 0 && device.index < n) return;
  std::string why;
  if (!gpu::built_with_cuda()) {
    why = "this build of Strata has no CUDA backend (configure found no nvcc, cuBLAS or cuDNN)";
  } else if (n == 0) {
    why = "no GPU is visible to this process (no NVIDIA driver or GPU, or CUDA_VISIBLE_DEVICES "
          "hides them)";
  } else {
    why = "this machine has " + std::to_string(n) + " GPU(s), /gpu:0 to /gpu:" +
          std::to_string(n - 1);
  }
  throw DeviceError(name(fn) + "(" + device.to_string() + "): no such GPU: " + why +
                    "; configure the GPUs config::list_physical_devices(\"GPU\") lists");
}

void require_gpu(Device device, const char* fn) {
  require_gpu_type(device, fn);
  require_visible_gpu(device, fn);
}

}  // namespace

void set_memory_growth(Device gpu_device, bool enable) {
  require_gpu(gpu_device, "set_memory_growth");
  gpu::set_memory_growth(gpu_device.index, enable, "config::set_memory_growth");
}

bool get_memory_growth(Device gpu_device) {
  require_gpu(gpu_device, "get_memory_growth");
  return gpu::memory_settings(gpu_device.index).memory_growth;
}

void set_memory_limit(Device gpu_device, int64_t megabytes) {
  require_gpu_type(gpu_device, "set_memory_limit");
  constexpr int64_t kMaxMegabytes =
      int64_t(std::numeric_limits<size_t>::max() >> kBytesPerMegabyteShift);
  if (megabytes <= 0 || megabytes > kMaxMegabytes) {
    throw ValueError(name("set_memory_limit") + "(" + gpu_device.to_string() + ", " +
                     std::to_string(megabytes) + "): the limit must be a positive number of MB "
                     "(1 MB = 2^20 bytes) up to " + std::to_string(kMaxMegabytes) +
                     ", e.g. 8192 for 8 GiB");
  }
  require_visible_gpu(gpu_device, "set_memory_limit");
  gpu::set_memory_limit(gpu_device.index, size_t(megabytes) << kBytesPerMegabyteShift,
                        "config::set_memory_limit");
}

int64_t get_memory_limit(Device gpu_device) {
  require_gpu(gpu_device, "get_memory_limit");
  return int64_t(gpu::memory_settings(gpu_device.index).memory_limit >> kBytesPerMegabyteShift);
}

MemoryInfo get_memory_info(Device gpu_device) {
  require_gpu(gpu_device, "get_memory_info");
  const AllocatorStats stats = gpu::memory_stats(gpu_device.index);
  return MemoryInfo{stats.in_use_bytes, stats.peak_in_use_bytes};
}

void reset_memory_stats(Device gpu_device) {
  require_gpu(gpu_device, "reset_memory_stats");
  gpu::reset_peak_memory_stats(gpu_device.index);
}

void empty_cache(Device device) {
  if (device.type == DeviceType::kCUDA) {
    require_visible_gpu(device, "empty_cache");
    gpu::empty_cache(device.index);
    return;
  }
  if (device.index < 0 || device.index >= logical_cpu_device_count()) {
    throw DeviceError(name("empty_cache") + "(" + device.to_string() + "): no such CPU device; " +
                      "there are " + std::to_string(logical_cpu_device_count()) +
                      " logical CPU device(s) (config::set_logical_cpu_devices)");
  }
  cpu::empty_cache();
}

}  // namespace strata::config
