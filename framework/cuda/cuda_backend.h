// The CUDA backend: cuDNN for convolution, pooling and batch norm (cudnn_*.cc),
// cuBLASLt for matmul, own kernels for everything else (cuda_*.cu). One file per kernel family;
// this class only lists them. Every kernel is queued on the device's compute stream
// (cuda_context.h) and returns without waiting for the GPU: only copies to the host synchronise.
// Internal: built only with STRATA_WITH_CUDA, and no CUDA header leaks through this one.
#pragma once

#include "framework/backend/backend.h"

namespace strata {

class CudaBackend final : public Backend {
 public:
  DeviceType device_type() const override { return DeviceType::kCUDA; }
  const char* name() const override { return "CUDA"; }

  // cuda_memory.cc: the device's caching allocator; copies through pinned staging buffers.
  void* allocate(size_t nbytes, Device device) override;
  void deallocate(void* ptr, size_t nbytes, Device device) override;
  void copy_bytes(const void* src, Device src_device, void* dst, Device dst_device,
                  size_t nbytes) override;

  // cuda_creation.cu
  void fill(Tensor& out, double value) override;
  void arange(Tensor& out, double start, double step) override;
  void random(Tensor& out, RandomDistribution dist, uint64_t seed, uint64_t offset, double a,
              double b) override;
  void dropout_mask(Tensor& mask, float rate, uint64_t seed, uint64_t offset) override;

  // cuda_elementwise.cu (cast, unary, clip), cuda_binary.cu (binary, where), cuda_sum_to.cu
  void cast(const Tensor& x, Tensor& out) override;
  void unary(UnaryOp op, const Tensor& x, Tensor& out) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override;
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) override;
  void clip(const Tensor& x, double lo, double hi, Tensor& out) override;
  void sum_to(const Tensor& x, Tensor& out) override;

  // cuda_reduce.cu (reductions) and cuda_softmax.cu
  void reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, Tensor& out) override;
  void arg_reduce(ArgReduceOp op, const Tensor& x, int axis, Tensor& out) override;
  void softmax(const Tensor& x, int axis, bool log, Tensor& out) override;
  void softmax_backward(const Tensor& y, const Tensor& dy, int axis, bool log,
                        Tensor& dx) override;

  // cuda_movement.cu
  void transpose(const Tensor& x, const std::vector<int>& perm, Tensor& out) override;
  void concat(const std::vector<Tensor>& xs, int axis, Tensor& out) override;
  void slice(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out) override;
  void slice_assign(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out) override;
  void pad(const Tensor& x, const std::vector<int64_t>& pad_before, double value,
           Tensor& out) override;
  void gather(const Tensor& params, const Tensor& indices, int axis, Tensor& out) override;
  void scatter_add(const Tensor& updates, const Tensor& indices, int axis, Tensor& out) override;
  void scatter_update(const Tensor& updates, const Tensor& indices, int axis,
                      Tensor& out) override;
  void one_hot(const Tensor& indices, int64_t depth, double on, double off, Tensor& out) override;

  // cublaslt_matmul.cc
  void matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              Tensor& out) override;
  // cudnn_conv.cc
  void conv2d_forward(const Tensor& x, const Tensor& w, const Conv2DParams& p, Tensor& y) override;
  void conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                            Tensor& dx) override;
  void conv2d_backward_filter(const Tensor& x, const Tensor& dy, const Conv2DParams& p,
                              Tensor& dw) override;
  // cudnn_pool.cc
  Tensor pool2d_forward(PoolKind kind, const Tensor& x, const Pool2DParams& p, Tensor& y) override;
  void pool2d_backward(PoolKind kind, const Tensor& x, const Tensor& y, const Tensor& dy,
                       const Tensor& workspace, const Pool2DParams& p, Tensor& dx) override;
  // cudnn_batch_norm.cc
  Tensor batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                             float epsilon, bool fuse_relu, Tensor& y, Tensor& mean,
                             Tensor& variance) override;
  void batch_norm_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                            const Tensor& mean, const Tensor& variance, float epsilon,
                            Tensor& y) override;
  void batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                           const Tensor& mean, const Tensor& variance, float epsilon,
                           const Tensor& relu_workspace, Tensor& dx, Tensor& dgamma,
                           Tensor& dbeta) override;
  // cuda_activation.cu (own kernels: cuDNN 9 deprecates its activation API)
  void activation_forward(Activation act, const Tensor& x, float alpha, Tensor& y) override;
  void activation_backward(Activation act, const Tensor& x, const Tensor& y, const Tensor& dy,
                           float alpha, Tensor& dx) override;

  // cuda_optimizer.cu
  void optimizer_update(const OptimizerUpdate& u, Tensor& var, const Tensor& grad,
                        std::vector<Tensor>& slots) override;
  void optimizer_update_many(const OptimizerUpdate& u, const std::vector<Tensor*>& vars,
                             const std::vector<Tensor>& grads,
                             const std::vector<std::vector<Tensor>*>& slots) override;
};

CudaBackend& cuda_backend();

}  // namespace strata
