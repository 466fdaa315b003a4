// gpu_memory.h in CUDA builds: the figures and cache of each GPU's caching allocator.
#include "framework/backend/gpu_memory.h"

#include "framework/cuda/cuda_allocator.h"

namespace strata::gpu {

AllocatorStats memory_stats(int index) {
  const CachingAllocator* a = cuda::allocator_if_created(index);
  return a != nullptr ? a->stats() : AllocatorStats{};
}

void reset_peak_memory_stats(int index) {
  if (CachingAllocator* a = cuda::allocator_if_created(index)) a->reset_peak_stats();
}

void empty_cache(int index) {
  if (CachingAllocator* a = cuda::allocator_if_created(index)) a->empty_cache();
}

}  // namespace strata::gpu
