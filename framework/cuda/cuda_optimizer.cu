// Fused optimizer updates on the GPU: each variable's value and slots are read and written once,
// by one kernel, with the CPU kernel's rules and scalars (framework/kernels_math/
// optimizer_rules.h, one copy for both backends). Like the CPU kernel, float32 only.
//
// optimizer_update_many updates a list of variables that share one update's hyper-parameters
// with multi-tensor launches, as PyTorch's multi_tensor_apply does: a table of up to
// kMaxTensors variables' pointers and sizes travels in the kernel's arguments, the variables are
// cut into chunks of kChunk elements, and each block of the launch updates one chunk (the table
// says which). A model's hundred small weights then cost a couple of launches, not a hundred.
#include <string>
#include <type_traits>
#include <vector>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"
#include "framework/kernels_math/optimizer_rules.h"

namespace strata {
namespace {

using Scalars = kernels_math::OptimizerScalars;

// Which loop runs: the kind with its options folded in, so no loop carries a per-element branch.
enum class Rule : uint8_t {
  kSGD, kSGDMomentum, kSGDNesterov, kAdam, kAdamAmsgrad,
  kRMSprop, kRMSpropCentered, kRMSpropMomentum, kRMSpropCenteredMomentum, kAdagrad,
};

// One variable's memory. The slots in the rule's order: SGD [momentum]; Adam [m, v, vhat];
// RMSprop [rms, mg, momentum] where the absent ones are null; Adagrad [accumulator].
struct VarPointers {
  float* w;
  const float* g;
  float* s[3];
};

// Updates element i of one variable and its slots with the shared rule. Slots the rule does not
// use are neither read nor written (their pointers may be null).
template <Rule R>
__device__ __forceinline__ void update_element(const Scalars& c, const VarPointers& p, int64_t i) {
  namespace km = kernels_math;
  const float w = p.w[i], g = p.g[i];
  if constexpr (R == Rule::kSGD) {
    p.w[i] = km::sgd_rule(w, g, c);
  } else if constexpr (R == Rule::kSGDMomentum || R == Rule::kSGDNesterov) {
    float m = p.s[0][i];
    p.w[i] = km::sgd_momentum_rule<R == Rule::kSGDNesterov>(w, g, m, c);
    p.s[0][i] = m;
  } else if constexpr (R == Rule::kAdam || R == Rule::kAdamAmsgrad) {
    constexpr bool kAmsgrad = R == Rule::kAdamAmsgrad;
    float m = p.s[0][i], v = p.s[1][i], vhat = 0.0f;
    if constexpr (kAmsgrad) vhat = p.s[2][i];
    p.w[i] = km::adam_rule<kAmsgrad>(w, g, m, v, vhat, c);
    p.s[0][i] = m;
    p.s[1][i] = v;
    if constexpr (kAmsgrad) p.s[2][i] = vhat;
  } else if constexpr (R == Rule::kAdagrad) {
    float acc = p.s[0][i];
    p.w[i] = km::adagrad_rule(w, g, acc, c);
    p.s[0][i] = acc;
  } else {  // the four RMSprop rules
    constexpr bool kCentered = R == Rule::kRMSpropCentered || R == Rule::kRMSpropCenteredMomentum;
    constexpr bool kMomentum = R == Rule::kRMSpropMomentum || R == Rule::kRMSpropCenteredMomentum;
    float rms = p.s[0][i], mg = 0.0f, mom = 0.0f;
    if constexpr (kCentered) mg = p.s[1][i];
    if constexpr (kMomentum) mom = p.s[2][i];
    p.w[i] = km::rmsprop_rule<kCentered, kMomentum>(w, g, rms, mg, mom, c);
    p.s[0][i] = rms;
    if constexpr (kCentered) p.s[1][i] = mg;
    if constexpr (kMomentum) p.s[2][i] = mom;
  }
}

constexpr int kThreads = 512;
constexpr int kMaxTensors = 36;     // variables per multi-tensor launch
constexpr int kMaxBlocks = 320;     // chunks per multi-tensor launch
constexpr int64_t kChunk = 65536;   // elements per block: 128 per thread

// Everything a multi-tensor launch needs, passed by value as the kernel's argument.
struct TensorTable {
  VarPointers vars[kMaxTensors];
  int64_t numel[kMaxTensors];
  int32_t block_chunk[kMaxBlocks];     // the chunk of its variable block b updates
  uint8_t block_tensor[kMaxBlocks];    // the variable (index into vars) block b updates
};
static_assert(kMaxTensors <= 256, "block_tensor is a uint8_t index");
// The classic limit on a kernel's arguments, which every GPU and driver accepts.
static_assert(sizeof(TensorTable) + sizeof(Scalars) <= 4096, "kernel arguments over 4 KiB");

template <Rule R>
__global__ void update_kernel(Scalars c, VarPointers p, int64_t n) {
  STRATA_GRID_STRIDE_LOOP(i, n) update_element<R>(c, p, i);
}

template <Rule R>
__global__ void update_many_kernel(Scalars c, TensorTable table) {
  const int t = table.block_tensor[blockIdx.x];
  const int64_t start = int64_t(table.block_chunk[blockIdx.x]) * kChunk;
  const int64_t n = table.numel[t];
  const int64_t end = start + kChunk < n ? start + kChunk : n;
  const VarPointers p = table.vars[t];
  for (int64_t i = start + threadIdx.x; i < end; i += blockDim.x) {
    update_element<R>(c, p, i);
  }
}

// Calls fn(std::integral_constant<Rule, R>) with the rule as a compile-time constant.
template <typename Fn>
void with_rule(Rule rule, Fn&& fn) {
  switch (rule) {
    case Rule::kSGD: return fn(std::integral_constant<Rule, Rule::kSGD>{});
    case Rule::kSGDMomentum: return fn(std::integral_constant<Rule, Rule::kSGDMomentum>{});
    case Rule::kSGDNesterov: return fn(std::integral_constant<Rule, Rule::kSGDNesterov>{});
    case Rule::kAdam: return fn(std::integral_constant<Rule, Rule::kAdam>{});
    case Rule::kAdamAmsgrad: return fn(std::integral_constant<Rule, Rule::kAdamAmsgrad>{});
    case Rule::kRMSprop: return fn(std::integral_constant<Rule, Rule::kRMSprop>{});
    case Rule::kRMSpropCentered: return fn(std::integral_constant<Rule, Rule::kRMSpropCentered>{});
    case Rule::kRMSpropMomentum: return fn(std::integral_constant<Rule, Rule::kRMSpropMomentum>{});
    case Rule::kRMSpropCenteredMomentum:
      return fn(std::integral_constant<Rule, Rule::kRMSpropCenteredMomentum>{});
    case Rule::kAdagrad: return fn(std::integral_constant<Rule, Rule::kAdagrad>{});
  }
}

Rule rule_of(const OptimizerUpdate& u) {
  switch (u.kind) {
    case OptimizerKind::kSGD:
      if (!(u.momentum > 0)) return Rule::kSGD;
      return u.nesterov ? Rule::kSGDNesterov : Rule::kSGDMomentum;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: return u.amsgrad ? Rule::kAdamAmsgrad : Rule::kAdam;
    case OptimizerKind::kRMSprop:
      if (u.centered) return u.momentum > 0 ? Rule::kRMSpropCenteredMomentum : Rule::kRMSpropCentered;
      return u.momentum > 0 ? Rule::kRMSpropMomentum : Rule::kRMSprop;
    case OptimizerKind::kAdagrad: return Rule::kAdagrad;
  }
  return Rule::kSGD;
}

void check_float32(const char* what, const Tensor& t) {
  if (t.dtype() != DType::kFloat32) {
    throw DTypeError(std::string("optimizer_update: the CUDA kernel supports float32 only; ") +
                     what + " has dtype " + dtype_name(t.dtype()));
  }
}

// Validates one variable's tensors and returns its pointers in the rule's slot order.
VarPointers pointers_of(const OptimizerUpdate& u, Tensor& var, const Tensor& grad,
                        std::vector<Tensor>& slots) {
  check_float32("the variable", var);
  check_float32("the gradient", grad);
  for (const Tensor& s : slots) check_float32("a slot variable", s);
  STRATA_CHECK(grad.numel() == var.numel());
  STRATA_CHECK(slots.size() == kernels_math::optimizer_slot_count(u));
  STRATA_CHECK(grad.device() == var.device());
  for (const Tensor& s : slots) {
    STRATA_CHECK(s.numel() == var.numel());
    STRATA_CHECK(s.device() == var.device());
  }
  VarPointers p{};
  p.w = cuda::device_ptr<float>(var);
  p.g = cuda::device_ptr<const float>(grad);
  if (u.kind == OptimizerKind::kRMSprop) {
    // [rms] + [mg] when centered + [momentum] when momentum > 0, to the fixed places 0, 1, 2.
    p.s[0] = cuda::device_ptr<float>(slots[0]);
    if (u.centered) p.s[1] = cuda::device_ptr<float>(slots[1]);
    if (u.momentum > 0) p.s[2] = cuda::device_ptr<float>(slots.back());
  } else {
    for (size_t k = 0; k < slots.size(); ++k) p.s[k] = cuda::device_ptr<float>(slots[k]);
  }
  return p;
}

// Fills multi-tensor tables and launches them: every variable is cut into chunks, one block per
// chunk; a launch goes out when the table runs out of variables or blocks (a variable whose
// chunks straddle two launches is carried into the second), or when a variable comes back whose
// earlier update is still in the table (the launches run in order; blocks of one launch do not).
template <Rule R>
void launch_many(const Scalars& c, const std::vector<VarPointers>& vars,
                 const std::vector<int64_t>& sizes, Device device) {
  cudaStream_t stream = cuda::stream(device);
  TensorTable table{};
  int tensors = 0, blocks = 0;
  const auto launch = [&] {
    if (blocks > 0) {
      update_many_kernel<R><<<unsigned(blocks), kThreads, 0, stream>>>(c, table);
      cuda::check_launch("optimizer_update_many", device.index);
    }
    tensors = 0;
    blocks = 0;
  };
  for (size_t v = 0; v < vars.size(); ++v) {
    const int64_t n = sizes[v];
    if (n == 0) continue;
    bool repeated = false;
    for (int t = 0; t < tensors; ++t) repeated = repeated || table.vars[t].w == vars[v].w;
    if (repeated || tensors == kMaxTensors) launch();
    int slot = tensors++;
    table.vars[slot] = vars[v];
    table.numel[slot] = n;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      if (blocks == kMaxBlocks) {
        launch();
        slot = tensors++;  // this variable's remaining chunks: the next table's first entry
        table.vars[slot] = vars[v];
        table.numel[slot] = n;
      }
      table.block_tensor[blocks] = uint8_t(slot);
      table.block_chunk[blocks] = int32_t(chunk);
      ++blocks;
    }
  }
  launch();
}

}  // namespace

