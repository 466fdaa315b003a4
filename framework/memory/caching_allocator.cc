#include "framework/memory/caching_allocator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "framework/core/error.h"
#include "framework/memory/format_bytes.h"

namespace strata {
namespace {

// Larger requests are refused at once: rounding them would overflow, and no device has 4 EiB.
constexpr size_t kMaxRequest = std::numeric_limits<size_t>::max() / 4;
// Upper bound of the memory left to the CUDA context and libraries without memory growth.
constexpr size_t kMaxReserveWithoutGrowth = (size_t(3) << 30) / 2;  // 1.5 GiB

size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

struct Pool;

// A piece of a segment: in use by one caller, or free and filed in its pool.
struct Block {
  uintptr_t addr = 0;  // an integer, not a pointer: the allocator never touches the memory
  size_t size = 0;
  size_t requested = 0;  // bytes asked for, while in use
  CachingAllocator::StreamId stream = 0;
  Pool* pool = nullptr;
  Block* prev = nullptr;  // neighbours in the same segment, by address; nullptr at its ends
  Block* next = nullptr;
  bool in_use = false;
};

// Free blocks ordered by (stream, size, address), so lower_bound finds the best fit of a stream.
struct ByStreamAndSize {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return a->addr < b->addr;
  }
};

struct Pool {
  std::set<Block*, ByStreamAndSize> free_blocks;
  size_t min_remainder = 0;  // a split leaves a free remainder only if at least this big
};

}  // namespace

// Everything behind the mutex. Invariants: no two free blocks of a segment are adjacent (a freed
// block merges at once); every block of a segment has the segment's stream; reserved_bytes is
// the sum of `segments`; in_use_bytes the sum of the sizes of `in_use`.
struct CachingAllocator::State {
  State(RawMemory& raw_memory, const AllocatorOptions& opts) : raw(raw_memory), options(opts) {
    small.min_remainder = kMinBlockSize;
    // Without growth everything is cut from one segment, so any remainder is worth keeping.
    large.min_remainder = options.memory_growth ? kSmallSize + 1 : kMinBlockSize;
  }

  RawMemory& raw;
  const AllocatorOptions& options;
  mutable std::mutex mutex;
  Pool small, large;
  std::unordered_map<uintptr_t, Block*> in_use;  // by address
  std::map<uintptr_t, size_t> segments;          // base address -> size
  AllocatorStats stats;
  bool reserved_up_front = false;  // memory_growth == false: the one segment exists ...
  StreamId reservation_stream = 0;  // ... and belongs to this stream

  // The best-fitting free block of `stream` in `pool`, taken out of the pool; nullptr if none.
  Block* take_free(Pool& pool, StreamId stream, size_t size) {
    Block key;
    key.stream = stream;
    key.size = size;
    auto it = pool.free_blocks.lower_bound(&key);
    if (it == pool.free_blocks.end() || (*it)->stream != stream) return nullptr;
    Block* block = *it;
    pool.free_blocks.erase(it);
    return block;
  }

  // Cuts `block` (taken from its pool) down to `size`, filing the rest as a free block.
  Block* split(Block* block, size_t size) {
    STRATA_CHECK(block->size >= size);
    const size_t rest = block->size - size;
    if (rest < block->pool->min_remainder) return block;  // the rest stays with it as slack
    auto* remainder = new Block;
    remainder->addr = block->addr + size;
    remainder->size = rest;
    remainder->stream = block->stream;
    remainder->pool = block->pool;
    remainder->prev = block;
    remainder->next = block->next;
    if (block->next != nullptr) block->next->prev = remainder;
    block->next = remainder;
    block->size = size;
    block->pool->free_blocks.insert(remainder);
    return block;
  }

  // Records a segment the RawMemory gave, as one free block (not yet filed in its pool).
  Block* add_segment(void* ptr, size_t bytes, Pool& pool, StreamId stream) {
    auto block = std::make_unique<Block>();
    block->addr = reinterpret_cast<uintptr_t>(ptr);
    block->size = bytes;
    block->stream = stream;
    block->pool = &pool;
    try {
      segments.emplace(block->addr, bytes);
    } catch (...) {
      raw.free(ptr, bytes);
      throw;
    }
    ++stats.raw_allocations;
    stats.reserved_bytes += bytes;
    stats.peak_reserved_bytes = std::max(stats.peak_reserved_bytes, stats.reserved_bytes);
    return block.release();
  }

