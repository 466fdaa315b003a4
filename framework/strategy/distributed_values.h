// Values that live on every replica: what strategy.run() returns and what a distributed dataset
// yields (TensorFlow's PerReplica and the elements of a DistributedDataset).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "framework/core/tensor.h"
#include "framework/data/dataset.h"

namespace strata::distribute {

// One value per replica, in replica order. strategy.reduce() combines them.
struct PerReplica {
  std::vector<Tensor> values;
};

// A global batch split over the replicas: replica r computes on per_replica[r].
struct DistributedBatch {
  std::vector<data::Element> per_replica;
  // Replica r's share of the global batch (its samples / global_size). 0 marks a replica that
  // got no samples of a final partial batch; per_replica[r] is then a stand-in sample to keep
  // the replicas' collectives in step, and what it computes must count for nothing.
  std::vector<double> fractions;
  std::vector<int64_t> sizes;  // real samples per replica (0 for a stand-in)
  int64_t global_size = 0;
  // An elastic strategy's batches keep the global batch they were split from and the worker
  // membership they were split for: when the workers change, the step splits it again.
  std::shared_ptr<const data::Element> global;
  uint64_t split_for = 0;
  // An elastic strategy keeping the per-replica batch (one source batch per replica): the
  // step's rows drawn again for the replicas in sync now (giving batches back to the iterator,
  // or drawing more), so that a step run by other workers than it was drawn for still takes one
  // batch per replica. Null otherwise: the global batch is split again as it is.
  std::function<std::shared_ptr<const data::Element>()> redraw;
};

// What distribute_datasets_from_function() hands the user's function (tf.distribute.InputContext).
struct InputContext {
  int num_input_pipelines = 1;
  int input_pipeline_id = 0;
  int num_replicas_in_sync = 1;
  // The batch each replica gets from a global batch; ValueError unless it divides evenly.
  int64_t get_per_replica_batch_size(int64_t global_batch_size) const;
};

}  // namespace strata::distribute
