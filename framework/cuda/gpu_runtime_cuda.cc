// gpu_runtime.h in CUDA builds.
#include <cublas_api.h>
#include <cublasLt.h>
#include <cudnn.h>

#include <cstdio>
#include <string>

#include "framework/backend/gpu_runtime.h"
#include "framework/cuda/cuda_context.h"
#include "framework/cuda/cuda_libraries.h"

namespace strata::gpu {
namespace {

std::string cuda_version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count() { return cuda::device_count(); }

DeviceProperties properties(int index) {
  cuda::check_device(Device::gpu(index));
  cudaDeviceProp prop{};
  STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, index), index);
  DeviceProperties p;
  p.index = index;
  p.name = prop.name;
  p.compute_major = prop.major;
  p.compute_minor = prop.minor;
  p.multiprocessors = prop.multiProcessorCount;
  p.total_memory = prop.totalGlobalMem;
  char bus[32];
  std::snprintf(bus, sizeof(bus), "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID,
                prop.pciDeviceID);
  p.pci_bus_id = bus;
  cuda::DeviceGuard guard(index);
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) p.free_memory = free_bytes;
  return p;
}

Versions versions() {
  Versions v;
  v.cuda_runtime = cuda_version_string(CUDART_VERSION);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    v.cuda_driver = cuda_version_string(driver);
  } else {
    cudaGetLastError();
  }
  v.cudnn = std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
            std::to_string(CUDNN_PATCHLEVEL);
  // Asking loads the libraries (only strata-info asks); empty where they cannot be loaded.
  if (cuda::cudnn_library().available()) {
    const size_t loaded = cudnnGetVersion();  // e.g. 91900 for 9.19.0
    v.cudnn_loaded = std::to_string(loaded / 10000) + "." +
                     std::to_string((loaded % 10000) / 100) + "." + std::to_string(loaded % 100);
  }
  if (cuda::cublaslt_library().available()) {
    const size_t lt = cublasLtGetVersion();  // e.g. 130100 for 13.1.0
    v.cublas = std::to_string(lt / 10000) + "." + std::to_string((lt % 10000) / 100) + "." +
               std::to_string(lt % 100);
  }
  return v;
}

void synchronize(Device device) {
  if (device.type == DeviceType::kCUDA) cuda::synchronize(device);
}

}  // namespace strata::gpu
