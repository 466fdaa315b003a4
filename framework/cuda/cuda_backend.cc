// The backend object and its copies between host and device memory. Host-to-device copies go
// through pinned staging buffers so they are queued asynchronously (the caller's host buffer may
// be reused at once); device-to-host copies wait, since the caller reads the result next.
#include "framework/cuda/cuda_backend.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "framework/cuda/cuda_context.h"

namespace strata {
namespace {

// Pinned host buffers, each reusable once the copy that last used it has run (an event says).
class PinnedStaging {
 public:
  struct Buffer {
    void* host = nullptr;
    size_t bytes = 0;
    cudaEvent_t done = nullptr;  // recorded after the copy that used it
    int device = -1;
  };

  // Copies host -> device asynchronously on the device's stream.
  void copy_to_device(const void* src, void* dst, int device, size_t nbytes) {
    cudaStream_t s = cuda::stream(Device::gpu(device));
    Buffer* b = acquire(nbytes, device);
    std::memcpy(b->host, src, nbytes);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, b->host, nbytes, cudaMemcpyHostToDevice, s), device);
    STRATA_CUDA_CHECK(cudaEventRecord(b->done, s), device);
    release(b);
  }

 private:
  Buffer* acquire(size_t nbytes, int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    // A free buffer of the right size whose last copy has finished.
    for (size_t i = 0; i < free_.size(); ++i) {
      Buffer* b = free_[i];
      if (b->bytes >= nbytes && b->bytes / 4 <= nbytes + 4096 && b->device == device &&
          cudaEventQuery(b->done) == cudaSuccess) {
        free_.erase(free_.begin() + long(i));
        return b;
      }
    }
    auto* b = new Buffer;
    b->bytes = nbytes < 4096 ? 4096 : nbytes;
    b->device = device;
    STRATA_CUDA_CHECK(cudaHostAlloc(&b->host, b->bytes, cudaHostAllocPortable), device);
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&b->done, cudaEventDisableTiming), device);
    all_.push_back(b);
    return b;
  }

  void release(Buffer* b) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(b);
    // Bound pinned memory: a pipeline keeps a handful of batches in flight, not hundreds.
    constexpr size_t kMaxBuffers = 64;
    if (all_.size() > kMaxBuffers) trim();
  }

  // Frees idle buffers whose copies have finished (lock held).
  void trim() {
    for (size_t i = 0; i < free_.size();) {
      Buffer* b = free_[i];
      if (cudaEventQuery(b->done) == cudaSuccess) {
        cudaFreeHost(b->host);
        cudaEventDestroy(b->done);
        free_.erase(free_.begin() + long(i));
        for (size_t j = 0; j < all_.size(); ++j) {
          if (all_[j] == b) {
            all_.erase(all_.begin() + long(j));
            break;
          }
        }
        delete b;
      } else {
        ++i;
      }
    }
  }

  std::mutex mutex_;
  std::vector<Buffer*> free_;
  std::vector<Buffer*> all_;
};

PinnedStaging& staging() {
  static PinnedStaging* s = new PinnedStaging;  // never destroyed (teardown order)
  return *s;
}

}  // namespace

CudaBackend& cuda_backend() {
  static CudaBackend* backend = new CudaBackend;
  return *backend;
}

void CudaBackend::copy_bytes(const void* src, Device src_device, void* dst, Device dst_device,
                             size_t nbytes) {
  if (nbytes == 0) return;
  const bool src_gpu = src_device.type == DeviceType::kCUDA;
  const bool dst_gpu = dst_device.type == DeviceType::kCUDA;
  if (!src_gpu && dst_gpu) {
    cuda::DeviceGuard guard(dst_device);
    staging().copy_to_device(src, dst, dst_device.index, nbytes);
  } else if (src_gpu && !dst_gpu) {
    cuda::DeviceGuard guard(src_device);
    cudaStream_t s = cuda::stream(src_device);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s),
                      src_device.index);
    STRATA_CUDA_CHECK(cudaStreamSynchronize(s), src_device.index);
  } else if (src_device == dst_device) {
    cuda::DeviceGuard guard(src_device);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice,
                                      cuda::stream(src_device)),
                      src_device.index);
  } else {
    // Between GPUs: the source's queued writes must land first; then the copy is queued on the
    // destination's stream, ahead of whatever will read it there.
    cuda::synchronize(src_device);
    cuda::DeviceGuard guard(dst_device);
    STRATA_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device.index, src, src_device.index, nbytes,
                                          cuda::stream(dst_device)),
                      dst_device.index);
    // ... and the source may be freed and reused on its own stream as soon as this returns.
    cuda::synchronize(dst_device);
  }
}

}  // namespace strata
