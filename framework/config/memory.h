// GPU memory options and figures, under TensorFlow's names (tf.config):
//
//   for (Device gpu : config::list_physical_devices("GPU")) {
//     config::set_memory_growth(gpu, false);   // reserve the memory at first use, as TF does
//     config::set_memory_limit(gpu, 8192);     // ... but only 8 GiB of it
//   }
//   ... train ...
//   config::MemoryInfo info = config::get_memory_info(Device::gpu(0));
//   std::cout << info.current << " bytes in use, peak " << info.peak << "\n";
//
// Each GPU has a caching allocator: memory freed by tensors stays with it for reuse instead of
// going back to the driver, so a training loop stops calling cudaMalloc after its first step.
// - Memory growth on (Strata's default; TensorFlow's allow_growth): the allocator takes memory
//   from the GPU as tensors need it, and keeps it. Off (TensorFlow's default): the first
//   allocation reserves the memory limit, or without one the GPU's free memory less a reserve for
//   the CUDA libraries, and never asks the GPU again: no other process can take it mid-training.
//   The environment variable STRATA_GPU_ALLOW_GROWTH=true|false, or TensorFlow's
//   TF_FORCE_GPU_ALLOW_GROWTH, sets the default.
// - The memory limit (TensorFlow's LogicalDeviceConfiguration(memory_limit=...)) caps what the
//   allocator holds; beyond it allocations throw ResourceExhaustedError, as when the GPU is full.
//   The error names the size asked for and the allocator's figures.
// Both must be set before the GPU's first allocation: afterwards they throw StateError
// ("Physical devices cannot be modified after being initialized"), as in TensorFlow.
//
// Devices: these take a visible GPU, /gpu:0 .. /gpu:N-1 with N = list_physical_devices("GPU")
// .size(): a GPU that does not exist (and every GPU in a build without CUDA or on a machine
// without one) throws DeviceError, so looping over list_physical_devices("GPU") is the portable
// way to configure them. A CPU device throws ValueError (the CPU has no such options, and its
// cache does not count small blocks, so it has no figures to report) except in empty_cache.
#pragma once

#include <cstddef>
#include <cstdint>

#include "framework/core/device.h"

namespace strata::config {

// tf.config.experimental.set_memory_growth / get_memory_growth.
void set_memory_growth(Device gpu, bool enable);
bool get_memory_growth(Device gpu);

// The most the GPU's allocator may hold, in MiB (TensorFlow's memory_limit, 1 MB = 2^20 bytes);
// megabytes > 0, ValueError otherwise. get_memory_limit: 0 when there is none.
void set_memory_limit(Device gpu, int64_t megabytes);
int64_t get_memory_limit(Device gpu);

// tf.config.experimental.get_memory_info: bytes in use by tensors now, and the most since the
// program started or reset_memory_stats. Zeros before the GPU's first allocation.
struct MemoryInfo {
  size_t current = 0;
  size_t peak = 0;
};
MemoryInfo get_memory_info(Device gpu);
// tf.config.experimental.reset_memory_stats: the peak restarts from the current figure.
void reset_memory_stats(Device gpu);

// Returns memory cached for reuse but used by no tensor: on a GPU, the allocator's unused
// segments go back to the driver (other processes can have them; the reservation made with
// memory growth off is kept); on a CPU device, the host cache of large blocks (shared by all
// logical CPUs) goes back to the OS. Tensors are untouched.
void empty_cache(Device device);

}  // namespace strata::config
