#include "distribute/parameter_server/cluster_coordinator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "distribute/errors.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/wire/error_transport.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/worker_client.h"
#include "framework/config/json.h"
#include "framework/model/model.h"
#include "framework/saving/keras3_compile_config.h"

namespace strata::distribute {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds from an option, bounded (negative or NaN: 0; at most ~30 years) so that no
// conversion overflows.
std::chrono::milliseconds to_ms(double seconds) {
  if (!(seconds > 0)) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(int64_t(std::min(seconds, 1e9) * 1000));
}

struct QueuedClosure {
  Closure closure;
  RemoteValue value;
};

}  // namespace

struct ClusterCoordinator::Impl {
  CoordinatorOptions options;
  std::vector<std::unique_ptr<ClosureRunner>> workers;
  std::vector<std::thread> threads;
  std::thread ps_watcher;

  mutable std::mutex mutex;
  std::condition_variable work_cv;  // closures queued, datasets added, or stopping
  std::condition_variable idle_cv;  // a closure finished, a worker failed, or a fatal error
  std::deque<QueuedClosure> queue;
  int64_t in_flight = 0;
  bool stopping = false;
  // The first error a closure ended with, raised once (then cleared); a fatal error, raised
  // always.
  std::exception_ptr pending_error;
  std::string fatal_error;
  std::vector<PerWorkerDatasetSpec> datasets;
  int64_t next_dataset_id = 0;
  std::shared_ptr<const WorkerModelSpec> model;
  int64_t model_version = 0;
  std::vector<int64_t> model_built;  // per worker: the model_version it has
  // Per worker: datasets built so far (index into `datasets`), whether it takes closures now,
  // why it last failed, counters.
  std::vector<size_t> datasets_built;
  std::vector<bool> up;
  std::vector<std::string> last_failure;
  std::vector<int64_t> completed, preparations;
  int64_t requeued = 0;
  // Workers taking closures now, and since when none has (valid while `available` is 0).
  int available = 0;
  Clock::time_point none_available_since = Clock::now();

  Clock::duration recovery_timeout() const {
    return to_ms(options.worker_recovery_timeout_seconds);
  }

  void raise_pending_locked() {
    if (!fatal_error.empty()) throw CoordinationError(fatal_error);
    if (pending_error) {
      std::exception_ptr e = pending_error;
      pending_error = nullptr;  // raised once
      std::rethrow_exception(e);
    }
  }

  void fail_all_queued_locked(std::exception_ptr error) {
    for (QueuedClosure& q : queue) q.value.set_error(error);
    queue.clear();
  }

  void set_fatal_locked(const std::string& message) {
    if (!fatal_error.empty()) return;
    fatal_error = message;
    fail_all_queued_locked(std::make_exception_ptr(CoordinationError(message)));
    idle_cv.notify_all();
    work_cv.notify_all();
  }

  // The first error wins: raised once from the next schedule/join/done, and the closures still
  // queued are cancelled (TensorFlow's semantics).
  void raise_later_locked(std::exception_ptr error, const std::string& function,
                          const std::string& message) {
    if (pending_error || !fatal_error.empty()) return;
    pending_error = error;
    fail_all_queued_locked(std::make_exception_ptr(CancelledError(
        "ClusterCoordinator: this closure was cancelled because an earlier closure ('" +
        function + "') failed: " + message)));
  }

  void mark_up_locked(int w) {
    if (up[w]) return;
    up[w] = true;
    ++available;
  }

  void mark_down_locked(int w, const std::string& why) {
    last_failure[w] = why;
    if (!up[w]) return;
    up[w] = false;
    if (--available == 0) none_available_since = Clock::now();
    idle_cv.notify_all();  // a join waiting without a deadline takes one now
  }

  bool none_available_too_long_locked() const {
    return available == 0 && Clock::now() - none_available_since >= recovery_timeout();
  }

  std::string no_worker_message_locked(size_t waiting) const {
    std::string names;
    for (size_t w = 0; w < workers.size(); ++w) {
      names += (names.empty() ? "" : "; ") + workers[w]->task() + ": " +
               (last_failure[w].empty() ? std::string("has not answered yet") : last_failure[w]);
    }
    std::ostringstream seconds;
    seconds << options.worker_recovery_timeout_seconds;
    return "ClusterCoordinator: no worker could take the " + std::to_string(waiting) +
           " waiting closure(s) for " + seconds.str() +
           " s (CoordinatorOptions::worker_recovery_timeout_seconds) [" + names +
           "]. The workers are still being retried and take closures again when they answer: "
           "restart them, or check the network between them and this task";
  }

