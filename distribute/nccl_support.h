// NCCL behind the CommunicatorGroup interface, without NCCL headers: implemented in
// distribute/nccl/nccl_group.cc when Strata is built with NCCL, by nccl_unavailable.cc otherwise.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distribute/communicator.h"

namespace strata::distribute {

// Whether this build has NCCL, and its version ("2.28.3"; empty without NCCL).
bool nccl_available();
std::string nccl_version();

// One NCCL communicator per device (ncclCommInitAll), every device a distinct visible GPU:
// ValueError otherwise, or when the build has no NCCL.
std::unique_ptr<CommunicatorGroup> make_nccl_group(const std::vector<Device>& devices);

}  // namespace strata::distribute
