// The cuBLASLt functions the CUDA backend calls, defined here with C linkage so that Strata
// links without libcublasLt: each forwards to the library loaded on first use
// (framework/cuda/cuda_libraries.h). Exactly the functions Strata calls; a new call to one not
// listed here is an undefined-symbol error at link time, and its forwarder goes here.
#include <cublasLt.h>

#include "framework/cuda/cuda_libraries.h"

using strata::cuda::cublaslt_library;

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* lightHandle) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtCreate, lightHandle);
}

STRATA_FORWARDER const char* CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t status) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtGetStatusName, status);
}

STRATA_FORWARDER const char* CUBLASWINAPI cublasLtGetStatusString(cublasStatus_t status) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtGetStatusString, status);
}

STRATA_FORWARDER size_t CUBLASWINAPI cublasLtGetVersion() {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtGetVersion);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmul, lightHandle, computeDesc, alpha, A, Adesc,
                    B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes,
                    stream);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
    cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulAlgoGetHeuristic, lightHandle, operationDesc,
                    Adesc, Bdesc, Cdesc, Ddesc, preference, requestedAlgoCount,
                    heuristicResultsArray, returnAlgoCount);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc, cublasComputeType_t computeType,
    cudaDataType_t scaleType) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulDescCreate, matmulDesc, computeType,
                    scaleType);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulDescDestroy, matmulDesc);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
    const void* buf, size_t sizeInBytes) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulDescSetAttribute, matmulDesc, attr, buf,
                    sizeInBytes);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulPreferenceCreate, pref);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulPreferenceDestroy, pref);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
    cublasLtMatmulPreferenceAttributes_t attr, const void* buf, size_t sizeInBytes) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatmulPreferenceSetAttribute, pref, attr, buf,
                    sizeInBytes);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type, uint64_t rows,
    uint64_t cols, int64_t ld) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatrixLayoutCreate, matLayout, type, rows, cols,
                    ld);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatrixLayoutDestroy, matLayout);
}

STRATA_FORWARDER cublasStatus_t CUBLASWINAPI
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
    cublasLtMatrixLayoutAttribute_t attr, const void* buf, size_t sizeInBytes) {
  STRATA_FORWARD_TO(cublaslt_library(), cublasLtMatrixLayoutSetAttribute, matLayout, attr, buf,
                    sizeInBytes);
}
