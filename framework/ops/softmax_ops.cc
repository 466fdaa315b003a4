// softmax and log_softmax: stable kernels (max subtracted) with a fused backward.
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"

namespace strata {
namespace {

Tensor softmax_impl(const Tensor& x, int axis, bool log, const char* name) {
  ops_detail::check_defined(x, name);
  ops_detail::require_floating(x, name);
  const int a = normalize_axis(axis, x.rank(), name);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).softmax(x, a, log, y);
  if (autograd::any_requires_grad({x})) {
    // The backward needs only the output; alias it so the node does not own its own output.
    autograd::record(y, name, {x}, [ys = y.alias(), a, log](const Tensor& g, const autograd::NeedsGrad&) {
      Tensor dx = Tensor::empty(ys.shape(), ys.dtype(), ys.device());
      backend_for(ys).softmax_backward(ys, g, a, log, dx);
      return std::vector<Tensor>{dx};
    });
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, int axis) { return softmax_impl(x, axis, false, "softmax"); }
Tensor log_softmax(const Tensor& x, int axis) { return softmax_impl(x, axis, true, "log_softmax"); }

}  // namespace strata
