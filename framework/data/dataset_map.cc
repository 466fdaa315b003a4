// map: fn applied to each element. With num_parallel_calls > 1 a per-iterator pool of worker
// threads runs fn on up to that many elements at once while next() hands results back in input
// order (tf.data's deterministic parallel map). The input iterator is only touched by the
// consumer thread, so sources need no locking.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <string>
#include <thread>

#include "framework/data/dataset_ops.h"

namespace strata::data {
namespace {

// Re-throws the current exception with the element index in front of its message, keeping
// Strata's error types (so `catch (const ShapeError&)` still works around a map).
[[noreturn]] void rethrow_with_index(int64_t index) {
  const std::string prefix = "map: fn failed on element " + std::to_string(index) + ": ";
  try {
    throw;
  } catch (const ShapeError& e) {
    throw ShapeError(prefix + e.what());
  } catch (const DTypeError& e) {
    throw DTypeError(prefix + e.what());
  } catch (const ValueError& e) {
    throw ValueError(prefix + e.what());
  } catch (const IndexError& e) {
    throw IndexError(prefix + e.what());
  } catch (const DeviceError& e) {
    throw DeviceError(prefix + e.what());
  } catch (const StateError& e) {
    throw StateError(prefix + e.what());
  } catch (const Error& e) {
    throw Error(prefix + e.what());
  } catch (const std::exception& e) {
    // A foreign type cannot be rebuilt with a new message: wrap it, keeping it as the nested
    // exception (std::rethrow_if_nested recovers the original).
    std::throw_with_nested(Error(prefix + e.what()));
  }
}

class SequentialMapIterator : public Iterator {
 public:
  SequentialMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)) {}

  std::optional<Element> next() override {
    std::optional<Element> e = input_->next();
    if (!e) return std::nullopt;
    return apply_map_fn(ds_->fn(), *e, index_++);
  }

  int64_t skip(int64_t n) override {
    const int64_t k = input_->skip(n);
    index_ += k;
    return k;
  }

 private:
  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<Iterator> input_;
  int64_t index_ = 0;
};

// Fixed worker threads draining a task queue; the destructor drops queued tasks and joins.
class WorkerPool {
 public:
  explicit WorkerPool(int num_threads) {
    for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void submit(std::packaged_task<Element()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::packaged_task<Element()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
        if (stop_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();  // exceptions land in the task's future
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<Element()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class ParallelMapIterator : public Iterator {
 public:
  ParallelMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)), pool_(ds_->num_parallel_calls()) {}

  std::optional<Element> next() override {
    fill();
    if (in_flight_.empty()) return std::nullopt;
    std::future<Element> f = std::move(in_flight_.front().result);
    in_flight_.pop_front();
    return f.get();  // already carries the element index when fn threw
  }

  int64_t skip(int64_t n) override {
    int64_t k = 0;
    while (k < n && !in_flight_.empty()) {  // results already started are dropped in order
      if (in_flight_.front().input_failed) return k;  // next() reports the input's error
      in_flight_.front().result.wait();
      in_flight_.pop_front();
      ++k;
    }
    if (k < n && !input_exhausted_) {
      const int64_t s = input_->skip(n - k);
      if (s < n - k) input_exhausted_ = true;
      submitted_ += s;
      k += s;
    }
    return k;
  }

 private:
  // Keeps num_parallel_calls elements in flight, pulling input on this (the consumer) thread.
  void fill() {
    while (!input_exhausted_ && int64_t(in_flight_.size()) < ds_->num_parallel_calls()) {
      std::optional<Element> e;
      try {
        e = input_->next();
      } catch (...) {
        // Queued behind the elements already in flight, so they are still delivered first.
        std::promise<Element> failed;
        failed.set_exception(std::current_exception());
        in_flight_.push_back({failed.get_future(), true});
        input_exhausted_ = true;
        break;
      }
      if (!e) {
        input_exhausted_ = true;
        break;
      }
      const int64_t index = submitted_++;
      std::packaged_task<Element()> task(
          [ds = ds_, e = std::move(*e), index] { return apply_map_fn(ds->fn(), e, index); });
      in_flight_.push_back({task.get_future(), false});
      pool_.submit(std::move(task));
    }
  }

  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<Iterator> input_;
  struct Pending {
    std::future<Element> result;
    bool input_failed;  // the input threw here: not an element, so skip() stops at it
  };
  std::deque<Pending> in_flight_;
  WorkerPool pool_;  // after in_flight_: destroyed (workers joined) before it
  int64_t submitted_ = 0;
  bool input_exhausted_ = false;
};

}  // namespace

Element apply_map_fn(const MapFn& fn, const Element& element, int64_t index) {
  try {
    return fn(element);
  } catch (...) {
    rethrow_with_index(index);
  }
}

MapDataset::MapDataset(ImplPtr input, MapFn fn, int num_parallel_calls)
    : input_(checked_input(std::move(input), "map")), fn_(std::move(fn)) {
  if (!fn_) throw ValueError("map: fn is empty");
  if (num_parallel_calls == kAutotune) {
    parallel_ = int(std::max(1u, std::thread::hardware_concurrency()));
  } else if (num_parallel_calls >= 1) {
    parallel_ = num_parallel_calls;
  } else {
    throw ValueError("map: num_parallel_calls must be >= 1 or kAutotune (-1), got " +
                     std::to_string(num_parallel_calls));
  }
}

std::unique_ptr<Iterator> MapDataset::make_iterator() const {
  if (parallel_ == 1) return std::make_unique<SequentialMapIterator>(self<MapDataset>(), input_->make_iterator());
  return std::make_unique<ParallelMapIterator>(self<MapDataset>(), input_->make_iterator());
}

}  // namespace strata::data
