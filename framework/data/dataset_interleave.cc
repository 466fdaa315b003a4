// Dataset::interleave: a dataset per input element, their elements taken in turns.
//
// The order is tf.data's deterministic one (read in TensorFlow's interleave_dataset_op.cc): a
// cycle of `cycle_length` slots visited in turn, `block_length` elements from a slot before the
// next; an empty slot opens the next input element's dataset in place and reads from it at
// once; a slot whose dataset ends is emptied and the cycle moves on. The pass ends when the
// input has ended and every slot is empty.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "framework/core/error.h"
#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

using InterleaveFn = std::function<Dataset(const Element&)>;

class InterleaveDataset : public DatasetImpl {
 public:
  InterleaveDataset(ImplPtr input, InterleaveFn fn, int cycle_length, int block_length,
                    int num_parallel_calls)
      : input_(checked_input(std::move(input), "interleave")),
        fn_(std::move(fn)),
        block_length_(block_length) {
    if (!fn_) throw ValueError("interleave: the function is empty");
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    if (cycle_length == kAutotune) cycle_length = cores;
    if (num_parallel_calls == kAutotune) num_parallel_calls = cores;
    if (cycle_length < 1) {
      throw ValueError("interleave: cycle_length must be >= 1 or kAutotune (-1), got " +
                       std::to_string(cycle_length));
    }
    if (block_length < 1) {
      throw ValueError("interleave: block_length must be >= 1, got " + std::to_string(block_length));
    }
    if (num_parallel_calls < 1) {
      throw ValueError("interleave: num_parallel_calls must be >= 1 or kAutotune (-1), got " +
                       std::to_string(num_parallel_calls));
    }
    cycle_length_ = cycle_length;
    read_ahead_ = num_parallel_calls > 1;
  }

  std::unique_ptr<Iterator> make_iterator() const override;
  int64_t cardinality() const override {
    return input_->cardinality() == 0 ? 0 : kUnknownCardinality;
  }
  const DatasetImpl* input_node() const override { return input_.get(); }
  ImplPtr with_input(ImplPtr input) const override {
    return std::make_shared<InterleaveDataset>(std::move(input), fn_, cycle_length_, block_length_,
                                               read_ahead_ ? 2 : 1);
  }

  // The dataset of one input element (read ahead on its own thread when asked).
  std::unique_ptr<Iterator> open(const Element& e) const {
    Dataset d = fn_(e);
    if (!d.impl()) throw ValueError("interleave: the function returned a null dataset");
    if (read_ahead_) d = d.prefetch(block_length_);
    return d.make_iterator();
  }
  const ImplPtr& input() const { return input_; }
  int cycle_length() const { return cycle_length_; }
  int block_length() const { return block_length_; }

 private:
  ImplPtr input_;
  InterleaveFn fn_;
  int cycle_length_ = 1;
  int block_length_;
  bool read_ahead_ = false;
};

class InterleaveIterator : public Iterator {
 public:
  explicit InterleaveIterator(std::shared_ptr<const InterleaveDataset> ds)
      : ds_(std::move(ds)), input_(ds_->input()->make_iterator()), slots_(size_t(ds_->cycle_length())) {}

  std::optional<Element> next() override {
    while (!input_ended_ || open_ > 0) {
      std::unique_ptr<Iterator>& slot = slots_[cycle_];
      if (slot) {
        if (std::optional<Element> e = slot->next()) {
          if (++block_ == ds_->block_length()) advance();
          return e;
        }
        slot.reset();
        --open_;
        advance();
      } else if (!input_ended_) {
        if (std::optional<Element> e = input_->next()) {
          slot = ds_->open(*e);
          ++open_;
        } else {
          input_ended_ = true;
        }
      } else {
        advance();
      }
    }
    return std::nullopt;
  }

 private:
  void advance() {
    block_ = 0;
    cycle_ = (cycle_ + 1) % slots_.size();
  }

  std::shared_ptr<const InterleaveDataset> ds_;
  std::unique_ptr<Iterator> input_;
  std::vector<std::unique_ptr<Iterator>> slots_;
  size_t cycle_ = 0;
  int block_ = 0;
  int open_ = 0;
  bool input_ended_ = false;
};

std::unique_ptr<Iterator> InterleaveDataset::make_iterator() const {
  return std::make_unique<InterleaveIterator>(self<InterleaveDataset>());
}

}  // namespace

Dataset Dataset::interleave(std::function<Dataset(const Element&)> fn, int cycle_length,
                            int block_length, int num_parallel_calls) const {
  return Dataset(std::make_shared<InterleaveDataset>(impl_, std::move(fn), cycle_length,
                                                     block_length, num_parallel_calls));
}

}  // namespace strata::data
