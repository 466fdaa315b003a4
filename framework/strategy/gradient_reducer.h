// Gradients for data-parallel training: on a replica of several, the backward pass hands each
// finished gradient to a bucket; a full bucket (about 25 MB, as PyTorch DDP) is flattened and
// its all-reduce (sum over replicas) starts at once, so communication overlaps the rest of the
// backward pass. With one replica (or none) this is just tape.gradient().
#pragma once

#include <cstddef>
#include <vector>

#include "framework/autograd/grad_mode.h"
#include "framework/variables/variable.h"

namespace strata::distribute {

inline constexpr size_t kDefaultGradientBucketBytes = size_t(25) << 20;

// d(loss)/d(vars), summed over the replicas in sync when called on one of several replicas.
// A table read through gather (Embedding) gets IndexedSlices of the rows the step touched (on
// any replica), the others dense gradients (GradientTape::gradient_with_slices). Pass the result
// to Optimizer::apply_gradients with skip_gradients_aggregation = true.
std::vector<Gradient> compute_reduced_gradients(GradientTape& tape, const Tensor& loss,
                                                const std::vector<VariablePtr>& vars,
                                                size_t bucket_bytes = kDefaultGradientBucketBytes);

}  // namespace strata::distribute
