// Internal: the CPU's caching allocator. Large blocks (>= 256 KB) freed by tensors are kept for
// reuse instead of going back to the OS: glibc serves them with mmap/munmap, so a training loop
// that allocates the same activation sizes every step would otherwise pay a page fault per 4 KB
// on every step (measured: ~40% of a small CNN's step time). Small blocks go straight to malloc.
#pragma once

#include <cstddef>

namespace strata::cpu {

void* cached_allocate(size_t nbytes);
void cached_deallocate(void* ptr, size_t nbytes);

// Bytes held in the cache (free for reuse) and handed out; for tests and diagnostics.
struct AllocatorStats {
  size_t cached_bytes = 0;
  size_t allocated_bytes = 0;
  size_t hits = 0, misses = 0;
};
AllocatorStats allocator_stats();
// Returns every cached block to the OS.
void empty_cache();

// The most the allocator hands out to live tensors at once, in bytes (0, the default: as much as
// the system gives). Beyond it a request is a ResourceExhaustedError, as on a machine with that
// much memory, after the cache has been emptied. The fuzz targets set it, so that a file asking
// for a model larger than the fuzzer's memory limit is the error a user would see, not a report.
void set_allocation_limit(size_t bytes);

}  // namespace strata::cpu