  // With closures waiting and no worker for worker_recovery_timeout_seconds, the waiting
  // closures fail and the error is raised once.
  void check_no_worker_locked() {
    if (stopping || !fatal_error.empty() || queue.empty() || !none_available_too_long_locked()) {
      return;
    }
    const std::string message = no_worker_message_locked(queue.size());
    std::cerr << message << "\n";
    const std::exception_ptr error = std::make_exception_ptr(CoordinationError(message));
    fail_all_queued_locked(error);
    if (!pending_error) pending_error = error;
    idle_cv.notify_all();
  }

  // Waits until no closure is queued or running (or a fatal error), or `deadline`; checks the
  // no-worker bound on the way. True when idle.
  bool wait_idle_locked(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
    for (;;) {
      check_no_worker_locked();
      if (!fatal_error.empty() || (queue.empty() && in_flight == 0)) return true;
      const Clock::time_point now = Clock::now();
      if (now >= deadline) return false;
      Clock::time_point until = deadline;
      if (available == 0) until = std::min(until, none_available_since + recovery_timeout());
      if (until == Clock::time_point::max()) {
        idle_cv.wait(lock);
      } else {
        idle_cv.wait_until(lock, std::max(until, now + std::chrono::milliseconds(1)));
      }
    }
  }

  // Blocks until worker `w` is prepared for closures: every per-worker dataset built anew
  // (`rebuild`: its first start, or it came back after failing) or just the ones added since.
  // `wait_idle`: its last closure timed out and may still run there; it takes no other before
  // it says it is idle. Tries for as long as the coordinator lives; false when stopping or on a
  // fatal error.
  bool bring_up(int w, bool rebuild, bool wait_idle) {
    bool said_retrying = false;
    for (bool first_try = true;; first_try = false) {
      WorkerSetup setup;
      size_t known = 0;
      int64_t version = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (!first_try) {
          check_no_worker_locked();
          work_cv.wait_for(lock, to_ms(options.worker_retry_interval_seconds),
                           [&] { return stopping || !fatal_error.empty(); });
        }
        if (stopping || !fatal_error.empty()) return false;
      }
      if (wait_idle) {
        const ClosureRunner::Probe probe = workers[w]->probe();
        if (probe == ClosureRunner::Probe::kBusy) continue;
        wait_idle = false;
        // Not answering: it may have died since; start it over as a worker that came back.
        if (probe == ClosureRunner::Probe::kUnreachable) rebuild = true;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        setup.rebuild = rebuild;
        known = datasets.size();
        const size_t from = rebuild ? 0 : datasets_built[w];
        setup.datasets.assign(datasets.begin() + int64_t(from), datasets.end());
        version = model_version;
        if (rebuild || model_built[w] != version) setup.model = model;
      }
      bool ready = false;
      try {
        ready = workers[w]->prepare(setup);
      } catch (const std::exception& e) {
        // Every worker would refuse it alike (same binary, same request): the job cannot go on.
        std::lock_guard<std::mutex> lock(mutex);
        set_fatal_locked("ClusterCoordinator: " + workers[w]->task() +
                         " could not get ready for closures: " + e.what());
        return false;
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (ready) {
        datasets_built[w] = known;
        model_built[w] = version;
        if (rebuild) ++preparations[w];
        return true;
      }
      std::string why = workers[w]->unavailable_reason();
      if (why.empty()) why = last_failure[w].empty() ? "did not answer" : last_failure[w];
      mark_down_locked(w, why);
      if (!said_retrying) {
        said_retrying = true;
        std::cerr << "ClusterCoordinator: " << workers[w]->task()
                  << " is not ready; retrying it every " << options.worker_retry_interval_seconds
                  << " s\n";
      }
    }
  }

