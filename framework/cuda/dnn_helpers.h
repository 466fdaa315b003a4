// Internal to the CUDA backend: the small own kernels around the cuDNN calls of cudnn_conv.cc,
// cudnn_pool.cc and cudnn_batch_norm.cc, for what cuDNN's legacy API cannot express: Strata's
// HWIO filters and asymmetric ("same") padding, average pooling with such padding, and the
// conversions between the contract's batch-norm statistics and cuDNN's. Every function queues
// its kernel on the device's compute stream and returns without waiting.
// No CUDA headers: included by both the .cc and the .cu files.
#pragma once

#include <array>

#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"

namespace strata::cuda {

// ---- cuda_filter_layout.cu ----
// out = x with its 4 axes permuted: out.dim(i) == x.dim(perm[i]) (any dtype). Turns HWIO filters
// into cuDNN's KRSC / KCRS layouts and back, and NHWC activations into NCHW and back.
void permute4d(const Tensor& x, const std::array<int, 4>& perm, Tensor& out);

// ---- cuda_spatial_pad.cu (NHWC tensors) ----
// out [N, H + top + bottom, W + left + right, C]: x at offset (top, left), `value` elsewhere.
void pad_spatial(const Tensor& x, int top, int left, double value, Tensor& out);
// out = x[:, top : top + out.dim(1), left : left + out.dim(2), :].
void crop_spatial(const Tensor& x, int top, int left, Tensor& out);

// ---- cuda_avg_pool.cu (NHWC) ----
// Average pooling whose divisor counts only the window's elements inside x (TensorFlow's "SAME"),
// for any padding, and its backward pass.
void avg_pool2d_forward(const Tensor& x, const Pool2DParams& p, Tensor& y);
void avg_pool2d_backward(const Tensor& dy, const Pool2DParams& p, Tensor& dx);

// ---- cuda_batch_norm_helpers.cu (per-channel vectors and the fused ReLU) ----
// out = x converted to out's floating dtype (same number of elements).
void convert_floating(const Tensor& x, Tensor& out);
// inv_std = 1 / sqrt(variance + epsilon): what cuDNN's backward pass calls the saved inverse
// variance. inv_std is float32 or float64, variance any floating dtype.
void inverse_std(const Tensor& variance, double epsilon, Tensor& inv_std);
// t *= factor, for a float32 or float64 t.
void scale_in_place(Tensor& t, double factor);
// The fused ReLU of batch_norm_training: y = 0 where y <= 0 (NaN stays, as oneDNN), in place,
// and returns the mask "y was > 0 or NaN" as bits (uint32 words, as a uint8 tensor).
Tensor relu_in_place_with_mask(Tensor& y);
// Bytes of the mask relu_in_place_with_mask returns for n elements.
int64_t relu_mask_bytes(int64_t n);
// out = mask bit set ? dy : 0 (out may be a fresh tensor of dy's shape and dtype).
void apply_relu_mask(const Tensor& dy, const Tensor& mask, Tensor& out);

}  // namespace strata::cuda
