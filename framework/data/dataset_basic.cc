// repeat, take, skip, shard and cache: element-count transformations. Each forwards skip() to
// its input, so skipping through them stays as cheap as the source allows.
#include <algorithm>
#include <cstdint>
#include <string>

#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

constexpr int64_t kAll = INT64_MAX;

// ---- repeat ----

class RepeatIterator : public Iterator {
 public:
  RepeatIterator(ImplPtr input, int64_t count) : input_(std::move(input)), count_(count) {}

  std::optional<Element> next() override {
    for (;;) {
      if (!start_pass()) return std::nullopt;
      std::optional<Element> e = current_->next();
      if (e) {
        ++in_pass_;
        return e;
      }
      if (!end_pass()) return std::nullopt;
    }
  }

  int64_t skip(int64_t n) override {
    int64_t done = 0;
    while (done < n) {
      if (!start_pass()) break;
      const int64_t k = current_->skip(n - done);
      done += k;
      in_pass_ += k;
      if (done < n && !end_pass()) break;
    }
    return done;
  }

 private:
  // Opens the next pass when none is open; false when all passes are done.
  bool start_pass() {
    if (finished_) return false;
    if (current_) return true;
    if (count_ >= 0 && passes_ >= count_) {
      finished_ = true;
      return false;
    }
    current_ = input_->make_iterator();
    in_pass_ = 0;
    return true;
  }
  // Closes the current pass; false when the pipeline ends (an empty pass means an empty input:
  // repeating it forever would spin without producing anything, as tf.data notes).
  bool end_pass() {
    current_.reset();
    ++passes_;
    if (in_pass_ == 0) finished_ = true;
    return !finished_;
  }

  ImplPtr input_;
  int64_t count_;
  int64_t passes_ = 0;
  int64_t in_pass_ = 0;
  std::unique_ptr<Iterator> current_;
  bool finished_ = false;
};

// ---- take ----

class TakeIterator : public Iterator {
 public:
  TakeIterator(std::unique_ptr<Iterator> input, int64_t count)
      : input_(std::move(input)), remaining_(count < 0 ? kAll : count) {}

  std::optional<Element> next() override {
    if (remaining_ == 0) {
      input_.reset();  // release the input pipeline (threads, buffers) as soon as we are done
      return std::nullopt;
    }
    std::optional<Element> e = input_->next();
    if (e) {
      --remaining_;
    } else {
      remaining_ = 0;
    }
    return e;
  }

  int64_t skip(int64_t n) override {
    if (remaining_ == 0 || n <= 0) return 0;
    const int64_t want = std::min(n, remaining_);
    const int64_t got = input_->skip(want);
    remaining_ = got < want ? 0 : remaining_ - got;
    return got;
  }

 private:
  std::unique_ptr<Iterator> input_;
  int64_t remaining_;
};

// ---- skip ----

class SkipIterator : public Iterator {
 public:
  SkipIterator(std::unique_ptr<Iterator> input, int64_t count)
      : input_(std::move(input)), pending_(count < 0 ? kAll : count) {}

  std::optional<Element> next() override {
    skip_pending();
    return input_->next();
  }
  int64_t skip(int64_t n) override {
    skip_pending();
    return input_->skip(n);
  }

 private:
  // Done lazily: make_iterator() stays cheap and errors surface from next(), as everywhere else.
  void skip_pending() {
    if (pending_ > 0) {
      const int64_t n = pending_;
      pending_ = 0;
      input_->skip(n);
    }
  }

  std::unique_ptr<Iterator> input_;
  int64_t pending_;
};

// ---- shard ----

class ShardIterator : public Iterator {
 public:
  ShardIterator(std::unique_ptr<Iterator> input, int64_t num_shards, int64_t index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}

  std::optional<Element> next() override {
    if (done_) return std::nullopt;
    const int64_t gap = distance_to_mine();
    const int64_t s = input_->skip(gap);
    next_index_ += s;
    std::optional<Element> e = s < gap ? std::nullopt : input_->next();
    if (!e) {
      done_ = true;
      input_.reset();
      return std::nullopt;
    }
    ++next_index_;
    return e;
  }

  // Skipping n of this shard's elements skips n * num_shards input elements (less the offset).
  int64_t skip(int64_t n) override {
    if (done_ || n <= 0) return 0;
    const int64_t gap = distance_to_mine();
    const int64_t want = n - 1 > (kAll - gap - 1) / num_shards_ ? kAll : gap + 1 + (n - 1) * num_shards_;
    const int64_t got = input_->skip(want);
    next_index_ += got;
    if (got == want) return n;
    done_ = true;
    return got > gap ? (got - gap - 1) / num_shards_ + 1 : 0;
  }

 private:
  // Input elements to pass over before the next one that belongs to this shard.
  int64_t distance_to_mine() const {
    int64_t d = (index_ - next_index_) % num_shards_;
    return d < 0 ? d + num_shards_ : d;
  }

