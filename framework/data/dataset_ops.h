// Internal: the nodes of a Dataset pipeline. Each transformation is an immutable DatasetImpl that
// holds its input; make_iterator() starts an independent pass. Iterators keep their node alive
// (shared_from_this), so a Dataset may be dropped while a pass is still running.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "framework/data/dataset.h"

namespace strata::data {

class DatasetImpl : public std::enable_shared_from_this<DatasetImpl> {
 public:
  virtual ~DatasetImpl() = default;
  virtual std::unique_ptr<Iterator> make_iterator() const = 0;
  // Number of elements, or kInfiniteCardinality / kUnknownCardinality.
  virtual int64_t cardinality() const = 0;
  // The node this one reads from (null for sources): state is collected along this chain.
  virtual const DatasetImpl* input_node() const { return nullptr; }
  // State that decides future passes (a shuffle's pass count), appended in pipeline order from
  // this node to the source; restore_state reads it back in the same order.
  virtual void save_state(std::vector<uint64_t>& out) const {
    if (const DatasetImpl* in = input_node()) in->save_state(out);
  }
  virtual void restore_state(const std::vector<uint64_t>& state, size_t& pos) const {
    if (const DatasetImpl* in = input_node()) in->restore_state(state, pos);
  }

  // ---- Sharding by file (file_sharding.cc: AutoShardPolicy::kFile) ----
  // A copy of this node that reads from `input` instead of input_node(): what the rewrite makes
  // of each node between the pipeline's end and its file source. Null for nodes that have no
  // input (sources).
  virtual std::shared_ptr<const DatasetImpl> with_input(std::shared_ptr<const DatasetImpl>) const {
    return nullptr;
  }
  // File sources (list_files, TFRecordDataset): the files, in the order listed; null elsewhere.
  virtual const std::vector<std::string>* source_files() const { return nullptr; }
  // A file source's copy that reads `files` only (a subset of source_files(), in their order).
  virtual std::shared_ptr<const DatasetImpl> with_files(std::vector<std::string>) const {
    return nullptr;
  }

 protected:
  template <typename T>
  std::shared_ptr<const T> self() const {
    return std::static_pointer_cast<const T>(shared_from_this());
  }
};

using ImplPtr = std::shared_ptr<const DatasetImpl>;

// `input` itself; throws ValueError naming `op` when it is null (a Dataset built from nullptr).
ImplPtr checked_input(ImplPtr input, const char* op);

// ---- Sources (dataset_sources.cc) ----

class TensorSlicesDataset : public DatasetImpl {
 public:
  explicit TensorSlicesDataset(const std::vector<Tensor>& components);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return rows_; }
  const std::vector<Tensor>& components() const { return components_; }

 private:
  std::vector<Tensor> components_;
  int64_t rows_ = 0;
};

class TensorsDataset : public DatasetImpl {
 public:
  explicit TensorsDataset(const std::vector<Tensor>& components);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return 1; }
  const Element& element() const { return element_; }

 private:
  Element element_;
};

using GeneratorFn = std::function<std::optional<Element>()>;

class GeneratorDataset : public DatasetImpl {
 public:
  GeneratorDataset(std::function<GeneratorFn()> make_generator, int64_t cardinality);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return cardinality_; }

 private:
  std::function<GeneratorFn()> make_generator_;
  int64_t cardinality_;
};

// ---- shuffle (dataset_shuffle.cc) ----

class ShuffleDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  // seed < 0 draws one from the global generator now, so the order is fixed when the pipeline
  // is built (as tf.data fixes op seeds at graph construction).
  ShuffleDataset(ImplPtr input, int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return input_->cardinality(); }
  // The resolved seed; pass p (the p-th make_iterator() call) shuffles with (seed, p).
  uint64_t seed() const { return seed_; }
  void save_state(std::vector<uint64_t>& out) const override;
  void restore_state(const std::vector<uint64_t>& state, size_t& pos) const override;
  // The same seed and the same pass count (shared: a pass of either copy counts for both), so a
  // rewritten pipeline keeps the order of passes the original would have.
  ImplPtr with_input(ImplPtr input) const override;

 private:
  ImplPtr input_;
  int64_t buffer_size_;
  uint64_t seed_;
  bool reshuffle_;
  std::shared_ptr<std::atomic<uint64_t>> passes_ = std::make_shared<std::atomic<uint64_t>>(0);
};