  // A new segment for a request of `size` bytes, or nullptr when the limit or the device refuse.
  Block* new_segment(Pool& pool, StreamId stream, size_t size) {
    size_t bytes = &pool == &small ? kSmallSegment : round_up(size, kLargeRounding);
    if (options.memory_limit != 0) {
      const size_t room =
          options.memory_limit - std::min(options.memory_limit, stats.reserved_bytes);
      if (size > room) return nullptr;
      if (bytes > room) bytes = size;  // near the limit: a segment of just the request
    }
    void* ptr = raw.allocate(bytes);
    if (ptr == nullptr) return nullptr;
    return add_segment(ptr, bytes, pool, stream);
  }

  // Returns every segment that is one free block to the device.
  void release_cached_segments() {
    for (Pool* pool : {&small, &large}) {
      for (auto it = pool->free_blocks.begin(); it != pool->free_blocks.end();) {
        Block* block = *it;
        if (block->prev != nullptr || block->next != nullptr) {
          ++it;
          continue;
        }
        it = pool->free_blocks.erase(it);
        raw.free(reinterpret_cast<void*>(block->addr), block->size);
        segments.erase(block->addr);
        stats.reserved_bytes -= block->size;
        ++stats.raw_frees;
        delete block;
      }
    }
  }

  // memory_growth == true: the cache, else a new segment, else the cache emptied and retried.
  Block* take_growing(StreamId stream, size_t size, size_t nbytes) {
    Pool& pool = size <= kSmallSize ? small : large;
    if (Block* block = take_free(pool, stream, size)) {
      ++stats.cache_hits;
      return split(block, size);
    }
    Block* block = new_segment(pool, stream, size);
    if (block == nullptr) {
      release_cached_segments();
      block = new_segment(pool, stream, size);
    }
    if (block == nullptr) throw_out_of_memory(nbytes);
    return split(block, size);
  }

  // memory_growth == false: everything comes from the segment the first request reserves.
  Block* take_reserved(StreamId stream, size_t size, size_t nbytes) {
    const bool fresh = !reserved_up_front;
    if (fresh) {
      reserve_up_front(stream);
    } else if (stream != reservation_stream) {
      throw StateError(options.device_name +
                       ": memory growth is off, so the memory reserved at first use serves only "
                       "the stream that made the first allocation; allocations for another "
                       "stream need config::set_memory_growth(gpu, true) before first use");
    }
    Block* block = take_free(large, stream, size);
    if (block == nullptr) throw_out_of_memory(nbytes);
    if (!fresh) ++stats.cache_hits;
    return split(block, size);
  }

  void reserve_up_front(StreamId stream) {
    const size_t device_free = raw.device_free_bytes();
    const size_t bytes = reservation_without_growth(device_free, options.memory_limit);
    void* ptr = bytes != 0 ? raw.allocate(bytes) : nullptr;
    if (ptr == nullptr) {
      ++stats.out_of_memory_errors;
      const char* what =
          options.memory_limit != 0 ? "the memory limit" : "its free memory less a reserve";
      throw ResourceExhaustedError(
          options.device_name + " is out of memory: could not reserve " + format_bytes(bytes) +
          " (" + what + ") at first use, as memory growth off does; free on the device: " +
          format_bytes(device_free) + ". To fix: before the first allocation on the device, set a "
          "smaller config::set_memory_limit, or call config::set_memory_growth(gpu, true) to take "
          "memory on demand; or stop the other processes using the GPU");
    }
    Block* block = add_segment(ptr, bytes, large, stream);
    large.free_blocks.insert(block);
    reserved_up_front = true;
    reservation_stream = stream;
  }

