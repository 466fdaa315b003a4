// Internal to the CUDA backend: each GPU's caching allocator (framework/memory/caching_allocator.h)
// over cudaMalloc/cudaFree, serving that GPU's compute stream. cuda_memory.cc implements it.
#pragma once

#include "framework/core/device.h"
#include "framework/memory/caching_allocator.h"

namespace strata::cuda {

// The allocator of a visible GPU (DeviceError otherwise), created by the first call from the
// device's memory settings (framework/memory/gpu_memory_settings.h), which that freezes.
CachingAllocator& allocator(Device device);
// nullptr before the first allocation on /gpu:index (or for an index that is no GPU).
CachingAllocator* allocator_if_created(int index);

}  // namespace strata::cuda
