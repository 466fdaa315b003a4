// DistributedDataset: a dataset whose elements are global batches split over replicas
// (Strategy::experimental_distribute_dataset, distribute_datasets_from_function).
//
//   auto dist = strategy.experimental_distribute_dataset(ds.batch(64));
//   auto it = dist.make_iterator();
//   while (auto batch = it->next()) strategy.run(step_fn, *batch);
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "framework/strategy/distributed_values.h"

namespace strata::distribute {

class DistributedIterator {
 public:
  virtual ~DistributedIterator() = default;
  // The next global batch split over the replicas, or nullopt at the end of the pass.
  virtual std::optional<DistributedBatch> next() = 0;
  // Batches drawn from the source that the steps have not finished with, the batch in flight's
  // included: where the step in flight starts in the source (an elastic job's place). 1 for
  // iterators that draw one batch per step; more when a step draws several, or holds some back.
  virtual int64_t batches_ahead() const { return 1; }
};

class DistributedDataset {
 public:
  using IteratorFactory = std::function<std::unique_ptr<DistributedIterator>()>;
  explicit DistributedDataset(IteratorFactory factory) : factory_(std::move(factory)) {}
  // Starts a pass.
  std::unique_ptr<DistributedIterator> make_iterator() const { return factory_(); }

 private:
  IteratorFactory factory_;
};

}  // namespace strata::distribute
