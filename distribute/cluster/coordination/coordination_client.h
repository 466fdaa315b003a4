// CoordinationClient: one task's connection to the job's CoordinationService
// (coordination_service.h), and the KeyValueStore the cross-process collectives meet through.
// Every call has a deadline; every failure is a CoordinationError naming the operation, the
// task(s) concerned and the fix. Once the job's error is known (posted by a task, a task found
// dead or restarted, the service unreachable), every call fails with it at once.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distribute/cluster/coordination/coordination_options.h"
#include "distribute/cluster/coordination/coordination_task.h"
#include "distribute/cluster/coordination/key_value_store.h"

namespace strata::distribute {

class CoordinationClient final : public KeyValueStore {
 public:
  // `service_address`: where the coordinator task serves ("host:port"); `tasks`: every task of
  // the job, as the service was given them (errors name the coordinator from them).
  CoordinationClient(std::string service_address, CoordinationTask self,
                     std::vector<CoordinationTask> tasks, CoordinationOptions options = {});
  // Stops heartbeats (no shutdown barrier: the service will declare this task dead unless
  // shutdown() ran).
  ~CoordinationClient() override;

  // Registers (waiting for the service to come up), starts the heartbeat thread, then waits until
  // every task has registered, all within register_timeout: CoordinationError naming the tasks
  // that never came, or the service's address when it never answered.
  void connect();
  // Returns once every task reached barrier `id` (ids starting with "strata/" are reserved);
  // CoordinationError naming the missing tasks after `timeout`, or at once if an error was posted.
  void barrier(const std::string& id, std::chrono::milliseconds timeout);
  // Posts a fatal error for the whole job: every task's pending and later calls fail with a
  // CoordinationError carrying it (naming this task), and their error callbacks fire.
  // CoordinationError if it cannot reach the service (the error is then known here only).
  void report_error(const std::string& message);
  // The job's error as this task knows it, or nullopt.
  std::optional<std::string> posted_error();
  // Called once, from the heartbeat thread, when an error becomes known (posted, a dead or
  // restarted task detected by the service, or the service unreachable for heartbeat_timeout).
  void set_error_callback(std::function<void(const std::string&)> callback);
  // Shutdown barrier (every task, up to shutdown_timeout), then stops heartbeats. After it the
  // service may go away without errors being reported. Heartbeats stop even when it throws.
  void shutdown();
  const CoordinationTask& self() const;
  // The incarnation this client registers with (random, one per client).
  uint64_t incarnation() const;

  // ---- Elastic membership (CoordinationOptions::elastic_min_tasks > 0) ----
  // Then connect() returns once a membership holding this task has formed (not once every
  // task came), and the membership goes on changing as tasks leave and join.
  struct Membership {
    uint64_t generation = 0;
    std::vector<int> members;   // indices into the tasks the service serves, ascending
  };
  // The latest membership if its generation is past `generation` (0: any), else the next one
  // the service forms, within `timeout`: CoordinationError naming the generation waited for.
  Membership membership_after(uint64_t generation, std::chrono::milliseconds timeout);
  // The latest generation this client's heartbeats brought back (0: none yet): how a task
  // learns cheaply that the membership changed.
  uint64_t membership_generation_seen() const;
  // Why the job is finishing ("chief 0 (...) reached the shutdown barrier"), once a heartbeat
  // brought it: the training is over and no task is taken in any more; "" before. (connect()
  // after that throws JobFinishedError.)
  std::string job_finishing() const;
  // Tells the service (a heartbeat, sent now) that a collective of this task failed on a
  // closed connection: with an elastic membership, it then declares a silent member lost after
  // CoordinationOptions::suspicion_timeout() rather than the whole heartbeat_timeout. Never
  // throws (the regular heartbeats tell of a service gone).
  void report_lost_peer();
  // This task's index in the tasks the service serves (what Membership::members lists).
  int self_index() const;

  // KeyValueStore. Values are opaque bytes; get() waits on the service (no polling), its timeout
  // error naming the key.
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::optional<std::string> try_get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  void erase(const std::string& key) override;
  // One SetMany request (more only where the entries pass half of max_message_bytes: each
  // request is stored whole or not at all).
  void set_many(const std::vector<std::pair<std::string, std::string>>& entries) override;
  // One GetMany for every key set now, then, while some are missing, a get() of the first one
  // (waiting on the service, no polling) and one GetMany for the rest: a few requests where
  // get() per key would make one each.
  std::vector<std::string> get_many(const std::vector<std::string>& keys,
                                    std::chrono::milliseconds timeout) override;

  CoordinationClient(const CoordinationClient&) = delete;
  CoordinationClient& operator=(const CoordinationClient&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::distribute
