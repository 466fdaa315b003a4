#include "framework/trainer/epoch_iterator.h"

#include <algorithm>
#include <numeric>

#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {

EpochIterator::EpochIterator(std::vector<Tensor> components, int64_t batch_size, bool shuffle,
                             int64_t steps_per_epoch, const char* method)
    : components_(std::move(components)),
      batch_size_(batch_size),
      steps_per_epoch_(steps_per_epoch),
      shuffle_(shuffle) {
  if (batch_size <= 0) {
    throw ValueError(std::string("Model.") + method + ": batch_size must be positive, got " +
                     std::to_string(batch_size));
  }
  STRATA_CHECK(!components_.empty());
  n_ = components_[0].rank() > 0 ? components_[0].dim(0) : 0;
  for (size_t i = 0; i < components_.size(); ++i) {
    const Tensor& c = components_[i];
    if (c.rank() == 0 || c.dim(0) != n_) {
      throw ShapeError(std::string("Model.") + method + ": x, y and sample weights must have the "
                       "same number of samples; got shapes " + components_[0].shape().to_string() +
                       " and " + c.shape().to_string());
    }
  }
  if (n_ == 0) throw ValueError(std::string("Model.") + method + ": the data has no samples");
  steps_ = (n_ + batch_size_ - 1) / batch_size_;
  if (steps_per_epoch_ > 0) steps_ = steps_per_epoch_;
}

EpochIterator::EpochIterator(data::Dataset dataset, int64_t steps_per_epoch, const char* method)
    : dataset_(std::move(dataset)), steps_per_epoch_(steps_per_epoch) {
  const int64_t card = dataset_->cardinality();
  if (steps_per_epoch_ > 0) {
    steps_ = steps_per_epoch_;
  } else if (card == data::kInfiniteCardinality) {
    throw ValueError(std::string("Model.") + method + ": the dataset is infinite (repeat()); "
                     "pass steps_per_epoch (or steps) to say how many batches an epoch has");
  } else {
    steps_ = card >= 0 ? card : -1;
  }
}

void EpochIterator::begin_epoch() {
  step_ = 0;
  // With a Dataset and steps_per_epoch, one pass spans epochs (Keras); otherwise each epoch is
  // a new pass.
  if (!dataset_ || !iterator_ || steps_per_epoch_ <= 0) start_pass();
}

void EpochIterator::begin_epoch_at(const DataPosition& position, int64_t step_in_epoch) {
  restore_pipeline(position.pipeline_at_pass_start);
  set_generator_state(position.pass_rng);
  start_pass();
  // Datasets skip without producing what they can (sources, element-wise maps): resuming late
  // in a pass costs little. The generator state after the skip does not matter: fit restores
  // the backup's state next.
  if (dataset_ && iterator_->skip(position.consumed) < position.consumed) {
    throw ValueError("Model.fit: cannot resume: the dataset now has fewer than " +
                     std::to_string(position.consumed) + " batches in a pass; resume with the "
                     "input pipeline the backup was made with");
  }
  consumed_ = position.consumed;
  step_ = step_in_epoch;
}

DataPosition EpochIterator::position() const {
  DataPosition p;
  p.pass_rng = pass_rng_;
  p.consumed = consumed_;
  p.spans_epochs = dataset_ && steps_per_epoch_ > 0;
  p.pipeline_at_pass_start = pipeline_at_pass_start_;
  if (dataset_) p.pipeline_now = dataset_->state();
  return p;
}

void EpochIterator::restore_pipeline(const std::vector<uint64_t>& state) {
  if (dataset_) dataset_->restore_state(state);
}

std::optional<data::Element> EpochIterator::peek() const {
  if (!dataset_) {
    data::Element batch;
    for (const Tensor& c : components_) batch.push_back(c.slice(0, std::min(n_, batch_size_)));
    return batch;
  }
  const GeneratorState saved = get_generator_state();
  const std::vector<uint64_t> pipeline = dataset_->state();
  std::optional<data::Element> first;
  {
    std::unique_ptr<data::Iterator> it = dataset_->make_iterator();
    first = it->next();
  }  // the iterator (and any background thread of it) is gone before the state is restored
  set_generator_state(saved);
  dataset_->restore_state(pipeline);
  return first;
}

void EpochIterator::start_pass() {
  pass_rng_ = get_generator_state();
  consumed_ = 0;
  if (dataset_) {
    pipeline_at_pass_start_ = dataset_->state();
    iterator_ = dataset_->make_iterator();
    return;
  }
  order_.resize(size_t(n_));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (shuffle_) {
    // Keys from the seeded global generator: the same seed gives the same epoch orders.
    const std::vector<float> keys = random_uniform({n_}).to_vector<float>();
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int64_t a, int64_t b) { return keys[size_t(a)] < keys[size_t(b)]; });
  }
}

std::optional<data::Element> EpochIterator::next() {
  if (steps_ >= 0 && step_ >= steps_) return std::nullopt;
  if (dataset_) {
    std::optional<data::Element> e = iterator_->next();
    if (!e && steps_per_epoch_ > 0) {  // a finite dataset ran out: start it again
      start_pass();
      e = iterator_->next();
    }
    if (e) {
      ++step_;
      ++consumed_;
    }
    return e;
  }
  // Tensors: with steps_per_epoch beyond one pass, wrap around the (same) order.
  const int64_t start = (consumed_ * batch_size_) % n_;
  const int64_t end = std::min(n_, start + batch_size_);
  ++step_;
  ++consumed_;
  data::Element batch;
  if (!shuffle_) {
    for (const Tensor& c : components_) batch.push_back(c.slice(start, end));  // views
  } else {
    const Tensor idx = Tensor::from_vector(
        std::vector<int64_t>(order_.begin() + start, order_.begin() + end));
    for (const Tensor& c : components_) batch.push_back(gather(c, idx));
  }
  return batch;
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> split_validation(
    const std::vector<Tensor>& components, double fraction) {
  if (!(fraction > 0.0 && fraction < 1.0)) {
    throw ValueError("Model.fit: validation_split must be in (0, 1), got " + std::to_string(fraction));
  }
  const int64_t n = components[0].dim(0);
  const int64_t n_val = int64_t(double(n) * fraction);
  if (n_val == 0 || n_val == n) {
    throw ValueError("Model.fit: validation_split=" + std::to_string(fraction) + " of " +
                     std::to_string(n) + " samples leaves an empty training or validation set");
  }
  std::vector<Tensor> train, val;
  for (const Tensor& c : components) {
    train.push_back(c.slice(0, n - n_val));
    val.push_back(c.slice(n - n_val, n));
  }
  return {train, val};
}

Tensor class_weights_to_sample_weights(const std::map<int64_t, double>& class_weight,
                                       const Tensor& y, const Tensor& sample_weight) {
  Tensor labels = y;
  if (y.rank() >= 2 && y.shape()[y.rank() - 1] > 1) labels = argmax(y, -1);
  const std::vector<int64_t> ids = labels.to_vector<int64_t>();
  std::vector<float> w(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = class_weight.find(ids[i]);
    if (it == class_weight.end()) {
      throw ValueError("Model.fit: class_weight has no entry for class " + std::to_string(ids[i]));
    }
    w[i] = float(it->second);
  }
  Tensor out = Tensor::from_vector(w, Shape{int64_t(w.size())});
  if (sample_weight.defined()) out = multiply(out, reshape(cast(sample_weight, float32), {-1}));
  return out;
}

}  // namespace strata
