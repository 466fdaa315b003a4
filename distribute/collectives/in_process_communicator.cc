#include "distribute/collectives/in_process_communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace strata::distribute {
namespace {

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "SUM";
    case ReduceOp::kMean: return "MEAN";
    case ReduceOp::kMax: return "MAX";
    case ReduceOp::kMin: return "MIN";
    default: return "unsupported";
  }
}

template <typename T>
void reduce_into(T* acc, const T* x, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
      break;
    case ReduceOp::kMax:
      for (int64_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], x[i]);
      break;
    default:  // kMin (others are rejected before)
      for (int64_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], x[i]);
      break;
  }
}

// out = a op b, elementwise.
template <typename T>
void combine(T* out, const T* a, const T* b, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
      break;
    case ReduceOp::kMax:
      for (int64_t i = 0; i < n; ++i) out[i] = std::max(a[i], b[i]);
      break;
    default:  // kMin
      for (int64_t i = 0; i < n; ++i) out[i] = std::min(a[i], b[i]);
      break;
  }
}

template <typename T>
void divide(T* acc, int64_t n, int by) {
  for (int64_t i = 0; i < n; ++i) acc[i] = T(acc[i] / T(by));
}

// op over the ranks' elements [begin, end), in rank order, written to `out` (which may be rank
// 0's own elements: then the reduction is in place).
void reduce_range(const std::vector<Tensor>& inputs, ReduceOp op, int64_t begin, int64_t end,
                  void* out) {
  if (begin >= end) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* acc = static_cast<T*>(out);
    const auto in = [&](size_t r) { return static_cast<const T*>(inputs[r].raw_data()) + begin; };
    size_t next = 1;
    if (acc != in(0)) {
      // Out of place: the first two ranks combined in one pass (same order, same bits).
      if (inputs.size() > 1) {
        combine(acc, in(0), in(1), end - begin, op);
        next = 2;
      } else {
        std::memcpy(acc, in(0), size_t(end - begin) * sizeof(T));
      }
    }
    for (size_t r = next; r < inputs.size(); ++r) reduce_into(acc, in(r), end - begin, op);
    if (op == ReduceOp::kMean) divide(acc, end - begin, int(inputs.size()));
  };
  switch (inputs[0].dtype()) {
    case DType::kFloat32: run(float{}); break;
    case DType::kFloat64: run(double{}); break;
    case DType::kInt32: run(int32_t{}); break;
    case DType::kInt64: run(int64_t{}); break;
    default: break;  // rejected when the ranks met
  }
}

// One rank's part of an in-place all-reduce: elements [begin, end) of every rank's tensor become
// op over the ranks, in rank order (accumulated in rank 0's tensor, then copied to the others).
// Ranks take disjoint ranges, so they work at once without locks.
void reduce_range_in_place(const std::vector<Tensor>& tensors, ReduceOp op, int64_t begin,
                           int64_t end) {
  if (begin >= end) return;
  const size_t item = dtype_size(tensors[0].dtype());
  char* acc = static_cast<char*>(tensors[0].raw_data()) + size_t(begin) * item;
  reduce_range(tensors, op, begin, end, acc);
  for (size_t r = 1; r < tensors.size(); ++r) {
    std::memcpy(static_cast<char*>(tensors[r].raw_data()) + size_t(begin) * item, acc,
                size_t(end - begin) * item);
  }
}

void check_reducible(const Tensor& t) {
  const DType d = t.dtype();
  if (d != DType::kFloat32 && d != DType::kFloat64 && d != DType::kInt32 && d != DType::kInt64) {
    throw CollectiveError(std::string("all_reduce: dtype ") + dtype_name(d) +
                          " is not supported; use float32, float64, int32 or int64");
  }
}

void copy_into(Tensor& dst, const Tensor& src) {
  if (src.nbytes() > 0) std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
}

