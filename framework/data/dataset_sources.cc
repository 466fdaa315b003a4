// Source datasets: slices of tensors (views, no copies), one element of whole tensors, and
// elements from a user generator made afresh for every pass.
#include <algorithm>
#include <string>

#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

void check_components(const std::vector<Tensor>& components, const char* op) {
  if (components.empty()) {
    throw ValueError(std::string(op) + ": expected at least one component tensor, got none");
  }
  for (size_t i = 0; i < components.size(); ++i) {
    if (!components[i].defined()) {
      throw ValueError(std::string(op) + ": component " + std::to_string(i) + " is an undefined tensor");
    }
  }
}

// Row i of c as a view, built directly: Tensor::operator[] goes through the squeeze op, which
// costs several times more than the copy batching does afterwards.
Tensor row_view(const Tensor& c, int64_t i) {
  const TensorImpl& src = *c.impl();
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = src.storage;
  impl->dtype = src.dtype;
  impl->shape = Shape(std::vector<int64_t>(src.shape.begin() + 1, src.shape.end()));
  impl->offset = src.offset + size_t(i) * size_t(impl->shape.numel()) * dtype_size(src.dtype);
  return Tensor(std::move(impl));
}

class TensorSlicesIterator : public Iterator {
 public:
  explicit TensorSlicesIterator(std::shared_ptr<const TensorSlicesDataset> ds) : ds_(std::move(ds)) {}

  std::optional<Element> next() override {
    if (index_ >= ds_->cardinality()) return std::nullopt;
    Element e;
    e.reserve(ds_->components().size());
    for (const Tensor& c : ds_->components()) e.push_back(row_view(c, index_));
    ++index_;
    return e;
  }

  // Random access: skipping is just moving the cursor.
  int64_t skip(int64_t n) override {
    const int64_t k = std::max<int64_t>(0, std::min(n, ds_->cardinality() - index_));
    index_ += k;
    return k;
  }

 private:
  std::shared_ptr<const TensorSlicesDataset> ds_;
  int64_t index_ = 0;
};

class TensorsIterator : public Iterator {
 public:
  explicit TensorsIterator(std::shared_ptr<const TensorsDataset> ds) : ds_(std::move(ds)) {}
  std::optional<Element> next() override {
    if (done_) return std::nullopt;
    done_ = true;
    return ds_->element();
  }
  int64_t skip(int64_t n) override {
    if (done_ || n <= 0) return 0;
    done_ = true;
    return 1;
  }

 private:
  std::shared_ptr<const TensorsDataset> ds_;
  bool done_ = false;
};

class GeneratorIterator : public Iterator {
 public:
  GeneratorIterator(std::shared_ptr<const GeneratorDataset> ds, GeneratorFn gen)
      : ds_(std::move(ds)), gen_(std::move(gen)) {}
  std::optional<Element> next() override {
    if (done_) return std::nullopt;
    std::optional<Element> e = gen_();
    if (!e) done_ = true;  // a generator is not called again after it said "end"
    return e;
  }

 private:
  std::shared_ptr<const GeneratorDataset> ds_;  // keeps the factory's captures alive
  GeneratorFn gen_;
  bool done_ = false;
};

}  // namespace

TensorSlicesDataset::TensorSlicesDataset(const std::vector<Tensor>& components) {
  check_components(components, "from_tensor_slices");
  for (size_t i = 0; i < components.size(); ++i) {
    const Tensor& c = components[i];
    if (c.rank() == 0) {
      throw ShapeError("from_tensor_slices: component " + std::to_string(i) +
                       " is a scalar (shape []); every component needs an axis 0 to slice");
    }
    if (c.dim(0) != components[0].dim(0)) {
      throw ShapeError("from_tensor_slices: all components must have the same first dimension; component 0 has shape " +
                       components[0].shape().to_string() + " but component " + std::to_string(i) +
                       " has shape " + c.shape().to_string());
    }
    // Data, not part of a recorded computation: detaching keeps the slices plain views.
    components_.push_back(c.detach());
  }
  rows_ = components[0].dim(0);
}

std::unique_ptr<Iterator> TensorSlicesDataset::make_iterator() const {
  return std::make_unique<TensorSlicesIterator>(self<TensorSlicesDataset>());
}

TensorsDataset::TensorsDataset(const std::vector<Tensor>& components) {
  check_components(components, "from_tensors");
  for (const Tensor& c : components) element_.push_back(c.detach());
}

std::unique_ptr<Iterator> TensorsDataset::make_iterator() const {
  return std::make_unique<TensorsIterator>(self<TensorsDataset>());
}

GeneratorDataset::GeneratorDataset(std::function<GeneratorFn()> make_generator, int64_t cardinality)
    : make_generator_(std::move(make_generator)), cardinality_(cardinality) {
  if (!make_generator_) throw ValueError("from_generator: make_generator is empty");
  if (cardinality < kUnknownCardinality) {
    throw ValueError("from_generator: cardinality must be >= 0, kInfiniteCardinality (-1) or "
                     "kUnknownCardinality (-2), got " + std::to_string(cardinality));
  }
}

std::unique_ptr<Iterator> GeneratorDataset::make_iterator() const {
  GeneratorFn gen = make_generator_();
  if (!gen) throw ValueError("from_generator: make_generator returned an empty generator");
  return std::make_unique<GeneratorIterator>(self<GeneratorDataset>(), std::move(gen));
}

}  // namespace strata::data