  // Pings every ps in turn; the first that does not answer ends the job (its variables, and
  // so the training, are gone), named in every later schedule/join.
  void watch_ps(std::vector<std::shared_ptr<ParameterClient>> ps) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_cv.wait_for(lock, to_ms(options.ps_ping_interval_seconds),
                         [&] { return stopping || !fatal_error.empty(); });
        if (stopping || !fatal_error.empty()) return;
      }
      for (const auto& client : ps) {
        try {
          client->ping();
        } catch (const Error& e) {
          std::lock_guard<std::mutex> lock(mutex);
          set_fatal_locked(std::string("ClusterCoordinator: ") + e.what());
          return;
        }
      }
    }
  }

  // What worker `w` must do before its next closure: be prepared anew, or wait to be idle.
  struct Readiness {
    bool rebuild = true;  // the first preparation builds everything
    bool wait_idle = false;
  };

  // Files `outcome` of `job`, run on worker `w`; the lock is held.
  void settle_locked(int w, QueuedClosure& job, const ClosureOutcome& outcome, Readiness& next) {
    const std::string& function = job.closure.function;
    switch (outcome.kind) {
      case ClosureOutcome::Kind::kOk:
        job.value.set_value(outcome.values);
        ++completed[w];
        return;
      case ClosureOutcome::Kind::kUserError: {
        const std::exception_ptr error = make_error(outcome.error_type, outcome.message);
        job.value.set_error(error);
        raise_later_locked(error, function, outcome.message);
        return;
      }
      case ClosureOutcome::Kind::kTimedOut: {
        // The step may still be applying its updates there: not re-run anywhere; the worker
        // takes no other closure before it is idle.
        const std::exception_ptr error = std::make_exception_ptr(CoordinationError(outcome.message));
        job.value.set_error(error);
        raise_later_locked(error, function, outcome.message);
        mark_down_locked(w, "still running a closure that timed out");
        next.wait_idle = true;
        return;
      }
      case ClosureOutcome::Kind::kPsUnavailable:
        job.value.set_error(std::make_exception_ptr(CoordinationError(outcome.message)));
        set_fatal_locked(outcome.message);
        return;
      case ClosureOutcome::Kind::kWorkerUnavailable:
        // At-least-once: the closure runs again elsewhere (or here, once the worker is back).
        mark_down_locked(w, outcome.message);
        if (fatal_error.empty() && !stopping) {
          std::cerr << "ClusterCoordinator: " << workers[w]->task() << " failed during '"
                    << function << "' (" << outcome.message
                    << "); the closure goes back to the queue\n";
          queue.push_front(std::move(job));
          ++requeued;
        } else {
          job.value.set_error(std::make_exception_ptr(CancelledError(
              "ClusterCoordinator: closure '" + function + "' did not run: " +
              (fatal_error.empty() ? std::string("the coordinator stopped") : fatal_error))));
        }
        next.rebuild = true;
        work_cv.notify_all();
        return;
    }
  }

  void worker_loop(int w) {
    Readiness next;
    for (;;) {
      bool need_prepare = next.rebuild || next.wait_idle;
      {
        std::lock_guard<std::mutex> lock(mutex);
        need_prepare = need_prepare || datasets_built[w] < datasets.size() ||
                       model_built[w] != model_version;
      }
      if (need_prepare) {
        if (!bring_up(w, next.rebuild, next.wait_idle)) return;
        next = Readiness{false, false};
      }
      QueuedClosure job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        mark_up_locked(w);
        work_cv.wait(lock, [&] {
          return stopping || !queue.empty() || datasets_built[w] < datasets.size() ||
                 model_built[w] != model_version;
        });
        if (stopping) return;
        // Datasets created since this worker was prepared come first: a closure may read them.
        if (queue.empty() || datasets_built[w] < datasets.size() ||
            model_built[w] != model_version) {
          continue;
        }
        job = std::move(queue.front());
        queue.pop_front();
        ++in_flight;
      }
      const ClosureOutcome outcome = workers[w]->run(job.closure);
      std::lock_guard<std::mutex> lock(mutex);
      --in_flight;
      settle_locked(w, job, outcome, next);
      idle_cv.notify_all();
    }
  }
};

ClusterCoordinator::ClusterCoordinator(std::vector<std::unique_ptr<ClosureRunner>> workers,
                                       CoordinatorOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (workers.empty()) {
    throw ValueError("ClusterCoordinator: the cluster has no worker tasks; a parameter-server "
                     "cluster needs at least one 'worker' in TF_CONFIG's cluster");
  }
  Impl& m = *impl_;
  m.options = options;
  m.workers = std::move(workers);
  const size_t n = m.workers.size();
  m.datasets_built.assign(n, 0);
  m.model_built.assign(n, 0);
  m.up.assign(n, false);
  m.last_failure.assign(n, "");
  m.completed.assign(n, 0);
  m.preparations.assign(n, 0);
  for (size_t w = 0; w < n; ++w) m.threads.emplace_back([this, w] { impl_->worker_loop(int(w)); });
}

namespace {
std::vector<std::unique_ptr<ClosureRunner>> worker_clients(const ParameterServerStrategy& strategy,
                                                           const CoordinatorOptions& options) {
  std::vector<std::unique_ptr<ClosureRunner>> runners;
  for (const auto& [task, address] : strategy.worker_tasks()) {
    runners.push_back(std::make_unique<WorkerClient>(
        task, address, strategy.options(), to_ms(options.closure_timeout_seconds)));
  }
  return runners;
}

// The ping's own deadline: a ps that hangs is seen within a few seconds, not rpc_timeout.
ParameterServerOptions ping_options(ParameterServerOptions options) {
  options.rpc_timeout = std::min(options.rpc_timeout, std::chrono::milliseconds(5000));
  return options;
}
}  // namespace

