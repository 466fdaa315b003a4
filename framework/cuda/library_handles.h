// Internal to the CUDA backend: the cuDNN and cuBLASLt handles every library call needs, and the
// checks that turn their status codes into DeviceErrors. Only framework/cuda/ files include this
// header (it pulls in <cudnn.h> and <cublasLt.h>).
//
// Handles are per (thread, device): a cuDNN handle must not be used by two threads at once, and
// a strategy's replica threads each drive their own GPU. A handle is created on a thread's first
// call for a device and bound to that device's compute stream (cuda::stream), so every library
// kernel is queued behind the backend's own kernels; when the thread exits its handles return to
// a per-device pool for the next thread (creating one costs milliseconds and device memory, and
// replica threads come and go with each fit()).
#pragma once

#include <cublasLt.h>
#include <cudnn.h>

#include "framework/core/device.h"
#include "framework/core/dtype.h"
#include "framework/cuda/cuda_context.h"

namespace strata::cuda {

// Throw DeviceError "cuDNN error in <what> on /gpu:<device>: <status string> (<details>)" and
// "cuBLAS error in <what> on /gpu:<device>: <status name>: <status string>".
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* what, int device);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* what, int device);

// Check a cuDNN / cuBLAS(Lt) call; `device` (an int index) only labels the message.
#define STRATA_CUDNN_CHECK(expr, device)                                                  \
  do {                                                                                    \
    const cudnnStatus_t strata_cudnn_status_ = (expr);                                    \
    if (strata_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                     \
      ::strata::cuda::throw_cudnn_error(strata_cudnn_status_, #expr, (device));           \
  } while (0)

#define STRATA_CUBLAS_CHECK(expr, device)                                                 \
  do {                                                                                    \
    const cublasStatus_t strata_cublas_status_ = (expr);                                  \
    if (strata_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::strata::cuda::throw_cublas_error(strata_cublas_status_, #expr, (device));         \
  } while (0)

// The calling thread's handles for a GPU (DeviceError unless `device` is a visible GPU).
cudnnHandle_t cudnn_handle(Device device);

// cuDNN's data type for a floating dtype; DTypeError naming `op` for any other.
cudnnDataType_t cudnn_data_type(DType dtype, const char* op);
cublasLtHandle_t cublaslt_handle(Device device);

}  // namespace strata::cuda
