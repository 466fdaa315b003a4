#include "framework/cuda/library_handles.h"

#include <array>
#include <mutex>
#include <string>
#include <vector>

#include "framework/backend/lazy_library.h"

namespace strata::cuda {
namespace {

constexpr int kMaxDevices = 64;  // as cuda_context.cc: device_count() never reports more

// Idle handles per device, handed to the next thread that needs one. Never destroyed: threads
// return their handles during process teardown, when the CUDA runtime may already be gone.
template <typename Handle>
class HandlePool {
 public:
  Handle take(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Handle>& free = free_[size_t(device)];
    if (free.empty()) return nullptr;
    Handle h = free.back();
    free.pop_back();
    return h;
  }
  void give_back(int device, Handle h) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[size_t(device)].push_back(h);
  }

 private:
  std::mutex mutex_;
  std::array<std::vector<Handle>, kMaxDevices> free_;
};

HandlePool<cudnnHandle_t>& cudnn_pool() {
  static auto* pool = new HandlePool<cudnnHandle_t>;
  return *pool;
}
HandlePool<cublasLtHandle_t>& cublaslt_pool() {
  static auto* pool = new HandlePool<cublasLtHandle_t>;
  return *pool;
}

// The handles one thread holds; returned to the pools (no CUDA call) when the thread exits.
struct ThreadHandles {
  std::array<cudnnHandle_t, kMaxDevices> cudnn{};
  std::array<cublasLtHandle_t, kMaxDevices> cublaslt{};
  ~ThreadHandles() {
    for (int d = 0; d < kMaxDevices; ++d) {
      if (cudnn[size_t(d)] != nullptr) cudnn_pool().give_back(d, cudnn[size_t(d)]);
      if (cublaslt[size_t(d)] != nullptr) cublaslt_pool().give_back(d, cublaslt[size_t(d)]);
    }
  }
};

ThreadHandles& thread_handles() {
  thread_local ThreadHandles handles;
  return handles;
}

std::string gpu_name(int device) { return "/gpu:" + std::to_string(device); }

}  // namespace

void throw_cudnn_error(cudnnStatus_t status, const char* what, int device) {
  // The texts come from cuDNN itself; should they be out of reach, the status number remains.
  std::string message =
      std::string("cuDNN error in ") + what + " on " + gpu_name(device) + ": " +
      library_text_or([&] { return cudnnGetErrorString(status); },
                      "cuDNN status " + std::to_string(int(status)));
  // cuDNN 9 keeps a thread-local explanation of the last failure (which parameter, which limit).
  char details[512] = {};
  const std::string last = library_text_or(
      [&] {
        cudnnGetLastErrorString(details, sizeof(details));
        return details;
      },
      "");
  if (!last.empty()) message += " (" + last + ")";
  throw DeviceError(message);
}

void throw_cublas_error(cublasStatus_t status, const char* what, int device) {
  const std::string number = "cuBLAS status " + std::to_string(int(status));
  throw DeviceError(std::string("cuBLAS error in ") + what + " on " + gpu_name(device) + ": " +
                    library_text_or([&] { return cublasLtGetStatusName(status); }, number) +
                    ": " + library_text_or([&] { return cublasLtGetStatusString(status); }, ""));
}

cudnnHandle_t cudnn_handle(Device device) {
  check_device(device);
  cudnnHandle_t& handle = thread_handles().cudnn[size_t(device.index)];
  if (handle != nullptr) return handle;
  handle = cudnn_pool().take(device.index);  // pooled handles are already bound to the stream
  if (handle != nullptr) return handle;
  DeviceGuard guard(device);
  cudnnHandle_t created = nullptr;
  STRATA_CUDNN_CHECK(cudnnCreate(&created), device.index);
  const cudnnStatus_t bound = cudnnSetStream(created, stream(device));
  if (bound != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(created);
    throw_cudnn_error(bound, "cudnnSetStream", device.index);
  }
  handle = created;
  return handle;
}

cublasLtHandle_t cublaslt_handle(Device device) {
  check_device(device);
  cublasLtHandle_t& handle = thread_handles().cublaslt[size_t(device.index)];
  if (handle != nullptr) return handle;
  handle = cublaslt_pool().take(device.index);
  if (handle != nullptr) return handle;
  // cuBLASLt handles hold no stream: each cublasLtMatmul names it.
  DeviceGuard guard(device);
  cublasLtHandle_t created = nullptr;
  STRATA_CUBLAS_CHECK(cublasLtCreate(&created), device.index);
  handle = created;
  return handle;
}

cudnnDataType_t cudnn_data_type(DType dtype, const char* op) {
  switch (dtype) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat64: return CUDNN_DATA_DOUBLE;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default: break;
  }
  throw DTypeError(std::string(op) + ": the CUDA backend takes float16, bfloat16, float32 or "
                   "float64 here, got " + dtype_name(dtype));
}

}  // namespace strata::cuda
