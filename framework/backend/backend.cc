#include "framework/backend/backend.h"

#include <array>
#include <mutex>

#include "framework/cpu/cpu_backend.h"
#ifdef STRATA_WITH_CUDA
#include "framework/cuda/cuda_backend.h"
#endif

namespace strata {

void Backend::unimplemented(const char* op) const {
  throw DeviceError(std::string(op) + ": not implemented on the " + name() + " backend");
}

// Default implementations: a backend overrides what it supports.
void Backend::fill(Tensor&, double) { unimplemented("fill"); }
void Backend::arange(Tensor&, double, double) { unimplemented("arange"); }
void Backend::random(Tensor&, RandomDistribution, uint64_t, uint64_t, double, double) {
  unimplemented("random");
}
void Backend::dropout_mask(Tensor&, float, uint64_t, uint64_t) { unimplemented("dropout"); }
void Backend::cast(const Tensor&, Tensor&) { unimplemented("cast"); }
void Backend::unary(UnaryOp, const Tensor&, Tensor&) { unimplemented("unary"); }
void Backend::binary(BinaryOp, const Tensor&, const Tensor&, Tensor&) { unimplemented("binary"); }
void Backend::where(const Tensor&, const Tensor&, const Tensor&, Tensor&) { unimplemented("where"); }
void Backend::clip(const Tensor&, double, double, Tensor&) { unimplemented("clip_by_value"); }
void Backend::sum_to(const Tensor&, Tensor&) { unimplemented("sum_to"); }
void Backend::reduce(ReduceOp, const Tensor&, const std::vector<int>&, Tensor&) {
  unimplemented("reduce");
}
void Backend::arg_reduce(ArgReduceOp, const Tensor&, int, Tensor&) { unimplemented("argmax"); }
void Backend::softmax(const Tensor&, int, bool, Tensor&) { unimplemented("softmax"); }
void Backend::softmax_backward(const Tensor&, const Tensor&, int, bool, Tensor&) {
  unimplemented("softmax_backward");
}
void Backend::transpose(const Tensor&, const std::vector<int>&, Tensor&) {
  unimplemented("transpose");
}
void Backend::concat(const std::vector<Tensor>&, int, Tensor&) { unimplemented("concat"); }
void Backend::slice(const Tensor&, const std::vector<int64_t>&, Tensor&) { unimplemented("slice"); }
void Backend::slice_assign(const Tensor&, const std::vector<int64_t>&, Tensor&) {
  unimplemented("slice_assign");
}
void Backend::pad(const Tensor&, const std::vector<int64_t>&, double, Tensor&) {
  unimplemented("pad");
}
void Backend::gather(const Tensor&, const Tensor&, int, Tensor&) { unimplemented("gather"); }
void Backend::scatter_add(const Tensor&, const Tensor&, int, Tensor&) {
  unimplemented("scatter_add");
}
void Backend::scatter_update(const Tensor&, const Tensor&, int, Tensor&) {
  unimplemented("scatter_update");
}
void Backend::one_hot(const Tensor&, int64_t, double, double, Tensor&) { unimplemented("one_hot"); }
void Backend::matmul(const Tensor&, const Tensor&, bool, bool, Tensor&) { unimplemented("matmul"); }
void Backend::conv2d_forward(const Tensor&, const Tensor&, const Conv2DParams&, Tensor&) {
  unimplemented("conv2d");
}
void Backend::conv2d_backward_data(const Tensor&, const Tensor&, const Conv2DParams&, Tensor&) {
  unimplemented("conv2d_backward_data");
}
void Backend::conv2d_backward_filter(const Tensor&, const Tensor&, const Conv2DParams&, Tensor&) {
  unimplemented("conv2d_backward_filter");
}
Tensor Backend::pool2d_forward(PoolKind, const Tensor&, const Pool2DParams&, Tensor&) {
  unimplemented("pool2d");
}
void Backend::pool2d_backward(PoolKind, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                              const Pool2DParams&, Tensor&) {
  unimplemented("pool2d_backward");
}
Tensor Backend::batch_norm_training(const Tensor&, const Tensor&, const Tensor&, float, bool,
                                    Tensor&, Tensor&, Tensor&) {
  unimplemented("batch_norm");
}
void Backend::batch_norm_inference(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                   const Tensor&, float, Tensor&) {
  unimplemented("batch_norm");
}
void Backend::batch_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, float, const Tensor&, Tensor&, Tensor&, Tensor&) {
  unimplemented("batch_norm_backward");
}
void Backend::activation_forward(Activation, const Tensor&, float, Tensor&) {
  unimplemented("activation");
}
void Backend::activation_backward(Activation, const Tensor&, const Tensor&, const Tensor&, float,
                                  Tensor&) {
  unimplemented("activation_backward");
}
void Backend::optimizer_update(const OptimizerUpdate&, Tensor&, const Tensor&,
                               std::vector<Tensor>&) {
  unimplemented("optimizer_update");
}
void Backend::optimizer_update_many(const OptimizerUpdate& u, const std::vector<Tensor*>& vars,
                                    const std::vector<Tensor>& grads,
                                    const std::vector<std::vector<Tensor>*>& slots) {
  STRATA_CHECK(grads.size() == vars.size() && slots.size() == vars.size());
  for (size_t i = 0; i < vars.size(); ++i) optimizer_update(u, *vars[i], grads[i], *slots[i]);
}

namespace {

std::array<Backend*, kNumDeviceTypes>& registry() {
  static std::array<Backend*, kNumDeviceTypes> backends = [] {
    std::array<Backend*, kNumDeviceTypes> b{};
    b[size_t(DeviceType::kCPU)] = &cpu_backend();
#ifdef STRATA_WITH_CUDA
    // Always installed in CUDA builds: a missing GPU is reported per device (cuda_context.h).
    b[size_t(DeviceType::kCUDA)] = &cuda_backend();
#endif
    return b;
  }();
  return backends;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void register_backend(DeviceType type, Backend* backend) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[size_t(type)] = backend;
}

bool has_backend(DeviceType type) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry()[size_t(type)] != nullptr;
}

Backend& backend_for(Device device) {
  Backend* b = registry()[size_t(device.type)];
  if (b == nullptr) {
    throw DeviceError("device " + device.to_string() +
                      ": this build of Strata has no CUDA backend (configure found no nvcc, cuBLAS or cuDNN; "
                      "see the cmake output); use /cpu:0");
  }
  return *b;
}

Backend& backend_for(const Tensor& t) { return backend_for(t.device()); }

}  // namespace strata