  std::unique_ptr<Iterator> input_;
  int64_t num_shards_, index_;
  int64_t next_index_ = 0;  // index in the input of the next element input_ yields
  bool done_ = false;
};

// ---- cache ----

class CacheIterator : public Iterator {
 public:
  explicit CacheIterator(std::shared_ptr<const CacheDataset> ds) : ds_(std::move(ds)), replay_(ds_->cached()) {
    if (!replay_) {
      input_ = ds_->input()->make_iterator();
      recorded_ = std::make_shared<std::vector<Element>>();
    }
  }

  std::optional<Element> next() override {
    if (replay_) {
      if (pos_ >= replay_->size()) return std::nullopt;
      return (*replay_)[pos_++];
    }
    if (!input_) return std::nullopt;
    std::optional<Element> e;
    try {
      e = input_->next();
    } catch (...) {
      recorded_.reset();  // a pass with a failure is never cached
      throw;
    }
    if (!e) {
      input_.reset();
      // Only a pass that reached the end is published; earlier iterators that stopped early
      // simply drop what they recorded.
      if (recorded_) ds_->publish(std::move(recorded_));
      return std::nullopt;
    }
    if (recorded_) recorded_->push_back(*e);
    return e;
  }

  int64_t skip(int64_t n) override {
    if (!replay_) return Iterator::skip(n);  // skipped elements must still be recorded
    const int64_t k = std::max<int64_t>(0, std::min<int64_t>(n, int64_t(replay_->size() - pos_)));
    pos_ += size_t(k);
    return k;
  }

 private:
  std::shared_ptr<const CacheDataset> ds_;
  std::shared_ptr<const std::vector<Element>> replay_;
  size_t pos_ = 0;
  std::unique_ptr<Iterator> input_;
  std::shared_ptr<std::vector<Element>> recorded_;
};

}  // namespace

RepeatDataset::RepeatDataset(ImplPtr input, int64_t count)
    : input_(checked_input(std::move(input), "repeat")), count_(count) {}

int64_t RepeatDataset::cardinality() const {
  const int64_t n = input_->cardinality();
  if (count_ == 0 || n == 0) return 0;
  if (n == kUnknownCardinality) return n;  // might be empty, so even repeat(-1) is unknown
  if (count_ < 0 || n == kInfiniteCardinality) return kInfiniteCardinality;
  return n > kAll / count_ ? kAll : n * count_;
}

std::unique_ptr<Iterator> RepeatDataset::make_iterator() const {
  return std::make_unique<RepeatIterator>(input_, count_);
}

TakeDataset::TakeDataset(ImplPtr input, int64_t count)
    : input_(checked_input(std::move(input), "take")), count_(count) {}

int64_t TakeDataset::cardinality() const {
  const int64_t n = input_->cardinality();
  if (count_ < 0) return n;
  if (n == kInfiniteCardinality) return count_;
  if (n == kUnknownCardinality) return count_ == 0 ? 0 : n;
  return std::min(n, count_);
}

std::unique_ptr<Iterator> TakeDataset::make_iterator() const {
  return std::make_unique<TakeIterator>(input_->make_iterator(), count_);
}

SkipDataset::SkipDataset(ImplPtr input, int64_t count)
    : input_(checked_input(std::move(input), "skip")), count_(count) {}

int64_t SkipDataset::cardinality() const {
  const int64_t n = input_->cardinality();
  if (n < 0) return n;
  if (count_ < 0) return 0;
  return std::max<int64_t>(0, n - count_);
}

std::unique_ptr<Iterator> SkipDataset::make_iterator() const {
  return std::make_unique<SkipIterator>(input_->make_iterator(), count_);
}

ShardDataset::ShardDataset(ImplPtr input, int64_t num_shards, int64_t index)
    : input_(checked_input(std::move(input), "shard")), num_shards_(num_shards), index_(index) {
  if (num_shards <= 0) {
    throw ValueError("shard: num_shards must be positive, got " + std::to_string(num_shards));
  }
  if (index < 0 || index >= num_shards) {
    throw ValueError("shard: index must be in [0, " + std::to_string(num_shards) + "), got " +
                     std::to_string(index));
  }
}

int64_t ShardDataset::cardinality() const {
  const int64_t n = input_->cardinality();
  if (n < 0) return n;
  return n / num_shards_ + (index_ < n % num_shards_ ? 1 : 0);
}

std::unique_ptr<Iterator> ShardDataset::make_iterator() const {
  return std::make_unique<ShardIterator>(input_->make_iterator(), num_shards_, index_);
}

CacheDataset::CacheDataset(ImplPtr input) : input_(checked_input(std::move(input), "cache")) {}

std::shared_ptr<const std::vector<Element>> CacheDataset::cached() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_;
}

void CacheDataset::publish(std::shared_ptr<const std::vector<Element>> elements) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!cache_) cache_ = std::move(elements);  // two complete passes hold the same elements
}

std::unique_ptr<Iterator> CacheDataset::make_iterator() const {
  return std::make_unique<CacheIterator>(self<CacheDataset>());
}

}  // namespace strata::data
