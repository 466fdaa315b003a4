// What the rest of Strata (strata-info, bug reports) may ask about the CPU backend, without
// oneDNN headers: implemented in framework/cpu/cpu_runtime.cc. The GPU side is gpu_runtime.h.
#pragma once

#include <string>

namespace strata::cpu {

// The oneDNN library the CPU backend's convolutions, matmuls, pooling and batch norm run on, as
// loaded at run time: "3.5.3" or, when the build recorded its commit, "3.5.3 (git 66f0cb9)".
std::string onednn_version();

}  // namespace strata::cpu
