// The training pass of SyncBatchNormalization: batch normalisation with the global batch's
// moments. Each replica sums its slice per channel (sum, sum of squares, count); one all-reduce
// makes the global sums; the normalisation is composed from differentiable ops, and the
// all-reduce's backward all-reduces the gradients of those sums, so every replica's gradient is
// that of the global batch. A stand-in replica (batch_fraction 0) contributes nothing.
#pragma once

#include "framework/ops/nn_ops.h"

namespace strata {

// x: [..., C] channels last; gamma, beta: [C]. Call on a replica of several (ReplicaContext).
BatchNormResult sync_batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         float epsilon);

}  // namespace strata
