// batch: stacks consecutive elements along a new axis 0. On the CPU each component of a batch
// is one allocation plus one memcpy per element, so a 128x28x28 uint8 batch costs microseconds;
// other devices go through strata::stack.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "framework/data/dataset_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata::data {
namespace {

class BatchIterator : public Iterator {
 public:
  BatchIterator(std::shared_ptr<const BatchDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)) {}

  std::optional<Element> next() override {
    if (exhausted_) return std::nullopt;
    std::vector<Element> elements;
    elements.reserve(size_t(std::min<int64_t>(ds_->batch_size(), 1 << 16)));
    while (int64_t(elements.size()) < ds_->batch_size()) {
      std::optional<Element> e = input_->next();
      if (!e) {
        exhausted_ = true;
        break;
      }
      elements.push_back(std::move(*e));
    }
    if (elements.empty()) return std::nullopt;
    if (exhausted_ && ds_->drop_remainder() && int64_t(elements.size()) < ds_->batch_size()) {
      return std::nullopt;
    }
    return stack_elements(elements, "batch");
  }

  // Skipping n batches skips n * batch_size input elements, without stacking them.
  int64_t skip(int64_t n) override {
    if (exhausted_ || n <= 0) return 0;
    const int64_t b = ds_->batch_size();
    const int64_t want = n > INT64_MAX / b ? INT64_MAX : n * b;
    const int64_t got = input_->skip(want);
    if (got == want) return n;
    exhausted_ = true;
    const int64_t full = got / b, rest = got % b;
    return full + (rest > 0 && !ds_->drop_remainder() ? 1 : 0);
  }

 private:
  std::shared_ptr<const BatchDataset> ds_;
  std::unique_ptr<Iterator> input_;
  bool exhausted_ = false;
};

// batch directly over from_tensor_slices: a batch is rows [i, i + b) of each component, which
// are contiguous, so each component is one memcpy (no per-element tensors at all).
class SliceBatchIterator : public Iterator {
 public:
  SliceBatchIterator(std::shared_ptr<const BatchDataset> ds, std::shared_ptr<const TensorSlicesDataset> src)
      : ds_(std::move(ds)), src_(std::move(src)) {}

  std::optional<Element> next() override {
    const int64_t rows = src_->cardinality();
    const int64_t b = std::min(ds_->batch_size(), rows - row_);
    if (b <= 0 || (b < ds_->batch_size() && ds_->drop_remainder())) return std::nullopt;
    Element out;
    out.reserve(src_->components().size());
    for (const Tensor& c : src_->components()) out.push_back(c.slice(row_, row_ + b).clone());
    row_ += b;
    return out;
  }

  int64_t skip(int64_t n) override {
    const int64_t rows = src_->cardinality(), bs = ds_->batch_size();
    int64_t k = 0;
    while (k < n && row_ < rows && (rows - row_ >= bs || !ds_->drop_remainder())) {
      row_ += std::min(bs, rows - row_);
      ++k;
    }
    return k;
  }

 private:
  std::shared_ptr<const BatchDataset> ds_;
  std::shared_ptr<const TensorSlicesDataset> src_;
  int64_t row_ = 0;
};

std::string where(const char* op, size_t position) {
  return std::string(op) + ": component " + std::to_string(position);
}

}  // namespace

Element stack_elements(const std::vector<Element>& elements, const char* op) {
  STRATA_CHECK(!elements.empty());
  const Element& first = elements[0];
  for (size_t k = 1; k < elements.size(); ++k) {
    if (elements[k].size() != first.size()) {
      throw ValueError(std::string(op) + ": elements must have the same number of components; element 0 has " +
                       std::to_string(first.size()) + " but element " + std::to_string(k) + " has " +
                       std::to_string(elements[k].size()));
    }
  }
  const int64_t n = int64_t(elements.size());
  Element out;
  out.reserve(first.size());
  for (size_t pos = 0; pos < first.size(); ++pos) {
    const Tensor& t0 = first[pos];
    for (size_t k = 1; k < elements.size(); ++k) {
      const Tensor& t = elements[k][pos];
      if (t.shape() != t0.shape()) {
        throw ShapeError(where(op, pos) + " must have the same shape in every element; element 0 has " +
                         t0.shape().to_string() + " but element " + std::to_string(k) + " has " +
                         t.shape().to_string());
      }
      if (t.dtype() != t0.dtype()) {
        throw DTypeError(where(op, pos) + " must have the same dtype in every element; element 0 has " +
                         dtype_name(t0.dtype()) + " but element " + std::to_string(k) + " has " +
                         dtype_name(t.dtype()));
      }
      if (!same_memory_space(t.device(), t0.device())) {
        throw DeviceError(where(op, pos) + " must be on the same device in every element; element 0 is on " +
                          t0.device().to_string() + " but element " + std::to_string(k) + " is on " +
                          t.device().to_string());
      }
    }
    if (t0.device().type != DeviceType::kCPU) {
      std::vector<Tensor> column;
      column.reserve(elements.size());
      for (const Element& e : elements) column.push_back(e[pos].detach());
      out.push_back(stack(column, 0));
      continue;
    }
    std::vector<int64_t> dims{n};
    dims.insert(dims.end(), t0.shape().begin(), t0.shape().end());
    Tensor batch = Tensor::empty(Shape(std::move(dims)), t0.dtype(), t0.device());
    const size_t row = t0.nbytes();
    char* dst = static_cast<char*>(batch.raw_data());
    for (int64_t k = 0; k < n; ++k) {
      if (row > 0) std::memcpy(dst + size_t(k) * row, elements[size_t(k)][pos].raw_data(), row);
    }
    out.push_back(std::move(batch));
  }
  return out;
}

BatchDataset::BatchDataset(ImplPtr input, int64_t batch_size, bool drop_remainder)
    : input_(checked_input(std::move(input), "batch")), batch_size_(batch_size), drop_remainder_(drop_remainder) {
  if (batch_size <= 0) {
    throw ValueError("batch: batch_size must be positive, got " + std::to_string(batch_size));
  }
}

int64_t BatchDataset::cardinality() const {
  const int64_t n = input_->cardinality();
  if (n < 0) return n;  // infinite stays infinite, unknown stays unknown
  return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
}

std::unique_ptr<Iterator> BatchDataset::make_iterator() const {
  if (auto src = std::dynamic_pointer_cast<const TensorSlicesDataset>(input_)) {
    return std::make_unique<SliceBatchIterator>(self<BatchDataset>(), std::move(src));
  }
  return std::make_unique<BatchIterator>(self<BatchDataset>(), input_->make_iterator());
}

}  // namespace strata::data
