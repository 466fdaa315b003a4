// Internal: a caching allocator for one device, in the style of PyTorch's CUDA caching
// allocator. Device-agnostic: it only sees a RawMemory (cudaMalloc/cudaFree for a GPU, a fake
// with a fixed capacity in the tests), so every rule below is tested on machines without GPUs.
//
//   CachingAllocator alloc(std::make_unique<CudaRawMemory>(0),   // cudaMalloc on /gpu:0
//                          AllocatorOptions{"/gpu:0", /*memory_limit=*/0, /*memory_growth=*/true});
//   void* p = alloc.allocate(4 << 20, stream);   // first time: one raw allocation
//   alloc.deallocate(p);                         // cached, not returned to the device
//   void* q = alloc.allocate(4 << 20, stream);   // same block again: no raw allocation
//
// Why cache: cudaMalloc/cudaFree cost tens of microseconds to milliseconds and cudaFree waits
// for the whole device, while a training step frees and reallocates the same activation sizes
// every step. After the first step the allocator serves every request from its cache.
//
// The rules, and why:
// - Sizes round up to 512 bytes (kMinBlockSize): keeps every block aligned for vector loads and
//   cuBLAS/cuDNN, and lets slightly different sizes share cached blocks.
// - Two pools. Requests up to 1 MiB (kSmallSize) come from 2 MiB segments shared by many small
//   blocks (so bias vectors and scalars don't each cost a device allocation); larger requests get
//   a segment of their own, rounded up to 2 MiB (kLargeRounding), and never mix with the small
//   ones, which would otherwise fragment large segments.
// - Best fit: a request takes the smallest cached block of its pool and stream that is big
//   enough, and SPLITS it when the rest is worth keeping (>= 512 bytes in the small pool,
//   > 1 MiB in the large pool: a smaller remainder could serve no large request, so it stays
//   with the block as slack). A freed block MERGES with free neighbours of its segment, so a
//   segment cut up for one step's sizes serves a bigger request later.
// - Free blocks are keyed by (stream, size), and every segment belongs to the stream that asked
//   for it: a freed block may be handed out again without any synchronisation only to the same
//   stream, because that stream runs the new owner's kernels after the old owner's. (Strata
//   queues all of a device's work on one stream; streams are opaque ids here.)
// - When the device (or the memory limit) refuses a new segment, every cached segment with no
//   block in use is returned and the request retried once; then ResourceExhaustedError, whose
//   message names the device, the size asked for and the allocator's figures, and says what to
//   change (as PyTorch's and TensorFlow's out-of-memory messages do).
// - memory_growth = true (Strata's default, TensorFlow's allow_growth): segments on demand.
//   memory_growth = false (TensorFlow's default): the first request reserves one segment of the
//   memory limit, or without a limit of the device's free memory less a reserve for the CUDA
//   context, cuDNN and cuBLAS (reservation_without_growth); every request is cut from it and
//   the device is never asked again. Predictable, and other processes cannot take the memory
//   mid-training; the cost is that the reservation stays held (empty_cache keeps it).
// - One mutex: allocations take well under a microsecond of work, and a device's kernels are
//   queued from few threads; PyTorch's allocator also runs under one lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "framework/memory/allocator_stats.h"

namespace strata {

// Where the allocator gets device memory: LevelDB's Env-style injection point.
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  // A new segment of `nbytes` (> 0) bytes, or nullptr when the device is out of memory. Other
  // failures (a lost device) throw.
  virtual void* allocate(size_t nbytes) = 0;
  // Returns a segment from allocate(). Called only when no block of it is in use; the
  // implementation must first wait for work still queued that used it (a GPU's: synchronise the
  // stream). Never throws.
  virtual void free(void* ptr, size_t nbytes) noexcept = 0;
  // Bytes the device could still give (all processes together). For the messages and the
  // reservation without growth. Never throws (0 when unknown).
  virtual size_t device_free_bytes() const noexcept = 0;
};

// Options, fixed when the allocator is created.
struct AllocatorOptions {
  std::string device_name = "device";  // names the device in messages: "/gpu:0"
  size_t memory_limit = 0;             // bytes the allocator may reserve; 0: the device's memory
  bool memory_growth = true;           // false: reserve everything on first use (see above)
};

class CachingAllocator {
 public:
  using StreamId = uintptr_t;

  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = size_t(1) << 20;     // largest small-pool request
  static constexpr size_t kSmallSegment = size_t(2) << 20;  // small-pool segment size
  static constexpr size_t kLargeRounding = size_t(2) << 20; // large segments round up to this

  CachingAllocator(std::unique_ptr<RawMemory> raw, AllocatorOptions options);
  // Returns every segment to the RawMemory. Blocks still in use are invalid afterwards: device
  // allocators live as long as the process for that reason.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `nbytes` bytes (512-byte aligned relative to its segment) for work on
  // `stream`. 0 bytes gives a distinct minimum-size block, so every tensor has its own non-null
  // address. Throws ResourceExhaustedError when the memory cannot be had, and StateError for a
  // second stream while memory_growth is false.
  void* allocate(size_t nbytes, StreamId stream);
  // Returns a block from allocate() to the cache (nullptr: nothing). The stream it was
  // allocated for may reuse it at once; work already queued on that stream runs first.
  void deallocate(void* ptr);

  AllocatorStats stats() const;
  // Peak figures restart from the current ones (tf.config.experimental.reset_memory_stats).
  void reset_peak_stats();
  // Returns every cached segment with no block in use to the device (not the reservation made
  // without memory growth).
  void empty_cache();

  const AllocatorOptions& options() const { return options_; }
  // The size of the block behind `ptr` (>= the rounded request), 0 when `ptr` is not a block in
  // use. For tests and diagnostics.
  size_t allocated_size(const void* ptr) const;

  // The size a request is rounded to.
  static size_t round_size(size_t nbytes);
  // The segment reserved up front when memory_growth is false: the limit when there is one,
  // else the device's free memory less min(free / 8, 1.5 GiB) left for the CUDA context,
  // cuDNN/cuBLAS workspaces and NCCL, which allocate outside this allocator (TensorFlow keeps
  // a similar reserve). A multiple of 512.
  static size_t reservation_without_growth(size_t device_free, size_t memory_limit);

 private:
  struct State;  // pools, blocks and figures: caching_allocator.cc
  std::unique_ptr<RawMemory> raw_;
  const AllocatorOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace strata
