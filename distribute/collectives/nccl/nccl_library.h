// Internal to distribute/collectives/nccl/: NCCL, loaded when the first NCCL communicator is made
// (see framework/backend/lazy_library.h), so a CUDA build of Strata runs without libnccl where no
// GPUs all-reduce. nccl_forwarders.cc defines it and the NCCL functions Strata calls.
#pragma once

#include "framework/backend/lazy_library.h"

namespace strata::distribute {

LazyLibrary& nccl_library();  // libnccl.so.<NCCL major>

}  // namespace strata::distribute