void CudaBackend::optimizer_update(const OptimizerUpdate& u, Tensor& var, const Tensor& grad,
                                   std::vector<Tensor>& slots) {
  const VarPointers p = pointers_of(u, var, grad, slots);
  const int64_t n = var.numel();
  if (n == 0) return;
  const Scalars c = kernels_math::optimizer_scalars(u);
  cuda::DeviceGuard guard(var.device());
  cudaStream_t stream = cuda::stream(var.device());
  with_rule(rule_of(u), [&](auto rule) {
    update_kernel<decltype(rule)::value>
        <<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(c, p, n);
  });
  cuda::check_launch("optimizer_update", var.device().index);
}

void CudaBackend::optimizer_update_many(const OptimizerUpdate& u, const std::vector<Tensor*>& vars,
                                        const std::vector<Tensor>& grads,
                                        const std::vector<std::vector<Tensor>*>& slots) {
  STRATA_CHECK(grads.size() == vars.size() && slots.size() == vars.size());
  if (vars.empty()) return;
  const Device device = vars[0]->device();
  std::vector<VarPointers> pointers;
  std::vector<int64_t> sizes;
  pointers.reserve(vars.size());
  sizes.reserve(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    STRATA_CHECK(vars[i]->device() == device);
    pointers.push_back(pointers_of(u, *vars[i], grads[i], *slots[i]));
    sizes.push_back(vars[i]->numel());
  }
  // Chunk indices are int32 in the table: 2^31 chunks of 2^16 elements is far beyond any GPU.
  const Scalars c = kernels_math::optimizer_scalars(u);
  cuda::DeviceGuard guard(device);
  with_rule(rule_of(u), [&](auto rule) {
    launch_many<decltype(rule)::value>(c, pointers, sizes, device);
  });
}

}  // namespace strata
