#include "distribute/cluster/coordination/coordination_state.h"

#include <algorithm>
#include <atomic>
#include <charconv>

#include "distribute/cluster/coordination/request_checks.h"
#include "distribute/errors.h"

namespace strata::distribute::coordination_internal {

namespace {

using grpc::Status;
using grpc::StatusCode;

// Every service of this process together (tests run several).
std::atomic<int64_t> g_key_value_bytes{0};

void count_value_bytes(size_t bytes) { g_key_value_bytes.fetch_add(int64_t(bytes)); }

std::string milliseconds(int64_t ms) { return std::to_string(ms) + " ms"; }

std::string quoted(const std::string& key) { return printable(key); }

// A reported error as it is kept and sent to every task: cut to kMaxReportedErrorBytes, control
// characters (other than new lines and tabs) replaced, so that no task's terminal is garbled.
std::string kept_error_text(const std::string& message) {
  std::string text = message.substr(0, kMaxReportedErrorBytes);
  for (char& c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) c = '?';
  }
  if (message.size() > kMaxReportedErrorBytes) {
    text += "... (cut: " + std::to_string(message.size()) + " bytes)";
  }
  return text;
}

// Keys under kMembershipKey are the service's own (the elastic membership it publishes).
Status check_writable(const std::string& operation, const std::string& key) {
  if (key.rfind(kMembershipKey, 0) != 0) return Status::OK;
  return Status(StatusCode::INVALID_ARGUMENT,
                operation + ": keys under '" + std::string(kMembershipKey) + "' are the "
                "coordination service's own (the elastic membership it publishes); choose "
                "another key");
}

Status exhausted(const std::string& operation, const std::string& what) {
  return Status(StatusCode::RESOURCE_EXHAUSTED, operation + ": " + what);
}

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

Status CoordinationState::admit(bool present, const pb::TaskId& task,
                                const std::string& operation, size_t* index) {
  if (stopping_) {
    return Status(StatusCode::UNAVAILABLE,
                  "the coordination service is stopping (the task hosting it exits)");
  }
  if (Status checked = check_task(operation, present, task); !checked.ok()) return checked;
  auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const TaskState& t) {
    return t.spec.job == task.job() && t.spec.index == task.index();
  });
  if (it == tasks_.end()) {
    std::string known;
    for (const TaskState& t : tasks_) known += (known.empty() ? "" : ", ") + t.spec.name();
    return Status(StatusCode::INVALID_ARGUMENT,
                  operation + ": " + printable(task.job(), 64) + " " +
                      std::to_string(task.index()) +
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
  Status status = admit(request.has_task(), request.task(), "connect", &i);
  // Registering is what admit() checks for; an unknown task or a stopping service still fails.
  if (status.error_code() == StatusCode::FAILED_PRECONDITION) status = Status::OK;
  const uint64_t incarnation = request.task().incarnation();
  if (status.ok() && incarnation == 0) {
    status = Status(StatusCode::INVALID_ARGUMENT,
                    "connect: field 'task.incarnation' is 0; a process registers with a random "
                    "non-zero id of its own");
  }
  if (status.ok() && error_) status = posted_status();
  if (!status.ok()) return reactor->Finish(status);
  if (elastic() && !finishing_.empty()) {
    return reactor->Finish(Status(StatusCode::OUT_OF_RANGE,
                                  "connect: the job is finishing (" + finishing_ + "), so " +
                                      tasks_[i].spec.name() + " was not admitted: there is no "
                                      "training left to join"));
  }
  if (elastic()) {
    elastic_register(i, incarnation);
    return reactor->Finish(Status::OK);
  }
  TaskState& task = tasks_[i];
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
  Status status = admit(request.has_task(), request.task(), "heartbeat", &i);
  if (status.ok()) {
    tasks_[i].last_heartbeat = Clock::now();
    if (request.lost_a_peer() && elastic() && generation_ != 0 && !error_) {
      suspicious_until_ = tasks_[i].last_heartbeat + options_.heartbeat_timeout;
      wake_.notify_one();   // the silent members' deadlines come sooner
    }
    // The reply, not a failed status, carries the error: heartbeats are how every task learns it.
    if (error_) response->set_error(*error_);
    response->set_membership_generation(generation_);
    if (!finishing_.empty()) response->set_finishing(finishing_);
  }
  reactor->Finish(status);
}

void CoordinationState::barrier(const pb::BarrierRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string& id = request.id();
  const std::string operation = "barrier " + quoted(id);
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_name(operation, "id", id);
  if (status.ok()) status = check_wait(operation, "timeout_ms", request.timeout_ms());
  if (status.ok() && !barriers_.count(id)) status = make_room_for_barrier(operation);
  if (!status.ok()) return reactor->Finish(status);
  auto [it, created] = barriers_.try_emplace(id);
  Barrier& barrier = it->second;
  if (barrier.failure) return reactor->Finish(*barrier.failure);
  std::set<size_t> with_this = barrier.arrived;
  with_this.insert(i);
  const bool completes = everyone_arrived(with_this);
  if (!completes) {   // this call will wait: is there room for one more?
    if (status = check_room_to_wait(operation); !status.ok()) {
      if (created) barriers_.erase(it);
      return reactor->Finish(status);
    }
  }
  if (created) {
    barrier.timeout_ms = request.timeout_ms();
    barrier.deadline = Clock::now() + std::chrono::milliseconds(request.timeout_ms());
  }
  if (id == kShutdownBarrier) {
    tasks_[i].leaving = true;
    if (elastic() && generation_ != 0 && finishing_.empty()) {
      finishing_ = tasks_[i].spec.name() + " reached the shutdown barrier";
    }
  }
  barrier.arrived.insert(i);
  barrier.waiters.push_back(reactor);
  if (!completes) {
    wake_.notify_one();   // its deadline
    return;
  }
  for (Reactor* waiter : barrier.waiters) waiter->Finish(Status::OK);
  if (id == kConnectBarrier) job_started_ = true;
  barriers_.erase(it);   // the id may be used again
}

Status CoordinationState::check_room_to_wait(const std::string& operation) const {
  size_t waiting = key_waiters_.size();
  for (const auto& [id, barrier] : barriers_) waiting += barrier.waiters.size();
  if (waiting < options_.max_waiting_calls) return Status::OK;
  return exhausted(operation, std::to_string(waiting) +
                                  " calls wait on the service already, its limit "
                                  "(CoordinationOptions::max_waiting_calls): the tasks wait on "
                                  "keys nobody sets or barriers nobody reaches");
}

Status CoordinationState::make_room_for_barrier(const std::string& operation) {
  if (barriers_.size() < options_.max_barriers) return Status::OK;
  // A failed barrier is kept only to tell late arrivals at once: the first to go.
  for (auto it = barriers_.begin(); it != barriers_.end(); ++it) {
    if (it->second.failure) {
      barriers_.erase(it);
      return Status::OK;
    }
  }
  return exhausted(operation, std::to_string(barriers_.size()) +
                                  " barriers are waited at already, the limit "
                                  "(CoordinationOptions::max_barriers): the tasks use ids that "
                                  "never complete");
}

Status CoordinationState::check_room_to_store(const std::string& operation,
                                              const std::string& key, size_t value_bytes) const {
  auto it = values_.find(key);
  const size_t keys = values_.size() + (it == values_.end() ? 1 : 0);
  const size_t replaced = it == values_.end() ? 0 : key.size() + it->second.size();
  const size_t bytes = store_bytes_ - replaced + key.size() + value_bytes;
  if (keys > options_.max_keys) {
    return exhausted(operation, "the store holds " + std::to_string(values_.size()) +
                                    " keys, its limit (CoordinationOptions::max_keys): erase "
                                    "keys no task needs any more, or raise the limit");
  }
  if (bytes > options_.max_store_bytes) {
    return exhausted(operation, "the store would hold " + std::to_string(bytes) +
                                    " bytes, more than its limit (" +
                                    std::to_string(options_.max_store_bytes) +
                                    ", CoordinationOptions::max_store_bytes): the store is for "
                                    "rendezvous data, not tensors");
  }
  return Status::OK;
}

void CoordinationState::publish(const std::string& key, const std::string& value) {
  auto [slot, added] = values_.try_emplace(key);
  store_bytes_ -= added ? 0 : key.size() + slot->second.size();
  store_bytes_ += key.size() + value.size();
  slot->second = value;
  count_value_bytes(key.size() + value.size());
  auto [begin, end] = key_waiters_.equal_range(key);
  for (auto it = begin; it != end; ++it) {
    count_value_bytes(key.size() + value.size());
    it->second.response->set_found(true);
    it->second.response->set_value(value);
    it->second.reactor->Finish(Status::OK);
  }
  key_waiters_.erase(begin, end);
}

void CoordinationState::set(const pb::SetRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "set(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_name(operation, "key", request.key());
  if (status.ok()) status = check_writable(operation, request.key());
  if (status.ok()) status = check_room_to_store(operation, request.key(), request.value().size());
  if (status.ok()) publish(request.key(), request.value());
  reactor->Finish(status);
}

void CoordinationState::get(const pb::GetRequest& request, pb::GetResponse* response,
                            Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "get(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_name(operation, "key", request.key());
  if (status.ok() && request.wait()) {
    status = check_wait(operation, "timeout_ms", request.timeout_ms());
  }
  if (!status.ok()) return reactor->Finish(status);
  auto it = values_.find(request.key());
  if (it != values_.end()) {
    count_value_bytes(request.key().size() + it->second.size());
    response->set_found(true);
    response->set_value(it->second);
    return reactor->Finish(Status::OK);
  }
  if (!request.wait()) return reactor->Finish(Status::OK);   // try_get: not found
  if (status = check_room_to_wait(operation); !status.ok()) return reactor->Finish(status);
  key_waiters_.emplace(request.key(),
                       KeyWaiter{reactor, response,
                                 Clock::now() + std::chrono::milliseconds(request.timeout_ms()),
                                 request.timeout_ms()});
  wake_.notify_one();   // its deadline
}

void CoordinationState::set_many(const pb::SetManyRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "set_many(" + std::to_string(request.entries_size()) + " keys)";
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  for (int k = 0; status.ok() && k < request.entries_size(); ++k) {
    const std::string field = "entries[" + std::to_string(k) + "].key";
    status = check_name(operation, field.c_str(), request.entries(k).key());
    if (status.ok()) status = check_writable(operation, request.entries(k).key());
  }
  if (!status.ok()) return reactor->Finish(status);
  // Every entry or none: the room is checked for all of them together (a key listed twice
  // keeps its last value).
  std::map<std::string, size_t> last;   // key -> its last value's size
  for (const pb::KeyValue& e : request.entries()) last[e.key()] = e.value().size();
  size_t keys = values_.size(), bytes = store_bytes_;
  for (const auto& [key, value_bytes] : last) {
    auto it = values_.find(key);
    if (it == values_.end()) {
      ++keys;
    } else {
      bytes -= key.size() + it->second.size();
    }
    bytes += key.size() + value_bytes;
  }
  if (keys > options_.max_keys) {
    return reactor->Finish(exhausted(
        operation, "the store would hold " + std::to_string(keys) + " keys, more than its "
                   "limit (CoordinationOptions::max_keys): erase keys no task needs any more, "
                   "or raise the limit"));
  }
  if (bytes > options_.max_store_bytes) {
    return reactor->Finish(exhausted(
        operation, "the store would hold " + std::to_string(bytes) + " bytes, more than its "
                   "limit (" + std::to_string(options_.max_store_bytes) +
                   ", CoordinationOptions::max_store_bytes): the store is for rendezvous data, "
                   "not tensors"));
  }
  for (const pb::KeyValue& e : request.entries()) publish(e.key(), e.value());
  reactor->Finish(Status::OK);
}

void CoordinationState::get_many(const pb::GetManyRequest& request, pb::GetManyResponse* response,
                                 Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "get_many(" + std::to_string(request.keys_size()) + " keys)";
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  for (int k = 0; status.ok() && k < request.keys_size(); ++k) {
    const std::string field = "keys[" + std::to_string(k) + "]";
    status = check_name(operation, field.c_str(), request.keys(k));
  }
  if (!status.ok()) return reactor->Finish(status);
  // The reply stays within the message limit (with room for its framing): a value that would
  // pass it is answered not found, and the client asks for it again.
  const size_t limit = options_.max_message_bytes / 2;
  size_t reply = 0;
  for (const std::string& key : request.keys()) {
    auto it = values_.find(key);
    const bool fits = it != values_.end() && reply + it->second.size() + 16 <= limit;
    response->add_found(fits);
    response->add_values(fits ? it->second : std::string());
    if (fits) {
      reply += it->second.size() + 16;
      count_value_bytes(key.size() + it->second.size());
    }
  }
  reactor->Finish(Status::OK);
}

void CoordinationState::add(const pb::AddRequest& request, pb::AddResponse* response,
                            Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "add(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_name(operation, "key", request.key());
  if (status.ok()) status = check_writable(operation, request.key());
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
  const std::string text = std::to_string(value);
  if (status = check_room_to_store(operation, request.key(), text.size()); !status.ok()) {
    return reactor->Finish(status);
  }
  publish(request.key(), text);
  response->set_value(value);
  reactor->Finish(Status::OK);
}

void CoordinationState::erase(const pb::EraseRequest& request, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string operation = "erase(" + quoted(request.key()) + ")";
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), operation, &i);
  if (status.ok() && error_) status = posted_status();
  if (status.ok()) status = check_name(operation, "key", request.key());
  if (status.ok()) status = check_writable(operation, request.key());
  if (status.ok()) {
    auto it = values_.find(request.key());
    if (it != values_.end()) {
      store_bytes_ -= it->first.size() + it->second.size();
      values_.erase(it);
    }
  }
  reactor->Finish(status);
}

