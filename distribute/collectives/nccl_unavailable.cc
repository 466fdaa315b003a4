// nccl_support.h for builds without NCCL.
#ifndef STRATA_WITH_NCCL
#include "distribute/collectives/nccl_support.h"

namespace strata::distribute {

bool nccl_available() { return false; }
std::string nccl_version() { return ""; }

std::unique_ptr<CommunicatorGroup> make_nccl_group(const std::vector<Device>&) {
  throw ValueError("NcclAllReduce: this build of Strata has no NCCL (configure found no CUDA "
                   "backend or no NCCL; see the cmake output); use ReductionToOneDevice or "
                   "HierarchicalCopyAllReduce");
}

std::unique_ptr<CommunicatorGroup> make_cross_process_nccl_group(
    const std::vector<Device>&, KeyValueStore&, int, int, std::chrono::milliseconds,
    const CrossProcessNcclOptions&) {
  throw ValueError("cross-process NCCL (MultiWorkerMirroredStrategy with "
                   "CommunicationImplementation::kNccl): this build of Strata has no NCCL "
                   "(configure found no CUDA backend or no NCCL; see the cmake output); use "
                   "CommunicationImplementation::kRing (Gloo across workers)");
}

}  // namespace strata::distribute
#endif
