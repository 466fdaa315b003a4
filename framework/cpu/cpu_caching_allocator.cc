#include "framework/cpu/cpu_caching_allocator.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "framework/core/error.h"
#include "framework/memory/format_bytes.h"

namespace strata::cpu {
namespace {

constexpr size_t kAlignment = 64;                // a cache line, an AVX-512 register
constexpr size_t kCachedMinimum = 256 * 1024;    // below this, malloc's own bins do well
constexpr size_t kPage = 4096;
// A cached block serves a request up to 1/16 smaller: the reuse covers shapes that differ a
// little (the last batch) without letting waste grow.
constexpr size_t kMaxSlackDivisor = 16;
// Beyond this much idle memory the cache frees instead of keeping (bounds peak RSS).
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

struct Cache {
  std::mutex mutex;
  std::multimap<size_t, void*> free_blocks;  // block size -> block
  AllocatorStats stats;
  size_t limit = 0;  // set_allocation_limit; 0: none
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may be freed during static teardown
  return *c;
}

size_t block_size(size_t nbytes) {
  if (nbytes < kCachedMinimum) return ((nbytes + kAlignment - 1) / kAlignment) * kAlignment;
  return ((nbytes + kPage - 1) / kPage) * kPage;
}

// Requests beyond this cannot be met on any machine (x86-64 and AArch64 user address spaces
// have 47-48 bits), and near SIZE_MAX they would overflow the rounding in block_size.
constexpr size_t kMaxRequest = size_t(1) << 48;

// The memory, or nullptr when the system refuses it.
void* system_allocate(size_t size) {
  return std::aligned_alloc(kAlignment, size == 0 ? kAlignment : size);
}

// Frees every cached block (the caller holds the lock).
void free_cached_blocks(Cache& c) {
  for (auto& [size, p] : c.free_blocks) std::free(p);
  c.free_blocks.clear();
  c.stats.cached_bytes = 0;
}

// Called after the figures are back to what they were before the failed request, so the
// message reports the memory the tensors really hold, not that plus the request.
[[noreturn]] void throw_out_of_memory(size_t nbytes, const AllocatorStats& stats) {
  throw ResourceExhaustedError(
      "CPU allocator: out of memory allocating " + format_bytes(nbytes) + " (" +
      std::to_string(nbytes) + " bytes) for a tensor on /cpu:0; " +
      format_bytes(stats.allocated_bytes) + " held by live tensors, " +
      format_bytes(stats.cached_bytes) + " cached. Reduce the batch size or the size of what "
      "is being loaded, or raise the process's memory limit (ulimit -v, the container's limit)");
}

}  // namespace

void* cached_allocate(size_t nbytes) {
  Cache& c = cache();
  if (nbytes > kMaxRequest) throw_out_of_memory(nbytes, allocator_stats());
  const size_t size = block_size(nbytes);
  if (size < kCachedMinimum) {
    if (void* p = system_allocate(size)) return p;
    throw_out_of_memory(nbytes, allocator_stats());
  }
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free_blocks.lower_bound(size);
    if (it != c.free_blocks.end() && it->first - size <= size / kMaxSlackDivisor) {
      void* p = it->second;
      // The owner frees it with the size it asked for, so it returns to the cache filed under
      // that (smaller or equal) size: a block is never filed larger than it really is.
      c.stats.cached_bytes -= it->first;
      c.stats.allocated_bytes += it->first;
      c.free_blocks.erase(it);
      ++c.stats.hits;
      return p;
    }
    if (c.limit != 0) {
      // Idle blocks count against the limit too: they are resident.
      if (c.stats.cached_bytes + c.stats.allocated_bytes + size > c.limit) free_cached_blocks(c);
      if (c.stats.allocated_bytes + size > c.limit) throw_out_of_memory(nbytes, c.stats);
    }
    ++c.stats.misses;
    c.stats.allocated_bytes += size;
  }
  if (void* p = system_allocate(size)) return p;
  // Idle cached blocks may be what the system lacks: return them and try once more, as the
  // device allocators do.
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    free_cached_blocks(c);
  }
  if (void* p = system_allocate(size)) return p;
  AllocatorStats now;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.stats.allocated_bytes -= std::min(c.stats.allocated_bytes, size);
    --c.stats.misses;  // a refused request is neither a hit nor a miss
    now = c.stats;
  }
  throw_out_of_memory(nbytes, now);
}

void cached_deallocate(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  const size_t size = block_size(nbytes);
  if (size < kCachedMinimum) {
    std::free(ptr);
    return;
  }
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.allocated_bytes -= std::min(c.stats.allocated_bytes, size);
  if (c.stats.cached_bytes + size > kMaxCachedBytes) {
    std::free(ptr);
    return;
  }
  c.free_blocks.emplace(size, ptr);
  c.stats.cached_bytes += size;
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

void set_allocation_limit(size_t bytes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.limit = bytes;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  free_cached_blocks(c);
}

}  // namespace strata::cpu