void check_local(const Tensor& t, const char* what) {
  if (!t.defined()) throw ValueError(std::string(what) + ": the tensor is undefined");
  if (t.device().type != DeviceType::kCPU) {
    throw DeviceError(std::string(what) + ": the in-process communicator handles CPU tensors; got "
                      "one on " + t.device().to_string() + " (GPU replicas use NCCL)");
  }
}

// Outputs of one collective, one per rank.
using Compute = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

}  // namespace

// One collective in progress: where the ranks' inputs meet and the result waits for them.
struct Round {
  std::string what;            // "all_reduce(SUM)", ... : every rank must issue the same
  std::vector<Tensor> inputs;  // by rank
  std::vector<bool> arrived;
  int count = 0;
  bool ready = false;
  std::string error;
  std::vector<Tensor> outputs;  // by rank
  int departed = 0;
};

struct InProcessGroup::State {
  int world = 0;
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable cv;
  std::map<uint64_t, Round> rounds;  // by sequence number
  std::string aborted;               // set by abort(): every collective fails from then on

  // Rank `rank`'s part of collective number `seq`; returns its output.
  // With `inputs`, also hands back every rank's input (for collectives the ranks then share).
  Tensor meet(uint64_t seq, int rank, const std::string& what, const Tensor& input,
              const Compute& compute, std::vector<Tensor>* inputs = nullptr) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!aborted.empty()) throw CollectiveError("InProcessGroup: " + aborted);
    Round& round = rounds[seq];
    if (round.inputs.empty()) {
      round.what = what;
      round.inputs.resize(size_t(world));
      round.arrived.assign(size_t(world), false);
    } else if (round.what != what && round.error.empty()) {
      round.error = "collective #" + std::to_string(seq) + ": rank " + std::to_string(rank) +
                    " called " + what + " while another rank called " + round.what +
                    "; every rank must issue the same collectives in the same order";
    }
    round.inputs[size_t(rank)] = input;
    round.arrived[size_t(rank)] = true;
    if (++round.count == world) {
      if (round.error.empty()) {
        // The last rank computes, outside the lock: the others are parked on this round only.
        std::vector<Tensor> inputs = round.inputs;
        lock.unlock();
        std::vector<Tensor> outputs;
        std::string error;
        try {
          outputs = compute(inputs);
        } catch (const std::exception& e) {
          error = e.what();
        }
        lock.lock();
        round.outputs = std::move(outputs);
        if (round.error.empty()) round.error = error;
      }
      round.ready = true;
      cv.notify_all();
    } else {
      const bool ok = cv.wait_for(lock, timeout, [&] { return round.ready || !aborted.empty(); });
      if (!round.ready && !aborted.empty()) throw CollectiveError("InProcessGroup: " + aborted);
      if (!ok) {
        std::string missing;
        for (int r = 0; r < world; ++r) {
          if (!round.arrived[size_t(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        }
        round.error = what + " (collective #" + std::to_string(seq) + ") timed out after " +
                      std::to_string(timeout.count()) + " ms waiting for rank(s) " + missing +
                      " of " + std::to_string(world) +
                      "; every rank must issue the same collectives in the same order";
        round.ready = true;  // the late ranks fail at once rather than wait again
        cv.notify_all();
      }
    }
    const std::string error = round.error;
    Tensor out = error.empty() && !round.outputs.empty() ? round.outputs[size_t(rank)] : Tensor();
    if (inputs != nullptr && error.empty()) *inputs = round.inputs;
    if (++round.departed == world) rounds.erase(seq);
    if (!error.empty()) throw CollectiveError("InProcessGroup: " + error);
    return out;
  }
};

namespace {

// Checks that every rank passed the same shape and dtype.
void check_same_shapes(const std::vector<Tensor>& inputs, const char* what) {
  for (size_t r = 1; r < inputs.size(); ++r) {
    if (inputs[r].shape() != inputs[0].shape() || inputs[r].dtype() != inputs[0].dtype()) {
      throw CollectiveError(std::string(what) + ": rank 0 passed " + dtype_name(inputs[0].dtype()) +
                            " " + inputs[0].shape().to_string() + " but rank " + std::to_string(r) +
                            " passed " + dtype_name(inputs[r].dtype()) + " " +
                            inputs[r].shape().to_string() + "; every rank needs the same");
    }
  }
}

class AsyncWork : public Work {
 public:
  void wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  bool done() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  void finish(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = error;
    done_ = true;
    cv_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class RankCommunicator : public Communicator {
 public:
  RankCommunicator(std::shared_ptr<InProcessGroup::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}
  ~RankCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      stopping_ = true;
    }
    queue_cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  int rank() const override { return rank_; }
  int world_size() const override { return state_->world; }

  void all_reduce(Tensor& t, ReduceOp op) override {
    check_reduce(t, op, "all_reduce");
    const uint64_t seq = next_seq_;
    next_seq_ += 2;
    run_all_reduce(seq, t, op);
  }

  std::shared_ptr<Work> all_reduce_async(Tensor t, ReduceOp op) override {
    check_reduce(t, op, "all_reduce_async");
    auto work = std::make_shared<AsyncWork>();
    const uint64_t seq = next_seq_;  // numbered now: the order of issue is the order of match
    next_seq_ += 2;
    enqueue([this, seq, t, op, work]() mutable {
      try {
        run_all_reduce(seq, t, op);
        work->finish(nullptr);
      } catch (...) {
        work->finish(std::current_exception());
      }
    });
    return work;
  }

  void broadcast(Tensor& t, int root) override {
    check_local(t, "broadcast");
    if (root < 0 || root >= world_size()) {
      throw ValueError("broadcast: root " + std::to_string(root) + " is not a rank of a group of " +
                       std::to_string(world_size()));
    }
    const Tensor out = state_->meet(
        next_seq_++, rank_, "broadcast(root " + std::to_string(root) + ")", t,
        [root](const std::vector<Tensor>& in) {
          check_same_shapes(in, "broadcast");
          return std::vector<Tensor>(in.size(), in[size_t(root)].clone());
        });
    copy_into(t, out);
  }

  Tensor all_gather(const Tensor& t) override {
    check_local(t, "all_gather");
    if (t.rank() == 0) throw ShapeError("all_gather: needs a tensor of rank >= 1 (gathered along axis 0)");
    return state_->meet(next_seq_++, rank_, "all_gather", t, [](const std::vector<Tensor>& in) {
      check_same_shapes(in, "all_gather");
      std::vector<int64_t> dims = in[0].shape().dims();
      dims[0] *= int64_t(in.size());
      Tensor out = Tensor::empty(Shape(dims), in[0].dtype(), in[0].device());
      char* dst = static_cast<char*>(out.raw_data());
      for (const Tensor& x : in) {
        if (x.nbytes() == 0) continue;
        std::memcpy(dst, x.raw_data(), x.nbytes());
        dst += x.nbytes();
      }
      return std::vector<Tensor>(in.size(), out);
    }).clone();
  }

  // Every rank reduces its own part, reading the others' tensors in place; a second meeting
  // keeps each tensor unchanged until every rank has read it. Uses two sequence numbers.
  Tensor reduce_scatter(const Tensor& t, ReduceOp op) override {
    check_reduce(t, op, "reduce_scatter");
    const int world = world_size();
    if (t.rank() == 0 || t.dim(0) % world != 0) {
      throw ShapeError("reduce_scatter: axis 0 of " + t.shape().to_string() +
                       " must divide into " + std::to_string(world) + " equal parts (one per rank)");
    }
    const uint64_t seq = next_seq_;
    next_seq_ += 2;
    const std::string what = std::string("reduce_scatter(") + op_name(op) + ")";
    std::vector<Tensor> inputs;
    state_->meet(seq, rank_, what, t,
                 [](const std::vector<Tensor>& in) {
                   check_same_shapes(in, "reduce_scatter");
                   check_reducible(in[0]);
                   return std::vector<Tensor>();
                 },
                 &inputs);
    std::vector<int64_t> dims = t.shape().dims();
    dims[0] /= world;
    Tensor out = Tensor::empty(Shape(dims), t.dtype(), t.device());
    const int64_t part = out.numel();
    reduce_range(inputs, op, part * rank_, part * (rank_ + 1), out.raw_data());
    wait_for_all(seq + 1, what + " done");
    return out;
  }

  void barrier() override { wait_for_all(next_seq_++, "barrier"); }

 private:
  // Meeting `seq` with nothing exchanged: returns once every rank has arrived.
  void wait_for_all(uint64_t seq, const std::string& what) {
    state_->meet(seq, rank_, what, Tensor(), [](const std::vector<Tensor>& in) {
      return std::vector<Tensor>(in.size());
    });
  }

  void check_reduce(const Tensor& t, ReduceOp op, const char* what) {
    check_local(t, what);
    if (op != ReduceOp::kSum && op != ReduceOp::kMean && op != ReduceOp::kMax && op != ReduceOp::kMin) {
      throw ValueError(std::string(what) + ": the reduction must be SUM, MEAN, MAX or MIN");
    }
  }

  // In place, with every rank working: once all have arrived, rank r reduces its own range of
  // the elements across every rank's tensor and writes the result into all of them; a second
  // meeting keeps each rank from returning before every range is written. Each element is
  // reduced once, in rank order, so every rank gets the same bits. Uses sequence numbers seq and
  // seq + 1.
  void run_all_reduce(uint64_t seq, Tensor& t, ReduceOp op) {
    const std::string what = std::string("all_reduce(") + op_name(op) + ")";
    std::vector<Tensor> tensors;
    state_->meet(seq, rank_, what, t,
                 [](const std::vector<Tensor>& in) {
                   check_same_shapes(in, "all_reduce");
                   check_reducible(in[0]);
                   return std::vector<Tensor>();
                 },
                 &tensors);
    const int64_t n = t.numel(), world = world_size();
    const int64_t chunk = ((n + world - 1) / world + 15) / 16 * 16;  // 64-byte aligned for float
    reduce_range_in_place(tensors, op, std::min(n, chunk * rank_), std::min(n, chunk * (rank_ + 1)));
    wait_for_all(seq + 1, what + " done");
  }

  void enqueue(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (!worker_.joinable()) worker_ = std::thread([this] { work_loop(); });
    queue_.push_back(std::move(task));
    queue_cv_.notify_one();
  }

  // Runs async collectives in the order they were issued.
  void work_loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(queue_mutex_);
        queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::shared_ptr<InProcessGroup::State> state_;
  int rank_;
  uint64_t next_seq_ = 0;
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace

InProcessGroup::InProcessGroup(int world_size, std::chrono::milliseconds timeout)
    : state_(std::make_shared<State>()) {
  if (world_size < 1) {
    throw ValueError("InProcessGroup: world_size must be >= 1, got " + std::to_string(world_size));
  }
  state_->world = world_size;
  state_->timeout = timeout;
  for (int r = 0; r < world_size; ++r) {
    communicators_.push_back(std::make_shared<RankCommunicator>(state_, r));
  }
}

InProcessGroup::~InProcessGroup() = default;

int InProcessGroup::world_size() const { return state_->world; }

void InProcessGroup::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->aborted = reason.empty() ? "the group was aborted" : reason;
  state_->cv.notify_all();
}

std::shared_ptr<Communicator> InProcessGroup::communicator(int rank) {
  if (rank < 0 || rank >= state_->world) {
    throw ValueError("InProcessGroup::communicator: rank " + std::to_string(rank) +
                     " is not in [0, " + std::to_string(state_->world) + ")");
  }
  return communicators_[size_t(rank)];
}

}  // namespace strata::distribute
