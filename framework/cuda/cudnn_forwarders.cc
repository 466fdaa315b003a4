// The cuDNN functions the CUDA backend calls, defined here with C linkage so that Strata links
// without libcudnn: each forwards to the library loaded on first use
// (framework/cuda/cuda_libraries.h). libcudnn.so.9 opens its own sub-libraries (cudnn_ops,
// cudnn_cnn, ...) as it needs them. Exactly the functions Strata calls; a new call to one not
// listed here is an undefined-symbol error at link time, and its forwarder goes here.
#include <cudnn.h>

#include "framework/cuda/cuda_libraries.h"

using strata::cuda::cudnn_library;

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnBatchNormalizationBackward(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
    const void* alphaDataDiff, const void* betaDataDiff, const void* alphaParamDiff,
    const void* betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* dy, const cudnnTensorDescriptor_t dxDesc,
    void* dx, const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScale,
    void* dBnScaleResult, void* dBnBiasResult, double epsilon, const void* savedMean,
    const void* savedInvVariance) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnBatchNormalizationBackward, handle, mode, alphaDataDiff,
                    betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, x, dyDesc, dy, dxDesc, dx,
                    dBnScaleBiasDesc, bnScale, dBnScaleResult, dBnBiasResult, epsilon, savedMean,
                    savedInvVariance);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnBatchNormalizationForwardInference(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
    const void* alpha, const void* beta, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t yDesc, void* y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale, const void* bnBias,
    const void* estimatedMean, const void* estimatedVariance, double epsilon) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnBatchNormalizationForwardInference, handle, mode, alpha,
                    beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias,
                    estimatedMean, estimatedVariance, epsilon);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnBatchNormalizationForwardTraining(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
    const void* alpha, const void* beta, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t yDesc, void* y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale, const void* bnBias,
    double exponentialAverageFactor, void* resultRunningMean, void* resultRunningVariance,
    double epsilon, void* resultSaveMean, void* resultSaveInvVariance) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnBatchNormalizationForwardTraining, handle, mode, alpha,
                    beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias,
                    exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon,
                    resultSaveMean, resultSaveInvVariance);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnTensorDescriptor_t dyDesc,
    const void* dy, const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
    void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
    const cudnnTensorDescriptor_t dxDesc, void* dx) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnConvolutionBackwardData, handle, alpha, wDesc, w, dyDesc,
                    dy, convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dxDesc, dx);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc,
    const void* dy, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes,
    const void* beta, const cudnnFilterDescriptor_t dwDesc, void* dw) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnConvolutionBackwardFilter, handle, alpha, xDesc, x,
                    dyDesc, dy, convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dwDesc, dw);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnFilterDescriptor_t wDesc,
    const void* w, const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
    void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
    const cudnnTensorDescriptor_t yDesc, void* y) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnConvolutionForward, handle, alpha, xDesc, x, wDesc, w,
                    convDesc, algo, workSpace, workSpaceSizeInBytes, beta, yDesc, y);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI cudnnCreate(cudnnHandle_t* handle) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnCreate, handle);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnCreateConvolutionDescriptor, convDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* filterDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnCreateFilterDescriptor, filterDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t* poolingDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnCreatePoolingDescriptor, poolingDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnCreateTensorDescriptor, tensorDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc,
    const cudnnTensorDescriptor_t xDesc, cudnnBatchNormMode_t mode) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnDeriveBNTensorDescriptor, derivedBnDesc, xDesc, mode);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI cudnnDestroy(cudnnHandle_t handle) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnDestroy, handle);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnDestroyConvolutionDescriptor, convDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnDestroyFilterDescriptor, filterDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t poolingDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnDestroyPoolingDescriptor, poolingDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnDestroyTensorDescriptor, tensorDesc);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnTensorDescriptor_t dyDesc,
    const void* dy, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t dxDesc, void* dx, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnFindConvolutionBackwardDataAlgorithmEx, handle, wDesc, w,
                    dyDesc, dy, convDesc, dxDesc, dx, requestedAlgoCount, returnedAlgoCount,
                    perfResults, workSpace, workSpaceSizeInBytes);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc,
    const void* y, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t dwDesc, void* dw, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnFindConvolutionBackwardFilterAlgorithmEx, handle, xDesc,
                    x, dyDesc, y, convDesc, dwDesc, dw, requestedAlgoCount, returnedAlgoCount,
                    perfResults, workSpace, workSpaceSizeInBytes);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
    const void* x, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, void* y,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t* perfResults, void* workSpace, size_t workSpaceSizeInBytes) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnFindConvolutionForwardAlgorithmEx, handle, xDesc, x,
                    wDesc, w, convDesc, yDesc, y, requestedAlgoCount, returnedAlgoCount,
                    perfResults, workSpace, workSpaceSizeInBytes);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionBackwardDataAlgorithmMaxCount, handle,
                    count);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t handle,
    const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionBackwardDataAlgorithm_v7, handle,
                    filterDesc, diffDesc, convDesc, gradDesc, requestedAlgoCount, returnedAlgoCount,
                    perfResults);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle,
    const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t* sizeInBytes) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionBackwardDataWorkspaceSize, handle, wDesc,
                    dyDesc, convDesc, dxDesc, algo, sizeInBytes);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionBackwardFilterAlgorithmMaxCount, handle,
                    count);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t srcDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionBackwardFilterAlgorithm_v7, handle, srcDesc,
                    diffDesc, convDesc, gradDesc, requestedAlgoCount, returnedAlgoCount,
                    perfResults);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t* sizeInBytes) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionBackwardFilterWorkspaceSize, handle, xDesc,
                    dyDesc, convDesc, gradDesc, algo, sizeInBytes);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionForwardAlgorithmMaxCount, handle, count);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionForwardAlgorithm_v7, handle, srcDesc,
                    filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount,
                    perfResults);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
    const cudnnFilterDescriptor_t wDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetConvolutionForwardWorkspaceSize, handle, xDesc, wDesc,
                    convDesc, yDesc, algo, sizeInBytes);
}

