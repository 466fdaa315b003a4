#include "distribute/coordination/coordination_state.h"

#include <algorithm>
#include <charconv>

#include "distribute/coordination/key_value_store.h"

namespace strata::distribute::coordination_internal {

namespace {

using grpc::Status;
using grpc::StatusCode;

std::string milliseconds(int64_t ms) { return std::to_string(ms) + " ms"; }

std::string quoted(const std::string& key) { return "'" + key + "'"; }

}  // namespace

CoordinationState::CoordinationState(std::vector<CoordinationTask> tasks,
                                     CoordinationOptions options)
    : options_(options) {
  if (tasks.empty()) {
    throw CoordinationError("coordination service: no tasks to serve: pass every task of the "
                            "cluster spec (the coordinator's own included)");
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (tasks[i].job == tasks[j].job && tasks[i].index == tasks[j].index) {
        throw CoordinationError("coordination service: " + tasks[i].job + " " +
                                std::to_string(tasks[i].index) +
                                " is listed twice in the tasks: each task once");
      }
    }
    tasks_.emplace_back();
    tasks_.back().spec = std::move(tasks[i]);
  }
  watchdog_ = std::thread([this] { watchdog(); });
}

CoordinationState::~CoordinationState() { stop(); }

void CoordinationState::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      const Status stopped(StatusCode::UNAVAILABLE,
                           "the coordination service is stopping (the task hosting it exits)");
      for (auto& [key, waiter] : key_waiters_) waiter.reactor->Finish(stopped);
      key_waiters_.clear();
      for (auto& [id, barrier] : barriers_) {
        for (Reactor* reactor : barrier.waiters) reactor->Finish(stopped);
      }
      barriers_.clear();
    }
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

Status CoordinationState::posted_status() const { return Status(StatusCode::ABORTED, *error_); }

// The first error wins: later ones are consequences of it (a task that stops because of a
// posted error is not news). Every parked call fails with it at once.
void CoordinationState::post_error(const std::string& error) {
  if (error_) return;
  error_ = error;
  const Status posted = posted_status();
  for (auto& [key, waiter] : key_waiters_) waiter.reactor->Finish(posted);
  key_waiters_.clear();
  for (auto& [id, barrier] : barriers_) {
    for (Reactor* reactor : barrier.waiters) reactor->Finish(posted);
  }
  barriers_.clear();
}

Status CoordinationState::admit(const pb::TaskId& task, const std::string& operation,
                                size_t* index) {
  if (stopping_) {
    return Status(StatusCode::UNAVAILABLE,
                  "the coordination service is stopping (the task hosting it exits)");
  }
  auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const TaskState& t) {
    return t.spec.job == task.job() && t.spec.index == task.index();
  });
  if (it == tasks_.end()) {
    std::string known;
    for (const TaskState& t : tasks_) known += (known.empty() ? "" : ", ") + t.spec.name();
    return Status(StatusCode::INVALID_ARGUMENT,
                  operation + ": " + task.job() + " " + std::to_string(task.index()) +
                      " is not a task of the cluster the coordination service serves (" + known +
                      "): start every task with the same cluster spec");
  }
  *index = size_t(it - tasks_.begin());
  if (!it->registered) {
    return Status(StatusCode::FAILED_PRECONDITION,
                  operation + ": " + it->spec.name() +
                      " has not registered with the coordination service: call connect() first");
  }
  if (task.incarnation() != it->incarnation) {
    return Status(StatusCode::FAILED_PRECONDITION,
                  operation + ": the request comes from an earlier process of " +
                      it->spec.name() + " (incarnation " + std::to_string(task.incarnation()) +
                      "; the task registered since as " + std::to_string(it->incarnation) +
                      "): this process was replaced and must exit");
  }
  return Status::OK;
}

void CoordinationState::register_task(const pb::RegisterRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t i = 0;
  Status status = admit(request.task(), "connect", &i);
  // Registering is what admit() checks for; an unknown task or a stopping service still fails.
  if (status.error_code() == StatusCode::FAILED_PRECONDITION) status = Status::OK;
  if (status.ok() && error_) status = posted_status();
  if (!status.ok()) return reactor->Finish(status);
  TaskState& task = tasks_[i];
  const uint64_t incarnation = request.task().incarnation();
  if (task.registered && task.incarnation != incarnation && job_started_) {
    // The others hold state (collective rendezvous, step counts) the new process lacks.
    post_error(task.spec.name() + " restarted (it registered again, as a new process, after the "
               "job had started): the other tasks cannot go on without it. Restart the whole "
               "job; BackupAndRestore resumes it from its last backup");
    return reactor->Finish(posted_status());
  }
  task.registered = true;
  task.incarnation = incarnation;
  task.leaving = false;
  task.last_heartbeat = Clock::now();
  wake_.notify_one();   // its heartbeat deadline
  reactor->Finish(Status::OK);
}

