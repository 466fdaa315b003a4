// CoordinationOptions: the time and size limits of the coordination service and its clients.
#pragma once

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
};

// Fixed limits of every request, checked before anything is stored (INVALID_ARGUMENT naming the
// field): keys and barrier ids of 1 to kMaxCoordinationKeyBytes bytes; waits (get, barrier) of
// 0 to kMaxCoordinationWait; a reported error's message is kept up to kMaxReportedErrorBytes
// (the rest is cut, saying so: every task receives it with each heartbeat).
inline constexpr size_t kMaxCoordinationKeyBytes = 4096;
inline constexpr std::chrono::milliseconds kMaxCoordinationWait{7LL * 24 * 3600 * 1000};
inline constexpr size_t kMaxReportedErrorBytes = 64 << 10;

}  // namespace strata::distribute
