// shuffle: tf.data's buffer shuffle. The buffer is filled with the first buffer_size elements;
// each next() returns a uniformly chosen buffer slot and refills it from the input. A buffer at
// least as large as the dataset gives a uniform permutation.
//
// Randomness: Philox keyed by the dataset's seed, with the pass number as the high counter word
// and the draw number as the low one, so pass p's order depends only on (seed, p): every epoch
// differs yet a rerun with the same seed repeats all of them.
#include <algorithm>
#include <string>

#include "framework/data/dataset_ops.h"
#include "framework/core/random.h"
#include "framework/kernels_math/philox.h"

namespace strata::data {
namespace {

// Separates the seeds this file derives from any other use of the same global counters.
constexpr uint64_t kShuffleStream = 0x53485546464C45ULL;  // "SHUFFLE"

class ShuffleIterator : public Iterator {
 public:
  ShuffleIterator(std::shared_ptr<const ShuffleDataset> ds, std::unique_ptr<Iterator> input,
                  int64_t buffer_size, uint64_t pass)
      : ds_(std::move(ds)), input_(std::move(input)), buffer_size_(buffer_size), pass_(pass) {}

  std::optional<Element> next() override {
    if (!filled_) fill();
    if (buffer_.empty()) return std::nullopt;
    const size_t i = size_t(uniform(uint64_t(buffer_.size())));
    Element out = std::move(buffer_[i]);
    std::optional<Element> refill = input_exhausted_ ? std::nullopt : input_->next();
    if (refill) {
      buffer_[i] = std::move(*refill);
    } else {
      input_exhausted_ = true;
      buffer_[i] = std::move(buffer_.back());  // order in the buffer is irrelevant
      buffer_.pop_back();
    }
    return out;
  }

 private:
  void fill() {
    filled_ = true;
    // A small reservation: buffer_size is often "the whole data set", which may be huge.
    buffer_.reserve(size_t(std::min<int64_t>(buffer_size_, 1 << 16)));
    while (int64_t(buffer_.size()) < buffer_size_) {
      std::optional<Element> e = input_->next();
      if (!e) {
        input_exhausted_ = true;
        break;
      }
      buffer_.push_back(std::move(*e));
    }
  }

  // Uniform in [0, n) from 64 random bits (Lemire's multiply-high; bias below 2^-40 here).
  uint64_t uniform(uint64_t n) {
    uint32_t r[4];
    philox::block(draw_++, pass_, ds_->seed(), r);
    const uint64_t bits = (uint64_t(r[0]) << 32) | r[1];
    return uint64_t((unsigned __int128)bits * n >> 64);
  }

  std::shared_ptr<const ShuffleDataset> ds_;
  std::unique_ptr<Iterator> input_;
  int64_t buffer_size_;
  uint64_t pass_;
  uint64_t draw_ = 0;
  std::vector<Element> buffer_;
  bool filled_ = false;
  bool input_exhausted_ = false;
};

}  // namespace

ShuffleDataset::ShuffleDataset(ImplPtr input, int64_t buffer_size, int64_t seed,
                               bool reshuffle_each_iteration)
    : input_(checked_input(std::move(input), "shuffle")),
      buffer_size_(buffer_size),
      reshuffle_(reshuffle_each_iteration) {
  if (buffer_size <= 0) {
    throw ValueError("shuffle: buffer_size must be positive, got " + std::to_string(buffer_size));
  }
  if (seed >= 0) {
    seed_ = uint64_t(seed);
  } else {
    // One counter of the global generator, hashed into a seed: reproducible under
    // set_random_seed, and distinct for each shuffle() built after it.
    const GeneratorState s = reserve_random(1);
    uint32_t r[4];
    philox::block(s.offset, kShuffleStream, s.seed, r);
    seed_ = (uint64_t(r[0]) << 32) | r[1];
  }
}

void ShuffleDataset::save_state(std::vector<uint64_t>& out) const {
  out.push_back(passes_->load());
  DatasetImpl::save_state(out);
}

void ShuffleDataset::restore_state(const std::vector<uint64_t>& state, size_t& pos) const {
  if (pos >= state.size()) {
    throw ValueError("Dataset.restore_state: the saved state is shorter than this pipeline's; "
                     "restore it into the pipeline it was saved from");
  }
  passes_->store(state[pos++]);
  DatasetImpl::restore_state(state, pos);
}

ImplPtr ShuffleDataset::with_input(ImplPtr input) const {
  auto copy = std::make_shared<ShuffleDataset>(std::move(input), buffer_size_, /*seed=*/0, reshuffle_);
  copy->seed_ = seed_;
  copy->passes_ = passes_;
  return copy;
}

std::unique_ptr<Iterator> ShuffleDataset::make_iterator() const {
  const uint64_t pass = reshuffle_ ? passes_->fetch_add(1) : 0;
  return std::make_unique<ShuffleIterator>(self<ShuffleDataset>(), input_->make_iterator(), buffer_size_,
                                           pass);
}

}  // namespace strata::data
