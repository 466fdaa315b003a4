// gpu_memory.h for builds without the CUDA backend: no GPU, so no allocator ever exists.
#ifndef STRATA_WITH_CUDA
#include "framework/backend/gpu_memory.h"

namespace strata::gpu {

AllocatorStats memory_stats(int) { return {}; }
void reset_peak_memory_stats(int) {}
void empty_cache(int) {}

}  // namespace strata::gpu
#endif
