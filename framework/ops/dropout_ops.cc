// Inverted dropout: the mask comes from the counter-based generator, so a given seed (or
// generator state) drops the same elements on any thread count or device.
#include <cmath>
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/core/random.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"

namespace strata {

Tensor dropout(const Tensor& x, float rate, int64_t seed) {
  ops_detail::check_defined(x, "dropout");
  ops_detail::require_floating(x, "dropout");
  if (!(rate >= 0.0f && rate < 1.0f)) {
    throw ValueError("dropout: rate must be in [0, 1), got " + std::to_string(rate));
  }
  if (rate == 0.0f) return x;
  Tensor mask = Tensor::empty(x.shape(), x.dtype(), x.device());
  // An explicit seed gives the same mask on every call; otherwise the global generator hands
  // out fresh counters (as random_uniform and friends).
  const GeneratorState s = seed >= 0 ? GeneratorState{uint64_t(seed), 0}
                                     : reserve_random(uint64_t(x.numel()));
  Backend& backend = backend_for(x);
  backend.dropout_mask(mask, rate, s.seed, s.offset);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend.binary(BinaryOp::kMul, x, mask, y);
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, "dropout", {x}, [mask](const Tensor& g, const autograd::NeedsGrad&) {
      Tensor dx = Tensor::empty(g.shape(), g.dtype(), g.device());
      backend_for(g).binary(BinaryOp::kMul, g, mask, dx);
      return std::vector<Tensor>{dx};
    });
  }
  return y;
}

}  // namespace strata