  [[noreturn]] void throw_out_of_memory(size_t nbytes) {
    ++stats.out_of_memory_errors;
    const size_t cached = stats.reserved_bytes - stats.in_use_bytes;
    const bool limited = options.memory_limit != 0;
    std::string message = options.device_name + " is out of memory: tried to allocate " +
                          format_bytes(nbytes) + " (" + std::to_string(nbytes) + " bytes). ";
    message += "In use by tensors: " + format_bytes(stats.in_use_bytes) +
               "; reserved by Strata's allocator: " + format_bytes(stats.reserved_bytes);
    if (cached != 0) {
      message += " (" + format_bytes(cached) +
                 " of it free, in pieces too small for this request or kept for another stream)";
    }
    message += "; memory limit: " + (limited ? format_bytes(options.memory_limit) : "none");
    message += "; free on the device: " + format_bytes(raw.device_free_bytes());
    message += options.memory_growth ? "; memory growth: on."
                                     : "; memory growth: off (all of it reserved at first use).";
    message += " To fix: use a smaller batch size, or train in mixed precision (float16/bfloat16 "
               "activations take half the memory)";
    if (limited) {
      message += "; raise the limit with config::set_memory_limit before the first allocation "
                 "on the device";
    }
    message += "; if other processes share the GPU, call config::set_memory_growth(gpu, true) "
               "(and config::set_memory_limit) before the first allocation, so each takes only "
               "its share.";
    throw ResourceExhaustedError(message);
  }
};

CachingAllocator::CachingAllocator(std::unique_ptr<RawMemory> raw, AllocatorOptions options)
    : raw_(std::move(raw)), options_(std::move(options)) {
  STRATA_CHECK(raw_ != nullptr);
  state_ = std::make_unique<State>(*raw_, options_);
}

CachingAllocator::~CachingAllocator() {
  State& s = *state_;
  std::vector<Block*> blocks;
  for (Pool* pool : {&s.small, &s.large}) {
    blocks.insert(blocks.end(), pool->free_blocks.begin(), pool->free_blocks.end());
  }
  for (const auto& entry : s.in_use) blocks.push_back(entry.second);
  for (Block* block : blocks) delete block;
  for (const auto& [addr, bytes] : s.segments) raw_->free(reinterpret_cast<void*>(addr), bytes);
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes <= kMinBlockSize) return kMinBlockSize;
  return round_up(nbytes, kMinBlockSize);
}

size_t CachingAllocator::reservation_without_growth(size_t device_free, size_t memory_limit) {
  if (memory_limit != 0) return memory_limit / kMinBlockSize * kMinBlockSize;
  const size_t keep = std::min(device_free / 8, kMaxReserveWithoutGrowth);
  return (device_free - keep) / kMinBlockSize * kMinBlockSize;
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (nbytes > kMaxRequest) s.throw_out_of_memory(nbytes);
  const size_t size = round_size(nbytes);
  Block* block = options_.memory_growth ? s.take_growing(stream, size, nbytes)
                                        : s.take_reserved(stream, size, nbytes);
  block->in_use = true;
  block->requested = nbytes;
  s.in_use.emplace(block->addr, block);
  ++s.stats.allocations;
  s.stats.in_use_bytes += block->size;
  s.stats.requested_bytes += nbytes;
  s.stats.peak_in_use_bytes = std::max(s.stats.peak_in_use_bytes, s.stats.in_use_bytes);
  return reinterpret_cast<void*>(block->addr);
}

void CachingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.in_use.find(reinterpret_cast<uintptr_t>(ptr));
  STRATA_CHECK(it != s.in_use.end());  // not a block of this allocator, or freed twice
  Block* block = it->second;
  s.in_use.erase(it);
  s.stats.in_use_bytes -= block->size;
  s.stats.requested_bytes -= block->requested;
  block->in_use = false;
  block->requested = 0;
  Pool& pool = *block->pool;
  // Merge with free neighbours (out of the pool first: the size is part of the set's key).
  if (Block* prev = block->prev; prev != nullptr && !prev->in_use) {
    STRATA_CHECK(prev->stream == block->stream);
    pool.free_blocks.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->in_use) {
    STRATA_CHECK(next->stream == block->stream);
    pool.free_blocks.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.free_blocks.insert(block);
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  AllocatorStats stats = state_->stats;
  stats.segments = state_->segments.size();
  return stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stats.peak_in_use_bytes = state_->stats.in_use_bytes;
  state_->stats.peak_reserved_bytes = state_->stats.reserved_bytes;
}

void CachingAllocator::empty_cache() {
  if (!options_.memory_growth) return;  // the reservation is kept: that is its point
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->release_cached_segments();
}

size_t CachingAllocator::allocated_size(const void* ptr) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->in_use.find(reinterpret_cast<uintptr_t>(ptr));
  return it == state_->in_use.end() ? 0 : it->second->size;
}

}  // namespace strata
