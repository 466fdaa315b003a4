// Activations as differentiable ops over the backend's fused activation kernels (oneDNN eltwise
// on the CPU). Each backward pass is one kernel call: dx = dy * act'(x).
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"

namespace strata {

float default_activation_alpha(Activation act) {
  switch (act) {
    case Activation::kLeakyReLU: return 0.2f;  // keras.activations.leaky_relu(negative_slope=0.2)
    case Activation::kELU: return 1.0f;        // keras.activations.elu(alpha=1.0)
    default: return 0.0f;
  }
}

Tensor activation(const Tensor& x, Activation act, std::optional<float> alpha_arg) {
  ops_detail::require_floating(x, "activation");
  if (act == Activation::kLinear) return x;  // Keras' "linear" is the identity
  const float alpha = alpha_arg.value_or(default_activation_alpha(act));
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).activation_forward(act, x, alpha, y);
  autograd::record(y, "activation", {x},
                   [act, alpha, x = x.alias(), y = y.alias()](
                       const Tensor& dy, const autograd::NeedsGrad&) -> std::vector<Tensor> {
                     Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
                     backend_for(x).activation_backward(act, x, y, dy, alpha, dx);
                     return {dx};
                   });
  return y;
}

Tensor relu(const Tensor& x) { return activation(x, Activation::kReLU); }

Tensor add_relu(const Tensor& a, const Tensor& b) {
  ops_detail::check_defined(a, "add_relu");
  ops_detail::check_defined(b, "add_relu");
  ops_detail::check_same_device(a, b, "add_relu");
  ops_detail::check_same_dtype(a, b, "add_relu");
  ops_detail::require_floating(a, "add_relu");
  Tensor y = Tensor::empty(broadcast_shapes(a.shape(), b.shape(), "add_relu"), a.dtype(),
                           a.device());
  backend_for(a).binary(BinaryOp::kAddReLU, a, b, y);
  autograd::record(y, "add_relu", {a, b},
                   [y = y.alias(), sa = a.shape(), sb = b.shape()](
                       const Tensor& dy, const autograd::NeedsGrad& needs) -> std::vector<Tensor> {
                     // relu'(a + b) is 1 exactly where y > 0, so y stands in for the sum.
                     Tensor ds = Tensor::empty(y.shape(), y.dtype(), y.device());
                     backend_for(y).activation_backward(Activation::kReLU, y, y, dy, 0.0f, ds);
                     return {needs[0] ? sum_to_shape(ds, sa) : Tensor(),
                             needs[1] ? sum_to_shape(ds, sb) : Tensor()};
                   });
  return y;
}
Tensor leaky_relu(const Tensor& x, float alpha) {
  return activation(x, Activation::kLeakyReLU, alpha);
}
Tensor elu(const Tensor& x, float alpha) { return activation(x, Activation::kELU, alpha); }
Tensor selu(const Tensor& x) { return activation(x, Activation::kSELU); }
Tensor gelu(const Tensor& x, bool approximate) {
  return activation(x, approximate ? Activation::kGELUTanh : Activation::kGELU);
}
Tensor sigmoid(const Tensor& x) { return activation(x, Activation::kSigmoid); }
Tensor tanh(const Tensor& x) { return activation(x, Activation::kTanh); }
Tensor swish(const Tensor& x) { return activation(x, Activation::kSwish); }
Tensor softplus(const Tensor& x) { return activation(x, Activation::kSoftplus); }
Tensor relu6(const Tensor& x) { return activation(x, Activation::kReLU6); }
Tensor hard_sigmoid(const Tensor& x) { return activation(x, Activation::kHardSigmoid); }
Tensor softsign(const Tensor& x) { return activation(x, Activation::kSoftsign); }
Tensor hard_silu(const Tensor& x) { return activation(x, Activation::kHardSwish); }
Tensor hard_swish(const Tensor& x) { return hard_silu(x); }
Tensor mish(const Tensor& x) { return activation(x, Activation::kMish); }
Tensor log_sigmoid(const Tensor& x) { return activation(x, Activation::kLogSigmoid); }
Tensor hard_tanh(const Tensor& x) { return activation(x, Activation::kHardTanh); }

namespace {
// Keras 3's names (keras.activations), aliases included.
constexpr std::pair<const char*, Activation> kActivationNames[] = {
    {"linear", Activation::kLinear},         {"relu", Activation::kReLU},
    {"leaky_relu", Activation::kLeakyReLU},  {"elu", Activation::kELU},
    {"selu", Activation::kSELU},             {"gelu", Activation::kGELU},
    {"sigmoid", Activation::kSigmoid},       {"tanh", Activation::kTanh},
    {"swish", Activation::kSwish},           {"silu", Activation::kSwish},
    {"softplus", Activation::kSoftplus},     {"relu6", Activation::kReLU6},
    {"hard_sigmoid", Activation::kHardSigmoid}, {"softsign", Activation::kSoftsign},
    {"hard_silu", Activation::kHardSwish},   {"hard_swish", Activation::kHardSwish},
    {"mish", Activation::kMish},             {"log_sigmoid", Activation::kLogSigmoid},
    {"exponential", Activation::kExponential}, {"hard_tanh", Activation::kHardTanh},
};
}  // namespace

std::string activation_names() {
  std::string known;
  for (const auto& [n, act] : kActivationNames) known += known.empty() ? n : std::string(", ") + n;
  return known;
}

Activation activation_from_name(const std::string& name) {
  for (const auto& [n, act] : kActivationNames) {
    if (name == n) return act;
  }
  throw ValueError("activation_from_name: unknown activation '" + name + "'; expected one of " +
                   activation_names());
}

}  // namespace strata
