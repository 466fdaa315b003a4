// The figures a device's caching allocator keeps (caching_allocator.h). Separate from the
// allocator so the GPU hooks (framework/backend/gpu_memory.h) and config::get_memory_info can
// pass them around without pulling in the allocator.
#pragma once

#include <cstddef>

namespace strata {

struct AllocatorStats {
  // Bytes of the blocks handed out and not yet returned. Blocks are rounded up to 512 bytes,
  // so this is what the tensors really occupy; `requested_bytes` is what they asked for.
  size_t in_use_bytes = 0;
  size_t requested_bytes = 0;
  size_t peak_in_use_bytes = 0;     // highest in_use_bytes since creation or reset_peak_stats
  // Bytes the allocator holds from the device (its segments): in use + cached for reuse.
  size_t reserved_bytes = 0;
  size_t peak_reserved_bytes = 0;
  size_t segments = 0;              // segments held now
  size_t allocations = 0;           // allocate() calls that succeeded
  size_t cache_hits = 0;            // ... of which were served without asking the device
  size_t raw_allocations = 0;       // segments asked from the device (cudaMalloc calls)
  size_t raw_frees = 0;             // segments given back (cudaFree calls)
  size_t out_of_memory_errors = 0;  // ResourceExhaustedErrors thrown
};

}  // namespace strata