void CoordinationState::heartbeat(const pb::HeartbeatRequest& request,
                                  pb::HeartbeatResponse* response, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t i = 0;
  Status status = admit(request.task(), "heartbeat", &i);
  if (status.ok()) {
    tasks_[i].last_heartbeat = Clock::now();
    // The reply, not a failed status, carries the error: heartbeats are how every task learns it.
    if (error_) response->set_error(*error_);
  }
  reactor->Finish(status);
}

void CoordinationState::barrier(const pb::BarrierRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string& id = request.id();
  const std::string operation = "barrier " + quoted(id);
  size_t i = 0;
  Status status = admit(request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok() && id.empty()) {
    status = Status(StatusCode::INVALID_ARGUMENT,
                    "barrier: the id is empty: give each barrier a name (the same on every task)");
  }
  if (status.ok() && request.timeout_ms() < 0) {
    status = Status(StatusCode::INVALID_ARGUMENT,
                    operation + ": negative timeout " + milliseconds(request.timeout_ms()));
  }
  if (!status.ok()) return reactor->Finish(status);
  auto [it, created] = barriers_.try_emplace(id);
  Barrier& barrier = it->second;
  if (barrier.failure) return reactor->Finish(*barrier.failure);
  if (created) {
    barrier.timeout_ms = request.timeout_ms();
    barrier.deadline = Clock::now() + std::chrono::milliseconds(request.timeout_ms());
  }
  if (id == kShutdownBarrier) tasks_[i].leaving = true;
  barrier.arrived.insert(i);
  barrier.waiters.push_back(reactor);
  if (barrier.arrived.size() < tasks_.size()) {
    wake_.notify_one();   // its deadline
    return;
  }
  for (Reactor* waiter : barrier.waiters) waiter->Finish(Status::OK);
  if (id == kConnectBarrier) job_started_ = true;
  barriers_.erase(it);   // the id may be used again
}

void CoordinationState::publish(const std::string& key, const std::string& value) {
  values_[key] = value;
  auto [begin, end] = key_waiters_.equal_range(key);
  for (auto it = begin; it != end; ++it) {
    it->second.response->set_found(true);
    it->second.response->set_value(value);
    it->second.reactor->Finish(Status::OK);
  }
  key_waiters_.erase(begin, end);
}

namespace {
Status check_key(const std::string& operation, const std::string& key) {
  if (!key.empty()) return Status::OK;
  return Status(StatusCode::INVALID_ARGUMENT, operation + ": the key is empty");
}
}  // namespace

void CoordinationState::set(const pb::SetRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "set(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_key(operation, request.key());
  if (status.ok()) publish(request.key(), request.value());
  reactor->Finish(status);
}

void CoordinationState::get(const pb::GetRequest& request, pb::GetResponse* response,
                            Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "get(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_key(operation, request.key());
  if (status.ok() && request.wait() && request.timeout_ms() < 0) {
    status = Status(StatusCode::INVALID_ARGUMENT,
                    operation + ": negative timeout " + milliseconds(request.timeout_ms()));
  }
  if (!status.ok()) return reactor->Finish(status);
  auto it = values_.find(request.key());
  if (it != values_.end()) {
    response->set_found(true);
    response->set_value(it->second);
    return reactor->Finish(Status::OK);
  }
  if (!request.wait()) return reactor->Finish(Status::OK);   // try_get: not found
  key_waiters_.emplace(request.key(),
                       KeyWaiter{reactor, response,
                                 Clock::now() + std::chrono::milliseconds(request.timeout_ms()),
                                 request.timeout_ms()});
  wake_.notify_one();   // its deadline
}

void CoordinationState::add(const pb::AddRequest& request, pb::AddResponse* response,
                            Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "add(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_key(operation, request.key());
  if (!status.ok()) return reactor->Finish(status);
  int64_t value = 0;
  auto it = values_.find(request.key());
  if (it != values_.end()) {
    const std::string& text = it->second;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      return reactor->Finish(Status(
          StatusCode::INVALID_ARGUMENT,
          operation + ": the value under the key is not a decimal integer (" +
              std::to_string(text.size()) + " bytes): add() counts on keys only add() writes"));
    }
  }
  if (__builtin_add_overflow(value, request.delta(), &value)) {
    return reactor->Finish(Status(StatusCode::INVALID_ARGUMENT,
                                  operation + ": adding " + std::to_string(request.delta()) +
                                      " overflows 64 bits"));
  }
  publish(request.key(), std::to_string(value));
  response->set_value(value);
  reactor->Finish(Status::OK);
}

