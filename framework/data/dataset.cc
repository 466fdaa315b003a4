// Dataset's methods: each wraps the current node in a new transformation node (dataset_ops.h).
// Validation lives in the node constructors, so every node checks its own arguments.
#include "framework/data/dataset.h"

#include <string>

#include "framework/data/dataset_ops.h"

namespace strata::data {

ImplPtr checked_input(ImplPtr input, const char* op) {
  if (!input) throw ValueError(std::string(op) + ": the input dataset is null");
  return input;
}

Dataset Dataset::from_tensor_slices(const std::vector<Tensor>& components) {
  return Dataset(std::make_shared<TensorSlicesDataset>(components));
}

Dataset Dataset::from_tensors(const std::vector<Tensor>& components) {
  return Dataset(std::make_shared<TensorsDataset>(components));
}

Dataset Dataset::from_generator(std::function<std::function<std::optional<Element>()>()> make_generator,
                                int64_t cardinality) {
  return Dataset(std::make_shared<GeneratorDataset>(std::move(make_generator), cardinality));
}

Dataset Dataset::shuffle(int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration) const {
  return Dataset(std::make_shared<ShuffleDataset>(impl_, buffer_size, seed, reshuffle_each_iteration));
}

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder) const {
  return Dataset(std::make_shared<BatchDataset>(impl_, batch_size, drop_remainder));
}

Dataset Dataset::map(MapFn fn, int num_parallel_calls) const {
  return Dataset(std::make_shared<MapDataset>(impl_, std::move(fn), num_parallel_calls));
}

Dataset Dataset::repeat(int64_t count) const {
  return Dataset(std::make_shared<RepeatDataset>(impl_, count));
}

Dataset Dataset::take(int64_t count) const { return Dataset(std::make_shared<TakeDataset>(impl_, count)); }

Dataset Dataset::skip(int64_t count) const { return Dataset(std::make_shared<SkipDataset>(impl_, count)); }

Dataset Dataset::shard(int64_t num_shards, int64_t index) const {
  return Dataset(std::make_shared<ShardDataset>(impl_, num_shards, index));
}

Dataset Dataset::cache() const { return Dataset(std::make_shared<CacheDataset>(impl_)); }

Dataset Dataset::prefetch(int64_t buffer_size) const {
  return Dataset(std::make_shared<PrefetchDataset>(impl_, buffer_size));
}

std::unique_ptr<Iterator> Dataset::make_iterator() const {
  if (!impl_) throw ValueError("Dataset.make_iterator: the dataset is null");
  return impl_->make_iterator();
}

std::vector<uint64_t> Dataset::state() const {
  if (!impl_) throw ValueError("Dataset.state: the dataset is null");
  std::vector<uint64_t> out;
  impl_->save_state(out);
  return out;
}

void Dataset::restore_state(const std::vector<uint64_t>& state) const {
  if (!impl_) throw ValueError("Dataset.restore_state: the dataset is null");
  size_t pos = 0;
  impl_->restore_state(state, pos);
  if (pos != state.size()) {
    throw ValueError("Dataset.restore_state: the saved state has " + std::to_string(state.size()) +
                     " values, this pipeline " + std::to_string(pos) + "; restore it into the "
                     "pipeline it was saved from");
  }
}

int64_t Dataset::cardinality() const {
  if (!impl_) throw ValueError("Dataset.cardinality: the dataset is null");
  return impl_->cardinality();
}

}  // namespace strata::data