ClusterCoordinator::ClusterCoordinator(std::shared_ptr<ParameterServerStrategy> strategy,
                                       CoordinatorOptions options)
    : ClusterCoordinator(worker_clients(*strategy, options), options) {
  strategy_ = std::move(strategy);
  std::vector<std::shared_ptr<ParameterClient>> pingers;
  for (const auto& ps : strategy_->ps_clients()) {
    pingers.push_back(
        std::make_shared<ParameterClient>(ps->task(), ps->address(), ping_options(strategy_->options())));
  }
  impl_->ps_watcher = std::thread([this, pingers] { impl_->watch_ps(pingers); });
  strategy_->attach_coordinator(this);  // what fit under the strategy schedules on
}

ClusterCoordinator::~ClusterCoordinator() {
  if (strategy_) strategy_->detach_coordinator(this);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
    impl_->fail_all_queued_locked(std::make_exception_ptr(
        CancelledError("ClusterCoordinator: the coordinator was destroyed before this closure "
                       "ran")));
  }
  impl_->work_cv.notify_all();
  for (auto& r : impl_->workers) r->cancel();
  for (std::thread& t : impl_->threads) t.join();
  if (impl_->ps_watcher.joinable()) impl_->ps_watcher.join();
}

RemoteValue ClusterCoordinator::schedule(const std::string& function, std::vector<Tensor> args,
                                         const PerWorkerIterator* iterator) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->check_no_worker_locked();
  impl_->raise_pending_locked();
  if (impl_->none_available_too_long_locked()) {
    throw CoordinationError(impl_->no_worker_message_locked(1));
  }
  QueuedClosure q;
  q.closure.function = function;
  q.closure.args = std::move(args);
  if (iterator != nullptr) q.closure.dataset_id = iterator->dataset_id();
  RemoteValue value = q.value;
  impl_->queue.push_back(std::move(q));
  impl_->work_cv.notify_all();  // all: the ps watcher waits on it too
  return value;
}

void ClusterCoordinator::join() {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->wait_idle_locked(lock, Clock::time_point::max());
  impl_->raise_pending_locked();
}

bool ClusterCoordinator::join_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  const bool idle = impl_->wait_idle_locked(lock, Clock::now() + timeout);
  impl_->raise_pending_locked();
  return idle;
}

int64_t ClusterCoordinator::cancel_queued(const std::string& reason) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const int64_t n = int64_t(impl_->queue.size());
  impl_->fail_all_queued_locked(std::make_exception_ptr(CancelledError(reason)));
  impl_->idle_cv.notify_all();
  return n;
}

bool ClusterCoordinator::done() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->check_no_worker_locked();
  impl_->raise_pending_locked();
  return impl_->queue.empty() && impl_->in_flight == 0;
}

PerWorkerDataset ClusterCoordinator::create_per_worker_dataset(const std::string& function) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->raise_pending_locked();
  const int64_t id = impl_->next_dataset_id++;
  impl_->datasets.push_back(PerWorkerDatasetSpec{id, function});
  impl_->work_cv.notify_all();
  return PerWorkerDataset(id, function);
}

void ClusterCoordinator::set_model(std::shared_ptr<const WorkerModelSpec> model) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->raise_pending_locked();
  impl_->model = std::move(model);
  ++impl_->model_version;
  impl_->work_cv.notify_all();
}

void ClusterCoordinator::set_model(const Model& model) {
  auto spec = std::make_shared<WorkerModelSpec>();
  spec->model_json = model.to_json();
  if (model.compiled()) spec->compile_config_json = saving::keras3_compile_config(model).dump();
  if (strategy_) spec->placement_json = strategy_->placement_json();
  set_model(std::shared_ptr<const WorkerModelSpec>(std::move(spec)));
}

void ClusterCoordinator::report_fatal_error(const std::string& message) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->set_fatal_locked(message);
}

int ClusterCoordinator::num_workers() const { return int(impl_->workers.size()); }

std::vector<int64_t> ClusterCoordinator::closures_completed_per_worker() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->completed;
}

int64_t ClusterCoordinator::closures_requeued() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->requeued;
}

int64_t ClusterCoordinator::worker_preparations(int index) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->preparations.at(size_t(index));
}

int64_t ClusterCoordinator::closures_queued() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return int64_t(impl_->queue.size());
}

bool ClusterCoordinator::worker_available(int index) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->up.at(size_t(index));
}

}  // namespace strata::distribute