// ---- batch (dataset_batch.cc) ----

class BatchDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  BatchDataset(ImplPtr input, int64_t batch_size, bool drop_remainder);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override;
  int64_t batch_size() const { return batch_size_; }
  bool drop_remainder() const { return drop_remainder_; }
  const ImplPtr& input() const { return input_; }

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<BatchDataset>(std::move(input), batch_size_, drop_remainder_);
  }

 private:
  ImplPtr input_;
  int64_t batch_size_;
  bool drop_remainder_;
};

// Stacks elements (all with the same structure) along a new axis 0, one allocation and one
// memcpy per component and element. Throws ShapeError / DTypeError naming the position.
Element stack_elements(const std::vector<Element>& elements, const char* op);

// ---- map (dataset_map.cc) ----

// fn is assumed pure (as tf.data assumes): skip() passes over elements without calling it.
class MapDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  MapDataset(ImplPtr input, MapFn fn, int num_parallel_calls);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return input_->cardinality(); }
  const ImplPtr& input() const { return input_; }
  const MapFn& fn() const { return fn_; }
  int num_parallel_calls() const { return parallel_; }

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<MapDataset>(std::move(input), fn_, parallel_);
  }

 private:
  ImplPtr input_;
  MapFn fn_;
  int parallel_;  // resolved: >= 1
};

// Runs fn on element `index`, re-throwing its exception with "map: fn failed on element i".
Element apply_map_fn(const MapFn& fn, const Element& element, int64_t index);

// ---- prefetch (dataset_prefetch.cc) ----

class PrefetchDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  PrefetchDataset(ImplPtr input, int64_t buffer_size);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return input_->cardinality(); }

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<PrefetchDataset>(std::move(input), buffer_size_);
  }

 private:
  ImplPtr input_;
  int64_t buffer_size_;  // resolved: >= 1
};

// ---- repeat, take, skip, shard, cache (dataset_basic.cc) ----

class RepeatDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  RepeatDataset(ImplPtr input, int64_t count);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override;

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<RepeatDataset>(std::move(input), count_);
  }

 private:
  ImplPtr input_;
  int64_t count_;  // < 0: forever
};

class TakeDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  TakeDataset(ImplPtr input, int64_t count);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override;

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<TakeDataset>(std::move(input), count_);
  }

 private:
  ImplPtr input_;
  int64_t count_;  // < 0: all
};

class SkipDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  SkipDataset(ImplPtr input, int64_t count);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override;

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<SkipDataset>(std::move(input), count_);
  }

 private:
  ImplPtr input_;
  int64_t count_;  // < 0: all
};

class ShardDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  ShardDataset(ImplPtr input, int64_t num_shards, int64_t index);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override;

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<ShardDataset>(std::move(input), num_shards_, index_);
  }

 private:
  ImplPtr input_;
  int64_t num_shards_;
  int64_t index_;
};

class CacheDataset : public DatasetImpl {
 public:
  const DatasetImpl* input_node() const override { return input_.get(); }
  explicit CacheDataset(ImplPtr input);
  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override { return input_->cardinality(); }

  // The completed first pass, or null until one finished. Only a complete pass is published.
  std::shared_ptr<const std::vector<Element>> cached() const;
  void publish(std::shared_ptr<const std::vector<Element>> elements) const;
  const ImplPtr& input() const { return input_; }

  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<CacheDataset>(std::move(input));  // a cache of its own
  }

 private:
  ImplPtr input_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const std::vector<Element>> cache_;
};

}  // namespace strata::data