STRATA_FORWARDER const char* CUDNNWINAPI cudnnGetErrorString(cudnnStatus_t status) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetErrorString, status);
}

STRATA_FORWARDER void CUDNNWINAPI cudnnGetLastErrorString(char* message, size_t max_size) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetLastErrorString, message, max_size);
}

STRATA_FORWARDER size_t CUDNNWINAPI cudnnGetVersion() {
  STRATA_FORWARD_TO(cudnn_library(), cudnnGetVersion);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
    const void* alpha, const cudnnTensorDescriptor_t yDesc, const void* y,
    const cudnnTensorDescriptor_t dyDesc, const void* dy, const cudnnTensorDescriptor_t xDesc,
    const void* x, const void* beta, const cudnnTensorDescriptor_t dxDesc, void* dx) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnPoolingBackward, handle, poolingDesc, alpha, yDesc, y,
                    dyDesc, dy, xDesc, x, beta, dxDesc, dx);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
    const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
    const cudnnTensorDescriptor_t yDesc, void* y) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnPoolingForward, handle, poolingDesc, alpha, xDesc, x,
                    beta, yDesc, y);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w, int u,
    int v, int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
    cudnnDataType_t computeType) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetConvolution2dDescriptor, convDesc, pad_h, pad_w, u, v,
                    dilation_h, dilation_w, mode, computeType);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetConvolutionGroupCount, convDesc, groupCount);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetConvolutionMathType, convDesc, mathType);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
    cudnnTensorFormat_t format, int k, int c, int h, int w) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetFilter4dDescriptor, filterDesc, dataType, format, k, c,
                    h, w);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t poolingDesc, cudnnPoolingMode_t mode,
    cudnnNanPropagation_t maxpoolingNanOpt, int windowHeight, int windowWidth, int verticalPadding,
    int horizontalPadding, int verticalStride, int horizontalStride) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetPooling2dDescriptor, poolingDesc, mode,
                    maxpoolingNanOpt, windowHeight, windowWidth, verticalPadding, horizontalPadding,
                    verticalStride, horizontalStride);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetStream, handle, streamId);
}

STRATA_FORWARDER cudnnStatus_t CUDNNWINAPI
cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
    cudnnDataType_t dataType, int n, int c, int h, int w) {
  STRATA_FORWARD_TO(cudnn_library(), cudnnSetTensor4dDescriptor, tensorDesc, format, dataType, n, c,
                    h, w);
}
