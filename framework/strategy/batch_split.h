// Splitting a global batch over replicas (what experimental_distribute_dataset and fit do).
#pragma once

#include <memory>
#include <vector>

#include "framework/core/device.h"
#include "framework/strategy/distributed_dataset.h"
#include "framework/strategy/distributed_input.h"
#include "framework/strategy/distributed_values.h"

namespace strata::distribute {

// Splits every tensor of `batch` along axis 0 into `devices.size()` consecutive parts, part r
// copied to devices[r]. A batch of `expected_global` samples (the dataset's batch size, 0 when
// this batch defines it) must divide evenly: ValueError naming both numbers otherwise. A smaller
// (final, partial) batch, or any batch when expected_global < 0 (train_on_batch and the like), is
// spread as evenly as it goes: the first replicas get one sample more, and replicas left without
// samples get a stand-in (fraction 0).
//
// Several workers: the batch is split into num_workers * devices.size() parts in global replica
// order and this worker (context.input_pipeline_id) keeps its own devices.size() consecutive
// parts; every fraction is still a share of the whole global batch.
DistributedBatch split_batch(const data::Element& batch, const std::vector<Device>& devices,
                             int64_t expected_global, const char* who,
                             const InputContext& context = InputContext());

// The iterator Strategy::distribute_input makes by default: each global batch from `source`
// split by split_batch; the first batch fixes the global size unless options give it.
std::unique_ptr<DistributedIterator> make_splitting_iterator(BatchSource source,
                                                             std::vector<Device> devices,
                                                             const InputOptions& options,
                                                             const InputContext& context);

// The per-replica outputs of a split batch put back together in input order (stand-ins dropped).
Tensor concat_replica_outputs(const std::vector<Tensor>& outputs, const DistributedBatch& batch);

}  // namespace strata::distribute
