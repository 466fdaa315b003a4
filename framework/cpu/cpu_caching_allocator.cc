#include "framework/cpu/cpu_caching_allocator.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "framework/core/error.h"

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
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may be freed during static teardown
  return *c;
}

size_t block_size(size_t nbytes) {
  if (nbytes < kCachedMinimum) return ((nbytes + kAlignment - 1) / kAlignment) * kAlignment;
  return ((nbytes + kPage - 1) / kPage) * kPage;
}

void* system_allocate(size_t size) {
  void* p = std::aligned_alloc(kAlignment, size == 0 ? kAlignment : size);
  if (p == nullptr) {
    throw Error("CPU allocator: out of memory allocating " + std::to_string(size) + " bytes (" +
                std::to_string(allocator_stats().allocated_bytes) + " bytes in use)");
  }
  return p;
}

}  // namespace

void* cached_allocate(size_t nbytes) {
  const size_t size = block_size(nbytes);
  if (size < kCachedMinimum) return system_allocate(size);
  Cache& c = cache();
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
    ++c.stats.misses;
    c.stats.allocated_bytes += size;
  }
  return system_allocate(size);
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

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [size, p] : c.free_blocks) std::free(p);
  c.free_blocks.clear();
  c.stats.cached_bytes = 0;
}

}  // namespace strata::cpu
