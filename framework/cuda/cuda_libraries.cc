#include "framework/cuda/cuda_libraries.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn_version.h>

#include <algorithm>
#include <string>

#ifndef STRATA_CUDA_LIBRARY_DIRS
#define STRATA_CUDA_LIBRARY_DIRS ""
#endif

namespace strata::cuda {
namespace {

std::string version(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string cuda_major() { return std::to_string(CUDART_VERSION / 1000); }  // 13000 -> "13"

}  // namespace

std::vector<std::string> configured_library_dirs() {
  std::vector<std::string> dirs;
  const std::string all = STRATA_CUDA_LIBRARY_DIRS;
  size_t begin = 0;
  while (begin <= all.size()) {
    const size_t end = std::min(all.find(':', begin), all.size());
    if (end > begin) dirs.push_back(all.substr(begin, end - begin));
    begin = end + 1;
  }
  return dirs;
}

// Never destroyed (see LazyLibrary): library calls may come from exit-time destructors.
LazyLibrary& cublaslt_library() {
  static auto* library = new LazyLibrary(
      {"cuBLASLt", "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), configured_library_dirs(),
       version(CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH),
       "matrix multiplications on a GPU",
       "install cuBLAS for CUDA " + cuda_major() +
           " (the CUDA toolkit's libcublas package, or pip's nvidia-cublas)"});
  return *library;
}

LazyLibrary& cudnn_library() {
  static auto* library = new LazyLibrary(
      {"cuDNN", "libcudnn.so." + std::to_string(CUDNN_MAJOR), configured_library_dirs(),
       version(CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL),
       "convolutions, pooling or batch normalization on a GPU",
       "install cuDNN " + std::to_string(CUDNN_MAJOR) + " for CUDA " + cuda_major() +
           " (NVIDIA's cudnn package, or pip's nvidia-cudnn-cu" + cuda_major() + ")"});
  return *library;
}

}  // namespace strata::cuda
