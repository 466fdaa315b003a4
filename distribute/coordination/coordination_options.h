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
};

}  // namespace strata::distribute