void CoordinationState::report_error(const pb::ReportErrorRequest& request,
                                     pb::ReportErrorResponse* response, Reactor* reactor) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t i = 0;
  Status status = admit(request.has_task(), request.task(), "report_error", &i);
  if (status.ok()) {
    post_error(tasks_[i].spec.name() + " reported an error: " +
               (request.message().empty() ? "(no message)" : kept_error_text(request.message())));
    response->set_error(*error_);   // the job's error: an earlier one if there was
  }
  reactor->Finish(status);
}

bool CoordinationState::everyone_arrived(const std::set<size_t>& arrived) const {
  if (generation_ == 0) return arrived.size() == tasks_.size();
  return std::all_of(members_.begin(), members_.end(), [&](size_t m) { return arrived.count(m) > 0; });
}

std::string CoordinationState::missing_tasks(const std::set<size_t>& arrived) const {
  std::string missing;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const bool waited_for =
        generation_ == 0 || std::binary_search(members_.begin(), members_.end(), i);
    if (waited_for && !arrived.count(i)) {
      missing += (missing.empty() ? "" : ", ") + tasks_[i].spec.name();
    }
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
  const size_t waited = generation_ == 0 ? tasks_.size() : members_.size();
  size_t came = 0;
  for (size_t a : barrier.arrived) {
    came += generation_ == 0 || std::binary_search(members_.begin(), members_.end(), a) ? 1 : 0;
  }
  return "barrier " + quoted(id) + " timed out after " + after + ": " +
         std::to_string(waited - std::min(came, waited)) + " of " + std::to_string(waited) +
         " tasks did not reach it: " + missing +
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
    if (registered.size() < tasks_.size() && !elastic()) {
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
  if (elastic()) next = elastic_formation(now, next);
  if (suspicious_until_ && *suspicious_until_ <= now) suspicious_until_.reset();
  const bool suspicious = suspicious_until_.has_value();   // set only when elastic
  const std::chrono::milliseconds silence =
      suspicious ? options_.suspicion_timeout() : options_.heartbeat_timeout;
  for (size_t i = 0; i < tasks_.size() && !error_; ++i) {
    const TaskState& task = tasks_[i];
    if (!task.registered || task.leaving) continue;
    const Clock::time_point due = task.last_heartbeat + silence;
    if (due > now) {
      next = std::min(next, due);
      continue;
    }
    const std::string silent =
        task.spec.name() + " sent no heartbeat for " + milliseconds(silence.count()) +
        (suspicious ? " after another task's connection to the job's collectives broke" : "") +
        ": it died, hung or was cut off from the network";
    if (elastic()) {
      elastic_task_lost(i, silent);
      continue;
    }
    post_error(silent + ". Restart the job; BackupAndRestore resumes it from its last backup");
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

namespace strata::distribute {

int64_t coordination_key_value_bytes() {
  return coordination_internal::g_key_value_bytes.load();
}

}  // namespace strata::distribute
