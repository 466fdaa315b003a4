// Internal: turns fit/evaluate/predict inputs (tensors or a Dataset) into the batches of each
// epoch, as Keras' data adapters do: tensors are batched (and shuffled each epoch, from the
// global seeded generator); a Dataset is used as it is (already batched).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "framework/data/dataset.h"
#include "framework/model/training_progress.h"

namespace strata {

class EpochIterator {
 public:
  // Tensors: every component is sliced along axis 0 into batches of batch_size.
  EpochIterator(std::vector<Tensor> components, int64_t batch_size, bool shuffle,
                int64_t steps_per_epoch, const char* method);
  EpochIterator(data::Dataset dataset, int64_t steps_per_epoch, const char* method);

  // Starts an epoch; then next() gives its batches until nullopt.
  void begin_epoch();
  // Starts an epoch in the middle, exactly where an earlier run was at `position` (saved with
  // position()): remakes that pass with its generator state and skips the batches already
  // drawn from it; `step_in_epoch` batches of this epoch count as done.
  void begin_epoch_at(const DataPosition& position, int64_t step_in_epoch);
  std::optional<data::Element> next();
  DataPosition position() const;
  // The first batch of a fresh pass, leaving this iterator and the global generator as they
  // were (fit builds an unbuilt model from it before callbacks run).
  std::optional<data::Element> peek() const;
  // Puts a Dataset's own state back (DataPosition::pipeline_now), before begin_epoch().
  void restore_pipeline(const std::vector<uint64_t>& state);
  // Steps in an epoch, or -1 when unknown (a dataset of unknown cardinality).
  int64_t steps() const { return steps_; }
  // Batches drawn in this epoch so far.
  int64_t drawn_in_epoch() const { return step_; }
  // The full batch size for tensor inputs; 0 for datasets (their first batch tells).
  int64_t batch_size() const { return batch_size_; }
  // Whether each batch is this worker's part of the global batch (its dataset was divided among
  // the workers by file, data::shard_by_file), not the global batch (InputOptions).
  bool worker_batches() const { return worker_batches_; }
  void set_worker_batches(bool worker_batches) { worker_batches_ = worker_batches; }

 private:
  std::vector<Tensor> components_;
  std::optional<data::Dataset> dataset_;
  std::unique_ptr<data::Iterator> iterator_;
  int64_t batch_size_ = 0, n_ = 0, steps_ = -1, steps_per_epoch_ = -1;
  bool shuffle_ = false;
  bool worker_batches_ = false;
  int64_t step_ = 0;
  std::vector<int64_t> order_;
  void start_pass();
  GeneratorState pass_rng_;
  std::vector<uint64_t> pipeline_at_pass_start_;
  int64_t consumed_ = 0;  // batches drawn from the current pass
};

// Keras' validation_split: the last `fraction` of the samples (before any shuffling).
std::pair<std::vector<Tensor>, std::vector<Tensor>> split_validation(
    const std::vector<Tensor>& components, double fraction);

// Sample weights from class_weight and the targets (sparse labels, or one-hot/probabilities via
// argmax), multiplied into `sample_weight` when given.
Tensor class_weights_to_sample_weights(const std::map<int64_t, double>& class_weight,
                                       const Tensor& y, const Tensor& sample_weight);

}  // namespace strata
