// NCCL, and the NCCL functions distribute/collectives/nccl/ calls, defined here with C linkage so
// that Strata links without libnccl: each forwards to the library loaded on first use
// (nccl_library.h). Exactly the functions Strata calls; a new call to one not listed here is an
// undefined-symbol error at link time, and its forwarder goes here.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "distribute/collectives/nccl/nccl_library.h"
#include "framework/cuda/cuda_libraries.h"

namespace strata::distribute {

// Never destroyed (see LazyLibrary): communicators may be destroyed during exit.
LazyLibrary& nccl_library() {
  static auto* library = new LazyLibrary(
      {"NCCL", "libnccl.so." + std::to_string(NCCL_MAJOR), cuda::configured_library_dirs(),
       std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
           std::to_string(NCCL_PATCH),
       "all-reduces across GPUs (NcclAllReduce, MirroredStrategy's default on GPUs, and "
       "MultiWorkerMirroredStrategy's across workers' GPUs)",
       "install NCCL " + std::to_string(NCCL_MAJOR) + " for CUDA " +
           std::to_string(CUDART_VERSION / 1000) + " (NVIDIA's libnccl2 package, or pip's "
           "nvidia-nccl-cu" + std::to_string(CUDART_VERSION / 1000) + "), or choose "
           "another all-reduce (cross_device_ops: ReductionToOneDevice or "
           "HierarchicalCopyAllReduce)"});
  return *library;
}

}  // namespace strata::distribute

using strata::distribute::nccl_library;

STRATA_FORWARDER ncclResult_t
ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
    ncclComm_t comm, cudaStream_t stream) {
  STRATA_FORWARD_TO(nccl_library(), ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm,
                    stream);
}

STRATA_FORWARDER ncclResult_t
ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  STRATA_FORWARD_TO(nccl_library(), ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm,
                    stream);
}

STRATA_FORWARDER ncclResult_t
ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
    ncclComm_t comm, cudaStream_t stream) {
  STRATA_FORWARD_TO(nccl_library(), ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm,
                    stream);
}

STRATA_FORWARDER ncclResult_t ncclCommAbort(ncclComm_t comm) {
  STRATA_FORWARD_TO(nccl_library(), ncclCommAbort, comm);
}

STRATA_FORWARDER ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  STRATA_FORWARD_TO(nccl_library(), ncclCommDestroy, comm);
}

STRATA_FORWARDER ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  STRATA_FORWARD_TO(nccl_library(), ncclCommFinalize, comm);
}

STRATA_FORWARDER ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  STRATA_FORWARD_TO(nccl_library(), ncclCommGetAsyncError, comm, asyncError);
}

STRATA_FORWARDER ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                      ncclUniqueId commId, int rank,
                                                      ncclConfig_t* config) {
  STRATA_FORWARD_TO(nccl_library(), ncclCommInitRankConfig, comm, nranks, commId, rank, config);
}

STRATA_FORWARDER const char* ncclGetErrorString(ncclResult_t result) {
  STRATA_FORWARD_TO(nccl_library(), ncclGetErrorString, result);
}

STRATA_FORWARDER const char* ncclGetLastError(ncclComm_t comm) {
  STRATA_FORWARD_TO(nccl_library(), ncclGetLastError, comm);
}

STRATA_FORWARDER ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  STRATA_FORWARD_TO(nccl_library(), ncclGetUniqueId, uniqueId);
}

STRATA_FORWARDER ncclResult_t ncclGroupEnd() { STRATA_FORWARD_TO(nccl_library(), ncclGroupEnd); }

STRATA_FORWARDER ncclResult_t ncclGroupStart() { STRATA_FORWARD_TO(nccl_library(), ncclGroupStart); }

STRATA_FORWARDER ncclResult_t ncclGetVersion(int* version) {
  STRATA_FORWARD_TO(nccl_library(), ncclGetVersion, version);
}

STRATA_FORWARDER ncclResult_t
ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  STRATA_FORWARD_TO(nccl_library(), ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op,
                    comm, stream);
}
