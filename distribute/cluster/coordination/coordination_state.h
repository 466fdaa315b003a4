// Internal: the coordination service's job state (coordination_handler.h serves it over gRPC):
// the tasks and their heartbeats, the key-value store, the barriers, the posted error, and the
// calls parked until a key is set or a barrier completes. One mutex guards it all: every
// operation is a few map look-ups, and the job's tasks call rarely (rendezvous, barriers,
// heartbeats), so one lock costs nothing and keeps the rules easy to check.
//
// A parked call is its gRPC reactor (no thread per waiter); the watchdog thread finishes the
// ones whose deadline passed and declares dead the tasks that stopped heartbeating.
//
// Every request is checked before the state is touched (request_checks.h: fields present, sizes
// and waits bounded, INVALID_ARGUMENT naming the field), and what the state keeps is bounded
// by CoordinationOptions' limits (keys, store bytes, barriers, parked calls), so that no task
// can make the service allocate without bound.
#pragma once

#include <grpcpp/support/server_callback.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/coordination.pb.h"
#include "distribute/cluster/coordination/coordination_options.h"
#include "distribute/cluster/coordination/coordination_task.h"
#include "distribute/cluster/coordination/reserved_barriers.h"

namespace strata::distribute::coordination_internal {

namespace pb = ::strata::distribute::coordination_pb;

class CoordinationState {
 public:
  using Reactor = grpc::ServerUnaryReactor;
  using Clock = std::chrono::steady_clock;

  CoordinationState(std::vector<CoordinationTask> tasks, CoordinationOptions options);
  ~CoordinationState();   // stop()s

  // Each answers the RPC of the same name (coordination.proto) by finishing `reactor`, at once
  // or, for waits, once they end.
  void register_task(const pb::RegisterRequest& request, Reactor* reactor);
  void heartbeat(const pb::HeartbeatRequest& request, pb::HeartbeatResponse* response,
                 Reactor* reactor);
  void barrier(const pb::BarrierRequest& request, Reactor* reactor);
  void set(const pb::SetRequest& request, Reactor* reactor);
  void get(const pb::GetRequest& request, pb::GetResponse* response, Reactor* reactor);
  void set_many(const pb::SetManyRequest& request, Reactor* reactor);
  void get_many(const pb::GetManyRequest& request, pb::GetManyResponse* response,
                Reactor* reactor);
  void add(const pb::AddRequest& request, pb::AddResponse* response, Reactor* reactor);
  void erase(const pb::EraseRequest& request, Reactor* reactor);
  void report_error(const pb::ReportErrorRequest& request,
                    pb::ReportErrorResponse* response, Reactor* reactor);

  // Fails every parked call and every later one with UNAVAILABLE and ends the watchdog: the
  // service is going away. Idempotent.
  void stop();

 private:
  struct TaskState {
    CoordinationTask spec;
    bool registered = false;
    uint64_t incarnation = 0;
    bool leaving = false;   // reached the shutdown barrier: its silence is expected from now on
    Clock::time_point last_heartbeat;
  };
  struct KeyWaiter {
    Reactor* reactor;
    pb::GetResponse* response;
    Clock::time_point deadline;
    int64_t timeout_ms;
  };
  struct Barrier {
    Clock::time_point deadline;    // the first arrival's, as in TensorFlow
    int64_t timeout_ms = 0;
    std::set<size_t> arrived;
    std::vector<Reactor*> waiters;
    std::optional<grpc::Status> failure;   // a timed-out barrier fails every later arrival too
  };

  // OK with the task's index, or the status refusing `operation` from it (no or a malformed
  // task field, unknown task, not registered, stale incarnation, the service stopping).
  grpc::Status admit(bool present, const pb::TaskId& task, const std::string& operation,
                     size_t* index);
  // The limits of CoordinationOptions: RESOURCE_EXHAUSTED naming the one a request would pass.
  grpc::Status check_room_to_wait(const std::string& operation) const;
  grpc::Status make_room_for_barrier(const std::string& operation);   // drops a failed one
  grpc::Status check_room_to_store(const std::string& operation, const std::string& key,
                                   size_t value_bytes) const;
  grpc::Status posted_status() const;
  void post_error(const std::string& error);
  void complete_barrier(const std::string& id, Barrier& barrier);
  void publish(const std::string& key, const std::string& value);
  std::string missing_tasks(const std::set<size_t>& arrived) const;
  std::string barrier_timeout_message(const std::string& id, const Barrier& barrier) const;
  // Finishes expired waits, declares silent tasks dead; the time to look again.
  Clock::time_point check_deadlines(Clock::time_point now);
  // Whether every task a barrier waits for has arrived: every task of the cluster, or with an
  // elastic membership formed, every member.
  bool everyone_arrived(const std::set<size_t>& arrived) const;

  // ---- Elastic membership (coordination_membership.cc; options_.elastic_min_tasks > 0) ----
  bool elastic() const { return options_.elastic_min_tasks > 0; }
  // Task i registers as process `incarnation`: it joins (or, not formed yet, may form) the
  // membership; a restarted process replaces its predecessor in it.
  void elastic_register(size_t i, uint64_t incarnation);
  // Task i is gone (`why`): it leaves the membership; fewer than the minimum left fails the job.
  void elastic_task_lost(size_t i, const std::string& why);
  // Forms the first membership when its time has come; the time to look again.
  Clock::time_point elastic_formation(Clock::time_point now, Clock::time_point next);
  // The first membership: every task registered now.
  void form_membership();
  size_t registered_tasks() const;
  // members_ as a new generation: published under kMembershipKey, and barriers that now have
  // every member complete.
  void announce_membership();
  uint64_t generation_ = 0;                 // 0: no membership formed yet
  std::vector<size_t> members_;             // sorted task indices
  // Set when the first member reaches the shutdown barrier ("chief 0 (...) reached the shutdown
  // barrier"): the training is over, so no task is admitted from then on (a registration is
  // refused, and a task waiting to be taken in leaves when its heartbeat brings this).
  std::string finishing_;
  // Until when members are declared lost after suspicion_timeout() of silence rather than
  // heartbeat_timeout: a task reported a lost peer (HeartbeatRequest::lost_a_peer).
  std::optional<Clock::time_point> suspicious_until_;
  std::optional<Clock::time_point> form_at_;  // minimum registered, not formed: when to form
  void watchdog();

  const CoordinationOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;   // a new deadline, or stop()
  std::vector<TaskState> tasks_;
  bool job_started_ = false;       // every task registered once: a re-registration is a restart
  bool stopping_ = false;
  std::optional<std::string> error_;
  std::map<std::string, std::string> values_;
  size_t store_bytes_ = 0;         // the keys' and values' sizes in values_
  std::multimap<std::string, KeyWaiter> key_waiters_;
  std::map<std::string, Barrier> barriers_;
  std::thread watchdog_;
};

}  // namespace strata::distribute::coordination_internal
