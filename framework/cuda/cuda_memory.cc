// GPU memory: one CachingAllocator per device over cudaMalloc/cudaFree, for the device's compute
// stream (every kernel of a device runs on that one stream, so a freed block is reusable at once
// by the next request). In the steady state an allocation or a free makes no CUDA call at all;
// cudaMalloc happens only when the cache has no fitting block, cudaFree only when it is emptied.
#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "framework/cuda/cuda_allocator.h"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_context.h"
#include "framework/memory/gpu_memory_settings.h"

namespace strata {
namespace cuda {
namespace {

constexpr int kMaxDevices = 64;  // cuda::device_count() never reports more

// RawMemory of one GPU. Every call sets the device first: the caller's thread may have another
// one current.
class CudaRawMemory final : public RawMemory {
 public:
  explicit CudaRawMemory(int device) : device_(device) {}

  void* allocate(size_t nbytes) override {
    DeviceGuard guard(device_);
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, nbytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it, or the next kernel's launch check would report it
      return nullptr;
    }
    STRATA_CUDA_CHECK(status, device_);
    return ptr;
  }

  void free(void* ptr, size_t) noexcept override {
    try {
      DeviceGuard guard(device_);
      // Kernels queued on the compute stream may still use the segment's blocks: the caching
      // allocator handed them back without waiting for the GPU.
      const cudaError_t synced = cudaStreamSynchronize(stream(device_));
      const cudaError_t freed = cudaFree(ptr);
      if (synced != cudaSuccess || freed != cudaSuccess) cudaGetLastError();
    } catch (...) {
      // DeviceGuard or stream() failed: the device is lost, and so is its memory.
    }
  }

  size_t device_free_bytes() const noexcept override {
    try {
      DeviceGuard guard(device_);
      size_t free_bytes = 0, total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        cudaGetLastError();
        return 0;
      }
      return free_bytes;
    } catch (...) {
      return 0;
    }
  }

 private:
  int device_;
};

struct Allocators {
  std::mutex mutex;  // creation only; lookups read the atomics
  std::array<std::atomic<CachingAllocator*>, kMaxDevices> by_device{};
};

Allocators& allocators() {
  static Allocators* a = new Allocators;  // never destroyed: tensors may be freed at teardown
  return *a;
}

}  // namespace

CachingAllocator& allocator(Device device) {
  check_device(device);  // a visible GPU, so 0 <= index < kMaxDevices
  Allocators& a = allocators();
  std::atomic<CachingAllocator*>& slot = a.by_device[size_t(device.index)];
  if (CachingAllocator* existing = slot.load(std::memory_order_acquire)) return *existing;
  std::lock_guard<std::mutex> lock(a.mutex);
  if (CachingAllocator* existing = slot.load(std::memory_order_relaxed)) return *existing;
  const gpu::MemorySettings settings = gpu::freeze_memory_settings(device.index);
  AllocatorOptions options;
  options.device_name = device.to_string();
  options.memory_limit = settings.memory_limit;
  options.memory_growth = settings.memory_growth;
  // Never destroyed either, for the same reason as the table.
  auto* created = new CachingAllocator(std::make_unique<CudaRawMemory>(device.index), options);
  slot.store(created, std::memory_order_release);
  return *created;
}

CachingAllocator* allocator_if_created(int index) {
  if (index < 0 || index >= kMaxDevices) return nullptr;
  return allocators().by_device[size_t(index)].load(std::memory_order_acquire);
}

}  // namespace cuda

void* CudaBackend::allocate(size_t nbytes, Device device) {
  CachingAllocator& a = cuda::allocator(device);
  return a.allocate(nbytes, reinterpret_cast<uintptr_t>(cuda::stream(device)));
}

void CudaBackend::deallocate(void* ptr, size_t, Device device) {
  if (ptr == nullptr) return;
  CachingAllocator* a = cuda::allocator_if_created(device.index);
  STRATA_CHECK(a != nullptr);  // the pointer came from allocate(), which created it
  a->deallocate(ptr);
}

}  // namespace strata
