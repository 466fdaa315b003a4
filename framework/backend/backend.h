// The kernel interface every device implements (CPU now, CUDA later). Op front-ends in
// framework/ops validate arguments, infer output shapes, allocate outputs on the inputs' device
// and record autograd; then they call these kernels through backend_for(device). Kernels may
// assume validated, contiguous, row-major inputs and pre-allocated outputs of the right shape and
// dtype. A kernel a backend lacks throws DeviceError naming the op and the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"

namespace strata {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceType device_type() const = 0;
  virtual const char* name() const = 0;

  // ---- memory ----
  virtual void* allocate(size_t nbytes, Device device) = 0;
  virtual void deallocate(void* ptr, size_t nbytes, Device device) = 0;
  // Copies bytes where at least one side is this backend's device.
  virtual void copy_bytes(const void* src, Device src_device, void* dst, Device dst_device,
                          size_t nbytes) = 0;

  // ---- creation ----
  virtual void fill(Tensor& out, double value);
  virtual void arange(Tensor& out, double start, double step);
  // Counter-based (Philox) random numbers: element i depends only on (seed, offset + i), never
  // on the thread count. For uniform, [a, b); for (truncated) normal, mean a and stddev b.
  virtual void random(Tensor& out, RandomDistribution dist, uint64_t seed, uint64_t offset,
                      double a, double b);
  // mask[i] = keep ? 1/(1-rate) : 0 with P(keep) = 1 - rate, out has x's dtype.
  virtual void dropout_mask(Tensor& mask, float rate, uint64_t seed, uint64_t offset);

