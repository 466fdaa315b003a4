#include "distribute/parameter_server/cluster_coordinator.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <thread>

#include "distribute/coordination/key_value_store.h"
#include "distribute/parameter_server/error_transport.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/worker_client.h"
#include "framework/config/json.h"
#include "framework/model/model.h"
#include "framework/saving/keras3_compile_config.h"

namespace strata::distribute {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(int64_t(seconds * 1000));
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
  std::condition_variable idle_cv;  // a closure finished, or a fatal error
  std::deque<QueuedClosure> queue;
  int64_t in_flight = 0;
  bool stopping = false;
  // The first step-function error, raised once (then cleared); a fatal error, raised always.
  std::exception_ptr user_error;
  std::string fatal_error;
  std::vector<PerWorkerDatasetSpec> datasets;
  int64_t next_dataset_id = 0;
  std::shared_ptr<const WorkerModelSpec> model;
  int64_t model_version = 0;
  std::vector<int64_t> model_built;  // per worker: the model_version it has
  // Per worker: datasets built so far (index into `datasets`), whether given up, counters.
  std::vector<size_t> datasets_built;
  std::vector<bool> given_up;
  std::vector<int64_t> completed, preparations;
  int64_t requeued = 0;

  void raise_pending_locked() {
    if (!fatal_error.empty()) throw CoordinationError(fatal_error);
    if (user_error) {
      std::exception_ptr e = user_error;
      user_error = nullptr;  // raised once
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

  bool all_given_up_locked() const {
    for (bool g : given_up) {
      if (!g) return false;
    }
    return true;
  }

  // Blocks until worker `w` is prepared for closures: every per-worker dataset built anew
  // (`rebuild`: its first start, or it came back after failing) or just the ones added since.
  // False when stopping or the worker was given up.
  bool bring_up(int w, bool rebuild) {
    const Clock::time_point down_since = Clock::now();
    for (bool first_try = true;; first_try = false) {
      WorkerSetup setup;
      setup.rebuild = rebuild;
      size_t known = 0;
      int64_t version = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (!first_try) {
          work_cv.wait_for(lock, to_ms(options.worker_retry_interval_seconds),
                           [&] { return stopping; });
        }
        if (stopping) return false;
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
      if (ready) {
        std::lock_guard<std::mutex> lock(mutex);
        datasets_built[w] = known;
        model_built[w] = version;
        if (rebuild) ++preparations[w];
        return true;
      }
      if (Clock::now() - down_since > to_ms(options.worker_recovery_timeout_seconds)) {
        give_up(w);
        return false;
      }
    }
  }

  void give_up(int w) {
    std::lock_guard<std::mutex> lock(mutex);
    given_up[w] = true;
    std::cerr << "ClusterCoordinator: giving up " << workers[w]->task() << ": it did not come "
              << "back within " << options.worker_recovery_timeout_seconds << " s\n";
    if (!all_given_up_locked() || (queue.empty() && in_flight == 0)) return;
    std::string names;
    for (const auto& r : workers) names += (names.empty() ? "" : ", ") + r->task();
    set_fatal_locked("ClusterCoordinator: no worker is left to run the " +
                     std::to_string(queue.size()) + " queued closure(s): " + names +
                     " did not answer for " +
                     std::to_string(int64_t(options.worker_recovery_timeout_seconds)) +
                     " s (CoordinatorOptions::worker_recovery_timeout_seconds). Restart the "
                     "workers, or check the network between them and this task");
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

  void worker_loop(int w) {
    bool rebuild = true;  // the first preparation builds everything
    for (;;) {
      bool need_prepare = rebuild;
      {
        std::lock_guard<std::mutex> lock(mutex);
        need_prepare = need_prepare || datasets_built[w] < datasets.size() ||
                       model_built[w] != model_version;
      }
      if (need_prepare) {
        if (!bring_up(w, rebuild)) return;
        rebuild = false;
      }
      QueuedClosure job;
      {
        std::unique_lock<std::mutex> lock(mutex);
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
      switch (outcome.kind) {
        case ClosureOutcome::Kind::kOk:
          job.value.set_value(outcome.values);
          ++completed[w];
          break;
        case ClosureOutcome::Kind::kUserError: {
          std::exception_ptr error = make_error(outcome.error_type, outcome.message);
          job.value.set_error(error);
          // The first error wins; the queue is cancelled (TensorFlow's semantics).
          if (!user_error && fatal_error.empty()) {
            user_error = error;
            fail_all_queued_locked(std::make_exception_ptr(CancelledError(
                "ClusterCoordinator: closure '" + job.closure.function +
                "' was cancelled because an earlier closure raised: " + outcome.message)));
          }
          break;
        }
        case ClosureOutcome::Kind::kPsUnavailable:
          job.value.set_error(std::make_exception_ptr(CoordinationError(outcome.message)));
          set_fatal_locked(outcome.message);
          break;
        case ClosureOutcome::Kind::kWorkerUnavailable:
          // At-least-once: the closure runs again elsewhere (or here, once the worker is back).
          std::cerr << "ClusterCoordinator: " << workers[w]->task() << " failed during '"
                    << job.closure.function << "' (" << outcome.message
                    << "); the closure goes back to the queue\n";
          if (fatal_error.empty() && !stopping) {
            queue.push_front(std::move(job));
            ++requeued;
          } else {
            job.value.set_error(std::make_exception_ptr(CancelledError(
                "ClusterCoordinator: closure '" + job.closure.function + "' did not run: " +
                (fatal_error.empty() ? std::string("the coordinator stopped") : fatal_error))));
          }
          rebuild = true;
          work_cv.notify_all();
          break;
      }
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
  m.given_up.assign(n, false);
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
  impl_->raise_pending_locked();
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
  impl_->idle_cv.wait(lock, [&] {
    return !impl_->fatal_error.empty() || (impl_->queue.empty() && impl_->in_flight == 0);
  });
  impl_->raise_pending_locked();
}

bool ClusterCoordinator::done() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
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

}  // namespace strata::distribute
