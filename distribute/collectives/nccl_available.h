// Whether this build of Strata can all-reduce on GPUs with NCCL (torch.cuda.nccl.is_available /
// version): public, for programs that report their setup (strata-info) or choose cross-device
// ops. How NCCL groups are made is internal (nccl_support.h).
#pragma once

#include <string>

namespace strata::distribute {

// Whether this build has NCCL, and its version ("2.28.3"; empty without NCCL).
bool nccl_available();
std::string nccl_version();

}  // namespace strata::distribute
