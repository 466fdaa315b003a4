// Gradients for data-parallel training: on a replica of several, the backward pass hands each
// finished gradient to a bucket; a full bucket is flattened and its all-reduce (sum over
// replicas) starts at once, so communication overlaps the rest of the backward pass; or each
// replica gets only its range of every bucket's sum (reduce-scatter), to update and share
// (GradientReduction). As PyTorch DDP, the buckets follow the order the gradients finish in
// (the reverse of the layers'), the first holds at most 1 MiB, so that the first all-reduce
// starts early in the backward pass of any model, and the others about 25 MB. With one replica
// (or none) this is just tape.gradient_with_slices().
#pragma once

#include <cstddef>
#include <vector>

#include "framework/autograd/grad_mode.h"
#include "framework/variables/variable.h"

namespace strata::distribute {

inline constexpr size_t kDefaultGradientBucketBytes = size_t(25) << 20;
// The first bucket's limit (DDP's _DEFAULT_FIRST_BUCKET_BYTES); a smaller bucket size wins.
inline constexpr size_t kFirstGradientBucketBytes = size_t(1) << 20;

// Whether the step's state that the strategy exchanges after the step (metric sums, moving
// statistics, random draws: Strategy::fold_step_state) is final when the gradients are
// computed. kFinal lets the strategy send it with the last bucket: one collective per step.
// Model::train_step updates its metrics before the backward pass and says kFinal; a custom
// step that may change such state after computing its gradients keeps kMayChange.
enum class StepState { kMayChange, kFinal };

// How a replica's dense gradients are combined with the other replicas'.
enum class GradientReduction {
  // Every replica gets every gradient summed over the replicas (all-reduce).
  kAllReduce,
  // When every variable accepts gradient shards (Variable::accepts_gradient_shards: mirrored
  // variables whose replicas all share this process's memory), each replica gets only its range
  // of each summed gradient (reduce-scatter), updates that range of every variable and writes it
  // into the other copies (the all-gather): each replica reads and writes a 1/n share of the
  // parameters and optimizer slots instead of all of them. Otherwise as kAllReduce.
  kShardWhereAccepted,
};

// d(loss)/d(vars), summed over the replicas in sync when called on one of several replicas.
// A table read through gather (Embedding) gets IndexedSlices of the rows the step touched (on
// any replica), the others dense gradients (GradientTape::gradient_with_slices), or shards
// (Gradient::shard) with kShardWhereAccepted. Pass the result to Optimizer::apply_gradients
// with skip_gradients_aggregation = true.
//
// kAllReduce starts each bucket's all-reduce during the backward pass; shards are
// reduce-scattered after it (a gradient of at least kOwnShardBucketBytes is reduce-scattered
// where it lies, without being copied into a bucket).
std::vector<Gradient> compute_reduced_gradients(
    GradientTape& tape, const Tensor& loss, const std::vector<VariablePtr>& vars,
    size_t bucket_bytes = kDefaultGradientBucketBytes,
    GradientReduction reduction = GradientReduction::kAllReduce,
    StepState state = StepState::kMayChange);

inline constexpr size_t kOwnShardBucketBytes = size_t(1) << 20;

}  // namespace strata::distribute
