// prefetch: a background thread runs the input pipeline up to buffer_size elements ahead of the
// consumer (so batching and mapping overlap the training step). The thread starts on the first
// next() (skip() before that is still the input's cheap skip), stops at the end of the input or
// at its first exception (re-thrown by next() in order), and is told to stop and joined when the
// iterator is destroyed early.
#include <condition_variable>
#include <deque>
#include <exception>
#include <string>
#include <thread>

#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

class PrefetchIterator : public Iterator {
 public:
  PrefetchIterator(std::shared_ptr<const PrefetchDataset> ds, std::unique_ptr<Iterator> input, int64_t buffer_size)
      : ds_(std::move(ds)), input_(std::move(input)), buffer_size_(size_t(buffer_size)) {}

  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      cancelled_ = true;
    }
    not_full_.notify_all();
    // Waits at most for the input's current next() call to return.
    if (producer_.joinable()) producer_.join();
  }

  std::optional<Element> next() override {
    if (done_) return std::nullopt;
    if (!producer_.joinable()) producer_ = std::thread([this] { produce(); });
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      not_empty_.wait(lock, [this] { return !queue_.empty(); });
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    not_full_.notify_one();
    if (item.error) {
      done_ = true;
      std::rethrow_exception(item.error);
    }
    if (!item.element) done_ = true;
    return std::move(item.element);
  }

  int64_t skip(int64_t n) override {
    if (!producer_.joinable() && !done_) return input_->skip(n);  // the thread owns input_ once started
    return Iterator::skip(n);
  }

 private:
  struct Item {
    std::optional<Element> element;  // nullopt with no error: the end of the input
    std::exception_ptr error;
  };

  void produce() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        not_full_.wait(lock, [this] { return cancelled_ || queue_.size() < buffer_size_; });
        if (cancelled_) return;
      }
      Item item;
      try {
        item.element = input_->next();
      } catch (...) {
        item.error = std::current_exception();
      }
      const bool last = item.error || !item.element;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(std::move(item));
      }
      not_empty_.notify_one();
      if (last) return;
    }
  }

  std::shared_ptr<const PrefetchDataset> ds_;
  std::unique_ptr<Iterator> input_;
  size_t buffer_size_;
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Item> queue_;
  bool cancelled_ = false;
  bool done_ = false;      // consumer side: end or error already returned
  std::thread producer_;  // last: joined in the destructor before the members above go
};

// A fixed depth for kAutotune: enough to hide one step's jitter without holding many batches.
constexpr int64_t kAutotunePrefetch = 2;

}  // namespace

PrefetchDataset::PrefetchDataset(ImplPtr input, int64_t buffer_size)
    : input_(checked_input(std::move(input), "prefetch")) {
  if (buffer_size == kAutotune) {
    buffer_size_ = kAutotunePrefetch;
  } else if (buffer_size >= 1) {
    buffer_size_ = buffer_size;
  } else {
    throw ValueError("prefetch: buffer_size must be positive or kAutotune (-1), got " + std::to_string(buffer_size));
  }
}

std::unique_ptr<Iterator> PrefetchDataset::make_iterator() const {
  return std::make_unique<PrefetchIterator>(self<PrefetchDataset>(), input_->make_iterator(), buffer_size_);
}

}  // namespace strata::data