void CoordinationState::erase(const pb::EraseRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "erase(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_key(operation, request.key());
  if (status.ok()) values_.erase(request.key());
  reactor->Finish(status);
}

void CoordinationState::report_error(const pb::ReportErrorRequest& request,
                                     pb::ReportErrorResponse* response, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t i = 0;
  Status status = admit(request.task(), "report_error", &i);
  if (status.ok()) {
    post_error(tasks_[i].spec.name() + " reported an error: " +
               (request.message().empty() ? "(no message)" : request.message()));
    response->set_error(*error_);   // the job's error: an earlier one if there was
  }
  reactor->Finish(status);
}

std::string CoordinationState::missing_tasks(const std::set<size_t>& arrived) const {
  std::string missing;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!arrived.count(i)) missing += (missing.empty() ? "" : ", ") + tasks_[i].spec.name();
  }
  return missing;
}

std::string CoordinationState::barrier_timeout_message(const std::string& id,
                                                       const Barrier& barrier) const {
  const std::string missing = missing_tasks(barrier.arrived);
  const std::string after = milliseconds(barrier.timeout_ms);
  if (id == kConnectBarrier) {
    return "connect: not every task registered within " + after + "; never came: " + missing +
           ". Start every task of the cluster spec (they may start in any order) at the "
           "addresses it names, or raise CoordinationOptions::register_timeout";
  }
  if (id == kShutdownBarrier) {
    return "shutdown: " + missing + " did not reach the shutdown barrier within " + after +
           ": they failed, hang or are still working; raise "
           "CoordinationOptions::shutdown_timeout if they are only slow";
  }
  return "barrier " + quoted(id) + " timed out after " + after + ": " +
         std::to_string(tasks_.size() - barrier.arrived.size()) + " of " +
         std::to_string(tasks_.size()) + " tasks did not reach it: " + missing +
         ". They failed, hang or took another path; raise the timeout if they are only slow";
}

CoordinationState::Clock::time_point CoordinationState::check_deadlines(Clock::time_point now) {
  Clock::time_point next = now + std::chrono::hours(1);
  for (auto it = key_waiters_.begin(); it != key_waiters_.end();) {
    const KeyWaiter& waiter = it->second;
    if (waiter.deadline > now) {
      next = std::min(next, waiter.deadline);
      ++it;
      continue;
    }
    std::set<size_t> registered;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (tasks_[i].registered) registered.insert(i);
    }
    std::string message = "get(" + quoted(it->first) + ") timed out after " +
                          milliseconds(waiter.timeout_ms) +
                          ": no task set the key. The task that publishes it failed, is slow or "
                          "uses another key; raise the timeout if it is only slow";
    if (registered.size() < tasks_.size()) {
      message += " (not registered yet: " + missing_tasks(registered) + ")";
    }
    waiter.reactor->Finish(Status(StatusCode::DEADLINE_EXCEEDED, message));
    it = key_waiters_.erase(it);
  }
  for (auto& [id, barrier] : barriers_) {
    if (barrier.failure) continue;
    if (barrier.deadline > now) {
      next = std::min(next, barrier.deadline);
      continue;
    }
    barrier.failure = Status(StatusCode::DEADLINE_EXCEEDED, barrier_timeout_message(id, barrier));
    for (Reactor* reactor : barrier.waiters) reactor->Finish(*barrier.failure);
    barrier.waiters.clear();
  }
  if (error_) return next;   // the job has failed already: silence is expected now
  for (const TaskState& task : tasks_) {
    if (!task.registered || task.leaving) continue;
    const Clock::time_point due = task.last_heartbeat + options_.heartbeat_timeout;
    if (due > now) {
      next = std::min(next, due);
      continue;
    }
    post_error(task.spec.name() + " sent no heartbeat for " +
               milliseconds(options_.heartbeat_timeout.count()) +
               ": it died, hung or was cut off from the network. Restart the job; "
               "BackupAndRestore resumes it from its last backup");
    break;
  }
  return next;
}

void CoordinationState::watchdog() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const Clock::time_point next = check_deadlines(Clock::now());
    wake_.wait_until(lock, next);
  }
}

}  // namespace strata::distribute::coordination_internal
