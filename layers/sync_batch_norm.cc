#include "layers/sync_batch_norm.h"

#include <vector>

#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/core/error.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/replica_context.h"

namespace strata {
namespace {

// Sum over the replicas, differentiable: the backward pass sums the gradients the same way.
Tensor all_reduce_sum(const Tensor& t) {
  distribute::ReplicaContext* replica = distribute::current_replica_context();
  Tensor out = t.detach().clone();
  replica->all_reduce(out, ReduceOp::kSum);
  autograd::record(out, "sync_batch_norm_all_reduce", {t},
                   [replica](const Tensor& g, const autograd::NeedsGrad&) {
                     Tensor summed = g.clone();
                     replica->all_reduce(summed, ReduceOp::kSum);
                     return std::vector<Tensor>{summed};
                   });
  return out;
}

}  // namespace

BatchNormResult sync_batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         float epsilon) {
  const distribute::ReplicaContext* replica = distribute::current_replica_context();
  if (replica == nullptr) throw StateError("sync_batch_norm_training: not running on a replica");
  const int64_t channels = x.dim(x.rank() - 1);
  std::vector<int> axes;
  for (int a = 0; a + 1 < x.rank(); ++a) axes.push_back(a);
  // A stand-in replica's slice counts for nothing.
  const double weight = replica->batch_fraction() > 0 ? 1.0 : 0.0;
  const double count = weight * double(x.numel() / channels);
  Tensor local = concat({reduce_sum(x, axes) * weight, reduce_sum(square(x), axes) * weight,
                         full(Shape{1}, count, x.dtype(), x.device())},
                        0);
  const Tensor global = all_reduce_sum(local);
  const Tensor n = slice(global, {2 * channels}, {1});
  const Tensor mean = divide(slice(global, {0}, {channels}), n);
  const Tensor mean_sq = divide(slice(global, {channels}, {channels}), n);
  const Tensor variance = subtract(mean_sq, square(mean));
  BatchNormResult r;
  r.y = add(multiply(multiply(subtract(x, mean), rsqrt(add(variance, double(epsilon)))), gamma), beta);
  r.mean = mean.detach();
  r.variance = variance.detach();
  return r;
}

}  // namespace strata
