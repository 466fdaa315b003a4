// Internal to the CUDA backend: cuBLASLt and cuDNN, loaded when the first GPU operation needs
// them (see framework/backend/lazy_library.h), so a CUDA build runs on machines without them and
// a CPU run does not map them. cublaslt_forwarders.cc and cudnn_forwarders.cc define the library
// functions Strata calls, each forwarding to the loaded library; NCCL's are in
// distribute/collectives/nccl/nccl_forwarders.cc. cudart stays linked statically: it opens the
// driver (libcuda) itself, lazily.
#pragma once

#include <string>
#include <vector>

#include "framework/backend/lazy_library.h"

namespace strata::cuda {

LazyLibrary& cublaslt_library();  // libcublasLt.so.<CUDA major>
LazyLibrary& cudnn_library();     // libcudnn.so.<cuDNN major>, which loads its sub-libraries

// Folders where CMake found the CUDA libraries, tried after the loader's own search, as the
// RUNPATH of a binary linked against them was (STRATA_CUDA_LIBRARY_DIRS, colon-separated).
std::vector<std::string> configured_library_dirs();

}  // namespace strata::cuda