  // ---- elementwise ----
  virtual void cast(const Tensor& x, Tensor& out);
  virtual void unary(UnaryOp op, const Tensor& x, Tensor& out);
  // NumPy broadcasting of a and b to out's shape. Comparisons/logic write bool.
  virtual void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);
  // out = cond ? a : b, all three broadcast to out's shape.
  virtual void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out);
  virtual void clip(const Tensor& x, double lo, double hi, Tensor& out);
  // Gradient of broadcasting: sums `x` down to out's shape (out's dims are 1 or equal to x's,
  // aligned from the right).
  virtual void sum_to(const Tensor& x, Tensor& out);

  // ---- reductions ----
  // Reduces `axes` (sorted, unique, non-negative) of x; out has x's shape with those dims = 1.
  // Deterministic whatever the thread count.
  virtual void reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, Tensor& out);
  // out (int64) = index of the max/min along `axis`, out shape = x's without that axis.
  virtual void arg_reduce(ArgReduceOp op, const Tensor& x, int axis, Tensor& out);
  // Numerically stable (log-)softmax along `axis`, and its backward given the forward output y.
  virtual void softmax(const Tensor& x, int axis, bool log, Tensor& out);
  virtual void softmax_backward(const Tensor& y, const Tensor& dy, int axis, bool log, Tensor& dx);

  // ---- data movement ----
  virtual void transpose(const Tensor& x, const std::vector<int>& perm, Tensor& out);
  virtual void concat(const std::vector<Tensor>& xs, int axis, Tensor& out);
  // out = x[begin[0]:begin[0]+out.dim(0), begin[1]:..., ...].
  virtual void slice(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out);
  // Writes x into out at offset `begin` (the inverse of slice); out's other elements untouched.
  virtual void slice_assign(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out);
  // Pads with `value`: out.dim(i) = pad_before[i] + x.dim(i) + pad_after[i].
  virtual void pad(const Tensor& x, const std::vector<int64_t>& pad_before, double value,
                   Tensor& out);
  // out = params gathered along `axis` at integer `indices` (already range-checked).
  virtual void gather(const Tensor& params, const Tensor& indices, int axis, Tensor& out);
  // out[..., indices[j], ...] += updates[..., j, ...] along `axis`; out already holds its base.
  virtual void scatter_add(const Tensor& updates, const Tensor& indices, int axis, Tensor& out);
  // out[..., indices[j], ...] = updates[..., j, ...] along `axis`: writes rows in place (a sparse
  // optimizer update's result). The indices are unique and in range.
  virtual void scatter_update(const Tensor& updates, const Tensor& indices, int axis, Tensor& out);
  // out[..., k] = (indices[...] == k) ? on : off. Out-of-range indices give all `off`.
  virtual void one_hot(const Tensor& indices, int64_t depth, double on, double off, Tensor& out);

  // ---- dense linear algebra (oneDNN / cuBLASLt) ----
  // out = op(a) @ op(b), a: [..., M, K] (or [..., K, M] transposed), b: [..., K, N] or [K, N]
  // (shared across the batch). Batch dims of a and b are equal when b is batched.
  virtual void matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                      Tensor& out);

  // ---- convolution and pooling (oneDNN / cuDNN); NHWC data, HWIO filters ----
  virtual void conv2d_forward(const Tensor& x, const Tensor& w, const Conv2DParams& p, Tensor& y);
  virtual void conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                    Tensor& dx);
  virtual void conv2d_backward_filter(const Tensor& x, const Tensor& dy, const Conv2DParams& p,
                                      Tensor& dw);
  // Returns an opaque workspace the backward pass needs (may be undefined).
  virtual Tensor pool2d_forward(PoolKind kind, const Tensor& x, const Pool2DParams& p, Tensor& y);
  virtual void pool2d_backward(PoolKind kind, const Tensor& x, const Tensor& y, const Tensor& dy,
                               const Tensor& workspace, const Pool2DParams& p, Tensor& dx);

  // ---- batch normalisation over all axes but the last (channels-last) ----
  // Training: normalises with batch statistics, writes them to mean / variance (biased). With
  // fuse_relu, y = relu(batch_norm(x)) in the same pass (what cuDNN's BN_ACTIVATION and oneDNN's
  // fuse_norm_relu do) and the returned opaque workspace (the ReLU mask) is what
  // batch_norm_backward needs; without it the returned tensor is undefined.
  virtual Tensor batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     float epsilon, bool fuse_relu, Tensor& y, Tensor& mean,
                                     Tensor& variance);
  virtual void batch_norm_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& y);
  // Backward of batch_norm_training given its saved batch statistics; `relu_workspace` is the
  // fused forward's workspace (dy is then the gradient of the ReLU's output), else undefined.
  virtual void batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                   const Tensor& mean, const Tensor& variance, float epsilon,
                                   const Tensor& relu_workspace, Tensor& dx, Tensor& dgamma,
                                   Tensor& dbeta);

  // ---- activations (oneDNN eltwise / cuDNN) ----
  // alpha: negative slope for leaky_relu, alpha for elu.
  virtual void activation_forward(Activation act, const Tensor& x, float alpha, Tensor& y);
  // dx = dy * act'(x); `y` is the forward output (some backends use it instead of x).
  virtual void activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                   const Tensor& dy, float alpha, Tensor& dx);

  // ---- optimizers: one fused pass over each variable's memory ----
  // slots: SGD [momentum] (empty without momentum); Adam/AdamW [m, v] (+ [vhat] with amsgrad);
  // RMSprop [rms] (+ [mg] when centered, + [momentum] when momentum > 0); Adagrad [accumulator].
  virtual void optimizer_update(const OptimizerUpdate& u, Tensor& var, const Tensor& grad,
                                std::vector<Tensor>& slots);
  // The same update of many variables that share u (one device, one dtype): *vars[i] from
  // grads[i] with slots *slots[i]. The default calls optimizer_update for each in order; a GPU
  // backend covers them all in a few multi-tensor launches instead of one launch per variable.
  // A variable listed twice is updated twice, in list order.
  virtual void optimizer_update_many(const OptimizerUpdate& u, const std::vector<Tensor*>& vars,
                                     const std::vector<Tensor>& grads,
                                     const std::vector<std::vector<Tensor>*>& slots);

 protected:
  [[noreturn]] void unimplemented(const char* op) const;
};

// The backend for a device; throws DeviceError when that device type is not available.
Backend& backend_for(Device device);
Backend& backend_for(const Tensor& t);
// Installs a backend (the CPU one is installed on first use; CUDA's when built with CUDA).
void register_backend(DeviceType type, Backend* backend);
bool has_backend(DeviceType type);

}  // namespace strata
