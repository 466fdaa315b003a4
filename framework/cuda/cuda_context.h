// Internal to the CUDA backend: error checks, the per-device compute streams and the device
// guard every kernel file uses. Only files in framework/cuda/ (and distribute/collectives/nccl/)
// include this header; it pulls in the CUDA runtime API.
//
// One compute stream per device, shared by every thread that works on that device: kernels of
// one device run in the order they were queued, so a buffer freed after queuing its last kernel
// can be handed to the next request at once (the caching allocator relies on this). A strategy's
// replicas each own one device, hence one stream, and never wait for each other's work.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "framework/core/device.h"
#include "framework/core/error.h"

namespace strata::cuda {

// Throws DeviceError "CUDA error in <what> on <device>: <message> (<code name>)". Also used for
// asynchronous errors a later call reports.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what, int device);

// Checks a CUDA runtime call; `device` only labels the message.
#define STRATA_CUDA_CHECK(expr, device)                                                   \
  do {                                                                                    \
    const cudaError_t strata_cuda_status_ = (expr);                                       \
    if (strata_cuda_status_ != cudaSuccess)                                               \
      ::strata::cuda::throw_cuda_error(strata_cuda_status_, #expr, (device));             \
  } while (0)

// Checks the launch of the kernel just queued (bad configuration, no kernel image for this GPU).
void check_launch(const char* kernel, int device);

// Visible GPUs; 0 when the driver is missing or no GPU is present (never throws).
int device_count();

// DeviceError naming the device and the GPUs present unless `device` is a visible GPU.
void check_device(Device device);

// The device's compute stream (non-blocking with respect to the legacy default stream).
cudaStream_t stream(Device device);
inline cudaStream_t stream(int index) { return stream(Device::gpu(index)); }

// Makes `index` the calling thread's current device for the guard's lifetime.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  explicit DeviceGuard(Device device) : DeviceGuard(device.index) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Waits until everything queued on the device's compute stream has run (and reports any
// asynchronous error it raised).
void synchronize(Device device);

}  // namespace strata::cuda
