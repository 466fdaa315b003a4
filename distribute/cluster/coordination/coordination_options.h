// CoordinationOptions: the time and size limits of the coordination service and its clients.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>

namespace strata::distribute {

// The service and every client of one job must agree on these (the service judges heartbeats
// by its own copy; a client its own waits).
struct CoordinationOptions {
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{10000};   // a task silent this long is dead
  std::chrono::milliseconds register_timeout{300000};   // how long connect() waits for every task
                                                        //   (tasks start in any order)
  std::chrono::milliseconds shutdown_timeout{30000};
  size_t max_message_bytes = size_t(4) << 20;           // larger requests are refused
  // The deadline of each short call (set, try_get, add, erase, report_error); waits (get,
  // barrier) get their own timeout plus this much, so that a hung service cannot hang them.
  std::chrono::milliseconds rpc_timeout{30000};

  // What the service holds for one job at most; a request that would pass a limit is refused
  // (RESOURCE_EXHAUSTED naming it), so that no task, buggy or hostile, can make the service
  // grow without bound. The store is for rendezvous data (addresses, ids, counters), not
  // tensors; a job's own use stays far below these.
  size_t max_keys = 65536;                    // keys in the store
  size_t max_store_bytes = size_t(64) << 20;  // their keys and values together
  size_t max_barriers = 4096;                 // barrier ids waited at (or failed) at once
  size_t max_waiting_calls = 16384;           // gets and barriers parked at once, all tasks

  // Elastic membership: 0, off, every task of the cluster must come and stay (a task found dead
  // or restarted is the job's fatal error). n >= 1: the tasks of the cluster are slots, and the
  // job runs with whichever are up, at least n. The first membership forms once every task has
  // registered, or n have and elastic_grace has passed since; then a task found dead leaves it
  // and a task that registers (a new one, or a restarted process) joins it, each change a new
  // generation (CoordinationClient::membership_after). Fewer than n left is the job's fatal
  // error. Barriers then wait for the members only. The task hosting the service is one of
  // them, and its end is still the job's.
  size_t elastic_min_tasks = 0;
  std::chrono::milliseconds elastic_grace{5000};

  // Elastic: how long a member may be silent, after a task reported a lost peer, before it is
  // declared lost: 3 heartbeat intervals, at least 2 s (a live task's heartbeats can lag that
  // much on a loaded machine) and a quarter of the timeout, at most the timeout. A live member
  // keeps heartbeating and stays; a killed or cut-off one goes within seconds, not after the
  // whole heartbeat_timeout.
  std::chrono::milliseconds suspicion_timeout() const {
    using std::chrono::milliseconds;
    return std::min(heartbeat_timeout,
                    std::max({milliseconds(2000), 3 * heartbeat_interval, heartbeat_timeout / 4}));
  }
};

// `options` with the store's limits (max_keys, max_store_bytes) raised by what the collectives'
// rendezvous of a job of `tasks` tasks holds at its peak, on top of the job's own use: the Gloo
// mesh publishes one address per ordered pair of tasks (about 300 bytes with its key:
// GlooCommunicator) and each task a list of its connections (about 40 bytes a peer). That is
// 16,384 keys and 5.5 MB at 128 tasks; 1,048,576 keys and 356 MB at 1024, past the defaults.
// Every task of a job computes the same limits from the same task count.
inline CoordinationOptions with_room_for_rendezvous(CoordinationOptions options, size_t tasks) {
  const size_t pairs = tasks > 1 ? tasks * (tasks - 1) : 0;
  options.max_keys += pairs + tasks;
  options.max_store_bytes += pairs * 300 + tasks * tasks * 40;
  return options;
}

// Fixed limits of every request, checked before anything is stored (INVALID_ARGUMENT naming the
// field): keys and barrier ids of 1 to kMaxCoordinationKeyBytes bytes; waits (get, barrier) of
// 0 to kMaxCoordinationWait; a reported error's message is kept up to kMaxReportedErrorBytes
// (the rest is cut, saying so: every task receives it with each heartbeat).
inline constexpr size_t kMaxCoordinationKeyBytes = 4096;
inline constexpr std::chrono::milliseconds kMaxCoordinationWait{7LL * 24 * 3600 * 1000};
inline constexpr size_t kMaxReportedErrorBytes = 64 << 10;

}  // namespace strata::distribute
