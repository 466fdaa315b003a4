// What config::get_memory_info, reset_memory_stats and empty_cache (framework/config/memory.h)
// ask of a GPU's caching allocator, without CUDA headers: implemented by the CUDA backend
// (framework/cuda/gpu_memory_cuda.cc) in CUDA builds and by gpu_memory_none.cc otherwise, where
// there are no GPUs. Callers check the index against gpu::device_count() first. None of these
// creates the allocator, so none of them freezes the device's memory settings.
#pragma once

#include "framework/memory/allocator_stats.h"

namespace strata::gpu {

// The figures of /gpu:index's allocator; all zero before its first allocation.
AllocatorStats memory_stats(int index);
// Peak figures restart from the current ones.
void reset_peak_memory_stats(int index);
// Returns the allocator's unused cached segments to the device (cudaFree).
void empty_cache(int index);

}  // namespace strata::gpu
