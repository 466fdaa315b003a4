// gpu_runtime.h for builds without the CUDA backend: no GPUs.
#ifndef STRATA_WITH_CUDA
#include "framework/backend/gpu_runtime.h"

#include "framework/core/error.h"

namespace strata::gpu {

bool built_with_cuda() { return false; }
int device_count() { return 0; }
DeviceProperties properties(int index) {
  throw DeviceError("/gpu:" + std::to_string(index) +
                    ": this build of Strata has no CUDA backend (configure found no nvcc, "
                    "cuBLAS or cuDNN; see the cmake output)");
}
Versions versions() { return {}; }
void synchronize(Device) {}

}  // namespace strata::gpu
#endif
